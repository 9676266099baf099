"""Time the scan of sum statistics alone: one call of the split-search kernel over two nodes of
1,000,000 rows x 4 normal features (every row a candidate), best of ``--repeats`` calls.

Kinds: squared error with unit weights (the 1 / n multiplication) and with float weights, and
gradients with float hessians.  Run it with ``NUMBA_NUM_THREADS=1`` to compare the scan's work,
and alternate with an older commit (``PYTHONPATH=path/to/worktree python asv_bench/sum_scans.py``;
the gradient kind is skipped where it does not exist); numbers are milliseconds.
"""

import argparse
import json
import time

import numpy as np

import fasttree.kernels as K


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, m = 1_000_000, 4
    X = rng.normal(size=(n, m)).astype(np.float32)
    y = X[:, 0] + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    sorted_x, sorted_idx = K.presort_features(X)
    sorted_y = K.gather_targets(sorted_idx, y)
    start, end = np.array([0, 400_000]), np.array([400_000, n])
    rows_of = np.zeros(2, np.int64)
    mask = np.ones((m, 2), np.uint8)
    reciprocal = K.reciprocal_table(n)
    kinds = {"squared_error, unit weights": (K.CRITERION_SQUARED_ERROR, np.empty(0)),
             "squared_error, float weights": (K.CRITERION_SQUARED_ERROR, w)}
    if hasattr(K, "find_best_splits_gradient"):
        kinds["gradients, float hessians"] = (K.CRITERION_GRADIENT, w)
    results = {}
    for name, (criterion, weight) in kinds.items():
        sums = K.segment_target_sums(sorted_idx, sorted_y, weight, start, end, rows_of,
                                     criterion)
        best = np.inf
        for _ in range(args.repeats + 1):  # the first call compiles
            record = K.new_split_record(m, 2)
            t0 = time.perf_counter()
            if criterion == getattr(K, "CRITERION_GRADIENT", None):
                K.find_best_splits_gradient(sorted_x, sorted_idx, sorted_y, weight, start, end,
                                            sums, mask, 1.0, 1, 0.0, *K.unconstrained(),
                                            record)
            else:
                K.find_best_splits_regression(sorted_x, sorted_idx, sorted_y, weight, start,
                                              end, sums, mask, criterion, 1, 0.0, reciprocal,
                                              False, *K.unconstrained(), record)
            best = min(best, time.perf_counter() - t0)
        results[name] = round(best * 1e3, 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
