"""Split search on categorical features: subsets of categories (CART) and multiway (ID3/C4.5).

A categorical feature sits in the working layout like a numeric one: its category codes
``0 .. n_categories - 1`` as float32, sorted, missing (NaN) last.  Inside a node the rows of one
category are therefore a contiguous run, and one pass over the node's slice gives the statistics
of every category present (weighted class counts, or ``[sum w, sum w*y, sum w*y**2]``).

* **Subset** splits send a set of categories left.  Categories are ordered by their target
  statistic (share of class 1 for two classes, mean for regression) and every prefix of that
  order is a candidate: Breiman's shortcut, exact for those cases.  With more classes the order
  by each class's share is tried in turn (a heuristic: the exact search is exponential).
* **Multiway** splits give every category present at the node its own branch; the split is
  valid when at least two branches hold ``min_samples_leaf`` known rows and ``min_weight_leaf``
  weight (C4.5's rule).

Missing rows follow the numeric rules (:mod:`fasttree.kernels.split_search`): a subset split
tries them on both sides; a multiway split tries them in each branch and keeps the best.
"""

import numpy as np

from .._jit import njit
from .._threads import each_range_in_threads

from .._dtypes import CRITERION_SQUARED_ERROR, SPLIT_MULTIWAY
from .split_record import check_split_record, leaf_minimums_met, missing_side, write_split
from .criteria import (
    regression_target_term,
    split_information,
    weighted_class_impurity,
    weighted_regression_impurity,
)
from .presort import stable_argsort


@njit(cache=True, no_cpython_wrapper=True)
def _impurity(stats, criterion):
    """``w * I`` of one statistics vector (a call: inlined at its eight uses it made the
    categorical search compile for seconds longer)."""
    if criterion >= CRITERION_SQUARED_ERROR:
        return weighted_regression_impurity(stats[0], stats[1], stats[2], criterion)
    return weighted_class_impurity(stats, criterion)


@njit(cache=True, inline="always")
def _weight(stats, criterion):
    if criterion >= CRITERION_SQUARED_ERROR:
        return stats[0]
    w = 0.0
    for k in range(stats.shape[0]):
        w += stats[k]
    return w


@njit(cache=True, inline="always")
def _add_row(stats, y, w, criterion):
    if criterion >= CRITERION_SQUARED_ERROR:
        stats[0] += w
        stats[1] += w * y
        stats[2] += w * regression_target_term(y, criterion)
    else:
        stats[np.int64(y)] += w


@njit(cache=True, inline="always")
def category_arrays(size, n_stats):
    """Scratch for one node's category statistics (:func:`category_stats`) of up to ``size``
    categories: codes, statistics, rows, and the missing rows' statistics then their number."""
    return (np.empty(size, dtype=np.int64), np.empty((size, n_stats)),
            np.empty(size, dtype=np.int64), np.empty(n_stats + 1))


@njit(cache=True, no_cpython_wrapper=True)
def category_stats(xs, ys, idx, sample_weight, criterion, codes, stats, rows, missing):
    """Statistics of every category present in a node's sorted slice, and of its missing rows.

    Parameters
    ----------
    xs, ys, idx : the node's slices of one feature's row of the layout (IN)
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
    criterion : int
    codes : ndarray of shape (>= n_present,), int64 (OUT)
        Category code of each present category, increasing.
    stats : ndarray of shape (>= n_present, n_stats), float64 (OUT)
    rows : ndarray of shape (>= n_present,), int64 (OUT)
    missing : ndarray of shape (n_stats + 1,), float64 (OUT)
        Statistics of the missing rows, then their number (last slot).

    Returns
    -------
    n_present : int
    """
    unit_weight = sample_weight.shape[0] == 0
    n_stats = stats.shape[1]
    for k in range(n_stats + 1):
        missing[k] = 0.0
    n_present = 0
    previous = -1.0
    for p in range(xs.shape[0]):
        x = xs[p]
        w = 1.0 if unit_weight else sample_weight[idx[p]]
        if x != x:
            _add_row(missing, ys[p], w, criterion)
            missing[n_stats] += 1.0
            continue
        if n_present == 0 or x != previous:
            for k in range(n_stats):
                stats[n_present, k] = 0.0
            codes[n_present] = np.int64(x)
            rows[n_present] = 0
            n_present += 1
            previous = x
        _add_row(stats[n_present - 1], ys[p], w, criterion)
        rows[n_present - 1] += 1
    return n_present


