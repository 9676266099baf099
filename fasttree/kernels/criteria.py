"""Impurity, gain and split-information formulas: the one place they are written.

Every scan kernel and the grower take their formulas from here.  Criterion codes are declared in
:mod:`fasttree._dtypes`.  Conventions (see ``shared/ALGORITHMS.md``):

* classification statistics are weighted class counts ``c_k``, ``w = sum_k c_k``; Gini
  ``1 - sum_k (c_k / w)**2``, entropy in bits ``-sum_k (c_k / w) log2(c_k / w)``;
* regression statistics are ``[sum w, sum w*y, c]`` with ``c = sum w*y**2`` for squared error
  (impurity: the weighted variance) and ``c = sum w*y*log(y)`` for Poisson (impurity: half the
  mean Poisson deviance, ``(c - sum w*y * log(mean)) / w``); either way a binary split's children
  impurity is ``c - proxy`` with the proxy of :func:`regression_proxy`;
* gradient statistics (``CRITERION_GRADIENT``, for boosting) are ``[H, G, 0]``, sums of the rows'
  hessians and gradients; a node's score is ``G**2 / (H + lambda)`` (:func:`gradient_score`), its
  value ``-G / (H + lambda)``, its "weighted impurity" ``-score`` and a binary split's proxy the
  children's scores added: XGBoost's exact split gain is half the proxy minus the node's score;
* a *children impurity* is ``sum_i w_i * I(child_i)``, lower is better;
* a *gain* is an impurity decrease per unit of weight, ``I(node) - children_impurity / w``;
* the *split information* of branches of weights ``w_i`` is ``-sum_i (w_i/w) log2(w_i/w)``.

``w * entropy`` is computed as ``w log2 w - sum_k c_k log2 c_k`` (one logarithm per count), which
for integer counts reads ``c log2 c`` from :func:`xlog2x_table`.
"""

import numpy as np

from .._jit import njit

from .._dtypes import (
    CRITERION_ABSOLUTE_ERROR,
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)

#: scikit-learn's tolerance: a Poisson child whose target sum is at most this is refused (its
#: mean would be 0 and its log-likelihood undefined).
POISSON_MIN_SUM = np.finfo(np.float64).eps


@njit(cache=True, inline="always")
def xlog2x(v):
    """``v log2 v`` with ``0 log 0 = 0``; a tiny negative from float cancellation counts as 0."""
    if v <= 0.0:
        return 0.0
    return v * np.log2(v)


def xlog2x_table(n):
    """``table[c] = c * log2(c)`` for the integer counts ``c = 0 .. n`` (``table[0] = 0``).

    Parameters
    ----------
    n : int
        Largest count (the number of rows).

    Returns
    -------
    table : ndarray of shape (n + 1,), float64
    """
    return _count_table(n, False)


def reciprocal_table(n):
    """``table[c] = 1 / c`` for the integer counts ``c = 1 .. n`` (``table[0] = inf``).

    Lets an unweighted regression scan multiply instead of divide per candidate.

    Parameters
    ----------
    n : int
        Largest count (the number of rows).

    Returns
    -------
    table : ndarray of shape (n + 1,), float64
    """
    return _count_table(n, True)


def _count_table(n, reciprocal):
    """The tables above: ``1 / c`` if ``reciprocal``, else ``c log2 c`` (numba's ``log2``, the
    one :func:`xlog2x` takes, not NumPy's), filled on one thread: a parallel loop compiled 0.2 s
    longer, and Python threads cost more than they share out (two threads: 193 us against 18 us
    for 3,000 entries, 5.4 against 4.6 ms for a million)."""
    table = np.empty(n + 1)
    table[0] = np.inf if reciprocal else 0.0
    _fill_count_table(table, 1, n + 1, reciprocal)
    return table


@njit(cache=True)
def _fill_count_table(table, start, stop, reciprocal):
    """Entries ``start .. stop - 1`` of :func:`_count_table`."""
    for c in range(start, stop):
        table[c] = 1.0 / c if reciprocal else c * np.log2(c)


