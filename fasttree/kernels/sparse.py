"""Exact split search on a sparse (CSC) matrix without densifying it.

Only the stored nonzero values are kept, sorted once; the rows whose value is zero are never
written down per feature.  The layout (one *entry* per stored nonzero, ``nnz`` entries in all)::

    entries of feature f: feature_ptr[f] <= k < feature_ptr[f + 1]

    entry_x   | f=0: node a, sorted by value | node b | leaves ... | f=1: node a | node b | ...
    entry_row | the row id of each value, same positions
    entry_y   | its target (class label or regression value), same positions

    node_rows | node a's rows, ascending row id | node b's rows | ...     positions 0 .. n_samples
    row_pos   | row id -> its position in node_rows

A node is what the grower calls it: a ``[start, end)`` range of positions of ``node_rows``.  Its
entries in feature ``f`` are one contiguous *segment* of ``f``'s entries: the entries whose row
has ``start <= row_pos[row] < end``.  Segments are grouped by node in position order, so a
segment is found by a galloping search on ``row_pos[entry_row[k]]``: the layout keeps no offset
table (it stays O(nnz + n_samples) whatever the number of nodes); the kernels of a level read
the bounds of its pairs from one walk, :func:`segment_entries` (``(n_features, n_nodes)``, like
the split record).

Inside a node, the dense exact splitter (:mod:`fasttree.kernels.split_search`) scans the rows of
``f`` in ``(value, row id)`` order.  The sparse scan walks the same virtual sequence::

    dense row of f, node [start, end):  [ negatives | 0 0 0 ... 0 0 | positives ]
    segment entries [a, b):             [ a .. a+n_neg )             [ a+n_neg .. b )
    virtual position p:                   k              n_neg .. n_neg+n_zero-1    k + n_zero

The zero block (``n_zero = (end - start) - (b - a)`` rows) holds no candidate inside it, only at
its end; its statistics are the node's minus the segment's.  Candidates, their order, the
``min_samples_leaf`` / ``min_weight_leaf`` rules, values closer than ``FEATURE_THRESHOLD`` counting
as one (zero included), the tie rule (strict comparison, lowest threshold) and the threshold
midpoint are those of the dense scans, so a tree grown on this layout is bit-identical to one
grown on ``X.toarray()``:

* integer statistics (unit weights, classification) are exact in any order: the zero block is
  added in one step, and the work is O(nnz) per level;
* float statistics (sample weights, or regression targets) depend on the summation order.  With
  ``exact_zero_block`` the scan adds the zero block row by row in row-id order, as the dense scan
  does (O(rows of the node) per feature that has positive entries in it); without, it adds the
  node's totals minus the segment's (O(nnz), identical up to float rounding).

Rows are routed once per split (:func:`route_node_rows`), then every feature's segment is
stable-partitioned by the side its row went to (:func:`partition_sparse_segments`): each child's
entries stay sorted by ``(value, row id)``.

The searches and the partition work on a level's (feature, node) pairs, cut feature by feature
into tasks of equal work (:func:`_pair_tasks`: a pair's entries, and its node's rows where the
scan walks the zero block row by row), not on features dealt to threads: one feature, or one
dense column among thousands of sparse ones, then keeps every core busy below the root.  Every
statistics kind's search is the one walk of :func:`_make_sparse_search` with the kind's hooks.
"""

import numpy as np
from numba import prange

from .._jit import njit, specialized, with_globals
from .._tasks import load_pointer, run_tasks, task_address

from .._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)
from .criteria import (
    regression_proxy,
    two_children_class_impurity,
    weighted_node_impurities,
    weighted_regression_impurity,
)
from .absolute_error import _scratch as _ae_scratch
from .absolute_error import _split_pair as _ae_split_pair
from .monotonic import constraint_of, monotonic_ok
from .multi_output import _add_row, _children_impurity, multi_node_impurities
from .random_split import _store_random_split, threshold_between
from .routing import branch_of, check_tree
from .split_record import check_split_record, leaf_minimums_met, missing_side, write_split
from .work_items import PAIR_COST, largest_node

# The dense scans' own rules, imported rather than copied so that there is one of each: two
# sorted values within FEATURE_THRESHOLD are one value, the float64 midpoint threshold, and
# the children impurity of integer class counts (so a value is the dense one bit for bit).
from .split_search import (  # noqa: E402
    _binary_counts_impurity,
    _binary_split_info,
    _midpoint,
    _same_value,
    _unit_counts_impurity,
)

_SIGN_BIT = np.uint32(0x80000000)
_BLOCK = 256  # rows per task in the CSR tree walks


# -- layout -----------------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def build_sparse_layout(data, indices, indptr, targets):
    """Sorted entries of every feature of a CSC matrix: the working layout of the sparse scans.

    Parameters
    ----------
    data : ndarray of shape (nnz_in,), float32 (IN)
        CSC values, finite.  Stored zeros (``0.0`` and ``-0.0``) are dropped: they are zeros.
    indices : ndarray of shape (nnz_in,), int32 (IN)
        Row id of each value.  No duplicated (row, feature) pair (sum duplicates first).
    indptr : ndarray of shape (n_features + 1,), int64 (IN)
    targets : ndarray of shape (n_samples,), uint8 / uint16 (classes) or float64 (IN)
        Target of every row, carried along with its entries.

    Returns
    -------
    entry_x : ndarray of shape (nnz,), float32
        Each feature's nonzero values in non-decreasing order (ties: ascending row id, the order
        of the dense presort).
    entry_row : ndarray of shape (nnz,), int32
    entry_y : ndarray of shape (nnz,), dtype of ``targets``
    feature_ptr : ndarray of shape (n_features + 1,), int64
        Feature ``f``'s entries are ``feature_ptr[f] .. feature_ptr[f + 1] - 1``.
    """
    n_features = indptr.shape[0] - 1
    counts = np.zeros(n_features, dtype=np.int64)
    for f in prange(n_features):
        c = 0
        for k in range(indptr[f], indptr[f + 1]):
            c += data[k] != 0.0
        counts[f] = c
    feature_ptr = np.zeros(n_features + 1, dtype=np.int64)
    for f in range(n_features):
        feature_ptr[f + 1] = feature_ptr[f] + counts[f]
    nnz = feature_ptr[n_features]
    entry_x = np.empty(nnz, dtype=np.float32)
    entry_row = np.empty(nnz, dtype=np.int32)
    entry_y = np.empty(nnz, dtype=targets.dtype)
    for f in prange(n_features):
        m = counts[f]
        values = np.empty(m, dtype=np.float32)
        rows = np.empty(m, dtype=np.int32)
        j = 0
        for k in range(indptr[f], indptr[f + 1]):
            if data[k] != 0.0:
                values[j] = data[k]
                rows[j] = indices[k]
                j += 1
        # one uint64 key per entry: order-preserving float bits, then the row id, so that a plain
        # (unstable) argsort gives the dense presort's (value, row id) order
        bits = values.view(np.uint32)
        keys = np.empty(m, dtype=np.uint64)
        for j in range(m):
            b = bits[j]
            key = ~b if b & _SIGN_BIT else b | _SIGN_BIT
            keys[j] = (np.uint64(key) << np.uint64(32)) | np.uint64(rows[j])
        order = np.argsort(keys)
        first = feature_ptr[f]
        for j in range(m):
            entry_x[first + j] = values[order[j]]
            entry_row[first + j] = rows[order[j]]
            entry_y[first + j] = targets[rows[order[j]]]
    return entry_x, entry_row, entry_y, feature_ptr


@njit(cache=True, inline="always")
def _gallop(entry_row, row_pos, lo, hi, target):
    """First ``k`` in ``[lo, hi)`` with ``row_pos[entry_row[k]] >= target`` (``hi`` if none).

    The predicate is monotone over a feature's entries (segments are grouped by node in position
    order).  Exponential steps from ``lo`` then a binary search: O(log distance), so walking the
    nodes of a level in position order costs O(log) per node when segments are short and
    O(segment) when they are long.
    """
    if lo >= hi or row_pos[entry_row[lo]] >= target:
        return lo
    below = lo  # invariant: key(below) < target
    step = 1
    upper = hi
    while True:
        probe = below + step
        if probe >= hi:
            break
        if row_pos[entry_row[probe]] >= target:
            upper = probe
            break
        below = probe
        step *= 2
    lo_b = below + 1
    while lo_b < upper:
        mid = (lo_b + upper) >> 1
        if row_pos[entry_row[mid]] < target:
            lo_b = mid + 1
        else:
            upper = mid
    return lo_b


@njit(cache=True, inline="always")
def _n_negative(xs):
    """Entries of a sorted, zero-free segment that are negative (binary search)."""
    lo = 0
    hi = xs.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if xs[mid] < 0.0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _virtual_value(xs, n_neg, n_zero, p):
    """Value at virtual position ``p`` of a node's sorted column (see the module docstring)."""
    if p < n_neg:
        return xs[p]
    if p < n_neg + n_zero:
        return np.float32(0.0)
    return xs[p - n_zero]