@njit(cache=True, no_cpython_wrapper=True)
def subset_order(stats, n_present, order_class, criterion):
    """Order of the present categories for a subset scan: by the share of ``order_class`` (or the
    mean target for regression), ties by code; a stable sort, so search and description agree."""
    key = np.empty(n_present)
    for j in range(n_present):
        w = _weight(stats[j], criterion)
        if w <= 0.0:
            key[j] = 0.0
        elif criterion >= CRITERION_SQUARED_ERROR:
            key[j] = stats[j, 1] / w
        else:
            key[j] = stats[j, order_class] / w
    return stable_argsort(key)


@njit(cache=True, no_cpython_wrapper=True)
def _best_subset(stats, rows, n_present, missing, total, criterion, order_class,
                 min_samples_leaf, min_weight_leaf, left, right):
    """Best prefix of one category order.  Returns (value, prefix length, missing left, weight
    left, rows left, candidates)."""
    n_stats = stats.shape[1]
    order = subset_order(stats, n_present, order_class, criterion)
    n_missing = np.int64(missing[n_stats])
    w_total = _weight(total, criterion)
    n_total = n_missing
    for j in range(n_present):
        n_total += rows[j]
    for k in range(n_stats):
        left[k] = 0.0
    n_left = 0
    best = (np.inf, -1, False, 0.0, 0)
    n_candidates = 0
    for t in range(1, n_present + 1):
        j = order[t - 1]
        for k in range(n_stats):
            left[k] += stats[j, k]
        n_left += rows[j]
        last = t == n_present
        if last and n_missing == 0:
            break
        n_candidates += 1
        for missing_left in (False, True):
            if missing_left and last:
                continue  # every known row left and the missing ones too: no split
            extra = n_missing if missing_left else 0
            for k in range(n_stats):
                v = left[k] + (missing[k] if missing_left else 0.0)
                right[k] = total[k] - v
            w_l = w_total - _weight(right, criterion)
            w_r = w_total - w_l
            if not leaf_minimums_met(n_left + extra, n_total - n_left - extra, w_l, w_r,
                                     min_samples_leaf, min_weight_leaf):
                continue
            for k in range(n_stats):
                right[k] = total[k] - right[k]  # now the left side
            value = _impurity(right, criterion)
            for k in range(n_stats):
                right[k] = total[k] - right[k]  # back to the right side
            value += _impurity(right, criterion)
            if value < best[0]:
                best = (value, t, missing_left, w_l, n_left + extra)
    return best[0], best[1], best[2], best[3], best[4], n_candidates


