"""Categorical and missing-value splits at the estimator level: textbook trees, scikit-learn's
missing-value semantics, C4.5's fractional rows, real tables straight from pandas, and every
reader (pruners, export, apply, decision_path) on trees with every kind of node."""

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
sklearn_tree = pytest.importorskip("sklearn.tree")

from datasets import (  # noqa: E402
    SHARED_DATA,
    exact_weights,
    load_shared,
    make_data,
    same_partition,
)
from fasttree import (  # noqa: E402
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    export_text,
    pruning,
)
from fasttree._dtypes import SPLIT_MULTIWAY, SPLIT_SUBSET, SPLIT_THRESHOLD  # noqa: E402

needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(),
                                  reason="shared/data is not beside the checkout")


def children(tree, node):
    return list(range(tree.children_left[node], tree.children_right[node] + 1))


def branch_for(est, node, feature_name, category):
    """Child of a categorical node that a category goes to."""
    tree = est.tree_
    f = list(est.feature_names_in_).index(feature_name)
    code = list(est.categories_[f]).index(category)
    branch, reached = tree.category_map(node)
    assert reached[code]
    return tree.children_left[node] + branch[code]


def leaf_class(est, node):
    assert est.tree_.children_left[node] == -1
    return est.classes_[np.argmax(est.tree_.value[node, 0])]


# -- textbook trees --------------------------------------------------------------------------
@needs_shared
def test_id3_learns_quinlans_weather_tree():
    frame = pd.read_csv(SHARED_DATA / "weather.csv")
    X, y = frame.drop(columns="play"), frame["play"]
    est = ID3Classifier().fit(X, y)
    tree = est.tree_
    names = list(est.feature_names_in_)
    assert names[tree.feature[0]] == "outlook" and tree.split_kind[0] == SPLIT_MULTIWAY
    assert len(children(tree, 0)) == 3
    assert leaf_class(est, branch_for(est, 0, "outlook", "overcast")) == "yes"
    sunny = branch_for(est, 0, "outlook", "sunny")
    assert names[tree.feature[sunny]] == "humidity"
    assert leaf_class(est, branch_for(est, sunny, "humidity", "high")) == "no"
    assert leaf_class(est, branch_for(est, sunny, "humidity", "normal")) == "yes"
    rainy = branch_for(est, 0, "outlook", "rainy")
    assert names[tree.feature[rainy]] == "windy"
    assert leaf_class(est, branch_for(est, rainy, "windy", False)) == "yes"
    assert leaf_class(est, branch_for(est, rainy, "windy", True)) == "no"
    assert est.get_n_leaves() == 5
    text = export_text(est)
    assert "|--- outlook = overcast" in text and "|   |--- humidity = high" in text


@needs_shared
def test_c45_on_weather_numeric():
    frame = pd.read_csv(SHARED_DATA / "weather_numeric.csv")
    X, y = frame.drop(columns="play"), frame["play"]
    # unpruned (C4.5 itself prunes this 14-row tree to a single leaf at CF 0.25)
    est = C45Classifier(pruning_confidence=0.99).fit(X, y)
    tree = est.tree_
    names = list(est.feature_names_in_)
    assert names[tree.feature[0]] == "outlook"
    sunny = branch_for(est, 0, "outlook", "sunny")
    assert names[tree.feature[sunny]] == "humidity"
    assert tree.split_kind[sunny] == SPLIT_THRESHOLD and 75 < tree.threshold[sunny] < 80
    rainy = branch_for(est, 0, "outlook", "rainy")
    assert names[tree.feature[rainy]] == "windy"
    assert "humidity <= 77.50" in export_text(est)


def test_gain_ratio_at_the_weather_root_matches_the_worked_example():
    # ALGORITHMS.md: gain ratio of outlook at the root of weather_numeric is 0.156
    from fasttree._dtypes import CRITERION_ENTROPY
    from fasttree.kernels import (
        find_best_splits_categorical,
        gather_targets,
        new_split_record,
        presort_features,
    )

    outlook = np.array([2, 2, 0, 1, 1, 1, 0, 2, 2, 1, 2, 0, 0, 1], np.float32)[:, None]
    play = np.array([0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0], np.uint8)
    sx, si = presort_features(np.ascontiguousarray(outlook))
    sy = gather_targets(si, play)
    rec = new_split_record(1, 1)
    find_best_splits_categorical(sx, si, sy, np.empty(0), np.array([0]), np.array([14]),
                                 np.array([[5.0, 9.0]]), np.ones((1, 1), np.uint8),
                                 np.array([3]), CRITERION_ENTROPY, SPLIT_MULTIWAY, 1, 0.0, False,
                                 rec)
    assert rec.gain[0, 0] == pytest.approx(0.247, abs=5e-4)
    assert rec.gain[0, 0] / rec.split_info[0, 0] == pytest.approx(0.156, abs=5e-4)