@njit(cache=True, inline="always")
def _next_value(xs, k, n_neg, n_zero):
    """Virtual value after entry ``k``: the next entry, or 0.0 where the zero block follows
    (callers never ask past the last row of the node)."""
    if k + 1 == n_neg and n_zero > 0:
        return np.float32(0.0)
    if k + 1 < xs.shape[0]:
        return xs[k + 1]
    return np.float32(0.0)


@njit(cache=True, inline="always")
def _is_constant(xs, n_node):
    """The dense rule on the virtual column: first and last values within FEATURE_THRESHOLD
    (an all-zero column is constant)."""
    m = xs.shape[0]
    if m == 0:
        return True
    n_neg = _n_negative(xs)
    n_zero = n_node - m
    return _same_value(_virtual_value(xs, n_neg, n_zero, 0),
                       _virtual_value(xs, n_neg, n_zero, n_node - 1))


@njit(cache=True, inline="always")
def _searched_pair(pairs, f, s):
    """Pair (feature ``f``, node ``s``) of a sparse search, ``pairs`` the search's ``(entry_x,
    seg_start, seg_end, entry_start, entry_end, feature_mask, min_samples_leaf)``: whether it
    is searched (unmasked, of at least ``2 * min_samples_leaf`` rows, not constant in the node:
    all zeros, or values within ``FEATURE_THRESHOLD``), its node's positions ``[start, end)``
    and its entries ``[a, b)``."""
    entry_x, seg_start, seg_end, entry_start, entry_end, feature_mask, min_samples_leaf = pairs
    start = seg_start[s]
    end = seg_end[s]
    a = entry_start[f, s]
    b = entry_end[f, s]
    searched = (feature_mask[f, s] != 0 and end - start >= 2 * min_samples_leaf
                and not _is_constant(entry_x[a:b], end - start))
    return searched, start, end, a, b


@njit(parallel=True, cache=True)
def find_segments(entry_row, feature_ptr, row_pos, seg_start, seg_end, seg_feature):
    """Entries of each node in one feature: ``[seg_a[s], seg_b[s])`` of ``seg_feature[s]``.

    Parameters
    ----------
    entry_row : ndarray of shape (nnz,), int32 (IN)
    feature_ptr : ndarray of shape (n_features + 1,), int64 (IN)
    row_pos : ndarray of shape (n_samples,), int32 (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    seg_feature : ndarray of shape (n_segments,), int64 (IN)

    Returns
    -------
    seg_a, seg_b : ndarray of shape (n_segments,), int64
    """
    n_segments = seg_start.shape[0]
    seg_a = np.empty(n_segments, dtype=np.int64)
    seg_b = np.empty(n_segments, dtype=np.int64)
    for s in prange(n_segments):
        f = seg_feature[s]
        a = _gallop(entry_row, row_pos, feature_ptr[f], feature_ptr[f + 1], seg_start[s])
        seg_a[s] = a
        seg_b[s] = _gallop(entry_row, row_pos, a, feature_ptr[f + 1], seg_end[s])
    return seg_a, seg_b


@njit(parallel=True, cache=True)
def segment_entries(entry_row, feature_ptr, row_pos, seg_start, seg_end, seg_order):
    """Every feature's entries of every node: the walk of the layout that the search, the
    non-constant test and the partition share.

    Parameters
    ----------
    entry_row : ndarray of shape (nnz,), int32 (IN)
    feature_ptr : ndarray of shape (n_features + 1,), int64 (IN)
    row_pos : ndarray of shape (n_samples,), int32 (IN)
        The layout (see the module docstring).
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Nodes, as the grower's position ranges; they must not overlap.
    seg_order : ndarray of shape (n_segments,), int64 (IN)
        The nodes sorted by ``seg_start`` (a permutation of ``0 .. n_segments - 1``).

    Returns
    -------
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64
        Node ``s``'s nonzeros of feature ``f`` are the entries ``entry_start[f, s] <= k <
        entry_end[f, s]``.

    Notes
    -----
    Parallel over features; each feature's nodes are visited in position order, each segment
    found by galloping from the end of the previous one (O(log) per short segment).  The bounds
    stay valid while rows move inside their nodes (:func:`route_node_rows`), until the entries
    move (:func:`partition_sparse_segments`).
    """
    n_features = feature_ptr.shape[0] - 1
    n_segments = seg_start.shape[0]
    entry_start = np.empty((n_features, n_segments), dtype=np.int64)
    entry_end = np.empty((n_features, n_segments), dtype=np.int64)
    for f in prange(n_features):
        cursor = feature_ptr[f]
        hi = feature_ptr[f + 1]
        for i in range(n_segments):
            s = seg_order[i]
            a = _gallop(entry_row, row_pos, cursor, hi, seg_start[s])
            b = _gallop(entry_row, row_pos, a, hi, seg_end[s])
            cursor = b
            entry_start[f, s] = a
            entry_end[f, s] = b
    return entry_start, entry_end


@njit(parallel=True, cache=True)
def sparse_non_constant(entry_x, seg_start, seg_end, entry_start, entry_end):
    """Which features are not constant in each node (the zeros count as values).

    Parameters
    ----------
    entry_x : ndarray of shape (nnz,), float32 (IN)
        The layout's values (see the module docstring).
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Nodes, as the grower's position ranges; they must not overlap.
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64 (IN)
        Their entries (:func:`segment_entries`).

    Returns
    -------
    non_constant : ndarray of shape (n_features, n_segments), bool
        What the dense splitter's mask is on ``X.toarray()``: the node's smallest and largest
        values (zeros included) more than ``FEATURE_THRESHOLD`` apart.
    """
    n_features, n_segments = entry_start.shape
    out = np.zeros((n_features, n_segments), dtype=np.bool_)
    for f in prange(n_features):
        for s in range(n_segments):
            out[f, s] = not _is_constant(entry_x[entry_start[f, s]:entry_end[f, s]],
                                         seg_end[s] - seg_start[s])
    return out


# -- node statistics --------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def sparse_node_stats(entry_x, entry_row, node_rows, Y, sample_weight, seg_start, seg_end, seg_a,
                      seg_b, offsets, criterion, marks):
    """Statistics vector of each node, summed in the dense splitter's order: the rows of
    one feature's sorted column (negatives, the zero rows by ascending id, positives).

    Parameters
    ----------
    entry_x, entry_row, node_rows : the layout (IN)
        See the module docstring.
    Y : ndarray of shape (n_samples, n_outputs), float64 (IN)
        Targets by row id: class codes or regression values (one column for one output).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Empty means every weight is 1.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    seg_a, seg_b : ndarray of shape (n_segments,), int64 (IN)
        Each node's entries ``[seg_a, seg_b)`` in the feature whose order the dense splitter
        would sum in (:func:`find_segments` of its ``segment_class_weights`` /
        ``segment_target_sums`` feature): that segment must hold exactly the node's entries
        (any feature once the node is partitioned; the parent's split feature before).
    offsets : ndarray of shape (n_outputs + 1,), int64 (IN)
        Where each output's statistics start (:mod:`fasttree.kernels.multi_output`).
    criterion : int
        Classification criteria sum weighted class counts per output; squared error and
        Poisson ``[sum w, sum w*y, c]`` (``c`` per
        :func:`~fasttree.kernels.criteria.regression_target_term`).
    marks : ndarray of shape (n_samples,), uint8, zeros (scratch; zeros again on return)

    Returns
    -------
    stats : ndarray of shape (n_segments, offsets[-1]), float64
        Bit-identical to the dense splitter's statistics of ``X.toarray()``: float sums follow
        its order, integer counts are exact in any order.
    """
    n_segments = seg_start.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    out = np.zeros((n_segments, offsets[-1]))
    for s in prange(n_segments):
        rows = entry_row[seg_a[s]:seg_b[s]]
        n_neg = _n_negative(entry_x[seg_a[s]:seg_b[s]])
        n_node = seg_end[s] - seg_start[s]
        # nodes are disjoint: every node marks only its own rows of the shared scratch
        zero_rows = np.empty(n_node - rows.shape[0], dtype=np.int32)
        _zero_block_rows(rows, node_rows[seg_start[s]:seg_end[s]], marks, zero_rows)
        for p in range(n_node):
            r = _virtual_row(rows, zero_rows, n_neg, zero_rows.shape[0], p)
            _add_row(out[s], Y, r, 1.0 if unit_weight else sample_weight[r], offsets,
                     criterion >= CRITERION_SQUARED_ERROR, criterion)
    return out


# -- split search: classification -------------------------------------------------------------
@njit(cache=True, inline="always")
def _zero_rows_class(rows, node_rows_node, row_y, sample_weight, left, w_left, marks):
    """Add the zero block's rows one by one, ascending row id (the dense order); returns
    ``w_left``.  ``marks`` flags the segment's rows meanwhile (cleared on return)."""
    for k in range(rows.shape[0]):
        marks[rows[k]] = 1
    for q in range(node_rows_node.shape[0]):
        r = node_rows_node[q]
        if marks[r] == 0:
            w = sample_weight[r]
            left[row_y[r]] += w
            w_left += w
    for k in range(rows.shape[0]):
        marks[rows[k]] = 0
    return w_left


