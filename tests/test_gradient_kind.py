"""The gradient/hessian statistics kind (:func:`fasttree.kernels.find_best_splits_gradient`)
against a direct computation, and the gallery's boosting learner built on it
(``examples/plot_gradient_boosting_kernels.py``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttree
from fasttree.kernels import (
    CRITERION_GRADIENT,
    CRITERION_SQUARED_ERROR,
    find_best_splits_gradient,
    find_best_splits_regression,
    gather_targets,
    new_split_record,
    node_impurity,
    node_values,
    segment_target_sums,
    unconstrained,
)
from gallery import example_functions
from reference import gradient_score, missing_aware_numeric_split
from test_kernels import segmented_layout


def gradient_record(sorted_x, sorted_idx, grad, hess, starts, ends, reg_lambda, msl, mcw,
                    monotonic_cst=None, node_bounds=None):
    """Node sums and the record of one gradient search over every (feature, segment)."""
    sorted_g = gather_targets(sorted_idx, grad)
    rows_of = np.zeros(len(starts), np.int64)
    sums = segment_target_sums(sorted_idx, sorted_g, hess, starts, ends, rows_of,
                               CRITERION_GRADIENT)
    if monotonic_cst is None:
        monotonic_cst, node_bounds = unconstrained()
    record = new_split_record(sorted_x.shape[0], len(starts))
    find_best_splits_gradient(sorted_x, sorted_idx, sorted_g, hess, starts, ends, sums,
                              np.ones((sorted_x.shape[0], len(starts)), np.uint8), reg_lambda,
                              msl, mcw, monotonic_cst, node_bounds, record)
    return sums, record


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 40),
    m=st.integers(1, 3),
    n_values=st.integers(1, 6),
    missing=st.booleans(),
    unit_hessian=st.booleans(),
    reg_lambda=st.sampled_from([0.0, 0.5, 3.0]),
    msl=st.integers(1, 3),
    mcw=st.sampled_from([0.0, 0.7, 2.5]),
    constrained=st.booleans(),
)
def test_gradient_split_matches_a_direct_computation(seed, n, m, n_values, missing,
                                                     unit_hessian, reg_lambda, msl, mcw,
                                                     constrained):
    """Every (feature, node): the best proxy of every split tried from scratch (missing rows on
    either side, leaf minimums, hessian minimum, constraints on -G / (H + lambda)), the split
    written one of that value, gain and node sums as defined."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, m)).astype(np.float32)
    if missing:
        X[rng.random((n, m)) < 0.25] = np.nan
    grad = rng.normal(size=n)
    hess = np.empty(0) if unit_hessian else rng.uniform(0.0, 2.0, n)
    h = np.ones(n) if unit_hessian else hess
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 1 if n < 6 else 2)
    cst = rng.integers(-1, 2, size=m).astype(np.int8) if constrained else None
    bounds = np.tile([-np.inf, np.inf], (len(starts), 1)) if constrained else None
    if constrained:  # a finite range on some nodes
        bounds[:, 1] = np.where(rng.random(len(starts)) < 0.5, np.inf, rng.normal(size=len(starts)))
    sums, record = gradient_record(sorted_x, sorted_idx, grad, hess, starts, ends, reg_lambda,
                                   msl, mcw, cst, bounds)
    for s, (a, b) in enumerate(zip(starts, ends)):
        rows = sorted_idx[0, a:b]
        np.testing.assert_allclose(sums[s], [h[rows].sum(), grad[rows].sum(), 0.0], atol=1e-12)
        for f in range(m):
            monotonic = None
            if constrained and cst[f] != 0:
                monotonic = (int(cst[f]), *bounds[s])
            expected, candidates, _ = missing_aware_numeric_split(
                X[rows, f], grad[rows], h[rows], criterion="gradient", min_samples_leaf=msl,
                min_weight_leaf=mcw, monotonic=monotonic, reg_lambda=reg_lambda)
            got = record.children_impurity[f, s]
            if not np.isfinite(expected) or np.all(np.isnan(X[rows, f])):
                assert got == np.inf, (f, s, got, expected)
                continue
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
            t, missing_left = record.threshold[f, s], record.missing_branch[f, s] == 0
            has_missing = np.isnan(X[rows, f]).any()
            assert any(c[0] == pytest.approx(got, rel=1e-9, abs=1e-9) and c[1] == t
                       and (c[2] == missing_left or not has_missing) for c in candidates)
            node_score = gradient_score(grad[rows], h[rows], reg_lambda)
            assert record.gain[f, s] == pytest.approx((-got - node_score) / h[rows].sum(),
                                                      rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_nodes=st.integers(1, 6),
       reg_lambda=st.sampled_from([0.0, 0.5, 3.0]))
