"""The scans added for scikit-learn's remaining tree features, against naive twins.

Random thresholds, several outputs, Poisson and absolute error: each kernel's best split of every
(feature, node) pair is compared with an exhaustive search from scratch (``tests/reference.py``).
"""

import numpy as np
import pytest

from fasttree._dtypes import (
    CRITERION_GINI,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)
from fasttree.kernels import (
    find_random_splits_classification,
    find_random_splits_regression,
    find_splits_absolute_error,
    find_splits_multioutput,
    find_best_splits_regression,
    gather_targets,
    new_split_record,
    node_target_ranks,
    presort_features,
    segment_class_weights,
    segment_multi_stats,
    segment_target_sums,
    unconstrained,
)
from reference import (
    children_impurity_of,
    missing_aware_numeric_split,
    weighted_median,
    weighted_node_impurity,
)


def _root(X):
    """The presorted layout of one node holding every row."""
    sorted_x, sorted_idx = presort_features(np.ascontiguousarray(X, np.float32))
    n = X.shape[0]
    return sorted_x, sorted_idx, np.array([0]), np.array([n]), np.zeros(1, np.int64)


def _data(seed, n=40, m=3, missing=False, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, m)).astype(np.float32)
    if missing:
        X[rng.random((n, m)) < 0.15] = np.nan
    w = rng.uniform(0.2, 2.0, n) if weighted else np.ones(n)
    return rng, X, w


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_regression_criteria_match_exhaustive_search(criterion, missing, weighted, seed):
    rng, X, w = _data(seed, missing=missing, weighted=weighted)
    y = rng.poisson(2.0, X.shape[0]).astype(np.float64)  # zeros included: Poisson must refuse
    sorted_x, sorted_idx, start, end, row = _root(X)
    sorted_y = gather_targets(sorted_idx, y)
    w_kernel = w if weighted else np.empty(0)
    mask = np.ones((X.shape[1], 1), np.uint8)
    record = new_split_record(X.shape[1], 1)
    if criterion == "absolute_error":
        rank_of_row = np.zeros(X.shape[0], np.int64)
        node_sorted_y = np.zeros(X.shape[0])
        stats = node_target_ranks(sorted_idx, sorted_y, w_kernel, start, end, row, rank_of_row,
                                  node_sorted_y)
        assert stats[0, 3] == pytest.approx(weighted_median(y, w))
        assert stats[0, 2] == pytest.approx(weighted_node_impurity(y, w, criterion))
        find_splits_absolute_error(sorted_x, sorted_idx, w_kernel, start, end, stats, mask,
                                   rank_of_row[None], node_sorted_y[None], 1, 0.0,
                                   np.empty((0, 0)),
                                   np.empty((0, 0), np.uint8), *unconstrained(), record)
    else:
        stats = segment_target_sums(sorted_idx, sorted_y, w_kernel, start, end, row,
                                    CRITERION_POISSON)
        find_best_splits_regression(sorted_x, sorted_idx, sorted_y, w_kernel, start, end, stats,
                                    mask, CRITERION_POISSON, 1, 0.0, np.empty(0), False,
                                    *unconstrained(), record)
    for f in range(X.shape[1]):
        expected, candidates, _ = missing_aware_numeric_split(X[:, f], y, w, criterion=criterion)
        got = record.children_impurity[f, 0]
        if not np.isfinite(expected):
            assert got == np.inf
            continue
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
        # the stored threshold and side reproduce the value
        t, missing_left = record.threshold[f, 0], record.missing_branch[f, 0] == 0
        left = np.where(np.isnan(X[:, f]), missing_left, X[:, f] <= t)
        assert children_impurity_of(left.astype(int), y, w, criterion) == pytest.approx(got)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_multioutput_scan_matches_exhaustive_search(task, missing, seed):
    rng, X, w = _data(seed, missing=missing, weighted=True)
    n = X.shape[0]
    if task == "classification":
        n_classes = [3, 2]
        Y = np.stack([rng.integers(0, k, n) for k in n_classes], axis=1).astype(np.float64)
        offsets = np.array([0, 3, 5])
        criterion, name = CRITERION_GINI, "gini"
    else:
        n_classes = None
        Y = rng.normal(size=(n, 3))
        offsets = 3 * np.arange(4)
        criterion, name = CRITERION_SQUARED_ERROR, "squared_error"
    sorted_x, sorted_idx, start, end, row = _root(X)
    stats = segment_multi_stats(sorted_idx, Y, w, start, end, row, offsets, criterion)
    record = new_split_record(X.shape[1], 1)
    find_splits_multioutput(sorted_x, sorted_idx, Y, w, start, end, stats,
                            np.ones((X.shape[1], 1), np.uint8), offsets, criterion, 1, 0.0,
                            np.empty((0, 0)), np.empty((0, 0), np.uint8), record)
    y_int = Y.astype(np.int64) if task == "classification" else Y
    for f in range(X.shape[1]):
        expected, _, _ = missing_aware_numeric_split(X[:, f], y_int, w, criterion=name,
                                                     n_classes=n_classes)
        assert record.children_impurity[f, 0] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_random_thresholds_follow_the_draws(task, missing, seed):
    """One threshold per pair at ``min + u (max - min)``, missing rows on the coin's side."""
    rng, X, w = _data(seed, missing=missing, weighted=True)
    n, m = X.shape
    sorted_x, sorted_idx, start, end, row = _root(X)
    uniform = rng.random((m, 1))
    coin = rng.integers(0, 2, (m, 1)).astype(np.uint8)
    record = new_split_record(m, 1)
    mask = np.ones((m, 1), np.uint8)
    if task == "classification":
        y = rng.integers(0, 3, n)
        sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
        stats = segment_class_weights(sorted_idx, sorted_y, w, start, end, row, 3)
        find_random_splits_classification(sorted_x, sorted_idx, sorted_y, w, start, end, stats,
                                          mask, uniform, coin, CRITERION_GINI, 1, 0.0,
                                          *unconstrained(), record)
        name, n_classes = "gini", 3
    else:
        y = rng.normal(size=n)
        sorted_y = gather_targets(sorted_idx, y)
        stats = segment_target_sums(sorted_idx, sorted_y, w, start, end, row,
                                    CRITERION_SQUARED_ERROR)
        find_random_splits_regression(sorted_x, sorted_idx, sorted_y, w, start, end, stats, mask,
                                      uniform, coin, CRITERION_SQUARED_ERROR, 1, 0.0,
                                      *unconstrained(), record)
        name, n_classes = "squared_error", None
    for f in range(m):
        x = X[:, f]
        nan = np.isnan(x)
        lo, hi = np.float64(x[~nan].min()), np.float64(x[~nan].max())
        t = lo + uniform[f, 0] * (hi - lo)
        t = lo if t == hi else t
        missing_left = bool(nan.any() and coin[f, 0])
        left = np.where(nan, missing_left, x <= t)
        if left.all() or not left.any():
            assert record.children_impurity[f, 0] == np.inf
            continue
        assert record.threshold[f, 0] == t
        assert record.n_left[f, 0] == left.sum()
        expected = children_impurity_of(left.astype(int), y, w, name, n_classes)
        assert record.children_impurity[f, 0] == pytest.approx(expected, rel=1e-9)