@njit(cache=True, inline="always")
def _weighted_candidate(p, left, total, w_left, w_total, criterion, min_samples_leaf,
                        min_weight_leaf, best, best_p, best_w_left, n_cand):
    """The dense weighted scan's candidate rules at virtual position ``p``."""
    if p + 1 < min_samples_leaf:
        return best, best_p, best_w_left, n_cand
    w_right = w_total - w_left
    if w_left < min_weight_leaf or w_right < min_weight_leaf:
        return best, best_p, best_w_left, n_cand
    if w_left <= 0.0 or w_right <= 0.0:
        return best, best_p, best_w_left, n_cand  # zero-weight child: impurity undefined
    n_cand += 1
    value = two_children_class_impurity(left, total, w_left, w_right, criterion)
    if value < best:
        return value, p, w_left, n_cand
    return best, best_p, best_w_left, n_cand


@njit(cache=True, inline="always")
def _scan_sparse_weighted(xs, rows, labels, n_neg, node_rows_node, row_y, sample_weight, total,
                          left, seg_sum, criterion, min_samples_leaf, min_weight_leaf,
                          exact_zero_block, marks):
    """Float weights: the dense float-weight class scan (``_class_scan``) over the virtual column
    of one node.

    Returns (best value, best virtual position, weight going left, candidates).
    """
    n_classes = left.shape[0]
    m = xs.shape[0]
    n_node = node_rows_node.shape[0]
    n_zero = n_node - m
    w_total = 0.0
    for k in range(n_classes):
        left[k] = 0.0
        w_total += total[k]
    w_left = 0.0
    best = np.inf
    best_p = -1
    best_w_left = 0.0
    n_cand = 0
    bound = n_node - min_samples_leaf  # the dense loop accumulates positions p < bound only
    for k in range(m):
        if k == n_neg and n_zero > 0:
            p = n_neg + n_zero - 1  # last zero: a candidate (the next value is positive)
            if p >= bound:
                break
            if exact_zero_block:
                w_left = _zero_rows_class(rows, node_rows_node, row_y, sample_weight, left,
                                          w_left, marks)
            else:
                w_seg = 0.0
                for c in range(n_classes):
                    seg_sum[c] = 0.0
                for j in range(m):
                    w = sample_weight[rows[j]]
                    seg_sum[labels[j]] += w
                    w_seg += w
                for c in range(n_classes):
                    left[c] += total[c] - seg_sum[c]
                w_left += w_total - w_seg
            if not _same_value(np.float32(0.0), xs[n_neg]):
                best, best_p, best_w_left, n_cand = _weighted_candidate(
                    p, left, total, w_left, w_total, criterion, min_samples_leaf,
                    min_weight_leaf, best, best_p, best_w_left, n_cand)
        p = k if k < n_neg else k + n_zero
        if p >= bound:
            break
        w = sample_weight[rows[k]]
        left[labels[k]] += w
        w_left += w
        if _same_value(xs[k], _next_value(xs, k, n_neg, n_zero)):
            continue
        best, best_p, best_w_left, n_cand = _weighted_candidate(
            p, left, total, w_left, w_total, criterion, min_samples_leaf, min_weight_leaf,
            best, best_p, best_w_left, n_cand)
    return best, best_p, best_w_left, n_cand



@njit(cache=True, inline="always")
def _binary_candidate(p, n_node, left_1, total_1, criterion, min_rows_leaf, table, best, best_p,
                      n_cand):
    """The dense two-class unit-weight scan's candidate at virtual position ``p`` (integer
    counts, so the value is the dense one bit for bit)."""
    n_left = p + 1
    if n_left < min_rows_leaf:
        return best, best_p, n_cand
    n_cand += 1
    value = _binary_counts_impurity(n_left, left_1, n_node - n_left, total_1 - left_1,
                                    criterion, table)
    if value < best:
        return value, p, n_cand
    return best, best_p, n_cand


@njit(cache=True, inline="always")
def _scan_sparse_unit_binary(xs, labels, n_neg, n_node, total_1, criterion, min_rows_leaf,
                             table):
    """Two classes, every weight 1: the dense two-class unit-weight scan (``_class_scan``) on the
    virtual column; the zero block's class-1 count is the node's minus the segment's (exact:
    integers).

    Returns (best value, best virtual position, candidates).
    """
    m = xs.shape[0]
    n_zero = n_node - m
    left_1 = 0
    best = np.inf
    best_p = -1
    n_cand = 0
    bound = n_node - min_rows_leaf
    for k in range(m):
        if k == n_neg and n_zero > 0:
            p = n_neg + n_zero - 1
            if p >= bound:
                break
            seg_1 = 0
            for j in range(m):
                seg_1 += np.int64(labels[j])  # int64 counts, also when run as plain Python
            left_1 += total_1 - seg_1
            if not _same_value(np.float32(0.0), xs[n_neg]):
                best, best_p, n_cand = _binary_candidate(p, n_node, left_1, total_1, criterion,
                                                         min_rows_leaf, table, best, best_p,
                                                         n_cand)
        p = k if k < n_neg else k + n_zero
        if p >= bound:
            break
        left_1 += np.int64(labels[k])
        if _same_value(xs[k], _next_value(xs, k, n_neg, n_zero)):
            continue
        best, best_p, n_cand = _binary_candidate(p, n_node, left_1, total_1, criterion,
                                                 min_rows_leaf, table, best, best_p, n_cand)
    return best, best_p, n_cand


@njit(cache=True, inline="always")
def _unit_candidate(p, n_node, left, total, sq_left, sq_right, criterion, min_rows_leaf, table,
                    best, best_p, n_cand):
    """The dense multi-class unit-weight scan's candidate at virtual position ``p``."""
    n_left = p + 1
    if n_left < min_rows_leaf:
        return best, best_p, n_cand
    n_cand += 1
    value = _unit_counts_impurity(n_left, n_node - n_left, left, total, sq_left, sq_right,
                                  criterion, table)
    if value < best:
        return value, p, n_cand
    return best, best_p, n_cand


@njit(cache=True, inline="always")
def _scan_sparse_unit(xs, labels, n_neg, n_node, total, left, zero, criterion, min_rows_leaf,
                      table):
    """Any number of classes, every weight 1: the dense unit-weight scan (``_class_scan``) on the
    virtual column.  Sums of squared counts are integers, so recomputing them after the zero
    block gives the dense values exactly.  Returns (best value, best virtual position,
    candidates)."""
    n_classes = left.shape[0]
    m = xs.shape[0]
    n_zero = n_node - m
    sq_left = 0
    sq_right = 0
    for c in range(n_classes):
        left[c] = 0
        sq_right += total[c] * total[c]
    best = np.inf
    best_p = -1
    n_cand = 0
    bound = n_node - min_rows_leaf
    for k in range(m):
        if k == n_neg and n_zero > 0:
            p = n_neg + n_zero - 1
            if p >= bound:
                break
            for c in range(n_classes):
                zero[c] = total[c]
            for j in range(m):
                zero[labels[j]] -= 1
            sq_left = 0
            sq_right = 0
            for c in range(n_classes):
                left[c] += zero[c]
                c_right = total[c] - left[c]
                sq_left += left[c] * left[c]
                sq_right += c_right * c_right
            if not _same_value(np.float32(0.0), xs[n_neg]):
                best, best_p, n_cand = _unit_candidate(p, n_node, left, total, sq_left,
                                                       sq_right, criterion, min_rows_leaf, table,
                                                       best, best_p, n_cand)
        p = k if k < n_neg else k + n_zero
        if p >= bound:
            break
        c = labels[k]
        c_left = left[c]
        c_right = total[c] - c_left
        sq_left += 2 * c_left + 1
        sq_right -= 2 * c_right - 1
        left[c] = c_left + 1
        if _same_value(xs[k], _next_value(xs, k, n_neg, n_zero)):
            continue
        best, best_p, n_cand = _unit_candidate(p, n_node, left, total, sq_left, sq_right,
                                               criterion, min_rows_leaf, table, best, best_p,
                                               n_cand)
    return best, best_p, n_cand


@njit(cache=True, inline="always")
def _store_sparse_split(f, s, value, node_weighted_impurity, w_node, split_info, xs, n_neg,
                        n_node, best_p, n_cand, record):
    """Write one numeric binary split (virtual positions ``0 .. best_p`` go left) to a record,
    as the dense ``_store_binary_split`` does with no missing rows (the missing rows' branch is
    the one with more rows, scikit-learn's rule)."""
    n_zero = n_node - xs.shape[0]
    threshold = _midpoint(_virtual_value(xs, n_neg, n_zero, best_p),
                          _virtual_value(xs, n_neg, n_zero, best_p + 1))
    write_split(record, f, s, value, (node_weighted_impurity - value) / w_node, split_info,
                threshold, best_p + 1, missing_side(0, False, best_p + 1, n_node), np.int64(0),
                np.int64(n_cand))