@njit(cache=True, inline="always")
def weighted_class_impurity(counts, criterion):
    """``w * I`` of one weighted class-count vector (Gini or entropy in bits); 0 when empty."""
    w = 0.0
    for k in range(counts.shape[0]):
        w += counts[k]
    if w <= 0.0:
        return 0.0
    if criterion == CRITERION_GINI:
        sq = 0.0
        for k in range(counts.shape[0]):
            sq += counts[k] * counts[k]
        return w - sq / w
    s = xlog2x(w)
    for k in range(counts.shape[0]):
        s -= xlog2x(counts[k])
    return s


@njit(cache=True)
def weighted_node_impurities(class_weight, criterion):
    """Weight and ``w * I`` of every node from its weighted class counts (one row per node):
    what the search kernels compute once per level, not once per feature."""
    n_nodes = class_weight.shape[0]
    weight = np.empty(n_nodes)
    weighted_impurity = np.empty(n_nodes)
    for s in range(n_nodes):
        weight[s] = class_weight[s].sum()
        weighted_impurity[s] = weighted_class_impurity(class_weight[s], criterion)
    return weight, weighted_impurity


@njit(cache=True, inline="always")
def two_children_class_impurity(left, total, w_left, w_right, criterion):
    """Children impurity of a binary split from the left counts and the node's counts.

    ``left`` and ``total`` are weighted class counts (the right child is ``total - left``);
    ``w_left``, ``w_right`` the children's weights (both > 0).
    """
    n_classes = left.shape[0]
    if criterion == CRITERION_GINI:
        sq_left = 0.0
        sq_right = 0.0
        for k in range(n_classes):
            c_left = left[k]
            c_right = total[k] - c_left
            sq_left += c_left * c_left
            sq_right += c_right * c_right
        return (w_left - sq_left / w_left) + (w_right - sq_right / w_right)
    s = xlog2x(w_left) + xlog2x(w_right)
    for k in range(n_classes):
        c_left = left[k]
        s -= xlog2x(c_left) + xlog2x(total[k] - c_left)
    return s


@njit(cache=True, inline="always")
def weighted_squared_error(w, sum_y, sum_yy):
    """``w * variance`` from ``[sum w, sum w*y, sum w*y**2]``, clipped at 0; 0 when empty."""
    if w <= 0.0:
        return 0.0
    return max(sum_yy - sum_y * sum_y / w, 0.0)


@njit(cache=True, inline="always")
def regression_target_term(y, criterion):
    """A row's contribution (times its weight) to the statistic ``c``: ``y**2`` or
    ``y log(y)`` (0 at ``y = 0``); none for gradient statistics."""
    if criterion == CRITERION_SQUARED_ERROR:  # first: kernels that take the criterion at run
        return y * y                          # time test it once per row and output
    if criterion == CRITERION_POISSON:
        return y * np.log(y) if y > 0.0 else 0.0
    if criterion == CRITERION_GRADIENT:
        return 0.0
    return y * y


@njit(cache=True, inline="always")
def gradient_score(g, h, reg_lambda):
    """Score ``G**2 / (H + lambda)`` of a node from its gradient and hessian sums: twice the loss
    a leaf of value ``-G / (H + lambda)`` removes, to second order (XGBoost's structure score)."""
    return g * g / (h + reg_lambda)


@njit(cache=True, inline="always")
def sums_node_impurity(w, sum_y, c, criterion, reg_lambda):
    """``w * I`` of a node from sum statistics ``[w, sum, c]``:
    :func:`weighted_regression_impurity`, or minus the gradient score (``w`` the hessian sum)."""
    if criterion == CRITERION_GRADIENT:
        return -gradient_score(sum_y, w, reg_lambda)
    return weighted_regression_impurity(w, sum_y, c, criterion)


@njit(cache=True, inline="always")
def sums_proxy(w_left, sum_left, w_right, sum_right, criterion, reg_lambda):
    """Proxy of a binary split from sum statistics, maximised: :func:`regression_proxy`, or the
    children's gradient scores added."""
    if criterion == CRITERION_GRADIENT:
        return (gradient_score(sum_left, w_left, reg_lambda)
                + gradient_score(sum_right, w_right, reg_lambda))
    return regression_proxy(w_left, sum_left, w_right, sum_right, criterion)


