"""fasttree.dask on a local cluster side by side with the single-machine fit (issue 12).

One binary classification problem (float32, entropy, ``max_depth`` levels), fitted

* on this machine: ``fasttree.DecisionTreeClassifier(n_jobs=2)``;
* on ``LocalCluster(n_workers=2, threads_per_worker=1)``: ``fasttree.dask`` with the data
  already on the workers (a persisted dask array); the ingest (rechunking into one block of
  columns per worker) is reported apart from the presort and the growth.

Each best of ``--repeats`` after a warm-up, the two fits alternated; the trees are checked
equal.  Prints the times, the
ratio (best against best, and the median over the alternated pairs, which see the same load), the
per-level overhead (median over levels of the wall time that is not the slowest
worker's compute) and the bytes and round trips per level.

    pip install ".[dask]"
    python asv_bench/dask_compare.py --rows 1000000 --features 20 --depth 10 --repeats 3
"""

import argparse
import time

import numpy as np


def problem(n_rows, n_features):
    """The binary classification problem of this and ``dask_forest_compare.py``: float32 ``X``
    (at least 7 features), int64 ``y`` from a logistic model with an interaction."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    logit = X[:, :5] @ rng.normal(size=5) + 0.5 * X[:, 5] * X[:, 6]
    y = (logit + rng.logistic(size=n_rows) > 0).astype(np.int64)
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    import fasttree
    import fasttree.dask as fdask

    X, y = problem(args.rows, args.features)
    params = {"criterion": "entropy", "max_depth": args.depth}

    fasttree.DecisionTreeClassifier(**params, n_jobs=2).fit(X[:2000], y[:2000])  # warm-up
    local_times, runs = [], []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        X_dask = da.from_array(X, chunks=(args.rows // 4, args.features)).persist()
        y_dask = da.from_array(y, chunks=args.rows // 4).persist()
        fdask.DecisionTreeClassifier(**params, client=client).fit(X[:2000], y[:2000])  # warm-up
        # alternated, so that both see the same load from whatever else runs on the machine
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            local = fasttree.DecisionTreeClassifier(**params, n_jobs=2).fit(X, y)
            local_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            sharded = fdask.DecisionTreeClassifier(**params, client=client).fit(X_dask, y_dask)
            runs.append((time.perf_counter() - t0, sharded))

    for name in ("children_left", "feature", "threshold", "value", "impurity"):
        np.testing.assert_array_equal(getattr(sharded.tree_, name), getattr(local.tree_, name))
    wall, best = min(runs, key=lambda run: run[0] - run[1].fit_report_["ingest_seconds"])
    report = best.fit_report_
    ingest = report["ingest_seconds"]
    levels = report["levels"]
    overhead = [level["communication_seconds"] for level in levels]
    local_best = min(local_times)
    print(f"rows {args.rows}, features {args.features}, entropy, max_depth {args.depth}; "
          f"trees equal ({local.tree_.node_count} nodes)")
    print(f"single machine, 2 threads:      {local_best:7.3f} s  (runs: "
          f"{', '.join(f'{t:.3f}' for t in local_times)})")
    without_ingest = [w - r.fit_report_["ingest_seconds"] for w, r in runs]
    print(f"dask, 2 workers x 1 thread:     {wall - ingest:7.3f} s  without ingest "
          f"(set-up {report['setup_seconds']:.3f} s, of which check and presort "
          f"{max(report['worker_setup_seconds']):.3f} s; runs: "
          f"{', '.join(f'{t:.3f}' for t in without_ingest)})")
    print(f"ingest (rechunk into blocks):   {ingest:7.3f} s")
    pair_ratios = [d / loc for d, loc in zip(without_ingest, local_times)]
    print(f"ratio dask / single machine:    {(wall - ingest) / local_best:7.2f} (best / best); "
          f"per alternated pair: median {np.median(pair_ratios):.2f}, "
          f"{', '.join(f'{r:.2f}' for r in pair_ratios)}")
    print(f"per-level overhead (median):    {1000 * np.median(overhead):7.2f} ms over "
          f"{len(levels)} levels; compute median "
          f"{1000 * np.median([lv['compute_seconds'] for lv in levels]):.1f} ms, wait median "
          f"{1000 * np.median([lv['wait_seconds'] for lv in levels]):.2f} ms")
    in_levels = sum(lv["compute_seconds"] + lv["communication_seconds"] for lv in levels)
    print(f"time split (s):                 set-up {report['setup_seconds']:.3f}, round trips "
          f"{in_levels:.3f} (compute {sum(lv['compute_seconds'] for lv in levels):.3f}), driver "
          f"between them {wall - ingest - report['setup_seconds'] - in_levels:.3f}")
    print("level  round trips  bytes out / in per worker")
    for depth, level in enumerate(levels):
        print(f"{depth:5d}  {level['round_trips']:11d}  {level['bytes_out']} / "
              f"{level['bytes_in']}")


if __name__ == "__main__":
    main()
