"""Who computes what: small levels and predictions on one thread, the fit's threads otherwise."""

import numba
import numpy as np
import pytest

from fasttree import DecisionTreeClassifier


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two of numba's threads")
def test_small_levels_and_small_predictions_run_on_one_thread(monkeypatch):
    """Levels under SMALL_LEVEL_WORK rows x features and predictions of fewer than
    SMALL_PREDICTION_ROWS rows run on one thread (waking threads costs more than their work,
    most of all on a busy machine); larger ones on the fit's threads; the caller's thread count
    is restored. The trees are the same either way (``test_thread_counts.py``)."""
    from fasttree._base import SMALL_PREDICTION_ROWS
    from fasttree.grower import SMALL_LEVEL_WORK
    from fasttree.splitter import ExactSplitter
    from fasttree.tree import Tree

    seen = []
    find_splits = ExactSplitter.find_splits

    def recording(self, start, end, *args):
        seen.append((int(np.sum(end - start)), numba.get_num_threads()))
        return find_splits(self, start, end, *args)

    monkeypatch.setattr(ExactSplitter, "find_splits", recording)
    rng = np.random.default_rng(0)
    n_features = 4
    n_big = 2 * SMALL_LEVEL_WORK // n_features
    X = rng.random((n_big, n_features)).astype(np.float32)
    y = (X[:, 0] + 0.3 * rng.random(n_big) > 0.6).astype(int)
    before = numba.get_num_threads()
    DecisionTreeClassifier(max_depth=3, n_jobs=2).fit(X[:300], y[:300])
    assert seen and all(threads == 1 for _, threads in seen)
    seen.clear()
    est = DecisionTreeClassifier(max_depth=3, n_jobs=2).fit(X, y)
    assert seen[0] == (n_big, 2)  # the root's level
    assert all(threads == (1 if rows * n_features < SMALL_LEVEL_WORK else 2)
               for rows, threads in seen)
    assert numba.get_num_threads() == before

    walked = []
    predict_value = Tree.predict_value

    def recording_walk(self, X):
        walked.append((X.shape[0], numba.get_num_threads()))
        return predict_value(self, X)

    monkeypatch.setattr(Tree, "predict_value", recording_walk)
    est.predict_proba(X[:SMALL_PREDICTION_ROWS - 1])
    est.predict_proba(X[:SMALL_PREDICTION_ROWS])
    assert walked == [(SMALL_PREDICTION_ROWS - 1, 1), (SMALL_PREDICTION_ROWS, 2)]


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_tasks", [0, 1, 2, 7])
def test_each_in_threads_calls_every_task_once_on_at_most_numbas_thread_count(n_threads,
                                                                              n_tasks):
    """Every task once, on at most the caller's numba thread count of threads (one per task
    at most), and on the calling thread alone when that is one."""
    import threading

    from fasttree._threads import each_in_threads

    if n_threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("needs more of numba's threads")
    calls = []
    lock = threading.Lock()
    both_running = threading.Barrier(min(n_threads, n_tasks)) if n_tasks else None

    def task(i):
        if i < min(n_threads, n_tasks):  # the first tasks run at once, one a thread
            both_running.wait(timeout=30)
        with lock:
            calls.append((i, threading.get_ident()))

    before = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        each_in_threads(task, n_tasks)
    finally:
        numba.set_num_threads(before)
    assert sorted(i for i, _ in calls) == list(range(n_tasks))
    threads = {ident for _, ident in calls}
    assert len(threads) <= max(1, min(n_threads, n_tasks))
    if n_threads == 1:
        assert threads <= {threading.get_ident()}


def test_each_in_threads_raises_a_tasks_exception():
    from fasttree._threads import each_in_threads

    def task(i):
        if i == 3:
            raise ValueError("task 3")

    with pytest.raises(ValueError, match="task 3"):
        each_in_threads(task, 6)
