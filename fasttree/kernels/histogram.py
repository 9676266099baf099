"""Binned (histogram) split search: features cut into at most 255 bins, one histogram per node.

Layout (:class:`fasttree.hist_splitter.HistSplitter`)::

    codes[f]  | bin code of feature f of every row, by row id (never moved)                |
    rows[0]   | node a: its row ids | node b: ...          | ... | finished leaves           |
    labels[0] | their targets (class labels or regression values), same positions            |

A node is a position range ``[seg_start, seg_end)`` of ``rows``; a split moves only the row ids
and their targets (5 bytes a row for classes), never the codes.  A task builds one feature's
histograms by reading that feature's codes through the row ids: one byte per row, from an array
of ``n_samples`` bytes that stays in cache far longer than the exact layout's moving rows.  A
node's histogram holds, per feature and bin, the statistics of its rows: weighted class counts
(classification) or ``[sum w, sum w*y, c]`` (regression), plus the row count when rows are
weighted.  Bin ``MISSING_BIN`` (255) holds the rows whose value is missing.

Bins are ordered ranges of values: bin ``b`` of feature ``f`` holds the values ``v`` with
``upper[f, b - 1] < v <= upper[f, b]``; ``bin_min`` / ``bin_max`` are the smallest and largest
training values it received.  A candidate lies between two consecutive bins that are non-empty in
the node; its threshold is the midpoint of the left bin's largest and the right bin's smallest
value, in the original units, so that the tree is the tree of the original values.  When a feature
has at most ``max_bins`` distinct values every bin holds one value, the candidates and thresholds
are exactly those of the exact scan, and the value of each candidate is computed by the same
formula for the same counts: the binned tree is the exact tree whenever the sums are exact
(unit or integer weights, integer regression targets; otherwise the sums of a bin and of the
rows round differently, which can break an exact tie between candidates differently).

Row ids and class labels index the codes, weights and histograms as unsigned integers
(``feature_codes[np.uint64(ids[p])]``): numba tests a signed index for Python's negative
wrap-around at every access, and these are never negative.
"""

import numpy as np
from numba import prange

from .._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_SQUARED_ERROR,
)
from .._jit import njit, specialized, with_globals
from .._tasks import load_pointer, run_tasks, task_address
from .categorical import best_categorical_split, category_arrays, category_branch_map
from .criteria import (
    regression_proxy,
    regression_target_term,
    two_children_class_impurity,
    weighted_class_impurity,
    weighted_regression_impurity,
)
from .split_search import (
    _binary_counts_impurity,
    _binary_split_info,
    _midpoint,
    _same_value,
    _children_by_side,
    _unit_counts_impurity,
)

#: Code of a missing value; value bins are ``0 .. max_bins - 1`` (``max_bins <= 255``).
MISSING_BIN = 255
#: Bins per feature in a histogram (value bins, then the missing bin last).
HIST_BINS = 256
#: Rows binned by one task (its block of X stays in cache).
_BIN_CHUNK_ROWS = 4096


@njit(parallel=True, cache=True)
def bin_bounds(sorted_values, max_bins):
    """Bins of each feature from its sorted values.

    Parameters
    ----------
    sorted_values : ndarray of shape (n_features, n_rows), float32 (IN)
        Each feature's values in a sample of rows (or all of them), sorted, NaN last
        (``np.sort(axis=1)``).
    max_bins : int
        At most this many value bins per feature, 2 .. 255.

    Returns
    -------
    upper : ndarray of shape (n_features, MISSING_BIN), float32
        Bin ``b`` takes ``upper[f, b - 1] < v <= upper[f, b]``; the last bin (``n_bins - 1``)
        everything above ``upper[f, n_bins - 2]``; unused slots are ``+inf``.
    bin_min, bin_max : ndarray of shape (n_features, HIST_BINS), float32
        The values of each bin, where ``one_value``; otherwise its bounds (``bin_min`` of bin
        ``b > 0`` is ``upper[b - 1]``, exclusive): thresholds are midpoints of these.
    n_bins : ndarray of shape (n_features,), int64
    one_value : ndarray of shape (n_features,), bool
        Whether each distinct value got its own bin (at most ``max_bins`` distinct values);
        otherwise the bounds are the quantiles ``k / max_bins`` (repeated values merged).
    """
    n_features, n_rows = sorted_values.shape
    upper = np.full((n_features, MISSING_BIN), np.inf, dtype=np.float32)
    bin_min = np.full((n_features, HIST_BINS), np.inf, dtype=np.float32)
    bin_max = np.full((n_features, HIST_BINS), -np.inf, dtype=np.float32)
    n_bins = np.ones(n_features, dtype=np.int64)
    one_value = np.zeros(n_features, dtype=np.bool_)
    for f in prange(n_features):
        values = sorted_values[f]
        n = n_rows
        while n > 0 and values[n - 1] != values[n - 1]:
            n -= 1  # NaN sorts last
        n_bins[f], one_value[f] = _feature_bounds(values[:n], max_bins, upper[f], bin_min[f],
                                                  bin_max[f])
    return upper, bin_min, bin_max, n_bins, one_value


