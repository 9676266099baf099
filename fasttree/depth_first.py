"""Forests grown depth first, one tree per thread (:mod:`fasttree.kernels.depth_first`).

:func:`grow_depth_first` takes what :class:`~fasttree.grower.TreeGrower` takes for several trees
(``X``, the targets, each tree's counts and weights, the stopping rules, one generator per tree)
and returns each tree's node arrays, numbered level by level as the level-wise grower numbers
them; the grower makes the trees.  :func:`serves` says which fits it grows.
"""

import time

import numpy as np

from ._dtypes import label_dtype
from ._dtypes import CRITERION_SQUARED_ERROR
from ._threads import each_in_threads
from .kernels import node_impurity, reciprocal_table, xlog2x_table
from .kernels.bounded_search import SCATTERED_SPAN, fine_bin_codes
from .kernels import depth_first as depth_first_kernels
from .kernels.depth_first import (breadth_first_order, drawn_layout, grow_best_trees,
                                  grow_random_trees)
from .kernels.draws import root_key
from .splitter import drawn_weights, small_counts

#: the node slots per row given a classification tree at first, by splitter: full-depth extra
#: trees grew 0.30 nodes per row and random-forest trees 0.134 per distinct drawn row
#: (800,000 x 20, ``make_classification``); a tree needing more is grown again with as many as
#: a tree of its rows (or of ``max_depth``) can have
FIRST_SLOTS_PER_ROW = {"random": 0.5, "best": 0.25}
#: the fewest rows whose fit makes the bounded search's bins: with 300 x 6, making them took
#: longer than the few bounded nodes saved (a tree 795 against 613 us; a forest of 100 even),
#: with 1,000 x 6 a forest of 100 took 61 against 66 ms with them
BINNED_ROWS = 2 * depth_first_kernels.BOUNDED_ROWS
#: a single tree of fewer rows x features than this grows depth first too (one kernel call,
#: one thread): its levels' fixed costs (Python, kernel calls) exceed their work.  A full-depth
#: tree's time depth first / level-wise (2 or 3 classes, squared error): 0.2-0.54 at 300-1,000
#: x 6, 0.43-0.99 just under this limit, 1.1-1.2 for one deep three-class tree (2,700 x 6)
SMALL_TREE_WORK = 1 << 14


def small_tree(n_values):
    """Whether a single tree of ``n_values`` (rows x features) is small enough to grow depth
    first (fewer than :data:`SMALL_TREE_WORK`)."""
    return n_values < SMALL_TREE_WORK


def serves(params, any_categorical, several_outputs, monotonic, classification, forest,
           n_values=np.inf):
    """Whether :func:`grow_depth_first` grows trees of these parameters: a forest's trees (one
    tree per thread) or a single tree of fewer than :data:`SMALL_TREE_WORK` ``n_values`` (rows
    x features), numeric features, one output, level-wise rules (no ``max_leaf_nodes``), no
    constraints, missing values learned; random thresholds (gini, entropy, squared error or
    Poisson) or the best ones (not gain ratio's branch fraction).  A larger single tree keeps
    the presorted layout, whose levels use every thread: a full-depth ``ExtraTreeRegressor`` on
    300,000 x 20 took 0.73 s level-wise against 1.02 s depth first on two threads (1.17 against
    0.99 s on one; the choice may not depend on the thread count, which would change the tree
    where a near-tie rounds differently)."""
    if (not (forest or small_tree(n_values)) or any_categorical or several_outputs
            or monotonic or params.max_leaf_nodes is not None or params.missing != "learn"):
        return False
    if params.splitter == "random":
        return params.criterion in ("gini", "entropy", "log_loss", "squared_error", "poisson")
    return (params.splitter == "best" and params.min_branch_fraction == 0.0
            and params.criterion in (("gini", "entropy", "log_loss") if classification
                                     else ("squared_error", "poisson")))


