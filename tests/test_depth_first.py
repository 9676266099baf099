"""Trees grown depth first (fasttree.depth_first: a forest's extra trees, random thresholds, and
its random-forest trees, best thresholds) are the trees the level-wise grower grows: every
array, for every rule and weight kind whose sums are exact in any order."""

from collections import deque

import numpy as np
import pytest

from fasttree import depth_first
from fasttree.estimators import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)
from fasttree.grower import TreeGrower
from fasttree.kernels.depth_first import breadth_first_order

ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
          "n_node_samples", "weighted_n_node_samples", "depth", "missing_branch")


def _data(seed, n=500, m=7, n_classes=2, missing=True, rounded=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)).astype(np.float32)
    if rounded:  # ties between rows
        X = np.round(X, 1)
    if missing:
        X[rng.random(X.shape) < 0.08] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    if n_classes is None:  # whole-number targets: sums exact in any order
        y = np.round(3 * signal + rng.normal(size=n)).astype(np.float64)
    else:
        y = np.digitize(signal + rng.normal(size=n), np.linspace(-1, 1, n_classes - 1))
        y = y.astype(np.int32)
    counts = rng.poisson(1.0, size=(4, n)).astype(np.uint8)
    counts[:, 0] = np.maximum(counts[:, 0], 1)  # every tree some row
    return X, y, counts


def _grow(X, y, counts, params, n_classes, seed, weight=None):
    rngs = [np.random.default_rng(seed + k) for k in range(counts.shape[0])]
    return TreeGrower(X, y, weight, params, n_classes=n_classes, rng=rngs,
                      counts=counts).grow_trees()


def _assert_same(trees, twins, close=()):
    assert len(trees) == len(twins)
    for a, b in zip(trees, twins):
        for name in ARRAYS:
            if name in close:
                np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12,
                                           atol=1e-12, err_msg=name)
            else:
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


CASES = [
    ("gini", 2, {}),
    ("entropy", 3, {}),
    ("gini", 2, {"max_features": 1}),
    ("entropy", 2, {"max_features": None}),
    ("gini", 4, {"max_depth": 4, "min_samples_leaf": 3}),
    ("gini", 2, {"min_samples_split": 9, "min_impurity_decrease": 0.002}),
    ("entropy", 2, {"min_weight_fraction_leaf": 0.02}),
    ("squared_error", None, {}),
    ("poisson", None, {"max_features": 0.5}),
]


@pytest.mark.parametrize("splitter, criterion, n_classes, options",
                         [("random", *case) for case in CASES]
                         + [("best", *case) for case in CASES])
@pytest.mark.parametrize("weighted", [False, True])
def test_depth_first_trees_are_the_level_wise_trees(monkeypatch, splitter, criterion, n_classes,
                                                   options, weighted):
    X, y, counts = _data(3, n_classes=n_classes)
    if criterion == "poisson":
        y = np.abs(y)
    cls = ExtraTreeClassifier if n_classes else ExtraTreeRegressor
    est = cls(criterion=criterion, splitter=splitter, **{"max_features": "sqrt", **options})
    params = est._resolve_params(X.shape[0], X.shape[1], float(counts[0].sum()), True)
    assert depth_first.serves(params, False, False, False, n_classes is not None, True)
    # whole weights up to 255 move as counts; larger whole weights as float64: exact sums both
    weight = np.arange(X.shape[0]) % 300 + 1.0 if weighted else None
    trees = _grow(X, y, counts, params, n_classes, 5, weight)
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    # Poisson's sums of y log y are not whole: the impurities equal to rounding
    _assert_same(trees, _grow(X, y, counts, params, n_classes, 5, weight),
                 close=("impurity",) if criterion == "poisson" else ())


def test_unit_weights_and_a_tree_regrown_with_more_slots(monkeypatch):
    """Every count 1 (no bootstrap): unit weights; a tree that outgrows its first node slots
    is grown again from its sample, the same tree."""
    X, y, _ = _data(4, n=800, n_classes=2, missing=False, rounded=False)
    counts = np.ones((3, X.shape[0]), dtype=np.uint8)
    params = ExtraTreeClassifier(max_features="sqrt")._resolve_params(
        X.shape[0], X.shape[1], float(X.shape[0]), False)
    trees = _grow(X, y, counts, params, 2, 9)
    monkeypatch.setattr(depth_first, "FIRST_SLOTS_PER_ROW", {"random": 0.0})  # 64: too few
    timings = {}
    nodes, _ = depth_first.grow_depth_first(X, y, counts, None, params, 2,
                                            [np.random.default_rng(9 + k) for k in range(3)],
                                            timings)
    assert [n["left"].shape[0] for n in nodes] == [t.node_count for t in trees]
    assert all(t.node_count > 64 for t in trees)
    _assert_same(_grow(X, y, counts, params, 2, 9), trees)
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, 2, 9))


def _naive_level_order(child_left):
    """Breadth-first numbering of a tree given depth first, by a plain queue."""
    order, queue = [], deque([0])
    while queue:
        node = queue.popleft()
        order.append(node)
        if child_left[node] >= 0:
            queue.extend([child_left[node], child_left[node] + 1])
    new = {old: i for i, old in enumerate(order)}
    left = [new[child_left[old]] if child_left[old] >= 0 else -1 for old in order]
    return order, left


