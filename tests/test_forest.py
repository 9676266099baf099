"""Forests: scikit-learn's draws and trees, each tree the tree grown alone on its sample, the
out-of-bag estimates against a direct computation, the batching of trees, the parameters."""

import pickle

import numpy as np
import pytest

import fasttree
import fasttree.forest
from fasttree._dtypes import SPLIT_THRESHOLD
from datasets import exact_weights, make_data, same_partition
from fasttree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

FORESTS = [RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
           ExtraTreesRegressor]  # RandomTreesEmbedding: its own test
TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
               "n_node_samples", "weighted_n_node_samples")


def _task(cls):
    return "classification" if cls._estimator_type == "classifier" else "regression"


def assert_same_arrays(a, b):
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name), err_msg=name)


def _counts(forest, k, n):
    return np.bincount(forest.estimators_samples_[k], minlength=n).astype(np.float64)


# -- scikit-learn's draws and trees ------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"max_samples": 0.6}, {"bootstrap": False},
                                    {"max_depth": 6, "min_samples_leaf": 3}])
def test_regression_forest_grows_sklearns_trees(kwargs):
    """The same seeds, drawn rows and trees as scikit-learn's forest (all features at every
    node; trees compared by how they group their drawn rows, as two features may draw the same
    partition of a small node)."""
    sklearn_ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = make_data(3, n=500, task="regression")
    ours = RandomForestRegressor(n_estimators=4, random_state=7, **kwargs).fit(X, y)
    theirs = sklearn_ensemble.RandomForestRegressor(n_estimators=4, random_state=7,
                                                    **kwargs).fit(X, y)
    assert [e.random_state for e in ours.estimators_] == [e.random_state
                                                          for e in theirs.estimators_]
    for k, (a, b) in enumerate(zip(ours.estimators_, theirs.estimators_)):
        drawn = ours.estimators_samples_[k]
        np.testing.assert_array_equal(drawn, theirs.estimators_samples_[k])
        rows = np.unique(drawn)
        assert a.tree_.node_count == b.tree_.node_count
        assert same_partition(a.apply(X[rows]), b.apply(X[rows]))
        np.testing.assert_allclose(np.sort(a.tree_.impurity), np.sort(b.tree_.impurity),
                                   rtol=1e-7, atol=1e-9)
        np.testing.assert_array_equal(np.sort(a.tree_.weighted_n_node_samples),
                                      np.sort(b.tree_.weighted_n_node_samples))


def test_shallow_classification_forest_grows_sklearns_trees():
    """Large shallow nodes, where two different partitions do not tie on integer counts."""
    sklearn_ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = make_data(5, n=2000)
    params = dict(n_estimators=4, random_state=3, max_features=None, max_depth=3)
    ours = RandomForestClassifier(**params).fit(X, y)
    theirs = sklearn_ensemble.RandomForestClassifier(**params).fit(X, y)
    for k, (a, b) in enumerate(zip(ours.estimators_, theirs.estimators_)):
        rows = np.unique(ours.estimators_samples_[k])
        assert same_partition(a.apply(X[rows]), b.apply(X[rows]))
        np.testing.assert_allclose(np.sort(a.tree_.value.ravel()),
                                   np.sort(b.tree_.value.ravel()), rtol=1e-12)


def test_weighted_bootstrap_draws_like_sklearn():
    """With sample weights (times class weights) a row's chance of being drawn is proportional
    to its weight, and the trees weigh the counts only: scikit-learn's rows and leaf weights."""
    sklearn_ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = make_data(6, n=400)
    w = exact_weights(1, 400)
    w[:40] = 0.0
    params = dict(n_estimators=3, random_state=2, class_weight="balanced", max_depth=2)
    ours = RandomForestClassifier(**params).fit(X, y, sample_weight=w)
    theirs = sklearn_ensemble.RandomForestClassifier(**params).fit(X, y, sample_weight=w)
    for a, b, drawn, drawn_sk in zip(ours.estimators_, theirs.estimators_,
                                     ours.estimators_samples_, theirs.estimators_samples_):
        np.testing.assert_array_equal(drawn, drawn_sk)
        assert not np.isin(drawn, np.arange(40)).any()
        assert a.tree_.weighted_n_node_samples[0] == b.tree_.weighted_n_node_samples[0] == 400


