"""Random draws of a node as a pure function of the node: its key, then the feature.

Every random choice a node makes (the order in which it draws its features under
``max_features``, the position of a random threshold between its smallest and largest value,
the side its missing rows take) is a hash of the node's 64-bit key and the feature, and a
child's key is a hash of its parent's key and its branch.  Only the root's key comes from the
tree's random generator.  So a tree's draws do not depend on the order in which its nodes are
grown (level by level, best first, depth first, several trees at once), on the layout that
holds its rows, nor on the number of threads.  The hash is splitmix64's finalizer; the
uniform draws take its top 53 bits.
"""

import numpy as np

from .._jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
#: the streams of a (node, feature) pair; a child's branch is hashed past every feature's
_STREAM_ORDER, _STREAM_THRESHOLD, _STREAM_COIN, _N_STREAMS = 0, 1, 2, 3
_BRANCH_SALT = np.uint64(1 << 62)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def _mix(z):
    """splitmix64's output function of ``z + golden ratio`` (uint64 arithmetic, wrapping)."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _pair_hash(key, f, stream):
    return _mix(key ^ _mix(np.uint64(f * _N_STREAMS + stream)))


@njit(cache=True, inline="always")
def unit_draw(key, f, stream):
    """A uniform draw in [0, 1) of (node ``key``, feature ``f``, ``stream``)."""
    return np.float64(_pair_hash(key, f, stream) >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, inline="always")
def coin_draw(key, f):
    """The missing-side coin of (node ``key``, feature ``f``): 1 sends missing rows left."""
    return np.uint8(_pair_hash(key, f, _STREAM_COIN) >> np.uint64(63))


@njit(cache=True, inline="always")
def order_draw(key, f):
    """The key ordering feature ``f`` among node ``key``'s features (``max_features``)."""
    return unit_draw(key, f, _STREAM_ORDER)


@njit(cache=True, inline="always")
def threshold_draw(key, f):
    """The position in [0, 1) of node ``key``'s random threshold of feature ``f``."""
    return unit_draw(key, f, _STREAM_THRESHOLD)


@njit(cache=True)
def node_draws(node_key, n_features, order, thresholds):
    """The draws of nodes, (n_features, n_nodes) each.

    Parameters
    ----------
    node_key : ndarray of shape (n_nodes,), uint64 (IN)
    n_features : int
    order : bool
        Whether to draw the keys ordering each node's features (``max_features``).
    thresholds : bool
        Whether to draw random thresholds' positions and missing-side coins.

    Returns
    -------
    order_key : ndarray of shape (n_features, n_nodes) or (0, 0), float64
        Uniform keys in [0, 1): a node draws its features in increasing key order.
    uniform : ndarray of shape (n_features, n_nodes) or (0, 0), float64
        Each random threshold's position in [0, 1) between the node's smallest and largest
        value of the feature.
    coin : ndarray of shape (n_features, n_nodes) or (0, 0), uint8
        1: the node's missing rows of the feature go left.
    """
    n_nodes = node_key.shape[0]
    n_order = n_features if order else 0
    n_thresholds = n_features if thresholds else 0
    order_key = np.empty((n_order, n_nodes if order else 0))
    uniform = np.empty((n_thresholds, n_nodes if thresholds else 0))
    coin = np.empty((n_thresholds, n_nodes if thresholds else 0), dtype=np.uint8)
    for s in range(n_nodes):
        key = node_key[s]
        for f in range(n_order):
            order_key[f, s] = order_draw(key, f)
        for f in range(n_thresholds):
            uniform[f, s] = threshold_draw(key, f)
            coin[f, s] = coin_draw(key, f)
    return order_key, uniform, coin


@njit(cache=True, inline="always")
def child_key(parent_key, branch):
    """The key of a node's child on ``branch`` (0, 1, ...)."""
    return _mix(parent_key ^ _mix(_BRANCH_SALT + np.uint64(branch)))


@njit(cache=True)
def child_keys(parent_key, branch):
    """:func:`child_key` of each (``parent_key``, ``branch``) pair, (n_children,) uint64."""
    out = np.empty(parent_key.shape[0], dtype=np.uint64)
    for c in range(parent_key.shape[0]):
        out[c] = child_key(parent_key[c], branch[c])
    return out


def root_key(rng):
    """A tree's root key, the one draw taken from its generator (0 without one)."""
    if rng is None:
        return np.uint64(0)
    return rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