@njit(parallel=True, cache=True)
def sample_columns(X, rows):
    """``X[rows].T`` as a new C-contiguous (n_features, n_rows) array, blocks of rows copied in
    parallel (the sorted columns of a sample are what :func:`bin_bounds` reads)."""
    n_rows, n_features = rows.shape[0], X.shape[1]
    out = np.empty((n_features, n_rows), dtype=X.dtype)
    n_blocks = (n_rows + _BIN_CHUNK_ROWS - 1) // _BIN_CHUNK_ROWS
    for k in prange(n_blocks):
        for i in range(k * _BIN_CHUNK_ROWS, min((k + 1) * _BIN_CHUNK_ROWS, n_rows)):
            r = rows[i]
            for f in range(n_features):
                out[f, i] = X[r, f]
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _feature_bounds(values, max_bins, upper, lo, hi):
    """Bins of one feature from its sorted known values; returns (bins, one value per bin)."""
    n = values.shape[0]
    if n == 0:
        return 1, True
    n_distinct = 1
    for i in range(1, n):
        n_distinct += values[i] != values[i - 1]
    if n_distinct <= max_bins:
        k = 0
        lo[0] = hi[0] = values[0]
        for i in range(1, n):
            if values[i] != values[i - 1]:
                upper[k] = values[i - 1]
                k += 1
                lo[k] = hi[k] = values[i]
        return k + 1, True
    k = 0
    for j in range(1, max_bins):
        v = values[(j * n) // max_bins - 1]
        if (k == 0 or v > upper[k - 1]) and v < values[n - 1]:
            upper[k] = v
            k += 1
    lo[0] = values[0]
    for b in range(k):
        hi[b] = upper[b]
        lo[b + 1] = upper[b]
    hi[k] = values[n - 1]
    return k + 1, False


@njit(parallel=True, cache=True)
def bin_codes(X, upper, bin_min, one_value):
    """Bin code of every value, features as rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
    upper, bin_min, one_value : from :func:`bin_bounds` (IN)

    Returns
    -------
    codes : ndarray of shape (n_features, n_samples), uint8
        ``MISSING_BIN`` for NaN.
    mixed : ndarray of shape (n_features,), bool
        Features binned one value per bin that met a value of no bin (the sample missed it).
    has_missing : ndarray of shape (n_features,), bool
    """
    n_samples, n_features = X.shape
    codes = np.empty((n_features, n_samples), dtype=np.uint8)
    n_chunks = max((n_samples + _BIN_CHUNK_ROWS - 1) // _BIN_CHUNK_ROWS, 1)
    chunk_mixed = np.zeros((n_chunks, n_features), dtype=np.bool_)
    chunk_missing = np.zeros((n_chunks, n_features), dtype=np.bool_)
    for c in prange(n_chunks):
        _bin_chunk(np.int64(c), X, upper, bin_min, one_value, codes, chunk_mixed[c],
                   chunk_missing[c])
    mixed = np.zeros(n_features, dtype=np.bool_)
    has_missing = np.zeros(n_features, dtype=np.bool_)
    for c in range(n_chunks):
        for f in range(n_features):
            mixed[f] |= chunk_mixed[c, f]
            has_missing[f] |= chunk_missing[c, f]
    return codes, mixed, has_missing


@njit(cache=True, no_cpython_wrapper=True)
def _bin_chunk(c, X, upper, bin_min, one_value, codes, mixed, missing):
    """Codes of one chunk of rows, every feature (the chunk's block of X is read from cache).
    Four binary searches run side by side: each is a chain of dependent loads, so interleaving
    them lets the processor overlap their latencies."""
    n_samples, n_features = X.shape
    first = c * _BIN_CHUNK_ROWS
    last = min(first + _BIN_CHUNK_ROWS, n_samples)
    for f in range(n_features):
        bounds = upper[f]
        values = bin_min[f]
        check = one_value[f]
        other = False
        nan = False
        i = first
        while i + 4 <= last:
            v0 = X[i, f]
            v1 = X[i + 1, f]
            v2 = X[i + 2, f]
            v3 = X[i + 3, f]
            b0 = b1 = b2 = b3 = 0
            step = 128
            while step > 0:
                b0 += step if bounds[b0 + step - 1] < v0 else 0
                b1 += step if bounds[b1 + step - 1] < v1 else 0
                b2 += step if bounds[b2 + step - 1] < v2 else 0
                b3 += step if bounds[b3 + step - 1] < v3 else 0
                step >>= 1
            # NaN compares false everywhere (bin 0): mark it missing
            codes[f, i] = b0 if v0 == v0 else MISSING_BIN
            codes[f, i + 1] = b1 if v1 == v1 else MISSING_BIN
            codes[f, i + 2] = b2 if v2 == v2 else MISSING_BIN
            codes[f, i + 3] = b3 if v3 == v3 else MISSING_BIN
            nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3)
            if check:
                other |= ((v0 == v0) & (v0 != values[b0])) | ((v1 == v1) & (v1 != values[b1])) \
                    | ((v2 == v2) & (v2 != values[b2])) | ((v3 == v3) & (v3 != values[b3]))
            i += 4
        for j in range(i, last):
            v = X[j, f]
            if v != v:
                codes[f, j] = MISSING_BIN
                nan = True
            else:
                b = _lower_bound(bounds, v)
                codes[f, j] = b
                other |= check and v != values[b]
        mixed[f] = other
        missing[f] = nan


@njit(cache=True, inline="always")
def _lower_bound(bounds, v):
    """Index of the first bound ``>= v`` in ``bounds`` (255 values, padded with ``+inf``): eight
    fixed halvings whose comparisons compile to conditional moves, not branches."""
    base = 0
    step = 128
    while step > 0:
        base += step if bounds[base + step - 1] < v else 0
        step >>= 1
    return base


@njit(parallel=True, cache=True)
def build_histograms(codes, rows, labels, sample_weight, seg_start, seg_end, n_channels,
                     criterion):
    """Histogram of every feature for every segment (node).

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_samples), uint8 (IN)
        Bin codes by row id.
    rows : ndarray of shape (1, n_samples), int32 (IN)
        Row id at each position.
    labels : ndarray of shape (1, n_samples), uint8/uint16 classes or float64 targets (IN)
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Indexed by row id; empty: every weight is 1.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    n_channels : int
        Statistics per bin: the classes (classification) or 3 (``sum w``, ``sum w*y`` and the
        criterion's ``c``, as in :func:`~fasttree.kernels.segment_target_sums`), plus one for
        the row count when rows are weighted.
    criterion : int

    Returns
    -------
    hist : ndarray of shape (n_segments, n_features, HIST_BINS, n_channels), float64
    """
    n_features = codes.shape[0]
    n_segments = seg_start.shape[0]
    # zeroed per feature inside the parallel loop: a deep level's histograms are tens of MB
    hist = np.empty((n_segments, n_features, HIST_BINS, n_channels))
    for f in prange(n_features):
        _feature_histograms(np.int64(f), codes, rows, labels, sample_weight, seg_start, seg_end,
                            criterion, hist)
    return hist


@njit(parallel=True, cache=True)
def combine_histograms(built, built_index, parents, parent_index, clip, out):
    """Histograms of nodes from those built from rows and their parents' (the subtraction
    trick), the nodes in parallel.

    ``out[j] = built[built_index[j]]`` where ``parent_index[j] == -1``; else
    ``parents[parent_index[j]] - built[built_index[j]]`` (the larger sibling: its parent's
    histograms minus the smaller sibling's), floored at 0 with ``clip`` (class weights: no
    rounding residue below zero); ``parent_index[j] == -2`` leaves ``out[j]`` as it is (a node
    whose parent is in another array, for another call).

    Parameters
    ----------
    built : ndarray of shape (n_built, n_values), float64 (IN)
        Histograms of :func:`build_histograms`, each node's flattened.
    built_index : ndarray of shape (n_nodes,), int64 (IN)
    parents : ndarray of shape (n_parents, n_values), float64 (IN)
    parent_index : ndarray of shape (n_nodes,), int64 (IN)
    clip : bool
    out : ndarray of shape (n_nodes, n_values), float64 (OUT)
    """
    n_values = out.shape[1]
    for j in prange(out.shape[0]):
        p = parent_index[j]
        if p == -2:
            continue
        src = built[built_index[j]]
        dst = out[j]
        if p == -1:
            for v in range(n_values):
                dst[v] = src[v]
        elif clip:
            parent = parents[p]
            for v in range(n_values):
                dst[v] = max(parent[v] - src[v], 0.0)
        else:
            parent = parents[p]
            for v in range(n_values):
                dst[v] = parent[v] - src[v]


@njit(cache=True, no_cpython_wrapper=True)
def _feature_histograms(f, codes, rows, labels, sample_weight, seg_start, seg_end, criterion,
                        hist):
    """Every segment's histogram of one feature (the parallel loop's body)."""
    regression = criterion >= CRITERION_SQUARED_ERROR
    unit_weight = sample_weight.shape[0] == 0
    count_channel = hist.shape[3] - 1
    feature_codes = codes[f]
    ys = labels[0]
    ids = rows[0]
    for s in range(seg_start.shape[0]):
        h = hist[s, f]
        h[:] = 0.0
        for p in range(seg_start[s], seg_end[s]):
            b = feature_codes[np.uint64(ids[p])]
            if regression:
                w = 1.0 if unit_weight else sample_weight[np.uint64(ids[p])]
                y = ys[p]
                h[b, 0] += w
                h[b, 1] += w * y
                h[b, 2] += w * regression_target_term(y, criterion)
                if not unit_weight:
                    h[b, count_channel] += 1.0
            elif unit_weight:
                h[b, np.uint64(ys[p])] += 1.0
            else:
                h[b, np.uint64(ys[p])] += sample_weight[np.uint64(ids[p])]
                h[b, count_channel] += 1.0


def find_best_splits_hist(
    hist,
    bin_min,
    bin_max,
    n_bins,
    one_value,
    seg_stats,
    seg_rows,
    feature_mask,
    criterion,
    unit_weight,
    min_samples_leaf,
    min_weight_leaf,
    table,
    record,
):
    """Best threshold of every (feature, node) pair from the nodes' histograms.

    Parameters
    ----------
    hist : ndarray of shape (n_segments, n_features, HIST_BINS, n_channels), float64 (IN)
        From :func:`build_histograms`.
    bin_min, bin_max, n_bins, one_value : (IN)
        From :func:`bin_bounds`.  Where a feature has one value per bin, two consecutive bins
        whose values are at most ``FEATURE_THRESHOLD`` apart count as one value.
    seg_stats : ndarray of shape (n_segments, n_stats), float64 (IN)
        Weighted class counts, or ``[sum w, sum w*y, sum w*y**2]`` (regression), per node.
    seg_rows : ndarray of shape (n_segments,), int64 (IN)
        Rows of each node.
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
    criterion : int
        ``CRITERION_GINI``, ``CRITERION_ENTROPY`` or ``CRITERION_SQUARED_ERROR``.
    unit_weight : bool
        Every weight is 1 (the histograms then have no row-count channel).
    min_samples_leaf : int
    min_weight_leaf : float
    table : ndarray of shape (n_samples + 1,), float64 (IN)
        With unit weights: ``c log2 c`` (classification, :func:`~fasttree.kernels.xlog2x_table`)
        or ``1 / c`` (squared error, :func:`~fasttree.kernels.reciprocal_table`); else empty.
    record : SplitRecord (OUT)
        As written by :func:`~fasttree.kernels.find_best_splits_classification`;
        ``n_left`` counts the rows going left.

    Notes
    -----
    The candidates, their order, the validity rules, the handling of missing rows (tried on both
    sides, scikit-learn's rules) and the formula of each candidate's value are those of the
    exact scans, case by case, so that equal statistics give bit-identical values.  A Python
    function over one task function per kind of statistics (regression or classes, unit
    weights or not), each compiled only for the fits that need it.
    """
    task = specialized(_make_hist_search, bool(criterion >= CRITERION_SQUARED_ERROR),
                       bool(unit_weight))
    data = (hist, bin_min, bin_max, n_bins, one_value, seg_stats, seg_rows, feature_mask,
            criterion, min_samples_leaf, min_weight_leaf, table, record)
    run_tasks(task_address(task, data), data, hist.shape[1])


def _make_hist_search(regression, unit_weight):
    """:func:`find_best_splits_hist`'s task function (:mod:`fasttree._tasks`) for one kind of
    statistics: task ``f`` runs the feature scan (:func:`_make_hist_feature`) of feature
    ``f``."""

    def hist_task(pointer, f):
        (hist, bin_min, bin_max, n_bins, one_value, seg_stats, seg_rows, feature_mask,
         criterion, min_samples_leaf, min_weight_leaf, table, record) = load_pointer(pointer)
        hist_feature(f, hist, bin_min, bin_max, n_bins, one_value, seg_stats, seg_rows,
                     feature_mask, criterion, min_samples_leaf, min_weight_leaf, table, record)

    # the scan reaches the task as a global (with_globals), never as a variable it closes over
    return njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
        with_globals(hist_task, hist_feature=specialized(_make_hist_feature, regression,
                                                         unit_weight)))