def find_best_splits_categorical(
    sorted_x,
    sorted_idx,
    sorted_y,
    sample_weight,
    seg_start,
    seg_end,
    seg_stats,
    feature_mask,
    n_categories,
    criterion,
    split_kind,
    min_samples_leaf,
    min_weight_leaf,
    missing_fractional,
    record,
):
    """Best subset or multiway split of every categorical feature for every node of a level.

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end : (IN)
        As in :func:`~fasttree.kernels.find_best_splits_classification` (``sorted_y`` float64
        targets for regression).
    seg_stats : ndarray of shape (n_segments, n_stats), float64 (IN)
        Weighted class counts (classification) or ``[sum w, sum w*y, sum w*y**2]`` per node.
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
        1 for the categorical (feature, node) pairs to search.
    n_categories : ndarray of shape (n_features,), int64 (IN)
        Categories of each feature (codes ``0 .. n_categories - 1``).
    criterion : int
        ``CRITERION_GINI``, ``CRITERION_ENTROPY``, ``CRITERION_SQUARED_ERROR`` or
        ``CRITERION_POISSON``.
    split_kind : int
        ``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY``.
    min_samples_leaf : int
    min_weight_leaf : float
    missing_fractional : bool
        C4.5's missing rows (see :func:`~fasttree.kernels.find_best_splits_classification`):
        the split is chosen on the known rows, its gain scaled by their share, the missing rows a
        branch of their own in the split information; ``missing_branch`` is the heaviest branch.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.
        ``threshold`` holds the length of the left prefix of the category order of a subset
        split, ``subset_class`` the class that orders it; :func:`categorical_split_maps` turns
        the chosen splits into category maps.
    """
    check_split_record(record, *feature_mask.shape)
    each_range_in_threads(lambda first, last: _search_features(
        first, last, sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
        seg_stats, feature_mask, n_categories, criterion, split_kind, min_samples_leaf,
        min_weight_leaf, missing_fractional, record), sorted_x.shape[0])


@njit(cache=True, nogil=True)
def _search_features(first, last, sorted_x, sorted_idx, sorted_y, sample_weight, seg_start,
                     seg_end, seg_stats, feature_mask, n_categories, criterion, split_kind,
                     min_samples_leaf, min_weight_leaf, missing_fractional, record):
    """Every node of features ``first .. last - 1`` for :func:`find_best_splits_categorical`,
    called on ranges of features from threads (:func:`fasttree._threads.each_range_in_threads`):
    as one parallel loop with :func:`_fill_maps` it took 4.6 s of the table's first fit to
    compile (numba types, lowers and optimizes a parallel loop twice, as a function and as its
    body), as two plain functions 1.5 s, which two processes compiling ahead can share."""
    n_stats = seg_stats.shape[1]
    scratch = np.empty((3, n_stats))
    for f in range(first, last):
        if n_categories[f] == 0:
            continue
        codes, stats, rows, missing = category_arrays(n_categories[f], n_stats)
        for s in range(seg_start.shape[0]):
            start = seg_start[s]
            end = seg_end[s]
            if feature_mask[f, s] == 0 or end - start < 2 * min_samples_leaf:
                continue
            n_present = category_stats(sorted_x[f, start:end], sorted_y[f, start:end],
                                       sorted_idx[f, start:end], sample_weight, criterion,
                                       codes, stats, rows, missing)
            best_categorical_split(np.int64(f), s, codes, stats, rows, missing, n_present,
                                   seg_stats[s], end - start, criterion, split_kind,
                                   min_samples_leaf, min_weight_leaf, missing_fractional,
                                   scratch, record)