def find_best_splits_sparse_classification(
    entry_x,
    entry_row,
    entry_y,
    node_rows,
    row_y,
    sample_weight,
    seg_start,
    seg_end,
    entry_start,
    entry_end,
    seg_class_weight,
    feature_mask,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    xlog2x,
    exact_zero_block,
    n_chunks,
    record,
):
    """Best threshold of every feature for every node, classification, on the sparse layout.

    The sparse twin of :func:`~fasttree.kernels.find_best_splits_classification` (numeric
    features, no missing values): same candidates, same values, same record.

    Parameters
    ----------
    entry_x : ndarray of shape (nnz,), float32 (IN)
    entry_row : ndarray of shape (nnz,), int32 (IN)
    entry_y : ndarray of shape (nnz,), uint8 or uint16 (IN)
    node_rows : ndarray of shape (n_samples,), int32 (IN)
        The layout (see the module docstring).
    row_y : ndarray of shape (n_samples,), same dtype as ``entry_y`` (IN)
        Label of every row id (read for the zero rows of a weighted scan).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Empty means every weight is 1 (integer counts: the zero block costs O(1)).
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        The nodes' position ranges; they must not overlap, and every node must have been
        partitioned (its parent's :func:`partition_sparse_segments`).
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64 (IN)
        Their entries in every feature (:func:`segment_entries`).
    seg_class_weight : ndarray of shape (n_segments, n_classes), float64 (IN)
        From :func:`sparse_node_stats` (one output).
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
        0 skips the (feature, node) pair.
    criterion : int
        ``CRITERION_GINI`` or ``CRITERION_ENTROPY``.
    min_samples_leaf : int
    min_weight_leaf : float
    xlog2x : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``c log2 c`` table, required for entropy with unit weights (as in the dense kernel).
    exact_zero_block : bool
        Weighted fits: add the zero rows one by one in the dense order (bit-identical to the
        dense kernel, O(rows of the node) per feature with positive values in it) rather than as
        node totals minus the segment's (O(segment), equal up to float rounding).
    n_chunks : int
        Parallel tasks: the level's pairs are cut into this many runs of equal work
        (:func:`_pair_tasks`), each with its own scratch; results do not depend on it.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.

    Notes
    -----
    Each (feature, node) pair writes only its own record slot.  A Python function choosing a
    parallel kernel compiled for the call's kind only (weighted, two classes with unit weights,
    more classes with unit weights; see :func:`fasttree._jit.specialized`).
    """
    unit_weight = sample_weight.shape[0] == 0
    # per node, once: computed here so that the kernel's module does not optimize it again
    seg_weight, seg_weighted_impurity = weighted_node_impurities(seg_class_weight, criterion)
    # c log2 c of the counts: read by the unit-weight entropy scans only
    table = xlog2x if unit_weight and criterion == CRITERION_ENTROPY else np.empty(0)
    walk_zeros = bool(exact_zero_block and not unit_weight)
    _search(("classes", unit_weight, unit_weight and seg_class_weight.shape[1] == 2),
            (entry_x, entry_row, node_rows, sample_weight, seg_start, seg_end, entry_start,
             entry_end, feature_mask, min_samples_leaf, min_weight_leaf),
            (entry_y, row_y, seg_class_weight, seg_weight, seg_weighted_impurity, criterion,
             table, walk_zeros), _min_rows_leaf(min_samples_leaf, min_weight_leaf), walk_zeros,
            n_chunks, record)


def _min_rows_leaf(min_samples_leaf, min_weight_leaf):
    """Rows a child needs at least where every row weighs 1 (both minimums one row count)."""
    return np.int64(max(min_samples_leaf, np.ceil(min_weight_leaf)))


def _classes_kind(unit_weight, binary):
    """The class-count kind's hooks (:func:`_make_sparse_search`): ``unit_weight`` (no weights)
    and ``binary`` (unit weights and two classes) are flags they close over, so numba compiles
    only the scan the kind uses.  Arguments: ``(entry_y, row_y, seg_class_weight, seg_weight,
    seg_weighted_impurity, criterion, table, walk_zeros)``: ``walk_zeros`` a weighted scan's
    ``exact_zero_block``."""

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(layout, args, level):
        n_classes = args[2].shape[1]
        return (np.empty(n_classes), np.empty(n_classes),
                np.empty(n_classes, dtype=np.int64), np.empty(n_classes, dtype=np.int64),
                np.empty(n_classes, dtype=np.int64),
                np.zeros(args[1].shape[0] if args[7] else 0, dtype=np.uint8))

    @njit(cache=True, inline="always")
    def scan_pair(layout, args, level, scratch, f, s, start, end, a, b, record):
        (entry_x, entry_row, node_rows, sample_weight, _, _, _, _, _, min_samples_leaf,
         min_weight_leaf) = layout
        (entry_y, row_y, seg_class_weight, seg_weight, seg_weighted_impurity, criterion, table,
         walk_zeros) = args
        min_rows_leaf = level
        left, seg_sum, left_count, total_count, zero_count, marks = scratch
        n_node = end - start
        xs = entry_x[a:b]
        labels = entry_y[a:b]
        n_neg = _n_negative(xs)
        # each test is a constant flag: numba drops the scans it rules out
        if not unit_weight:
            best, best_p, w_left, n_cand = _scan_sparse_weighted(
                xs, entry_row[a:b], labels, n_neg, node_rows[start:end], row_y, sample_weight,
                seg_class_weight[s], left, seg_sum, criterion, min_samples_leaf,
                min_weight_leaf, walk_zeros, marks)
        elif binary:
            best, best_p, n_cand = _scan_sparse_unit_binary(
                xs, labels, n_neg, n_node, np.int64(seg_class_weight[s, 1]), criterion,
                min_rows_leaf, table)
            w_left = best_p + 1.0
        else:
            for c in range(total_count.shape[0]):
                total_count[c] = np.int64(seg_class_weight[s, c])
            best, best_p, n_cand = _scan_sparse_unit(
                xs, labels, n_neg, n_node, total_count, left_count, zero_count, criterion,
                min_rows_leaf, table)
            w_left = best_p + 1.0
        if best_p >= 0:
            _store_sparse_split(
                f, s, best, seg_weighted_impurity[s], seg_weight[s],
                _binary_split_info(w_left, seg_weight[s] - w_left, 0.0, _NO_TABLE), xs, n_neg,
                n_node, best_p, n_cand, record)

    return new_scratch, scan_pair


# -- split search: regression -----------------------------------------------------------------
@njit(cache=True, inline="always")
def _unit_regression_candidate(p, n_node, sum_left, sum_total, min_rows_leaf, reciprocal, best,
                               best_p, n_cand):
    """The dense unit-weight squared-error scan's candidate (the reciprocals of the counts from
    the table: the dense fast path multiplies by them rather than divide)."""
    n_left = p + 1
    if n_left < min_rows_leaf:
        return best, best_p, n_cand
    n_cand += 1
    sum_right = sum_total - sum_left
    proxy = (sum_left * sum_left * reciprocal[n_left]
             + sum_right * sum_right * reciprocal[n_node - n_left])
    if proxy > best:
        return proxy, p, n_cand
    return best, best_p, n_cand


@njit(cache=True, inline="always")
def _general_regression_candidate(p, n_node, w_left, sum_left, w_total, sum_total, pos_left,
                                  pos_total, criterion, min_samples_leaf, min_weight_leaf, best,
                                  best_p, best_w_left, n_cand):
    """The dense general regression scan's candidate at virtual position ``p`` (float weights,
    or Poisson): row, weight and, for Poisson, positive-target rules, then the criterion's
    proxy from :func:`~fasttree.kernels.criteria.regression_proxy`."""
    if p + 1 < min_samples_leaf or n_node - p - 1 < min_samples_leaf:
        return best, best_p, best_w_left, n_cand
    w_right = w_total - w_left
    if w_left < min_weight_leaf or w_right < min_weight_leaf:
        return best, best_p, best_w_left, n_cand
    if w_left <= 0.0 or w_right <= 0.0:
        return best, best_p, best_w_left, n_cand
    if criterion == CRITERION_POISSON and (pos_left == 0 or pos_left == pos_total):
        return best, best_p, best_w_left, n_cand  # a child with no positive target
    n_cand += 1
    proxy = regression_proxy(w_left, sum_left, w_right, sum_total - sum_left, criterion)
    if proxy > best:
        return proxy, p, w_left, n_cand
    return best, best_p, best_w_left, n_cand