def _make_hist_feature(regression, unit_weight):
    """Every node of one feature for :func:`find_best_splits_hist`, for regression statistics
    or class counts (``regression``), with unit weights or not (``unit_weight``): constants of
    the scan's code (all four kinds in one scan compiled in 3.6 s)."""

    @njit(cache=True, no_cpython_wrapper=True)
    def hist_feature(f, hist, bin_min, bin_max, n_bins, one_value, seg_stats, seg_rows,
                     feature_mask, criterion, min_samples_leaf, min_weight_leaf, table, record):
        n_channels = hist.shape[3]
        n_stats = n_channels if unit_weight else n_channels - 1
        min_rows_leaf = max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf)))
        left = np.empty(n_stats)
        missing = np.empty(n_stats)
        side_l = np.empty(n_stats)  # the left side's counts with the missing rows
        count_table = table if unit_weight and not regression else np.empty(0)
        entropy_table = (table if unit_weight and criterion == CRITERION_ENTROPY
                         else np.empty(0))
        lo = bin_min[f]
        hi = bin_max[f]
        nb = n_bins[f]
        check_same = one_value[f]
        for s in range(hist.shape[0]):
            if feature_mask[f, s] == 0:
                continue
            n_node = seg_rows[s]
            if n_node < 2 * min_samples_leaf:
                continue
            h = hist[s, f]
            total = seg_stats[s]
            n_miss = _bin_rows(h, MISSING_BIN, unit_weight, regression, n_stats)
            n_known = n_node - n_miss
            if regression:
                w_node = total[0]
                node_impurity = weighted_regression_impurity(total[0], total[1], total[2],
                                                             criterion)
            else:
                w_node = 0.0
                for k in range(n_stats):
                    w_node += total[k]
                node_impurity = weighted_class_impurity(total, criterion)
            for k in range(n_stats):
                missing[k] = h[MISSING_BIN, k]
                left[k] = 0.0
            w_missing = missing[0] if regression else _sum(missing)
            # which of the exact scans this node's (feature, node) pair would run
            if regression:
                fast = unit_weight and n_miss == 0 and criterion == CRITERION_SQUARED_ERROR
                weighted_plain = (not unit_weight) and n_miss == 0 and (
                    criterion == CRITERION_SQUARED_ERROR)
            else:
                fast = unit_weight and n_miss == 0
                weighted_plain = (not unit_weight) and n_miss == 0
            binary_missing = (not regression and unit_weight and n_miss > 0 and n_stats == 2
                              and (criterion == CRITERION_GINI or entropy_table.shape[0] > 0))
            best_a = np.inf
            best_b = np.inf
            a_bin = -1
            b_bin = -1
            a_next = -1
            b_next = -1
            a_w = 0.0
            b_w = 0.0
            a_rows = 0
            b_rows = 0
            n_cand = 0
            rows_left = 0
            prev = -1
            r = 0
            s_l = 0.0
            # the candidate after the last known bin ("every known row left") exists with missing
            # rows
            for b in range(nb + 1):
                last = b == nb
                if last:
                    if n_miss == 0 or prev < 0:
                        break
                else:
                    r = _bin_rows(h, b, unit_weight, regression, n_stats)
                    if r == 0:
                        continue
                    if prev < 0 or (check_same and _same_value(hi[prev], lo[b])):
                        _add_bin(h, b, left)
                        rows_left += r
                        prev = b
                        continue
                # candidate: the known rows of bins <= prev left
                n_l = rows_left
                w_l = left[0] if regression else _sum(left)
                if regression:
                    s_l = left[1]
                valid = False
                # A: missing rows right (all rows when there are none)
                w_r = w_node - w_l
                n_r = n_node - n_l
                value = np.inf
                if fast:
                    if n_l >= min_rows_leaf and n_r >= min_rows_leaf:
                        valid = True
                        if regression:
                            s_r = total[1] - s_l
                            value = -(s_l * s_l * table[n_l] + s_r * s_r * table[n_r])
                        elif n_stats == 2:
                            value = _binary_counts_impurity(n_l, np.int64(left[1]), n_r,
                                                            np.int64(total[1] - left[1]), criterion,
                                                            table)
                        else:
                            value = _unit_multiclass(left, total, n_l, n_r, criterion, table)
                elif (n_l >= min_samples_leaf and n_r >= min_samples_leaf and w_l >= min_weight_leaf
                      and w_r >= min_weight_leaf and w_l > 0.0 and w_r > 0.0):
                    valid = True
                    if regression:
                        value = -regression_proxy(w_l, s_l, w_r, total[1] - s_l, criterion)
                    elif binary_missing:
                        value = _binary_counts_impurity(n_l, np.int64(left[1]), n_r,
                                                        np.int64(total[1] - left[1]), criterion,
                                                        entropy_table)
                    elif weighted_plain:
                        value = two_children_class_impurity(left, total, w_l, w_r, criterion)
                    else:
                        value = _children_by_side(left, total, w_l, w_r, criterion, entropy_table)
                if value < best_a:
                    best_a = value
                    a_bin = prev
                    a_next = b
                    a_w = w_l
                    a_rows = n_l
                if n_miss > 0 and not last:
                    # B: missing rows left
                    n_lb = n_l + n_miss
                    n_rb = n_known - n_l
                    w_lb = w_l + w_missing
                    w_rb = w_node - w_lb
                    if (n_lb >= min_samples_leaf and n_rb >= min_samples_leaf
                            and w_lb >= min_weight_leaf and w_rb >= min_weight_leaf
                            and w_lb > 0.0 and w_rb > 0.0):
                        valid = True
                        if regression:
                            s_lb = s_l + missing[1]
                            value = -regression_proxy(w_lb, s_lb, w_rb, total[1] - s_lb, criterion)
                        elif binary_missing:
                            m_1 = np.int64(missing[1])
                            value = _binary_counts_impurity(
                                n_lb, np.int64(left[1]) + m_1, n_rb,
                                np.int64(total[1] - missing[1]) - np.int64(left[1]), criterion,
                                entropy_table)
                        else:
                            for k in range(n_stats):
                                side_l[k] = left[k] + missing[k]
                            value = _children_by_side(side_l, total, w_lb, w_rb, criterion,
                                                      entropy_table)
                        if value < best_b:
                            best_b = value
                            b_bin = prev
                            b_next = b
                            b_w = w_lb
                            b_rows = n_lb
                n_cand += valid
                if last:
                    break
                _add_bin(h, b, left)
                rows_left += r
                prev = b
            missing_left = best_b < best_a
            if missing_left:
                best, cut, nxt, best_w, best_rows = best_b, b_bin, b_next, b_w, b_rows
            else:
                best, cut, nxt, best_w, best_rows = best_a, a_bin, a_next, a_w, a_rows
            if cut < 0:
                continue
            if regression:
                best = max(total[2] + best, 0.0)  # c - proxy
            record.children_impurity[f, s] = best
            record.gain[f, s] = (node_impurity - best) / w_node
            record.split_info[f, s] = _binary_split_info(best_w, w_node - best_w, 0.0, count_table)
            record.threshold[f, s] = np.inf if nxt == nb else _midpoint(hi[cut], lo[nxt])
            record.n_left[f, s] = best_rows
            record.n_branches[f, s] = 2
            if n_miss > 0:
                record.missing_branch[f, s] = 0 if missing_left else 1
            else:
                record.missing_branch[f, s] = 0 if best_rows > n_node - best_rows else 1
            record.n_missing[f, s] = n_miss
            record.n_candidates[f, s] = n_cand

    return hist_feature


