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
dependent loads, so :data:`WALKS` rows walk at once, each on its own: a row that reaches its leaf
hands its slot to the next row of the block at once (no row waits for a deeper one, as rows
walked in lock-step would).  Every row's values are added tree after tree, in order, so the sums
do not depend on the number of threads.
"""

import numpy as np
from numba import prange

from .._jit import njit

#: rows of a block walking at the same time (independent chains of loads overlap in the CPU)
WALKS = 16
#: bit 30 of a node's feature: a missing value goes right
MISSING_RIGHT_BIT = 30
_FEATURE_MASK = np.int32((1 << MISSING_RIGHT_BIT) - 1)


@njit(cache=True, inline="always")
def _walk_block(X, first, size, nodes, thresholds, node_start, leaf, add, total, leaf_value,
                leaf_start):
    """Rows ``first .. first + size - 1`` of ``X`` walked through the tree whose internal nodes
    start at row ``node_start`` of ``nodes``: with ``add`` (a constant), each row's leaf values
    (rows ``leaf_start + ~child`` of ``leaf_value``) added to its row of ``total``; otherwise its
    leaf (the tree's own leaf number) written to ``leaf[row - first]``."""
    slot_row = np.empty(WALKS, dtype=np.int64)
    slot_node = np.empty(WALKS, dtype=np.int64)
    n_slots = min(WALKS, size)
    for s in range(n_slots):
        slot_row[s] = s
        slot_node[s] = node_start
    next_row = n_slots
    walking = n_slots
    while walking > 0:
        for s in range(n_slots):
            r = slot_row[s]
            if r < 0:
                continue
            g = slot_node[s]
            packed = nodes[g, 0]
            x = X[first + r, np.uint64(packed & _FEATURE_MASK)]
            # NaN compares false: it goes right only where the missing bit says so
            right = np.int64(x > thresholds[g, 1]) | (
                np.int64(x != x) & np.int64(packed >> MISSING_RIGHT_BIT))
            child = np.int64(nodes[g, 2 + right])
            if child >= 0:
                slot_node[s] = node_start + child
                continue
            if add:
                v = leaf_start + ~child
                for k in range(leaf_value.shape[1]):
                    total[first + r, k] += leaf_value[v, k]
            else:
                leaf[r] = ~child
            if next_row < size:  # the slot walks the block's next row
                slot_row[s] = next_row
                slot_node[s] = node_start
                next_row += 1
            else:
                slot_row[s] = -1
                walking -= 1


@njit(parallel=True, cache=True)
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
        ``total[i] = leaf_value[leaf of row i in tree 0] + ... `` added tree after tree, in
        order (divide by the number of trees for the forest's mean).
    """
    n_samples = X.shape[0]
    n_trees = tree_node_start.shape[0] - 1
    width = leaf_value.shape[1]
    thresholds = nodes.view(np.float32)
    total = np.zeros((n_samples, width))
    no_leaf = np.empty(0, dtype=np.int64)
    rows_per_block = max(1, rows_per_block)
    n_blocks = (n_samples + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        size = min(rows_per_block, n_samples - first)
        for t in range(n_trees):
            if tree_node_start[t + 1] > tree_node_start[t]:
                _walk_block(X, first, size, nodes, thresholds, tree_node_start[t], no_leaf, True,
                            total, leaf_value, tree_leaf_start[t])
            else:  # a tree that is one leaf
                for r in range(size):
                    for k in range(width):
                        total[first + r, k] += leaf_value[tree_leaf_start[t], k]
    return total


@njit(parallel=True, cache=True)
def forest_leaves(X, tree_node_start, nodes, rows_per_block):
    """The leaf (each tree's own leaf number) every row reaches in every tree.

    Parameters
    ----------
    X, tree_node_start, nodes, rows_per_block
        As in :func:`forest_values`.

    Returns
    -------
    leaf : ndarray of shape (n_samples, n_trees), int32
    """
    n_samples = X.shape[0]
    n_trees = tree_node_start.shape[0] - 1
    thresholds = nodes.view(np.float32)
    out = np.empty((n_samples, n_trees), dtype=np.int32)
    no_total = np.empty((0, 0))
    no_value = np.empty((0, 0))
    rows_per_block = max(1, rows_per_block)
    n_blocks = (n_samples + rows_per_block - 1) // rows_per_block
    for block in prange(n_blocks):
        first = block * rows_per_block
        size = min(rows_per_block, n_samples - first)
        leaf = np.zeros(size, dtype=np.int64)
        for t in range(n_trees):
            if tree_node_start[t + 1] > tree_node_start[t]:
                _walk_block(X, first, size, nodes, thresholds, tree_node_start[t], leaf, False,
                            no_total, no_value, 0)
            else:
                leaf[:] = 0
            for r in range(size):
                out[first + r, t] = leaf[r]
    return out
