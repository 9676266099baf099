"""The exact best threshold of a large node without sorting all its values: two classes, whole
weights (the depth-first random forests' nodes, :mod:`fasttree.kernels.depth_first`).

A node that searches a feature by sorting its values spends most of its time sorting (a radix
sort, some 10 ns a value on large nodes) to score thresholds of which one wins.  Here every
feature's values are cut once per fit into up to :data:`N_CODES` - 1 bins of about equal rows
(:func:`fine_bin_codes`), each cut between two values more than ``FEATURE_THRESHOLD`` apart, so
that a threshold between two non-empty bins of a node is always one of its candidates.  A
node's search of a feature (:func:`bounded_search`) then

1. counts its rows, weight and class-1 weight per bin, reading the feature's codes;
2. scores every threshold between two non-empty bins exactly from those counts (the same
   formula, on the same integers, as the scan of the sorted node);
3. bounds each bin's inner thresholds from below: the children's impurity (Gini's
   ``2 l0 l1 / n``, entropy's ``n H``, summed over both sides) is concave in the left side's
   class weights, and an inner threshold's left class weights lie in the box spanned by the
   weights before the bin and the bin's own, so none scores below the lowest corner of the box;
4. sorts and scans only the rows of the bins whose bound does not exceed the best score so far
   (plus a margin far above rounding), as :func:`~fasttree.kernels.split_search._class_scan`
   scans a sorted node.

So every candidate that could score at least as well as the best is scored, by the same
arithmetic, and the lowest such threshold wins as in the scan: the split is the sorted node's,
ties included.  This is the interval pruning of CLOUDS (Alsabti, Ranka and Singh, 1998), made
exact.  With 4,095 bins the rows left to sort were 0.6 % of a depth-10 random forest's (B1's
data, ``docs/performance.md``).
"""

import numpy as np
from numba import prange

from .._jit import njit
from .._threads import each_in_threads
from .._dtypes import CRITERION_GINI
from .presort import sort_values
from .split_record import leaf_minimums_met
from .split_search import _binary_counts_impurity, _midpoint, _same_value

#: codes per feature: bins ``0 .. N_CODES - 2`` and :data:`MISSING_CODE`
N_CODES = 4096
#: the code of a missing value
MISSING_CODE = N_CODES - 1
#: the bounds' margin over the best score, per unit of a node's weight (per unit of weight
#: times ``log2`` of it for entropy): rounding errs some 1e-15 of it
_MARGIN = 1e-9
#: a node's bins merge adjacent fine bins (a power of two of them) until it has at most
#: ``n // ROWS_PER_BIN`` bins: each bin costs four impurities to score, each row in a bin that
#: may hold the best threshold a value to sort
ROWS_PER_BIN = 4
#: a node whose rows span at least this many times their number reads its codes one row per
#: sample: a cache line brings a row's codes of every feature, not of one
SCATTERED_SPAN = 32
#: values of a feature sampled to place its cuts: every ``n // _SAMPLE``-th (all of fewer
#: than twice as many); the codes are exact whatever the sample, the bins' sizes near equal
_SAMPLE = 65536
#: buckets of equal width over a feature's cuts, each knowing its first cut (int16: in L1)
_BUCKETS = 16384
#: the most cuts a bucket may hold (a value steps over them without a branch)
_BUCKET_CUTS = 3
#: rows coded together, feature after feature (20 KB of 20 float32 features: in L1)
_CODE_BLOCK = 256
#: rows a thread renumbers in one call (:func:`fasttree._threads.each_in_threads`)
_CODE_RUN = 64 * _CODE_BLOCK