@njit(parallel=True, cache=True)
def find_best_splits_hist_categorical(hist, n_categories, seg_stats, seg_rows, feature_mask,
                                      criterion, split_kind, unit_weight, min_samples_leaf,
                                      min_weight_leaf, record):
    """Best subset or multiway split of every categorical (feature, node) pair from the nodes'
    histograms (a categorical feature's bins are its category codes).

    The statistics of each category present in the node are read from its bin, then
    :func:`~fasttree.kernels.categorical.best_categorical_split` decides as for the exact
    layout.  Parameters as in :func:`find_best_splits_hist`, plus ``n_categories`` (0 for
    numeric features, skipped) and ``split_kind`` (``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY``).
    """
    n_features = hist.shape[1]
    for f in prange(n_features):
        if n_categories[f] == 0:
            continue
        _hist_categorical_feature(np.int64(f), hist, n_categories, seg_stats, seg_rows,
                                  feature_mask, criterion, split_kind, unit_weight,
                                  min_samples_leaf, min_weight_leaf, record)


@njit(cache=True, no_cpython_wrapper=True)
def _hist_categorical_feature(f, hist, n_categories, seg_stats, seg_rows, feature_mask,
                              criterion, split_kind, unit_weight, min_samples_leaf,
                              min_weight_leaf, record):
    """Every node of one categorical feature for :func:`find_best_splits_hist_categorical`."""
    n_stats = seg_stats.shape[1]
    size = n_categories[f]
    codes, stats, rows, missing = category_arrays(size, n_stats)
    scratch = np.empty((3, n_stats))
    regression = criterion >= CRITERION_SQUARED_ERROR
    for s in range(hist.shape[0]):
        if feature_mask[f, s] == 0 or seg_rows[s] < 2 * min_samples_leaf:
            continue
        h = hist[s, f]
        n_present = category_bins(h, size, n_stats, unit_weight, regression, codes, stats,
                                  rows, missing)
        best_categorical_split(f, s, codes, stats, rows, missing, n_present, seg_stats[s],
                               seg_rows[s], criterion, split_kind, min_samples_leaf,
                               min_weight_leaf, False, scratch, record)


