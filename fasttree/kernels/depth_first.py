"""Whole trees grown depth first, one tree per thread: random thresholds (extra trees) or the
best ones (random forests).

Level-wise growth streams every open node's rows once per level; for a layout that reads
features through row ids (scikit-learn's, the one random thresholds need, as they need no
sorted order) that means a cache miss per row and feature once a level's nodes lie scattered
over ``X``.  Depth first, a node's rows were just moved by its parent's split and a small
subtree's rows stay in cache to its leaves.  So a forest grows each tree here in one kernel
call, the trees shared out to the threads.  Random thresholds need no sorted order; the best
ones sort each searched feature's values of the node (:func:`~fasttree.kernels.presort.
sort_values`, a radix sort) and scan them with the presorted search's own scans
(:func:`~fasttree.kernels.split_search._class_scan`), where the presorted layout keeps every
feature of every node sorted (moving all of them at every split) for the few a node searches.

The layout is one block of row ids per tree (scikit-learn's, not the presorted one): tree ``t``
holds the positions ``[tree_offsets[t], tree_offsets[t + 1])`` of ``rows`` (row ids of ``X``, in
increasing order), ``labels`` (classes, or float64 targets) and ``weight`` (empty: every weight
1).  A node is a range of positions; its split moves its rows, labels and weights, left child
first, both in order.

Every rule is the level-wise grower's (:class:`fasttree.grower.TreeGrower`) and every formula
the presorted kernels' (:mod:`fasttree.kernels.random_split`, :mod:`fasttree.kernels.criteria`),
and every draw a function of the node's key (:mod:`fasttree.kernels.draws`), so a tree grown here
is the tree the level-wise grower grows, its nodes numbered depth first (the caller renumbers
them level by level, :func:`breadth_first_order`).  With whole weights (unit, or bootstrap
counts) its statistics add exactly as there.  With fractional weights or regression targets the
best thresholds' trees add a node's statistics in the presorted layout's order, but the
level-wise search adds a large node's rows in chunks, and random thresholds' trees (also with
regression targets) add them in another order: a split may differ where two candidates tie to
the last bits.
"""

import numpy as np

from .._jit import called_copy, check_apart, njit, specialized, with_globals
from .._threads import each_in_threads

from .._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    EPSILON,
)
from .criteria import regression_target_term, row_impurity
from .draws import child_key, coin_draw, order_draw, threshold_draw
from .bounded_search import N_CODES, bounded_search
from .presort import sort_values
from .random_split import class_threshold_value, regression_threshold_value, threshold_between
from .split_record import missing_side
from .split_search import _class_scan, _midpoint, _same_value, _sum_scan
from .work_items import SUM_BLOCK_ROWS

#: a node whose rows span fewer row ids than this many times their number reads a feature
#: from ``X`` transposed (16 float32 values per cache line)
_DENSE_SPAN = 32
#: nodes of at least this many rows search by bounded_search when they can (below it reading
#: the codes and scoring the bins costs more than the sort they spare)
BOUNDED_ROWS = 256
_NO_CODES = np.empty((0, 0), dtype=np.uint16)


@njit(cache=True, inline="always")
def _range_stats(labels, weight, a, b, n_classes, criterion, out):
    """A node's statistics (class weights, or ``[w, sum w*y, c]``) into ``out``."""
    unit_weight = weight.shape[0] == 0
    out[:] = 0.0
    for p in range(a, b):
        w = 1.0 if unit_weight else np.float64(weight[p])
        if n_classes > 0:
            out[np.int64(labels[p])] += w
        else:
            out[0] += w
            out[1] += w * labels[p]
            out[2] += w * regression_target_term(labels[p], criterion)


@njit(cache=True, inline="always")
def _dense(X_t, rows, a, n):
    """Whether ``X_t`` is given (not empty) and the ``n`` rows from position ``a`` (in
    increasing order) are dense enough in ``X`` for a feature's whole cache lines of it to be
    used."""
    return X_t.shape[1] > 0 and (rows[a + n - 1] - rows[a]) < _DENSE_SPAN * n


@njit(cache=True, inline="always")
def _gather(X, X_t, f, rows, a, values):
    """A node's values of feature ``f`` into ``values``; smallest and largest known value and
    the number missing.  Read from ``X_t`` (one row per feature) when the node's rows (in
    increasing order) are dense enough for whole cache lines of it to be used, else from ``X``
    (one line per row, which the node's other features then find in cache)."""
    n = values.shape[0]
    node_rows = rows[a:a + n]  # indices from 0: no negative-index fix-up
    if _dense(X_t, rows, a, n):  # two loops of loads alone: the compiler unrolls each
        for i in range(n):
            values[i] = X_t[f, node_rows[i]]
    else:
        for i in range(n):
            values[i] = X[node_rows[i], f]
    return _value_range(values)


