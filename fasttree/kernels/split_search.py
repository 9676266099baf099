"""Exact split search: every node of a level, every feature, every distinct midpoint.

Layout shared by the kernels here and in :mod:`fasttree.kernels.partition` (one row per feature)::

    sorted_x[f]   | node a: sorted by x_f | node b: sorted by x_f | ... | finished leaves ... |
                   ^seg_start[0]          ^seg_start[1]
    sorted_idx[f] | the row ids of those values, same positions                              |
    sorted_y[f]   | their targets (class labels or regression values), same positions        |

A node ("segment") owns the positions ``seg_start[s] <= p < seg_end[s]`` in *every* feature row, so
its rows are contiguous and already in sorted order for each feature: one forward scan with
cumulative statistics evaluates all its candidate thresholds.  Carrying the targets along in
``sorted_y`` makes an unweighted scan purely sequential (no gather through row ids).

Both kernels return, per (feature, segment), the *children impurity* of the best split, i.e.
``w_left * impurity(left) + w_right * impurity(right)`` with weighted sample counts ``w``; lower is
better, ``+inf`` means "no valid split".  The impurity decrease of a split is then
``w_node * impurity(node) - children_impurity``.
"""

import numpy as np
from numba import njit, prange

from .._dtypes import CRITERION_GINI


@njit(cache=True, inline="always")
def _xlog2x(v):
    # 0 log 0 = 0; a tiny negative from float cancellation also counts as empty.
    if v <= 0.0:
        return 0.0
    return v * np.log2(v)


@njit(cache=True, inline="always")
def _midpoint(a, b):
    """Float64 midpoint of two consecutive distinct float32 values, never equal to ``b``.

    ``a/2 + b/2`` cannot overflow; if rounding lands on ``b`` (values one ulp apart in float64),
    fall back to ``a`` so that ``x <= threshold`` still separates them (scikit-learn does the same).
    """
    t = np.float64(a) / 2.0 + np.float64(b) / 2.0
    if t == np.float64(b):
        t = np.float64(a)
    return t


@njit(cache=True)
def xlog2x_table(n):
    """``table[c] = c * log2(c)`` for the integer counts ``c = 0 .. n`` (``table[0] = 0``).

    Parameters
    ----------
    n : int
        Largest count (the number of rows).

    Returns
    -------
    table : ndarray of shape (n + 1,), float64
    """
    table = np.empty(n + 1)
    table[0] = 0.0
    for c in range(1, n + 1):
        table[c] = c * np.log2(c)
    return table


@njit(cache=True, inline="always")
def _classification_children_impurity(left, total, w_left, w_right, criterion):
    n_classes = left.shape[0]
    if criterion == CRITERION_GINI:
        sq_left = 0.0
        sq_right = 0.0
        for k in range(n_classes):
            c_left = left[k]
            c_right = total[k] - c_left
            sq_left += c_left * c_left
            sq_right += c_right * c_right
        return (w_left - sq_left / w_left) + (w_right - sq_right / w_right)
    # entropy in bits: w H = w log2 w - sum_k c_k log2 c_k
    s = _xlog2x(w_left) + _xlog2x(w_right)
    for k in range(n_classes):
        c_left = left[k]
        s -= _xlog2x(c_left) + _xlog2x(total[k] - c_left)
    return s


@njit(cache=True, inline="always")
def _scan_weighted(xs, idx, labels, sample_weight, total, left, criterion, min_samples_leaf,
                   min_weight_leaf):
    """Scan one (feature, node) pair with float weights.

    The arrays are the node's slices of the layout (positions from 0, so that no index can be
    negative and numba emits no wrap-around checks).  Returns (best value, best position ``i``:
    rows ``0..i`` go left), position -1 if there is no valid split.
    """
    n_classes = left.shape[0]
    w_total = 0.0
    for k in range(n_classes):
        left[k] = 0.0
        w_total += total[k]
    w_left = 0.0
    best = np.inf
    best_p = -1
    # Candidate between positions p and p+1; the last rows can never go left.
    for p in range(xs.shape[0] - min_samples_leaf):
        w = sample_weight[idx[p]]
        left[labels[p]] += w
        w_left += w
        if xs[p + 1] == xs[p] or p + 1 < min_samples_leaf:
            continue
        w_right = w_total - w_left
        if w_left < min_weight_leaf or w_right < min_weight_leaf:
            continue
        if w_left <= 0.0 or w_right <= 0.0:
            continue  # zero-weight child: its impurity is undefined
        value = _classification_children_impurity(left, total, w_left, w_right, criterion)
        if value < best:
            best = value
            best_p = p
    return best, best_p