# -- missing values: scikit-learn's learned direction ---------------------------------------
def with_missing(X, seed, fraction=0.1):
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return X


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("rule", [{}, {"max_depth": 3}, {"min_samples_leaf": 5},
                                  {"max_leaf_nodes": 12}], ids=str)
def test_learned_missing_direction_matches_sklearn(task, rule):
    """Same trees as scikit-learn's on NaN-containing data (as in test_parity_sklearn: the
    training partition always; unseen rows only for shallow trees, whose nodes are too large
    for two features to induce the same partition)."""
    for seed in (3, 4):
        X, y = make_data(seed, n=400, task=task)
        X = with_missing(X, seed)
        X_test = with_missing(make_data(seed + 50, n=300, task=task)[0], seed + 50, 0.3)
        if task == "classification":
            w = exact_weights(seed, X.shape[0])
            ours = DecisionTreeClassifier(criterion="entropy", **rule).fit(X, y, w)
            theirs = sklearn_tree.DecisionTreeClassifier(criterion="entropy", random_state=0,
                                                         **rule).fit(X, y, w)
            predict = "predict_proba"
        else:
            ours = DecisionTreeRegressor(**rule).fit(X, y)
            theirs = sklearn_tree.DecisionTreeRegressor(random_state=0, **rule).fit(X, y)
            predict = "predict"
        assert ours.tree_.node_count == theirs.tree_.node_count
        assert same_partition(ours.apply(X), theirs.apply(X))
        np.testing.assert_allclose(np.sort(ours.tree_.impurity), np.sort(theirs.tree_.impurity),
                                   rtol=1e-7, atol=1e-9)
        if rule == {"max_depth": 3}:
            # node ids differ (level order vs depth first): compare the splits as sets, of the
            # nodes large enough for the split to be unique (any split of 2 rows ties)
            big = [(t.children_left != -1) & (t.n_node_samples >= 10)
                   for t in (ours.tree_, theirs.tree_)]
            splits = [sorted(zip(t.feature[m].tolist(), t.threshold[m].tolist(),
                                 t.missing_go_to_left[m].tolist()))
                      for t, m in zip((ours.tree_, theirs.tree_), big)]
            assert splits[0] == splits[1]
            np.testing.assert_allclose(getattr(ours, predict)(X_test),
                                       getattr(theirs, predict)(X_test))


def test_missing_rows_without_missing_in_training_go_to_the_larger_child():
    X, y = make_data(7, n=300)
    est = DecisionTreeClassifier(max_depth=1).fit(X, y)
    tree = est.tree_
    larger = 1 if tree.n_node_samples[2] >= tree.n_node_samples[1] else 0
    X_nan = np.full((1, X.shape[1]), np.nan)
    assert est.apply(X_nan)[0] == tree.children_left[0] + larger


# -- C4.5's fractional rows -------------------------------------------------------------------
def test_fractional_row_gets_the_weighted_mixture_of_its_branches():
    # known rows: x=0 -> class 0 (2 rows), x=1 -> class 1 (3 rows); one class-0 row misses x.
    X = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [np.nan]])
    y = np.array([0, 0, 1, 1, 1, 0])
    est = DecisionTreeClassifier(criterion="entropy", missing="fractional").fit(X, y)
    tree = est.tree_
    left, right = children(tree, 0)
    # the missing row is split 2/5 : 3/5 between the branches (their known weights)
    assert tree.weighted_n_node_samples[left] == pytest.approx(2.4)
    assert tree.weighted_n_node_samples[right] == pytest.approx(3.6)
    np.testing.assert_allclose(tree.value[right, 0], [0.6 / 3.6, 3.0 / 3.6])
    # a row missing x gets 0.4 * [1, 0] + 0.6 * [1/6, 5/6] = [0.5, 0.5]
    np.testing.assert_allclose(est.predict_proba([[np.nan]]), [[0.5, 0.5]])
    np.testing.assert_allclose(est.predict_proba([[0.0], [1.0]]),
                               [[1.0, 0.0], [0.6 / 3.6, 3.0 / 3.6]])


