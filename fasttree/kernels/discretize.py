"""Discretization kernels: entropy (MDL) cuts of every column at once, equal-frequency edges.

Entropy discretization (Fayyad and Irani, 1993) splits each column recursively.  Each column is
sorted once (:func:`~fasttree.kernels.presort_features`, NaN last); an interval of a column is
then a *segment* ``seg_start <= p < seg_end`` of that column's sorted row, and a cut splits it
into two adjacent segments: nothing is ever moved or sorted again.  One call of
:func:`entropy_cut_level` evaluates one recursion level of every column: for each (column,
segment) pair, in parallel, the trees' own entropy scan (:mod:`fasttree.kernels.split_search`,
cumulative class counts) finds the cut of least class entropy, and one more pass sums each side's
class weights for what the MDL criterion needs to accept or refuse it.

Conventions are the tree's (:mod:`fasttree.kernels.split_search`): candidates are the float64
midpoints between consecutive distinct values, two sorted values at most ``FEATURE_THRESHOLD``
(1e-7, float32 arithmetic) apart count as one value, and among equally good cuts the lowest
wins.  Entropies are the ``w * entropy`` of :func:`fasttree.kernels.criteria.
weighted_class_impurity`.
"""

import numpy as np
from numba import prange

from .._dtypes import CRITERION_ENTROPY
from .._jit import njit
from .criteria import weighted_class_impurity
from .split_search import _class_scan, _midpoint, _scan_weighted_classes

_scan_unit_binary = _class_scan(True, True, False, False)
_scan_unit_classes = _class_scan(True, False, False, False)

_LOG2_3 = np.log2(3.0)


@njit(cache=True, inline="always")
def _log2_3k_minus_2(k):
    """``log2(3**k - 2)``; past k = 30, ``3**k - 2`` equals ``3**k`` to double precision."""
    if k <= 30:
        return np.log2(3.0 ** k - 2.0)
    return k * _LOG2_3


@njit(cache=True, inline="always")
def _gain_and_mdl(total, left, right):
    """Information gain (bits per unit weight) of the cut splitting ``total`` into ``left`` and
    ``right``, and the gain the MDL criterion requires of it (``inf`` when ``N <= 1``)."""
    n = 0.0
    n_left = 0.0
    k = 0
    k_left = 0
    k_right = 0
    for c in range(total.shape[0]):
        n += total[c]
        n_left += left[c]
        k += total[c] > 0.0
        k_left += left[c] > 0.0
        k_right += right[c] > 0.0
    n_right = n - n_left
    i_node = weighted_class_impurity(total, CRITERION_ENTROPY)  # N * Ent(S)
    i_left = weighted_class_impurity(left, CRITERION_ENTROPY)
    i_right = weighted_class_impurity(right, CRITERION_ENTROPY)
    gain = (i_node - i_left - i_right) / n
    if n <= 1.0:
        return gain, np.inf
    ent = i_node / n
    ent_left = i_left / n_left if n_left > 0.0 else 0.0
    ent_right = i_right / n_right if n_right > 0.0 else 0.0
    delta = _log2_3k_minus_2(k) - (k * ent - k_left * ent_left - k_right * ent_right)
    return gain, np.log2(n - 1.0) / n + delta / n


