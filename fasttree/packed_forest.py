"""A forest's trees packed for prediction: internal nodes in preorder, float32 thresholds, int32
children, leaf values apart (the layout is described in :mod:`fasttree.kernels.forest_predict`).

The forests predict through it (every row walks all the trees in one kernel call) and model files
store it.  Only trees of numeric thresholds pack (categorical splits and C4.5's fractional
missing values keep the trees' own walks).
"""

import numba
import numpy as np

from ._dtypes import SPLIT_THRESHOLD
from ._jit import njit
from .kernels.forest_predict import MISSING_RIGHT_BIT, forest_leaves, forest_values

_FEATURE_MASK = (1 << MISSING_RIGHT_BIT) - 1
#: rows a thread walks through every tree before the next block: at most this many (a larger
#: block loads each tree into the core's cache for more rows; measured on B1's data, 100 trees)
MAX_ROWS_PER_BLOCK = 65536
#: ... and at least this many, or fewer blocks than threads
MIN_ROWS_PER_BLOCK = 4096


def rows_per_block(n_samples):
    """Rows of a block of :func:`~fasttree.kernels.forest_predict.forest_values`: at most
    :data:`MAX_ROWS_PER_BLOCK`, in a number of equal blocks that every thread gets as many of
    (each thread takes the next block when done: 300,000 rows in blocks of 65,536 would give
    one thread of two three blocks and the other two).  The result is the same for any block
    size."""
    n_threads = numba.get_num_threads()
    n_blocks = n_threads * -(-n_samples // (n_threads * MAX_ROWS_PER_BLOCK))
    return max(MIN_ROWS_PER_BLOCK, -(-n_samples // max(n_blocks, 1)))


def float32_below(threshold):
    """The largest float32 not above each float64 threshold.

    For every float32 ``x``, ``x > float32_below(t)`` exactly when ``x > t``: between
    ``float32_below(t)`` and ``t`` lies no float32.  Infinite thresholds stay infinite.
    """
    threshold = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, then stepped below
        below = threshold.astype(np.float32)
    above = below.astype(np.float64) > threshold
    below[above] = np.nextafter(below[above], np.float32(-np.inf))
    return below


@njit(cache=True)
def _preorder(children_left, children_right):
    """Node ids in preorder (a node, its left subtree, its right subtree), from a checked tree."""
    order = np.empty(children_left.shape[0], dtype=np.int64)
    stack = np.empty(children_left.shape[0] + 1, dtype=np.int64)
    stack[0] = 0
    top = 1
    n = 0
    while top > 0:
        top -= 1
        node = stack[top]
        order[n] = node
        n += 1
        if children_left[node] != -1:
            stack[top] = children_right[node]
            stack[top + 1] = children_left[node]
            top += 2
    return order[:n]


def packs(trees):
    """Whether the trees (:class:`fasttree.tree.Tree`) have numeric thresholds only."""
    return all(not tree.fractional_missing and np.all(
        (tree.children_left == -1) | (tree.split_kind == SPLIT_THRESHOLD)) for tree in trees)


class PackedForest:
    """Trees of numeric thresholds in the packed layout, with their leaves' node ids.

    Parameters
    ----------
    tree_node_start, tree_leaf_start, nodes, leaf_value
        The packed layout (:mod:`fasttree.kernels.forest_predict`).
    leaf_node : ndarray of shape (n_leaves,), int64
        Each leaf's node id in its tree (what ``apply`` returns).
    n_features : int
    node_id : ndarray of shape (n_internal,), int64, optional
        Each internal node's id in its tree.
    """

    def __init__(self, tree_node_start, tree_leaf_start, nodes, leaf_value, leaf_node,
                 n_features, node_id=None):
        self.tree_node_start = tree_node_start
        self.tree_leaf_start = tree_leaf_start
        self.nodes = nodes
        self.leaf_value = leaf_value
        self.leaf_node = leaf_node
        self.n_features = n_features
        self.node_id = node_id

    @classmethod
    def from_trees(cls, trees, n_features):
        """Pack fitted trees (:class:`fasttree.tree.Tree`, numeric thresholds only, as
        :func:`packs` says); a leaf's values are its ``value`` row flattened (outputs, then
        classes)."""
        nodes, leaf_value, leaf_node, node_id = [], [], [], []
        node_start, leaf_start = [0], [0]
        for tree in trees:
            left, right = tree.children_left, tree.children_right
            order = _preorder(left, right)
            is_leaf = left[order] == -1
            # each node's number: its index among the tree's internal nodes, or ~ its leaf's
            code = np.empty(left.shape[0], dtype=np.int64)
            code[order[~is_leaf]] = np.arange(np.count_nonzero(~is_leaf))
            code[order[is_leaf]] = ~np.arange(np.count_nonzero(is_leaf))
            inner = order[~is_leaf]
            packed = np.empty((inner.shape[0], 4), dtype=np.int32)
            packed[:, 0] = tree.feature[inner] | (
                (tree.missing_branch[inner] != 0).astype(np.int64) << MISSING_RIGHT_BIT)
            packed[:, 1] = float32_below(tree.threshold[inner]).view(np.int32)
            packed[:, 2] = code[left[inner]]
            packed[:, 3] = code[right[inner]]
            nodes.append(packed)
            node_id.append(inner)
            leaves = order[is_leaf]
            leaf_value.append(tree.value[leaves].reshape(leaves.shape[0], -1))
            leaf_node.append(leaves)
            node_start.append(node_start[-1] + inner.shape[0])
            leaf_start.append(leaf_start[-1] + leaves.shape[0])
        return cls(np.array(node_start, dtype=np.int64), np.array(leaf_start, dtype=np.int64),
                   np.ascontiguousarray(np.concatenate(nodes)),
                   np.ascontiguousarray(np.concatenate(leaf_value), dtype=np.float64),
                   np.concatenate(leaf_node).astype(np.int64), n_features,
                   np.concatenate(node_id).astype(np.int64))

    @property
    def n_trees(self):
        return self.tree_node_start.shape[0] - 1

    def values(self, X):
        """Sum over the trees of each row's leaf values, shape (n_samples, width), float64
        (``X``: float32, C-contiguous, ``n_features`` columns)."""
        return forest_values(X, self.tree_node_start, self.tree_leaf_start, self.nodes,
                             self.leaf_value, rows_per_block(X.shape[0]))

    def apply(self, X):
        """Node id of the leaf each row reaches in each tree, shape (n_samples, n_trees),
        int64."""
        leaf = forest_leaves(X, self.tree_node_start, self.nodes, rows_per_block(X.shape[0]))
        return self.leaf_node[leaf + self.tree_leaf_start[:-1]]


def check_packed_forest(n_features, tree_node_start, tree_leaf_start, nodes, leaf_value):
    """Raise ``ValueError`` unless the arrays are a packed forest the kernels may walk.

    Checks the dtypes and shapes, that every tree is a binary tree (one more leaf than internal
    nodes; every node but the root and every leaf the child of exactly one node, each internal
    child after its parent), the features and that no threshold is NaN.
    """
    for name, array, dtype, ndim in (("tree_node_start", tree_node_start, np.int64, 1),
                                     ("tree_leaf_start", tree_leaf_start, np.int64, 1),
                                     ("nodes", nodes, np.int32, 2),
                                     ("leaf_value", leaf_value, np.float64, 2)):
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != ndim \
                or not array.flags.c_contiguous:
            raise ValueError(f"packed forest: {name} must be a C-contiguous {ndim}-D {dtype} "
                             "array")
    if nodes.shape[1] != 4:
        raise ValueError("packed forest: nodes must have 4 columns")
    n_trees = tree_node_start.shape[0] - 1
    if n_trees < 1 or tree_leaf_start.shape[0] != n_trees + 1:
        raise ValueError("packed forest: tree_node_start and tree_leaf_start need one entry per "
                         "tree plus one")
    n_inner = np.diff(tree_node_start)
    n_leaves = np.diff(tree_leaf_start)
    if tree_node_start[0] != 0 or tree_leaf_start[0] != 0 or np.any(n_inner < 0) or \
            tree_node_start[-1] != nodes.shape[0] or tree_leaf_start[-1] != leaf_value.shape[0]:
        raise ValueError("packed forest: tree starts must rise from 0 to the number of nodes "
                         "and of leaves")
    if np.any(n_leaves != n_inner + 1):
        raise ValueError("packed forest: every tree needs one more leaf than internal nodes")
    feature = nodes[:, 0]
    if np.any(feature < 0) or np.any((feature & _FEATURE_MASK) >= n_features):
        raise ValueError(f"packed forest: a feature is not in [0, {n_features})")
    if np.any(np.isnan(nodes[:, 1].view(np.float32))):
        raise ValueError("packed forest: a threshold is NaN")
    # node i of its tree, and its tree's sizes, for every internal node
    tree_of = np.repeat(np.arange(n_trees), n_inner)
    local = np.arange(nodes.shape[0]) - tree_node_start[tree_of]
    children = nodes[:, 2:].astype(np.int64)
    inner_child = children >= 0
    size = np.where(inner_child, n_inner[tree_of, None], n_leaves[tree_of, None])
    number = np.where(inner_child, children, ~children)
    if np.any(number >= size) or np.any(inner_child & (children <= local[:, None])):
        raise ValueError("packed forest: a child is out of its tree or not after its parent")
    # each internal node but the root and each leaf is a child once: number them forest-wide
    flat = np.where(inner_child, tree_node_start[tree_of, None] + children,
                    nodes.shape[0] + tree_leaf_start[tree_of, None] + ~children).ravel()
    seen = np.bincount(flat, minlength=nodes.shape[0] + leaf_value.shape[0])
    roots = tree_node_start[:-1][n_inner > 0]
    expected = np.ones_like(seen)
    expected[roots] = 0
    expected[nodes.shape[0] + tree_leaf_start[:-1][n_inner == 0]] = 0  # trees that are a leaf
    if not np.array_equal(seen, expected):
        raise ValueError("packed forest: a node is the child of none or of several nodes")
