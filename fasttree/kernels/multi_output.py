"""Split search for several outputs at once (scikit-learn's multi-output trees).

A node's impurity is the mean of its outputs' impurities, so a split is chosen for all outputs
together.  The layout is the exact splitter's (:mod:`fasttree.kernels.split_search`); the targets
are read through the row ids from ``Y`` (n_samples, n_outputs), float64 for every task (class
codes are small integers, exact in float64), so one code serves classification and regression,
compiled per criterion (:func:`find_splits_multioutput`).

Statistics of a node are one vector, the outputs' blocks side by side (``offsets[k]`` is the
first column of output ``k``): weighted class counts per output for classification,
``[sum w, sum w*y, c]`` per output for regression (``c`` as in :mod:`fasttree.kernels.criteria`).
"""

import numpy as np
from numba import prange

from .._jit import njit, specialized, with_globals

from .._dtypes import CRITERION_SQUARED_ERROR
from .criteria import (
    regression_proxy,
    regression_target_term,
    two_children_class_impurity,
    weighted_class_impurity,
    weighted_regression_impurity,
)
from .random_split import random_cut, store_pair_split, threshold_candidate
from .split_record import NO_CANDIDATE, better_side, side_allowed
from .split_search import count_missing, grid_pair_search, run_grid_search


@njit(cache=True, inline="always")
def _add_row(stats, Y, row, w, offsets, regression, criterion):
    """Add one row of weight ``w`` to a statistics vector (``regression``: ``criterion`` is a
    regression criterion's)."""
    n_outputs = Y.shape[1]
    if regression:
        for k in range(n_outputs):
            y = Y[row, k]
            stats[3 * k] += w
            stats[3 * k + 1] += w * y
            stats[3 * k + 2] += w * regression_target_term(y, criterion)
    else:
        for k in range(n_outputs):
            stats[offsets[k] + np.int64(Y[row, k])] += w


@njit(cache=True, inline="always")
def weighted_multi_impurity(stats, offsets, criterion):
    """``w * I`` of a node, ``I`` the mean of its outputs' impurities."""
    n_outputs = offsets.shape[0] - 1
    total = 0.0
    for k in range(n_outputs):
        block = stats[offsets[k]:offsets[k + 1]]
        if criterion >= CRITERION_SQUARED_ERROR:
            total += weighted_regression_impurity(block[0], block[1], block[2], criterion)
        else:
            total += weighted_class_impurity(block, criterion)
    return total / n_outputs


@njit(cache=True, inline="always")
def multi_node_impurities(seg_stats, offsets, criterion):
    """Weight and ``w * I`` of every node from its statistics vector (one row per node): what
    the several-outputs searches compute once per level, not once per feature."""
    n_segments = seg_stats.shape[0]
    seg_weight = np.empty(n_segments)
    seg_weighted_impurity = np.empty(n_segments)
    for s in range(n_segments):
        seg_weight[s], seg_weighted_impurity[s] = _node_weight_impurity(seg_stats[s], offsets,
                                                                        criterion)
    return seg_weight, seg_weighted_impurity


@njit(cache=True, inline="always")
def _node_weight_impurity(stats, offsets, criterion):
    """Weight and ``w * I`` of one node from its statistics vector."""
    if criterion >= CRITERION_SQUARED_ERROR:
        weight = stats[0]
    else:
        weight = stats[offsets[0]:offsets[1]].sum()
    return weight, weighted_multi_impurity(stats, offsets, criterion)


@njit(cache=True, inline="always")
def _children_impurity(side_l, w_left, w_right, total, offsets, regression, criterion):
    """Children impurity ``w_l * I_l + w_r * I_r`` (mean over outputs) of the left statistics
    ``side_l`` and the node's ``total`` (the right child is their difference); ``inf`` if
    refused.  ``regression`` as in :func:`_add_row`."""
    n_outputs = offsets.shape[0] - 1
    value = 0.0
    for k in range(n_outputs):
        a = offsets[k]
        b = offsets[k + 1]
        if regression:
            proxy = regression_proxy(w_left, side_l[a + 1], w_right,
                                     total[a + 1] - side_l[a + 1], criterion)
            if proxy == -np.inf:
                return np.inf
            value += max(total[a + 2] - proxy, 0.0)
        else:
            value += two_children_class_impurity(side_l[a:b], total[a:b], w_left, w_right,
                                                 criterion)
    return value / n_outputs