@njit(cache=True)
def category_bins(h, size, n_stats, unit_weight, regression, codes, stats, rows, missing):
    """:func:`~fasttree.kernels.categorical.category_stats` from one feature's histogram of a
    node: the categories present (non-empty bins), their statistics and rows, and the missing
    rows' (statistics, then their number).  Returns the number of categories present."""
    n_present = 0
    for c in range(size):
        r = _bin_rows(h, c, unit_weight, regression, n_stats)
        if r == 0:
            continue
        codes[n_present] = c
        for k in range(n_stats):
            stats[n_present, k] = h[c, k]
        rows[n_present] = r
        n_present += 1
    for k in range(n_stats):
        missing[k] = h[MISSING_BIN, k]
    missing[n_stats] = _bin_rows(h, MISSING_BIN, unit_weight, regression, n_stats)
    return n_present


@njit(parallel=True, cache=True)
def hist_category_maps(hist, n_codes, split_kind, split_cut, split_missing_branch,
                       split_subset_class, criterion, unit_weight):
    """Category -> branch maps of chosen categorical splits from the split feature's histogram
    of each node (``hist``: (n_segments, HIST_BINS, n_channels)); the maps of
    :func:`~fasttree.kernels.categorical_split_maps`, one after another."""
    n_segments = hist.shape[0]
    n_stats = hist.shape[2] if unit_weight else hist.shape[2] - 1
    regression = criterion >= CRITERION_SQUARED_ERROR
    offset = np.zeros(n_segments + 1, dtype=np.int64)
    for s in range(n_segments):
        offset[s + 1] = offset[s] + n_codes[s]
    out = np.zeros(offset[n_segments], dtype=np.int32)
    for s in prange(n_segments):
        size = n_codes[s]
        codes, stats, rows, missing = category_arrays(size, n_stats)
        n_present = category_bins(hist[s], size - 1, n_stats, unit_weight, regression, codes,
                                  stats, rows, missing)
        category_branch_map(codes, stats, missing, n_present, split_kind[s], split_cut[s],
                            split_missing_branch[s], split_subset_class[s], criterion,
                            out[offset[s]:offset[s + 1]])
    return out