@njit(cache=True, inline="always")
def _value_range(values):
    """Smallest and largest known value of ``values`` and the number missing (NaN).  Four
    running minimums and maximums, each over every fourth value, take four times fewer steps of
    a chain of compare-and-select than one (the same values: a NaN compares false, skipped)."""
    n = values.shape[0]
    inf = np.float32(np.inf)
    lo0, lo1, lo2, lo3 = inf, inf, inf, inf
    hi0, hi1, hi2, hi3 = -inf, -inf, -inf, -inf
    n_miss = np.int64(0)  # not the constant 0: a callee is typed for the first type seen
    whole = n - n % 4
    for i in range(0, whole, 4):
        v0, v1, v2, v3 = values[i], values[i + 1], values[i + 2], values[i + 3]
        n_miss += (v0 != v0) + (v1 != v1) + (v2 != v2) + (v3 != v3)
        lo0 = v0 if v0 < lo0 else lo0
        lo1 = v1 if v1 < lo1 else lo1
        lo2 = v2 if v2 < lo2 else lo2
        lo3 = v3 if v3 < lo3 else lo3
        hi0 = v0 if v0 > hi0 else hi0
        hi1 = v1 if v1 > hi1 else hi1
        hi2 = v2 if v2 > hi2 else hi2
        hi3 = v3 if v3 > hi3 else hi3
    for i in range(whole, n):
        v = values[i]
        n_miss += v != v
        lo0 = v if v < lo0 else lo0
        hi0 = v if v > hi0 else hi0
    lo0 = lo1 if lo1 < lo0 else lo0
    lo2 = lo3 if lo3 < lo2 else lo2
    hi0 = hi1 if hi1 > hi0 else hi0
    hi2 = hi3 if hi3 > hi2 else hi2
    return (lo2 if lo2 < lo0 else lo0), (hi2 if hi2 > hi0 else hi0), n_miss


@njit(cache=True, inline="always")
def _next_drawn(order_key, taken, n_features):
    """The untaken feature of the smallest key (ties: the lowest feature), marked taken; the
    order a stable sort of the keys gives, one feature at a time."""
    best = -1
    for f in range(n_features):
        if taken[f] == 0 and (best < 0 or order_key[f] < order_key[best]):
            best = f
    taken[best] = 1
    return best


@njit(cache=True, inline="always")
def _push(stack, top, node, a, b, key):
    """Push onto a stack of (node, start, end, key) rows, doubling it when full."""
    if top == stack.shape[0]:
        grown = np.empty((2 * stack.shape[0], 4), dtype=np.uint64)
        for i in range(top):  # not a slice copy: its shape check costs 2 s of compile
            for j in range(4):
                grown[i, j] = stack[i, j]
        stack = grown
    stack[top, 0] = np.uint64(node)
    stack[top, 1] = np.uint64(a)
    stack[top, 2] = np.uint64(b)
    stack[top, 3] = key
    return stack, top + 1


@njit(cache=True, inline="always")
def _next_node(stack, top, base, stats, depth, criterion, max_depth, min_samples_split,
               min_samples_leaf, min_weight_leaf, select, order_key, taken):
    """Pop the node on top of the stack: the new top, the node's number, rows ``[a, b)`` and
    key, its weight and impurity, and whether the stopping rules let it be searched (the
    grower's ``_candidates``); if so and features are drawn, its draw order too."""
    top -= 1
    node = np.int64(stack[top, 0])
    a = np.int64(stack[top, 1])
    b = np.int64(stack[top, 2])
    key = stack[top, 3]
    n = b - a
    w_node, impurity = row_impurity(stats[base + node], criterion, 0.0)
    opens = (depth[base + node] < max_depth and n >= min_samples_split
             and n >= 2 * min_samples_leaf and w_node >= 2.0 * min_weight_leaf
             and impurity > EPSILON)
    if opens and select:  # the first max_features non-constant features in draw order
        _draw_order(key, order_key, taken)
    return top, node, a, b, key, w_node, impurity, opens


@njit(cache=True, inline="always")
def _too_small(w_node, impurity, children_impurity, root_weight, min_impurity_decrease):
    """Whether a node's best split improves on it by less than ``min_impurity_decrease``, the
    improvement relative to the root's weight, as the grower's rule (EPSILON's slack)."""
    improvement = (w_node * impurity - children_impurity) / root_weight
    return improvement + EPSILON < min_impurity_decrease


@njit(cache=True, inline="always")
def _draw_order(key, order_key, taken):
    """A node's feature draw order (``order_key``, read by :func:`_next_drawn`), none taken."""
    for f in range(order_key.shape[0]):
        order_key[f] = order_draw(key, f)
    taken[:] = 0


@njit(cache=True, inline="always")
def _add_row(out, label, w, classification, criterion):
    """Add a row of weight ``w`` to a node's statistics ``out`` (:func:`_range_stats`' terms)."""
    if classification:
        out[np.int64(label)] += w
    else:
        out[0] += w
        out[1] += w * label
        out[2] += w * regression_target_term(label, criterion)


@njit(cache=True, inline="always")
def _split_node(rows, labels, weight, a, b, values, thr, missing, f, slot, base, count, key,
                stack, top, spare_rows, spare_labels, spare_weight, classification, criterion,
                add_stats, child_left, feature, threshold, missing_branch, depth, n_node_samples,
                stats):
    """Split node ``slot`` (rows ``[a, b)``) on ``values[i] <= thr`` (``values`` in position
    order; NaN to the left when ``missing`` is 0): move its rows, left child first, both sides in
    order, write the split and the children (local numbers ``count`` and ``count + 1``) and push
    them, the left one on top.  With ``add_stats``, the children's statistics are added up while
    their rows move, in that order (what :func:`_range_stats` would add over each child); else
    the caller writes them.  Returns the stack and its top."""
    left_slot = base + count
    right_slot = left_slot + 1
    unit_weight = weight.shape[0] == 0
    # the node's slices: indices from 0, which the compiler knows are not negative
    node_rows = rows[a:b]
    node_labels = labels[a:b]
    node_weight = weight[a:b]
    if add_stats:
        stats[left_slot, :] = 0.0
        stats[right_slot, :] = 0.0
    n_left = 0
    n_right = 0
    missing_go = missing == 0
    for i in range(b - a):  # branch-free (a coin flip to the branch predictor): both sides written
        v = values[i]
        go = np.int64((v <= thr) | (missing_go & (v != v)))
        row, label = node_rows[i], node_labels[i]
        if add_stats:
            child = right_slot - go
            w = 1.0 if unit_weight else np.float64(node_weight[i])
            if classification:
                stats[child, np.int64(label)] += w
            else:
                stats[child, 0] += w
                stats[child, 1] += w * label
                stats[child, 2] += w * regression_target_term(label, criterion)
        node_rows[n_left] = row
        node_labels[n_left] = label
        spare_rows[n_right] = row
        spare_labels[n_right] = label
        if not unit_weight:
            wp = node_weight[i]
            node_weight[n_left] = wp
            spare_weight[n_right] = wp
        n_left += go
        n_right += 1 - go
    for i in range(n_right):  # loops, not slice copies: their shape checks cost compile time
        node_rows[n_left + i] = spare_rows[i]
        node_labels[n_left + i] = spare_labels[i]
        if not unit_weight:
            node_weight[n_left + i] = spare_weight[i]
    feature[slot] = f
    threshold[slot] = thr
    missing_branch[slot] = missing
    child_left[slot] = count
    for child, size in ((left_slot, n_left), (right_slot, n_right)):
        child_left[child] = -1
        depth[child] = depth[slot] + 1
        n_node_samples[child] = size
    # right pushed first: the left child is grown next
    stack, top = _push(stack, top, count + 1, a + n_left, b, child_key(key, 1))
    return _push(stack, top, count, a, a + n_left, child_key(key, 0))