@njit(cache=True, no_cpython_wrapper=True)
def best_categorical_split(f, s, codes, stats, rows, missing, n_present, total, n_total,
                           criterion, split_kind, min_samples_leaf, min_weight_leaf,
                           missing_fractional, scratch, record):
    """Best subset or multiway split of one (feature, node) pair from its category statistics
    (:func:`category_stats`: present codes, statistics and rows of each, and of the missing
    rows), written to the record's slot ``[f, s]``; ``total``: the node's statistics,
    ``n_total`` its rows.  Any layout that knows these (sorted rows, histograms) calls it."""
    n_stats = total.shape[0]
    regression = criterion >= CRITERION_SQUARED_ERROR
    n_orders = 1 if regression or n_stats == 2 else n_stats
    left = scratch[0]
    right = scratch[1]
    known = scratch[2]
    n_miss = np.int64(missing[n_stats])
    w_node = _weight(total, criterion)
    node_impurity = _impurity(total, criterion)
    w_missing = _weight(missing[:n_stats], criterion)
    # C4.5: decide on the known rows, scale the gain by their share (scale 1 otherwise)
    known_impurity = node_impurity
    if missing_fractional and n_miss > 0:
        for k in range(n_stats):
            known[k] = max(total[k] - missing[k], 0.0)
            missing[k] = 0.0
        missing[n_stats] = 0.0
        total = known
        known_impurity = _impurity(known, criterion)
    fractional = missing_fractional and n_miss > 0
    if split_kind == SPLIT_MULTIWAY:
        if n_present < 2:
            return
        n_big = 0
        for j in range(n_present):
            n_big += (rows[j] >= min_samples_leaf
                      and _weight(stats[j], criterion) >= min_weight_leaf)
        if n_big < 2:
            return
        base = 0.0
        heaviest = 0
        for j in range(n_present):
            base += _impurity(stats[j], criterion)
            if rows[j] > rows[heaviest]:
                heaviest = j
        best = base
        best_m = heaviest
        if n_miss > 0 and not fractional:
            best = np.inf
            for m in range(n_present):
                for k in range(n_stats):
                    left[k] = stats[m, k] + missing[k]
                value = base - _impurity(stats[m], criterion) + _impurity(left, criterion)
                if value < best:
                    best = value
                    best_m = m
        branch_w = np.empty(n_present + 1)  # the last: missing rows in their own branch
        for j in range(n_present):
            branch_w[j] = _weight(stats[j], criterion)
        branch_w[n_present] = 0.0
        if fractional:
            branch_w[n_present] = w_missing
        elif n_miss > 0:
            branch_w[best_m] += w_missing
        gain_value = (known_impurity - best) / w_node
        write_split(record, f, s, node_impurity - w_node * gain_value, gain_value,
                    split_information(branch_w, w_node), 0.0,
                    np.int64(rows[0] + (n_miss if best_m == 0 else 0)), np.int64(best_m), n_miss,
                    np.int64(1))
        record.n_branches[f, s] = n_present
        return
    if n_present < 2 and (n_miss == 0 or fractional):
        return
    best = (np.inf, -1, False, 0.0, 0, 0, 0)  # value, cut, missing left, w left, rows left, ...
    for order_class in range(n_orders):
        k_order = order_class if n_orders > 1 else (0 if regression else 1)
        value, cut, missing_left, w_l, rows_left, n_cand = _best_subset(
            stats, rows, n_present, missing, total, criterion, k_order,
            min_samples_leaf, min_weight_leaf, left, right)
        if value < best[0]:
            best = (value, cut, missing_left, w_l, rows_left, n_cand, k_order)
    value, cut, missing_left, w_l, rows_left, n_cand, k_order = best
    if value == np.inf:
        return
    gain_value = (known_impurity - value) / w_node
    w_r = _weight(total, criterion) - w_l
    w_m = w_missing if fractional else 0.0
    if fractional:
        missing_branch = 0 if w_l >= w_r else 1
    else:
        missing_branch = missing_side(n_miss, missing_left, rows_left, n_total)
    write_split(record, f, s, node_impurity - w_node * gain_value, gain_value,
                split_information(np.array((w_l, w_r, w_m)), w_node), np.float64(cut),
                np.int64(rows_left), np.int64(missing_branch), n_miss, np.int64(n_cand))
    record.subset_class[f, s] = -1 if regression else k_order


