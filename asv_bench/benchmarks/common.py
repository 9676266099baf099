"""Shared pieces of the benchmarks: cached data, estimator factories, warm-up."""

import functools
import subprocess
import sys

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
def regression_data(n_samples, n_features, seed=0, n_targets=1):
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=n_samples, n_features=n_features,
                           n_informative=min(10, n_features), noise=1.0, random_state=seed,
                           n_targets=n_targets)
    return X.astype(np.float32), y


@functools.lru_cache(maxsize=None)
def sparse_text_data(n_samples, n_features, density=0.01, seed=0):
    """A text-like CSC matrix (term counts, about ``density`` of the cells stored, frequent terms
    more often) and a binary target that depends on a few terms."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    nnz = int(n_samples * n_features * density)
    # Zipf-like term popularity, as words in documents
    popularity = 1.0 / np.arange(1, n_features + 1) ** 0.8
    cols = rng.choice(n_features, size=nnz, p=popularity / popularity.sum())
    rows = rng.integers(0, n_samples, nnz)
    counts = (rng.poisson(0.7, nnz) + 1).astype(np.float32)
    X = sp.csc_matrix((counts, (rows, cols)), shape=(n_samples, n_features), dtype=np.float32)
    X.sum_duplicates()
    term_sum = lambda a, b: np.asarray(X[:, a:b].sum(axis=1)).ravel()  # noqa: E731
    signal = term_sum(5, 40) - term_sum(40, 75)
    y = (signal + rng.normal(scale=1.0, size=n_samples) > 0).astype(np.int64)
    return X, y


@functools.lru_cache(maxsize=None)
def missing_data(n_samples, n_features, fraction=0.1, seed=0):
    """:func:`classification_data` with a random ``fraction`` of the cells set to NaN."""
    X, y = classification_data(n_samples, n_features, seed)
    rng = np.random.default_rng(seed + 1)
    X = X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return X, y


#: Cardinalities of the categorical columns of :func:`mixed_data`.
CARDINALITIES = (3, 10, 30, 100, 1000)


@functools.lru_cache(maxsize=None)
def mixed_data(n_samples, n_numeric=15, seed=0):
    """Binary target from 15 numeric and 5 categorical columns (category codes, float32).

    The categorical columns come first, cardinalities :data:`CARDINALITIES`; each category has
    a random effect on the target's log-odds, added to :func:`classification_data`'s signal.
    Returns ``X`` (float32, codes in the first 5 columns), ``y`` and the categorical indices.
    """
    rng = np.random.default_rng(seed)
    X_num, y_num = classification_data(n_samples, n_numeric, seed)
    codes = np.column_stack([rng.integers(0, c, n_samples) for c in CARDINALITIES])
    effect = sum(rng.normal(scale=1.5, size=c)[codes[:, j]] for j, c in enumerate(CARDINALITIES))
    logit = 2.0 * (y_num - 0.5) + effect
    y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    X = np.hstack([codes.astype(np.float32), X_num]).astype(np.float32)
    return X, y, tuple(range(len(CARDINALITIES)))


def warm_up():
    """Compile (or load from numba's cache) every kernel before anything is timed."""
    import fasttree

    X, y = classification_data(1000, 5)
    for criterion in ("gini", "entropy"):
        fasttree.DecisionTreeClassifier(criterion=criterion, max_depth=3).fit(X, y).predict(X)
    fasttree.DecisionTreeClassifier(max_leaf_nodes=4).fit(X, y)
    fasttree.DecisionTreeRegressor(max_depth=3).fit(X, y.astype(float)).predict(X)
    Xm, ym = missing_data(1000, 5)
    fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=3).fit(Xm, ym).predict(Xm)
    Xc, yc, cat = mixed_data(1000)
    for split in ("binary", "multiway"):
        fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=3, categorical_features=cat,
                                        categorical_split=split).fit(Xc, yc).predict(Xc)


def make_estimator(library, task, *, max_depth, criterion, n_jobs, splitter="best",
                   tree_params=None):
    """One single-tree estimator of the named library with comparable settings
    (``splitter="random"``: the extremely randomized trees of fasttree and scikit-learn;
    ``tree_params``: more parameters for those two, e.g. ``monotonic_cst``)."""
    if library in ("fasttree", "sklearn"):
        if library == "fasttree":
            import fasttree as tree

            extra = {"n_jobs": n_jobs}
        else:
            from sklearn import tree

            extra = {}
        kind = "Regressor" if task == "regression" else "Classifier"
        name = ("ExtraTree" if splitter == "random" else "DecisionTree") + kind
        if splitter == "random":  # one tree every fit: times of one tree, not of many
            extra["random_state"] = 0
        return getattr(tree, name)(criterion=criterion, max_depth=max_depth, **extra,
                                   **(tree_params or {}))
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


#: Import fasttree, fit and predict a small classifier and regressor; prints the seconds taken.
FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np, fasttree
rng = np.random.default_rng(0)
X = rng.normal(size=(1000, 10)); y = (X[:, 0] > 0).astype(int)
fasttree.DecisionTreeClassifier().fit(X, y).predict(X)
fasttree.DecisionTreeRegressor().fit(X, X[:, 1]).predict(X)
print(time.perf_counter() - t0)
"""

#: The baseline of FIRST_CALL: a bare ``import numba``.
BARE_NUMBA = """
import time
t0 = time.perf_counter()
import numba
print(time.perf_counter() - t0)
"""


def fresh_process_seconds(code):
    """Run ``code`` in a new interpreter and return the seconds it prints last."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])