def _random_depth_first_tree(rng, most=200):
    """A random tree's ``child_left`` numbered depth first (each split node's children follow
    as a pair) of up to about ``most`` nodes, its root split when ``most`` > 1."""
    child_left = [-1]
    stack = [0]
    while stack and len(child_left) < most:
        node = stack.pop()
        if node == 0 or rng.random() < 0.7:
            first = len(child_left)
            child_left[node] = first
            child_left += [-1, -1]
            stack += [first + 1, first]
    return np.array(child_left, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_breadth_first_order_against_a_queue(seed):
    child_left = _random_depth_first_tree(np.random.default_rng(seed))
    order, left = breadth_first_order(child_left)
    want_order, want_left = _naive_level_order(child_left)
    assert order.tolist() == want_order
    assert left.tolist() == want_left


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_best_thresholds_of_large_nodes(monkeypatch, criterion):
    """Nodes of thousands of rows (the radix sort's passes, not the insertion sort of small
    ones), whole values with many ties and missing values, every count 1 and bootstrap counts:
    the level-wise trees."""
    X, y, counts = _data(6, n=6000, m=5, n_classes=3)
    X[:, 3] = np.round(X[:, 3] * 1000)  # values of every magnitude sign and exponent
    counts[1] = 1
    params = DecisionTreeClassifier(criterion=criterion, max_features=3)._resolve_params(
        X.shape[0], X.shape[1], float(counts[0].sum()), True)
    trees = _grow(X, y, counts, params, 3, 2)
    assert all(t.max_depth > 8 for t in trees)
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, 3, 2))


@pytest.mark.parametrize("per_tree", [False, True])
def test_best_thresholds_with_fractional_weights(monkeypatch, per_tree):
    """Fractional weights (class weights, say) add up in the presorted layout's order (a root's
    rows in feature 0's sorted order, a child's in its parent's split feature's): the very
    level-wise trees, values and impurities too."""
    X, y, counts = _data(7, n_classes=3)
    rng = np.random.default_rng(1)
    weight = rng.uniform(0.1, 2.0, size=counts.shape if per_tree else counts.shape[1])
    params = DecisionTreeClassifier(max_features="sqrt", min_weight_fraction_leaf=0.01)\
        ._resolve_params(X.shape[0], X.shape[1], float((counts * weight).sum(axis=-1).min()),
                         True)
    trees = _grow(X, y, counts, params, 3, 11, weight)
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, 3, 11, weight))


@pytest.mark.parametrize("weighted", [False, True])
def test_best_thresholds_of_real_valued_targets(monkeypatch, weighted):
    """Regression targets of any value (and fractional weights): each node's sums add its rows
    in the presorted layout's order, so the trees are the level-wise ones to the last bit."""
    X, _, counts = _data(9, n=700, n_classes=None)
    y = np.random.default_rng(2).normal(size=X.shape[0]) * 3.7
    weight = np.random.default_rng(3).uniform(0.2, 3.0, X.shape[0]) if weighted else None
    params = DecisionTreeRegressor(max_features=4, min_samples_leaf=2)._resolve_params(
        X.shape[0], X.shape[1], float(counts[0].sum()), True)
    trees = _grow(X, y, counts, params, None, 4, weight)
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, None, 4, weight))


def test_a_tree_grown_again_keeps_its_batchs_kind_of_weights(monkeypatch):
    """A tree that outgrows its first node slots is laid out again alone; it keeps the batch's
    float weights although its own rows' weights are whole (uint8 counts score two-class
    entropy by another formula: a tie could go the other way)."""
    X, y, _ = _data(8, n=600, n_classes=2, missing=False)
    counts = np.zeros((2, X.shape[0]), dtype=np.uint8)
    counts[0, :40] = 1  # a small tree, drawing the one fractional row
    counts[1, 40:] = 2  # a large one, whole weights alone
    weight = np.ones(X.shape[0])
    weight[0] = 0.5
    params = DecisionTreeClassifier(criterion="entropy", max_features=3)._resolve_params(
        X.shape[0], X.shape[1], 40.0, True)
    monkeypatch.setattr(depth_first, "FIRST_SLOTS_PER_ROW", {"best": 0.0})  # 64 slots
    kinds = []
    grow = depth_first._grow
    monkeypatch.setattr(depth_first, "_grow", lambda *args: kinds.append(args[6].dtype)
                        or grow(*args))
    trees = _grow(X, y, counts, params, 2, 3, weight)
    assert kinds == [np.float64, np.float64]  # the first growth, then the large tree again
    assert trees[0].node_count <= 64 < trees[1].node_count
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, 2, 3, weight))