def bytes_per_row(classification, splitter="random"):
    """Bytes a tree of this growth holds per row of its sample while it grows: its row ids,
    targets and weights, and its first node slots (:data:`FIRST_SLOTS_PER_ROW`, or two per row
    for regression)."""
    slot = 4 * 8 + 1 + 8 * (2 if classification else 3)  # the node arrays and two-class stats
    return 4 + (1 if classification else 8) + 8 + slot * (FIRST_SLOTS_PER_ROW[splitter]
                                                          if classification else 2)


def _layout(y, counts, sample_weight, n_classes, weight_dtype=None):
    """Tree after tree, each tree's rows in order: row ids, targets and weights by position
    (empty: every weight 1), where each tree's block starts, and each root's weight.

    ``weight_dtype``: the weights' kind of the batch these trees were laid out in first (a
    tree grown again is grown with the kind the others were: uint8 counts and float weights
    score two-class entropy by different formulas); None: this batch's own."""
    tree_offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.count_nonzero(counts, axis=1), out=tree_offsets[1:])
    if sample_weight is None and counts.dtype == np.uint8:  # a bootstrap's counts as they are
        rows = np.empty(tree_offsets[-1] + 1, dtype=np.int32)  # one spare for the last write
        labels = np.empty(rows.shape[0], dtype=y.dtype if n_classes is None
                          else label_dtype(n_classes))
        weight = np.empty(rows.shape[0], dtype=np.uint8)
        tree_weights, most = drawn_layout(np.ascontiguousarray(counts), y, tree_offsets, rows,
                                          labels, weight)
        rows, labels, weight = rows[:-1], labels[:-1], weight[:-1]
        weight = None if most <= 1 else weight
    else:
        in_sample = counts > 0
        rows = np.empty(tree_offsets[-1], dtype=np.int32)  # tree-major, rows in order
        for t, (a, b) in enumerate(zip(tree_offsets[:-1], tree_offsets[1:])):
            rows[a:b] = np.flatnonzero(in_sample[t])
        weight = drawn_weights(counts, sample_weight)
        bounds = zip(tree_offsets[:-1], tree_offsets[1:])
        tree_weights = np.array([float(b - a) if weight is None else float(weight[a:b].sum(
            dtype=np.float64)) for a, b in bounds])
        labels = y[rows] if n_classes is None else y[rows].astype(label_dtype(n_classes))
    if weight is None:
        weight = np.empty(0)
    elif weight.dtype != np.uint8:  # whole weights up to 255 move and add as one byte each
        counts8 = small_counts(weight)
        weight = weight if counts8 is None else counts8
    if weight_dtype == np.float64 and weight.dtype != np.float64:
        weight = np.ones(rows.shape[0]) if weight.shape[0] == 0 else weight.astype(np.float64)
    elif weight_dtype == np.uint8 and weight.shape[0] == 0:
        weight = np.ones(rows.shape[0], dtype=np.uint8)
    return rows, labels, weight, tree_offsets, tree_weights


def whole_weights(weight):
    """Whether trees weighted by ``weight`` (None: every weight 1) add whole counts, which they
    then move as uint8 (:func:`~fasttree.splitter.small_counts`) and the bounded search reads
    (:func:`fit_columns` makes the bins only for them)."""
    return weight is None or small_counts(weight) is not None