@njit(cache=True, inline="always")
def _sum(values):
    s = 0.0
    for k in range(values.shape[0]):
        s += values[k]
    return s


@njit(cache=True, inline="always")
def _bin_rows(h, b, unit_weight, regression, n_stats):
    """Rows in bin ``b`` of one histogram (exact: counts are integers in float64)."""
    if not unit_weight:
        return np.int64(h[b, n_stats])
    if regression:
        return np.int64(h[b, 0])
    r = 0.0
    for k in range(n_stats):
        r += h[b, k]
    return np.int64(r)


@njit(cache=True, inline="always")
def _add_bin(h, b, left):
    """Move bin ``b``'s statistics to the left side."""
    for k in range(left.shape[0]):
        left[k] += h[b, k]


@njit(cache=True, inline="always")
def _unit_multiclass(left, total, n_l, n_r, criterion, table):
    """The exact multiclass unit-weight scan's value of one candidate (same formula, same order:
    integer sums of squares for gini, ``c log2 c`` from ``table`` for entropy)."""
    sq_left = 0
    sq_right = 0
    if criterion == CRITERION_GINI:
        for k in range(total.shape[0]):
            a = np.int64(left[k])
            c = np.int64(total[k]) - a
            sq_left += a * a
            sq_right += c * c
    return _unit_counts_impurity(n_l, n_r, left, total, sq_left, sq_right, criterion, table)