@njit(cache=True, inline="always")
def sums_value(w, sum_y, criterion, reg_lambda):
    """A node's value from sum statistics: the mean target, or the gradient step
    ``-G / (H + lambda)``."""
    if criterion == CRITERION_GRADIENT:
        return -sum_y / (w + reg_lambda)
    return sum_y / w


@njit(cache=True, inline="always")
def weighted_regression_impurity(w, sum_y, c, criterion):
    """``w * I`` of a node from ``[sum w, sum w*y, c]`` (see the module docstring); 0 if empty."""
    if w <= 0.0:
        return 0.0
    if criterion == CRITERION_POISSON:
        if sum_y <= POISSON_MIN_SUM:
            return 0.0
        return max(c - sum_y * np.log(sum_y / w), 0.0)
    return max(c - sum_y * sum_y / w, 0.0)


@njit(cache=True, inline="always")
def regression_proxy(w_left, sum_left, w_right, sum_right, criterion):
    """scikit-learn's proxy of a binary regression split, maximised: children impurity is
    ``c - proxy``.  Squared error ``S_l**2 / W_l + S_r**2 / W_r``; Poisson
    ``S_l log(S_l / W_l) + S_r log(S_r / W_r)``, ``-inf`` when a child's sum is not positive."""
    if criterion == CRITERION_POISSON:
        if sum_left <= POISSON_MIN_SUM or sum_right <= POISSON_MIN_SUM:
            return -np.inf
        return sum_left * np.log(sum_left / w_left) + sum_right * np.log(sum_right / w_right)
    return sum_left * sum_left / w_left + sum_right * sum_right / w_right


@njit(cache=True, inline="always")
def split_information(branch_weight, total):
    """C4.5's split information ``-sum_i (w_i / w) log2(w_i / w)`` of branch weights ``w_i``."""
    if total <= 0.0:
        return 0.0
    s = xlog2x(total)
    for i in range(branch_weight.shape[0]):
        s -= xlog2x(branch_weight[i])
    return max(s / total, 0.0)


@njit(cache=True, inline="always")
def is_criterion(criterion):
    """Whether ``criterion`` is a criterion code of :mod:`fasttree._dtypes`."""
    return (criterion == CRITERION_SQUARED_ERROR or criterion == CRITERION_ABSOLUTE_ERROR
            or criterion == CRITERION_POISSON or criterion == CRITERION_GRADIENT
            or criterion == CRITERION_GINI or criterion == CRITERION_ENTROPY)


@njit(cache=True, inline="always")
def row_impurity(row, criterion, reg_lambda):
    """Weight and impurity of one node from its statistics ``row`` (:func:`node_impurity`)."""
    # Per-unit forms (1 - sum p**2, -sum p log2 p, E[y**2] - E[y]**2), scikit-learn's node formulas.
    value = 0.0
    w = 0.0
    if criterion == CRITERION_SQUARED_ERROR:
        w = row[0]
        if w > 0.0:
            mean = row[1] / w
            value = row[2] / w - mean * mean
    elif criterion == CRITERION_ABSOLUTE_ERROR:  # [w, sum w*y, sum w*|y - median|, median]
        w = row[0]
        if w > 0.0:
            value = row[2] / w
    elif criterion == CRITERION_POISSON:
        w = row[0]
        if w > 0.0:
            value = weighted_regression_impurity(w, row[1], row[2], criterion) / w
    elif criterion == CRITERION_GRADIENT:  # not clipped: minus a score is at most 0
        w = row[0]
        if w > 0.0:
            value = sums_node_impurity(w, row[1], 0.0, criterion, reg_lambda) / w
        return w, value + 0.0
    else:  # gini or entropy
        for k in range(row.shape[0]):
            w += row[k]
        if w > 0.0:
            if criterion == CRITERION_GINI:
                value = 1.0
                for k in range(row.shape[0]):
                    p = row[k] / w
                    value -= p * p
            else:
                for k in range(row.shape[0]):
                    p = row[k] / w
                    if p > 0.0:
                        value -= p * np.log2(p)
    return w, max(value, 0.0) + 0.0  # clip rounding below 0; + 0.0 turns -0.0 into 0.0


