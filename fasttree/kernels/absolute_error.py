"""Absolute-error regression: weighted medians over presorted rows with Fenwick trees.

A node's impurity is ``sum w |y - median| / w`` and its value the weighted median (scikit-learn's
definition: where the cumulative weight crosses half of the total; on an exact half, the mean of
the two values around it).  For one (feature, node) pair, a forward pass over the rows in the
feature's order adds each row to a Fenwick tree indexed by the row's rank of ``y`` within the
node and reads the median and absolute error of every prefix in ``O(log n)``; a backward pass does
the same for every suffix.  So a pair costs ``O(n log n)``, all pairs of a level run in parallel
over features, and the ranks are computed once per node (:func:`node_target_ranks`), not once per
feature.
"""

import numpy as np
from numba import prange

from .._jit import njit, specialized

from .monotonic import constraint_of, monotonic_ok
from .presort import stable_argsort
from .random_split import random_cut, store_pair_split, threshold_candidate
from .split_record import NO_CANDIDATE, better_side, side_allowed
from .split_search import count_missing, grid_pair_search, run_grid_search


@njit(cache=True, inline="always")
def _fenwick_add(tw, twy, rank, w, wy):
    i = rank + 1
    m = tw.shape[0] - 1
    while i <= m:
        tw[i] += w
        twy[i] += wy
        i += i & -i


@njit(cache=True, inline="always")
def _fenwick_below(tw, twy, limit, strict, top_bit):
    """Largest ``pos`` whose prefix weight (ranks ``< pos``) is ``<= limit`` (``< limit`` if
    ``strict``), with that prefix's weight and weighted sum."""
    m = tw.shape[0] - 1
    pos = 0
    w_sum = 0.0
    wy_sum = 0.0
    step = top_bit
    while step > 0:
        nxt = pos + step
        if nxt <= m:
            cand = w_sum + tw[nxt]
            if cand < limit or (not strict and cand == limit):
                pos = nxt
                w_sum = cand
                wy_sum += twy[nxt]
        step >>= 1
    return pos, w_sum, wy_sum


@njit(cache=True, inline="always")
def _median_abs_error(tw, twy, w_total, wy_total, sorted_vals, top_bit):
    """Weighted median and ``sum w |y - median|`` of the rows in the Fenwick tree."""
    half = 0.5 * w_total
    rank, w_left, wy_left = _fenwick_below(tw, twy, half, False, top_bit)
    median = sorted_vals[rank]
    if w_left == half:  # the half falls between two activated ranks: average them
        prev, _, _ = _fenwick_below(tw, twy, half, True, top_bit)
        median = 0.5 * (sorted_vals[prev] + sorted_vals[rank])
    w_right = w_total - w_left
    wy_right = wy_total - wy_left
    return median, (wy_right - median * w_right) + (median * w_left - wy_left)


@njit(cache=True, no_cpython_wrapper=True)
def _pass(order_ranks, order_w, vals, first, count, step, tw, twy, out, out_median, top_bit,
          start_w, start_wy, preload_ranks, preload_w, add):
    """Absolute errors and medians of the growing sets ``preload + rows[first],
    rows[first + step], ...``: ``out[j]`` (added to it if ``add``: several outputs),
    ``out_median[j]`` after ``j + 1`` rows."""
    tw[:] = 0.0
    twy[:] = 0.0
    w_total = start_w
    wy_total = start_wy
    for j in range(preload_ranks.shape[0]):
        r = preload_ranks[j]
        _fenwick_add(tw, twy, r, preload_w[j], preload_w[j] * vals[r])
    p = first
    for j in range(count):
        r = order_ranks[p]
        w = order_w[p]
        _fenwick_add(tw, twy, r, w, w * vals[r])
        w_total += w
        wy_total += w * vals[r]
        median, error = _median_abs_error(tw, twy, w_total, wy_total, vals, top_bit)
        out_median[j] = median
        out[j] = out[j] + error if add else error
        p += step


