"""Send rows down every tree of a forest at once: the packed forest layout and its two walks.

A forest of numeric thresholds is packed (:class:`fasttree.packed_forest.PackedForest` builds
it from fitted trees) into one array of internal nodes and one of leaf values, tree after tree:

* ``nodes``, shape (n_internal, 4), int32: per internal node its feature (bit 30 set when a
  missing value goes right), its threshold as the bits of a float32 (``nodes[:, 1]`` viewed as
  float32), and its left and right child: ``c >= 0`` is the tree's internal node ``c``, ``c < 0``
  its leaf ``~c``.  A tree's internal nodes are in preorder (the root first, every child after
  its parent), so a child's number is larger than its parent's and a walk always ends.
* ``leaf_value``, shape (n_leaves, width), float64: each leaf's values.
* ``tree_node_start``, ``tree_leaf_start``, shape (n_trees + 1,), int64: tree ``t``'s internal
  nodes and leaves are rows ``[start[t], start[t + 1])``; a tree without internal nodes is its
  leaf 0.

A row goes right where its value is greater than the threshold; NaN goes where the node's
missing bit says.  Thresholds are float32: the largest float32 not above a tree's float64
threshold splits every float32 value as that threshold does.

Each thread takes blocks of ``rows_per_block`` rows and walks them through the trees, one
at a time (a tree's nodes stay in the core's cache for the whole block).  A walk is a chain of
dependent loads, so eight rows walk at once, each on its own: a row that reaches its leaf
hands its slot to the next row of the block at once (no row waits for a deeper one, as rows
walked in lock-step would).  Every row's values are added tree after tree, in order, so the sums
do not depend on the number of threads.
"""

import numpy as np

from .._jit import njit
from .._threads import each_in_threads

#: bit 30 of a node's feature: a missing value goes right
MISSING_RIGHT_BIT = 30
_FEATURE_MASK = np.int32((1 << MISSING_RIGHT_BIT) - 1)


@njit(cache=True, inline="always")
def _step(row, base, node, next_row, size, first, n_features, node_start, X_flat, nodes_flat,
          thresholds_flat, add, total, leaf_value, leaf_start, leaf):
    """One step of the walk a slot makes: ``row`` (of the block; ``size`` or more once the
    block has no more rows for it), whose values start at ``X_flat[base]``, at internal node
    ``node`` of ``nodes`` moves to its child.  At a leaf, the row's leaf values are added to its
    row of ``total`` (``add``, a constant) or its leaf number written to ``leaf[row]``, and the
    slot takes the block's next row.

    The arrays are read flat, with unsigned indices and the row's offset kept by the slot: a
    step is a few instructions (2-D indexing, with a multiply per index and a test for negative
    indices, made the walk about a quarter slower).

    Returns the slot's row, its offset and node, and the block's next row."""
    if row >= size:
        return row, base, node, next_row
    at = np.uint64(node) << np.uint64(2)  # four int32 a node
    packed = nodes_flat[at]
    x = X_flat[np.uint64(base + (packed & _FEATURE_MASK))]
    right = np.uint64(x > thresholds_flat[at + np.uint64(1)])
    if x != x:  # NaN (rare: a branch, not arithmetic at every step) goes where the bit says
        right = np.uint64(packed >> MISSING_RIGHT_BIT)
    child = np.int64(nodes_flat[at + np.uint64(2) + right])
    if child >= 0:
        return row, base, node_start + child, next_row
    if add:
        v = leaf_start + ~child
        for k in range(leaf_value.shape[1]):
            total[first + row, k] += leaf_value[v, k]
    else:
        leaf[row] = ~child
    return next_row, (first + next_row) * n_features, node_start, next_row + 1


