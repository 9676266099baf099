"""Monotonicity constraints (``monotonic_cst``): the scans against an exhaustive search, the
random thresholds against their definition, trees against scikit-learn's, and the refusals.

scikit-learn's own ``test_monotonic_tree.py`` also runs against fasttree
(``tests/test_sklearn_monotonic_suite.py``).
"""

import numpy as np
import pytest

import fasttree
from fasttree._dtypes import (
    CRITERION_ABSOLUTE_ERROR,
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    SPLIT_SUBSET,
)
from fasttree.kernels.draws import node_draws, root_key
from fasttree.kernels.monotonic import child_bounds, monotonic_ok
from fasttree.sparse_splitter import SparseSplitter, csc_arrays
from fasttree.splitter import ExactSplitter
from reference import constrained_value, missing_aware_numeric_split

CODES = {"gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
         "squared_error": CRITERION_SQUARED_ERROR, "poisson": CRITERION_POISSON,
         "absolute_error": CRITERION_ABSOLUTE_ERROR}
CLASSIFICATION = ("gini", "entropy")


def _problem(seed, criterion, missing, weighted, sparse, n=60, m=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, m)).astype(np.float32)
    if sparse:
        X[rng.random((n, m)) < 0.5] = 0.0
    if missing:
        X[rng.random((n, m)) < 0.15] = np.nan
    if criterion in CLASSIFICATION:
        y = (X[:, 0] + rng.normal(0, 2, n) > 0).astype(np.int32)
    else:
        y = rng.poisson(np.exp(0.3 * np.nan_to_num(X[:, 0]))).astype(np.float64)
    w = rng.uniform(0.2, 2.0, n) if weighted else None
    cst = rng.choice([-1, 1], size=m).astype(np.int8)
    cst[-1] = 0  # one free feature: never checked
    return rng, X, y, w, cst


def _splitter(X, y, w, criterion, cst, sparse, random_thresholds=False):
    n_classes = 2 if criterion in CLASSIFICATION else None
    kwargs = dict(n_classes=n_classes, criterion_code=CODES[criterion], min_samples_leaf=1,
                  min_weight_leaf=0.0, monotonic_cst=cst, random_thresholds=random_thresholds)
    if sparse:
        data, indices, indptr = csc_arrays(__import__("scipy.sparse").sparse.csc_matrix(X))
        return SparseSplitter.from_csc(data, indices, indptr, X.shape[0], y, w, **kwargs)
    return ExactSplitter.from_data(X, y, w, n_categories=np.zeros(X.shape[1], np.int64),
                                   categorical_kind=SPLIT_SUBSET, **kwargs)


def _bounds(rng, value, mode, spread):
    if mode == "free":
        return -np.inf, np.inf
    if mode == "below":
        return value - rng.uniform(0.0, spread), np.inf
    return value - rng.uniform(0.0, spread), value + rng.uniform(0.0, spread)


def _search(splitter, n, bounds, seed=0):
    start, end = np.array([0]), np.array([n])
    stats = splitter.node_stats(start, end, np.zeros(1, np.int64))
    mask = np.ones((splitter.n_features, 1), np.uint8)
    draws = None
    if splitter.random_thresholds:  # the root's draws, as the grower makes them
        key = np.array([root_key(np.random.default_rng(seed))])
        draws = node_draws(key, splitter.n_features, False, True)[1:]
    return splitter.find_splits(start, end, stats, mask, np.array([bounds], dtype=np.float64),
                                draws=draws)


CASES = [(c, missing, sparse) for c in CODES
         for missing, sparse in [(False, False), (True, False), (False, True)]]