@njit(cache=True, inline="always")
def _root(t, labels, weight, tree_offsets, root_key, n_classes, criterion, node_offsets,
          child_left, depth, n_node_samples, stats):
    """Tree ``t``'s root written to its first slot; the stack holding it."""
    base = node_offsets[t]
    a0 = tree_offsets[t]
    b0 = tree_offsets[t + 1]
    _range_stats(labels, weight, a0, b0, n_classes, criterion, stats[base])
    child_left[base] = -1
    depth[base] = 0
    n_node_samples[base] = b0 - a0
    return _push(np.empty((64, 4), dtype=np.uint64), 0, 0, a0, b0, root_key[t])


def grow_random_trees(
    X, X_t, rows, labels, weight, counts_weight, tree_offsets, root_key, tree_weight,
    n_classes, criterion, max_features, max_depth, min_samples_split, min_samples_leaf,
    min_weight_leaf, min_impurity_decrease, node_offsets, child_left, feature, threshold,
    missing_branch, depth, n_node_samples, stats, node_count,
):
    """Grow every tree of a layout depth first, random thresholds (extra trees).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float32, C-contiguous (IN)
    X_t : ndarray of shape (n_features, n_rows) or (0, 0), float32, C-contiguous (IN)
        ``X`` transposed (the same values, read where a node's rows are dense), or empty: every
        value read from ``X``.
    rows : ndarray of shape (n_positions,), int32 (IN/OUT)
        Row ids of ``X``, tree after tree, each tree's in increasing order (moved).
    labels : ndarray of shape (n_positions,) (IN/OUT)
        Classes (uint8 or uint16) when ``n_classes > 0``, else float64 targets (moved).
    weight : ndarray of shape (n_positions,) or (0,), uint8 or float64 (IN/OUT)
        Weights by position (moved); empty: every weight 1.
    counts_weight : bool
        Whether ``weight`` holds uint8 counts (whole weights: the two-class search then adds in
        integers).
    tree_offsets : ndarray of shape (n_trees + 1,), int64 (IN)
    root_key : ndarray of shape (n_trees,), uint64 (IN)
        Each tree's root key (:func:`~fasttree.kernels.root_key`).
    tree_weight : ndarray of shape (n_trees,), float64 (IN)
        Each root's weight: improvements are relative to it.
    n_classes : int
        0 for regression.
    criterion : int
        Gini, entropy, squared error or Poisson.
    max_features : int
        Features searched per node: the first ``max_features`` non-constant ones in the node's
        draw order; at least ``n_features``: every feature.
    max_depth, min_samples_split, min_samples_leaf : int
    min_weight_leaf, min_impurity_decrease : float
        The stopping rules, as the grower applies them.
    node_offsets : ndarray of shape (n_trees + 1,), int64 (IN)
        Tree ``t``'s nodes go to ``[node_offsets[t], node_offsets[t + 1])`` of the node arrays.
    child_left, feature, depth, n_node_samples : ndarray of shape (n_slots,), int64 (OUT)
        Each node's first child (its local number; -1 for a leaf: the second child is the
        next), split feature, depth and rows; nodes numbered depth first from 0 per tree.
    threshold : ndarray of shape (n_slots,), float64 (OUT)
    missing_branch : ndarray of shape (n_slots,), int32 (OUT)
    stats : ndarray of shape (n_slots, n_stats), float64 (OUT)
        Each node's statistics (``n_stats``: ``n_classes``, or 3).
    node_count : ndarray of shape (n_trees,), int64 (OUT)
        Each tree's nodes, or -1 when its slots were too few (grow it again with more).

    Notes
    -----
    A Python function: each tree is grown by one call of a compiled tree function, the trees
    shared out to threads (:func:`fasttree._threads.each_in_threads`), so the result does not
    depend on the number of threads.
    """
    check_apart(*_layout_arrays(X, X_t, rows, labels, weight, tree_offsets, root_key,
                                tree_weight, node_offsets, child_left, feature, threshold,
                                missing_branch, depth, n_node_samples, stats, node_count))
    unit_weight = weight.shape[0] == 0
    # two classes, whole weights (none, or a bootstrap's uint8 counts): integer sums
    binary_counts = bool(n_classes == 2 and (unit_weight or counts_weight))
    # Python bools: a kernel's cache files are named after its key's values
    grow_tree = specialized(_random_tree, bool(n_classes > 0), bool(unit_weight), binary_counts)
    _each_tree(grow_tree, node_count, (
        X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight, n_classes, criterion,
        max_features, max_depth, min_samples_split, min_samples_leaf, min_weight_leaf,
        min_impurity_decrease, node_offsets, child_left, feature, threshold, missing_branch,
        depth, n_node_samples, stats))


