"""Send rows down a fitted tree."""

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def apply_tree(X, children_left, children_right, feature, threshold):
    """Leaf reached by every row, rows in parallel.

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
    """
    n_samples = X.shape[0]
    leaf = np.empty(n_samples, dtype=np.int32)
    for i in prange(n_samples):
        node = 0
        while children_left[node] != -1:
            if X[i, feature[node]] <= threshold[node]:
                node = children_left[node]
            else:
                node = children_right[node]
        leaf[i] = node
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
