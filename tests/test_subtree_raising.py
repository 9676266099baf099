"""C4.5's subtree raising (J48's default pruning): a hand-worked tree, the option's boundaries,
and the estimators that use it."""

import numpy as np
import pytest

from fasttree import C45Classifier, DecisionTreeClassifier, pruning
from fasttree.datasets import load_heart_disease
from fasttree.tree import Tree

scipy_special = pytest.importorskip("scipy.special")


def u_cf(errors, n, cf):
    """Independent reference for C4.5's U_CF(E, N), fractional counts too: the p solving
    P(X <= E | N, p) = I_{1-p}(N - E, E + 1) = CF, by scipy's inverse incomplete beta."""
    if errors == 0:
        return 1 - cf ** (1 / n)
    return 1 - scipy_special.betaincinv(n - errors, errors + 1, cf)


def charge(counts, cf=0.25):
    counts = np.asarray(counts, dtype=float)
    return counts.sum() * u_cf(counts.sum() - counts.max(), counts.sum(), cf)


def hand_data():
    """Class = [x1 > 0.5] everywhere; one row (x0 = 1, class 0) misses x1."""
    X = np.array([[0, 0]] * 4 + [[0, 1]] * 4 + [[1, 0]] * 2 + [[1, 1]] * 2 + [[1, np.nan]],
                 dtype=float)
    y = np.array([0] * 4 + [1] * 4 + [0] * 2 + [1] * 2 + [0])
    return X, y


def hand_estimator():
    """A fractional tree given by hand: x0 <= 0.5 at the root; its left child (8 rows, the
    largest branch) splits on x1 <= 0.5 into two pure leaves; its right child (5 rows: 3/2) is a
    leaf."""
    X, y = hand_data()
    est = C45Classifier().fit(X, y)  # classes_, n_features_in_ and the like; its tree replaced
    counts = np.array([[7, 6], [4, 4], [3, 2], [4, 0], [0, 4]], dtype=float)
    w = counts.sum(axis=1)
    est.tree_ = Tree(
        children_left=[1, 3, -1, -1, -1], children_right=[2, 4, -1, -1, -1],
        feature=[0, 1, -2, -2, -2], threshold=[0.5, 0.5, -2, -2, -2],
        value=(counts / w[:, None])[:, None, :], impurity=np.zeros(5),
        n_node_samples=w.astype(int), weighted_n_node_samples=w, depth=[0, 1, 1, 2, 2],
        n_features=2, fractional_missing=True)
    return est, X, y


def test_raising_the_largest_branch_hand_worked():
    est, X, y = hand_estimator()
    cf = 0.25
    # nothing to collapse: the leaves make 2 training errors, the root alone 6, node 1 alone 4
    # bottom-up, node 1 (8 rows, two pure leaves of 4) stays: 2 * 4 U(0, 4) against 8 U(4, 8)
    assert charge([4, 0]) * 2 + 0.1 < charge([4, 4])
    # the root: as a leaf, as the subtree, or node 1 raised in its place; raised, all 13 rows go
    # down x1 <= 0.5: 6 known left (class 0), 6 known right (class 1), and the row missing x1
    # halves (6 / 12 of the known weight each way): leaves of 6.5 (6.5/0) and 6.5 (0.5/6)
    as_leaf = charge([7, 6])
    as_tree = charge([4, 0]) + charge([0, 4]) + charge([3, 2])
    raised = charge([6.5, 0]) + charge([0.5, 6])
    assert raised + 0.1 < as_tree and raised + 0.1 < as_leaf  # 2.73 < 5.64 < 7.97
    # ... and the raised tree is pruned again: its leaves beat the root as a leaf
    assert raised + 0.1 < as_leaf
    pruned = pruning.error_based(est, cf, subtree_raising=True, X=X, y=y)
    tree = pruned.tree_
    np.testing.assert_array_equal(tree.children_left, [1, -1, -1])
    np.testing.assert_array_equal(tree.children_right, [2, -1, -1])
    np.testing.assert_array_equal(tree.feature, [1, -2, -2])
    np.testing.assert_array_equal(tree.threshold, [0.5, -2, -2])
    np.testing.assert_allclose(tree.weighted_n_node_samples, [13, 6.5, 6.5])
    np.testing.assert_array_equal(tree.n_node_samples, [13, 7, 7])  # the halved row in both
    np.testing.assert_allclose(tree.value[:, 0, :], [[7 / 13, 6 / 13], [1, 0],
                                                    [0.5 / 6.5, 6 / 6.5]])
    np.testing.assert_array_equal(tree.depth, [0, 1, 1])
    # the entropy of the new class counts (the tree's criterion)
    p = 0.5 / 6.5
    np.testing.assert_allclose(tree.impurity[2], -(p * np.log2(p) + (1 - p) * np.log2(1 - p)))
    # a row missing x1 now mixes the two leaves by their weights, as C4.5 predicts
    np.testing.assert_allclose(pruned.predict_proba([[1, np.nan]]),
                               [[0.5 + 0.5 * p, 0.5 * (1 - p)]])
    assert pruned.subtree_raising is True
    # without raising, replacement alone keeps the whole tree (the root leaf charges more)
    assert as_leaf > as_tree
    assert pruning.error_based(est, cf).tree_.node_count == 5
    assert est.tree_.node_count == 5  # the input is untouched