# -- each tree is the tree grown alone -----------------------------------------------------------
@pytest.mark.parametrize("cls, tree_cls, kwargs", [
    (RandomForestClassifier, DecisionTreeClassifier, {"criterion": "entropy"}),
    (RandomForestClassifier, DecisionTreeClassifier,
     {"class_weight": "balanced_subsample", "min_weight_fraction_leaf": 0.01}),
    (RandomForestClassifier, DecisionTreeClassifier, {"max_samples": 150, "max_leaf_nodes": 9}),
    (ExtraTreesClassifier, ExtraTreeClassifier, {"bootstrap": True}),
    (RandomForestRegressor, DecisionTreeRegressor, {"max_features": 0.5}),
    (ExtraTreesRegressor, ExtraTreeRegressor, {"min_samples_leaf": 4}),
])
def test_each_tree_is_the_tree_grown_alone_on_its_counts(cls, tree_cls, kwargs):
    """Tree ``k`` is the tree of seed ``estimators_[k].random_state`` fitted on every row with
    the bootstrap counts (times "balanced_subsample"'s class weights) as sample weights: every
    array equal, though the forest grew its trees depth first (fasttree.depth_first) or
    together, where the tree alone grows level by level.  An extra trees' regression tree
    adds its rows' sums in another order: its values and impurities equal to rounding."""
    X, y = make_data(11, n=300, task=_task(cls))
    forest = cls(n_estimators=5, random_state=4, **kwargs).fit(X, y)
    tree_params = {k: v for k, v in kwargs.items()
                   if k not in ("bootstrap", "max_samples", "class_weight")}
    tree_params.setdefault("max_features", forest.max_features)
    for k, estimator in enumerate(forest.estimators_):
        weight = _counts(forest, k, X.shape[0])
        if kwargs.get("class_weight") == "balanced_subsample":
            drawn = forest.estimators_samples_[k]
            n_drawn = np.bincount(y[drawn], minlength=3)
            per_class = np.where(n_drawn > 0, drawn.size / (np.count_nonzero(n_drawn)
                                                             * np.maximum(n_drawn, 1)), 0.0)
            weight = weight * per_class[y]
        alone = tree_cls(random_state=estimator.random_state, **tree_params).fit(
            X, y, sample_weight=weight)
        if cls is ExtraTreesRegressor:
            for name in ("value", "impurity"):
                np.testing.assert_allclose(getattr(estimator.tree_, name),
                                           getattr(alone.tree_, name), rtol=1e-12, atol=1e-12)
                setattr(alone.tree_, name, getattr(estimator.tree_, name))
        assert_same_arrays(estimator, alone)


def test_trees_grown_in_several_batches_equal_trees_grown_together(monkeypatch):
    """The layout budget decides how many trees grow together, never what they are."""
    X, y = make_data(12, n=400)
    X[:, 1] = np.where(np.arange(400) == 7, np.nan, X[:, 1])  # one row: some trees draw it
    together = RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y)
    monkeypatch.setattr(fasttree.forest, "LAYOUT_BUDGET", 1)  # one tree at a time
    alone = RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y)
    for a, b in zip(together.estimators_, alone.estimators_):
        assert_same_arrays(a, b)
        np.testing.assert_array_equal(a.missing_in_fit_, np.isnan(X).any(axis=0))
        np.testing.assert_array_equal(b.missing_in_fit_, np.isnan(X).any(axis=0))
    # the training data's features with missing values, however the trees were batched, and
    # whether or not a tree drew the rows that have them
    np.testing.assert_array_equal(alone.missing_in_fit_, np.isnan(X).any(axis=0))
    np.testing.assert_array_equal(together.missing_in_fit_, np.isnan(X).any(axis=0))
    few = RandomForestClassifier(n_estimators=3, max_samples=4, random_state=0).fit(X, y)
    assert not any(7 in rows for rows in few.estimators_samples_)
    np.testing.assert_array_equal(few.missing_in_fit_, np.isnan(X).any(axis=0))