def test_grow_best_trees_refuses_what_it_cannot_grow():
    from fasttree._dtypes import CRITERION_ABSOLUTE_ERROR, CRITERION_GINI
    from fasttree.kernels.depth_first import grow_best_trees

    X = np.zeros((4, 2), dtype=np.float32)
    nodes = [np.zeros(3, np.int64), np.zeros(7, np.int64), np.zeros(7, np.int64), np.zeros(7),
             np.zeros(7, np.int32), np.zeros(7, np.int64), np.zeros(7, np.int64),
             np.zeros((7, 2)), np.zeros(1, np.int64)]

    def grow(weight, criterion=CRITERION_GINI, table=np.zeros(9)):
        grow_best_trees(X, np.ascontiguousarray(X.T), np.arange(4, dtype=np.int32),
                        np.zeros(4, np.uint8), weight, np.array([0, 4]),
                        np.zeros(1, np.uint64), np.array([4.0]), criterion, 2, 5, 2, 1, 0.0,
                        0.0, table, *nodes)

    with pytest.raises(TypeError, match="weight must be float64"):
        grow(np.ones(4, dtype=np.float32))
    with pytest.raises(ValueError, match="gini, entropy, squared error or Poisson"):
        grow(np.empty(0), CRITERION_ABSOLUTE_ERROR)
    with pytest.raises(ValueError, match="a table longer"):
        grow(np.ones(4, dtype=np.uint8), table=np.zeros(3))


def test_the_forest_kernels_refuse_arrays_that_share_memory():
    """The forests' tree functions are compiled ``noalias`` (fasttree._jit.check_apart): an
    array they write may not overlap another argument."""
    from fasttree._dtypes import CRITERION_GINI
    from fasttree.kernels.depth_first import grow_best_trees, grow_random_trees

    X = np.zeros((4, 2), dtype=np.float32)
    rows = np.arange(4, dtype=np.int32)

    def nodes(depth=None):
        shared = np.zeros(7, np.int64)
        return [np.zeros(3, np.int64), np.zeros(7, np.int64), np.zeros(7, np.int64),
                np.zeros(7), np.zeros(7, np.int32), shared,
                shared if depth is None else depth, np.zeros((7, 2)), np.zeros(2, np.int64)]

    layout = (np.array([0, 2, 4]), np.zeros(2, np.uint64), np.array([2.0, 2.0]))
    with pytest.raises(ValueError, match="depth and n_node_samples must not share memory"):
        grow_best_trees(X, np.ascontiguousarray(X.T), rows, np.zeros(4, np.uint8), np.empty(0),
                        *layout, CRITERION_GINI, 2, 5, 2, 1, 0.0, 0.0, np.zeros(9), *nodes())
    with pytest.raises(ValueError, match="rows and X must not share memory"):
        grow_random_trees(X, np.empty((0, 0), np.float32), X.reshape(-1).view(np.int32)[:4],
                          np.zeros(4, np.uint8), np.empty(0), False, *layout, 2,
                          CRITERION_GINI, 2, 5, 2, 1, 0.0, 0.0, *nodes(np.zeros(7, np.int64)))


def test_check_apart_compares_byte_ranges():
    from fasttree._jit import check_apart

    a = np.zeros(100)
    check_apart({"left": a[:50]}, {"right": a[50:], "empty": a[:0]})
    check_apart({"a": a}, {"empty": a[10:10]})
    with pytest.raises(ValueError, match="a and view must not share memory"):
        check_apart({"a": a}, {"view": a[10:20]})
    with pytest.raises(ValueError, match=r"the kernel writes b\)"):
        check_apart({"b": a[50:]}, {"a": a[:60]})
    with pytest.raises(ValueError, match="must not share memory"):  # strided: by bounds
        check_apart({"even": a[::2]}, {"odd": a[1::2]})
    check_apart({}, {"x": a, "y": a})  # read twice: allowed


def test_what_it_serves():
    est = ExtraTreeClassifier()
    params = est._resolve_params(100, 3, 100.0, False)
    assert depth_first.serves(params, False, False, False, True, True)  # a forest's trees
    assert not depth_first.serves(params, False, False, False, True, False)  # one tree alone
    assert not depth_first.serves(params, True, False, False, True, True)  # categorical
    assert not depth_first.serves(params, False, True, False, True, True)  # several outputs
    assert not depth_first.serves(params, False, False, True, True, True)  # constraints
    for other in (ExtraTreeClassifier(max_leaf_nodes=5), ExtraTreeClassifier(missing="fractional"),
                  ExtraTreeRegressor(criterion="absolute_error")):
        assert not depth_first.serves(other._resolve_params(100, 3, 100.0, False), False,
                                      False, False, True, True)
    best = DecisionTreeClassifier()._resolve_params(100, 3, 100.0, False)
    assert depth_first.serves(best, False, False, False, True, True)  # a forest's trees
    assert not depth_first.serves(best, False, False, False, True, False)  # one tree alone
    for other in (DecisionTreeClassifier(criterion="gain_ratio"),
                  DecisionTreeClassifier(splitter="hist")):
        assert not depth_first.serves(other._resolve_params(100, 3, 100.0, False), False,
                                      False, False, True, True)
    for criterion, served in (("squared_error", True), ("poisson", True),
                              ("absolute_error", False)):
        params = DecisionTreeRegressor(criterion=criterion)._resolve_params(100, 3, 100.0, False)
        assert depth_first.serves(params, False, False, False, False, True) == served
