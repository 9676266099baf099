"""Small fits idle and under load: one 235-row fit on the default threads and with ``n_jobs=1``,
10-fold cross-validation of full-depth trees on 300 x 6 against scikit-learn, and a grid search
in two joblib worker processes (``GridSearchCV(n_jobs=2)``, 101 fits of 235 rows: nested
parallelism) with the estimators' default threads, ``n_jobs=1`` and scikit-learn's tree.

    python asv_bench/small_fits.py            # idle machine
    python asv_bench/small_fits.py --load 2   # with two busy processes beside it

Prints the best and the median of the rounds (the cases timed in turn in each round), in
milliseconds.  Timings, not tests: compare the rows of one run.
"""

import argparse
import multiprocessing
import statistics

import numpy as np


def _spin(stop):
    while not stop.is_set():
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=0, help="busy processes to run beside")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    from sklearn.datasets import make_classification, make_regression
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
    from sklearn import tree as sktree

    import fasttree
    from compare import timed_rounds  # beside this script: the cases' calls made in turn
    from fasttree.datasets import load_ionosphere

    data = load_ionosphere()
    X, y = data.X[:235], data.y[:235]
    Xc, yc = make_classification(300, 6, n_informative=4, random_state=0)
    Xr, yr = make_regression(300, 6, noise=1.0, random_state=0)
    folds = KFold(10, shuffle=True, random_state=0)
    grid = {"max_depth": list(range(1, 21))}  # 20 settings x 5 folds, and the refit: 101 fits

    def search(estimator):
        return lambda: GridSearchCV(estimator, grid, cv=5, n_jobs=2).fit(X, y)

    cases = {
        "235-row fit, default threads": lambda: fasttree.DecisionTreeClassifier().fit(X, y),
        "235-row fit, n_jobs=1": lambda: fasttree.DecisionTreeClassifier(n_jobs=1).fit(X, y),
        "10-fold CV 300 x 6 classifier, fasttree": lambda: cross_val_score(
            fasttree.DecisionTreeClassifier(random_state=0), Xc, yc, cv=folds),
        "10-fold CV 300 x 6 classifier, scikit-learn": lambda: cross_val_score(
            sktree.DecisionTreeClassifier(random_state=0), Xc, yc, cv=folds),
        "10-fold CV 300 x 6 regressor, fasttree": lambda: cross_val_score(
            fasttree.DecisionTreeRegressor(random_state=0), Xr, yr, cv=folds),
        "10-fold CV 300 x 6 regressor, scikit-learn": lambda: cross_val_score(
            sktree.DecisionTreeRegressor(random_state=0), Xr, yr, cv=folds),
        "GridSearchCV(n_jobs=2), default threads": search(fasttree.DecisionTreeClassifier()),
        "GridSearchCV(n_jobs=2), n_jobs=1": search(fasttree.DecisionTreeClassifier(n_jobs=1)),
        "GridSearchCV(n_jobs=2), scikit-learn": search(sktree.DecisionTreeClassifier()),
    }
    for call in cases.values():  # compile and warm up
        call()
    stop = multiprocessing.Event()
    busy = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(args.load)]
    for process in busy:
        process.start()
    try:
        rounds = timed_rounds(cases, args.repeats)
        print(f"{args.load} busy processes; best / median of {args.repeats}, ms")
        for name, times in rounds.items():
            print(f"  {name:45s} {1e3 * min(times):8.2f} {1e3 * statistics.median(times):8.2f}")
    finally:
        stop.set()
        for process in busy:
            process.join()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
