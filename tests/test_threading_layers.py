"""Processes and threads on each of numba's threading layers (issue 11).

After a fit or predict, children started with ``fork`` must fit and predict like the parent
(GNU OpenMP cannot run in such a child: fasttree's kernels run on one thread there), and fits on
concurrent Python threads must work and agree (numba's ``workqueue`` layer aborts the process
when two threads run parallel code at once: fasttree takes turns there).  Each case runs in a
fresh interpreter with ``NUMBA_THREADING_LAYER`` set, so an abort is a failed test, and with a
timeout, so a hang is one too.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

FORK_AFTER_FIT = """
    import multiprocessing, warnings
    import numba
    from threading_workload import same, workload

    def child(_):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = workload()
        return result, [str(w.message) for w in caught if w.category is RuntimeWarning]

    if __name__ == "__main__":
        parent = workload()                      # the parent has now run parallel kernels
        layer = numba.threading_layer()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            runs = pool.map_async(child, range(2)).get(timeout=500)
        assert all(same(parent, result) for result, _ in runs)
        one_thread = [any("run on one thread" in m for m in messages) for _, messages in runs]
        assert one_thread == [layer == "omp"] * 2, (layer, runs[0][1])
        print(layer)
"""

CONCURRENT_THREADS = """
    import threading
    import numba
    from threading_workload import same, workload

    reference = workload()
    results = []
    threads = [threading.Thread(target=lambda: results.append(workload())) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and all(same(reference, result) for result in results)
    print(numba.threading_layer())
"""


def _run(code, layer):
    env = {**os.environ, "NUMBA_THREADING_LAYER": layer,
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    if layer == "tbb":  # pip's tbb package (a test extra) puts libtbb in the environment's lib/
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(Path(sys.prefix) / "lib"), os.environ.get("LD_LIBRARY_PATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=900, env=env)


def _available(layer):
    probe = _run("""
        import numba, numpy as np
        @numba.njit(parallel=True)
        def f(a):
            return a.sum()
        f(np.ones(4))
    """, layer)
    return probe.returncode == 0


@pytest.mark.parametrize("code", [FORK_AFTER_FIT, CONCURRENT_THREADS],
                         ids=["fork_after_fit", "concurrent_threads"])
@pytest.mark.parametrize("layer", ["tbb", "omp", "workqueue"])
def test_each_threading_layer_survives_forks_and_threads(layer, code):
    if not _available(layer):
        pytest.skip(f"numba's {layer!r} threading layer is not available on this machine")
    proc = _run(code, layer)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == layer


def test_grid_search_on_joblibs_multiprocessing_backend_after_a_fit():
    """scikit-learn's grid search forks its workers after the parent has fitted."""
    proc = _run("""
        import joblib, numpy as np
        from sklearn.model_selection import GridSearchCV
        import fasttree
        X = np.random.default_rng(0).normal(size=(2000, 5))
        y = (X[:, 0] > 0.3).astype(int)
        fasttree.DecisionTreeClassifier().fit(X, y)
        with joblib.parallel_backend("multiprocessing"):
            grid = GridSearchCV(fasttree.DecisionTreeClassifier(random_state=0),
                                {"max_depth": [1, 3, 5]}, n_jobs=2).fit(X, y)
        serial = GridSearchCV(fasttree.DecisionTreeClassifier(random_state=0),
                              {"max_depth": [1, 3, 5]}).fit(X, y)
        assert np.array_equal(grid.cv_results_["mean_test_score"],
                              serial.cv_results_["mean_test_score"])
    """, "default")
    assert proc.returncode == 0, proc.stderr[-3000:]