@njit(cache=True, inline="always")
def _scan_sparse_regression(xs, ys, rows, n_neg, node_rows_node, row_y, sample_weight, w_total,
                            sum_total, pos_total, criterion, min_samples_leaf, min_weight_leaf,
                            min_rows_leaf, reciprocal, exact_zero_block, marks):
    """The dense regression scans on the virtual column of one node: the unit-weight squared
    error fast path, or the general one (float weights, or Poisson), as the dense kernel picks.

    Targets are floats, so with ``exact_zero_block`` the zero rows are added one by one in the
    dense order (ascending row id).  Returns (best proxy, best virtual position, weight going
    left, candidates).
    """
    unit_weight = sample_weight.shape[0] == 0
    general = not unit_weight or criterion != CRITERION_SQUARED_ERROR
    m = xs.shape[0]
    n_node = node_rows_node.shape[0]
    n_zero = n_node - m
    w_left = 0.0
    sum_left = 0.0
    pos_left = 0
    best = -np.inf
    best_p = -1
    best_w_left = 0.0
    n_cand = 0
    bound = n_node - (min_samples_leaf if general else min_rows_leaf)
    for k in range(m):
        if k == n_neg and n_zero > 0:
            p = n_neg + n_zero - 1
            if p >= bound:
                break
            if exact_zero_block:
                for j in range(m):
                    marks[rows[j]] = 1
                for q in range(n_node):
                    r = node_rows_node[q]
                    if marks[r] == 0:
                        y = row_y[r]
                        if general:
                            w = 1.0 if unit_weight else sample_weight[r]
                            w_left += w
                            sum_left += w * y
                            pos_left += y > 0.0
                        else:
                            sum_left += y
                for j in range(m):
                    marks[rows[j]] = 0
            else:
                w_seg = 0.0
                sum_seg = 0.0
                pos_seg = 0
                for j in range(m):
                    w = 1.0 if unit_weight else sample_weight[rows[j]]
                    w_seg += w
                    sum_seg += w * ys[j]
                    pos_seg += ys[j] > 0.0
                w_left += w_total - w_seg
                sum_left += sum_total - sum_seg
                pos_left += pos_total - pos_seg
            if not _same_value(np.float32(0.0), xs[n_neg]):
                if general:
                    best, best_p, best_w_left, n_cand = _general_regression_candidate(
                        p, n_node, w_left, sum_left, w_total, sum_total, pos_left, pos_total,
                        criterion, min_samples_leaf, min_weight_leaf, best, best_p, best_w_left,
                        n_cand)
                else:
                    best, best_p, n_cand = _unit_regression_candidate(
                        p, n_node, sum_left, sum_total, min_rows_leaf, reciprocal, best, best_p,
                        n_cand)
        p = k if k < n_neg else k + n_zero
        if p >= bound:
            break
        if general:
            w = 1.0 if unit_weight else sample_weight[rows[k]]
            w_left += w
            sum_left += w * ys[k]
            pos_left += ys[k] > 0.0
        else:
            sum_left += ys[k]
        if _same_value(xs[k], _next_value(xs, k, n_neg, n_zero)):
            continue
        if general:
            best, best_p, best_w_left, n_cand = _general_regression_candidate(
                p, n_node, w_left, sum_left, w_total, sum_total, pos_left, pos_total, criterion,
                min_samples_leaf, min_weight_leaf, best, best_p, best_w_left, n_cand)
        else:
            best, best_p, n_cand = _unit_regression_candidate(
                p, n_node, sum_left, sum_total, min_rows_leaf, reciprocal, best, best_p, n_cand)
    if not general:
        best_w_left = best_p + 1.0
    return best, best_p, best_w_left, n_cand


def find_best_splits_sparse_regression(
    entry_x,
    entry_row,
    entry_y,
    node_rows,
    row_y,
    sample_weight,
    seg_start,
    seg_end,
    entry_start,
    entry_end,
    seg_sums,
    feature_mask,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    reciprocal,
    exact_zero_block,
    n_chunks,
    record,
):
    """Best threshold of every feature for every node, regression, on the sparse layout.

    The sparse twin of :func:`~fasttree.kernels.find_best_splits_regression` (numeric features,
    no missing values); same contract as :func:`find_best_splits_sparse_classification`, except:

    Parameters
    ----------
    entry_y, row_y : float64 (IN)
        Regression targets of the entries and of every row id.
    seg_sums : ndarray of shape (n_segments, 3), float64 (IN)
        ``[sum w, sum w*y, c]`` per node (:func:`sparse_node_stats`, one output).
    criterion : int
        ``CRITERION_SQUARED_ERROR`` or ``CRITERION_POISSON``.
    reciprocal : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``1 / c`` table (:func:`~fasttree.kernels.reciprocal_table`), required for squared error
        with unit weights.
    exact_zero_block : bool
        Targets are floats: True adds the zero rows one by one in the dense order (bit-identical
        trees, O(rows of the node) per feature with positive values in it), False as node sums
        minus the segment's (O(segment), equal up to float rounding).
    """
    # Poisson refuses a child without a positive target: rows with y > 0 per node, once
    seg_positive = np.zeros(seg_start.shape[0], dtype=np.int64)
    if criterion == CRITERION_POISSON:
        positive = np.concatenate(([0], np.cumsum(row_y[node_rows] > 0.0)))
        seg_positive = positive[seg_end] - positive[seg_start]
    _search(("sums",),
            (entry_x, entry_row, node_rows, sample_weight, seg_start, seg_end, entry_start,
             entry_end, feature_mask, min_samples_leaf, min_weight_leaf),
            (entry_y, row_y, seg_sums, criterion, reciprocal, exact_zero_block),
            (_min_rows_leaf(min_samples_leaf, min_weight_leaf), seg_positive),
            bool(exact_zero_block), n_chunks, record)


def _sums_kind():
    """The regression sums' hooks (:func:`_make_sparse_search`).  Arguments: ``(entry_y, row_y,
    seg_sums, criterion, reciprocal, exact_zero_block)``."""

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(layout, args, level):
        return np.zeros(args[1].shape[0] if args[5] else 0, dtype=np.uint8)

    @njit(cache=True, inline="always")
    def scan_pair(layout, args, level, marks, f, s, start, end, a, b, record):
        (entry_x, entry_row, node_rows, sample_weight, _, _, _, _, _, min_samples_leaf,
         min_weight_leaf) = layout
        entry_y, row_y, seg_sums, criterion, reciprocal, exact_zero_block = args
        min_rows_leaf, seg_positive = level
        n_node = end - start
        xs = entry_x[a:b]
        n_neg = _n_negative(xs)
        best, best_p, w_left, n_cand = _scan_sparse_regression(
            xs, entry_y[a:b], entry_row[a:b], n_neg, node_rows[start:end], row_y,
            sample_weight, seg_sums[s, 0], seg_sums[s, 1], seg_positive[s], criterion,
            min_samples_leaf, min_weight_leaf, min_rows_leaf, reciprocal, exact_zero_block,
            marks)
        if best_p >= 0:
            _store_sparse_split(
                f, s, max(seg_sums[s, 2] - best, 0.0),
                weighted_regression_impurity(seg_sums[s, 0], seg_sums[s, 1], seg_sums[s, 2],
                                             criterion),
                seg_sums[s, 0],
                _binary_split_info(w_left, seg_sums[s, 0] - w_left, 0.0, _NO_TABLE), xs,
                n_neg, n_node, best_p, n_cand, record)

    return new_scratch, scan_pair


# -- moving rows ------------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def route_node_rows(entry_x, entry_row, feature_ptr, row_pos, node_rows, seg_start, seg_end,
                    split_feature, split_kind, split_threshold, split_missing_branch, row_branch):
    """Send the rows of the split nodes to their children: ``node_rows`` and ``row_pos`` only.

    ::

        node_rows [start ............................. end)   ascending row ids
                  [ left rows, ascending | right rows, ascending ]
                   start ........ start+n_left ........ end

    The branch of each row is :func:`~fasttree.kernels.branch_of` of its value of the split
    feature, 0.0 when it is not stored.  Invariant of the in-place pass: ``node_rows[start:
    write)`` holds the left rows seen so far, ``write <= q``; right rows wait in a buffer.
    Feature segments are not moved here (:func:`partition_sparse_segments`): the split feature's
    own segment already lists the left rows' entries first.

    Parameters
    ----------
    entry_x, entry_row : ndarray of shape (nnz,), float32 / int32 (IN)
    feature_ptr : ndarray of shape (n_features + 1,), int64 (IN)
    row_pos, node_rows : ndarray of shape (n_samples,), int32 (IN/OUT)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        The split nodes (not overlapping).
    split_feature, split_kind : ndarray of shape (n_segments,), int64 (IN)
    split_threshold : ndarray of shape (n_segments,), float64 (IN)
    split_missing_branch : ndarray of shape (n_segments,), int64 (IN)
        Threshold splits (``SPLIT_THRESHOLD``) only.
    row_branch : ndarray of shape (n_samples,), uint8 (scratch)

    Returns
    -------
    n_left : ndarray of shape (n_segments,), int64
        Rows sent left, per node.
    """
    n_segments = seg_start.shape[0]
    no_map = np.empty(0, dtype=np.int32)
    # find every segment before any row_pos changes: the searches read other nodes' rows
    seg_a, seg_b = find_segments(entry_row, feature_ptr, row_pos, seg_start, seg_end,
                                 split_feature)
    n_left = np.zeros(n_segments, dtype=np.int64)
    for s in prange(n_segments):
        start = seg_start[s]
        end = seg_end[s]
        zero_branch = branch_of(np.float32(0.0), split_kind[s], split_threshold[s],
                                split_missing_branch[s], 0, 0, no_map)
        for q in range(start, end):
            row_branch[node_rows[q]] = zero_branch
        for k in range(seg_a[s], seg_b[s]):
            row_branch[entry_row[k]] = branch_of(entry_x[k], split_kind[s], split_threshold[s],
                                                 split_missing_branch[s], 0, 0, no_map)
        buf = np.empty(end - start, dtype=np.int32)
        write = start
        n_right = 0
        for q in range(start, end):
            r = node_rows[q]
            if row_branch[r] == 0:
                node_rows[write] = r
                write += 1
            else:
                buf[n_right] = r
                n_right += 1
        for j in range(n_right):
            node_rows[write + j] = buf[j]
        for q in range(start, end):
            row_pos[node_rows[q]] = q
        n_left[s] = write - start
    return n_left