@njit(parallel=True, cache=True)
def partition_hist_segments(codes, rows, labels, seg_start, seg_end, split_feature, cut_bin,
                            missing_branch, map_offset, category_map, branch_offset,
                            rows_buffer, labels_buffer):
    """Move the rows of split nodes to their branches, branch after branch (each keeps the
    rows' order): their ids and targets (the codes, by row id, stay).

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_samples), uint8 (IN)
    rows : ndarray of shape (1, n_samples), int32 (IN/OUT)
    labels : ndarray of shape (1, n_samples) (IN/OUT)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        The split nodes, in increasing order.
    split_feature, cut_bin, missing_branch : ndarray of shape (n_segments,), int64 (IN)
        A row whose split feature is missing (``MISSING_BIN``) takes ``missing_branch``; else,
        for a threshold (``map_offset < 0``), branch 0 if its code is at most ``cut_bin``,
        else branch 1 ...
    map_offset : ndarray of shape (n_segments,), int64 (IN)
        ... and for a categorical split the branch ``category_map[map_offset + code]``
        (:func:`~fasttree.kernels.categorical_split_maps`' maps).
    category_map : ndarray, int32 (IN)
    branch_offset : ndarray of shape (n_segments + 1,), int64 (IN)
        Node ``s``'s branches are ``branch_offset[s] .. branch_offset[s + 1] - 1``.
    rows_buffer, labels_buffer : ndarrays shaped like ``rows`` and ``labels`` (scratch)

    Returns
    -------
    branch_rows : ndarray of shape (branch_offset[-1],), int64
        Rows of each branch.

    Notes
    -----
    In parallel over chunks of positions: count each chunk's rows per branch; then (knowing
    where each chunk's rows of each branch go) scatter the chunk's ids and targets to the
    buffers; then copy back.  Two branches take a branch-free path (the slot is selected).
    """
    n_segments = seg_start.shape[0]
    chunk_start, chunk_segment = _position_chunks(seg_start, seg_end)
    n_chunks = chunk_segment.shape[0]
    max_branches = 2
    for s in range(n_segments):
        max_branches = max(max_branches, branch_offset[s + 1] - branch_offset[s])
    counts = np.zeros((n_chunks, max_branches), dtype=np.int64)
    ids = rows[0]
    for c in prange(n_chunks):
        s = chunk_segment[c]
        _count_branches(codes[split_feature[s]], ids, chunk_start[c],
                        min(chunk_start[c] + _ROUTE_CHUNK, seg_end[s]), cut_bin[s],
                        missing_branch[s], map_offset[s], category_map,
                        branch_offset[s + 1] - branch_offset[s], counts[c])
    branch_rows = np.zeros(branch_offset[n_segments], dtype=np.int64)
    for c in range(n_chunks):
        s = chunk_segment[c]
        for b in range(branch_offset[s + 1] - branch_offset[s]):
            branch_rows[branch_offset[s] + b] += counts[c, b]
    # where each chunk's rows of each branch start
    at = np.empty((n_chunks, max_branches), dtype=np.int64)
    for c in range(n_chunks):
        s = chunk_segment[c]
        if c == 0 or chunk_segment[c - 1] != s:
            position = seg_start[s]
            for b in range(branch_offset[s + 1] - branch_offset[s]):
                at[c, b] = position
                position += branch_rows[branch_offset[s] + b]
        else:
            for b in range(branch_offset[s + 1] - branch_offset[s]):
                at[c, b] = at[c - 1, b] + counts[c - 1, b]
    for c in prange(n_chunks):
        s = chunk_segment[c]
        _scatter_chunk(codes[split_feature[s]], ids, labels[0], rows_buffer[0],
                       labels_buffer[0], chunk_start[c],
                       min(chunk_start[c] + _ROUTE_CHUNK, seg_end[s]), cut_bin[s],
                       missing_branch[s], map_offset[s], category_map,
                       branch_offset[s + 1] - branch_offset[s], at[c])
    for c in prange(n_chunks):  # copy back, chunk by chunk: a level's first nodes are large
        first = chunk_start[c]
        last = min(first + _ROUTE_CHUNK, seg_end[chunk_segment[c]])
        # element by element: a slice copy compiles numba's shape check and its message
        # formatting (1.5 s of a first hist fit's compile)
        for p in range(first, last):
            rows[0, p] = rows_buffer[0, p]
            labels[0, p] = labels_buffer[0, p]
    return branch_rows


#: Positions routed by one task.
_ROUTE_CHUNK = 1 << 14


@njit(cache=True, no_cpython_wrapper=True)
def _position_chunks(seg_start, seg_end):
    """Chunks of at most ``_ROUTE_CHUNK`` positions covering the segments: (first position,
    segment) of each."""
    n = 0
    for s in range(seg_start.shape[0]):
        n += (seg_end[s] - seg_start[s] + _ROUTE_CHUNK - 1) // _ROUTE_CHUNK
    chunk_start = np.empty(n, dtype=np.int64)
    chunk_segment = np.empty(n, dtype=np.int64)
    c = 0
    for s in range(seg_start.shape[0]):
        for p in range(seg_start[s], seg_end[s], _ROUTE_CHUNK):
            chunk_start[c] = p
            chunk_segment[c] = s
            c += 1
    return chunk_start, chunk_segment


@njit(cache=True, inline="always")
def _branch(b, cut, missing_branch, map_offset, category_map):
    """Branch of a row of bin code ``b`` (see :func:`partition_hist_segments`)."""
    if b == MISSING_BIN:
        return missing_branch
    if map_offset < 0:
        return np.int64(b > cut)
    m = np.int64(category_map[map_offset + b])
    return m if m >= 0 else -1 - m  # a category absent from the node: its heaviest branch