@njit(cache=True, nogil=True)
def node_impurity(stats, criterion, reg_lambda=0.0):
    """Weight and impurity of nodes from their statistics.

    Parameters
    ----------
    stats : ndarray of shape (n_nodes, n_classes) or (n_nodes, 3), float64 (IN)
        Weighted class counts, ``[sum w, sum w*y, c]`` for regression, or ``[H, G, 0]`` for
        gradient statistics (module docstring); absolute error's rows have a fourth column.
    criterion : int
        A criterion code of :mod:`fasttree._dtypes`.
    reg_lambda : float, default=0.0
        L2 regularization of the leaf values; read by ``CRITERION_GRADIENT`` only.

    Returns
    -------
    weight : ndarray of shape (n_nodes,), float64
        The weight; for gradient statistics the hessian sum ``H``.
    impurity : ndarray of shape (n_nodes,), float64
        0 for an empty node; never ``-0.0``.  For gradient statistics minus the score per unit
        of hessian, ``-G**2 / ((H + lambda) H)``, at most 0 (so a split's gain is still the
        parent's impurity minus the children's, per unit of weight); otherwise at least 0.

    Raises
    ------
    ValueError
        For a code that is not a criterion.
    """
    n_nodes = stats.shape[0]
    weight = np.empty(n_nodes)
    impurity = np.empty(n_nodes)
    if not is_criterion(criterion):
        raise ValueError("node_impurity: criterion is not a criterion code of fasttree._dtypes")
    for i in range(n_nodes):  # a few thousand nodes at most: threads would cost more
        weight[i], impurity[i] = row_impurity(stats[i], criterion, reg_lambda)
    return weight, impurity


@njit(cache=True)
def node_values(sums, criterion, reg_lambda=0.0):
    """Value of nodes from sum statistics: the mean target, or for gradient statistics the
    leaf value ``-G / (H + lambda)`` a boosting round adds (the same formula the split search
    uses for monotonicity constraints).

    Parameters
    ----------
    sums : ndarray of shape (n_nodes, 3), float64 (IN)
        ``[sum w, sum w*y, c]`` or, for ``CRITERION_GRADIENT``, ``[H, G, 0]`` (module
        docstring), as ``segment_target_sums`` returns them.
    criterion : int
        ``CRITERION_SQUARED_ERROR``, ``CRITERION_POISSON`` or ``CRITERION_GRADIENT``.
    reg_lambda : float, default=0.0
        L2 regularization of the leaf values; read by ``CRITERION_GRADIENT`` only.

    Returns
    -------
    value : ndarray of shape (n_nodes,), float64
        0 for an empty node (for gradients: where ``H + lambda`` is 0).

    Raises
    ------
    ValueError
        For a criterion without sum statistics.
    """
    if not (criterion == CRITERION_SQUARED_ERROR or criterion == CRITERION_POISSON
            or criterion == CRITERION_GRADIENT):
        raise ValueError("node_values: criterion must be squared error, Poisson or gradient")
    value = np.zeros(sums.shape[0])
    for i in range(sums.shape[0]):
        w = sums[i, 0]
        if (w + reg_lambda if criterion == CRITERION_GRADIENT else w) > 0.0:
            value[i] = sums_value(w, sums[i, 1], criterion, reg_lambda)
    return value


__all__ = [
    "CRITERION_ENTROPY",
    "CRITERION_GINI",
    "CRITERION_GRADIENT",
    "CRITERION_POISSON",
    "CRITERION_SQUARED_ERROR",
    "POISSON_MIN_SUM",
    "gradient_score",
    "node_impurity",
    "node_values",
    "regression_proxy",
    "regression_target_term",
    "reciprocal_table",
    "split_information",
    "sums_node_impurity",
    "sums_proxy",
    "sums_value",
    "two_children_class_impurity",
    "weighted_class_impurity",
    "weighted_regression_impurity",
    "weighted_squared_error",
    "xlog2x",
    "xlog2x_table",
]