def test_node_impurity_and_values_of_gradient_sums_match_a_direct_computation(seed, n_nodes,
                                                                           reg_lambda):
    """Per node: the hessian sum as weight, minus the score per unit of hessian as impurity
    (negative, not clipped at 0), and the leaf value -G / (H + lambda); empty nodes are 0."""
    rng = np.random.default_rng(seed)
    groups = [(rng.normal(size=k), rng.uniform(0.1, 2.0, k))
              for k in rng.integers(0, 5, n_nodes)]
    sums = np.array([[h.sum(), g.sum(), 0.0] for g, h in groups])
    weight, impurity = node_impurity(sums, CRITERION_GRADIENT, reg_lambda)
    value = node_values(sums, CRITERION_GRADIENT, reg_lambda)
    for i, (g, h) in enumerate(groups):
        assert weight[i] == pytest.approx(h.sum(), rel=1e-12)
        if len(g) == 0:
            assert impurity[i] == 0.0 and value[i] == 0.0
            continue
        assert impurity[i] == pytest.approx(-gradient_score(g, h, reg_lambda) / h.sum(),
                                            rel=1e-12)
        assert value[i] == pytest.approx(-g.sum() / (h.sum() + reg_lambda), rel=1e-12)


def test_node_values_are_the_mean_for_squared_error_and_refuse_class_codes():
    sums = np.array([[4.0, 10.0, 30.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(node_values(sums, CRITERION_SQUARED_ERROR), [2.5, 0.0])
    with pytest.raises(ValueError, match="squared error, Poisson or gradient"):
        node_values(sums, fasttree.kernels.CRITERION_GINI)
    with pytest.raises(ValueError, match="not a criterion code"):
        node_impurity(sums, 99)


def test_zero_lambda_splits_like_weighted_squared_error_on_newton_targets(rng):
    """With reg_lambda = 0 the split of gradients g and hessians h is the weighted squared-error
    split of targets -g / h with weights h: same threshold, rows and missing side, proxies
    equal."""
    n, m = 500, 4
    X = rng.normal(size=(n, m)).astype(np.float32)
    X[rng.random((n, m)) < 0.1] = np.nan
    grad, hess = rng.normal(size=n), rng.uniform(0.05, 1.0, n)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 3)
    _, grad_record = gradient_record(sorted_x, sorted_idx, grad, hess, starts, ends, 0.0, 2, 0.0)
    target = -grad / hess
    sorted_t = gather_targets(sorted_idx, target)
    sums = segment_target_sums(sorted_idx, sorted_t, hess, starts, ends,
                               np.zeros(len(starts), np.int64), CRITERION_SQUARED_ERROR)
    reg_record = new_split_record(m, len(starts))
    find_best_splits_regression(sorted_x, sorted_idx, sorted_t, hess, starts, ends, sums,
                                np.ones((m, len(starts)), np.uint8), CRITERION_SQUARED_ERROR, 2,
                                0.0, np.empty(0), False, *unconstrained(), reg_record)
    for field in ("threshold", "n_left", "missing_branch", "n_missing", "n_candidates"):
        np.testing.assert_array_equal(getattr(grad_record, field), getattr(reg_record, field))
    # regression: children impurity c - proxy; gradients: -proxy
    np.testing.assert_allclose(-grad_record.children_impurity,
                               sums[:, 2][None, :] - reg_record.children_impurity, rtol=1e-9)


def test_lambda_moves_the_split_as_the_formula_says():
    """A hand-checked node: x = 0..3, g = (-3, -1, 1, 3), h = (1, 1, 1, 5).  Proxies by
    threshold: 1.5 -> 16/(2+l) + 16/(6+l) (both lambdas), 0.5 -> 9/(1+l) + 9/(7+l),
    2.5 -> 9/(3+l) + 9/(5+l)."""
    X = np.arange(4, dtype=np.float32)[:, None]
    grad, hess = np.array([-3.0, -1.0, 1.0, 3.0]), np.array([1.0, 1.0, 1.0, 5.0])
    sorted_x, sorted_idx = fasttree.kernels.presort_features(X)
    start, end = np.array([0]), np.array([4])
    for reg_lambda in (0.0, 1.0, 10.0):
        proxies = {0.5: 9 / (1 + reg_lambda) + 9 / (7 + reg_lambda),
                   1.5: 16 / (2 + reg_lambda) + 16 / (6 + reg_lambda),
                   2.5: 9 / (3 + reg_lambda) + 9 / (5 + reg_lambda)}
        t_best = max(proxies, key=proxies.get)
        _, record = gradient_record(sorted_x, sorted_idx, grad, hess, start, end, reg_lambda,
                                    1, 0.0)
        assert record.threshold[0, 0] == t_best
        assert -record.children_impurity[0, 0] == pytest.approx(proxies[t_best], rel=1e-12)
        # hessian sums by side: 0.5 -> 1 | 7, 1.5 -> 2 | 6, 2.5 -> 3 | 5; a minimum of 3 leaves
        # only 2.5, one of 6 none
        _, record = gradient_record(sorted_x, sorted_idx, grad, hess, start, end, reg_lambda,
                                    1, 3.0)
        assert record.threshold[0, 0] == 2.5
        assert -record.children_impurity[0, 0] == pytest.approx(proxies[2.5], rel=1e-12)
        _, record = gradient_record(sorted_x, sorted_idx, grad, hess, start, end, reg_lambda,
                                    1, 6.0)
        assert record.children_impurity[0, 0] == np.inf


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_bad_lambda_is_refused(bad):
    X = np.arange(4, dtype=np.float32)[:, None]
    sorted_x, sorted_idx = fasttree.kernels.presort_features(X)
    with pytest.raises(ValueError, match="reg_lambda"):
        gradient_record(sorted_x, sorted_idx, np.ones(4), np.ones(4), np.array([0]),
                        np.array([4]), bad, 1, 0.0)


def test_regression_kernel_refuses_the_gradient_code():
    """The gradient kind has its own entry point (its rows are presummed): the regression one
    says so rather than computing something else."""
    X = np.arange(4, dtype=np.float32)[:, None]
    sorted_x, sorted_idx = fasttree.kernels.presort_features(X)
    record = new_split_record(1, 1)
    with pytest.raises(ValueError, match="find_best_splits_gradient"):
        find_best_splits_regression(sorted_x, sorted_idx, np.zeros((1, 4)), np.ones(4),
                                    np.array([0]), np.array([4]), np.zeros((1, 3)),
                                    np.ones((1, 1), np.uint8), CRITERION_GRADIENT, 1, 0.0,
                                    np.empty(0), False, *unconstrained(), record)


# -- the gallery's boosting learner ---------------------------------------------------------


@pytest.fixture(scope="module")
def boosting():
    return example_functions("plot_gradient_boosting_kernels")


def _assert_same_tree(tree, ref):
    left, right, feature, threshold, _, value = tree
    np.testing.assert_array_equal(left, ref.children_left)
    np.testing.assert_array_equal(right, ref.children_right)
    np.testing.assert_array_equal(feature, ref.feature)
    np.testing.assert_array_equal(threshold, ref.threshold)
    np.testing.assert_allclose(value, ref.value[:, 0, 0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss", ["squared_error", "logistic"])
def test_one_round_is_a_regression_tree_on_newton_targets(boosting, loss):
    """With reg_lambda = 0, one round's tree is, node for node, fasttree's regression tree of
    targets -g / h weighted by h (for squared error: the residuals, unweighted), leaf values
    -G / H included."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)).astype(np.float32)
    if loss == "squared_error":
        y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(size=600) * 0.3
    else:
        y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=600) * 0.5 > 0).astype(np.float64)
    raw = rng.normal(size=600) * 0.3  # some current prediction
    grad, hess = boosting[loss](y, raw)
    tree = boosting["grow_tree"](fasttree.kernels.presort_features(X), grad, hess, max_depth=5,
                                 reg_lambda=0.0, min_child_weight=0.0)
    h = np.ones(600) if hess.size == 0 else hess
    ref = fasttree.DecisionTreeRegressor(max_depth=5).fit(
        X, -grad / h, sample_weight=None if hess.size == 0 else h).tree_
    _assert_same_tree(tree, ref)


def test_boosting_is_as_accurate_as_scikit_learns(boosting):
    """100 rounds of depth 3 on a classification problem: test accuracy within two points of
    scikit-learn's HistGradientBoostingClassifier with the same settings."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    X, y = make_classification(n_samples=3000, n_features=10, n_informative=6, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = boosting["fit_boosting"](X_train, y_train, boosting["logistic"], n_rounds=100,
                                     learning_rate=0.1, max_depth=3, reg_lambda=1.0)
    ours = np.mean((boosting["predict_raw"](model, X_test) > 0) == y_test)
    sk = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1, max_depth=3,
                                        max_leaf_nodes=None, l2_regularization=1.0,
                                        min_samples_leaf=1, early_stopping=False)
    theirs = sk.fit(X_train, y_train).score(X_test, y_test)
    assert ours >= theirs - 0.02, (ours, theirs)
    # and boosting did learn: far above the majority class
    assert ours > 0.85