def test_fractional_rows_reach_deeper_splits():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int) * 2 + (X[:, 1] > 0)
    X_missing = with_missing(X, 1, 0.2)
    est = DecisionTreeClassifier(criterion="entropy", missing="fractional",
                                 max_depth=3).fit(X_missing, y)
    # the root's weight is the data's; every level's weights add up to it
    tree = est.tree_
    leaves = tree.children_left == -1
    assert tree.weighted_n_node_samples[leaves].sum() == pytest.approx(400.0)
    proba = est.predict_proba(X_missing)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (est.predict(X) == y).mean() > 0.9


# -- categorical splits -------------------------------------------------------------------------
def categorical_data(seed, n=600):
    rng = np.random.default_rng(seed)
    color = rng.choice(["red", "green", "blue", "cyan", "pink"], n)
    size = rng.normal(size=n).round(2)
    good = np.isin(color, ["red", "cyan"]) ^ (size > 0.8)
    X = pd.DataFrame({"color": pd.Categorical(color), "size": size})
    return X, np.where(good, "yes", "no")


def test_binary_subset_split_finds_the_planted_subset():
    X, y = categorical_data(0)
    est = DecisionTreeClassifier(max_depth=1).fit(X, y)
    tree = est.tree_
    assert tree.split_kind[0] == SPLIT_SUBSET
    branch, _ = tree.category_map(0)
    cats = list(est.categories_[0])
    left = {c for c in cats if branch[cats.index(c)] == 0}
    assert left in ({"red", "cyan"}, {"blue", "green", "pink"})
    assert "color in {" in export_text(est)


def test_categorical_predict_takes_the_fitted_dtypes_and_unknown_categories():
    X, y = categorical_data(1)
    est = DecisionTreeClassifier(max_depth=3).fit(X, y)
    X_new = pd.DataFrame({"color": ["red", "purple", None], "size": [0.0, 0.1, np.nan]})
    proba = est.predict_proba(X_new)
    assert proba.shape == (3, 2)
    # an unseen category goes where the categories absent from the node go: the heaviest branch
    node = 0
    branch, reached = est.tree_.category_map(node)
    assert not reached[-1]
    assert est.apply(X_new)[1] == est.apply(X_new.assign(color=["red", "purple", None]))[1]
    np.testing.assert_array_equal(est.predict(X), est.predict(X.astype({"color": object})))


def test_categorical_features_by_index_name_and_mask_agree():
    X, y = categorical_data(2)
    codes = X.assign(color=X["color"].cat.codes).to_numpy(dtype=float)
    reference = DecisionTreeClassifier(max_depth=4).fit(X, y).predict(X)
    for spec in ([0], np.array([True, False])):
        est = DecisionTreeClassifier(max_depth=4, categorical_features=spec).fit(codes, y)
        np.testing.assert_array_equal(est.predict(codes), reference)
    est = DecisionTreeClassifier(max_depth=4, categorical_features=["color"]).fit(
        X.astype({"color": object}), y)
    np.testing.assert_array_equal(est.predict(X), reference)


def test_multiway_feature_is_not_split_again_below_itself():
    X, y = categorical_data(3)
    est = DecisionTreeClassifier(categorical_split="multiway", criterion="entropy").fit(X, y)
    tree = est.tree_
    parent = tree.parent()
    for node in np.flatnonzero(tree.split_kind == SPLIT_MULTIWAY):
        ancestor = parent[node]
        while ancestor >= 0:
            assert not (tree.split_kind[ancestor] == SPLIT_MULTIWAY
                        and tree.feature[ancestor] == tree.feature[node])
            ancestor = parent[ancestor]


@pytest.mark.parametrize("params", [{"categorical_split": "binary"},
                                    {"categorical_split": "multiway"},
                                    {"categorical_split": "multiway", "missing": "fractional"}],
                         ids=str)