def _make_scan_pair(criterion):
    """The scan of one (feature, node) pair of :func:`find_splits_multioutput` for one
    criterion, a compile-time constant: each criterion's scan is a fraction of the code of one
    for all, compiled only for the fits that need it."""
    regression = criterion >= CRITERION_SQUARED_ERROR

    @njit(cache=True, no_cpython_wrapper=True, noalias=True)
    def scan_pair(f, s, xs, idx, Y, sample_weight, total, w_total, node_weighted_impurity,
                  offsets, min_samples_leaf, min_weight_leaf, uniform, coin, left, missing,
                  side_l, record):
        """Pair ``(f, s)`` of :func:`find_splits_multioutput`: node ``s``'s values ``xs`` of
        feature ``f`` (sorted, missing last, not all one value) and their row ids ``idx``; its
        statistics vector ``total``, weight ``w_total`` and ``w * I``; ``left``, ``missing`` and
        ``side_l`` are scratch of the statistics' width.  Called, not inlined: the parallel kernel
        then compiles in a fraction of the time, and compiling ahead shares the two; its arrays
        given one by one, not in a tuple, so that they are ``noalias`` (3-5 % faster)."""
        unit_weight = sample_weight.shape[0] == 0
        random = uniform.shape[0] > 0
        n_stats = total.shape[0]
        n_node = xs.shape[0]
        n_miss = count_missing(xs)
        n_known = n_node - n_miss
        t, coin_left, stop = random_cut(xs, n_known, n_miss, uniform, coin, f, s)
        if t != t:
            return
        left[:] = 0.0
        missing[:] = 0.0
        w_missing = 0.0
        for p in range(n_known, n_node):
            w = 1.0 if unit_weight else sample_weight[idx[p]]
            _add_row(missing, Y, idx[p], w, offsets, regression, criterion)
            w_missing += w
        w_left = 0.0
        best_a, best_a_p, best_a_w = NO_CANDIDATE
        best_b, best_b_p, best_b_w = NO_CANDIDATE
        n_cand = 0
        for p in range(stop):
            w = 1.0 if unit_weight else sample_weight[idx[p]]
            _add_row(left, Y, idx[p], w, offsets, regression, criterion)
            w_left += w
            last = p + 1 == n_known
            if not threshold_candidate(xs, p, stop, random):
                continue
            valid = False
            # A: missing rows right
            w_right = w_total - w_left
            if side_allowed(False, coin_left, random, n_miss, last, p + 1, n_node - p - 1,
                            w_left, w_right, min_samples_leaf, min_weight_leaf):
                valid = True
                value = _children_impurity(left, w_left, w_right, total, offsets, regression,
                                           criterion)
                if value < best_a:
                    best_a, best_a_p, best_a_w = value, p, w_left
            # B: missing rows left (no split when every known row is left too)
            w_left_b = w_left + w_missing
            w_right_b = w_total - w_left_b
            if side_allowed(True, coin_left, random, n_miss, last, p + 1 + n_miss,
                            n_known - p - 1, w_left_b, w_right_b, min_samples_leaf,
                            min_weight_leaf):
                valid = True
                for j in range(n_stats):
                    side_l[j] = left[j] + missing[j]
                value = _children_impurity(side_l, w_left_b, w_right_b, total, offsets,
                                           regression, criterion)
                if value < best_b:
                    best_b, best_b_p, best_b_w = value, p, w_left_b
            n_cand += valid
        best, best_p, w_best, missing_left = better_side(
            best_a, best_a_p, best_a_w, best_b, best_b_p, best_b_w)
        if best_p < 0 or best == np.inf:
            return
        store_pair_split(f, s, random, best, node_weighted_impurity, w_total, w_best, t, xs,
                         best_p, n_miss, missing_left, n_cand, record)

    return scan_pair