@njit(cache=True, inline="always")
def _scan_unit_weight_binary(xs, labels, total_1, criterion, min_rows_leaf, table):
    """Two classes, every weight 1: one integer counter, a handful of operations per row."""
    n_node = xs.shape[0]
    left_1 = 0
    best = np.inf
    best_p = -1
    for p in range(n_node - min_rows_leaf):
        left_1 += labels[p]
        if xs[p + 1] == xs[p]:
            continue
        n_left = p + 1
        if n_left < min_rows_leaf:
            continue
        n_right = n_node - n_left
        left_0 = n_left - left_1
        right_1 = total_1 - left_1
        right_0 = n_right - right_1
        if criterion == CRITERION_GINI:
            value = (n_left - (left_0 * left_0 + left_1 * left_1) / n_left) + (
                n_right - (right_0 * right_0 + right_1 * right_1) / n_right)
        else:
            value = (table[n_left] + table[n_right]
                     - (table[left_0] + table[left_1]) - (table[right_0] + table[right_1]))
        if value < best:
            best = value
            best_p = p
    return best, best_p


@njit(cache=True, inline="always")
def _scan_unit_weight(xs, labels, total, left, criterion, min_rows_leaf, table):
    """Any number of classes, every weight 1: integer counts, no weight reads.

    Gini keeps the sums of squared counts up to date in O(1) per row (exact: they are integers);
    entropy reads c log2 c from ``table``.  Both give bit-identical values for identical
    partitions, whatever feature produced them, so ties between features stay exact.
    """
    n_classes = left.shape[0]
    n_node = xs.shape[0]
    sq_left = 0
    sq_right = 0
    for k in range(n_classes):
        left[k] = 0
        sq_right += total[k] * total[k]
    best = np.inf
    best_p = -1
    for p in range(n_node - min_rows_leaf):
        c = labels[p]
        c_left = left[c]
        c_right = total[c] - c_left
        sq_left += 2 * c_left + 1
        sq_right -= 2 * c_right - 1
        left[c] = c_left + 1
        if xs[p + 1] == xs[p]:
            continue
        n_left = p + 1
        if n_left < min_rows_leaf:
            continue
        n_right = n_node - n_left
        if criterion == CRITERION_GINI:
            value = (n_left - sq_left / n_left) + (n_right - sq_right / n_right)
        else:
            value = table[n_left] + table[n_right]
            for k in range(n_classes):
                value -= table[left[k]] + table[total[k] - left[k]]
        if value < best:
            best = value
            best_p = p
    return best, best_p


