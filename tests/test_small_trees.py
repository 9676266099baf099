"""A single tree of fewer rows x features than ``fasttree.depth_first.SMALL_TREE_WORK`` grows
depth first, in one kernel call: the tree level-wise growth grows (every array, for every
estimator and rule it serves, with sums exact in any order), and what it does not serve grows
level-wise as before."""

import numpy as np
import pytest

import fasttree
from fasttree import _compile_ahead as compile_ahead
from fasttree import depth_first
from fasttree.estimators import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)

SMALL_TREES_DEPTH_FIRST = True  # tests/conftest.py: the routing users get

ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
          "n_node_samples", "weighted_n_node_samples", "missing_branch")


def _data(seed, n=400, m=6, n_classes=2):
    """Values with ties and missing cells; whole-number regression targets (sums exact in any
    order)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, m)), 1)
    X[rng.random(X.shape) < 0.06] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    if n_classes is None:
        return X, np.abs(np.round(3 * signal + rng.normal(size=n)))
    return X, np.digitize(signal + rng.normal(size=n), np.linspace(-1, 1, n_classes - 1))


@pytest.fixture
def grown(monkeypatch):
    """Fit a copy of an estimator; return it and whether its tree grew depth first."""
    calls = []
    grow = depth_first.grow_depth_first

    def spy(*args, **kwargs):
        calls.append(1)
        return grow(*args, **kwargs)

    monkeypatch.setattr(depth_first, "grow_depth_first", spy)

    def fit(estimator, X, y, **fit_params):
        calls.clear()
        return estimator.fit(X, y, **fit_params), bool(calls)

    return fit


CASES = [
    (DecisionTreeClassifier, {}),
    (DecisionTreeClassifier, {"criterion": "entropy", "max_depth": 4}),
    (DecisionTreeClassifier, {"criterion": "log_loss", "max_features": 2, "random_state": 0}),
    (DecisionTreeClassifier, {"min_samples_leaf": 3, "min_samples_split": 9}),
    (DecisionTreeClassifier, {"min_impurity_decrease": 0.002}),
    (DecisionTreeClassifier, {"min_weight_fraction_leaf": 0.03}),
    (DecisionTreeClassifier, {"ccp_alpha": 0.01}),
    (DecisionTreeClassifier, {"class_weight": "whole"}),
    (ExtraTreeClassifier, {"random_state": 0}),
    (ExtraTreeClassifier, {"criterion": "entropy", "max_features": None, "random_state": 3}),
]
REGRESSION_CASES = [
    (DecisionTreeRegressor, {}),
    (DecisionTreeRegressor, {"max_depth": 5, "min_samples_leaf": 2, "ccp_alpha": 0.5}),
    (DecisionTreeRegressor, {"criterion": "poisson", "max_features": 0.5, "random_state": 2}),
    (ExtraTreeRegressor, {"random_state": 1}),
]


@pytest.mark.parametrize("cls, params, n_classes",
                         [(*case, 2) for case in CASES] + [(*case, 3) for case in CASES]
                         + [(*case, None) for case in REGRESSION_CASES])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_small_tree_grown_depth_first_is_the_level_wise_tree(grown, monkeypatch, cls, params,
                                                               n_classes, weighted):
    X, y = _data(n_classes or 0, n_classes=n_classes)
    if "class_weight" in params:  # whole class weights: sums exact in any order
        params = {"class_weight": {k: 1 + 2 * k for k in range(n_classes)}}
    fit_params = {"sample_weight": np.arange(X.shape[0]) % 7 + 1.0} if weighted else {}
    small, first = grown(cls(**params), X, y, **fit_params)
    assert first, "a small tree grows depth first"
    monkeypatch.setattr(depth_first, "SMALL_TREE_WORK", 0)
    level_wise, first = grown(cls(**params), X, y, **fit_params)
    assert not first
    poisson = params.get("criterion") == "poisson"
    for name in ARRAYS:  # Poisson's sums of y log y are not whole: impurities to rounding
        a, b = getattr(small.tree_, name), getattr(level_wise.tree_, name)
        if poisson and name == "impurity":
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    assert small.tree_.node_count >= 5
    np.testing.assert_array_equal(small.predict(X), level_wise.predict(X))


def test_the_size_that_grows_depth_first(grown):
    n_features = 4
    rows = depth_first.SMALL_TREE_WORK // n_features
    X, y = _data(0, n=rows, m=n_features)
    assert grown(DecisionTreeClassifier(max_depth=3), X[:-1], y[:-1])[1]
    assert not grown(DecisionTreeClassifier(max_depth=3), X, y)[1]


@pytest.mark.parametrize("make, kind", [
    (lambda: DecisionTreeClassifier(max_leaf_nodes=8), "array"),
    (lambda: DecisionTreeClassifier(monotonic_cst=[1, 0, 0, 0, 0, 0]), "array"),
    (lambda: DecisionTreeClassifier(splitter="hist"), "array"),
    (lambda: DecisionTreeClassifier(criterion="gain_ratio"), "array"),
    (lambda: DecisionTreeClassifier(missing="fractional"), "array"),
    (lambda: DecisionTreeRegressor(criterion="absolute_error"), "array"),
    (lambda: DecisionTreeClassifier(), "two outputs"),
    (lambda: DecisionTreeClassifier(), "sparse"),
    (lambda: DecisionTreeClassifier(categorical_features=[5]), "array"),
])
def test_what_a_small_tree_does_not_grow_depth_first(grown, make, kind):
    X, y = _data(1)
    X = np.nan_to_num(X)
    X[:, 5] = np.arange(X.shape[0]) % 4
    if kind == "two outputs":
        y = np.column_stack([y, X[:, 3] > 0])
    elif kind == "sparse":
        import scipy.sparse

        X = scipy.sparse.csr_matrix(X)
    estimator, first = grown(make(), X, y)
    assert not first
    assert estimator.tree_.node_count > 1


def test_a_small_first_fit_compiles_the_small_kind_ahead(monkeypatch):
    asked = []
    monkeypatch.setattr(compile_ahead, "start", asked.append)
    X, y = _data(2)
    fasttree.DecisionTreeClassifier(max_depth=2).fit(X, y)
    big = np.tile(X, (depth_first.SMALL_TREE_WORK // X.size + 1, 1))
    fasttree.DecisionTreeClassifier(max_depth=2).fit(big, np.tile(y, big.shape[0] // y.size))
    assert asked == ["small", "classifier"]