def test_poisson_refuses_a_child_of_zero_targets_despite_rounding():
    """sum_total - sum_left leaves a rounding residue where the true sum is 0 (a zero-target row
    split off a node of non-round values); the split must still be refused."""
    x = np.arange(8, dtype=np.float32)[:, None]
    y = np.array([0.1, 0.7, 0.2, 1.3, 0.9, 0.3, 2.1, 0.0])
    sorted_x, sorted_idx, start, end, row = _root(x)
    sorted_y = gather_targets(sorted_idx, y)
    stats = segment_target_sums(sorted_idx, sorted_y, np.empty(0), start, end, row,
                                CRITERION_POISSON)
    record = new_split_record(1, 1)
    find_best_splits_regression(sorted_x, sorted_idx, sorted_y, np.empty(0), start, end, stats,
                                np.ones((1, 1), np.uint8), CRITERION_POISSON, 1, 0.0,
                                np.empty(0), False, *unconstrained(), record)
    assert record.n_left[0, 0] != 7  # never the last row alone



@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_absolute_error_of_several_outputs_matches_exhaustive_search(missing, weighted, seed):
    """The children impurity is the mean over outputs of their absolute errors."""
    rng, X, w = _data(seed, missing=missing, weighted=weighted)
    n = X.shape[0]
    Y = np.column_stack([rng.poisson(2.0, n), rng.normal(size=n), rng.integers(0, 3, n)])
    Y = Y.astype(np.float64)
    sorted_x, sorted_idx, start, end, row = _root(X)
    w_kernel = w if weighted else np.empty(0)
    rank_of_row = np.zeros((3, n), np.int64)
    node_sorted_y = np.zeros((3, n))
    stats = np.hstack([
        node_target_ranks(sorted_idx[:1], np.ascontiguousarray(Y[sorted_idx[:1], k]), w_kernel,
                          start, end, row, rank_of_row[k], node_sorted_y[k])
        for k in range(3)])
    record = new_split_record(X.shape[1], 1)
    find_splits_absolute_error(sorted_x, sorted_idx, w_kernel, start, end, stats,
                               np.ones((X.shape[1], 1), np.uint8), rank_of_row, node_sorted_y,
                               1, 0.0, np.empty((0, 0)), np.empty((0, 0), np.uint8),
                               *unconstrained(), record)
    for f in range(X.shape[1]):
        expected, _, _ = missing_aware_numeric_split(X[:, f], Y, w, criterion="absolute_error",
                                                     n_classes=[None] * 3)
        assert record.children_impurity[f, 0] == pytest.approx(expected, rel=1e-9, abs=1e-9)
        node = weighted_node_impurity(Y, w, "absolute_error", [None] * 3)
        assert record.gain[f, 0] == pytest.approx((node - expected) / w.sum(), rel=1e-9,
                                                  abs=1e-12)