def categorical_split_maps(sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                           seg_stats, split_feature, n_codes, split_kind, split_cut,
                           split_missing_branch, split_subset_class, criterion):
    """Category -> branch maps of chosen categorical splits (see :mod:`.routing`).

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_stats : (IN)
        As in :func:`find_best_splits_categorical`, for the split nodes only.
    split_feature, n_codes, split_kind : ndarray of shape (n_segments,), int64 (IN)
        Feature, map length (categories + 1) and kind of each split.
    split_cut : ndarray of shape (n_segments,), float64 (IN)
        Subset splits: categories of the order that go left (the record's ``threshold``).
    split_missing_branch, split_subset_class : ndarray of shape (n_segments,), int64 (IN)
    criterion : int

    Returns
    -------
    category_branch : ndarray of shape (sum(n_codes),), int32
        Node ``s``'s map at ``sum(n_codes[:s])``: the branch of every code, then of an unseen
        category.  Categories absent from the node (and unseen ones) take the branch ``b`` with
        the most training weight (the lowest such branch on a tie), stored as ``-1 - b``.
    """
    # one type for each argument, whatever the caller passes: one function compiled
    split_feature, n_codes, split_kind, split_missing_branch, split_subset_class = (
        np.ascontiguousarray(a, dtype=np.int64) for a in (
            split_feature, n_codes, split_kind, split_missing_branch, split_subset_class))
    offset = np.zeros(n_codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_codes, out=offset[1:])
    out = np.zeros(offset[-1], dtype=np.int32)
    n_stats = np.int64(seg_stats.shape[1])
    split_cut = np.ascontiguousarray(split_cut, dtype=np.float64)
    each_range_in_threads(lambda first, last: _fill_maps(
        first, last, sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end, n_stats,
        split_feature, n_codes, split_kind, split_cut, split_missing_branch, split_subset_class,
        criterion, offset, out), seg_start.shape[0])
    return out


@njit(cache=True, nogil=True)
def _fill_maps(first, last, sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
               n_stats, split_feature, n_codes, split_kind, split_cut, split_missing_branch,
               split_subset_class, criterion, map_offset, category_branch):
    """The maps of split nodes ``first .. last - 1`` for :func:`categorical_split_maps`, called
    on ranges of nodes from threads (see :func:`_search_features`)."""
    for s in range(first, last):
        f = split_feature[s]
        codes, stats, rows, missing = category_arrays(n_codes[s], n_stats)
        start = seg_start[s]
        end = seg_end[s]
        n_present = category_stats(sorted_x[f, start:end], sorted_y[f, start:end],
                                   sorted_idx[f, start:end], sample_weight, criterion, codes,
                                   stats, rows, missing)
        category_branch_map(codes, stats, missing, n_present, split_kind[s], split_cut[s],
                            split_missing_branch[s], split_subset_class[s], criterion,
                            category_branch[map_offset[s]:map_offset[s + 1]])


@njit(cache=True, no_cpython_wrapper=True)
def category_branch_map(codes, stats, missing, n_present, split_kind, split_cut,
                        split_missing_branch, split_subset_class, criterion, node_map):
    """Fill one node's category -> branch map (see :func:`categorical_split_maps`) from its
    category statistics (:func:`category_stats`)."""
    n_stats = stats.shape[1]
    size = node_map.shape[0]
    w_missing = _weight(missing[:n_stats], criterion)
    m = split_missing_branch
    if split_kind == SPLIT_MULTIWAY:
        branch_w = np.zeros(n_present)
        for j in range(n_present):
            node_map[codes[j]] = j
            branch_w[j] = _weight(stats[j], criterion)
        branch_w[m] += w_missing
    else:
        branch_w = np.zeros(2)
        order = subset_order(stats, n_present, max(split_subset_class, 0), criterion)
        cut = np.int64(split_cut)
        for t in range(n_present):
            j = order[t]
            b = 0 if t < cut else 1
            node_map[codes[j]] = b
            branch_w[b] += _weight(stats[j], criterion)
        branch_w[m] += w_missing
    heaviest = 0
    for b in range(branch_w.shape[0]):
        if branch_w[b] > branch_w[heaviest]:
            heaviest = b
    present = np.zeros(size, dtype=np.uint8)
    for j in range(n_present):
        present[codes[j]] = 1
    for c in range(size):
        if present[c] == 0:
            node_map[c] = -1 - heaviest  # absent here: the heaviest branch, marked
