"""Monotonicity constraints (scikit-learn's ``monotonic_cst``): the one place their rules live.

Each feature carries a constraint ``c``: 1 (the prediction may only increase with the feature),
-1 (only decrease) or 0 (free).  Each node carries a range ``[lower, upper]`` its value must lie
in, ``(-inf, inf)`` at the root.  The constrained *value* of a node is its mean target
(squared error, Poisson), its weighted median (absolute error), or its weighted fraction of
class 0 (binary classification: scikit-learn constrains the negative class, so the estimators
negate the user's signs).  The rules, as in scikit-learn:

* a candidate split on a constrained feature is admissible only if both children's values lie
  in the node's range and ``(v_left - v_right) * c <= 0`` (:func:`monotonic_ok`); splits on free
  features are not checked;
* after a split on a constrained feature the children's ranges meet at the middle value
  ``m = v_left / 2 + v_right / 2``: for ``c = 1`` the left child gets ``[lower, m]`` and the right
  ``[m, upper]``, for ``c = -1`` the reverse; after a split on a free feature both children
  inherit the node's range (:func:`child_bounds`);
* every node's value is clipped to its range.

Kernels take the constraints as ``monotonic_cst`` (int8, one per feature, or empty: none) and
``node_bounds`` (float64, ``[lower, upper]`` per node, read only when ``monotonic_cst`` is not
empty).
"""

import numpy as np
from .._jit import njit


@njit(cache=True, inline="always")
def monotonic_ok(cst, lower, upper, value_left, value_right):
    """Whether a split with children values ``value_left``, ``value_right`` respects constraint
    ``cst`` (-1 or 1) and the node's range ``[lower, upper]`` (False if a value is NaN)."""
    return (lower <= value_left <= upper and lower <= value_right <= upper
            and (value_left - value_right) * cst <= 0.0)


@njit(cache=True, inline="always")
def constraint_of(monotonic_cst, node_bounds, f, s):
    """Constraint of feature ``f`` and range of node ``s``: ``(c, lower, upper)``, ``c = 0`` when
    there are no constraints."""
    if monotonic_cst.shape[0] == 0:
        return 0, -np.inf, np.inf
    return monotonic_cst[f], node_bounds[s, 0], node_bounds[s, 1]


def unconstrained():
    """``(monotonic_cst, node_bounds)`` for kernels called without constraints (empty arrays)."""
    return np.empty(0, dtype=np.int8), np.empty((0, 2))


def child_bounds(cst, lower, upper, value_left, value_right):
    """Ranges of the two children of split nodes (arrays, one entry per split node).

    Parameters
    ----------
    cst : ndarray of int
        Constraint of each node's split feature (-1, 0 or 1).
    lower, upper : ndarray of float64
        Each node's range.
    value_left, value_right : ndarray of float64
        Unclipped values of each node's children.

    Returns
    -------
    left, right : ndarray of shape (n, 2), float64
        ``[lower, upper]`` of each node's left and right child.
    """
    middle = value_left / 2.0 + value_right / 2.0
    left = np.column_stack([lower, upper]).astype(np.float64)
    right = left.copy()
    up = cst == 1
    down = cst == -1
    left[up, 1] = middle[up]
    right[up, 0] = middle[up]
    left[down, 0] = middle[down]
    right[down, 1] = middle[down]
    return left, right
