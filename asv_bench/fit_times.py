"""fasttree's fit times on cases of compare.py (B1-B5, B12, B16), as JSON, for before/after runs.

Compare two versions of fasttree on the same machine by running this script alternately with
each one first on the path, in fresh processes::

    git worktree add ../fasttree-before <commit>
    for i in 1 2 3; do
        PYTHONPATH=../fasttree-before python asv_bench/fit_times.py
        PYTHONPATH=. python asv_bench/fit_times.py
    done

Each case: warm-up, then best of 3 fits with ``n_jobs=2``.  Case names as arguments run only
those (``python asv_bench/fit_times.py B12 B16``); by default B1-B5.
"""

import json
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from benchmarks.common import classification_data, regression_data  # noqa: E402

CASES = {
    "B1": ("classification", 1_000_000, 20, dict(criterion="entropy", max_depth=10)),
    "B2": ("classification", 300_000, 20, dict(criterion="entropy", max_depth=10)),
    "B3": ("classification", 300_000, 20, dict(criterion="gini", max_depth=None)),
    "B4": ("regression", 300_000, 20, dict(max_depth=10)),
    "B5": ("classification", 50_000, 200, dict(criterion="entropy", max_depth=10)),
    "B12": ("regression", 300_000, 20, dict(criterion="absolute_error", max_depth=10)),
    "B16": ("regression", 300_000, 20, dict(max_depth=10, monotonic_cst=[1, -1] * 5 + [0] * 10)),
}
DEFAULT = ("B1", "B2", "B3", "B4", "B5")


def main():
    import fasttree

    times = {}
    for name in sys.argv[1:] or DEFAULT:
        task, n, m, params = CASES[name]
        X, y = (classification_data if task == "classification" else regression_data)(n, m)
        Estimator = (fasttree.DecisionTreeClassifier if task == "classification"
                     else fasttree.DecisionTreeRegressor)
        Estimator(**params, n_jobs=2).fit(X[:2000], y[:2000])
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            Estimator(**params, n_jobs=2).fit(X, y)
            best = min(best, time.perf_counter() - t0)
        times[name] = round(best, 4)
    print(json.dumps({"fasttree": fasttree.__file__, **times}))


if __name__ == "__main__":
    main()