@njit(parallel=True, cache=True)
def partition_sparse_segments(entry_x, entry_row, entry_y, row_pos, seg_start, seg_end,
                              entry_start, entry_end, split_feature, split_n_left, max_segment,
                              n_chunks):
    """Stable in-place partition of the split nodes' segments, every feature in parallel.

    ::

        before, feature g, node [start, end):  [ e3 e0 e7 e1 e5 ]   entries sorted by value
        row_pos[row] < start + n_left:            1  0  1  0  1     (set by route_node_rows)
        after:                                 [ e3 e7 e5 | e0 e1 ] left child | right child,
                                                                    each still sorted (stable)

    Call after :func:`route_node_rows` on the same nodes.  Invariant: entries ``[a, write)``
    are the left ones seen so far, ``write <= k``; right entries wait in a buffer.

    Parameters
    ----------
    entry_x, entry_row, entry_y : ndarray of shape (nnz,) (IN/OUT)
    row_pos : ndarray of shape (n_samples,), int32 (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64 (IN)
        The nodes' entries (:func:`segment_entries`, before or after :func:`route_node_rows`).
    split_feature : ndarray of shape (n_segments,), int64 (IN)
        Its own segment is already in order and is skipped.
    split_n_left : ndarray of shape (n_segments,), int64 (IN)
        Rows of each node sent left.
    max_segment : int
        Upper bound of a segment's length (buffer size), e.g. the most entries of a feature.
    n_chunks : int
        Parallel tasks, each a run of pairs of equal entries (:func:`_pair_tasks`); results do
        not depend on it.
    """
    n_segments = entry_start.shape[1]
    first = _pair_tasks(entry_start, entry_end, seg_start, seg_end, np.bool_(False), n_chunks)
    for t in prange(n_chunks):
        buf_x = np.empty(max_segment, dtype=np.float32)
        buf_row = np.empty(max_segment, dtype=np.int32)
        buf_y = np.empty(max_segment, dtype=entry_y.dtype)
        for q in range(first[t], first[t + 1]):
            g = q // n_segments
            s = q - g * n_segments
            a = entry_start[g, s]
            b = entry_end[g, s]
            if split_feature[s] != g and b > a:
                middle = seg_start[s] + split_n_left[s]
                write = a
                n_right = 0
                for k in range(a, b):
                    r = entry_row[k]
                    if row_pos[r] < middle:
                        entry_x[write] = entry_x[k]
                        entry_row[write] = r
                        entry_y[write] = entry_y[k]
                        write += 1
                    else:
                        buf_x[n_right] = entry_x[k]
                        buf_row[n_right] = r
                        buf_y[n_right] = entry_y[k]
                        n_right += 1
                for j in range(n_right):
                    entry_x[write + j] = buf_x[j]
                    entry_row[write + j] = buf_row[j]
                    entry_y[write + j] = buf_y[j]


# -- prediction on CSR rows -------------------------------------------------------------------
@njit(cache=True, inline="always")
def _used_features(feature):
    """1 + the largest split feature (features past it are never read)."""
    n_used = 1
    for node in range(feature.shape[0]):
        n_used = max(n_used, feature[node] + 1)
    return n_used


@njit(cache=True, no_cpython_wrapper=True)
def _check_csr(data, indices, indptr):
    """A CSR matrix's arrays index only themselves (``ValueError`` otherwise)."""
    if indptr.shape[0] < 1 or indptr[0] != 0:
        raise ValueError("indptr must start at 0")
    if data.shape[0] != indices.shape[0] or indptr[indptr.shape[0] - 1] > data.shape[0]:
        raise ValueError("indptr, indices and data of the CSR matrix disagree in length")
    for i in range(indptr.shape[0] - 1):
        if indptr[i + 1] < indptr[i]:
            raise ValueError("indptr must be non-decreasing")
    for k in range(indices.shape[0]):
        if indices[k] < 0:
            raise ValueError("the CSR matrix has a negative column index")


@njit(parallel=True, cache=True)
def apply_tree_csr(data, indices, indptr, children_left, children_right, feature, threshold,
                   split_kind, missing_branch, category_offset, category_n_codes,
                   category_branch):
    """Leaf reached by every row of a CSR matrix; a value not stored is 0.0.

    Parameters
    ----------
    data : ndarray of shape (nnz,), float32 (IN)
        NaN for a missing value (scikit-learn rejects NaN in sparse input; the routing rule is
        still the dense one).
    indices : ndarray of shape (nnz,), int32 (IN)
        Column of each value; any order within a row; duplicates are summed (scipy's meaning).
    indptr : ndarray of shape (n_samples + 1,), int64 (IN)
    children_left, ..., category_branch : the tree's node arrays (IN)
        ``Tree._routing()``, as for :func:`~fasttree.kernels.apply_tree`.

    Returns
    -------
    leaf : ndarray of shape (n_samples,), int32

    Notes
    -----
    Each task scatters a row's values into a dense scratch row (zeros elsewhere), walks the tree
    with :func:`~fasttree.kernels.branch_of` (every kind of split node), then clears only what it
    wrote: O(stored values + depth) per row.
    """
    _check_csr(data, indices, indptr)
    check_tree(-1, children_left, children_right, feature, threshold, split_kind,
               missing_branch, category_offset, category_n_codes, category_branch)
    n_samples = indptr.shape[0] - 1
    n_used = _used_features(feature)
    leaf = np.empty(n_samples, dtype=np.int32)
    n_blocks = (n_samples + _BLOCK - 1) // _BLOCK
    for block in prange(n_blocks):
        row_x = np.zeros(n_used, dtype=np.float32)
        for i in range(block * _BLOCK, min(n_samples, (block + 1) * _BLOCK)):
            for k in range(indptr[i], indptr[i + 1]):
                if indices[k] < n_used:
                    row_x[indices[k]] += data[k]
            node = 0
            while children_left[node] != -1:
                node = children_left[node] + branch_of(
                    row_x[feature[node]], split_kind[node], threshold[node],
                    missing_branch[node], category_offset[node], category_n_codes[node],
                    category_branch)
            leaf[i] = node
            for k in range(indptr[i], indptr[i + 1]):
                if indices[k] < n_used:
                    row_x[indices[k]] = 0.0
    return leaf


@njit(parallel=True, cache=True)
def decision_paths_csr(data, indices, indptr, children_left, children_right, feature, threshold,
                       split_kind, missing_branch, category_offset, category_n_codes,
                       category_branch, max_depth):
    """Nodes visited by every row of a CSR matrix, root first (:func:`apply_tree_csr`'s walk).

    Parameters
    ----------
    data, indices, indptr, children_left, ..., category_branch
        As in :func:`apply_tree_csr`.
    max_depth : int
        Depth of the tree.

    Returns
    -------
    path : ndarray of shape (n_samples, max_depth + 1), int32
        ``path[i, :length[i]]`` are the nodes row ``i`` visits; the rest is ``-1``.
    length : ndarray of shape (n_samples,), int32
    """
    _check_csr(data, indices, indptr)
    depth = check_tree(-1, children_left, children_right, feature, threshold, split_kind,
                       missing_branch, category_offset, category_n_codes, category_branch)
    if depth > max_depth:
        raise ValueError("max_depth is less than the tree's depth")
    n_samples = indptr.shape[0] - 1
    n_used = _used_features(feature)
    path = np.full((n_samples, max_depth + 1), -1, dtype=np.int32)
    length = np.empty(n_samples, dtype=np.int32)
    n_blocks = (n_samples + _BLOCK - 1) // _BLOCK
    for block in prange(n_blocks):
        row_x = np.zeros(n_used, dtype=np.float32)
        for i in range(block * _BLOCK, min(n_samples, (block + 1) * _BLOCK)):
            for k in range(indptr[i], indptr[i + 1]):
                if indices[k] < n_used:
                    row_x[indices[k]] += data[k]
            node = 0
            d = 0
            path[i, 0] = 0
            while children_left[node] != -1:
                node = children_left[node] + branch_of(
                    row_x[feature[node]], split_kind[node], threshold[node],
                    missing_branch[node], category_offset[node], category_n_codes[node],
                    category_branch)
                d += 1
                path[i, d] = node
            length[i] = d + 1
            for k in range(indptr[i], indptr[i + 1]):
                if indices[k] < n_used:
                    row_x[indices[k]] = 0.0
    return path, length