@njit(cache=True)
def bin_branches(cut_bin, missing_branch, map_offset, map_length, category_map):
    """Branch of every bin of each split node's split feature (:func:`_branch` of each code;
    bins past a categorical map, which no row fills, count as branch 1): (n_segments,
    HIST_BINS), int64."""
    out = np.ones((cut_bin.shape[0], HIST_BINS), dtype=np.int64)
    for s in range(cut_bin.shape[0]):
        n_codes = HIST_BINS if map_offset[s] < 0 else map_length[s]
        for b in range(HIST_BINS):
            if b < n_codes or b == MISSING_BIN:
                out[s, b] = _branch(b, cut_bin[s], missing_branch[s], map_offset[s],
                                    category_map)
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _count_branches(feature_codes, ids, first, last, cut, missing_branch, map_offset,
                    category_map, n_branches, counts):
    """Rows of positions ``first .. last - 1`` per branch."""
    if n_branches == 2:
        n_right = 0
        for p in range(first, last):
            n_right += _branch(feature_codes[np.uint64(ids[p])], cut, missing_branch, map_offset,
                               category_map)
        counts[0] = last - first - n_right
        counts[1] = n_right
        return
    for p in range(first, last):
        counts[_branch(feature_codes[np.uint64(ids[p])], cut, missing_branch, map_offset,
                       category_map)] += 1


@njit(cache=True, no_cpython_wrapper=True)
def _scatter_chunk(feature_codes, ids, ys, ids_out, ys_out, first, last, cut, missing_branch,
                   map_offset, category_map, n_branches, at):
    """Write the rows of positions ``first .. last - 1`` to their new positions in the buffers;
    chunks write disjoint slots, so they run in parallel."""
    if n_branches == 2:  # the slot is selected, not branched to
        to_left = at[0]
        to_right = at[1]
        for p in range(first, last):
            r = ids[p]
            g = _branch(feature_codes[np.uint64(r)], cut, missing_branch, map_offset,
                        category_map)
            slot = np.uint64(to_right if g else to_left)
            ids_out[slot] = r
            ys_out[slot] = ys[p]
            to_left += 1 - g
            to_right += g
        return
    cursor = at[:n_branches].copy()
    for p in range(first, last):
        r = ids[p]
        g = _branch(feature_codes[np.uint64(r)], cut, missing_branch, map_offset, category_map)
        slot = cursor[g]
        cursor[g] += 1
        ids_out[np.uint64(slot)] = r
        ys_out[np.uint64(slot)] = ys[p]


@njit(parallel=True, cache=True)
def routed_child_stats(codes, rows, labels, sample_weight, seg_start, seg_end, split_feature,
                       cut_bin, missing_branch, map_offset, category_map, n_stats, criterion):
    """Statistics of both children of binary splits, read through the routing without moving
    any row (children never searched need not be moved at all).

    Parameters
    ----------
    codes, rows, labels, sample_weight : the binned layout (IN)
    seg_start, seg_end, split_feature, cut_bin, missing_branch, map_offset, category_map : (IN)
        Two-branch splits, as in :func:`partition_hist_segments`.
    n_stats : int
        Classes (classification), or 3 (regression).
    criterion : int

    Returns
    -------
    stats : ndarray of shape (2 * n_segments, n_stats), float64
        Left then right child of each node: weighted class counts, or
        ``[sum w, sum w*y, c]`` as :func:`~fasttree.kernels.segment_target_sums` gives them.
    """
    n_segments = seg_start.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    regression = criterion >= CRITERION_SQUARED_ERROR
    out = np.zeros((2 * n_segments, n_stats))
    ids = rows[0]
    ys = labels[0]
    for s in prange(n_segments):
        feature_codes = codes[split_feature[s]]
        for p in range(seg_start[s], seg_end[s]):
            child = 2 * s + _branch(feature_codes[np.uint64(ids[p])], cut_bin[s], missing_branch[s],
                                    map_offset[s], category_map)
            w = 1.0 if unit_weight else sample_weight[np.uint64(ids[p])]
            if regression:
                y = ys[p]
                out[child, 0] += w
                out[child, 1] += w * y
                out[child, 2] += w * regression_target_term(y, criterion)
            else:
                out[child, np.int64(ys[p])] += w
    return out


@njit(parallel=True, cache=True)
def segment_code_range(codes, rows, bin_min, bin_max, one_value, seg_start, seg_end):
    """Features that are not constant in each segment (scikit-learn's rule on the values: the
    span of the node's values exceeds ``FEATURE_THRESHOLD``, or a value is missing).

    Returns
    -------
    non_constant : ndarray of shape (n_features, n_segments), bool
    """
    n_features = codes.shape[0]
    n_segments = seg_start.shape[0]
    ids = rows[0]
    out = np.zeros((n_features, n_segments), dtype=np.bool_)
    for f in prange(n_features):
        feature_codes = codes[f]
        for s in range(n_segments):
            lowest = MISSING_BIN
            highest = 0
            has_missing = False
            for p in range(seg_start[s], seg_end[s]):
                b = feature_codes[np.uint64(ids[p])]
                if b == MISSING_BIN:
                    has_missing = True
                else:
                    lowest = min(lowest, b)
                    highest = max(highest, b)
            out[f, s] = has_missing or (lowest < highest and not (
                one_value[f] and _same_value(bin_min[f, lowest], bin_max[f, highest])))
    return out
