"""Shared pieces of the benchmarks: cached data, estimator factories, warm-up."""

import functools

import numpy as np

#: Rows x features of the standard cases, scaled down by ``--quick``-friendly defaults.
N_SAMPLES = [100_000, 300_000]
N_FEATURES = [20]


@functools.lru_cache(maxsize=None)
def classification_data(n_samples, n_features, seed=0):
    """Binary make_classification, float32, 10 informative features (cached per process)."""
    from sklearn.datasets import make_classification

    n_informative = min(10, n_features)
    X, y = make_classification(n_samples=n_samples, n_features=n_features,
                               n_informative=n_informative,
                               n_redundant=min(2, n_features - n_informative), random_state=seed)
    return X.astype(np.float32), y


@functools.lru_cache(maxsize=None)
def regression_data(n_samples, n_features, seed=0):
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=n_samples, n_features=n_features,
                           n_informative=min(10, n_features), noise=1.0, random_state=seed)
    return X.astype(np.float32), y


def warm_up():
    """Compile (or load from numba's cache) every kernel before anything is timed."""
    import fasttree

    X, y = classification_data(1000, 5)
    for criterion in ("gini", "entropy"):
        fasttree.DecisionTreeClassifier(criterion=criterion, max_depth=3).fit(X, y).predict(X)
    fasttree.DecisionTreeClassifier(max_leaf_nodes=4).fit(X, y)
    fasttree.DecisionTreeRegressor(max_depth=3).fit(X, y.astype(float)).predict(X)


def make_estimator(library, task, *, max_depth, criterion, n_jobs):
    """One single-tree estimator of the named library with comparable settings."""
    if library == "fasttree":
        import fasttree

        if task == "regression":
            return fasttree.DecisionTreeRegressor(max_depth=max_depth, n_jobs=n_jobs)
        return fasttree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth,
                                               n_jobs=n_jobs)
    if library == "sklearn":
        from sklearn import tree

        if task == "regression":
            return tree.DecisionTreeRegressor(max_depth=max_depth)
        return tree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth)
    if library == "xgboost":
        import xgboost

        # one exact tree: no shrinkage, no regularisation, depth as asked
        params = dict(n_estimators=1, tree_method="exact", learning_rate=1.0, reg_lambda=0.0,
                      min_child_weight=0.0, max_depth=max_depth or 0, n_jobs=n_jobs or 0)
        if task == "regression":
            return xgboost.XGBRegressor(**params)
        return xgboost.XGBClassifier(**params)
    if library == "lightgbm":
        import lightgbm

        params = dict(n_estimators=1, learning_rate=1.0, max_depth=max_depth or -1,
                      num_leaves=2 ** (max_depth or 16), min_child_samples=1, reg_lambda=0.0,
                      min_child_weight=0.0, n_jobs=n_jobs or 0, verbose=-1)
        if task == "regression":
            return lightgbm.LGBMRegressor(**params)
        return lightgbm.LGBMClassifier(**params)
    raise ValueError(f"unknown library {library!r}")