__all__ = [
    "apply_tree_csr",
    "build_sparse_layout",
    "decision_paths_csr",
    "find_best_splits_sparse_classification",
    "find_best_splits_sparse_regression",
    "find_segments",
    "partition_sparse_segments",
    "route_node_rows",
    "segment_entries",
    "sparse_node_stats",
    "sparse_non_constant",
]


# -- random thresholds and several outputs ----------------------------------------------------
@njit(cache=True, inline="always")
def _zero_block_rows(rows, node_rows_node, marks, out):
    """Write the node's rows that the segment does not store (its zero block) to ``out``, in
    ascending id (the order ``node_rows`` keeps, the dense order); returns how many.  ``marks``
    flags the segment's rows meanwhile (cleared on return)."""
    for k in range(rows.shape[0]):
        marks[rows[k]] = 1
    z = 0
    for q in range(node_rows_node.shape[0]):
        r = node_rows_node[q]
        if marks[r] == 0:
            out[z] = r
            z += 1
    for k in range(rows.shape[0]):
        marks[rows[k]] = 0
    return z


@njit(cache=True, inline="always")
def _virtual_pair(entry_x, entry_row, node_rows, start, end, a, b, marks, zero_rows):
    """A pair's entries ``[a, b)`` as the node ``[start, end)``'s virtual sequence: their values
    and rows, the negatives' count, and the zero block's size and rows (into ``zero_rows``, by
    :func:`_zero_block_rows`)."""
    xs = entry_x[a:b]
    rows = entry_row[a:b]
    _zero_block_rows(rows, node_rows[start:end], marks, zero_rows)
    return xs, rows, _n_negative(xs), end - start - xs.shape[0]


@njit(cache=True, inline="always")
def _virtual_row(rows, zero_rows, n_neg, n_zero, p):
    """Row id at virtual position ``p`` (the zero block's rows in ascending id order)."""
    if p < n_neg:
        return rows[p]
    if p < n_neg + n_zero:
        return zero_rows[p - n_neg]
    return rows[p - n_zero]


def find_splits_sparse_generic(
    entry_x, entry_row, node_rows, Y, sample_weight, seg_start, seg_end, entry_start,
    entry_end, seg_stats, feature_mask, offsets, criterion, min_samples_leaf, min_weight_leaf,
    uniform, coin, monotonic_cst, node_bounds, n_chunks,
    record,
):
    """Random thresholds, or every threshold for several outputs, on the sparse layout.

    The sparse twin of :func:`~fasttree.kernels.find_splits_multioutput` (no missing values):
    the targets are read by row id from ``Y`` and accumulated into statistics vectors, one
    output's block after another (:mod:`fasttree.kernels.multi_output`), walking the virtual
    column (negatives, the zero block in row-id order, positives) exactly as the dense kernels
    walk the dense column, so trees are identical to the dense ones.

    Parameters
    ----------
    entry_x, entry_row, node_rows : the layout (IN)
        See the module docstring.
    Y : ndarray of shape (n_samples, n_outputs), float64 (IN)
        Class codes or regression values by row id.
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64 (IN)
        As in :func:`find_best_splits_sparse_classification`.
    seg_stats : ndarray of shape (n_segments, offsets[-1]), float64 (IN)
        Each node's statistics vector.
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
    offsets : ndarray of shape (n_outputs + 1,), int64 (IN)
    criterion : int
        Gini, entropy, squared error or Poisson.
    min_samples_leaf : int
    min_weight_leaf : float
    uniform, coin : ndarray of shape (n_features, n_segments) or (0, 0) (IN)
        Empty: every threshold; otherwise one random threshold per pair (``coin`` is unused:
        sparse input has no missing values, but it is drawn so that the random state advances
        as in the dense splitter).
    monotonic_cst, node_bounds : ndarray (IN)
        Monotonicity constraints (:mod:`fasttree.kernels.monotonic`), one output only: on the
        fraction of class 0 (classification) or the mean (regression).
    n_chunks : int
        Parallel tasks, as in :func:`find_best_splits_sparse_classification`.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.
    """
    seg_weight, seg_weighted_impurity = multi_node_impurities(seg_stats, offsets, criterion)
    _search(("several",),
            (entry_x, entry_row, node_rows, sample_weight, seg_start, seg_end, entry_start,
             entry_end, feature_mask, min_samples_leaf, min_weight_leaf),
            (Y, seg_stats, offsets, criterion, uniform, monotonic_cst, node_bounds),
            (largest_node(seg_start, seg_end), seg_weight, seg_weighted_impurity), True,
            n_chunks, record)


def _several_kind():
    """The statistics vectors' hooks (:func:`_make_sparse_search`): several outputs, random
    thresholds, constraints.  Arguments: ``(Y, seg_stats, offsets, criterion, uniform,
    monotonic_cst, node_bounds)``."""

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(layout, args, level):
        return (np.empty(args[1].shape[1]), np.empty(level[0], dtype=np.int32),
                np.zeros(layout[2].shape[0], dtype=np.uint8))

    @njit(cache=True, inline="always")
    def scan_pair(layout, args, level, scratch, f, s, start, end, a, b, record):
        (entry_x, entry_row, node_rows, sample_weight, _, _, _, _, _, min_samples_leaf,
         min_weight_leaf) = layout
        Y, seg_stats, offsets, criterion, uniform, monotonic_cst, node_bounds = args
        _, seg_weight, seg_weighted_impurity = level
        left, zero_rows, marks = scratch
        unit_weight = sample_weight.shape[0] == 0
        random = uniform.shape[0] > 0
        regression = criterion >= CRITERION_SQUARED_ERROR
        # the constrained statistic: class 0's weight, or the sum of w*y
        at = 1 if regression else 0
        n_node = end - start
        xs, rows, n_neg, n_zero = _virtual_pair(entry_x, entry_row, node_rows, start, end, a, b,
                                                marks, zero_rows)
        stop = n_node
        t = 0.0
        if random:  # the pair is not constant: no NaN
            t = threshold_between(_virtual_value(xs, n_neg, n_zero, 0),
                                  _virtual_value(xs, n_neg, n_zero, n_node - 1), n_node, 0,
                                  uniform[f, s])
            stop = 0
            while stop < n_node and _virtual_value(xs, n_neg, n_zero, stop) <= t:
                stop += 1
        total = seg_stats[s]
        w_total = seg_weight[s]
        cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
        left[:] = 0.0
        w_left = 0.0
        best = np.inf
        best_p = -1
        n_cand = 0
        for p in range(stop):
            r = _virtual_row(rows, zero_rows, n_neg, n_zero, p)
            w = 1.0 if unit_weight else sample_weight[r]
            _add_row(left, Y, r, w, offsets, regression, criterion)
            w_left += w
            if p + 1 < stop and _same_value(_virtual_value(xs, n_neg, n_zero, p),
                                            _virtual_value(xs, n_neg, n_zero, p + 1)):
                continue
            if random and p + 1 != stop:
                continue
            w_right = w_total - w_left
            if not leaf_minimums_met(p + 1, n_node - p - 1, w_left, w_right, min_samples_leaf,
                                     min_weight_leaf):
                continue
            if cst != 0 and not monotonic_ok(cst, lower, upper, left[at] / w_left,
                                             (total[at] - left[at]) / w_right):
                continue
            n_cand += 1
            value = _children_impurity(left, w_left, w_right, total, offsets, regression,
                                       criterion)
            if value < best:
                best = value
                best_p = p
        if best_p < 0 or best == np.inf:
            return
        if random:
            _store_random_split(f, s, best, seg_weighted_impurity[s], w_total, t, best_p + 1,
                                n_node, 0, False, record)
        else:
            # split information 0, as the dense multi-output kernel's: gain ratio takes one
            # output
            _store_sparse_split(f, s, best, seg_weighted_impurity[s], w_total, 0.0, xs, n_neg,
                                n_node, best_p, n_cand, record)

    return new_scratch, scan_pair


