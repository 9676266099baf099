"""Send rows down a fitted tree (every kind of split node; see :mod:`fasttree.kernels.routing`)."""

import numpy as np
from numba import prange

from .._jit import njit
from .._threads import each_range_in_threads

from .._dtypes import SPLIT_THRESHOLD
from .routing import branch_of, check_tree

_BLOCK = 64  # rows walked together: independent chains of loads overlap in the CPU
_FEATURE_BITS = np.int32((1 << 30) - 1)  # features below 2**30; bit 30: missing goes right


@njit(cache=True, inline="always")
def _next_node(x, node, children_left, threshold, split_kind, missing_branch, category_offset,
               category_n_codes, category_branch):
    return children_left[node] + branch_of(
        x, split_kind[node], threshold[node], missing_branch[node], category_offset[node],
        category_n_codes[node], category_branch)


def apply_tree(X, children_left, children_right, feature, threshold, split_kind, missing_branch,
               category_offset, category_n_codes, category_branch):
    """Leaf reached by every row, blocks of rows in parallel.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
        NaN for a missing value; category codes for categorical features.
    children_left, children_right, feature, threshold, split_kind, missing_branch, \
category_offset, category_n_codes, category_branch : the tree's node arrays (IN)
        As documented on :class:`fasttree.tree.Tree` (intp ids and features, float64
        thresholds, uint8 kinds, int32 missing branches, int64 category offsets and lengths,
        int32 category maps).

    Returns
    -------
    leaf : ndarray of shape (n_samples,), int32
        Node id of the leaf each row ends in.

    Notes
    -----
    Walking one row at a time is a chain of dependent loads with an unpredictable branch per
    level.  For a tree of numeric thresholds only, leaves are turned into nodes that lead to
    themselves, and a block of rows advances one level at a time with a branch-free step, so the
    walks of the block overlap; a block stops as soon as all its rows sit in leaves.  Trees with
    categorical splits walk each row with the general routing rule.  The tree is checked first
    (:func:`~fasttree.kernels.routing.check_tree`): bad arrays raise ``ValueError``.
    """
    check_tree(X.shape[1], children_left, children_right, feature, threshold, split_kind,
               missing_branch, category_offset, category_n_codes, category_branch)
    leaf = np.empty(X.shape[0], dtype=np.int32)
    # two walks, so that a tree of thresholds compiles only its own
    if np.all((children_left == -1) | (split_kind == SPLIT_THRESHOLD)):
        steps = _threshold_steps(children_left, children_right, feature, threshold,
                                 missing_branch)
        each_range_in_threads(lambda first, last: _walk_thresholds(X, *steps, first, last, leaf),
                              -(-X.shape[0] // _BLOCK))
    else:
        each_range_in_threads(lambda first, last: _walk_general(
            X, children_left, feature, threshold, split_kind, missing_branch, category_offset,
            category_n_codes, category_branch, first, last, leaf), X.shape[0])
    return leaf


@njit(cache=True, nogil=True, noalias=True)
def _walk_general(X, children_left, feature, threshold, split_kind, missing_branch,
                  category_offset, category_n_codes, category_branch, first, last, leaf):
    """:func:`apply_tree` for any tree, rows ``first .. last - 1``: each row walks with the
    general routing rule.  (``noalias``: ``leaf`` is the caller's new array.)"""
    for i in range(first, last):
        node = 0
        while children_left[node] != -1:
            node = _next_node(X[i, feature[node]], node, children_left, threshold, split_kind,
                              missing_branch, category_offset, category_n_codes, category_branch)
        leaf[i] = node


def _threshold_steps(children_left, children_right, feature, threshold, missing_branch):
    """A tree of numeric thresholds as :func:`_walk_thresholds` steps: each node's left and right
    child, its feature with the missing branch in bit 30 (one load per step, not two), and its
    threshold; a leaf leads to itself and sends every row "left", i.e. nowhere."""
    leaf = children_left == -1
    node = np.arange(children_left.shape[0])
    packed = np.asarray(feature, dtype=np.int64) | (np.asarray(missing_branch) != 0) << 30
    return (np.where(leaf, node, children_left).astype(np.int32),
            np.where(leaf, node, children_right).astype(np.int32),
            np.where(leaf, 0, packed).astype(np.int32),
            np.where(leaf, np.inf, threshold).astype(np.float64))


@njit(cache=True, nogil=True, noalias=True)
def _walk_thresholds(X, step_left, step_right, step_feature, step_threshold, first_block,
                     last_block, leaf):
    """:func:`apply_tree` for a tree of numeric thresholds (:func:`_threshold_steps`), blocks
    ``first_block .. last_block - 1`` of ``_BLOCK`` rows: one branch-free step per level.
    (``noalias``: ``leaf`` is the caller's new array.)"""
    n_samples = X.shape[0]
    nodes = np.empty(_BLOCK, dtype=np.int32)
    for block in range(first_block, last_block):
        first = block * _BLOCK
        size = min(_BLOCK, n_samples - first)
        nodes[:] = 0
        while True:
            n_inner = 0
            for r in range(size):
                node = np.uint64(nodes[r])  # unsigned: no negative wrap-around test per access
                packed = step_feature[node]
                x = X[first + r, np.uint64(packed & _FEATURE_BITS)]
                # NaN compares false: it goes right only where missing values go right
                go_right = np.int32(x > step_threshold[node]) | (np.int32(x != x) & (packed >> 30))
                left = step_left[node]
                nodes[r] = left + go_right * (step_right[node] - left)
                n_inner += left != node
            if n_inner == 0:
                break
        for r in range(size):
            leaf[first + r] = nodes[r]




@njit(parallel=True, cache=True)
def decision_paths(X, children_left, children_right, feature, threshold, split_kind,
                   missing_branch, category_offset, category_n_codes, category_branch, max_depth):
    """Nodes visited by every row, root first.

    Parameters
    ----------
    X, children_left, ..., category_branch
        As in :func:`apply_tree`.
    max_depth : int
        Depth of the tree (a path has at most ``max_depth + 1`` nodes).

    Returns
    -------
    path : ndarray of shape (n_samples, max_depth + 1), int32
        ``path[i, :length[i]]`` are the nodes row ``i`` visits; the rest is ``-1``.
    length : ndarray of shape (n_samples,), int32
    """
    depth = check_tree(X.shape[1], children_left, children_right, feature, threshold,
                       split_kind, missing_branch, category_offset, category_n_codes,
                       category_branch)
    if depth > max_depth:
        raise ValueError("max_depth is less than the tree's depth")
    n_samples = X.shape[0]
    path = np.full((n_samples, max_depth + 1), -1, dtype=np.int32)
    length = np.empty(n_samples, dtype=np.int32)
    for i in prange(n_samples):
        node = 0
        d = 0
        path[i, 0] = 0
        while children_left[node] != -1:
            node = _next_node(X[i, feature[node]], node, children_left, threshold, split_kind,
                              missing_branch, category_offset, category_n_codes, category_branch)
            d += 1
            path[i, d] = node
        length[i] = d + 1
    return path, length


@njit(parallel=True, cache=True)
def predict_fractional(X, children_left, children_right, feature, threshold, split_kind,
                       missing_branch, category_offset, category_n_codes, category_branch,
                       node_weight, value):
    """C4.5's prediction: a row missing a split value goes down every branch of that node.

    Each branch is weighted by its share of the children's training weight (for trees grown with
    fractional rows that is the branch's share of the known rows, as C4.5 has it), and the row's
    value is the weighted mixture of the values of every leaf it reaches.

    Parameters
    ----------
    X, children_left, ..., category_branch
        As in :func:`apply_tree`.
    node_weight : ndarray of shape (node_count,), float64 (IN)
        Weighted training rows of each node.
    value : ndarray of shape (node_count, n_values), float64, C-contiguous (IN)
        Each node's class fractions (or mean target).

    Returns
    -------
    out : ndarray of shape (n_samples, n_values), float64
    """
    check_tree(X.shape[1], children_left, children_right, feature, threshold, split_kind,
               missing_branch, category_offset, category_n_codes, category_branch)
    if node_weight.shape[0] != children_left.shape[0] or value.shape[0] != node_weight.shape[0]:
        raise ValueError("node_weight and value need one row per node")
    n_samples = X.shape[0]
    node_count = children_left.shape[0]
    n_values = value.shape[1]
    out = np.zeros((n_samples, n_values))
    for i in prange(n_samples):
        # every node is pushed at most once per row, so node_count slots suffice
        stack_node = np.empty(node_count, dtype=np.int64)
        stack_weight = np.empty(node_count)
        stack_node[0] = 0
        stack_weight[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            w = stack_weight[top]
            if children_left[node] == -1:
                for v in range(n_values):
                    out[i, v] += w * value[node, v]
                continue
            x = X[i, feature[node]]
            if x != x:
                first = children_left[node]
                last = children_right[node]
                total = 0.0
                for c in range(first, last + 1):
                    total += node_weight[c]
                for c in range(first, last + 1):
                    share = node_weight[c] / total if total > 0.0 else 1.0 / (last - first + 1)
                    stack_node[top] = c
                    stack_weight[top] = w * share
                    top += 1
            else:
                stack_node[top] = _next_node(x, node, children_left, threshold, split_kind,
                                             missing_branch, category_offset, category_n_codes,
                                             category_branch)
                stack_weight[top] = w
                top += 1
    return out