@njit(parallel=True, cache=True)
def find_best_splits_classification(
    sorted_x,
    sorted_idx,
    sorted_y,
    sample_weight,
    seg_start,
    seg_end,
    seg_class_weight,
    feature_mask,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    xlog2x,
):
    """Best threshold of every feature for every segment (node) of a level, classification.

    Parameters
    ----------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous (IN)
        Feature values, each node's rows contiguous and sorted (see the module docstring).
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
        Row ids matching ``sorted_x`` (read only for a weighted fit).
    sorted_y : ndarray of shape (n_features, n_samples), uint8 or uint16, C-contiguous (IN)
        Encoded classes ``0 .. n_classes - 1`` of the rows at the same positions (from
        :func:`gather_targets`); uint8 up to 256 classes.
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Non-negative weights indexed by row id; an empty array means every weight is 1, and the
        kernel then counts in integers and reads neither weights nor ``sorted_idx``: the scan
        touches contiguous memory only.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Position range ``[seg_start[s], seg_end[s])`` of each node; ranges must not overlap.
    seg_class_weight : ndarray of shape (n_segments, n_classes), float64 (IN)
        Weighted class counts of each node (from :func:`segment_class_weights`).
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
        0 skips the (feature, node) pair (used by ``max_features``); all ones to search everything.
    criterion : int
        ``CRITERION_GINI`` (0) or ``CRITERION_ENTROPY`` (1, entropy in bits).
    min_samples_leaf : int
        Minimum number of rows (unweighted) in each child.
    min_weight_leaf : float
        Minimum weighted count in each child.
    xlog2x : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``c log2 c`` for integer counts (:func:`xlog2x_table`): required for entropy with unit
        weights, which then reads it instead of computing logarithms; otherwise unused (pass an
        empty array).

    Returns
    -------
    children_impurity : ndarray of shape (n_features, n_segments), float64
        ``w_left * I(left) + w_right * I(right)`` of the best split; ``+inf`` if none is valid.
    threshold : ndarray of shape (n_features, n_segments), float64
        Midpoint between the two consecutive distinct values the best split separates; rows with
        ``x <= threshold`` go left.
    n_left : ndarray of shape (n_features, n_segments), int32
        Number of rows that go left (the first ``n_left`` positions of the segment in that feature).

    Notes
    -----
    Parallel over features; each (feature, node) pair is scanned sequentially and writes only its
    own output slot, so results do not depend on the number of threads.  Within a feature a tie goes
    to the lowest threshold (strict ``<``).
    """
    n_features = sorted_x.shape[0]
    n_segments = seg_start.shape[0]
    n_classes = seg_class_weight.shape[1]
    unit_weight = sample_weight.shape[0] == 0
    # with unit weights a child of n rows weighs n, so both minimums are one row count
    min_rows_leaf = max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf)))
    children_impurity = np.full((n_features, n_segments), np.inf)
    threshold = np.zeros((n_features, n_segments))
    n_left = np.zeros((n_features, n_segments), dtype=np.int32)

    for f in prange(n_features):
        left = np.empty(n_classes)
        left_count = np.empty(n_classes, dtype=np.int64)
        total_count = np.empty(n_classes, dtype=np.int64)
        xs = sorted_x[f]
        labels = sorted_y[f]
        for s in range(n_segments):
            if feature_mask[f, s] == 0:
                continue
            start = seg_start[s]
            end = seg_end[s]
            if end - start < 2 * min_samples_leaf or xs[start] == xs[end - 1]:
                continue
            xs_node = xs[start:end]
            labels_node = labels[start:end]
            if not unit_weight:
                best, best_p = _scan_weighted(
                    xs_node, sorted_idx[f, start:end], labels_node, sample_weight,
                    seg_class_weight[s], left, criterion, min_samples_leaf, min_weight_leaf)
            elif n_classes == 2:
                best, best_p = _scan_unit_weight_binary(
                    xs_node, labels_node, np.int64(seg_class_weight[s, 1]), criterion,
                    min_rows_leaf, xlog2x)
            else:
                for k in range(n_classes):
                    total_count[k] = np.int64(seg_class_weight[s, k])
                best, best_p = _scan_unit_weight(
                    xs_node, labels_node, total_count, left_count, criterion, min_rows_leaf,
                    xlog2x)
            if best_p >= 0:
                children_impurity[f, s] = best
                threshold[f, s] = _midpoint(xs_node[best_p], xs_node[best_p + 1])
                n_left[f, s] = best_p + 1
    return children_impurity, threshold, n_left


@njit(parallel=True, cache=True)
def gather_targets(sorted_idx, y):
    """Targets in layout order: ``sorted_y[f, p] = y[sorted_idx[f, p]]``, features in parallel.

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
    y : ndarray of shape (n_samples,), uint8 or uint16 (classes) or float64 (regression) (IN)

    Returns
    -------
    sorted_y : ndarray of shape (n_features, n_samples), same dtype as ``y``
    """
    n_features, n_samples = sorted_idx.shape
    sorted_y = np.empty((n_features, n_samples), dtype=y.dtype)
    for f in prange(n_features):
        for p in range(n_samples):
            sorted_y[f, p] = y[sorted_idx[f, p]]
    return sorted_y


@njit(cache=True)
def reciprocal_table(n):
    """``table[c] = 1 / c`` for the integer counts ``c = 1 .. n`` (``table[0] = inf``).

    Lets an unweighted regression scan multiply instead of divide per candidate.

    Parameters
    ----------
    n : int
        Largest count (the number of rows).

    Returns
    -------
    table : ndarray of shape (n + 1,), float64
    """
    table = np.empty(n + 1)
    table[0] = np.inf
    for c in range(1, n + 1):
        table[c] = 1.0 / c
    return table


@njit(cache=True, inline="always")
def _scan_regression_unit_weight(xs, ys, sum_total, min_rows_leaf, reciprocal):
    """Every weight 1: maximise sum_left**2 / n_left + sum_right**2 / n_right, the reciprocals of
    the counts read from a table.  Returns (best proxy, best position)."""
    n_node = xs.shape[0]
    sum_left = 0.0
    best = -np.inf
    best_p = -1
    for p in range(n_node - min_rows_leaf):
        sum_left += ys[p]
        if xs[p + 1] == xs[p]:
            continue
        n_left = p + 1
        if n_left < min_rows_leaf:
            continue
        sum_right = sum_total - sum_left
        proxy = (sum_left * sum_left * reciprocal[n_left]
                 + sum_right * sum_right * reciprocal[n_node - n_left])
        if proxy > best:
            best = proxy
            best_p = p
    return best, best_p


