"""fasttree.dask's forests on a local cluster side by side with the single-machine forest.

One binary classification problem (float32, ``--trees`` trees, full depth by default), fitted

* on this machine: ``fasttree.RandomForestClassifier(n_jobs=2)``;
* on ``LocalCluster(n_workers=2, threads_per_worker=1)``: ``fasttree.dask.RandomForestClassifier``
  from the same NumPy ``X`` (sent to both workers at each fit: the scatter is part of the time).

Each best of ``--repeats`` after a warm-up (kernels loaded in every process), the two fits
alternated; the forests are checked equal, tree for tree.  Prints the times, the ratio (best
against best, and the median over the alternated pairs, which see the same load) and the dask
fit's phases (scatter, each worker's growth, the trees' bytes sent back).

    pip install ".[dask]"
    python asv_bench/dask_forest_compare.py --rows 200000 --features 20 --trees 20 --repeats 3
"""

import argparse
import time

import numpy as np

from dask_compare import problem


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--depth", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    import fasttree
    import fasttree.dask as fdask

    X, y = problem(args.rows, args.features)
    params = {"n_estimators": args.trees, "max_depth": args.depth, "random_state": 0}

    small = {**params, "n_estimators": 4}
    fasttree.RandomForestClassifier(**small, n_jobs=2).fit(X[:2000], y[:2000])  # warm-up
    local_times, runs = [], []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        fdask.RandomForestClassifier(**small, client=client).fit(X[:2000], y[:2000])  # warm-up
        # alternated, so that both see the same load from whatever else runs on the machine
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            local = fasttree.RandomForestClassifier(**params, n_jobs=2).fit(X, y)
            local_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            forest = fdask.RandomForestClassifier(**params, client=client).fit(X, y)
            runs.append((time.perf_counter() - t0, forest.fit_report_))

    for a, b in zip(forest.estimators_, local.estimators_):
        for name in ("children_left", "feature", "threshold", "value", "impurity"):
            np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name))
    dask_times = [wall for wall, _ in runs]
    wall, report = min(runs, key=lambda run: run[0])
    local_best = min(local_times)
    nodes = sum(e.tree_.node_count for e in local.estimators_)
    print(f"rows {args.rows}, features {args.features}, {args.trees} trees, max_depth "
          f"{args.depth}; forests equal ({nodes} nodes)")
    print(f"single machine, n_jobs=2:       {local_best:7.3f} s  (runs: "
          f"{', '.join(f'{t:.3f}' for t in local_times)})")
    print(f"dask, 2 workers x 1 thread:     {wall:7.3f} s  (runs: "
          f"{', '.join(f'{t:.3f}' for t in dask_times)})")
    print(f"  scatter {report['scatter_seconds']:.3f} s ({report['bytes_sent'] / 1e6:.1f} MB "
          f"to each worker), growth per worker "
          f"{', '.join(f'{t:.3f}' for t in report['grow_seconds'])} s "
          f"({', '.join(str(n) for n in report['trees'])} trees), trees back "
          f"{sum(report['tree_bytes']) / 1e6:.1f} MB")
    pair_ratios = sorted(d / loc for d, loc in zip(dask_times, local_times))
    print(f"ratio dask / single machine:    {wall / local_best:.2f} best against best, "
          f"{pair_ratios[len(pair_ratios) // 2]:.2f} median of the alternated pairs")


if __name__ == "__main__":
    main()
