"""The load-balance model of ``asv_bench/load_balance.py`` (issue 25) against numba itself: the
static schedule it assumes is the one numba's parallel loops run, and its arithmetic."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "asv_bench"))
load_balance = pytest.importorskip("load_balance")


@pytest.mark.parametrize("n_iterations, n_threads", [(7, 16), (100, 16), (131, 16), (160, 64),
                                                      (1, 1), (65, 64)])
def test_numba_runs_the_static_schedule_the_model_assumes(n_iterations, n_threads):
    """Each thread of a prange loop runs whole blocks of contiguous iterations, of the sizes
    ``static_blocks`` gives (numba on ``n_threads`` threads, any number of cores): one block per
    thread with the ``omp`` and ``workqueue`` layers; ``tbb`` may hand one thread several
    blocks, for which the model's makespan is an upper bound."""
    code = textwrap.dedent(f"""
        import numba
        import numpy as np
        from numba import prange

        @numba.njit(parallel=True)
        def who_runs(n):
            thread = np.empty(n, dtype=np.int64)
            for i in prange(n):
                thread[i] = numba.get_thread_id()
            return thread

        print(" ".join(map(str, who_runs({n_iterations}))))
        print(numba.threading_layer())
    """)
    env = {**os.environ, "NUMBA_NUM_THREADS": str(n_threads)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    ran, layer = out.stdout.splitlines()
    thread = np.array(ran.split(), dtype=np.int64)
    # where the running thread changes, in iteration order
    changes = (np.flatnonzero(np.diff(thread)) + 1).tolist()
    blocks = [(a, b) for a, b in load_balance.static_blocks(n_iterations, n_threads) if b > a]
    boundaries = [b for _, b in blocks[:-1]]
    if layer == "tbb":
        assert set(changes) <= set(boundaries)
    else:
        assert changes == boundaries


def test_makespan_and_balance():
    assert load_balance.static_blocks(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert load_balance.makespan([1, 1, 1, 1], 2) == 2
    assert load_balance.balance([1, 1, 1, 1], 2) == 1.0
    # blocks [4, 1, 1] and [1, 1]: the first thread works 6, the total is 8
    assert load_balance.balance([4, 1, 1, 1, 1], 2) == pytest.approx(8 / (2 * 6))
    assert load_balance.balance([5], 4) == pytest.approx(0.25)


def test_partition_and_presort_costs():
    # three features, two split nodes (rows 10 and 4) split on features 0 and 2
    loops = load_balance.partition_loops(3, np.array([0, 10]), np.array([10, 14]),
                                         np.array([0, 2]), 2)
    # pairs (0, node 2) 4, (1, node 1) 10, (1, node 2) 4, (2, node 1) 10 rows: two lanes of 14
    assert [costs.tolist() for costs in loops] == [[14, 14]]
    # one feature row to move, of one node of 2^20 rows: in chunks, every thread busy
    chunk = (1 << 20) // 16  # four chunks a thread
    cost = load_balance.partition_module.CHUNKED_MOVE_COST
    loops = load_balance.partition_loops(2, np.array([0]), np.array([1 << 20]), np.array([0]), 4)
    assert [costs.tolist() for costs in loops] == [[0], [cost * chunk] * ((1 << 20) // chunk)]
    assert load_balance.loops_balance(loops, 4) == 1.0
    assert load_balance.loops_balance(load_balance.partition_loops(
        2, np.array([0]), np.array([1 << 20]), np.array([0]), 1), 4) == 0.25
    # five features on two threads: blocks of two and three whole features
    assert [c.tolist() for c in load_balance.presort_loops(np.zeros((100, 5)), 2)] == [[200, 300]]


def test_presort_by_buckets_costs_are_the_kernels_buckets(monkeypatch):
    # one feature on two threads, sorted by buckets: three loops over chunks of rows, then the
    # buckets' sorts in four tasks a thread, each bucket in the task its middle row falls in
    monkeypatch.setattr(load_balance.presort_module, "_SORT_CHUNK", 100)
    X = np.repeat(np.arange(8, dtype=np.float32), 50)[:, None]  # 8 values, 50 rows each
    loops = load_balance.presort_loops(X, 2)
    assert [c.tolist() for c in loops[:3]] == [[100] * 4] * 3
    # 400 rows on two threads: eight tasks of 50 rows, one bucket each
    assert loops[3].tolist() == [50] * 8
    assert load_balance.loops_balance(loops, 2) == 1.0


def test_fit_balance_records_every_level_of_a_fit():
    """The recorder sees each level's search and partition: the rows the partition moves are,
    over the fit, every split node's rows in each feature row but its own split feature's."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64)
    levels, presort = load_balance.fit_balance(X, y, (2, 16), max_depth=4, criterion="entropy")
    tree = load_balance.fasttree.DecisionTreeClassifier(max_depth=4, criterion="entropy").fit(
        X, y).tree_
    # nodes at max_depth are never searched, so the last level's split nodes are not partitioned
    moved = (tree.children_left >= 0) & (tree.depth < tree.max_depth - 1)
    assert len(levels) == tree.max_depth  # one search per depth above max_depth
    assert sum(level.get("partition_rows", 0) for level in levels) == \
        tree.n_node_samples[moved].sum() * (X.shape[1] - 1)
    assert levels[0]["search_rows"] == X.shape[0] * X.shape[1]
    for level in levels:
        assert all(0 < level[f"search@{p}"] <= 1 for p in (2, 16))
    assert set(presort) == {"presort@2", "presort@16"}