def _each_tree(grow_tree, node_count, args):
    """``node_count[t] = grow_tree(t, *args)`` for every tree ``t``, the trees shared out to
    threads (:func:`fasttree._threads.each_in_threads`; the tree functions are ``nogil`` and
    write only their own tree's slots), not a parallel loop calling the tree function: that
    loop compiled the function's code twice more (6.8 s for best thresholds)."""

    def grow(t):
        node_count[t] = grow_tree(t, *args)

    each_in_threads(grow, node_count.shape[0])


def _random_tree(classification, unit_weight, binary_counts):
    """One tree of :func:`grow_random_trees`, for one kind of tree: ``classification`` (class
    statistics, else sums), ``unit_weight`` (no weights) and ``binary_counts`` (two classes,
    whole weights: integer sums), constants of the tree's code, which holds only their paths
    (all of them in one function compiled in 6.2 s, the two-class classifier's now in 4.9)."""

    @njit(cache=True, nogil=True, noalias=True)
    def grow_tree(
        t, X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight, n_classes,
        criterion, max_features, max_depth, min_samples_split, min_samples_leaf,
        min_weight_leaf, min_impurity_decrease, node_offsets, child_left, feature, threshold,
        missing_branch, depth, n_node_samples, stats,
    ):
        """Tree ``t`` of :func:`grow_random_trees`; returns its node count (-1: too few slots)."""
        n_features = X.shape[1]
        select = max_features < n_features
        no_cst = np.empty(0, dtype=np.int8)
        no_bounds = np.empty((0, 2))
        base = node_offsets[t]
        capacity = node_offsets[t + 1] - base
        size = tree_offsets[t + 1] - tree_offsets[t]
        values = np.empty(size, dtype=np.float32)
        best_values = np.empty(size, dtype=np.float32)  # the best feature's so far
        spare_rows = np.empty(size, dtype=rows.dtype)
        spare_labels = np.empty(size, dtype=labels.dtype)
        spare_weight = np.empty(0 if unit_weight else size, dtype=weight.dtype)
        left = np.empty(max(n_classes, 1))
        best_left = np.empty(2)  # two classes: the best threshold's left counts
        order_key = np.empty(n_features)
        taken = np.empty(n_features, dtype=np.uint8)
        stack, top = _root(t, labels, weight, tree_offsets, root_key, n_classes, criterion,
                           node_offsets, child_left, depth, n_node_samples, stats)
        count = 1
        while top > 0:
            top, node, a, b, key, w_node, impurity, opens = _next_node(
                stack, top, base, stats, depth, criterion, max_depth, min_samples_split,
                min_samples_leaf, min_weight_leaf, select, order_key, taken)
            if not opens:
                continue
            slot = base + node
            n = b - a
            # the node's slices: indices from 0, which the compiler knows are not negative (the
            # count loops vectorize)
            node_labels = labels[a:b]
            node_weight = weight[a:b]
            pos_total = 0
            if not classification and criterion == CRITERION_POISSON:
                for i in range(n):
                    pos_total += node_labels[i] > 0.0
            best_f = -1
            best_value = np.inf
            best_t = 0.0
            best_missing = 0
            found = 0
            for j in range(n_features):
                if select and found == max_features:
                    break
                f = _next_drawn(order_key, taken, n_features) if select else j
                lo, hi, n_miss = _gather(X, X_t, f, rows, a, values[:n])
                if select:
                    if n_miss == 0 and _same_value(lo, hi):
                        continue  # constant in the node (ExactSplitter.non_constant)
                    found += 1
                thr = threshold_between(lo, hi, n - n_miss, n_miss, threshold_draw(key, f))
                if thr != thr:
                    continue
                missing_left = n_miss > 0 and coin_draw(key, f) == 1
                left[:] = 0.0
                w_left = 0.0
                sum_left = 0.0
                rows_left = 0
                pos_left = 0
                # branch-free: whether a row goes left is a coin flip to the branch predictor
                if binary_counts:  # integer sums the compiler vectorizes
                    ones_left = 0
                    if unit_weight:
                        for i in range(n):
                            v = values[i]
                            go = np.int64((v <= thr) | (missing_left & (v != v)))
                            rows_left += go
                            ones_left += go * np.int64(node_labels[i])
                        count_left = rows_left
                    else:
                        count_left = 0
                        for i in range(n):
                            v = values[i]
                            go = np.int64((v <= thr) | (missing_left & (v != v)))
                            drawn = go * np.int64(node_weight[i])
                            rows_left += go
                            count_left += drawn
                            ones_left += drawn * np.int64(node_labels[i])
                    w_left = np.float64(count_left)
                    left[0] = count_left - ones_left
                    left[1] = ones_left
                for i in range(0 if binary_counts else n):
                    v = values[i]
                    go = np.int64((v <= thr) | (missing_left & (v != v)))
                    w = go if unit_weight else go * np.float64(node_weight[i])
                    w_left += w
                    rows_left += go
                    if classification:
                        left[np.int64(node_labels[i])] += w
                    else:
                        sum_left += w * node_labels[i]
                        pos_left += go & (node_labels[i] > 0.0)
                if classification:
                    value = class_threshold_value(f, 0, left, w_left, rows_left, n, stats[slot],
                                                  w_node, criterion, min_samples_leaf,
                                                  min_weight_leaf, no_cst, no_bounds)
                else:
                    value = regression_threshold_value(f, 0, w_left, sum_left, rows_left,
                                                       pos_left, pos_total, n, stats[slot],
                                                       criterion, min_samples_leaf,
                                                       min_weight_leaf, no_cst, no_bounds)
                # the lowest children impurity; ties to the lowest feature (select_best_splits)
                if value < best_value or (value == best_value and value < np.inf
                                          and f < best_f):
                    best_f = f
                    best_value = value
                    best_t = thr
                    best_missing = missing_side(n_miss, missing_left, rows_left, n)
                    if binary_counts:
                        best_left[0] = left[0]
                        best_left[1] = left[1]
                    values, best_values = best_values, values
            if best_f < 0 or _too_small(w_node, impurity, best_value, tree_weight[t],
                                        min_impurity_decrease):
                continue
            if count + 2 > capacity:
                return -1
            if binary_counts:  # whole counts: the children's are the best threshold's, exactly
                left_slot = base + count
                for c in range(2):
                    stats[left_slot, c] = best_left[c]
                    stats[left_slot + 1, c] = stats[slot, c] - best_left[c]
            stack, top = _split_node(
                rows, labels, weight, a, b, best_values, best_t, best_missing, best_f, slot, base,
                count, key, stack, top, spare_rows, spare_labels, spare_weight, classification,
                criterion, not binary_counts, child_left, feature, threshold, missing_branch, depth,
                n_node_samples, stats)
            count += 2
        return count

    return grow_tree