def test_warm_start_adds_the_trees_a_cold_fit_grows():
    X, y = make_data(13, n=300)
    cold = RandomForestClassifier(n_estimators=6, random_state=5).fit(X, y)
    warm = RandomForestClassifier(n_estimators=2, random_state=5, warm_start=True).fit(X, y)
    first = warm.estimators_[0]
    warm.set_params(n_estimators=6).fit(X, y)
    assert warm.estimators_[0] is first and len(warm.estimators_) == 6
    for a, b in zip(cold.estimators_, warm.estimators_):
        assert_same_arrays(a, b)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        warm.fit(X, y)
    with pytest.raises(ValueError, match="must be larger or equal"):
        warm.set_params(n_estimators=3).fit(X, y)


# -- out-of-bag estimates ------------------------------------------------------------------------
def test_oob_decision_function_is_the_mean_of_out_of_bag_trees():
    X, y = make_data(14, n=300)
    forest = RandomForestClassifier(n_estimators=15, random_state=1, oob_score=True).fit(X, y)
    total, n_trees = np.zeros((300, 3)), np.zeros(300)
    for estimator, drawn in zip(forest.estimators_, forest.estimators_samples_):
        out = np.setdiff1d(np.arange(300), drawn)
        total[out] += estimator.predict_proba(X[out])
        n_trees[out] += 1
    assert n_trees.min() > 0
    expected = total / n_trees[:, None]
    np.testing.assert_allclose(forest.oob_decision_function_, expected, rtol=1e-12)
    assert forest.oob_score_ == np.mean(forest.classes_[expected.argmax(axis=1)] == y)


def test_oob_prediction_and_callable_score_of_a_regressor():
    X, y = make_data(15, n=300, task="regression")
    seen = []

    def score(y_true, y_pred):
        seen.append((y_true, y_pred))
        return -1.5

    forest = RandomForestRegressor(n_estimators=12, random_state=2, oob_score=score).fit(X, y)
    total, n_trees = np.zeros(300), np.zeros(300)
    for estimator, drawn in zip(forest.estimators_, forest.estimators_samples_):
        out = np.setdiff1d(np.arange(300), drawn)
        total[out] += estimator.predict(X[out])
        n_trees[out] += 1
    np.testing.assert_allclose(forest.oob_prediction_, total / n_trees, rtol=1e-12)
    assert forest.oob_score_ == -1.5
    np.testing.assert_array_equal(seen[0][1], forest.oob_prediction_)
    default = RandomForestRegressor(n_estimators=12, random_state=2, oob_score=True).fit(X, y)
    residual = np.sum((y - default.oob_prediction_) ** 2)
    assert default.oob_score_ == pytest.approx(1 - residual / np.sum((y - y.mean()) ** 2))


def test_oob_of_too_few_trees_warns():
    X, y = make_data(16, n=200)
    with pytest.warns(UserWarning, match="do not have OOB scores"):
        RandomForestClassifier(n_estimators=1, oob_score=True, random_state=0).fit(X, y)