@njit(cache=True, parallel=True)
def entropy_cut_level(sorted_x, sorted_y, sorted_w, seg_feature, seg_start, seg_end, seg_counts,
                      table):
    """Best entropy cut of every segment of one recursion level, with its MDL verdict's terms.

    Parameters
    ----------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous (IN)
        Each column's values in non-decreasing order, NaN last
        (:func:`~fasttree.kernels.presort_features`).
    sorted_y : ndarray of shape (n_features, n_samples), uint8 or uint16, C-contiguous (IN)
        Class codes ``0 .. n_classes - 1`` in the same order
        (:func:`~fasttree.kernels.gather_targets`).
    sorted_w : ndarray of shape (n_features, n_samples) or (0, 0), float64, C-contiguous (IN)
        Sample weights in the same order (``gather_targets`` of the weights); shape (0, 0) means
        every weight is 1 (then ``table`` is used).
    seg_feature, seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Segment ``s`` is the positions ``seg_start[s] <= p < seg_end[s]`` of column
        ``seg_feature[s]``'s sorted row; it holds no NaN.
    seg_counts : ndarray of shape (n_segments, n_classes), float64 (IN)
        Weighted class counts of each segment.
    table : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        :func:`~fasttree.kernels.xlog2x_table` of ``n_samples`` for unit weights (unused, and
        may be empty, with real weights).

    Returns
    -------
    cut_pos : ndarray of shape (n_segments,), int64
        Last position below the best cut (the segment splits into ``[seg_start, cut_pos + 1)``
        and ``[cut_pos + 1, seg_end)``); -1 when the segment has no candidate (a single value,
        or with real weights no cut leaving weight on both sides).
    threshold : ndarray of shape (n_segments,), float64
        The cut point: the midpoint of the values at ``cut_pos`` and ``cut_pos + 1``.
    gain : ndarray of shape (n_segments,), float64
        Information gain in bits, ``Ent(S) - (N1 Ent(S1) + N2 Ent(S2)) / N``, the largest over
        the segment's candidates (the lowest cut on ties).
    mdl_threshold : ndarray of shape (n_segments,), float64
        ``log2(N - 1) / N + Delta / N`` with ``Delta = log2(3**k - 2) - (k Ent(S) - k1 Ent(S1)
        - k2 Ent(S2))`` (``k``: classes of positive weight); the MDL criterion accepts the cut
        iff ``gain > mdl_threshold``.  ``inf`` when ``N <= 1``.
    left_counts, right_counts : ndarray of shape (n_segments, n_classes), float64
        Weighted class counts below and above the cut (zeros when there is no cut); with real
        weights both are summed afresh, so that a class absent from a side counts exactly 0.

    Notes
    -----
    Segments are processed in parallel; each is scanned once.  ``N`` is the segment's total
    weight; entropies are in bits.
    """
    n_segments = seg_start.shape[0]
    n_classes = seg_counts.shape[1]
    unit_weight = sorted_w.shape[0] == 0
    cut_pos = np.full(n_segments, -1, dtype=np.int64)
    threshold = np.full(n_segments, np.nan)
    gain = np.zeros(n_segments)
    mdl_threshold = np.full(n_segments, np.inf)
    left_counts = np.zeros((n_segments, n_classes))
    right_counts = np.zeros((n_segments, n_classes))
    for s_ in prange(n_segments):
        s = np.int64(s_)
        f = seg_feature[s]
        start = seg_start[s]
        end = seg_end[s]
        if end - start < 2:
            continue
        xs = sorted_x[f, start:end]
        labels = sorted_y[f, start:end]
        total = seg_counts[s]
        best_left = left_counts[s]
        # the tree's scan (split_search), entropy, at least one row a side; a constant flag in
        # each call, so that each is compiled for its kind only
        n = end - start
        if unit_weight:
            total_int = np.empty(n_classes, dtype=np.int64)
            for k in range(n_classes):
                total_int[k] = np.int64(total[k])
            left_int = np.zeros(n_classes, dtype=np.int64)
            scratch_int = np.empty((2, n_classes), dtype=np.int64)
            if n_classes == 2:
                best, best_p, _, _, _ = _scan_unit_binary(
                    xs, labels, labels, sorted_w, total_int, left_int, 0, scratch_int,
                    CRITERION_ENTROPY, 1, 0.0, table, 0, 0.0, 0.0, 0, n)
            else:
                best, best_p, _, _, _ = _scan_unit_classes(
                    xs, labels, labels, sorted_w, total_int, left_int, 0, scratch_int,
                    CRITERION_ENTROPY, 1, 0.0, table, 0, 0.0, 0.0, 0, n)
        else:
            best, best_p, _, _, _ = _scan_weighted_classes(
                xs, np.arange(n), labels, sorted_w[f, start:end], total.copy(),
                np.zeros(n_classes), 0, np.empty((2, n_classes)), CRITERION_ENTROPY, 1, 0.0,
                table, 0, 0.0, 0.0, 0, n)
        if best_p < 0:
            continue
        # the class weights of both sides, summed afresh (a class absent from a side is 0)
        right = right_counts[s]
        ws = np.empty(0) if unit_weight else sorted_w[f, start:end]
        for p in range(end - start):
            w = 1.0 if unit_weight else ws[p]
            if p <= best_p:
                best_left[labels[p]] += w
            else:
                right[labels[p]] += w
        g, m = _gain_and_mdl(total, best_left, right)
        cut_pos[s] = start + best_p
        threshold[s] = _midpoint(xs[best_p], xs[best_p + 1])
        gain[s] = g
        mdl_threshold[s] = m
    return cut_pos, threshold, gain, mdl_threshold, left_counts, right_counts


@njit(cache=True)
def equal_frequency_cuts(values, counts, n_bins):
    """Cut points splitting a column into ``n_bins`` intervals of about equal weight.

    Orange's ``EqualFreq`` rule: walking the distinct values in order, an interval closes once
    its weight reaches ``remaining weight / remaining intervals``; the cut goes after the value
    that crossed the quota if the excess is less than half that value's weight, else before it.
    With at most ``n_bins`` distinct values every midpoint is a cut.

    Parameters
    ----------
    values : ndarray of shape (n_values,), float64 (IN)
        The column's distinct values, increasing (no NaN).
    counts : ndarray of shape (n_values,), float64 (IN)
        Their weights (number of rows).
    n_bins : int
        Intervals wanted (>= 2); fewer are returned when the values do not allow them.

    Returns
    -------
    cuts : ndarray of shape (n_cuts,), float64
        Midpoints between consecutive distinct values, increasing.
    """
    n_values = values.shape[0]
    if n_bins >= n_values:
        cuts = np.empty(max(n_values - 1, 0))
        for i in range(n_values - 1):
            cuts[i] = (values[i] + values[i + 1]) / 2.0
        return cuts
    cuts = np.empty(n_bins - 1)
    n_cuts = 0
    remaining = 0.0
    for i in range(n_values):
        remaining += counts[i]
    to_go = n_bins
    quota = remaining / to_go
    in_bin = 0.0
    previous = values[0]
    for i in range(n_values):
        if to_go <= 1:
            break
        v = values[i]
        c = counts[i]
        in_bin += c
        if in_bin < quota or i == 0:
            previous = v
            continue
        if i < n_values - 1 and in_bin - quota < c / 2.0:
            # the quota is exceeded by less than half this value's weight: cut after it
            nxt = values[i + 1]
            cuts[n_cuts] = (v + nxt) / 2.0
            remaining -= in_bin
            in_bin = 0.0
            previous = nxt
        else:
            # cut before it: it opens the next interval
            cuts[n_cuts] = (previous + v) / 2.0
            remaining -= in_bin - c
            in_bin = c
            previous = v
        n_cuts += 1
        to_go -= 1
        if to_go:
            quota = remaining / to_go
    return cuts[:n_cuts]