def grow_best_trees(
    X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight, criterion, max_features,
    max_depth, min_samples_split, min_samples_leaf, min_weight_leaf, min_impurity_decrease,
    table, node_offsets, child_left, feature, threshold, missing_branch, depth,
    n_node_samples, stats, node_count, codes_t=None, bounded_rows=None, codes_rows=None,
):
    """Grow every tree of a layout depth first, best thresholds (random forests).

    The arguments are :func:`grow_random_trees`' (``n_classes`` is ``stats.shape[1]`` for
    gini and entropy, the statistics ``[w, sum w*y, c]`` for squared error and Poisson; no
    ``counts_weight``: uint8 weights are counts, classification only), and ``table``: for
    classes, ``c log2 c`` of the counts (:func:`~fasttree.kernels.xlog2x_table` of each tree's
    largest total weight, or of its rows with unit weights), needed with unit or uint8 weights;
    for squared error with unit weights, ``1 / n`` (:func:`~fasttree.kernels.reciprocal_table`
    of each tree's rows); otherwise ignored.  ``codes_t``: the features' bins
    (:func:`~fasttree.kernels.bounded_search.fine_bin_codes` of ``X``) or None; with them, a
    two-class tree with unit weights or uint8 counts searches its nodes of at least
    ``bounded_rows`` rows (default :data:`BOUNDED_ROWS`) by
    :func:`~fasttree.kernels.bounded_search.bounded_search` (the same splits, sorting a small
    part of the values).  ``codes_rows``: the same bins one row per sample (``codes_t``
    transposed, C-contiguous), read where a node's rows lie scattered, or None or empty (shape
    ``(0, 0)``: ``codes_t`` read everywhere).

    Each node searches its features (every one, or the first ``max_features`` non-constant ones
    in its draw order) as the presorted search does: its values of the feature sorted with their
    positions (:func:`~fasttree.kernels.presort.sort_values`), then the same scan of every
    midpoint between distinct values, missing rows tried on either side
    (:mod:`fasttree.kernels.split_search`), so that each tree is the level-wise grower's.

    Notes
    -----
    A Python function choosing the kernel compiled for the kind of weights (unit, uint8
    counts or float64) and whether there are two classes: a kind compiles its own scans only.
    Parallel over trees, one thread each: the result does not depend on the number of threads.
    """
    unit_weight = weight.shape[0] == 0
    counted = weight.dtype == np.uint8 and not unit_weight
    classification = criterion in (CRITERION_GINI, CRITERION_ENTROPY)
    if weight.dtype not in (np.float64, np.uint8) or (counted and not classification):
        raise TypeError("weight must be float64 (or, for classes, uint8 counts), got "
                        f"{weight.dtype}")
    if not classification and criterion not in (CRITERION_SQUARED_ERROR, CRITERION_POISSON):
        raise ValueError("best thresholds grow trees of gini, entropy, squared error or "
                         f"Poisson, got criterion {criterion}")
    integer = unit_weight or counted
    by_reciprocal = unit_weight and criterion == CRITERION_SQUARED_ERROR
    longest = max(np.max(tree_weight, initial=0.0), np.max(np.diff(tree_offsets), initial=0))
    if ((classification and integer) or by_reciprocal) and table.shape[0] <= longest:
        raise ValueError("unit or uint8 weights need a table longer than each tree's rows and "
                         f"total weight (xlog2x_table, reciprocal_table), got {table.shape[0]}")
    bounded_rows = BOUNDED_ROWS if bounded_rows is None else bounded_rows
    if codes_t is None:
        codes_t, bounded_rows = _NO_CODES, np.iinfo(np.int64).max
    elif (codes_t.shape != X.shape[::-1] or codes_t.dtype != np.uint16
          or not codes_t.flags.c_contiguous):
        raise ValueError(f"codes_t must be C-contiguous uint16 of shape {X.shape[::-1]} "
                         f"(fine_bin_codes of X), got {codes_t.dtype} {codes_t.shape}")
    if codes_rows is None or codes_t is _NO_CODES or codes_rows.shape == (0, 0):
        codes_rows = _NO_CODES
    elif (codes_rows.shape != X.shape or codes_rows.dtype != np.uint16
          or not codes_rows.flags.c_contiguous):
        raise ValueError(f"codes_rows must be C-contiguous uint16 of shape {X.shape} (codes_t "
                         f"transposed), got {codes_rows.dtype} {codes_rows.shape}")
    kind = (classification, unit_weight, integer and stats.shape[1] == 2, counted,
            criterion == CRITERION_POISSON)
    args = (X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight, criterion,
            max_features, max_depth, min_samples_split, min_samples_leaf, min_weight_leaf,
            min_impurity_decrease, table, node_offsets, child_left, feature, threshold,
            missing_branch, depth, n_node_samples, stats)
    bins = (codes_t, max(1, int(bounded_rows)), codes_rows)
    # one tree without bins (a small single tree): a function without the bounded search,
    # which compiles in a fraction of its time
    bounded = codes_t is not _NO_CODES or tree_offsets.shape[0] > 2
    if bounded:  # its kernel is noalias (the small tree's is not: 40 us of a 1.5 ms fit)
        written, read = _layout_arrays(X, X_t, rows, labels, weight, tree_offsets, root_key,
                                       tree_weight, node_offsets, child_left, feature,
                                       threshold, missing_branch, depth, n_node_samples, stats,
                                       node_count)
        check_apart(written, {**read, "table": table, "codes_t": codes_t,
                              "codes_rows": codes_rows})
    _each_tree(specialized(_best_tree, *kind, bounded), node_count, args + bins)