# -- predictions and attributes ------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_predictions_are_the_mean_of_the_trees(cls):
    """The trees' own predictions (missing values too, seen in fit or not), summed in turn, to
    the last bit."""
    X, y = make_data(17, n=300, task=_task(cls))
    X[::5, 1] = np.nan
    forest = cls(n_estimators=7, random_state=3, max_depth=5).fit(X, y)
    X[::3, 2] = np.nan  # unseen missing values too
    if cls._estimator_type == "classifier":
        total = forest.estimators_[0].predict_proba(X)
        for e in forest.estimators_[1:]:
            total = total + e.predict_proba(X)
        np.testing.assert_array_equal(forest.predict_proba(X), total / 7)
        np.testing.assert_array_equal(forest.predict(X), forest.classes_[total.argmax(axis=1)])
        assert forest.score(X, y) == np.mean(forest.predict(X) == y)
    else:
        total = forest.estimators_[0].predict(X)
        for e in forest.estimators_[1:]:
            total = total + e.predict(X)
        np.testing.assert_array_equal(forest.predict(X), total / 7)
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(restored.predict(X), forest.predict(X))
    leaves = forest.apply(X)
    assert leaves.shape == (300, 7)
    np.testing.assert_array_equal(leaves[:, 2], forest.estimators_[2].apply(X))
    indicator, n_nodes_ptr = forest.decision_path(X)
    assert n_nodes_ptr[-1] == indicator.shape[1] == sum(e.tree_.node_count
                                                        for e in forest.estimators_)
    importances = np.mean([e.feature_importances_ for e in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.feature_importances_, importances / importances.sum())


def test_forests_with_categorical_splits():
    pd = pytest.importorskip("pandas")
    X, y = make_data(23, n=300)
    frame = pd.DataFrame({"a": X[:, 0], "c": pd.Categorical((X[:, 1] * 2).astype(int) % 5)})
    forest = RandomForestClassifier(n_estimators=4, random_state=0, max_features=None).fit(
        frame, y)
    assert (forest.estimators_[0].tree_.split_kind != SPLIT_THRESHOLD).any()  # subset splits
    proba = np.mean([e.predict_proba(frame) for e in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(frame), proba, rtol=1e-12)


def test_several_outputs():
    X, y = make_data(18, n=300)
    Y = np.column_stack([y, (X[:, 1] > 0).astype(int)])
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, Y)
    assert forest.n_outputs_ == 2 and len(forest.classes_) == 2
    proba = forest.predict_proba(X)
    np.testing.assert_allclose(proba[1], np.mean([e.predict_proba(X)[1]
                                                  for e in forest.estimators_], axis=0))
    assert forest.predict(X).shape == (300, 2)
    with pytest.raises(ValueError, match="multiclass-multioutput"):
        RandomForestClassifier(n_estimators=5, oob_score=True).fit(X, Y)
    regression = RandomForestRegressor(n_estimators=20, random_state=0, oob_score=True).fit(
        X, np.column_stack([X[:, 0], X[:, 1]]))
    assert regression.oob_prediction_.shape == (300, 2)


def test_categorical_and_missing_features_from_a_table():
    pd = pytest.importorskip("pandas")
    X, y = make_data(19, n=300)
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    frame["c"] = pd.Categorical(np.where(X[:, 2] > 0, "high", "low"))
    frame.loc[::7, "a"] = np.nan
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(frame, y)
    assert forest.is_categorical_.tolist() == [False, False, True]
    assert list(forest.feature_names_in_) == ["a", "b", "c"]
    assert forest.score(frame, y) > 0.8


# -- parameters ----------------------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"n_estimators": 0}, "n_estimators"),
    ({"bootstrap": "yes"}, "bootstrap"),
    ({"max_samples": 0.0}, "max_samples"),
    ({"bootstrap": False, "max_samples": 10}, "max_sample"),
    ({"bootstrap": False, "oob_score": True}, "Out of bag"),
    ({"class_weight": "balanced_everything"}, "Valid presets"),
    ({"max_depth": 0}, "max_depth"),
    ({"missing": "fractional"}, "fractional"),
])
def test_bad_parameters_are_refused(params, message):
    X, y = make_data(20, n=100)
    with pytest.raises(ValueError, match=message):
        RandomForestClassifier(**{"n_estimators": 2, **params}).fit(X, y)


def test_sparse_input_grows_the_forest_of_its_dense_array():
    sp = pytest.importorskip("scipy.sparse")
    X, y = make_data(21, n=200, task="regression")
    X[np.abs(X) < 2.0] = 0.0
    dense = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    sparse = RandomForestRegressor(n_estimators=3, random_state=0).fit(sp.csc_matrix(X), y)
    for a, b in zip(dense.estimators_, sparse.estimators_):
        assert_same_arrays(a, b)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