@njit(parallel=True, cache=True)
def node_target_ranks(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                      rank_of_row, node_sorted_y):
    """Rank of every row's target within its node, the node's sorted targets, and its statistics.

    Parameters
    ----------
    sorted_idx, sorted_y : ndarray of shape (n_features, n_samples) (IN)
        The layout (float64 targets).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
    seg_start, seg_end, seg_feature : ndarray of shape (n_segments,), int64 (IN)
        Nodes and a feature row holding each node's rows (as for the other statistics kernels).
    rank_of_row : ndarray of shape (n_samples,), int64 (OUT)
        Rank of each row's target within its node (ties by position, stable).
    node_sorted_y : ndarray of shape (n_samples,), float64 (OUT)
        ``node_sorted_y[start + r]``: the node's target of rank ``r``.

    Returns
    -------
    stats : ndarray of shape (n_segments, 4), float64
        ``[sum w, sum w*y, sum w*|y - median|, median]`` per node.
    """
    n_segments = seg_start.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    out = np.zeros((n_segments, 4))
    for s in prange(n_segments):
        start = seg_start[s]
        end = seg_end[s]
        n = end - start
        rows = sorted_idx[seg_feature[s], start:end]
        ys = sorted_y[seg_feature[s], start:end]
        order = stable_argsort(ys)
        w_sum = 0.0
        wy_sum = 0.0
        for r in range(n):
            node_sorted_y[start + r] = ys[order[r]]
            rank_of_row[rows[order[r]]] = r
        # weighted median of the sorted targets, then the absolute error around it
        weights = np.empty(n)
        for r in range(n):
            weights[r] = 1.0 if unit_weight else sample_weight[rows[order[r]]]
            w_sum += weights[r]
            wy_sum += weights[r] * node_sorted_y[start + r]
        half = 0.5 * w_sum
        cum = 0.0
        median = node_sorted_y[start] if n > 0 else 0.0
        for r in range(n):
            if cum + weights[r] > half:
                median = node_sorted_y[start + r]
                if cum == half and r > 0:
                    median = 0.5 * (node_sorted_y[start + r - 1] + median)
                break
            cum += weights[r]
        abs_error = 0.0
        for r in range(n):
            abs_error += weights[r] * abs(node_sorted_y[start + r] - median)
        out[s, 0] = w_sum
        out[s, 1] = wy_sum
        out[s, 2] = abs_error
        out[s, 3] = median
    return out


def find_splits_absolute_error(
    sorted_x, sorted_idx, sample_weight, seg_start, seg_end, seg_stats, feature_mask,
    rank_of_row, node_sorted_y, min_samples_leaf, min_weight_leaf, uniform, coin,
    monotonic_cst, node_bounds,
    record,
):
    """Best (or random) threshold of every numeric (feature, node) pair for absolute error.

    Parameters
    ----------
    sorted_x, sorted_idx, sample_weight, seg_start, seg_end, feature_mask
        As in :func:`~fasttree.kernels.find_best_splits_regression`.
    seg_stats : ndarray of shape (n_segments, 4 * n_outputs), float64 (IN)
        From :func:`node_target_ranks`, one block of 4 columns per output.
    rank_of_row, node_sorted_y : ndarray of shape (n_outputs, n_samples) (IN)
        Each output's ``rank_of_row`` and ``node_sorted_y`` from :func:`node_target_ranks`
        (computed for the same nodes); one row for one output.
    min_samples_leaf : int
    min_weight_leaf : float
    uniform, coin : ndarray of shape (n_features, n_segments) or (0, 0) (IN)
        Empty: every midpoint; otherwise one random threshold per pair (see
        :func:`~fasttree.kernels.find_splits_multioutput`).
    monotonic_cst, node_bounds : ndarray (IN)
        Monotonicity constraints, as in
        :func:`~fasttree.kernels.find_best_splits_classification`; the constrained value is the
        weighted median (one output only).
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.
        ``children_impurity`` is the children's total absolute error around their medians (the
        mean over outputs, as scikit-learn's multi-output impurity).

    Notes
    -----
    Missing rows are tried on both sides, ties go to the lowest threshold, as in the other scans.
    A Python function: the pairs are scanned in parallel by
    :func:`~fasttree.kernels.split_search.grid_pair_search`, tasks of about equal rows.
    """
    # rows of the largest node (NumPy: work_items.largest_node would be one more kernel for this
    # kind's first fit to compile)
    largest = int(np.max(seg_end - seg_start, initial=1))
    run_grid_search(
        specialized(_make_search), sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf,
        (sorted_x, sorted_idx, sample_weight, seg_stats, rank_of_row, node_sorted_y,
         min_samples_leaf, min_weight_leaf, uniform, coin, monotonic_cst, node_bounds, largest),
        record)


