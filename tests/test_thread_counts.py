"""The same trees and predictions on 1, 2, 3, 8 and 16 threads, on every estimator path (issue 25).

numba fixes its thread count when it starts its pool, once per process, so each thread count
runs ``thread_counts_workload.py`` in a fresh interpreter with ``NUMBA_NUM_THREADS`` set (16
threads work on a 2-core machine).  The workload fits every estimator path -- each criterion,
sample and class weights, ``max_features`` draws, the random and hist splitters (both binnings),
binary and multiway categorical splits, learned and fractional missing values, monotonic
constraints, best-first growth, several outputs, sparse X, ID3 and C4.5, each pruning rule in
``fit`` and in :mod:`fasttree.pruning`, the entropy discretizer, the gradient kind's search
(boosting), several trees grown in one frontier -- on data too small to be worth threads, with
fasttree's one-thread rules for small levels and predictions switched off, so that every level
and prediction runs on all the process's threads.  Every array of every tree and every
prediction on held-out rows must then be bit-for-bit the same as on one thread.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).parent
THREAD_COUNTS = (1, 2, 3, 8, 16)


def _start(n_threads, out):
    # the checkout's fasttree, as in the test process (pyproject's pythonpath), not an installed
    # copy: one copy, one numba cache
    path = [str(TESTS.parent), str(TESTS), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "NUMBA_NUM_THREADS": str(n_threads), "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.Popen([sys.executable, str(TESTS / "thread_counts_workload.py"), str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc):
    _, stderr = proc.communicate(timeout=1500)  # a cold numba cache compiles for minutes
    assert proc.returncode == 0, stderr[-3000:]


def _differences(reference, other):
    """Keys whose arrays differ (shape, dtype or any element; NaN equals NaN)."""
    return [key for key in reference
            if not key.startswith("threads.")
            and (reference[key].dtype != other[key].dtype
                 or not np.array_equal(reference[key], other[key], equal_nan=True))]


def test_every_estimator_path_is_the_same_on_1_2_3_8_and_16_threads(tmp_path):
    paths = {n: tmp_path / f"threads{n}.npz" for n in THREAD_COUNTS}
    # one thread first, alone: on a cold cache it compiles every kernel the others then load;
    # the others two at a time (most of each process is loading kernels, one core's work)
    _finish(_start(1, paths[1]))
    rest = THREAD_COUNTS[1:]
    for first in range(0, len(rest), 2):
        for proc in [_start(n, paths[n]) for n in rest[first:first + 2]]:
            _finish(proc)
    results = {n: dict(np.load(path)) for n, path in paths.items()}
    reference = results[1]
    assert len([key for key in reference if key.endswith(".tree.threshold")]) >= 50
    for n, result in results.items():
        # the split searches and tree walks really ran on n threads
        assert result["threads.search"].tolist() == [n]
        assert result["threads.predict"].tolist() == [n]
        assert result.keys() == reference.keys()
        assert _differences(reference, result) == [], f"{n} threads"