@njit(cache=True, inline="always")
def _walk_block(X_flat, n_features, first, size, nodes_flat, thresholds_flat, node_start, add,
                total, leaf_value, leaf_start, leaf):
    """Rows ``first .. first + size - 1`` of ``X`` (``X_flat``, its rows one after another)
    through the tree whose internal nodes start at row ``node_start`` of ``nodes``: eight rows
    walk at once, each on its own (the slots are spelled out so that they live in registers;
    sixteen were no faster)."""
    r0, r1, r2, r3, r4, r5, r6, r7 = 0, 1, 2, 3, 4, 5, 6, 7
    b0, b1, b2, b3 = first * n_features, (first + 1) * n_features, (first + 2) * n_features, \
        (first + 3) * n_features
    b4, b5, b6, b7 = (first + 4) * n_features, (first + 5) * n_features, \
        (first + 6) * n_features, (first + 7) * n_features
    n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = node_start
    nxt = 8
    while (r0 < size or r1 < size or r2 < size or r3 < size or r4 < size or r5 < size
           or r6 < size or r7 < size):
        r0, b0, n0, nxt = _step(r0, b0, n0, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r1, b1, n1, nxt = _step(r1, b1, n1, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r2, b2, n2, nxt = _step(r2, b2, n2, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r3, b3, n3, nxt = _step(r3, b3, n3, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r4, b4, n4, nxt = _step(r4, b4, n4, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r5, b5, n5, nxt = _step(r5, b5, n5, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r6, b6, n6, nxt = _step(r6, b6, n6, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)
        r7, b7, n7, nxt = _step(r7, b7, n7, nxt, size, first, n_features, node_start,
                                X_flat, nodes_flat, thresholds_flat, add, total, leaf_value,
                                leaf_start, leaf)


def forest_values(X, tree_node_start, tree_leaf_start, nodes, leaf_value, rows_per_block):
    """Sum over the trees of the value of the leaf each row reaches.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
        NaN for a missing value.
    tree_node_start, tree_leaf_start, nodes, leaf_value : the packed forest (IN)
        As in this module's docstring; check them first with
        :func:`fasttree.packed_forest.check_packed_forest` (the kernel trusts them).
    rows_per_block : int
        Rows a thread walks through every tree before taking the next ones (larger blocks load
        each tree into the core's cache for more rows; rows are independent, so the block size
        never changes a result).

    Returns
    -------
    total : ndarray of shape (n_samples, width), float64
        Row ``i``: the leaf values of row ``i``'s leaf in tree 0, plus those in tree 1, and so
        on, added in that order (divide by the number of trees for the forest's mean).

    Notes
    -----
    A Python function: each block is one call of a compiled function, the blocks shared out to
    threads (:func:`fasttree._threads.each_in_threads`).
    """
    n_samples = X.shape[0]
    total = np.zeros((n_samples, leaf_value.shape[1]))
    rows_per_block = max(1, rows_per_block)
    each_in_threads(lambda block: _block_values(
        X, tree_node_start, tree_leaf_start, nodes, leaf_value, block * rows_per_block,
        rows_per_block, total), -(-n_samples // rows_per_block))
    return total


@njit(cache=True, nogil=True, noalias=True)
def _block_values(X, tree_node_start, tree_leaf_start, nodes, leaf_value, first, size, total):
    """:func:`forest_values` of ``size`` rows (fewer at the end) from row ``first``, added to
    their rows of ``total``."""
    n_samples, n_features = X.shape
    width = leaf_value.shape[1]
    size = min(size, n_samples - first)
    X_flat = np.ascontiguousarray(X).reshape(-1)  # C-contiguous: no copy
    nodes_flat = nodes.reshape(-1)
    thresholds_flat = nodes_flat.view(np.float32)
    no_leaf = np.empty(0, dtype=np.int64)
    for t in range(tree_node_start.shape[0] - 1):
        if tree_node_start[t + 1] > tree_node_start[t]:
            _walk_block(X_flat, n_features, first, size, nodes_flat, thresholds_flat,
                        tree_node_start[t], True, total, leaf_value, tree_leaf_start[t],
                        no_leaf)
        else:  # a tree that is one leaf
            for r in range(size):
                for k in range(width):
                    total[first + r, k] += leaf_value[tree_leaf_start[t], k]


def forest_leaves(X, tree_node_start, nodes, rows_per_block):
    """The leaf (each tree's own leaf number) every row reaches in every tree.

    Parameters
    ----------
    X, tree_node_start, nodes, rows_per_block
        As in :func:`forest_values`.

    Returns
    -------
    leaf : ndarray of shape (n_samples, n_trees), int32

    Notes
    -----
    A Python function, as :func:`forest_values`.
    """
    n_samples = X.shape[0]
    out = np.empty((n_samples, tree_node_start.shape[0] - 1), dtype=np.int32)
    rows_per_block = max(1, rows_per_block)
    each_in_threads(lambda block: _block_leaves(
        X, tree_node_start, nodes, block * rows_per_block, rows_per_block, out),
        -(-n_samples // rows_per_block))
    return out


@njit(cache=True, nogil=True, noalias=True)
def _block_leaves(X, tree_node_start, nodes, first, size, out):
    """:func:`forest_leaves` of ``size`` rows (fewer at the end) from row ``first``, into
    their rows of ``out``."""
    n_samples, n_features = X.shape
    size = min(size, n_samples - first)
    X_flat = np.ascontiguousarray(X).reshape(-1)  # C-contiguous: no copy
    nodes_flat = nodes.reshape(-1)
    thresholds_flat = nodes_flat.view(np.float32)
    no_total = np.empty((0, 0))
    no_value = np.empty((0, 0))
    leaf = np.zeros(size, dtype=np.int64)
    for t in range(tree_node_start.shape[0] - 1):
        if tree_node_start[t + 1] > tree_node_start[t]:
            _walk_block(X_flat, n_features, first, size, nodes_flat, thresholds_flat,
                        tree_node_start[t], False, no_total, no_value, 0, leaf)
        else:
            leaf[:] = 0
        for r in range(size):
            out[first + r, t] = leaf[r]