def test_identical_trees_for_any_thread_count(params):
    X, y = categorical_data(4, n=2000)
    X.loc[::7, "size"] = np.nan
    X.loc[::11, "color"] = None
    trees = [DecisionTreeClassifier(n_jobs=n, **params).fit(X, y).tree_ for n in (1, 2)]
    for name in ("children_left", "feature", "threshold", "split_kind", "missing_branch",
                 "category_branch", "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(trees[0], name), getattr(trees[1], name))


# -- every reader on every node kind -------------------------------------------------------------
@pytest.mark.parametrize("params", [{"categorical_split": "binary"},
                                    {"categorical_split": "multiway"},
                                    {"categorical_split": "multiway", "missing": "fractional"}],
                         ids=str)
def test_pruners_export_and_paths_on_every_node_kind(params):
    X, y = categorical_data(5)
    X.loc[::9, "size"] = np.nan
    X.loc[::13, "color"] = None
    est = DecisionTreeClassifier(criterion="entropy", **params).fit(X, y)
    tree = est.tree_
    assert set(np.unique(tree.split_kind[tree.children_left != -1])) >= {SPLIT_THRESHOLD}
    # apply and decision_path agree: the last node of each path is the leaf
    leaves = est.apply(X)
    path = est.decision_path(X)
    last = np.array([path.indices[path.indptr[i + 1] - 1] for i in range(X.shape[0])])
    np.testing.assert_array_equal(last, leaves)
    assert (tree.children_left[leaves] == -1).all()
    for pruned in (pruning.cost_complexity(est, 0.01), pruning.error_based(est),
                   pruning.minimum_error(est), pruning.pessimistic(est),
                   pruning.reduced_error(est, X, y)):
        small = pruned.tree_
        assert small.node_count <= tree.node_count
        # every kept internal node keeps its split, and all its children
        assert np.isin(small.n_children, [0, 2] + list(np.unique(tree.n_children))).all()
        proba = pruned.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        export_text(pruned)
    # importances add up, whatever the kinds of split
    assert est.feature_importances_.sum() == pytest.approx(1.0)


# -- real tables straight from pandas ----------------------------------------------------------
def _sklearn_one_hot(task):
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    encode = make_column_transformer(
        (make_pipeline(SimpleImputer(strategy="most_frequent"),
                       OneHotEncoder(handle_unknown="ignore")),
         make_column_selector(dtype_include="category")),
        (SimpleImputer(strategy="median"), make_column_selector(dtype_exclude="category")))
    tree = (sklearn_tree.DecisionTreeRegressor if task == "regression"
            else sklearn_tree.DecisionTreeClassifier)(random_state=0)
    return make_pipeline(encode, tree)


@needs_shared
@pytest.mark.parametrize("name, task", [("heart_disease", "classification"),
                                        ("titanic", "classification"),
                                        ("zoo", "classification"),
                                        ("imports_85", "regression")])
def test_real_tables_train_from_pandas_and_cross_validate_like_sklearn(name, task):
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold, cross_val_score

    X, y = load_shared(name)
    assert (X.dtypes == "category").any()
    if task == "regression":
        cv = RepeatedKFold(n_splits=10, n_repeats=3, random_state=0)
        ours = DecisionTreeRegressor(missing="fractional")
    else:
        cv = RepeatedStratifiedKFold(n_splits=5 if name == "zoo" else 10, n_repeats=3,
                                     random_state=0)
        ours = DecisionTreeClassifier(missing="fractional")
    score = cross_val_score(ours, X, y, cv=cv).mean()
    reference = cross_val_score(_sklearn_one_hot(task), X, y, cv=cv).mean()
    assert score >= reference - 0.005, (score, reference)


@needs_shared
@pytest.mark.parametrize("name", ["heart_disease", "breast_cancer_wisconsin", "ionosphere",
                                  "titanic", "zoo"])
def test_c45_against_weka_j48(name):
    """Weka's J48 figures come from docs/j48_reference.py (J48 -C 0.25 -M 2, 10-fold CV)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    reference = _j48()[name]
    X, y = load_shared(name)
    accuracy = np.mean([cross_val_score(C45Classifier(), X, y,
                                        cv=StratifiedKFold(10, shuffle=True, random_state=s))
                        .mean() for s in range(5)])
    assert abs(accuracy - reference["accuracy"]) <= 0.02, (accuracy, reference["accuracy"])
    # J48 also counts the empty branches it makes for categories absent from a node (zoo: 4 of
    # its 13 leaves); fasttree makes branches for the categories present only
    n_leaves = C45Classifier().fit(X, y).get_n_leaves()
    assert 0.6 * reference["n_leaves"] <= n_leaves <= 1.4 * reference["n_leaves"], n_leaves


def _j48():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "j48_reference.json"
    return json.loads(path.read_text())
