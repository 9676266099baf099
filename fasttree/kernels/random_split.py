"""Random thresholds (Extremely Randomized Trees, scikit-learn's ``splitter="random"``).

For each (feature, node) pair one threshold is drawn uniformly between the node's smallest and
largest known value of the feature and evaluated; the best feature per node is then selected
like any other split record.  The draws are made by the caller (``uniform`` and ``coin`` arrays
of shape (n_features, n_segments), the nodes' :func:`~fasttree.kernels.node_draws`), so the tree
depends on the random state only, never on the number of threads.  The layout is the exact
splitter's (:mod:`fasttree.kernels.split_search`): a node's values of a feature are its sorted
slice, NaN last, so the rows going left are a prefix.

scikit-learn's rules (``node_split_random``): a feature is skipped when every value is missing,
or when ``max - min <= 1e-7`` and none is missing; the threshold is ``min + u * (max - min)``,
replaced by ``min`` if it rounds to ``max``; missing rows go left when the coin says so (only if
the node has some), and a split that leaves a child under ``min_samples_leaf`` or
``min_weight_leaf`` is no candidate.
"""

import numpy as np
from numba import prange

from .._jit import njit, specialized

from .._dtypes import CRITERION_POISSON
from .criteria import (
    regression_proxy,
    two_children_class_impurity,
    weighted_node_impurities,
    weighted_regression_impurity,
)
from .monotonic import constraint_of, monotonic_ok
from .split_record import leaf_minimums_met, missing_side, write_split
from .split_search import _same_value, _store_binary_split, count_missing
from .work_items import grid_tasks


@njit(cache=True, inline="always")
def threshold_between(lo, hi, n_known, n_miss, u):
    """The random threshold of one (feature, node) pair whose known values span ``[lo, hi]``
    (float32), or NaN when the feature is skipped (scikit-learn's rules, module docstring)."""
    if n_known == 0:
        return np.nan
    if n_miss == 0 and _same_value(lo, hi):
        return np.nan
    lo64 = np.float64(lo)
    hi64 = np.float64(hi)
    t = lo64 + u * (hi64 - lo64)
    if t == hi64:
        t = lo64
    return t


@njit(cache=True, inline="always")
def random_cut(xs, n_known, n_miss, uniform, coin, f, s):
    """The random cut of pair (``f``, node ``s``) whose sorted slice is ``xs`` (NaN last): its
    threshold ``t`` (NaN: no candidate), whether the coin sends the missing rows left, and the
    known rows up to ``t`` (``stop``: a prefix, the slice being sorted).  Without draws
    (``uniform`` empty: the best split's search) every known row: ``(0.0, False, n_known)``."""
    if uniform.shape[0] == 0:
        return 0.0, False, n_known
    t = (np.nan if n_known == 0
         else threshold_between(xs[0], xs[n_known - 1], n_known, n_miss, uniform[f, s]))
    missing_left = n_miss > 0 and coin[f, s] == 1
    stop = 0
    while t == t and stop < n_known and xs[stop] <= t:
        stop += 1
    return t, missing_left, stop


@njit(cache=True, inline="always")
def _random_pair(sorted_x, seg_start, seg_end, uniform, coin, f, s):
    """The random threshold ``t`` of pair (``f``, node ``s``) (NaN: skipped) and the rows it
    sends left, in the node's sorted slice: the first ``stop`` (known values up to ``t``), then,
    when the coin sends them left, the missing rows from ``n_known`` on; ``rows_left`` in all
    (:func:`_left_position` numbers them)."""
    start = seg_start[s]
    end = seg_end[s]
    xs = sorted_x[f, start:end]
    n_miss = count_missing(xs)
    n_known = end - start - n_miss
    t, missing_left, stop = random_cut(xs, n_known, n_miss, uniform, coin, f, s)
    rows_left = stop + n_miss if missing_left else stop
    return start, end, t, n_miss, missing_left, n_known, stop, rows_left


@njit(cache=True, inline="always")
def _left_position(k, stop, n_known):
    """Position in the node's slice of the ``k``-th row a random threshold sends left."""
    return k if k < stop else n_known + (k - stop)


@njit(cache=True, inline="always")
def _store_random_split(f, s, value, node_weighted_impurity, w_node, t, rows_left, n_node,
                        n_miss, missing_left, record):
    """Write one random threshold's split (one candidate; no split information: gain ratio is
    not offered with random thresholds)."""
    write_split(record, np.int64(f), s, value, (node_weighted_impurity - value) / w_node, 0.0,
                t, rows_left, missing_side(n_miss, missing_left, rows_left, n_node), n_miss,
                np.int64(1))