def fit_columns(X, params, n_classes, whole_weights=True, bins=True):
    """What every batch of a fit reads besides ``X``, as ``(X_t, codes_t, codes_rows)``: for
    best thresholds of two classes with whole weights (of at least :data:`BINNED_ROWS` rows),
    an empty ``X_t`` (the few values those trees read, of small nodes or threshold bins' rows,
    scattered rows mostly, come from ``X``) and each value's bin
    (:func:`~fasttree.kernels.bounded_search.fine_bin_codes`, read by the bounded search) one
    row per feature and one row per sample (where a node's rows lie scattered, a cache line
    holds a row's bins of every feature it searches; empty for fewer rows than a bounded node's
    rows can lie scattered in); else ``X`` transposed (read where a node's rows are dense) and
    no bins.  ``bins=False``: never bins (a small single tree, whose kernel then compiles
    without the bounded search)."""
    if (bins and params.splitter == "best" and n_classes == 2 and whole_weights
            and X.shape[0] >= BINNED_ROWS):
        codes_t = fine_bin_codes(X)
        # no bounded node's rows can span SCATTERED_SPAN times their number in fewer rows
        scattered = X.shape[0] >= SCATTERED_SPAN * depth_first_kernels.BOUNDED_ROWS
        codes_rows = (np.ascontiguousarray(codes_t.T) if scattered
                      else np.empty((0, 0), dtype=np.uint16))
        return np.empty((0, 0), dtype=np.float32), codes_t, codes_rows
    return np.ascontiguousarray(X.T), None, None