@njit(cache=True, inline="always")
def _scan_regression_weighted(xs, ys, idx, sample_weight, w_total, sum_total, min_samples_leaf,
                              min_weight_leaf):
    """Float weights: maximise sum_left**2 / w_left + sum_right**2 / w_right."""
    w_left = 0.0
    sum_left = 0.0
    best = -np.inf
    best_p = -1
    for p in range(xs.shape[0] - min_samples_leaf):
        w = sample_weight[idx[p]]
        w_left += w
        sum_left += w * ys[p]
        if xs[p + 1] == xs[p] or p + 1 < min_samples_leaf:
            continue
        w_right = w_total - w_left
        if w_left < min_weight_leaf or w_right < min_weight_leaf:
            continue
        if w_left <= 0.0 or w_right <= 0.0:
            continue
        sum_right = sum_total - sum_left
        proxy = sum_left * sum_left / w_left + sum_right * sum_right / w_right
        if proxy > best:
            best = proxy
            best_p = p
    return best, best_p


@njit(parallel=True, cache=True)
def find_best_splits_regression(
    sorted_x,
    sorted_idx,
    sorted_y,
    sample_weight,
    seg_start,
    seg_end,
    seg_sums,
    feature_mask,
    min_samples_leaf,
    min_weight_leaf,
    reciprocal,
):
    """Best threshold of every feature for every segment (node) of a level, squared error.

    Same contract as :func:`find_best_splits_classification`, except:

    Parameters
    ----------
    sorted_y : ndarray of shape (n_features, n_samples), float64, C-contiguous (IN)
        Regression target of the rows at the same positions (from :func:`gather_targets`).
    seg_sums : ndarray of shape (n_segments, 3), float64 (IN)
        Per node ``[sum w, sum w*y, sum w*y**2]`` (from :func:`segment_target_sums`).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        As in the classification kernel: empty means every weight is 1.
    reciprocal : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``1 / c`` for integer counts (:func:`reciprocal_table`): required with unit weights,
        unused otherwise.

    Returns
    -------
    children_impurity, threshold, n_left
        As in the classification kernel, with impurity the weighted variance (mean squared error
        around the child's mean), so ``children_impurity`` is the children's total squared error,
        ``sum w*y**2 - proxy`` with scikit-learn's proxy ``sum_left**2 / w_left +
        sum_right**2 / w_right`` (maximised, lowest threshold on a tie).
    """
    n_features = sorted_x.shape[0]
    n_segments = seg_start.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    min_rows_leaf = max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf)))
    children_impurity = np.full((n_features, n_segments), np.inf)
    threshold = np.zeros((n_features, n_segments))
    n_left = np.zeros((n_features, n_segments), dtype=np.int32)

    for f in prange(n_features):
        for s in range(n_segments):
            if feature_mask[f, s] == 0:
                continue
            start = seg_start[s]
            end = seg_end[s]
            # node slices: indices from 0, so numba emits no wrap-around checks
            xs = sorted_x[f, start:end]
            if end - start < 2 * min_samples_leaf or xs[0] == xs[end - start - 1]:
                continue
            ys = sorted_y[f, start:end]
            if unit_weight:
                best, best_p = _scan_regression_unit_weight(xs, ys, seg_sums[s, 1],
                                                            min_rows_leaf, reciprocal)
            else:
                best, best_p = _scan_regression_weighted(
                    xs, ys, sorted_idx[f, start:end], sample_weight, seg_sums[s, 0],
                    seg_sums[s, 1], min_samples_leaf, min_weight_leaf)
            if best_p >= 0:
                children_impurity[f, s] = max(seg_sums[s, 2] - best, 0.0)
                threshold[f, s] = _midpoint(xs[best_p], xs[best_p + 1])
                n_left[f, s] = best_p + 1
    return children_impurity, threshold, n_left


@njit(cache=True)
def select_best_splits(children_impurity):
    """Reduce per-(feature, node) results to one feature per node, deterministically.

    Parameters
    ----------
    children_impurity : ndarray of shape (n_features, n_segments), float64 (IN)
        As returned by the split kernels (``+inf`` where no valid split).

    Returns
    -------
    best_feature : ndarray of shape (n_segments,), int64
        The feature with the lowest children impurity; a tie goes to the lowest feature index
        (serial scan with strict ``<``).  ``-1`` where no feature has a valid split.
    """
    n_features, n_segments = children_impurity.shape
    best_feature = np.full(n_segments, -1, dtype=np.int64)
    for s in range(n_segments):
        best = np.inf
        for f in range(n_features):
            if children_impurity[f, s] < best:
                best = children_impurity[f, s]
                best_feature[s] = f
    return best_feature
