"""Trees equal to scikit-learn's where the semantics are the same and no two splits tie.

Data are drawn fresh from seeds: values are rounded to 1e-3 so that scikit-learn's 1e-7 feature
tolerance never merges two distinct values, and classification fits use random continuous sample
weights (or large, shallow nodes) so that two *different* partitions never have equal gain.  The
weights are multiples of 2**-20, so weighted counts are exact in float64: with inexact sums
scikit-learn computes an impurity of ~4e-16 for some pure nodes and splits them, where fasttree
(whose pure nodes have impurity exactly 0) makes a leaf.  Two
features can still induce the *same* partition of a small node, in which case the libraries may
name different features; the trees are then compared by how they partition the training rows,
which is the same either way.
"""

import numpy as np
import pytest

sklearn_tree = pytest.importorskip("sklearn.tree")

import fasttree  # noqa: E402
from datasets import exact_weights, make_data, same_partition  # noqa: E402

STOPPING_RULES = [
    {},
    {"max_depth": 4},
    {"min_samples_split": 17},
    {"min_samples_leaf": 7},
    {"min_impurity_decrease": 0.002},
    {"max_leaf_nodes": 13},
    {"max_depth": 6, "max_leaf_nodes": 20, "min_samples_leaf": 3},
    {"min_weight_fraction_leaf": 0.02},
]


def assert_same_tree(ours, theirs, X):
    assert ours.tree_.node_count == theirs.tree_.node_count
    assert ours.get_depth() == theirs.get_depth()
    assert ours.get_n_leaves() == theirs.get_n_leaves()
    assert same_partition(ours.apply(X), theirs.apply(X))
    np.testing.assert_allclose(np.sort(ours.tree_.impurity), np.sort(theirs.tree_.impurity),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.sort(ours.tree_.weighted_n_node_samples),
                               np.sort(theirs.tree_.weighted_n_node_samples), rtol=1e-10)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("rule", STOPPING_RULES, ids=lambda r: ",".join(r) or "full")
def test_classifier_matches_sklearn_weighted(criterion, rule):
    for seed in (1, 2):
        X, y = make_data(seed)
        w = exact_weights(seed + 100, X.shape[0])
        ours = fasttree.DecisionTreeClassifier(criterion=criterion, **rule).fit(X, y, w)
        theirs = sklearn_tree.DecisionTreeClassifier(
            criterion=criterion, random_state=0, **rule).fit(X, y, w)
        assert_same_tree(ours, theirs, X)
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "log_loss"])
@pytest.mark.parametrize("rule", [{"max_depth": 5}, {"max_depth": 4, "min_samples_leaf": 20},
                                  {"max_leaf_nodes": 10}], ids=str)
def test_shallow_classifier_predicts_like_sklearn_on_unseen_data(criterion, rule):
    # large nodes: no ties, so the same features and thresholds are chosen
    X, y = make_data(3, n=4000)
    X_new, _ = make_data(4, n=2000)
    ours = fasttree.DecisionTreeClassifier(criterion=criterion, **rule).fit(X, y)
    theirs = sklearn_tree.DecisionTreeClassifier(criterion=criterion, random_state=0,
                                                 **rule).fit(X, y)
    assert_same_tree(ours, theirs, X)
    np.testing.assert_array_equal(ours.predict(X_new), theirs.predict(X_new))
    np.testing.assert_allclose(ours.predict_proba(X_new), theirs.predict_proba(X_new), atol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-10)


@pytest.mark.parametrize("rule", STOPPING_RULES, ids=lambda r: ",".join(r) or "full")
@pytest.mark.parametrize("weighted", [False, True])
def test_regressor_matches_sklearn(rule, weighted):
    for seed in (5, 6):
        X, y = make_data(seed, task="regression")
        w = exact_weights(seed, X.shape[0]) if weighted else None
        if "min_impurity_decrease" in rule:
            rule = {"min_impurity_decrease": 0.01}
        ours = fasttree.DecisionTreeRegressor(**rule).fit(X, y, w)
        theirs = sklearn_tree.DecisionTreeRegressor(random_state=0, **rule).fit(X, y, w)
        assert_same_tree(ours, theirs, X)
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9)


@pytest.mark.parametrize("rule", [{"max_depth": 6, "min_samples_leaf": 20},
                                  {"max_leaf_nodes": 25, "min_samples_leaf": 5}],
                         ids=str)
def test_regressor_predicts_like_sklearn_on_unseen_data(rule):
    X, y = make_data(7, n=3000, task="regression")
    X_new, _ = make_data(8, n=1000, task="regression")
    ours = fasttree.DecisionTreeRegressor(**rule).fit(X, y)
    theirs = sklearn_tree.DecisionTreeRegressor(random_state=0, **rule).fit(X, y)
    assert_same_tree(ours, theirs, X)
    np.testing.assert_allclose(ours.predict(X_new), theirs.predict(X_new), rtol=1e-9)
    np.testing.assert_allclose(ours.tree_.threshold[ours.tree_.feature >= 0].sum(),
                               theirs.tree_.threshold[theirs.tree_.feature >= 0].sum())


@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0, 1: 1.0, 2: 0.5}], ids=str)
def test_class_weight_matches_sklearn(class_weight):
    X, y = make_data(9, n=3000)
    ours = fasttree.DecisionTreeClassifier(max_depth=5, class_weight=class_weight).fit(X, y)
    theirs = sklearn_tree.DecisionTreeClassifier(max_depth=5, class_weight=class_weight,
                                                 random_state=0).fit(X, y)
    assert_same_tree(ours, theirs, X)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("rule", [{"max_depth": 4}, {"max_leaf_nodes": 20},
                                  {"min_samples_leaf": 10}], ids=str)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_absolute_error_of_several_outputs_matches_sklearn(rule, weighted, sparse):
    rng = np.random.default_rng(11)
    X = np.round(rng.normal(size=(400, 4)), 3)
    Y = np.column_stack([3 * X[:, 0] + rng.normal(size=400),
                         rng.exponential(size=400) + X[:, 1]])
    w = exact_weights(12, 400) if weighted else None
    X_fit = X
    if sparse:
        X_fit = pytest.importorskip("scipy.sparse").csc_matrix(np.where(X > 0.5, X, 0.0))
        X = X_fit.toarray()
    ours = fasttree.DecisionTreeRegressor(criterion="absolute_error", **rule).fit(X_fit, Y, w)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion="absolute_error", random_state=0,
                                                **rule).fit(X_fit, Y, w)
    assert_same_tree(ours, theirs, X)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
