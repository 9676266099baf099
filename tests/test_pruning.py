"""The five post-pruners: scikit-learn parity, invariants, and hand-computed trees per rule."""

import math

import numpy as np
import pytest

import fasttree
from fasttree import DecisionTreeClassifier, DecisionTreeRegressor, pruning
from fasttree.kernels.pruning import binomial_upper_limit
from fasttree.tree import Tree
from datasets import exact_weights, make_data, same_partition

sklearn_tree = pytest.importorskip("sklearn.tree")
scipy_stats = pytest.importorskip("scipy.stats")
scipy_optimize = pytest.importorskip("scipy.optimize")


# --- cost-complexity against scikit-learn ------------------------------------------------------

@pytest.mark.parametrize("task, criterion", [("classification", "gini"),
                                             ("classification", "entropy"),
                                             ("regression", "squared_error")])
@pytest.mark.parametrize("weighted", [False, True])
def test_pruning_path_matches_sklearn(task, criterion, weighted):
    # Weighted: weights that make two different partitions practically never tie (see
    # tests/datasets.py).  Unweighted: large nodes, where integer class counts rarely tie.
    if weighted:
        X, y = make_data(11, n=400, task=task)
        w, params = exact_weights(12, X.shape[0]), {"min_samples_leaf": 3}
    else:
        X, y = make_data(11, n=3000, task=task)
        w, params = None, {"max_depth": 6, "min_samples_leaf": 20}
    if task == "regression":
        ours = DecisionTreeRegressor(**params)
        theirs = sklearn_tree.DecisionTreeRegressor(random_state=0, **params)
    else:
        ours = DecisionTreeClassifier(criterion=criterion, **params)
        theirs = sklearn_tree.DecisionTreeClassifier(criterion=criterion, random_state=0,
                                                     **params)
    path = ours.cost_complexity_pruning_path(X, y, w)
    expected = theirs.cost_complexity_pruning_path(X, y, w)
    np.testing.assert_allclose(path.ccp_alphas, expected.ccp_alphas, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(path["impurities"], expected["impurities"], rtol=1e-7,
                               atol=1e-12)
    # ccp_alpha between two path values: the subtree of the same size as scikit-learn's
    alphas = path.ccp_alphas
    for alpha in ((alphas[1:] + alphas[:-1]) / 2)[:: max(1, len(alphas) // 6)]:
        a = type(ours)(**{**ours.get_params(), "ccp_alpha": alpha}).fit(X, y, w)
        b = type(theirs)(**{**theirs.get_params(), "ccp_alpha": alpha}).fit(X, y, w)
        assert a.tree_.node_count == b.tree_.node_count
        if weighted:
            assert same_partition(a.apply(X), b.apply(X))


def test_cost_complexity_function_equals_ccp_alpha():
    X, y = make_data(13, n=300)
    full = DecisionTreeClassifier().fit(X, y)
    alpha = 0.01
    by_function = pruning.cost_complexity(full, alpha)
    by_param = DecisionTreeClassifier(ccp_alpha=alpha).fit(X, y)
    by_rule = DecisionTreeClassifier(ccp_alpha=alpha, pruning="cost_complexity").fit(X, y)
    for est in (by_param, by_rule):
        np.testing.assert_array_equal(est.tree_.children_left, by_function.tree_.children_left)
        np.testing.assert_array_equal(est.tree_.threshold, by_function.tree_.threshold)


# --- invariants ---------------------------------------------------------------------------------

def assert_subtree(pruned, original):
    """Walk both trees from the root: every kept internal node keeps its split and statistics."""
    p, o = pruned.tree_, original.tree_
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        assert p.n_node_samples[i] == o.n_node_samples[j]
        np.testing.assert_array_equal(p.value[i], o.value[j])
        if p.children_left[i] != -1:
            assert o.children_left[j] != -1
            assert (p.feature[i], p.threshold[i]) == (o.feature[j], o.threshold[j])
            stack += [(p.children_left[i], o.children_left[j]),
                      (p.children_right[i], o.children_right[j])]
    internal = np.flatnonzero(p.children_left != -1)  # still numbered parents first
    assert (p.children_left[internal] > internal).all()


@pytest.fixture(scope="module")
def fitted():
    X, y = make_data(21, n=500)
    X_val, y_val = make_data(22, n=300)
    return DecisionTreeClassifier(random_state=0).fit(X, y), X_val, y_val


PRUNERS = {
    "cost_complexity": lambda est, Xv, yv: pruning.cost_complexity(est, 0.005),
    "reduced_error": lambda est, Xv, yv: pruning.reduced_error(est, Xv, yv),
    "error_based": lambda est, Xv, yv: pruning.error_based(est),
    "minimum_error": lambda est, Xv, yv: pruning.minimum_error(est),
    "pessimistic": lambda est, Xv, yv: pruning.pessimistic(est),
}


@pytest.mark.parametrize("name", PRUNERS)
def test_pruned_tree_is_subtree_idempotent_and_input_untouched(fitted, name):
    est, X_val, y_val = fitted
    before = {k: getattr(est.tree_, k).copy() for k in ("children_left", "threshold", "value")}
    pruned = PRUNERS[name](est, X_val, y_val)
    assert type(pruned) is type(est) and pruned is not est
    assert pruned.get_n_leaves() < est.get_n_leaves()  # this overfitted tree must shrink
    assert_subtree(pruned, est)
    again = PRUNERS[name](pruned, X_val, y_val)
    assert again.tree_.node_count == pruned.tree_.node_count
    np.testing.assert_array_equal(again.tree_.children_left, pruned.tree_.children_left)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(est.tree_, k), v)
    proba = pruned.predict_proba(X_val)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_reduced_error_never_increases_validation_error():
    for seed in range(5):
        X, y = make_data(seed, n=400)
        X_val, y_val = make_data(seed + 50, n=200)
        est = DecisionTreeClassifier().fit(X, y)
        pruned = pruning.reduced_error(est, X_val, y_val)
        assert np.sum(pruned.predict(X_val) != y_val) <= np.sum(est.predict(X_val) != y_val)
        Xr, yr = make_data(seed, n=400, task="regression")
        Xr_val, yr_val = make_data(seed + 50, n=200, task="regression")
        reg = DecisionTreeRegressor().fit(Xr, yr)
        pruned = pruning.reduced_error(reg, Xr_val, yr_val)
        assert np.sum((pruned.predict(Xr_val) - yr_val) ** 2) <= \
            np.sum((reg.predict(Xr_val) - yr_val) ** 2) + 1e-9


def test_error_based_leaves_monotone_in_confidence():
    for seed in (31, 32, 33):
        X, y = make_data(seed, n=600)
        est = DecisionTreeClassifier().fit(X, y)
        leaves = [pruning.error_based(est, cf).get_n_leaves()
                  for cf in (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.95)]
        assert leaves == sorted(leaves), leaves


def test_pruning_parameter_in_fit_and_grid_search():
    from sklearn.model_selection import GridSearchCV

    X, y = make_data(41, n=400)
    full = DecisionTreeClassifier(random_state=0).fit(X, y)
    for rule in ("error_based", "minimum_error", "pessimistic"):
        est = DecisionTreeClassifier(pruning=rule, random_state=0).fit(X, y)
        expected = getattr(pruning, rule)(full)
        np.testing.assert_array_equal(est.tree_.children_left, expected.tree_.children_left)
    rep = DecisionTreeClassifier(pruning="reduced_error", validation_fraction=0.3,
                                 random_state=0).fit(X, y)
    assert rep.tree_.n_node_samples[0] == 280  # stratified 30% held out
    grid = GridSearchCV(DecisionTreeClassifier(random_state=0),
                        {"pruning": [None, "reduced_error", "error_based", "minimum_error",
                                     "pessimistic"]}, cv=3).fit(X, y)
    assert grid.best_params_["pruning"] is not None or grid.best_score_ > 0
    Xr, yr = make_data(41, n=400, task="regression")
    assert DecisionTreeRegressor(pruning="reduced_error", random_state=0).fit(Xr, yr) \
        .get_n_leaves() < DecisionTreeRegressor().fit(Xr, yr).get_n_leaves()


def test_bad_pruning_arguments():
    X, y = make_data(42, n=100)
    with pytest.raises(ValueError, match="pruning must be one of"):
        DecisionTreeClassifier(pruning="magic").fit(X, y)
    with pytest.raises(ValueError, match="pruning must be one of"):
        DecisionTreeRegressor(pruning="error_based").fit(X, y.astype(float))
    with pytest.raises(ValueError, match="ccp_alpha"):
        DecisionTreeClassifier(ccp_alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        DecisionTreeClassifier(pruning="reduced_error", validation_fraction=1.5).fit(X, y)
    est = DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="confidence"):
        pruning.error_based(est, confidence=0.0)
    with pytest.raises(TypeError, match="classifier"):
        pruning.minimum_error(DecisionTreeRegressor().fit(X, y.astype(float)))
    with pytest.raises(fasttree.NotFittedError):
        pruning.pessimistic(DecisionTreeClassifier())


# --- hand-computed trees ----------------------------------------------------------------------

def hand_tree(structure, counts):
    """A classifier whose tree is given by hand.

    structure: list of (left, right) child ids per node (-1, -1 for a leaf), parents first;
    counts: per node class counts.  Feature 0, thresholds 0.5, 1.5, ... by node id.
    """
    counts = np.asarray(counts, dtype=float)
    left = np.array([s[0] for s in structure])
    right = np.array([s[1] for s in structure])
    depth = np.zeros(len(structure), dtype=int)
    for node, (left_child, right_child) in enumerate(structure):
        if left_child != -1:
            depth[left_child] = depth[right_child] = depth[node] + 1
    w = counts.sum(axis=1)
    p = counts / w[:, None]
    est = DecisionTreeClassifier()
    est.tree_ = Tree(
        children_left=left, children_right=right,
        feature=np.where(left == -1, -2, 0), threshold=np.where(left == -1, -2.0,
                                                               np.arange(len(left)) + 0.5),
        value=p[:, None, :], impurity=1 - (p ** 2).sum(axis=1),
        n_node_samples=w.astype(int), weighted_n_node_samples=w, depth=depth, n_features=1)
    est.classes_ = np.arange(counts.shape[1])
    est.n_classes_ = counts.shape[1]
    est.n_features_in_ = 1
    return est


def leaves_of(est):
    return set(np.flatnonzero(est.tree_.children_left == -1).tolist())


def u_cf(errors, n, cf):
    """Independent reference: solve P(X <= E | n, p) = CF with scipy."""
    if errors == 0:
        return 1 - cf ** (1 / n)
    return scipy_optimize.brentq(lambda p: scipy_stats.binom.cdf(errors, n, p) - cf, 1e-12,
                                 1 - 1e-12, xtol=1e-14)


def test_binomial_upper_limit_matches_quinlan_and_scipy():
    # values printed in Quinlan's C4.5 book (CF = 25%).  For E > 0 the book prints C4.5's normal
    # approximation (U(1, 16) = 0.157); the exact binomial limit, used here, is 0.1596.
    for (e, n), book in {(0, 6): 0.206, (0, 9): 0.143, (0, 1): 0.750, (1, 16): 0.160}.items():
        assert binomial_upper_limit(e, n, 0.25) == pytest.approx(book, abs=5e-4)
    for e, n, cf in [(1, 10, 0.25), (3, 20, 0.1), (7, 50, 0.5), (2, 5, 0.05)]:
        assert binomial_upper_limit(e, n, cf) == pytest.approx(u_cf(e, n, cf), abs=1e-9)
    assert binomial_upper_limit(5, 5, 0.25) == 1.0


def test_error_based_hand_computed():
    # Quinlan's example shape: root 16 rows (15/1); left leaf 6 (6/0); right node 10 (9/1) with
    # leaves 9 (9/0) and 1 (0/1)
    est = hand_tree([(1, 2), (-1, -1), (3, 4), (-1, -1), (-1, -1)],
                    [[15, 1], [6, 0], [9, 1], [9, 0], [0, 1]])
    cf = 0.25
    right_subtree = 9 * u_cf(0, 9, cf) + 1 * u_cf(0, 1, cf)       # 1.286 + 0.750 = 2.036
    right_leaf = 10 * u_cf(1, 10, cf)                              # 2.474 > 2.036: keep
    assert right_leaf > right_subtree
    root_subtree = 6 * u_cf(0, 6, cf) + right_subtree               # 3.274
    root_leaf = 16 * u_cf(1, 16, cf)                                # 2.554 <= 3.274: prune
    assert root_leaf <= root_subtree
    assert leaves_of(pruning.error_based(est, cf)) == {0}
    # with CF = 0.95 the formula decides again, computed here independently
    cf = 0.95
    keep_root = 16 * u_cf(1, 16, cf) > 6 * u_cf(0, 6, cf) + min(
        10 * u_cf(1, 10, cf), 9 * u_cf(0, 9, cf) + u_cf(0, 1, cf))
    pruned = pruning.error_based(est, cf)
    assert (0 not in leaves_of(pruned)) == keep_root


def test_minimum_error_hand_computed():
    # ALGORITHMS.md: K=2, node of 6 rows (4/2) with leaves 4 (4/0) and 2 (0/2): E(S) = 3/8,
    # backed-up 4/6 * 1/6 + 2/6 * 1/4 = 0.194 < 0.375: the split stays
    est = hand_tree([(1, 2), (-1, -1), (-1, -1)], [[4, 2], [4, 0], [0, 2]])
    static = (6 - 4 + 1) / (6 + 2)
    backed = 4 / 6 * (4 - 4 + 1) / (4 + 2) + 2 / 6 * (2 - 2 + 1) / (2 + 2)
    assert static == 0.375 and backed == pytest.approx(0.19444, abs=1e-5)
    assert leaves_of(pruning.minimum_error(est)) == {1, 2}
    # children that barely help: 10 rows (6/4) into 5 (4/1) and 5 (2/3):
    # E = (10-6+1)/12 = 0.4167; backed = 0.5*(5-4+1)/7 + 0.5*(5-3+1)/7 = 0.357 < E: keeps;
    # 10 rows (6/4) into 5 (3/2) and 5 (3/2): backed = (5-3+1)/7 = 0.4286 >= 0.4167: prunes
    keep = hand_tree([(1, 2), (-1, -1), (-1, -1)], [[6, 4], [4, 1], [2, 3]])
    prune = hand_tree([(1, 2), (-1, -1), (-1, -1)], [[6, 4], [3, 2], [3, 2]])
    assert leaves_of(pruning.minimum_error(keep)) == {1, 2}
    assert leaves_of(pruning.minimum_error(prune)) == {0}


def test_pessimistic_hand_computed():
    # root 20 rows (14/6): leaf charge 6.5.  Children: 10 (9/1) leaf, 10 (5/5) split into
    # 5 (5/0) and 5 (0/5).  Bottom-up: node 2 as leaf 5.5; subtree 0.5 + 0.5 = 1, SE =
    # sqrt(1 * 9 / 10) = 0.949 -> 5.5 > 1.949: keep.  Root: subtree 1.5 + 1 = 2.5,
    # SE = sqrt(2.5 * 17.5 / 20) = 1.479 -> 6.5 > 3.979: keep.
    est = hand_tree([(1, 2), (-1, -1), (3, 4), (-1, -1), (-1, -1)],
                    [[14, 6], [9, 1], [5, 5], [5, 0], [0, 5]])
    assert 5.5 > 1 + math.sqrt(1 * 9 / 10)
    assert 6.5 > 2.5 + math.sqrt(2.5 * 17.5 / 20)
    assert leaves_of(pruning.pessimistic(est)) == {1, 3, 4}
    # node 2 split into 5 (3/2) and 5 (2/3): subtree charge 2.5 + 2.5 = 5, SE = sqrt(5*5/10) =
    # 1.58; leaf charge 5.5 <= 6.58: collapse; root then: subtree 1.5 + 5.5 = 7, SE =
    # sqrt(7 * 13 / 20) = 2.13; leaf 6.5 <= 9.13: collapse
    est = hand_tree([(1, 2), (-1, -1), (3, 4), (-1, -1), (-1, -1)],
                    [[14, 6], [9, 1], [5, 5], [3, 2], [2, 3]])
    assert 5.5 <= 5 + math.sqrt(5 * 5 / 10) and 6.5 <= 7 + math.sqrt(7 * 13 / 20)
    assert leaves_of(pruning.pessimistic(est)) == {0}


def test_reduced_error_hand_computed():
    # root (x <= 0.5 ?) predicts class 0; left leaf class 0; right node 2 (x <= 2.5 ?) predicts
    # class 1 with leaves 3 (class 1) and 4 (class 0).
    est = hand_tree([(1, 2), (-1, -1), (3, 4), (-1, -1), (-1, -1)],
                    [[6, 4], [4, 0], [2, 4], [0, 4], [2, 0]])
    # validation rows: x=0 -> class 0 (node 1 right); x=1 class 1, x=2 class 1 (node 3);
    # x=3 class 1 (node 4 predicts 0: wrong).  Node 2 as a leaf predicts 1: 0 errors on its 3
    # rows vs 1 for its subtree -> collapse.  Root as leaf (class 0) errs on 3 rows vs 0 -> keep.
    X_val = np.array([[0.0], [1.0], [2.0], [3.0]])
    # x=0 (class 0) reaches leaf 1; x=1, x=2 (class 1) leaf 3; x=3 (class 1) leaf 4, which
    # predicts 0.  Node 2 as a leaf (class 1) errs 0 times on its 3 rows, its subtree once:
    # collapse.  The root as a leaf (class 0) errs 3 times, the pruned subtree 0: keep.
    assert leaves_of(pruning.reduced_error(est, X_val, np.array([0, 1, 1, 1]))) == {1, 2}
    # x=3 labelled 0: node 2 as a leaf errs once (x=3), its subtree never: keep everything
    assert leaves_of(pruning.reduced_error(est, X_val, np.array([0, 1, 1, 0]))) == {1, 3, 4}
    # a tie prunes: rows x=1 (class 1), x=3 (class 0), x=3 (class 1) make node 2 err once as a
    # leaf and once through its subtree; the root as a leaf errs twice: keep
    X_tie = np.array([[1.0], [3.0], [3.0]])
    assert leaves_of(pruning.reduced_error(est, X_tie, np.array([1, 0, 1]))) == {1, 2}
    # rows x=2, x=3 both class 0: node 2 as a leaf errs twice, its subtree once (x=2): keep;
    # the root as a leaf (class 0) errs never: collapse the whole tree
    assert leaves_of(pruning.reduced_error(est, X_val[2:], np.array([0, 0]))) == {0}


def test_cost_complexity_hand_computed():
    # Gini tree: root 10 (5/5); left leaf 4 (4/0); right 6 (1/5) split into 5 (0/5) and 1 (1/0)
    est = hand_tree([(1, 2), (-1, -1), (3, 4), (-1, -1), (-1, -1)],
                    [[5, 5], [4, 0], [1, 5], [0, 5], [1, 0]])
    g = lambda a, b: 1 - (a / (a + b)) ** 2 - (b / (a + b)) ** 2  # noqa: E731
    r = lambda a, b: (a + b) / 10 * g(a, b)  # noqa: E731
    alpha_2 = (r(1, 5) - 0) / (2 - 1)                    # node 2: its leaves are pure
    alpha_0 = (r(5, 5) - 0) / (3 - 1)
    assert alpha_2 < alpha_0
    alpha_0_after = (r(5, 5) - r(1, 5)) / (2 - 1)
    path = pruning.cost_complexity_path(est.tree_)
    np.testing.assert_allclose(path.ccp_alphas, [0.0, alpha_2, alpha_0_after])
    np.testing.assert_allclose(path.impurities, [0.0, r(1, 5), r(5, 5)])
    assert leaves_of(pruning.cost_complexity(est, alpha_2)) == {1, 2}
    assert leaves_of(pruning.cost_complexity(est, alpha_2 * 0.999)) == {1, 3, 4}
    assert leaves_of(pruning.cost_complexity(est, alpha_0_after)) == {0}


def test_cost_complexity_path_takes_the_estimator_like_the_other_pruners():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=300, n_features=6, random_state=3)
    est = DecisionTreeClassifier(random_state=0).fit(X, y)
    path = pruning.cost_complexity_path(est)
    from_tree = pruning.cost_complexity_path(est.tree_)
    np.testing.assert_array_equal(path.ccp_alphas, from_tree.ccp_alphas)
    np.testing.assert_array_equal(path.impurities, from_tree.impurities)
    expected = est.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(path.ccp_alphas, expected.ccp_alphas)
    with pytest.raises(fasttree.NotFittedError):
        pruning.cost_complexity_path(DecisionTreeClassifier())
    with pytest.raises(TypeError, match="fitted fasttree estimator"):
        pruning.cost_complexity_path(X)