@pytest.mark.filterwarnings("ignore")
def test_sklearn_estimator_checks():
    """scikit-learn's conformance suite.  Expected to fail, for the random forests only:
    weights equivalent to repeated rows (dense and sparse), which a bootstrap's draws cannot be;
    scikit-learn's own fail those checks the same way (run here too).  scikit-learn's embedding
    fails them as well, fasttree's passes: its trees draw each node's features and thresholds
    from the node (fasttree.kernels.draws), so rows repeated instead of weighted, which only
    change the random target, leave its splits as they are."""
    from sklearn import ensemble
    from sklearn.utils import estimator_checks

    weight_checks = ("check_sample_weight_equivalence_on_dense_data",
                     "check_sample_weight_equivalence_on_sparse_data")
    for cls in FORESTS + [fasttree.RandomTreesEmbedding]:
        theirs = getattr(ensemble, cls.__name__)(n_estimators=5)
        embedding = cls is fasttree.RandomTreesEmbedding
        for check in weight_checks if theirs.bootstrap or embedding else ():
            with pytest.raises(AssertionError, match="not equivalent"):
                getattr(estimator_checks, check)(cls.__name__, theirs)
        expected = {check: "random draws, not repeated rows" for check in weight_checks
                    if theirs.bootstrap and not embedding}
        results = estimator_checks.check_estimator(cls(n_estimators=5), on_fail=None,
                                                   expected_failed_checks=expected)
        failed = [r["check_name"] for r in results if r["status"] == "failed"]
        assert failed == [], failed
        assert sum(r["status"] == "passed" for r in results) >= 50
        xfailed = [r["check_name"] for r in results if r["status"] == "xfail"]
        assert xfailed == list(expected)


def test_random_trees_embedding():
    """One active column per tree, in each tree's columns its leaves in id order; the same
    trees' seeds as scikit-learn's embedding; dense and sparse output alike."""
    sklearn_ensemble = pytest.importorskip("sklearn.ensemble")
    X, _ = make_data(24, n=200)
    embedding = fasttree.RandomTreesEmbedding(n_estimators=4, max_depth=3, random_state=1)
    code = embedding.fit_transform(X)
    np.testing.assert_array_equal(embedding.transform(X).toarray(), code.toarray())
    np.testing.assert_array_equal(np.asarray(code.sum(axis=1)).ravel(), 4)
    leaves = embedding.apply(X)
    names = embedding.get_feature_names_out()
    assert code.shape[1] == names.size == sum(np.unique(leaves[:, t]).size for t in range(4))
    for i in (0, 57, 199):  # each active column names the row's leaf in its tree
        assert sorted(names[code[i].indices]) == sorted(
            f"randomtreesembedding_{t}_{leaf}" for t, leaf in enumerate(leaves[i]))
    assert all(e.max_features == 1 and e.splitter == "random" for e in embedding.estimators_)
    theirs = sklearn_ensemble.RandomTreesEmbedding(n_estimators=4, max_depth=3,
                                                   random_state=1).fit(X)
    assert [e.random_state for e in embedding.estimators_] == [e.random_state
                                                               for e in theirs.estimators_]
    dense = fasttree.RandomTreesEmbedding(n_estimators=4, max_depth=3, random_state=1,
                                          sparse_output=False).fit(X)
    np.testing.assert_array_equal(dense.transform(X), code.toarray())


def test_import_is_free_of_sklearn():
    """The forests are in ``import fasttree``, which needs only numpy and numba."""
    assert fasttree.RandomForestClassifier is RandomForestClassifier
    assert "sklearn" not in fasttree.forest.__dict__


@pytest.mark.parametrize("cls", FORESTS)
def test_to_sklearn_gives_the_same_fitted_forest(cls):
    pytest.importorskip("sklearn")
    X, y = make_data(22, n=300, task=_task(cls))
    forest = cls(n_estimators=12, random_state=2, bootstrap=True, oob_score=True).fit(X[:200],
                                                                                   y[:200])
    converted = forest.to_sklearn()
    assert type(converted).__module__.startswith("sklearn.ensemble")
    X_new = X[200:]
    np.testing.assert_array_equal(converted.predict(X_new), forest.predict(X_new))
    np.testing.assert_array_equal(converted.apply(X_new), forest.apply(X_new))
    np.testing.assert_allclose(converted.feature_importances_, forest.feature_importances_)
    if cls._estimator_type == "classifier":
        np.testing.assert_allclose(converted.predict_proba(X_new), forest.predict_proba(X_new),
                                   rtol=1e-12)
    for a, b in zip(converted.estimators_samples_, forest.estimators_samples_):
        np.testing.assert_array_equal(a, b)
    assert converted.oob_score_ == forest.oob_score_
