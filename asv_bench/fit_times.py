"""fasttree's times on the single-tree cases of compare.py, as JSON lines, for before/after runs.

Compare two versions of fasttree on the same machine by running this script alternately with
each one first on the path, in fresh processes, appending to one file, then summarize::

    git worktree add ../fasttree-before <commit>
    for i in 1 2 3; do
        python asv_bench/fit_times.py --fasttree ../fasttree-before >> times.jsonl
        python asv_bench/fit_times.py --fasttree . >> times.jsonl
    done
    python asv_bench/fit_times.py --summarize times.jsonl

Each case: a warm-up on the first 2,000 rows, then the best of ``--repeats`` fits (B6: predicts)
with ``n_jobs=2`` (B7: ``n_jobs=1``), the data and settings of compare.py's case of the same
name.  Case names as arguments run only those (``python asv_bench/fit_times.py B12 B16``); by
default every case but B17 (10M rows: about two minutes more a run).  The summary gives, per
case, each version's best over all its runs and their ratio (the second version named in the
file over the first).
"""

import argparse
import json
import sys
import time
from collections import defaultdict

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from benchmarks.common import (classification_data, make_estimator, missing_data,  # noqa: E402
                               mixed_data, regression_data, sparse_text_data)

N_BIG, N_MID, N_WIDE = 1_000_000, 300_000, 50_000
MONOTONIC = {"monotonic_cst": [1, -1] * 5 + [0] * 10}


def _tree(task, data, n_jobs=2, splitter="best", tree_params=None, **params):
    """A fit case: (data maker, estimator maker, what is timed)."""
    return data, lambda: make_estimator("fasttree", task, n_jobs=n_jobs, splitter=splitter,
                                        tree_params=tree_params, **params), "fit"


def _categorical(split):
    """B11: 1M rows, 5 categorical and 15 numeric columns, one way of splitting categories."""
    def estimator():
        import fasttree

        return fasttree.DecisionTreeClassifier(
            criterion="entropy", max_depth=10, n_jobs=2,
            categorical_features=tuple(range(5)), categorical_split=split)
    return lambda: mixed_data(N_BIG)[:2], estimator, "fit"


CASES = {
    "B1": _tree("classification", lambda: classification_data(N_BIG, 20), max_depth=10,
                criterion="entropy"),
    "B2": _tree("classification", lambda: classification_data(N_MID, 20), max_depth=10,
                criterion="entropy"),
    "B3": _tree("classification", lambda: classification_data(N_MID, 20), max_depth=None,
                criterion="gini"),
    "B4": _tree("regression", lambda: regression_data(N_MID, 20), max_depth=10,
                criterion="squared_error"),
    "B5": _tree("classification", lambda: classification_data(N_WIDE, 200), max_depth=10,
                criterion="entropy"),
    # predicting 1M rows with a depth-12 tree fitted on 300k
    "B6": (lambda: classification_data(N_MID, 20),
           lambda: make_estimator("fasttree", "classification", max_depth=12, criterion="gini",
                                  n_jobs=2), "predict"),
    "B7": _tree("classification", lambda: classification_data(N_BIG, 20), n_jobs=1,
                max_depth=10, criterion="entropy"),
    "B10": _tree("classification", lambda: missing_data(N_MID, 20), max_depth=10,
                 criterion="entropy"),
    "B11 binary": _categorical("binary"),
    "B11 multiway": _categorical("multiway"),
    "B12": _tree("regression", lambda: regression_data(N_MID, 20), max_depth=10,
                 criterion="absolute_error"),
    "B13": _tree("regression", lambda: regression_data(N_MID, 20, n_targets=5), max_depth=10,
                 criterion="squared_error"),
    "B14": _tree("regression", lambda: regression_data(N_MID, 20), splitter="random",
                 max_depth=None, criterion="squared_error"),
    "B15": _tree("classification", lambda: sparse_text_data(100_000, 10_000), max_depth=10,
                 criterion="gini"),
    "B16": _tree("regression", lambda: regression_data(N_MID, 20), tree_params=MONOTONIC,
                 max_depth=10, criterion="squared_error"),
    "B17": _tree("classification", lambda: classification_data(10 * N_BIG, 20), max_depth=10,
                 criterion="entropy"),
}
DEFAULT = [name for name in CASES if name != "B17"]


def measure(names, repeats):
    """{case: best seconds} for the fasttree first on the path."""
    times = {}
    for name in names:
        data, estimator, timed = CASES[name]
        X, y = data()
        est = estimator()
        est.fit(X[:2000], y[:2000])  # compile, or load numba's cache
        if timed == "predict":
            X_test, _ = classification_data(N_BIG, 20, seed=1)
            est.fit(X, y).predict(X_test[:1000])
            call = lambda: est.predict(X_test)  # noqa: E731
        else:
            call = lambda: estimator().fit(X, y)  # noqa: E731
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - t0)
        times[name] = round(best, 4)
        del X, y
    return times


def summarize(path):
    """Markdown: each case's best per version over all the file's runs, and their ratio."""
    best = defaultdict(dict)
    versions = []
    with open(path) as lines:
        for line in lines:
            run = json.loads(line)
            version = run.pop("fasttree")
            if version not in versions:
                versions.append(version)
            for case, seconds in run.items():
                best[case][version] = min(seconds, best[case].get(version, float("inf")))
    old, new = versions[:2]
    rows = [f"| case | {old} | {new} | ratio |", "|---|---|---|---|"]
    for case, seconds in best.items():
        if old in seconds and new in seconds:
            rows.append(f"| {case} | {seconds[old]:.3f} s | {seconds[new]:.3f} s | "
                        f"{seconds[new] / seconds[old]:.3f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help=f"cases to run (default: {', '.join(DEFAULT)})")
    parser.add_argument("--fasttree", help="a folder to import fasttree from (a worktree)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--summarize", metavar="JSONL", help="summarize a file of runs instead")
    args = parser.parse_args()
    if args.summarize:
        print(summarize(args.summarize))
        return
    if args.fasttree:
        sys.path.insert(0, args.fasttree)
    import fasttree

    print(json.dumps({"fasttree": fasttree.__file__.rsplit("/", 2)[0],
                      **measure(args.cases or DEFAULT, args.repeats)}), flush=True)


if __name__ == "__main__":
    main()