def grow_depth_first(X, y, counts, sample_weight, params, n_classes, rngs, timings,
                     columns=None):
    """Grow one tree per row of ``counts`` depth first.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous
    y : ndarray of shape (n_samples,)
        int32 encoded classes, or float64 targets when ``n_classes`` is None.
    counts : ndarray of shape (n_trees, n_samples), integer
        How many times each tree drew each row (checked by the caller).
    sample_weight : ndarray of shape (n_samples,) or (n_trees, n_samples), or None
    params : GrowerParams
        Parameters :func:`serves`.
    n_classes : int or None
    rngs : list of numpy.random.Generator or None
        One per tree: each root's key (None where nothing is drawn: every feature searched,
        best thresholds).
    timings : dict
        Seconds per phase (``layout``, ``grow``, ``build``) are added here.
    columns : tuple or None
        :func:`fit_columns` of ``X`` (made here when None).

    Returns
    -------
    trees : list of dict
        Each tree's node arrays, numbered level by level: ``left``, ``right`` (-1 at leaves),
        ``feature``, ``threshold``, ``missing_branch``, ``depth``, ``n_node_samples``, ``stats``,
        ``weight``, ``impurity``.
    missing_features : ndarray of shape (n_features,), bool
        Features with missing values in the trees' rows.
    """
    t0 = time.perf_counter()
    layout = _layout(y, counts, sample_weight, n_classes)
    missing_features = np.zeros(X.shape[1], dtype=bool)
    if np.isnan(X.min()):  # the features missing in some tree's rows (min: no NaN mask)
        missing_features = np.isnan(X[counts.any(axis=0)]).any(axis=0)
    keys = np.array([0 if rng is None else root_key(rng) for rng in rngs], dtype=np.uint64)
    if columns is None:
        columns = fit_columns(X, params, n_classes, whole_weights(sample_weight))
    X_t, codes_t, codes_rows = columns
    if (X_t.shape not in (X.shape[::-1], (0, 0)) or X_t.dtype != np.float32
            or not X_t.flags.c_contiguous):
        raise ValueError("columns[0] must be X transposed (float32, C-contiguous, of shape "
                         f"{X.shape[::-1]}) or empty")
    timings["layout"] = timings.get("layout", 0.0) + time.perf_counter() - t0
    n_rows = np.diff(layout[3])
    most = 2 * n_rows - 1  # as many as a tree of n rows can have, or one of max_depth
    if params.max_depth < 62:
        most = np.minimum(most, (1 << (params.max_depth + 1)) - 1)
    first = (FIRST_SLOTS_PER_ROW[params.splitter] * n_rows).astype(np.int64) + 64
    slots = most if n_classes is None else np.minimum(most, first)
    trees = [None] * counts.shape[0]
    pending = np.arange(counts.shape[0])
    while pending.size:
        t0 = time.perf_counter()
        grown = _grow(X, X_t, codes_t, codes_rows, *layout, keys[pending], n_classes, params,
                      slots[pending])
        timings["grow"] = timings.get("grow", 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()

        def build(j):
            """Tree ``pending[j]`` in level order (compiled and NumPy steps release the GIL)."""
            if grown[j] is not None:
                trees[pending[j]] = _level_order(grown[j], params.criterion_code)

        each_in_threads(build, len(grown))
        timings["build"] = timings.get("build", 0.0) + time.perf_counter() - t0
        pending = np.array([t for t in pending if trees[t] is None], dtype=np.int64)
        if pending.size:  # grown again from their samples (the layout was moved)
            t0 = time.perf_counter()
            own_weight = (sample_weight[pending] if sample_weight is not None
                          and sample_weight.ndim == 2 else sample_weight)
            kind = layout[2].dtype if layout[2].shape[0] else None
            layout = _layout(y, counts[pending], own_weight, n_classes, kind)
            slots[pending] = most[pending]
            timings["layout"] += time.perf_counter() - t0
    return trees, missing_features


def _grow(X, X_t, codes_t, codes_rows, rows, labels, weight, offsets, tree_weights, keys,
          n_classes, params, slots):
    """Grow every tree of a layout (moving its rows) with ``slots`` node slots each; a tree that
    needed more is None."""
    node_offsets = np.concatenate([[0], np.cumsum(slots)]).astype(np.int64)
    n_slots = int(node_offsets[-1])
    width = 3 if n_classes is None else n_classes
    child_left = np.empty(n_slots, dtype=np.int64)
    feature = np.empty(n_slots, dtype=np.int64)
    depth = np.empty(n_slots, dtype=np.int64)
    n_node_samples = np.empty(n_slots, dtype=np.int64)
    threshold = np.empty(n_slots)
    missing_branch = np.empty(n_slots, dtype=np.int32)
    stats = np.empty((n_slots, width))
    node_count = np.zeros(keys.size, dtype=np.int64)
    p = params
    layout = (X, X_t, rows, labels, weight)
    rules = (p.criterion_code, p.max_features, p.max_depth, p.min_samples_split,
             p.min_samples_leaf, p.min_weight_leaf, p.min_impurity_decrease)
    nodes = (node_offsets, child_left, feature, threshold, missing_branch, depth, n_node_samples,
             stats, node_count)
    if p.splitter == "best":
        whole = weight.shape[0] == 0 or weight.dtype == np.uint8
        largest = int(np.max(np.diff(offsets)))
        if n_classes is not None:  # whole weights: c log2 c of every count a node can hold
            table = (xlog2x_table(max(largest, int(np.max(tree_weights)))) if whole
                     else np.empty(0))
        else:  # sums: the presorted search's float64 weights; 1 / n for unit squared error
            if weight.dtype == np.uint8:
                layout = layout[:4] + (weight.astype(np.float64),)
            table = (reciprocal_table(largest) if weight.shape[0] == 0
                     and p.criterion_code == CRITERION_SQUARED_ERROR else np.empty(0))
        grow_best_trees(*layout, offsets, keys, tree_weights, *rules, table, *nodes, codes_t,
                        codes_rows=codes_rows)
    else:
        grow_random_trees(*layout, weight.dtype == np.uint8, offsets, keys, tree_weights,
                          n_classes or 0, *rules, *nodes)
    grown = []
    for j in range(keys.size):
        if node_count[j] < 0:
            grown.append(None)
            continue
        own_slots = slice(node_offsets[j], node_offsets[j] + node_count[j])
        grown.append({"left": child_left[own_slots], "feature": feature[own_slots],
                      "threshold": threshold[own_slots],
                      "missing_branch": missing_branch[own_slots], "depth": depth[own_slots],
                      "n_node_samples": n_node_samples[own_slots], "stats": stats[own_slots]})
    return grown


def _level_order(tree, criterion_code):
    """A tree's node arrays renumbered from depth-first to level order, with each node's
    weight and impurity."""
    order, left = breadth_first_order(tree["left"])
    out = {name: tree[name][order] for name in tree if name != "left"}
    out["left"] = left
    out["right"] = np.where(left >= 0, left + 1, -1)
    out["weight"], out["impurity"] = node_impurity(out["stats"], criterion_code)
    return out