@njit(cache=True, inline="always")
def threshold_candidate(xs, p, stop, random):
    """Whether the threshold after sorted position ``p`` of a pair's scan (its ``stop`` rows:
    :func:`random_cut`) is a candidate: between two distinct values or after the last row, and
    with a random threshold (``random``) only the drawn one, after the last row."""
    if p + 1 < stop and _same_value(xs[p], xs[p + 1]):
        return False
    return not random or p + 1 == stop


@njit(cache=True, inline="always")
def store_pair_split(f, s, random, value, node_weighted_impurity, w_node, w_best, t, xs, best_p,
                     n_miss, missing_left, n_cand, record):
    """Write the best split of a pair whose scan tried its missing rows on both sides: the
    random threshold ``t`` (``random``) or the midpoint after sorted position ``best_p``, the
    missing rows left or not (``missing_left``), ``w_best`` the weight going left."""
    if random:
        rows_left = best_p + 1 + (n_miss if missing_left else 0)
        _store_random_split(f, s, value, node_weighted_impurity, w_node, t, rows_left,
                            xs.shape[0], n_miss, missing_left, record)
    else:
        _store_binary_split(f, s, value, node_weighted_impurity, w_node, w_best, xs, best_p,
                            n_miss, missing_left, n_cand, np.empty(0), record)


@njit(cache=True, inline="always")
def class_threshold_value(f, s, left, w_left, rows_left, n_node, total, w_node, criterion,
                          min_samples_leaf, min_weight_leaf, monotonic_cst, node_bounds):
    """Children impurity of the threshold of (feature ``f``, node ``s``) whose left child has
    the class weights ``left`` (the node's: ``total``), or infinity when a leaf minimum or a
    constraint refuses it."""
    w_right = w_node - w_left
    if not leaf_minimums_met(rows_left, n_node - rows_left, w_left, w_right, min_samples_leaf,
                             min_weight_leaf):
        return np.inf
    cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
    if cst != 0 and not monotonic_ok(cst, lower, upper, left[0] / w_left,
                                     (total[0] - left[0]) / w_right):
        return np.inf
    return two_children_class_impurity(left, total, w_left, w_right, criterion)


@njit(cache=True, inline="always")
def regression_threshold_value(f, s, w_left, sum_left, rows_left, pos_left, pos_total, n_node,
                               sums, criterion, min_samples_leaf, min_weight_leaf,
                               monotonic_cst, node_bounds):
    """Children impurity of the threshold of (feature ``f``, node ``s``) from its left child's
    sums (the node's: ``sums``, ``[w, sum w*y, c]``; for Poisson the positive targets going
    left of the node's ``pos_total``), or infinity when refused."""
    if criterion == CRITERION_POISSON and (pos_left == 0 or pos_left == pos_total):
        return np.inf
    w_right = sums[0] - w_left
    if not leaf_minimums_met(rows_left, n_node - rows_left, w_left, w_right, min_samples_leaf,
                             min_weight_leaf):
        return np.inf
    cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
    if cst != 0 and not monotonic_ok(cst, lower, upper, sum_left / w_left,
                                     (sums[1] - sum_left) / w_right):
        return np.inf
    proxy = regression_proxy(w_left, sum_left, w_right, sums[1] - sum_left, criterion)
    if proxy == -np.inf:
        return np.inf
    return max(sums[2] - proxy, 0.0)


_CLASSIFICATION_DOC = """One random threshold per numeric (feature, node) pair, classification.

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_class_weight, \
feature_mask
        As in :func:`~fasttree.kernels.find_best_splits_classification`.
    uniform : ndarray of shape (n_features, n_segments), float64 (IN)
        Uniform draws in [0, 1): the threshold's position between the node's min and max.
    coin : ndarray of shape (n_features, n_segments), uint8 (IN)
        1: the node's missing rows go left (used only where the node has missing rows).
    criterion : int
        ``CRITERION_GINI`` or ``CRITERION_ENTROPY``.
    min_samples_leaf : int
    min_weight_leaf : float
    monotonic_cst, node_bounds : ndarray (IN)
        Monotonicity constraints, as in
        :func:`~fasttree.kernels.find_best_splits_classification`: a threshold that breaks its
        feature's constraint leaves the pair without a split.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`.

    Notes
    -----
    Parallel over tasks of about equal rows cut from the (feature, node) grid
    (:func:`~fasttree.kernels.work_items.grid_tasks`); each pair writes only its own record
    slot, so the result depends on no cut and no thread count.
    """

