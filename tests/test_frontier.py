"""Several trees in one layout, grown in one frontier (ExactSplitter.from_samples, the grower's
``counts``): the layout kernel against a naive twin, and every tree the same as that tree grown
alone on its sample, for every kind of fit the exact splitter serves."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from fasttree.grower import GrowerParams, TreeGrower
from fasttree.kernels import presort_samples
from fasttree.splitter import ExactSplitter
from reference import presort_samples_naive

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
               "n_node_samples", "weighted_n_node_samples", "depth", "split_kind",
               "missing_branch", "category_offset", "category_n_codes", "category_branch")


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_presort_samples_equals_a_naive_presort_of_each_sample(data):
    n = data.draw(st.integers(1, 40))
    n_features = data.draw(st.integers(1, 4))
    values = st.sampled_from([-1.5, -0.0, 0.0, 0.25, 2.0, np.inf, np.nan])  # ties, zeros, NaN
    X = data.draw(hnp.arrays(np.float32, (n, n_features), elements=values))
    in_sample = data.draw(hnp.arrays(np.bool_, (data.draw(st.integers(1, 5)), n)))
    in_sample[:, data.draw(st.integers(0, n - 1))] = True  # every sample a row at least
    sorted_x, sorted_idx, origin, offsets = presort_samples(X, in_sample)
    want_x, want_idx, want_origin, want_offsets = presort_samples_naive(X, in_sample)
    np.testing.assert_array_equal(offsets, want_offsets)
    np.testing.assert_array_equal(origin, want_origin)
    np.testing.assert_array_equal(sorted_idx, want_idx)
    np.testing.assert_array_equal(sorted_x, want_x)  # -0.0 == 0.0, NaN == NaN here
    assert not np.signbit(sorted_x[sorted_x == 0]).any()  # zeros as presort_features gives them


def test_presort_samples_refuses_bad_arguments():
    X = np.zeros((5, 2), np.float32)
    with pytest.raises(ValueError, match="in_sample"):
        presort_samples(X, np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="in_sample"):
        presort_samples(X, np.ones((2, 5), np.int64))
    with pytest.raises(ValueError, match="at least one row"):
        presort_samples(X, np.array([[True] * 5, [False] * 5]))
    with pytest.raises(ValueError, match="float32"):
        presort_samples(X.astype(np.float64), np.ones((2, 5), bool))


def _data(n=700, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1], 1)  # ties
    signal = X[:, 0] + 0.7 * X[:, 1] - 0.4 * X[:, 3] + 0.5 * rng.normal(size=n)
    return rng, X, signal


def _params(criterion, **kwargs):
    defaults = dict(criterion=criterion, max_depth=8, min_samples_split=2, min_samples_leaf=1,
                    min_weight_leaf=0.0, min_impurity_decrease=0.0, max_leaf_nodes=None,
                    max_features=5)
    return GrowerParams(**{**defaults, **kwargs})


def _case(name):
    """(params, X, y, n_classes, counts, sample_weight, grower keywords) of one kind of fit."""
    rng, X, signal = _data()
    y3 = np.digitize(signal, [-0.6, 0.6]).astype(np.int32)
    yr = signal + 0.1 * X[:, 4] ** 2
    n_trees = 3
    counts = rng.poisson(1.0, size=(n_trees, X.shape[0]))  # a bootstrap's counts, many zeros
    w = None
    kw = {}
    n_classes, y = 3, y3
    if name == "gini":
        params = _params("gini")
    elif name == "entropy_sqrt_features":
        params = _params("entropy", max_features=2)
    elif name == "subsample_unit_weights":  # counts of 0 and 1: the unit-weight kernels
        counts = (rng.random((n_trees, X.shape[0])) < 0.6).astype(np.int64)
        params = _params("gini", max_features=3)
    elif name == "sample_weight":
        w = rng.random(X.shape[0]) * 2.0
        params = _params("entropy", min_samples_leaf=3)
    elif name == "random_thresholds":
        params = _params("gini", splitter="random", max_features=3)
    elif name == "missing_values":
        X[rng.random(X.shape) < 0.1] = np.nan
        params = _params("gini", max_features=4)
    elif name in ("categorical_binary", "categorical_multiway"):
        X[:, 0] = rng.integers(0, 6, size=X.shape[0])
        X[rng.random(X.shape[0]) < 0.05, 0] = np.nan
        y = np.digitize(signal + 0.6 * (X[:, 0] % 3) - 0.6, [-0.6, 0.6]).astype(np.int32)
        kw["n_categories"] = np.array([6, 0, 0, 0, 0])
        params = _params("entropy", categorical_split=name.split("_")[1], max_depth=6)
    elif name == "max_leaf_nodes":
        params = _params("gini", max_leaf_nodes=25, max_features=3)
    elif name == "squared_error":
        n_classes, y = None, yr
        params = _params("squared_error", min_samples_leaf=2)
    elif name == "poisson":
        n_classes, y = None, rng.poisson(np.exp(0.4 * np.clip(signal, -3, 3))).astype(float)
        params = _params("poisson", max_depth=6)
    elif name == "absolute_error":
        n_classes, y = None, yr
        params = _params("absolute_error", max_depth=5)
    elif name == "monotonic":
        n_classes, y = None, yr
        kw["monotonic_cst"] = np.array([1, 0, 0, -1, 0], dtype=np.int8)
        params = _params("squared_error", max_depth=6)
    elif name == "several_outputs":
        n_classes, y = None, None
        Y = np.column_stack([yr, X[:, 2] - X[:, 3]])
        kw["multi_output"] = (Y, np.array([0, 3, 6]))
        params = _params("squared_error", max_depth=6)
    else:
        raise AssertionError(name)
    return params, X, y, n_classes, counts, w, kw


CASES = ["gini", "entropy_sqrt_features", "subsample_unit_weights", "sample_weight",
         "random_thresholds", "missing_values", "categorical_binary", "categorical_multiway",
         "max_leaf_nodes", "squared_error", "poisson", "absolute_error", "monotonic",
         "several_outputs"]


@pytest.mark.parametrize("name", CASES)
def test_each_tree_of_the_frontier_is_the_tree_grown_alone(name):
    params, X, y, n_classes, counts, w, kw = _case(name)
    seeds = [11, 12, 13]
    trees = TreeGrower(X, y, w, params, n_classes=n_classes, counts=counts,
                       rng=[np.random.default_rng(s) for s in seeds], **kw).grow_trees()
    assert len(trees) == counts.shape[0]
    for k, tree in enumerate(trees):
        rows = np.flatnonzero(counts[k])
        weight = counts[k][rows].astype(float) * (1.0 if w is None else w[rows])
        if w is None and np.all(counts[k][rows] == 1):
            weight = None  # as the frontier: unit weights
        alone_kw = dict(kw)
        if "multi_output" in kw:
            alone_kw["multi_output"] = (kw["multi_output"][0][rows], kw["multi_output"][1])
        alone = TreeGrower(np.ascontiguousarray(X[rows]), None if y is None else y[rows],
                           weight, params, n_classes=n_classes,
                           rng=np.random.default_rng(seeds[k]), **alone_kw).grow()
        assert tree.node_count > 3
        for attr in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, attr), getattr(alone, attr),
                                          err_msg=f"tree {k}: {attr}")


def test_one_layout_of_several_trees_refuses_what_it_cannot_grow():
    params, X, y, n_classes, counts, w, kw = _case("gini")
    with pytest.raises(ValueError, match="counts must be an integer array"):
        TreeGrower(X, y, None, params, n_classes=3, counts=counts[:, :-1]).grow_trees()
    with pytest.raises(ValueError, match="not be negative"):
        TreeGrower(X, y, None, params, n_classes=3, counts=-counts).grow_trees()
    empty = counts.copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="at least one row"):
        TreeGrower(X, y, None, params, n_classes=3, counts=empty).grow_trees()
    with pytest.raises(ValueError, match="grow_trees"):
        TreeGrower(X, y, None, params, n_classes=3, counts=counts).grow()
    splitter = ExactSplitter.from_samples(X, y, counts, n_classes=3,
                                          n_categories=np.zeros(5, np.int64),
                                          criterion_code=params.criterion_code,
                                          min_samples_leaf=1, min_weight_leaf=0.0,
                                          categorical_kind=0)
    with pytest.raises(ValueError, match="holds 3 trees"):
        TreeGrower(None, None, None, params, n_classes=3, splitter=splitter).grow()
    sqrt = _params("gini", max_features=2)
    with pytest.raises(ValueError, match="one generator per tree"):
        TreeGrower(X, y, None, sqrt, n_classes=3, counts=counts,
                   rng=np.random.default_rng(0)).grow_trees()
    with pytest.raises(ValueError, match="one generator per tree"):
        TreeGrower(X, y, None, _params("gini", splitter="random"), n_classes=3, counts=counts,
                   rng=[np.random.default_rng(0)]).grow_trees()
    with pytest.raises(ValueError, match="one tree only"):
        TreeGrower(X, y, None, _params("gini", missing="fractional"), n_classes=3,
                   counts=counts).grow_trees()
    with pytest.raises(ValueError, match="dense X"):
        TreeGrower(X, y, None, _params("gini", splitter="hist"), n_classes=3, counts=counts)


def test_a_layout_of_one_tree_grows_as_before():
    params, X, y, n_classes, counts, w, kw = _case("gini")
    ones = np.ones((1, X.shape[0]), dtype=np.int64)
    (tree,) = TreeGrower(X, y, None, params, n_classes=3, counts=ones).grow_trees()
    alone = TreeGrower(X, y, None, params, n_classes=3).grow()
    for attr in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(tree, attr), getattr(alone, attr))
    splitter = ExactSplitter.from_samples(X, y, ones, n_classes=3,
                                          n_categories=np.zeros(5, np.int64),
                                          criterion_code=params.criterion_code,
                                          min_samples_leaf=1, min_weight_leaf=0.0,
                                          categorical_kind=0)
    np.testing.assert_array_equal(splitter.tree_offsets, [0, X.shape[0]])
    np.testing.assert_array_equal(splitter.tree_weights, [X.shape[0]])
    assert splitter.sample_weight.shape == (0,)  # counts of 1: the unit-weight kernels