def _layout_arrays(X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight,
                   node_offsets, child_left, feature, threshold, missing_branch, depth,
                   n_node_samples, stats, node_count):
    """The depth-first kernels' arrays by name, those they write and those they read (their
    tree functions are ``noalias``: :func:`fasttree._jit.check_apart`)."""
    written = dict(rows=rows, labels=labels, weight=weight, child_left=child_left,
                   feature=feature, threshold=threshold, missing_branch=missing_branch,
                   depth=depth, n_node_samples=n_node_samples, stats=stats,
                   node_count=node_count)
    read = dict(X=X, X_t=X_t, tree_offsets=tree_offsets, root_key=root_key,
                tree_weight=tree_weight, node_offsets=node_offsets)
    return written, read


def _best_tree(classification, unit_weight, binary, counted, positive, bounded=True):
    """One tree of :func:`grow_best_trees`, for one kind of tree: ``classification`` (class
    statistics, else sums), ``unit_weight`` (none), ``binary`` (two classes, integer weights),
    ``counted`` (uint8 counts), ``positive`` (Poisson); the flags of the scans
    (:func:`~fasttree.kernels.split_search._class_scan`, ``_sum_scan``), constants of the tree's
    code; ``bounded``: whether a binary tree may search its large nodes by bounds (a tree
    without bins compiles without that code)."""
    forests = bounded  # the forests' kernel: noalias (see grow_best_trees)
    bounded = bounded and binary
    integer = classification and (unit_weight or counted)
    # sums of real targets, like fractional weights, add up to other values in another order
    ordered_sums = not integer
    by_reciprocal = not classification and unit_weight and not positive
    count = np.int64 if integer else np.float64  # class counts: integers with integer weights

    def grow_tree(t, X, X_t, rows, labels, weight, tree_offsets, root_key, tree_weight,
                  criterion, max_features, max_depth, min_samples_split, min_samples_leaf,
                  min_weight_leaf, min_impurity_decrease, table, node_offsets, child_left,
                  feature, threshold, missing_branch, depth, n_node_samples, stats, codes_t,
                  bounded_rows, codes_rows):
        n_features = X.shape[1]
        n_classes = stats.shape[1] if classification else 0
        select = max_features < n_features
        base = node_offsets[t]
        capacity = node_offsets[t + 1] - base
        size = tree_offsets[t + 1] - tree_offsets[t]
        xs = np.empty(size, dtype=np.float32)  # a feature's values of the node, then sorted
        best_xs = np.empty(size, dtype=np.float32)  # the best feature's so far
        order = np.empty(size, dtype=np.int32)  # where each sorted value was
        best_order = np.empty(size, dtype=np.int32)
        keys_tmp = np.empty(size, dtype=np.uint32)
        idx_tmp = np.empty(size, dtype=np.int32)
        sort_counts = np.empty((4, 2048), dtype=np.int64)
        sorted_labels = np.empty(size, dtype=labels.dtype)
        spare_rows = idx_tmp  # the sort's scratch, free while a node's rows move
        spare_labels = np.empty(size, dtype=labels.dtype)
        spare_weight = np.empty(0 if unit_weight else size, dtype=weight.dtype)
        total = np.empty(max(n_classes, 1), dtype=count)
        left = np.empty(max(n_classes, 1), dtype=count)
        scratch = np.empty((2, max(n_classes, 1)), dtype=count)
        order_key = np.empty(n_features)
        taken = np.empty(n_features, dtype=np.uint8)
        # the bounded search's: a node's codes of a feature, the best feature's, counts per bin
        codes = np.empty(size if bounded else 0, dtype=np.uint16)
        best_codes = np.empty(size if bounded else 0, dtype=np.uint16)
        positions = np.empty(size if bounded else 0, dtype=np.int32)
        hist = np.empty((5, N_CODES if bounded else 0), dtype=np.int64)
        bounds = np.empty(N_CODES if bounded else 0)
        # the presorted search's minimums: with unit weights a child's weight is its rows
        min_rows = (max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf))) if unit_weight
                    else min_samples_leaf)
        if classification:  # c log2 c of the counts, for entropy
            table = table if integer and criterion == CRITERION_ENTROPY else np.empty(0)
        stack, top = _root(t, labels, weight, tree_offsets, root_key, n_classes, criterion,
                           node_offsets, child_left, depth, n_node_samples, stats)
        child_stats = np.empty((2, stats.shape[1]))
        if ordered_sums:
            # Float weights and targets add up in another order to other sums: as the presorted
            # layout does, a root's statistics add its rows in feature 0's sorted order, a
            # child's in its parent's split feature's (integer weights add exactly in any order).
            a0 = tree_offsets[t]
            n0 = tree_offsets[t + 1] - a0
            _gather(X, X_t, 0, rows, a0, xs[:n0])
            sort_values(xs[:n0], order[:n0], keys_tmp, idx_tmp, sort_counts)
            stats[base, :] = 0.0
            for i in range(n0):
                p = a0 + order[i]
                _add_row(stats[base], labels[p], 1.0 if unit_weight else weight[p],
                         classification, criterion)
        # typed first values, not constants: a callee is compiled for each type a call sees
        count_nodes = np.int64(1)
        while top > 0:
            top, node, a, b, key, w_node, impurity, opens = _next_node(
                stack, top, base, stats, depth, criterion, max_depth, min_samples_split,
                min_samples_leaf, min_weight_leaf, select, order_key, taken)
            if not opens:
                continue
            slot = base + node
            n = b - a
            node_labels = labels[a:b]
            # the scans read a row's weight at its position in the node
            node_weight = weight if unit_weight else weight[a:b]
            for k in range(n_classes):
                total[k] = count(stats[slot, k])
            w_total = 0.0
            sum_total = 0.0
            if not classification:
                w_total = stats[slot, 0]
                sum_total = stats[slot, 1]
            best_f = np.int64(-1)
            best_value = np.inf
            best_t = 0.0
            best_missing = np.int64(0)
            best_last_left = 0  # the best split's sorted rows: [0, last) left, and the
            best_n_known = 0  # missing ones [n_known, n) too when they go left
            found = 0
            bounded_best = False  # whether the best split came from bounded_search
            lowest = highest = 0  # its bins whose rows it sends by their values
            for j in range(n_features):
                if select and found == max_features:
                    break
                f = _next_drawn(order_key, taken, n_features) if select else j
                if bounded and n >= bounded_rows:
                    searched, value, n_left, thr, low, high = bounded_search(
                        codes_t, codes_rows, X, X_t, _dense(X_t, rows, a, n), f, rows, labels,
                        weight, a, n, codes, hist, bounds, xs, positions, order, keys_tmp,
                        idx_tmp, sort_counts, total[0] + total[1], total[1], criterion, min_rows,
                        min_weight_leaf, table)
                    if searched:  # else the node is sorted below
                        found += 1
                        if n_left >= 0 and (value < best_value
                                            or (value == best_value and f < best_f)):
                            best_f = f
                            best_value = value
                            best_t = thr
                            best_missing = missing_side(0, False, n_left, n)
                            bounded_best = True
                            lowest, highest = low, high
                            codes, best_codes = best_codes, codes
                        continue
                lo, hi, n_miss = _gather(X, X_t, f, rows, a, xs[:n])
                if n_miss == 0 and _same_value(lo, hi):
                    continue  # constant in the node: no candidate, not drawn
                found += 1
                sort_values(xs[:n], order[:n], keys_tmp, idx_tmp, sort_counts)
                for i in range(n):
                    sorted_labels[i] = node_labels[order[i]]
                if classification:
                    left[:] = 0
                    if n_miss > 0:
                        value, best_p, missing_left, _, _ = scan_two_sided(
                            xs[:n], order[:n], sorted_labels[:n], node_weight, total, left,
                            n_miss, scratch, criterion, min_rows, min_weight_leaf, table, 0,
                            -np.inf, np.inf, 0, n)
                    else:
                        value, best_p, missing_left, _, _ = scan_one_sided(
                            xs[:n], order[:n], sorted_labels[:n], node_weight, total, left,
                            0, scratch, criterion, min_rows, min_weight_leaf, table, 0,
                            -np.inf, np.inf, 0, n)
                else:  # the largest proxy; the children's impurity c - proxy, at least 0
                    if by_reciprocal and n_miss == 0:
                        proxy, best_p, missing_left, _, _ = scan_by_reciprocal(
                            xs[:n], sorted_labels[:n], order[:n], node_weight, w_total,
                            sum_total, 0, min_rows, min_weight_leaf, criterion, 0.0, 0,
                            -np.inf, np.inf, table, 0, n, 0.0, 0.0, SUM_BLOCK_ROWS)
                    elif n_miss > 0:
                        proxy, best_p, missing_left, _, _ = sums_two_sided(
                            xs[:n], sorted_labels[:n], order[:n], node_weight, w_total,
                            sum_total, n_miss, min_rows, min_weight_leaf, criterion, 0.0, 0,
                            -np.inf, np.inf, table, 0, n, 0.0, 0.0, SUM_BLOCK_ROWS)
                    else:
                        proxy, best_p, missing_left, _, _ = sums_one_sided(
                            xs[:n], sorted_labels[:n], order[:n], node_weight, w_total,
                            sum_total, 0, min_rows, min_weight_leaf, criterion, 0.0, 0,
                            -np.inf, np.inf, table, 0, n, 0.0, 0.0, SUM_BLOCK_ROWS)
                    value = max(stats[slot, 2] - proxy, 0.0)
                # the lowest children impurity; ties to the lowest feature (select_best_splits)
                if best_p >= 0 and (value < best_value or (value == best_value and f < best_f)):
                    best_f = f
                    best_value = value
                    n_known = n - n_miss
                    # _store_binary_split's threshold and missing branch
                    best_t = (np.inf if best_p + 1 == n_known
                              else _midpoint(xs[best_p], xs[best_p + 1]))
                    rows_left = best_p + 1 + (n_miss if missing_left else 0)
                    best_missing = missing_side(n_miss, missing_left, rows_left, n)
                    best_last_left = best_p + 1
                    best_n_known = n_known if missing_left else n
                    xs, best_xs = best_xs, xs
                    order, best_order = best_order, order
                    bounded_best = False
            if best_f < 0 or _too_small(w_node, impurity, best_value, tree_weight[t],
                                        min_impurity_decrease):
                continue
            if count_nodes + 2 > capacity:
                return -1
            if bounded_best:  # rows of bins below the threshold's left, above it right
                m = 0  # without a branch, so that the reads below overlap their misses
                for i in range(n):
                    c = best_codes[i]
                    xs[i] = -np.inf if c < lowest else np.inf
                    positions[m] = i
                    m += (c >= lowest) & (c <= highest)
                dense = _dense(X_t, rows, a, n)
                node_rows = rows[a:b]
                for k in range(m):  # the threshold's bins: by their values
                    row = node_rows[positions[k]]
                    xs[positions[k]] = X_t[best_f, row] if dense else X[row, best_f]
            else:
                for i in range(n):  # the split feature's values back in position order
                    xs[best_order[i]] = best_xs[i]
            if ordered_sums:  # each child's rows added in the split feature's sorted order
                child_stats[:] = 0.0
                for i in range(n):
                    p = a + best_order[i]
                    side = 0 if i < best_last_left or i >= best_n_known else 1
                    _add_row(child_stats[side], labels[p], 1.0 if unit_weight else weight[p],
                             classification, criterion)
            stack, top = _split_node(
                rows, labels, weight, a, b, xs, best_t, best_missing, best_f, slot, base,
                count_nodes, key, stack, top, spare_rows, spare_labels, spare_weight,
                classification, criterion, True, child_left, feature, threshold, missing_branch,
                depth, n_node_samples, stats)
            if ordered_sums:
                stats[base + count_nodes:base + count_nodes + 2] = child_stats
            count_nodes += 2
        return count_nodes

    if classification:
        scans = dict(scan_one_sided=_class_scan(unit_weight, binary, False, False, counted),
                     scan_two_sided=_class_scan(unit_weight, binary, True, False, counted))
    else:
        scans = dict(sums_one_sided=_sum_scan(unit_weight, False, False, False, positive, False),
                     sums_two_sided=_sum_scan(unit_weight, False, True, False, positive, False))
        if by_reciprocal:
            scans["scan_by_reciprocal"] = _sum_scan(True, True, False, False, False, False)
    if not bounded:
        # a small single tree's kernel calls its helpers: it compiles in less time, and a first
        # fit's two processes can compile a part of it each (fasttree._compile_ahead)
        scans.update({name: called_copy(globals()[name]) for name in _CALLED_HELPERS})
    return njit(cache=True, nogil=True, noalias=forests)(with_globals(grow_tree, **scans))


