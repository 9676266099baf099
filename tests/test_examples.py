"""The gallery's random forest built from the public kernels
(``examples/plot_random_forest_kernels.py``) grows correct trees and is as accurate as
scikit-learn's forest."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import fasttree
from gallery import example_functions


@pytest.fixture(scope="module")
def forest():
    return example_functions("plot_random_forest_kernels")


def test_one_tree_of_all_features_is_the_estimators_weighted_tree(forest):
    """With every feature searched at every node, a tree of the forest is, node for node, the
    tree that fasttree's estimator (its own grower) grows with the bootstrap counts as sample
    weights."""
    X, y = make_classification(n_samples=400, n_features=6, n_informative=4, n_classes=3,
                               random_state=1)
    X_test = np.random.default_rng(2).normal(size=(300, 6)) * 2
    (tree,) = forest["fit_forest"](X, y, n_estimators=1, max_features=6, random_state=7)
    # the example draws its counts first from its generator: the same counts here
    counts = np.random.default_rng(7).multinomial(400, np.full(400, 1 / 400), size=1)[0]
    ref = fasttree.DecisionTreeClassifier().fit(X, y, sample_weight=counts).tree_
    left, right, feature, threshold, _, fractions = tree
    np.testing.assert_array_equal(left, ref.children_left)
    np.testing.assert_array_equal(right, ref.children_right)
    np.testing.assert_array_equal(feature, ref.feature)
    np.testing.assert_array_equal(threshold, ref.threshold)
    np.testing.assert_allclose(fractions, ref.value[:, 0, :])
    np.testing.assert_array_equal(forest["predict_proba_forest"]([tree], X_test),
                                  ref.predict_value(X_test.astype(np.float32)))
    # every leaf of a fully grown tree on distinct rows is pure
    leaves = left == -1
    assert ((fractions[leaves] == 0) | (fractions[leaves] == 1)).all()


def test_invariants_of_the_forest(forest):
    X, y = make_classification(n_samples=300, n_features=9, n_informative=5, random_state=3)
    trees = forest["fit_forest"](X, y, n_estimators=5, random_state=0)
    assert len(trees) == 5
    for left, right, feature, threshold, missing_branch, fractions in trees:
        internal = left >= 0
        assert (right[internal] == left[internal] + 1).all()
        assert (left[internal] > np.flatnonzero(internal)).all()  # parents first
        assert (feature[internal] >= 0).all() and (feature[internal] < 9).all()
        assert np.isfinite(threshold[internal]).all()
        assert np.isin(missing_branch, (0, 1)).all()
        np.testing.assert_allclose(fractions.sum(axis=1), 1.0)
    proba = forest["predict_proba_forest"](trees, X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # a different random_state grows a different forest (the masks and bootstrap are random)
    other = forest["predict_proba_forest"](
        forest["fit_forest"](X, y, n_estimators=5, random_state=1), X)
    assert not np.allclose(proba, other)


@pytest.mark.parametrize("dataset", ["breast_cancer", "synthetic"])
def test_accuracy_matches_scikit_learns_forest(forest, dataset):
    """Same number of trees, max_features="sqrt" and bootstrap: over five random splits the
    mean test accuracy is within three points of scikit-learn's RandomForestClassifier (single
    splits differ by up to about three points either way)."""
    if dataset == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(n_samples=800, n_features=16, n_informative=8, n_classes=3,
                                   random_state=0)
    ours, theirs = [], []
    for seed in range(5):
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3,
                                                            random_state=seed)
        trees = forest["fit_forest"](X_train, y_train, n_estimators=20, random_state=seed)
        proba = forest["predict_proba_forest"](trees, X_test)
        ours.append(np.mean(proba.argmax(axis=1) == y_test))
        rf = RandomForestClassifier(n_estimators=20, max_features="sqrt", bootstrap=True,
                                    random_state=seed).fit(X_train, y_train)
        theirs.append(rf.score(X_test, y_test))
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.03, (ours, theirs)