def fine_bin_codes(X):
    """Each value's bin: up to ``N_CODES - 1`` bins of about equal rows per feature.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
        The values.

    Returns
    -------
    codes_t : ndarray of shape (n_features, n_samples), uint16
        Each value's bin, one row per feature (as the bounded search reads them); bins numbered
        in increasing order of value, :data:`MISSING_CODE` for NaN.  Two values share a bin
        when they are within ``FEATURE_THRESHOLD`` of each other or of values between them, so
        any two values of different bins are more than ``FEATURE_THRESHOLD`` apart.

    Notes
    -----
    The cuts are placed on a sorted sample of each feature (every ``n_samples // 65536``-th
    value), so the bins' rows are about equal (within some 25 % on continuous data); the codes
    are exact whatever the sample.  Sorting every value instead took 0.20 s against 0.08 s
    (800,000 x 20, two threads).

    Raises
    ------
    ValueError
        ``X`` not as above.
    """
    if (not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype != np.float32
            or not X.flags.c_contiguous):
        raise ValueError("X must be a C-contiguous 2-D float32 array")
    n, n_features = X.shape
    codes_t = np.empty((n_features, n), dtype=np.uint16)
    cuts = np.full((n_features, N_CODES), np.inf, dtype=np.float32)  # the last sentinels
    n_cuts = np.empty(n_features, dtype=np.int64)
    first = np.empty((n_features, _BUCKETS + 1), dtype=np.int16)
    lowest = np.empty(n_features)
    scale = np.empty(n_features)
    each_in_threads(lambda f: _feature_cuts(X, f, cuts, n_cuts, first, lowest, scale),
                    n_features)
    # removed[f, c]: the cut below code c goes (a value lies within FEATURE_THRESHOLD above
    # it); every thread that finds one writes the same 1
    removed = np.zeros((n_features, N_CODES), dtype=np.uint16)
    _code_rows(X, cuts, first, lowest, scale, codes_t, removed)
    renumbered = np.flatnonzero(removed[:, 1:MISSING_CODE].any(axis=1))
    if renumbered.shape[0] > 0:  # a code less the cuts removed at or below it
        np.cumsum(removed[:, :MISSING_CODE], axis=1, out=removed[:, :MISSING_CODE])
        n_runs = -(-n // _CODE_RUN)
        each_in_threads(lambda run: _renumber_rows(
            run * _CODE_RUN, min(n, (run + 1) * _CODE_RUN), renumbered, removed, codes_t),
            n_runs)
    return codes_t


@njit(cache=True, nogil=True, noalias=True)
def _feature_cuts(X, f, cuts, n_cuts, first, lowest, scale):
    """Feature ``f``'s cuts placed on a sorted sample of its values (:func:`_place_cuts`) and its
    buckets (:func:`_buckets`), into row ``f`` of the other arguments."""
    n = X.shape[0]
    stride = max(1, n // _SAMPLE)
    n_sample = (n + stride - 1) // stride
    sample = np.empty(n_sample, dtype=np.float32)
    for i in range(n_sample):  # every stride-th value: sorted, it places the cuts
        sample[i] = X[i * stride, f]
    sort_values(sample, np.empty(n_sample, dtype=np.int32), np.empty(n_sample, dtype=np.uint32),
                np.empty(n_sample, dtype=np.int32), np.empty((4, 2048), dtype=np.int64))
    n_cuts[f] = _place_cuts(sample, cuts[f])
    lowest[f], scale[f] = _buckets(cuts[f], n_cuts[f], first[f])


@njit(parallel=True, cache=True)
def _code_rows(X, cuts, first, lowest, scale, codes_t, removed):
    """Every row's codes, in blocks of rows coded feature after feature (:func:`_code_block`:
    the block's rows stay in cache while each feature's cuts are read).  A parallel loop, not
    calls from threads: as a plain function (``nogil``, ``noalias``, called from threads) the
    same loop took 1.7 times as long (800,000 x 20, one thread: 0.23 against 0.14 s)."""
    n = X.shape[0]
    n_blocks = (n + _CODE_BLOCK - 1) // _CODE_BLOCK
    for block in prange(n_blocks):
        lo = block * _CODE_BLOCK
        hi = min(n, lo + _CODE_BLOCK)
        for f in range(X.shape[1]):  # 2-D arrays, not rows: a row's view would count
            _code_block(X, f, lo, hi, cuts, first, lowest[f], scale[f], codes_t, removed)


@njit(cache=True, nogil=True, noalias=True)
def _renumber_rows(lo, hi, renumbered, removed, codes_t):
    """Rows ``[lo, hi)``'s codes of the ``renumbered`` features, less the cuts removed at or
    below them (``removed`` summed along each feature)."""
    for f in renumbered:
        for i in range(lo, hi):
            if codes_t[f, i] != MISSING_CODE:
                codes_t[f, i] -= removed[f, codes_t[f, i]]


@njit(cache=True, inline="always")
def _place_cuts(sample, cuts):
    """Cuts (the last value of a bin) after about every ``n_known / (N_CODES - 1)`` of the sorted
    ``sample``'s known values, each between two more than ``FEATURE_THRESHOLD`` apart, into
    ``cuts``; returns their number."""
    n_known = sample.shape[0]
    while n_known > 0 and sample[n_known - 1] != sample[n_known - 1]:
        n_known -= 1  # NaN, sorted last
    n_cuts = 0
    for k in range(n_known - 1):
        if (n_cuts < MISSING_CODE - 1 and (k + 1) * (MISSING_CODE - 1) >= (n_cuts + 1) * n_known
                and not _same_value(sample[k], sample[k + 1])):
            cuts[n_cuts] = sample[k]
            n_cuts += 1
    return n_cuts


@njit(cache=True, inline="always")
def _buckets(cuts, n_cuts, first):
    """Buckets of equal width over the range of ``cuts[:n_cuts]``: ``first[b]`` the first cut of
    bucket ``b`` or above; returns the range's start and the buckets per unit (0: one bucket
    for all, where the range is empty or infinite; -1: none, some bucket holding more than
    ``_BUCKET_CUTS`` cuts)."""
    lowest = np.float64(cuts[0]) if n_cuts > 0 else 0.0
    span = np.float64(cuts[n_cuts - 1]) - lowest if n_cuts > 0 else 0.0
    scale = (_BUCKETS - 1) / span if span > 0.0 and span < np.inf else 0.0
    first[:] = 0
    for k in range(n_cuts):  # cuts per bucket, then the first of each bucket
        first[_bucket(cuts[k], lowest, scale) + 1] += 1
    most = 0
    for b in range(_BUCKETS):
        most = max(most, np.int64(first[b + 1]))
        first[b + 1] += first[b]
    return lowest, (scale if most <= _BUCKET_CUTS else -1.0)


@njit(cache=True, inline="always")
def _code_block(X, f, lo, hi, cuts, first, lowest, scale, codes, removed):
    """Rows ``[lo, hi)``'s codes of feature ``f`` (into ``codes[f]``; ``cuts[f]``, ``first[f]``,
    ``removed[f]`` its own): the number of cuts below each value
    (:data:`MISSING_CODE` for NaN), found among the cuts of its bucket (a bucket is a monotone
    function of the value, so cuts of lower buckets are below it and cuts of higher ones
    above), or without buckets (``scale`` negative: some bucket holds many cuts, as skewed
    values' equal-width buckets do) by a binary search of all the cuts (``cuts`` holds
    ``N_CODES`` values, the sentinels above every value).  Marks in ``removed`` the cuts some
    value above lies within ``FEATURE_THRESHOLD`` of (possible where the sample missed that
    value): their two bins are merged."""
    if scale < 0.0:
        for i in range(lo, hi):
            v = X[i, f]
            low = 0
            half = N_CODES >> 1
            while half > 0:  # without a branch: a fixed number of steps
                low += (cuts[f, low + half - 1] < v) * half
                half >>= 1
            _store_code(v, low, cuts, codes, f, i, removed)
        return
    for i in range(lo, hi):
        v = X[i, f]
        low = np.int64(first[f, _bucket(v, lowest, scale)])  # NaN: bucket 0, coded missing
        # at most _BUCKET_CUTS cuts in a bucket: as many steps, without a branch (a cut of a
        # higher bucket, or a sentinel, is above v)
        for _ in range(_BUCKET_CUTS):
            low += cuts[f, low] < v
        _store_code(v, low, cuts, codes, f, i, removed)


@njit(cache=True, inline="always")
def _store_code(v, low, cuts, codes, f, i, removed):
    """Row ``i``'s code of feature ``f`` (``low`` cuts below ``v``, or :data:`MISSING_CODE`), and
    the cut below marked removed where ``v`` lies within ``FEATURE_THRESHOLD`` of it."""
    codes[f, i] = low if v == v else MISSING_CODE
    if low > 0 and _same_value(cuts[f, low - 1], v):
        removed[f, low] = 1


@njit(cache=True, inline="always")
def _bucket(v, lowest, scale):
    """``v``'s bucket: ``floor((v - lowest) * scale)`` within ``[0, _BUCKETS)``, 0 for NaN."""
    t = (np.float64(v) - lowest) * scale
    t = t if t > 0.0 else 0.0
    return np.int64(t if t < _BUCKETS - 1 else _BUCKETS - 1)


@njit(cache=True, inline="always")
def _children_impurity(l0, l1, r0, r1, criterion, table):
    """The children's impurity at integer class weights: the scan's own formula
    (:func:`~fasttree.kernels.split_search._binary_counts_impurity`); a side may be empty (the
    box corners at the node's first and last rows), adding nothing."""
    if l0 + l1 > 0 and r0 + r1 > 0:
        return _binary_counts_impurity(l0 + l1, l1, r0 + r1, r1, criterion, table)
    if l0 + l1 == 0:
        l0, l1 = r0, r1
    if criterion == CRITERION_GINI:
        return 2.0 * l0 * l1 / (l0 + l1)
    return table[np.uint64(l0 + l1)] - table[np.uint64(l0)] - table[np.uint64(l1)]


#: the low 32 bits of a bin's packed weight and class-1 weight
_LOW = np.int64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _bin_rows(hist, c, unit_weight):
    """A bin's rows: its weight with unit weights, else counted apart."""
    return (hist[1, c] >> 32) if unit_weight else hist[0, c]


@njit(cache=True, no_cpython_wrapper=True)
def bounded_search(codes_t, codes_rows, X, X_t, dense, f, rows, labels, weight, a, n, codes,
                   hist, bounds, values, positions, order, keys_tmp, idx_tmp, sort_counts,
                   w_total, total_1, criterion, min_rows, min_weight_leaf, table):
    """The best threshold of feature ``f`` for the node of positions ``[a, a + n)``.

    ``codes_t`` from :func:`fine_bin_codes`, ``codes_rows`` the same transposed (C-contiguous;
    read where the node's rows span ``SCATTERED_SPAN`` times their number) or empty; ``X``,
    ``X_t`` the values (read from ``X_t`` when ``dense``); ``rows``, ``labels`` (0 or 1),
    ``weight`` (empty: every weight 1; else uint8 counts) the layout by position; ``w_total``,
    ``total_1`` the node's weight and class-1 weight (integers); ``min_rows`` the rows a child
    needs (with unit weights, the weight minimum folded in), ``min_weight_leaf`` its weight (the
    scan's leaf minimums, :func:`~fasttree.kernels.split_record.leaf_minimums_met`); ``table``
    ``c log2 c`` for entropy.
    The node's bins: its range of codes of ``f``, adjacent codes merged (``2 ** k`` a bin, the
    least ``k`` leaving at most ``n // ROWS_PER_BIN`` bins).
    Scratch: ``codes`` (uint16, ``n``; left holding each row's bin of the node), ``hist`` (int64,
    ``(5, N_CODES)``), ``bounds`` (float64, ``N_CODES``), ``values`` (float32), ``positions``
    (int32), ``order``, ``keys_tmp``, ``idx_tmp``, ``sort_counts`` (:func:`sort_values`'), each
    at least ``n`` long.

    Returns ``(searched, value, n_left, threshold, lowest, highest)``: ``searched`` False when
    the node has missing values of ``f``, all its rows in one code or a weight of 2**31 or more
    (the caller sorts the node instead); else the lowest children impurity (``inf`` when no
    candidate keeps the leaf minimums), the rows going left, the threshold and the bins
    ``lowest .. highest`` whose rows need their value to be sent by it (the others go left
    below ``lowest``, right above).
    """
    unit_weight = weight.shape[0] == 0
    if w_total >= 1 << 31:  # a bin's weight and class-1 weight are counted in 32 bits each
        return False, np.inf, -1, 0.0, 0, -1
    lowest_code = MISSING_CODE
    highest_code = 0
    scattered = codes_rows.shape[0] > 0 and rows[a + n - 1] - rows[a] >= SCATTERED_SPAN * n
    # the node's slices: indices from 0, which the compiler knows are not negative
    node_rows = rows[a:a + n]
    node_labels = labels[a:a + n]
    node_weight = weight[a:a + n]
    for i in range(n):
        row = node_rows[i]
        c = codes_rows[row, f] if scattered else codes_t[f, row]
        codes[i] = c
        lowest_code = min(lowest_code, c)
        highest_code = max(highest_code, c)
    if highest_code == MISSING_CODE or lowest_code == highest_code:
        return False, np.inf, -1, 0.0, 0, -1  # missing values, or one code
    # the node's bins span its range of codes only (a node below a split of f holds a part of
    # it), coarser where that range holds more than n // ROWS_PER_BIN codes
    shift = 0
    while ((highest_code - lowest_code) >> shift) + 1 > max(n // ROWS_PER_BIN, 2):
        shift += 1
    n_bins = ((highest_code - lowest_code) >> shift) + 1
    # per bin: weight << 32 | class-1 weight (hist[1]), and rows (hist[0]) with counts: one
    # add to memory a row with unit weights, two with counts
    hist[:2, :n_bins] = 0
    for i in range(n):
        c = (codes[i] - lowest_code) >> shift
        codes[i] = c
        label = np.int64(node_labels[i])
        if unit_weight:
            hist[1, c] += (np.int64(1) << 32) + label
        else:
            m = np.int64(node_weight[i])
            hist[0, c] += 1
            hist[1, c] += (m << 32) + label * m
    # the thresholds between non-empty bins, scored from the counts; hist[2:5] gets the rows,
    # weight and class-1 weight before each bin, bounds the lowest corner of the box of its
    # inner thresholds' left class weights: the corners before and after the bin are the
    # thresholds between bins, the other two the bin's rows of one class first
    total_0 = w_total - total_1
    best = np.inf
    best_rows = -1
    best_t = 0.0
    edge = -1  # the bin left of the best threshold if it lies between two bins
    n_left = 0
    w_left = 0
    left_1 = 0
    before = _children_impurity(0, 0, total_0, total_1, criterion, table)
    for c in range(n_bins):
        bin_rows = _bin_rows(hist, c, unit_weight)
        if bin_rows == 0:
            continue
        bin_w = hist[1, c] >> 32
        bin_1 = hist[1, c] & _LOW
        hist[2, c] = n_left
        hist[3, c] = w_left
        hist[4, c] = left_1
        left_0 = w_left - left_1
        n_left += bin_rows
        w_left += bin_w
        left_1 += bin_1
        after = _children_impurity(w_left - left_1, left_1, total_0 - w_left + left_1,
                                   total_1 - left_1, criterion, table)
        bound = np.inf  # a bin of one row has no inner threshold
        if bin_rows >= 2:
            bin_0 = bin_w - bin_1
            first_1 = left_1 - bin_1
            bound = min(before, after,
                        _children_impurity(left_0 + bin_0, first_1, total_0 - left_0 - bin_0,
                                           total_1 - first_1, criterion, table),
                        _children_impurity(left_0, left_1, total_0 - left_0,
                                           total_1 - left_1, criterion, table))
        bounds[c] = bound
        if n_left < n and after < best and leaf_minimums_met(
                n_left, n - n_left, w_left, w_total - w_left, min_rows, min_weight_leaf):
            best, best_rows, edge = after, n_left, c
        before = after
    # the bins that may hold a threshold at least as good: bound within the margin of the best
    margin = _MARGIN * (w_total + 1.0)
    if criterion != CRITERION_GINI:
        margin *= np.log2(w_total + 2.0)
    limit = best + margin
    n_alive = 0
    for c in range(n_bins):
        if _bin_rows(hist, c, unit_weight) >= 2 and bounds[c] <= limit:
            n_alive += _bin_rows(hist, c, unit_weight)
    lowest, highest = 0, -1
    if n_alive > 0:  # the alive bins' rows sorted and scanned, each bin from its counts
        m = 0
        for i in range(n):  # without a branch, so that the reads below overlap their misses
            positions[m] = i
            m += bounds[codes[i]] <= limit
        for k in range(m):
            row = node_rows[positions[k]]
            values[k] = X_t[f, row] if dense else X[row, f]
        sort_values(values[:m], order[:m], keys_tmp, idx_tmp, sort_counts)
        current = -1
        for k in range(m):
            i = positions[order[k]]
            c = codes[i]
            if c != current:
                current = c
                n_left = hist[2, c]
                w_left = hist[3, c]
                left_1 = hist[4, c]
            w = 1 if unit_weight else np.int64(node_weight[i])
            n_left += 1
            w_left += w
            left_1 += np.int64(node_labels[i]) * w
            if k + 1 == m or codes[positions[order[k + 1]]] != c:
                continue  # the bin's last row: a threshold between bins, scored above
            if _same_value(values[k], values[k + 1]):
                continue
            if leaf_minimums_met(n_left, n - n_left, w_left, w_total - w_left, min_rows,
                                 min_weight_leaf):
                value = _binary_counts_impurity(w_left, left_1, w_total - w_left,
                                                total_1 - left_1, criterion, table)
                # the lowest threshold on a tie, as the scan keeps it: fewest rows left
                if value < best or (value == best and n_left < best_rows):
                    best, best_rows, edge = value, n_left, -1
                    best_t = _midpoint(values[k], values[k + 1])
                    lowest = highest = c
    if edge >= 0:  # between bin edge and the next non-empty one: their closest values
        right = edge + 1
        while _bin_rows(hist, right, unit_weight) == 0:
            right += 1
        below = np.float32(-np.inf)
        above = np.float32(np.inf)
        for i in range(n):
            c = codes[i]
            if c == edge or c == right:
                v = X_t[f, node_rows[i]] if dense else X[node_rows[i], f]
                if c == edge:
                    below = max(below, v)
                else:
                    above = min(above, v)
        best_t = _midpoint(below, above)
        lowest, highest = edge + 1, right - 1
    return True, best, best_rows, best_t, lowest, highest