#: the helpers a small tree's kernel calls rather than inlines (:func:`_best_tree`)
_CALLED_HELPERS = ("_root", "_next_node", "_gather", "_add_row", "_split_node")


@njit(cache=True)
def drawn_layout(counts, y, tree_offsets, rows, labels, weight):
    """Each tree's drawn rows in order, tree after tree: their ids, targets and counts.

    Parameters
    ----------
    counts : ndarray of shape (n_trees, n_samples), uint8 (IN)
        How many times each tree drew each row.
    y : ndarray of shape (n_samples,) (IN)
        Each row's target (class code or value).
    tree_offsets : ndarray of shape (n_trees + 1,), int64 (IN)
        Where each tree's rows start: the cumulative sum of each tree's drawn rows.
    rows, labels, weight : ndarray of shape (tree_offsets[-1] + 1,) (OUT)
        int32 row ids, targets (``y`` cast to their dtype) and uint8 counts by position; the
        last position is scratch (every row is written, then kept if drawn: no branch).

    Returns
    -------
    tree_weights : ndarray of shape (n_trees,), float64
        Each tree's draws.
    most : int
        The largest count.
    """
    n_trees, n_samples = counts.shape
    tree_weights = np.zeros(n_trees)
    most = 0
    for t in range(n_trees):
        k = tree_offsets[t]
        drawn = 0
        for i in range(n_samples):
            c = counts[t, i]
            rows[k] = i
            labels[k] = y[i]
            weight[k] = c
            k += c > 0
            drawn += c
            most = max(most, np.int64(c))
        tree_weights[t] = drawn
    return tree_weights, most


@njit(cache=True, nogil=True)
def breadth_first_order(child_left):
    """The nodes of a tree numbered depth first (``child_left``: each node's first child, -1 for
    a leaf, the second child the next) in level order: root, its children, theirs, ... (the
    level-wise grower's numbering).  Returns ``order`` (old numbers by new) and ``new_left``
    (each new node's first child under the new numbers, -1 for a leaf)."""
    n = child_left.shape[0]
    order = np.empty(n, dtype=np.int64)
    new_left = np.full(n, -1, dtype=np.int64)
    order[0] = 0
    head = 0
    tail = 1
    while head < tail:
        node = order[head]
        first = child_left[node]
        if first >= 0:
            new_left[head] = tail
            order[tail] = first
            order[tail + 1] = first + 1
            tail += 2
        head += 1
    return order, new_left