def find_splits_sparse_absolute_error(
    entry_x, entry_row, node_rows, sample_weight, seg_start, seg_end, entry_start, entry_end,
    seg_stats, feature_mask, rank_of_row, node_sorted_y, min_samples_leaf,
    min_weight_leaf, uniform, coin, monotonic_cst, node_bounds, n_chunks,
    record,
):
    """Absolute error on the sparse layout: the sparse twin of
    :func:`~fasttree.kernels.find_splits_absolute_error`.

    Each (feature, node) pair's rows are laid out in the virtual column's order (negatives, the
    zero block by row id, positives) with their target ranks, then scanned by the dense pair
    scan, so the cost is that of the dense kernel (O(n log n) per pair): the medians need every
    row, zero or not.

    Parameters
    ----------
    entry_x, entry_row, node_rows : the layout (IN)
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    entry_start, entry_end : ndarray of shape (n_features, n_segments), int64 (IN)
        Their entries (:func:`segment_entries`).
    seg_stats : ndarray of shape (n_segments, 4 * n_outputs), float64 (IN)
        From :func:`~fasttree.kernels.node_target_ranks` (with ``rank_of_row`` and
        ``node_sorted_y``, OUT there, IN here), one block of 4 columns per output.
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
    rank_of_row : ndarray of shape (n_outputs, n_samples), int64 (IN)
    node_sorted_y : ndarray of shape (n_outputs, n_samples), float64 (IN)
    min_samples_leaf : int
    min_weight_leaf : float
    uniform, coin : ndarray of shape (n_features, n_segments) or (0, 0) (IN)
    monotonic_cst, node_bounds : ndarray (IN)
        Monotonicity constraints (:mod:`fasttree.kernels.monotonic`) on the medians.
    n_chunks : int
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.
    """
    _search(("absolute_error",),
            (entry_x, entry_row, node_rows, sample_weight, seg_start, seg_end, entry_start,
             entry_end, feature_mask, min_samples_leaf, min_weight_leaf),
            (seg_stats, rank_of_row, node_sorted_y, uniform, coin, monotonic_cst, node_bounds),
            largest_node(seg_start, seg_end), True, n_chunks, record)


def _absolute_error_kind():
    """The absolute error's hooks (:func:`_make_sparse_search`).  Arguments: ``(seg_stats,
    rank_of_row, node_sorted_y, uniform, coin, monotonic_cst, node_bounds)``."""

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(layout, args, max_n):
        return (_ae_scratch(max_n, args[1].shape[0]), np.empty(max_n, dtype=np.float32),
                np.empty(max_n, dtype=np.int32), np.zeros(layout[2].shape[0], dtype=np.uint8))

    @njit(cache=True, inline="always")
    def scan_pair(layout, args, max_n, scratch, f, s, start, end, a, b, record):
        (entry_x, entry_row, node_rows, sample_weight, _, _, _, _, _, min_samples_leaf,
         min_weight_leaf) = layout
        seg_stats, rank_of_row, node_sorted_y, uniform, coin, monotonic_cst, node_bounds = args
        ae, vx, zero_rows, marks = scratch
        tw, twy, order_ranks, order_w, fwd, fwd_m, bwd, bwd_m, medians = ae
        unit_weight = sample_weight.shape[0] == 0
        n_outputs = rank_of_row.shape[0]
        n_node = end - start
        xs, rows, n_neg, n_zero = _virtual_pair(entry_x, entry_row, node_rows, start, end, a, b,
                                                marks, zero_rows)
        for z in range(n_zero):
            r = zero_rows[z]
            for o in range(n_outputs):
                order_ranks[o, n_neg + z] = rank_of_row[o, r]
            order_w[n_neg + z] = 1.0 if unit_weight else sample_weight[r]
            vx[n_neg + z] = 0.0
        for k in range(rows.shape[0]):
            v = k if k < n_neg else k + n_zero
            for o in range(n_outputs):
                order_ranks[o, v] = rank_of_row[o, rows[k]]
            order_w[v] = 1.0 if unit_weight else sample_weight[rows[k]]
            vx[v] = xs[k]
        cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
        _ae_split_pair(np.int64(f), np.int64(s), vx[:n_node], node_sorted_y[:, start:end], 0,
                       seg_stats[s], min_samples_leaf, min_weight_leaf, uniform, coin, cst,
                       lower, upper, tw, twy, order_ranks, order_w, fwd, fwd_m, bwd, bwd_m,
                       medians, record)

    return new_scratch, scan_pair


# -- the searches' one walk of a level's pairs ------------------------------------------------
#: the hooks of each statistics kind's search: ``new_scratch(layout, args, level)`` (a task's
#: own), ``scan_pair(layout, args, level, scratch, f, s, start, end, a, b, record)`` (one
#: searched pair, writing its record slot); ``level`` is what the kind's caller of
#: :func:`_search` computes once a level
_KINDS = {"classes": _classes_kind, "sums": _sums_kind, "several": _several_kind,
          "absolute_error": _absolute_error_kind}
_NO_TABLE = np.empty(0)  # split information from logarithms


def _search(kind, layout, args, level, walks_rows, n_chunks, record):
    """Run the search of ``kind`` (``(name, *flags)``, see :data:`_KINDS`) on the level whose
    pairs ``layout`` names: ``(entry_x, entry_row, node_rows, sample_weight, seg_start,
    seg_end, entry_start, entry_end, feature_mask, min_samples_leaf, min_weight_leaf)``;
    ``level``: the kind's values computed once a level, ``walks_rows``: whether a pair's scan
    walks its node's rows (its share of the work, :func:`_pair_tasks`)."""
    if int(n_chunks) < 1:
        raise ValueError(f"n_chunks must be at least 1, got {n_chunks}")
    check_split_record(record, *layout[8].shape)  # one slot per (feature, node)
    seg_start, seg_end, entry_start, entry_end = layout[4:8]
    first = _pair_tasks(entry_start, entry_end, seg_start, seg_end, np.bool_(walks_rows),
                        np.int64(n_chunks))
    data = (layout, args, level, first, record)
    run_tasks(task_address(specialized(_make_sparse_search, *kind), data), data, int(n_chunks))


def _make_sparse_search(name, *flags):
    """The task function (:mod:`fasttree._tasks`) of one statistics kind's search: the level's
    (feature, node) pairs cut into tasks of equal work (:func:`_pair_tasks`), each task scanning
    its searched pairs in turn with its own scratch, through the kind's hooks (:data:`_KINDS`),
    inlined here."""
    # the hooks reach the kernel as globals, never as variables it closes over (with_globals)
    hooks = dict(zip(("new_scratch", "scan_pair"), _KINDS[name](*flags)))

    def search_task(pointer, t):
        layout, args, level, first, record = load_pointer(pointer)
        (entry_x, _, _, _, seg_start, seg_end, entry_start, entry_end, feature_mask,
         min_samples_leaf, _) = layout
        n_segments = seg_start.shape[0]
        pairs = (entry_x, seg_start, seg_end, entry_start, entry_end, feature_mask,
                 min_samples_leaf)
        scratch = new_scratch(layout, args, level)
        for q in range(first[t], first[t + 1]):
            f = q // n_segments
            s = q - f * n_segments
            searched, start, end, a, b = _searched_pair(pairs, f, s)
            if searched:
                scan_pair(layout, args, level, scratch, f, s, start, end, a, b, record)

    return njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
        with_globals(search_task, **hooks))


@njit(cache=True)
def _pair_tasks(entry_start, entry_end, seg_start, seg_end, walks_rows, n_tasks):
    """Cut a level's (feature, node) pairs, feature by feature, into ``n_tasks`` runs of about
    equal work: a pair's entries, its node's rows too if its scan ``walks_rows`` (the zero block
    row by row), and ``PAIR_COST``.

    Returns ``first`` of shape ``(n_tasks + 1,)``, int64: task ``t`` runs the pairs ``first[t]
    .. first[t + 1] - 1``, pair ``q`` being feature ``q // n_nodes`` and node ``q % n_nodes``.
    Each pair writes only its own slot, so no cut changes a result; a run starts at the first
    pair whose work before it reaches the run's share, so one large pair is one task's.
    """
    n_features, n_segments = entry_start.shape
    total = 0
    for f in range(n_features):
        for s in range(n_segments):
            total += _pair_work(entry_start, entry_end, seg_start, seg_end, walks_rows, f, s)
    first = np.empty(n_tasks + 1, dtype=np.int64)
    first[0] = 0
    t = 1
    done = 0
    q = 0
    for f in range(n_features):
        for s in range(n_segments):
            while t < n_tasks and done * n_tasks >= t * total:
                first[t] = q
                t += 1
            done += _pair_work(entry_start, entry_end, seg_start, seg_end, walks_rows, f, s)
            q += 1
    while t <= n_tasks:
        first[t] = q
        t += 1
    return first


@njit(cache=True, inline="always")
def _pair_work(entry_start, entry_end, seg_start, seg_end, walks_rows, f, s):
    """A pair's work in :func:`_pair_tasks`."""
    work = entry_end[f, s] - entry_start[f, s] + PAIR_COST
    if walks_rows:
        work += seg_end[s] - seg_start[s]
    return work
