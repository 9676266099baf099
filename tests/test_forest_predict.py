"""The packed forest and its walks: every tree at once, against each tree's own walk and a naive
twin, float32 thresholds exact for float32 inputs, the forests' predictions unchanged, tampered
arrays refused."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttree
import fasttree.packed_forest as packed_forest
from fasttree.kernels import forest_leaves, forest_values
from fasttree.packed_forest import PackedForest, check_packed_forest, float32_below, packs
from reference import apply_naive


def _data(n=600, n_features=6, seed=0, missing=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)  # ties: thresholds between few values
    if missing:
        X[rng.random(n) < 0.15, 2] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 2]) + rng.normal(scale=0.7, size=n) > 0).astype(int)
    y[X[:, 1] > 1] = 2
    return X, y


def _naive_sum(trees, X):
    """Each tree's leaf values, one row at a time, with the trees' float64 thresholds."""
    total = np.zeros((X.shape[0], trees[0].value.shape[1] * trees[0].value.shape[2]))
    for tree in trees:
        total += tree.value[apply_naive(tree, X)].reshape(X.shape[0], -1)
    return total


def _near_thresholds(trees, X):
    """Rows of X with one value set to each threshold's float32 neighbours (and the threshold
    rounded both ways), where a wrong float32 threshold would send a row the other way."""
    rows = []
    for tree in trees:
        inner = np.flatnonzero(tree.children_left != -1)
        for node in inner[:40]:
            t = tree.threshold[node]
            below = np.float32(t) if np.float64(np.float32(t)) <= t else np.nextafter(
                np.float32(t), np.float32(-np.inf))
            for v in (below, np.nextafter(below, np.float32(np.inf)),
                      np.nextafter(below, np.float32(-np.inf))):
                row = X[len(rows) % X.shape[0]].copy()
                row[tree.feature[node]] = v
                rows.append(row)
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("missing", [True, False])
def test_forest_walk_matches_naive_twin(missing):
    X, y = _data(missing=missing)
    forest = fasttree.RandomForestClassifier(12, max_depth=9, random_state=1).fit(X, y)
    trees = [e.tree_ for e in forest.estimators_]
    assert packs(trees)
    packed = PackedForest.from_trees(trees, X.shape[1])
    check_packed_forest(X.shape[1], packed.tree_node_start, packed.tree_leaf_start,
                        packed.nodes, packed.leaf_value)
    X_test = np.vstack([X, _near_thresholds(trees, X)])
    expected = _naive_sum(trees, X_test)
    assert np.array_equal(packed.values(X_test), expected)
    leaves = np.stack([apply_naive(t, X_test) for t in trees], axis=1)
    assert np.array_equal(packed.apply(X_test), leaves)


@pytest.mark.parametrize("rows_per_block", [1, 3, 64, 10_000])
def test_block_size_does_not_change_the_result(rows_per_block):
    X, y = _data(n=500)
    forest = fasttree.ExtraTreesClassifier(7, random_state=0).fit(X, y)
    packed = PackedForest.from_trees([e.tree_ for e in forest.estimators_], X.shape[1])
    args = (X, packed.tree_node_start, packed.tree_leaf_start, packed.nodes, packed.leaf_value)
    assert np.array_equal(forest_values(*args, rows_per_block), forest_values(*args, 500))
    assert np.array_equal(
        forest_leaves(X, packed.tree_node_start, packed.nodes, rows_per_block),
        forest_leaves(X, packed.tree_node_start, packed.nodes, 500))


def test_kernels_take_x_in_any_memory_layout():
    # the walk reads X flat: a Fortran-ordered or strided X is copied first, never misread
    X, y = _data(n=300, missing=True)
    forest = fasttree.RandomForestClassifier(5, random_state=0).fit(X, y)
    packed = PackedForest.from_trees([e.tree_ for e in forest.estimators_], X.shape[1])
    wide = np.repeat(X, 2, axis=1)
    for other in (np.asfortranarray(X), wide[:, ::2]):
        assert np.array_equal(forest_values(other, packed.tree_node_start,
                                            packed.tree_leaf_start, packed.nodes,
                                            packed.leaf_value, 64), packed.values(X))
        assert np.array_equal(forest_leaves(other, packed.tree_node_start, packed.nodes, 64),
                              forest_leaves(X, packed.tree_node_start, packed.nodes, 64))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, width=64), st.lists(st.floats(width=32), min_size=1,
                                                      max_size=8))
def test_float32_below_splits_float32_values_as_the_threshold(t, xs):
    below = float32_below(np.array([t]))[0]
    assert below.dtype == np.float32 and np.float64(below) <= t
    # no float32 lies in (below, t]: the next float32 up is above t (unless below is t)
    if np.float64(below) != t:
        with np.errstate(over="ignore"):  # above float32's range: the next one up is inf
            assert np.float64(np.nextafter(below, np.float32(np.inf))) > t
    for x in np.array(xs, dtype=np.float32):
        assert (x > below) == (np.float64(x) > t)


def _per_tree_proba(forest, X):
    total = None
    for e in forest.estimators_:
        proba = e.predict_proba(X)
        proba = proba if isinstance(proba, list) else [proba]
        total = [np.array(p, dtype=np.float64) for p in proba] if total is None else [
            t + p for t, p in zip(total, proba)]
    return [t / len(forest.estimators_) for t in total]


@pytest.mark.parametrize("cls", [fasttree.RandomForestClassifier, fasttree.ExtraTreesClassifier])
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_classifiers_predict_as_their_trees(cls, n_outputs):
    X, y = _data()
    Y = y if n_outputs == 1 else np.stack([y, (X[:, 3] > 0.5) * 3], axis=1)
    forest = cls(9, max_features=3, random_state=0).fit(X[:400], Y[:400])
    assert forest._packed_forest(X) is not None
    proba = forest.predict_proba(X)
    expected = _per_tree_proba(forest, X)
    for p, e in zip(proba if n_outputs > 1 else [proba], expected):
        assert np.array_equal(p, e)
    assert np.array_equal(forest.apply(X), np.stack([e.apply(X) for e in forest.estimators_], 1))


@pytest.mark.parametrize("cls", [fasttree.RandomForestRegressor, fasttree.ExtraTreesRegressor])
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_regressors_predict_as_their_trees(cls, n_outputs):
    X, y = _data()
    Y = X[:, 0] * 3 + y if n_outputs == 1 else np.stack([X[:, 0] + y, X[:, 3]], axis=1)
    forest = cls(8, max_features=0.5, random_state=0).fit(X[:400], Y[:400])
    expected = sum(e.predict(X) for e in forest.estimators_) / len(forest.estimators_)
    assert np.array_equal(forest.predict(X), expected)


def test_trees_that_are_one_leaf():
    X, _ = _data(n=200)
    y = np.zeros(200)
    y[0] = 1.0  # a bootstrap sample without row 0 (about one in three): a tree of one leaf
    forest = fasttree.RandomForestRegressor(20, max_depth=2, random_state=0).fit(X, y)
    assert min(e.tree_.node_count for e in forest.estimators_) == 1
    assert max(e.tree_.node_count for e in forest.estimators_) > 1
    expected = sum(e.predict(X) for e in forest.estimators_) / 20
    assert np.array_equal(forest.predict(X), expected)
    assert np.array_equal(forest.apply(X), np.stack([e.apply(X) for e in forest.estimators_], 1))


def test_categorical_splits_and_sparse_input_walk_tree_by_tree():
    X, y = _data(missing=False)
    X[:, 4] = np.abs(np.round(X[:, 4] * 3))
    forest = fasttree.RandomForestClassifier(6, max_features=None, categorical_features=[4],
                                             random_state=0).fit(X, y)
    assert not packs([e.tree_ for e in forest.estimators_])
    assert forest._packed_forest(X) is None
    assert np.array_equal(forest.predict_proba(X), _per_tree_proba(forest, X)[0])
    scipy_sparse = pytest.importorskip("scipy.sparse")
    numeric = fasttree.RandomForestClassifier(5, random_state=0).fit(X, y)
    X_csr = scipy_sparse.csr_matrix(X)
    assert numeric._packed_forest(X_csr) is None
    assert np.array_equal(numeric.predict_proba(X_csr), numeric.predict_proba(X))


def test_packed_trees_follow_estimators_and_are_not_stored_in_the_forest():
    X, y = _data()
    forest = fasttree.RandomForestClassifier(4, warm_start=True, random_state=0).fit(X, y)
    four = forest.predict_proba(X)
    forest.set_params(n_estimators=8).fit(X, y)
    assert np.array_equal(forest.predict_proba(X), _per_tree_proba(forest, X)[0])
    forest.estimators_ = forest.estimators_[:4]
    assert np.array_equal(forest.predict_proba(X), four)
    state = dict(vars(forest))
    forest.predict(X)
    assert vars(forest).keys() == state.keys()  # predicting leaves the estimator as it was
    assert packed_forest.PackedForest not in {type(v) for v in vars(forest).values()}
    assert len(pickle.dumps(forest)) < len(pickle.dumps(forest.estimators_)) + 10_000


def test_thread_count_does_not_change_predictions(monkeypatch):
    X, y = _data(n=3000)
    forest = fasttree.RandomForestClassifier(6, random_state=0, n_jobs=1).fit(X, y)
    monkeypatch.setattr(packed_forest, "MIN_ROWS_PER_BLOCK", 16)
    monkeypatch.setattr(fasttree._base, "SMALL_PREDICTION_ROWS", 0)
    one = forest.predict_proba(X)
    forest.set_params(n_jobs=2)
    assert np.array_equal(forest.predict_proba(X), one)


# -- tampered arrays ------------------------------------------------------------------------------
def _packed_arrays():
    X, y = _data(n=300)
    forest = fasttree.RandomForestClassifier(3, max_depth=4, random_state=0).fit(X, y)
    p = PackedForest.from_trees([e.tree_ for e in forest.estimators_], X.shape[1])
    return [p.tree_node_start.copy(), p.tree_leaf_start.copy(), p.nodes.copy(),
            p.leaf_value.copy()]


def _set(index, row, column, value):
    def tamper(arrays):
        arrays[index][row, column] = value
    return tamper


@pytest.mark.parametrize("tamper, message", [
    (_set(2, 0, 0, 6), "feature"),
    (_set(2, 0, 0, -1), "feature"),
    (_set(2, 1, 1, np.float32(np.nan).view(np.int32)), "NaN"),
    (_set(2, 1, 2, 0), "not after its parent"),
    (_set(2, 0, 2, 10_000), "out of its tree"),
    (_set(2, 0, 3, ~10_000), "out of its tree"),
    (lambda a: a[2].__setitem__((0, 3), a[2][0, 2]), "child of none or of several"),
    (lambda a: a.__setitem__(1, a[1] + np.arange(a[1].shape[0])), "tree starts|one more leaf"),
    (lambda a: a.__setitem__(2, a[2].astype(np.int64)), "nodes must be"),
    (lambda a: a.__setitem__(3, np.asfortranarray(np.vstack([a[3], a[3]]).T)), "leaf_value"),
])
def test_check_packed_forest_refuses_tampered_arrays(tamper, message):
    arrays = _packed_arrays()
    check_packed_forest(6, *arrays)
    tamper(arrays)
    with pytest.raises(ValueError, match=message):
        check_packed_forest(6, *arrays)