@pytest.mark.parametrize("criterion,missing,sparse", CASES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("mode", ["free", "below", "both"])
@pytest.mark.parametrize("seed", range(3))
def test_best_split_respects_constraints_like_an_exhaustive_search(criterion, missing, sparse,
                                                                   weighted, mode, seed):
    rng, X, y, w, cst = _problem(seed, criterion, missing, weighted, sparse)
    w_ref = np.ones(X.shape[0]) if w is None else w
    value = constrained_value(y, w_ref, criterion)
    bounds = _bounds(rng, value, mode, 0.3 if criterion in CLASSIFICATION else 1.0)
    record = _search(_splitter(X, y, w, criterion, cst, sparse), X.shape[0], bounds)
    n_classes = 2 if criterion in CLASSIFICATION else None
    for f in range(X.shape[1]):
        monotonic = None if cst[f] == 0 else (int(cst[f]), *bounds)
        expected, candidates, _ = missing_aware_numeric_split(
            X[:, f], y, w_ref, criterion=criterion, n_classes=n_classes, monotonic=monotonic)
        got = record.children_impurity[f, 0]
        if not np.isfinite(expected):
            assert got == np.inf, (f, got)
            continue
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
        # the split written is an admissible one of that value
        t, missing_left = record.threshold[f, 0], record.missing_branch[f, 0] == 0
        assert any(c[0] == pytest.approx(got, rel=1e-9, abs=1e-9) and c[1] == t
                   and (c[2] == missing_left or not np.isnan(X[:, f]).any())
                   for c in candidates)


@pytest.mark.parametrize("criterion", list(CODES))
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_random_threshold_is_kept_only_if_it_respects_the_constraint(criterion, sparse, seed):
    """The random splitter draws the same threshold with or without constraints and keeps it
    exactly when the constraint holds for its children."""
    rng, X, y, w, cst = _problem(seed, criterion, False, True, sparse)
    value = constrained_value(y, w, criterion)
    bounds = _bounds(rng, value, "both", 0.3 if criterion in CLASSIFICATION else 1.0)
    n = X.shape[0]
    free = _search(_splitter(X, y, w, criterion, None, sparse, True), n, bounds, seed)
    constrained = _search(_splitter(X, y, w, criterion, cst, sparse, True), n, bounds, seed)
    n_kept = 0
    for f in range(X.shape[1]):
        if not np.isfinite(free.children_impurity[f, 0]):
            assert constrained.children_impurity[f, 0] == np.inf
            continue
        left = X[:, f] <= free.threshold[f, 0]
        ok = cst[f] == 0 or monotonic_ok(
            int(cst[f]), *bounds, constrained_value(y[left], w[left], criterion),
            constrained_value(y[~left], w[~left], criterion))
        expected = free.children_impurity[f, 0] if ok else np.inf
        assert constrained.children_impurity[f, 0] == expected
        n_kept += ok
    assert n_kept >= 1  # the free feature at least


def test_child_bounds_meet_at_the_middle_value():
    left, right = child_bounds(np.array([1, -1, 0]), np.array([-1.0, -1.0, -1.0]),
                               np.array([5.0, 5.0, 5.0]), np.array([0.0, 4.0, 0.0]),
                               np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(left, [[-1, 1], [3, 5], [-1, 5]])
    np.testing.assert_array_equal(right, [[1, 5], [-1, 3], [-1, 5]])


sk_tree = pytest.importorskip("sklearn.tree")


def _rounded(X):
    return np.round(X, 3)  # no two values within scikit-learn's 1e-7 tolerance


@pytest.mark.parametrize("criterion", ["squared_error", "poisson", "absolute_error"])
@pytest.mark.parametrize("rule", [{"max_depth": 4}, {"max_leaf_nodes": 40},
                                  {"min_samples_leaf": 20}], ids=str)
def test_regression_trees_equal_scikit_learns(criterion, rule):
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=600, n_features=5, n_informative=5, random_state=1)
    X = _rounded(X)
    y = np.abs(y) if criterion == "poisson" else y
    cst = [1, -1, 0, 1, 0]
    ours = fasttree.DecisionTreeRegressor(criterion=criterion, monotonic_cst=cst, **rule)
    theirs = sk_tree.DecisionTreeRegressor(criterion=criterion, monotonic_cst=cst,
                                           random_state=0, **rule)
    ours.fit(X, y)
    theirs.fit(X, y)
    assert ours.tree_.node_count == theirs.tree_.node_count
    # on the training rows: two features can induce the same partition of a small node (a tie
    # the libraries may break differently), so unseen rows may fall differently
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("rule", [{"max_depth": 6}, {"max_leaf_nodes": 30},
                                  {"min_samples_leaf": 5}], ids=str)
def test_classification_trees_equal_scikit_learns(criterion, rule):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=800, n_features=5, n_informative=5, n_redundant=0,
                               random_state=0)
    X = _rounded(X)
    # continuous weights, multiples of 2**-20: no two partitions tie, sums are exact (a node of
    # a few rows can still be split the same way by two features, which full-depth trees meet)
    w = np.random.default_rng(0).integers(1, 2**20, X.shape[0]) / 2**20
    cst = [1, -1, 0, 0, 1]
    ours = fasttree.DecisionTreeClassifier(criterion=criterion, monotonic_cst=cst, **rule)
    theirs = sk_tree.DecisionTreeClassifier(criterion=criterion, monotonic_cst=cst,
                                            random_state=0, **rule)
    ours.fit(X, y, w)
    theirs.fit(X, y, w)
    assert ours.tree_.node_count == theirs.tree_.node_count
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)


def test_constraints_change_the_tree_and_hold():
    """Against the data's trend a constraint flattens the prediction; along it, it keeps it."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 500)
    y = x + rng.normal(0, 3, 500)
    X = x[:, None]
    grid = np.linspace(0, 10, 201)[:, None]
    free = fasttree.DecisionTreeRegressor(max_depth=6).fit(X, y).predict(grid)
    up = fasttree.DecisionTreeRegressor(max_depth=6, monotonic_cst=[1]).fit(X, y).predict(grid)
    down = fasttree.DecisionTreeRegressor(max_depth=6, monotonic_cst=[-1]).fit(X, y)
    assert np.any(np.diff(free) < 0)  # noisy data: the free tree is not monotonic
    assert np.all(np.diff(up) >= 0)
    assert np.all(np.diff(down.predict(grid)) <= 0)
    assert down.get_n_leaves() < 5 < fasttree.DecisionTreeRegressor(max_depth=6).fit(
        X, y).get_n_leaves()  # against the trend, hardly any split is admissible


@pytest.mark.parametrize("kwargs,message", [
    ({"categorical_features": [0], "monotonic_cst": [1, 0]}, "categorical feature"),
    ({"missing": "fractional", "monotonic_cst": [1, 0]}, "fractional"),
    ({"monotonic_cst": [[1, 0]]}, "monotonic_cst has shape"),
    ({"monotonic_cst": [1, 0.5]}, "-1, 0 or 1"),
])
def test_refusals_name_the_problem(kwargs, message):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 3, 50), rng.normal(size=50)])
    y = rng.integers(0, 2, 50)
    with pytest.raises(ValueError, match=message):
        fasttree.DecisionTreeClassifier(**kwargs).fit(X, y)


def test_all_zero_constraints_grow_the_unconstrained_tree():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 3)), rng.integers(0, 2, 300)
    a = fasttree.DecisionTreeClassifier(monotonic_cst=[0, 0, 0]).fit(X, y)
    b = fasttree.DecisionTreeClassifier().fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    np.testing.assert_array_equal(a.tree_.value, b.tree_.value)