def test_raising_needs_the_training_rows():
    est, X, y = hand_estimator()
    with pytest.raises(ValueError, match="pass the X and y"):
        pruning.error_based(est, subtree_raising=True)
    with pytest.raises(ValueError, match="only with subtree_raising=True"):
        pruning.error_based(est, X=X, y=y)
    with pytest.raises(ValueError, match="subtree_raising must be a bool"):
        pruning.error_based(est, subtree_raising="yes", X=X, y=y)
    with pytest.raises(ValueError, match="subtree_raising must be a bool"):
        C45Classifier(subtree_raising=1).fit(X, y)
    with pytest.raises(ValueError, match="never seen in fit"):
        pruning.error_based(est, subtree_raising=True, X=X, y=y + 5)


def _replacement_reference(tree, cf):
    """Bottom-up subtree replacement with scipy's charges: the leaves it keeps (node ids)."""
    counts = tree.value[:, 0, :] * tree.weighted_n_node_samples[:, None]
    cost = np.array([charge(c, cf) for c in counts])
    leaf = tree.children_left == -1
    for node in range(tree.node_count - 1, -1, -1):
        if not leaf[node]:
            below = cost[tree.children_left[node]:tree.children_right[node] + 1].sum()
            if cost[node] <= below + 1e-9:
                leaf[node] = True
            else:
                cost[node] = below
    kept, stack = [], [0]
    while stack:
        node = stack.pop()
        if leaf[node]:
            kept.append(node)
        else:
            stack.extend(range(tree.children_left[node], tree.children_right[node] + 1))
    return sorted(kept)


def _unpruned_c45(X, y, **params):
    est = C45Classifier(**params)
    est.pruning = None  # not a parameter of C45Classifier: the same grower, no pruning
    return est.fit(X, y)


def test_without_raising_c45_prunes_by_replacement_alone():
    X, y = load_heart_disease(return_X_y=True, as_frame=True)
    full = _unpruned_c45(X, y)
    expected_leaves = _replacement_reference(full.tree_, 0.25)
    replaced = C45Classifier(subtree_raising=False).fit(X, y)
    assert replaced.get_n_leaves() == len(expected_leaves)
    # the same leaves: their weights and class fractions, in the same order
    tree = replaced.tree_
    np.testing.assert_allclose(tree.weighted_n_node_samples[tree.children_left == -1],
                               full.tree_.weighted_n_node_samples[expected_leaves])
    np.testing.assert_allclose(tree.value[tree.children_left == -1],
                               full.tree_.value[expected_leaves])


def _same_tree(a, b):
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("weighted_n_node_samples", "value", "impurity"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), err_msg=name)


def test_c45_raises_by_default_in_fit():
    X, y = load_heart_disease(return_X_y=True, as_frame=True)
    # a training fold of heart_disease on which raising changes the tree
    rows = np.random.default_rng(0).permutation(X.shape[0])[:270]
    X, y = X.iloc[rows], y.iloc[rows]
    assert C45Classifier().subtree_raising is True
    default = C45Classifier().fit(X, y)
    by_function = pruning.error_based(_unpruned_c45(X, y), 0.25, subtree_raising=True, X=X, y=y)
    _same_tree(default.tree_, by_function.tree_)
    replaced = C45Classifier(subtree_raising=False).fit(X, y)
    assert default.tree_.node_count != replaced.tree_.node_count or not np.array_equal(
        default.tree_.feature, replaced.tree_.feature)
    # rerouting every training row from the root reproduces the node weights fit computed
    leaf_weight = np.zeros(default.tree_.node_count)
    leaf_weight[default.tree_.children_left == -1] = default.tree_.weighted_n_node_samples[
        default.tree_.children_left == -1]
    assert default.tree_.weighted_n_node_samples[0] == pytest.approx(X.shape[0])
    assert leaf_weight.sum() == pytest.approx(X.shape[0])
    assert default.score(X, y) > 0.8


def test_raising_weights_are_copies():
    X, y = load_heart_disease(return_X_y=True, as_frame=True)
    rows = np.random.default_rng(1).permutation(X.shape[0])[:200]
    X, y = X.iloc[rows].reset_index(drop=True), y.iloc[rows].reset_index(drop=True)
    w = np.where(np.arange(200) % 3 == 0, 2, 1)
    weighted = C45Classifier().fit(X, y, sample_weight=w)
    copies = np.repeat(np.arange(200), w)
    copied = C45Classifier().fit(X.iloc[copies], y.iloc[copies])
    for name in ("children_left", "feature", "threshold"):
        np.testing.assert_array_equal(getattr(weighted.tree_, name),
                                      getattr(copied.tree_, name))
    np.testing.assert_allclose(weighted.tree_.value, copied.tree_.value)
    np.testing.assert_allclose(weighted.tree_.weighted_n_node_samples,
                               copied.tree_.weighted_n_node_samples)