def _make_search():
    """:func:`find_splits_absolute_error`'s parallel search (made once per process)."""
    return grid_pair_search(_scan_pair, _task_scratch)


@njit(cache=True, no_cpython_wrapper=True)
def _scan_pair(f, s, start, end, scratch, args, record):
    """Pair ``(f, s)`` of :func:`find_splits_absolute_error` (node ``s``'s positions ``start ..
    end - 1``), the scan :func:`~fasttree.kernels.split_search.grid_pair_search` calls: each
    row's ranks and weight in the feature's order, then :func:`_split_pair`."""
    (sorted_x, sorted_idx, sample_weight, seg_stats, rank_of_row, node_sorted_y,
     min_samples_leaf, min_weight_leaf, uniform, coin, monotonic_cst, node_bounds, _) = args
    tw, twy, order_ranks, order_w, fwd, fwd_m, bwd, bwd_m, medians = scratch
    unit_weight = sample_weight.shape[0] == 0
    xs = sorted_x[f, start:end]
    idx = sorted_idx[f, start:end]
    for p in range(end - start):
        for k in range(rank_of_row.shape[0]):
            order_ranks[k, p] = rank_of_row[k, idx[p]]
        order_w[p] = 1.0 if unit_weight else sample_weight[idx[p]]
    cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
    _split_pair(f, s, xs, node_sorted_y[:, start:end], count_missing(xs), seg_stats[s],
                min_samples_leaf, min_weight_leaf, uniform, coin, cst, lower, upper, tw, twy,
                order_ranks, order_w, fwd, fwd_m, bwd, bwd_m, medians, record)


@njit(cache=True, no_cpython_wrapper=True)
def _task_scratch(args):
    """A task's work arrays (:func:`_scratch`) as long as the level's largest node."""
    rank_of_row, largest = args[4], args[12]  # args as find_splits_absolute_error packs them
    return _scratch(largest, rank_of_row.shape[0])


@njit(cache=True, no_cpython_wrapper=True)
def _scratch(max_n, n_outputs):
    """Per-thread work arrays of :func:`_split_pair` (``medians``: the four passes' medians)."""
    return (np.empty(max_n + 1), np.empty(max_n + 1),
            np.empty((n_outputs, max_n), dtype=np.int64),
            np.empty(max_n), np.empty(max_n), np.empty(max_n), np.empty(max_n),
            np.empty(max_n), np.empty((4, max_n)))