def find_splits_multioutput(
    sorted_x, sorted_idx, Y, sample_weight, seg_start, seg_end, seg_stats, feature_mask, offsets,
    criterion, min_samples_leaf, min_weight_leaf, uniform, coin,
    record,
):
    """Best (or random) threshold of every numeric (feature, node) pair for several outputs.

    Parameters
    ----------
    sorted_x, sorted_idx, sample_weight, seg_start, seg_end, feature_mask
        As in :func:`~fasttree.kernels.find_best_splits_classification`.
    Y : ndarray of shape (n_samples, n_outputs), float64, C-contiguous (IN)
        Targets by row id: class codes ``0 .. n_classes_k - 1`` or regression values.
    seg_stats : ndarray of shape (n_segments, offsets[-1]), float64 (IN)
        Each node's statistics (module docstring; :func:`segment_multi_stats`).
    offsets : ndarray of shape (n_outputs + 1,), int64 (IN)
        First statistics column of each output, then the total.
    criterion : int
        Any criterion code of :mod:`fasttree._dtypes` but gain ratio.
    min_samples_leaf : int
    min_weight_leaf : float
    uniform, coin : ndarray of shape (n_features, n_segments) or (0, 0) (IN)
        Empty: search every midpoint (``splitter="best"``, missing rows tried on both sides).
        Otherwise one random threshold per pair, as in
        :func:`~fasttree.kernels.find_random_splits_classification`.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.

    Notes
    -----
    Candidates and ties as in the single-output scans: the lowest threshold wins a tie, and
    missing rows go left only when strictly better.  A Python function: the pairs are scanned in
    parallel by :func:`~fasttree.kernels.split_search.grid_pair_search`, tasks of about equal rows.
    """
    run_grid_search(
        specialized(_make_search, int(criterion)), sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf,
        (sorted_x, sorted_idx, Y, sample_weight, seg_stats, offsets, min_samples_leaf,
         min_weight_leaf, uniform, coin), record)


def _make_search(criterion):
    """:func:`find_splits_multioutput`'s parallel search for ``criterion``."""
    return grid_pair_search(specialized(_make_pair_hook, criterion), _new_scratch)


def _make_pair_hook(criterion):
    """The scan :func:`~fasttree.kernels.split_search.grid_pair_search` calls for a pair of
    :func:`find_splits_multioutput` (inlined there): the pair's slices and statistics out of
    ``args``, scanned by ``criterion``'s :func:`_make_scan_pair`."""

    def scan(f, s, start, end, scratch, args, record):
        (sorted_x, sorted_idx, Y, sample_weight, seg_stats, offsets, min_samples_leaf,
         min_weight_leaf, uniform, coin) = args
        left, missing, side_l = scratch
        total = seg_stats[s]
        # the node's weight and w * I a pair at a time: a few flops against its scan, and no
        # function of a level's nodes to compile (0.8 s)
        w_total, node_weighted_impurity = _node_weight_impurity(total, offsets, criterion)
        scan_pair(f, s, sorted_x[f, start:end], sorted_idx[f, start:end], Y, sample_weight,
                  total, w_total, node_weighted_impurity, offsets, min_samples_leaf,
                  min_weight_leaf, uniform, coin, left, missing, side_l, record)

    # the scan reaches the hook as a global (with_globals), never as a variable it closes over
    return njit(cache=True, inline="always")(
        with_globals(scan, scan_pair=specialized(_make_scan_pair, criterion)))


@njit(cache=True, no_cpython_wrapper=True)
def _new_scratch(args):
    """A task's scratch for :func:`_make_scan_pair`'s scan: three vectors of the statistics'
    width."""
    seg_stats = args[4]  # args as find_splits_multioutput packs them
    n_stats = seg_stats.shape[1]
    return np.empty(n_stats), np.empty(n_stats), np.empty(n_stats)


@njit(parallel=True, cache=True)
def segment_multi_stats(sorted_idx, Y, sample_weight, seg_start, seg_end, seg_feature, offsets,
                        criterion):
    """Statistics vector of each segment for several outputs (see the module docstring).

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32 (IN)
    Y : ndarray of shape (n_samples, n_outputs), float64 (IN)
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
    seg_start, seg_end, seg_feature : ndarray of shape (n_segments,), int64 (IN)
        As in :func:`~fasttree.kernels.segment_class_weights`.
    offsets : ndarray of shape (n_outputs + 1,), int64 (IN)
    criterion : int

    Returns
    -------
    stats : ndarray of shape (n_segments, offsets[-1]), float64
    """
    n_segments = seg_start.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    regression = criterion >= CRITERION_SQUARED_ERROR
    out = np.zeros((n_segments, offsets[-1]))
    for s in prange(n_segments):
        row_ids = sorted_idx[seg_feature[s]]
        for p in range(seg_start[s], seg_end[s]):
            row = row_ids[p]
            _add_row(out[s], Y, row, 1.0 if unit_weight else sample_weight[row], offsets,
                     regression, criterion)
    return out