_REGRESSION_DOC = """One random threshold per numeric (feature, node) pair, regression.

    Same contract as :func:`find_random_splits_classification`, with the statistics and
    criteria of :func:`~fasttree.kernels.find_best_splits_regression` (``seg_sums`` rows
    ``[sum w, sum w*y, c]`` in place of ``seg_class_weight``; ``CRITERION_SQUARED_ERROR`` or
    ``CRITERION_POISSON``; the constrained value is the mean).
    """


def _make_random_search(regression):
    """The kernel of one random threshold per (feature, node) pair: classification (class
    weights per node) or ``regression`` (``[sum w, sum w*y, c]`` per node), a constant of the
    code made here, so each compiles only its own statistics.  Its own parallel loop over the
    grid's tasks, not :func:`~fasttree.kernels.split_search.grid_pair_search`'s: a pair's scan
    here is light, and inlined into that loop with its arguments in a tuple it took 20 % longer
    (a full-depth ``ExtraTreeRegressor``'s search, 300,000 x 20, one thread: 0.40 -> 0.48 s;
    called once a pair, 0.78 s)."""

    def search(sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_stats,
               feature_mask, uniform, coin, criterion, min_samples_leaf, min_weight_leaf,
               monotonic_cst, node_bounds, record):
        n_features = sorted_x.shape[0]
        n_segments = seg_start.shape[0]
        unit_weight = sample_weight.shape[0] == 0
        if regression:
            seg_weight = np.empty(n_segments)
            seg_weighted_impurity = np.empty(n_segments)
            for s in range(n_segments):
                seg_weight[s] = seg_stats[s, 0]
                seg_weighted_impurity[s] = weighted_regression_impurity(
                    seg_stats[s, 0], seg_stats[s, 1], seg_stats[s, 2], criterion)
        else:
            seg_weight, seg_weighted_impurity = weighted_node_impurities(seg_stats, criterion)
        # tasks of equal rows over the (feature, node) grid: every core works whatever the
        # number of features (one) or of nodes (one)
        first = grid_tasks(seg_start, seg_end, n_features)
        width = max(n_segments, 1)  # pairs per feature (no division by 0 on an empty level)
        for task in prange(first.shape[0] - 1):
            left = np.empty(0 if regression else seg_stats.shape[1])
            q0 = first[task]
            q1 = first[task + 1]
            # the task's pairs feature by feature, each feature's nodes in an inner loop (a
            # pair-by-pair walk of the grid cost B14's deep levels 10-20 %)
            for f in range(q0 // width, (q1 + width - 1) // width):
                for s in range(max(q0 - f * n_segments, 0), min(q1 - f * n_segments, n_segments)):
                    if feature_mask[f, s] == 0:
                        continue
                    start, end, t, n_miss, missing_left, n_known, stop, rows_left = _random_pair(
                        sorted_x, seg_start, seg_end, uniform, coin, f, s)
                    if t != t:
                        continue
                    ys = sorted_y[f, start:end]
                    idx = sorted_idx[f, start:end]
                    if not regression:
                        left[:] = 0.0
                    w_left = 0.0
                    sum_left = 0.0
                    pos_left = 0  # positive targets going left (Poisson: see the best-split scan)
                    for k in range(rows_left):
                        p = _left_position(k, stop, n_known)
                        w = 1.0 if unit_weight else sample_weight[idx[p]]
                        w_left += w
                        if regression:
                            sum_left += w * ys[p]
                            pos_left += ys[p] > 0.0
                        else:
                            left[ys[p]] += w
                    if regression:
                        pos_total = 0
                        if criterion == CRITERION_POISSON:
                            for p in range(end - start):
                                pos_total += ys[p] > 0.0
                        value = regression_threshold_value(
                            f, s, w_left, sum_left, rows_left, pos_left, pos_total, end - start,
                            seg_stats[s], criterion, min_samples_leaf, min_weight_leaf,
                            monotonic_cst, node_bounds)
                    else:
                        value = class_threshold_value(
                            f, s, left, w_left, rows_left, end - start, seg_stats[s], seg_weight[s],
                            criterion, min_samples_leaf, min_weight_leaf, monotonic_cst,
                            node_bounds)
                    if value < np.inf:
                        _store_random_split(f, s, value, seg_weighted_impurity[s], seg_weight[s], t,
                                            rows_left, end - start, n_miss, missing_left, record)

    search.__doc__ = _REGRESSION_DOC if regression else _CLASSIFICATION_DOC
    return njit(parallel=True, cache=True)(search)


find_random_splits_classification = specialized(_make_random_search, False)
find_random_splits_regression = specialized(_make_random_search, True)
