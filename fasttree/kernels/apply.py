"""Send rows down a fitted tree."""

import numpy as np
from numba import njit, prange


_BLOCK = 64  # rows walked together: independent chains of loads overlap in the CPU


@njit(parallel=True, cache=True)
def apply_tree(X, children_left, children_right, feature, threshold):
    """Leaf reached by every row, blocks of rows in parallel.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
    children_left, children_right : ndarray of shape (node_count,), int32 (IN)
        Child ids, ``-1`` at leaves.  Rows with ``X[i, feature[node]] <= threshold[node]`` go left.
    feature : ndarray of shape (node_count,), int32 (IN)
    threshold : ndarray of shape (node_count,), float64 (IN)

    Returns
    -------
    leaf : ndarray of shape (n_samples,), int32
        Node id of the leaf each row ends in.

    Notes
    -----
    Walking one row at a time is a chain of dependent loads with an unpredictable branch per
    level.  Instead, leaves are turned into nodes that lead to themselves, and a block of rows
    advances one level at a time with a branch-free step, so the walks of the block overlap;
    a block stops as soon as all its rows sit in leaves.
    """
    n_samples = X.shape[0]
    node_count = children_left.shape[0]
    # leaves point to themselves and send every row "left", i.e. nowhere
    step_left = np.empty(node_count, dtype=np.int32)
    step_right = np.empty(node_count, dtype=np.int32)
    step_feature = np.empty(node_count, dtype=np.int32)
    step_threshold = np.empty(node_count, dtype=np.float64)
    for node in range(node_count):
        if children_left[node] == -1:
            step_left[node] = node
            step_right[node] = node
            step_feature[node] = 0
            step_threshold[node] = np.inf
        else:
            step_left[node] = children_left[node]
            step_right[node] = children_right[node]
            step_feature[node] = feature[node]
            step_threshold[node] = threshold[node]

    leaf = np.empty(n_samples, dtype=np.int32)
    n_blocks = (n_samples + _BLOCK - 1) // _BLOCK
    for block in prange(n_blocks):
        first = block * _BLOCK
        size = min(_BLOCK, n_samples - first)
        nodes = np.zeros(_BLOCK, dtype=np.int32)
        while True:
            n_inner = 0
            for r in range(size):
                node = nodes[r]
                go_right = np.int32(X[first + r, step_feature[node]] > step_threshold[node])
                left = step_left[node]
                nodes[r] = left + go_right * (step_right[node] - left)
                n_inner += children_left[node] != -1
            if n_inner == 0:
                break
        for r in range(size):
            leaf[first + r] = nodes[r]
    return leaf


@njit(parallel=True, cache=True)
def decision_paths(X, children_left, children_right, feature, threshold, max_depth):
    """Nodes visited by every row, root first.

    Parameters
    ----------
    X, children_left, children_right, feature, threshold
        As in :func:`apply_tree`.
    max_depth : int
        Depth of the tree (a path has at most ``max_depth + 1`` nodes).

    Returns
    -------
    path : ndarray of shape (n_samples, max_depth + 1), int32
        ``path[i, :length[i]]`` are the nodes row ``i`` visits; the rest is ``-1``.
    length : ndarray of shape (n_samples,), int32
    """
    n_samples = X.shape[0]
    path = np.full((n_samples, max_depth + 1), -1, dtype=np.int32)
    length = np.empty(n_samples, dtype=np.int32)
    for i in prange(n_samples):
        node = 0
        d = 0
        path[i, 0] = 0
        while children_left[node] != -1:
            if X[i, feature[node]] <= threshold[node]:
                node = children_left[node]
            else:
                node = children_right[node]
            d += 1
            path[i, d] = node
        length[i] = d + 1
    return path, length