@njit(cache=True, no_cpython_wrapper=True)
def _split_pair(f, s, xs, vals, n_miss, stats, min_samples_leaf, min_weight_leaf, uniform, coin,
                cst, lower, upper, tw, twy, order_ranks, order_w, fwd, fwd_m, bwd, bwd_m,
                medians, record):
    """Best (or random) split of one (feature, node) pair whose rows, in the feature's sorted
    order (missing last), have ranks ``order_ranks[k]`` for output ``k`` and weights
    ``order_w``; ``xs`` their values, ``vals[k]`` the node's sorted targets of output ``k``;
    ``cst != 0`` (one output): the children's medians must respect that monotonicity constraint
    and the range ``[lower, upper]``."""
    random = uniform.shape[0] > 0
    n_outputs = vals.shape[0]
    n_node = xs.shape[0]
    n_known = n_node - n_miss
    w_total = stats[0]
    top_bit = 1
    while top_bit * 2 <= n_node:
        top_bit *= 2
    no_rows = np.empty(0, dtype=np.int64)
    no_w = np.empty(0)
    t, coin_left, stop = random_cut(xs, n_known, n_miss, uniform, coin, f, s)
    if t != t:
        return
    f_tw = tw[:n_node + 1]
    f_twy = twy[:n_node + 1]
    miss_w = order_w[n_known:n_node]
    w_missing = 0.0
    for j in range(n_miss):
        w_missing += miss_w[j]
    # prefixes (known rows only; then with the missing rows) and suffixes, their absolute errors
    # summed over the outputs (the medians are the last output's: constraints take one)
    fwd_med, bwd_med, fwd_m_med, bwd_m_med = medians[0], medians[1], medians[2], medians[3]
    missing_median = 0.0
    missing_error = 0.0
    for k in range(n_outputs):
        ranks = order_ranks[k]
        out_vals = vals[k]
        miss_ranks = ranks[n_known:n_node]
        wy_missing = 0.0
        for j in range(n_miss):
            wy_missing += miss_w[j] * out_vals[miss_ranks[j]]
        add = k > 0
        # int64, not constants: one compiled _pass for the four calls
        lowest, highest, up, down = np.int64(0), np.int64(n_known - 1), np.int64(1), np.int64(-1)
        _pass(ranks, order_w, out_vals, lowest, n_known, up, f_tw, f_twy, fwd, fwd_med, top_bit,
              0.0, 0.0, no_rows, no_w, add)
        _pass(ranks, order_w, out_vals, highest, n_known, down, f_tw, f_twy, bwd, bwd_med, top_bit,
              0.0, 0.0, no_rows, no_w, add)
        if n_miss > 0:
            _pass(ranks, order_w, out_vals, lowest, n_known, up, f_tw, f_twy, fwd_m, fwd_m_med,
                  top_bit, w_missing, wy_missing, miss_ranks, miss_w, add)
            _pass(ranks, order_w, out_vals, highest, n_known, down, f_tw, f_twy, bwd_m, bwd_m_med,
                  top_bit, w_missing, wy_missing, miss_ranks, miss_w, add)
            missing_median, error = _median_abs_error_of(miss_ranks, miss_w, out_vals, f_tw,
                                                         f_twy, top_bit)
            missing_error += error
    best_a, best_a_p, best_a_w = NO_CANDIDATE
    best_b, best_b_p, best_b_w = NO_CANDIDATE
    n_cand = 0
    w_left = 0.0
    for p in range(stop):
        w_left += order_w[p]
        last = p + 1 == n_known
        if not threshold_candidate(xs, p, stop, random):
            continue
        valid = False
        n_suffix = n_known - p - 1  # known rows right of the threshold
        # A: missing rows right
        w_right = w_total - w_left
        if side_allowed(False, coin_left, random, n_miss, last, p + 1, n_node - p - 1, w_left,
                        w_right, min_samples_leaf, min_weight_leaf):
            if n_miss == 0:
                right, right_median = bwd[n_suffix - 1], bwd_med[n_suffix - 1]
            elif n_suffix > 0:  # the suffix with the missing rows: bwd_m[j] has j + 1 known
                right, right_median = bwd_m[n_suffix - 1], bwd_m_med[n_suffix - 1]
            else:
                right, right_median = missing_error, missing_median
            valid = cst == 0 or monotonic_ok(cst, lower, upper, fwd_med[p], right_median)
            value = fwd[p] + right
            if valid and value < best_a:
                best_a, best_a_p, best_a_w = value, p, w_left
        # B: missing rows left
        w_left_b = w_left + w_missing
        w_right_b = w_total - w_left_b
        if (side_allowed(True, coin_left, random, n_miss, last, p + 1 + n_miss, n_suffix,
                         w_left_b, w_right_b, min_samples_leaf, min_weight_leaf)
                and (cst == 0 or monotonic_ok(cst, lower, upper, fwd_m_med[p],
                                              bwd_med[n_suffix - 1]))):
            valid = True
            value = fwd_m[p] + bwd[n_suffix - 1]
            if value < best_b:
                best_b, best_b_p, best_b_w = value, p, w_left_b
        n_cand += valid
    best, best_p, w_best, missing_left = better_side(best_a, best_a_p, best_a_w, best_b,
                                                      best_b_p, best_b_w)
    if best_p < 0:
        return
    # several outputs: impurities are means over the outputs
    node_error = 0.0
    for k in range(n_outputs):
        node_error += stats[4 * k + 2]
    node_error /= n_outputs
    best /= n_outputs
    store_pair_split(f, s, random, best, node_error, w_total, w_best, t, xs, best_p, n_miss,
                     missing_left, n_cand, record)


@njit(cache=True, no_cpython_wrapper=True)
def _median_abs_error_of(ranks, weights, vals, tw, twy, top_bit):
    """Weighted median of the given rows alone and their absolute error around it."""
    tw[:] = 0.0
    twy[:] = 0.0
    w_total = 0.0
    wy_total = 0.0
    for j in range(ranks.shape[0]):
        _fenwick_add(tw, twy, ranks[j], weights[j], weights[j] * vals[ranks[j]])
        w_total += weights[j]
        wy_total += weights[j] * vals[ranks[j]]
    return _median_abs_error(tw, twy, w_total, wy_total, vals, top_bit)
