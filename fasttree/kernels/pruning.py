"""Pruning kernels: from node statistics to a keep-mask over the nodes of a tree.

Every kernel reads the flat node arrays of a tree whose nodes are numbered parents first (as the
grower numbers them), so a forward loop is top-down and a reversed loop is bottom-up; the children
of a node are ``children_left[node] .. children_right[node]`` (two, or one per branch of a
multiway split).  Each
returns a ``collapse`` mask (uint8, one per node: 1 turns that internal node into a leaf); the
shared :func:`keep_mask` turns it into the set of nodes that remain, and
:func:`fasttree.pruning.build_pruned_tree` into a new compact tree.
"""

import math

import numpy as np
from .._jit import njit
from .routing import branch_of


@njit(cache=True)
def keep_mask(children_left, children_right, collapse):
    """Nodes that remain once the nodes marked in ``collapse`` become leaves.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
        Parents before children; ``-1`` at leaves.
    collapse : ndarray of shape (node_count,), uint8 (IN)
        1 for an internal node to turn into a leaf (its descendants are dropped).

    Returns
    -------
    keep : ndarray of shape (node_count,), uint8
        1 for the nodes of the pruned tree.  A kept node whose children are not kept is a leaf.
    """
    node_count = children_left.shape[0]
    keep = np.zeros(node_count, dtype=np.uint8)
    keep[0] = 1
    for node in range(node_count):  # top-down: parents are decided before their children
        if keep[node] and children_left[node] != -1 and not collapse[node]:
            for child in range(children_left[node], children_right[node] + 1):
                keep[child] = 1
    return keep


@njit(cache=True, no_cpython_wrapper=True)
def _subtree_totals(children_left, children_right, leaf_value):
    """Sum of ``leaf_value`` over the leaves of every subtree, and the number of those leaves."""
    node_count = children_left.shape[0]
    total = np.zeros(node_count)
    n_leaves = np.zeros(node_count, dtype=np.int64)
    for node in range(node_count - 1, -1, -1):  # bottom-up
        if children_left[node] == -1:
            total[node] = leaf_value[node]
            n_leaves[node] = 1
        else:
            for child in range(children_left[node], children_right[node] + 1):
                total[node] += total[child]
                n_leaves[node] += n_leaves[child]
    return total, n_leaves


@njit(cache=True)
def cost_complexity_sequence(children_left, children_right, weighted_n_node_samples, impurity):
    """Weakest-link pruning sequence of minimal cost-complexity pruning (Breiman et al.).

    Repeatedly collapses the internal node with the smallest effective alpha
    ``(R(t) - R(T_t)) / (|leaves(T_t)| - 1)``, where ``R(t)`` is the node's impurity weighted by
    its share of the root's weight and ``R(T_t)`` the sum of that over the subtree's leaves; one
    node per step, the lowest node id on a tie (scikit-learn's procedure).

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    weighted_n_node_samples, impurity : ndarray of shape (node_count,), float64 (IN)

    Returns
    -------
    ccp_alphas : ndarray of shape (n_steps + 1,), float64
        0, then the effective alpha of each step.
    impurities : ndarray of shape (n_steps + 1,), float64
        Total leaf impurity ``R(T)`` of the tree before any step, then after each step.
    collapsed_node : ndarray of shape (n_steps + 1,), int64
        -1, then the node collapsed at each step.
    """
    node_count = children_left.shape[0]
    r_node = weighted_n_node_samples * impurity / weighted_n_node_samples[0]
    parent = np.full(node_count, -1, dtype=np.int64)
    for node in range(node_count):
        if children_left[node] != -1:
            for child in range(children_left[node], children_right[node] + 1):
                parent[child] = node
    r_branch, n_leaves = _subtree_totals(children_left, children_right, r_node)
    candidate = np.zeros(node_count, dtype=np.uint8)
    for node in range(node_count):
        candidate[node] = children_left[node] != -1
    n_internal = int(candidate.sum())
    ccp_alphas = np.zeros(n_internal + 1)
    impurities = np.zeros(n_internal + 1)
    collapsed_node = np.full(n_internal + 1, -1, dtype=np.int64)
    impurities[0] = r_branch[0]
    step = 0
    stack = np.empty(node_count, dtype=np.int64)
    while candidate[0]:
        best = np.inf
        weakest = -1
        for node in range(node_count):
            if candidate[node]:
                alpha = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1)
                if alpha < best:
                    best = alpha
                    weakest = node
        # the weakest node's descendants leave the tree
        top = 0
        stack[top] = weakest
        top += 1
        while top > 0:
            top -= 1
            node = stack[top]
            candidate[node] = 0
            if children_left[node] != -1:
                for child in range(children_left[node], children_right[node] + 1):
                    stack[top] = child
                    top += 1
        removed_leaves = n_leaves[weakest] - 1
        r_diff = r_node[weakest] - r_branch[weakest]
        n_leaves[weakest] = 1
        r_branch[weakest] = r_node[weakest]
        node = parent[weakest]
        while node != -1:
            n_leaves[node] -= removed_leaves
            r_branch[node] += r_diff
            node = parent[node]
        step += 1
        ccp_alphas[step] = best
        impurities[step] = r_branch[0]
        collapsed_node[step] = weakest
    return ccp_alphas[:step + 1], impurities[:step + 1], collapsed_node[:step + 1]


@njit(cache=True)
def subtree_replacement_collapse(children_left, children_right, leaf_cost):
    """Bottom-up subtree replacement: collapse a node whose cost as a leaf is no more than the
    summed cost of its already pruned subtree (ties prune).

    The rule of reduced-error pruning (cost: validation errors the node would make as a leaf) and
    of C4.5's error-based pruning (cost: ``N * U_CF(E, N)``, see :func:`error_based_leaf_cost`).

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    leaf_cost : ndarray of shape (node_count,), float64 (IN)
        Cost of each node if it were a leaf.

    Returns
    -------
    collapse : ndarray of shape (node_count,), uint8
    """
    node_count = children_left.shape[0]
    collapse = np.zeros(node_count, dtype=np.uint8)
    subtree_cost = leaf_cost.copy()
    for node in range(node_count - 1, -1, -1):
        if children_left[node] == -1:
            continue
        below = 0.0
        for child in range(children_left[node], children_right[node] + 1):
            below += subtree_cost[child]
        if leaf_cost[node] <= below:
            collapse[node] = 1
        else:
            subtree_cost[node] = below
    return collapse


@njit(cache=True)
def training_error_collapse(children_left, children_right, n_errors, tolerance):
    """J48's collapse: a subtree whose leaves make no fewer training errors than its root would
    alone becomes a leaf (top-down, so the highest such node is the one collapsed).

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    n_errors : ndarray of shape (node_count,), float64 (IN)
        (Weighted) training rows outside each node's majority class.
    tolerance : float
        A node collapses when its leaves' errors are at least ``n_errors[node] - tolerance``
        (J48: ``1e-3``).

    Returns
    -------
    collapse : ndarray of shape (node_count,), uint8
    """
    node_count = children_left.shape[0]
    below, _ = _subtree_totals(children_left, children_right, n_errors)
    collapse = np.zeros(node_count, dtype=np.uint8)
    for node in range(node_count):  # top-down; keep_mask drops what lies below a collapse
        if children_left[node] != -1 and below[node] >= n_errors[node] - tolerance:
            collapse[node] = 1
    return collapse


@njit(cache=True)
def split_branches(x, kind, threshold, missing_branch, category_offset, n_codes,
                   category_branch, fractional):
    """Branch (child rank) that each value takes at one split node.

    Parameters
    ----------
    x : ndarray of shape (n_rows,), float32 (IN)
        The rows' values of the node's split feature (NaN: missing).
    kind, threshold, missing_branch, category_offset, n_codes : the node's split fields
    category_branch : ndarray of shape (n_map,), int32 (IN)
        The tree's category maps.
    fractional : bool
        C4.5's fractional rows: a missing value gets ``-1`` (it goes down every branch), not
        ``missing_branch``.

    Returns
    -------
    branch : ndarray of shape (n_rows,), int64
    """
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        if fractional and x[i] != x[i]:
            out[i] = -1
        else:
            out[i] = branch_of(x[i], kind, threshold, missing_branch, category_offset, n_codes,
                               category_branch)
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _log_beta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


@njit(cache=True, inline="always")
def _lentz_step(aa, c, d):
    """One modified-Lentz update of the continued fraction; returns (delta, c, d)."""
    tiny = 1e-300
    d = 1.0 + aa * d
    if abs(d) < tiny:
        d = tiny
    c = 1.0 + aa / c
    if abs(c) < tiny:
        c = tiny
    d = 1.0 / d
    return d * c, c, d


@njit(cache=True, no_cpython_wrapper=True)
def _beta_continued_fraction(a, b, x):
    # continued fraction of the incomplete beta function (Numerical Recipes' betacf), evaluated
    # with the modified Lentz algorithm: two half-steps (even and odd terms) per iteration
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < 1e-300:
        d = 1e-300
    d = 1.0 / d
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        delta, c, d = _lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), c, d)
        h *= delta
        delta, c, d = _lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), c, d)
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


@njit(cache=True, no_cpython_wrapper=True)
def _regularized_incomplete_beta(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


@njit(cache=True)
def binomial_upper_limit(n_errors, n, confidence):
    """C4.5's ``U_CF(E, N)``: the error rate ``p`` at which seeing at most ``E`` errors in ``N``
    trials has probability ``CF``, i.e. the upper limit of a one-sided ``1 - CF`` interval.

    Solves ``P(X <= E | N, p) = CF`` by bisection, with the binomial distribution function written
    as a regularized incomplete beta function, ``P(X <= E) = I_{1-p}(N - E, E + 1)``, which also
    covers the fractional counts of weighted rows.  ``E = 0`` gives ``1 - CF ** (1 / N)``.

    Parameters
    ----------
    n_errors : float
        Errors ``E`` (0 <= E <= N).
    n : float
        Rows ``N`` (> 0).
    confidence : float
        ``CF`` in (0, 1).

    Returns
    -------
    float
        The upper limit, in [0, 1].
    """
    if n_errors >= n:
        return 1.0
    if n_errors <= 0.0:
        return 1.0 - confidence ** (1.0 / n)
    lo = 0.0
    hi = 1.0
    for _ in range(200):  # P(X <= E) decreases in p
        mid = 0.5 * (lo + hi)
        if _regularized_incomplete_beta(n - n_errors, n_errors + 1.0, 1.0 - mid) > confidence:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return 0.5 * (lo + hi)


@njit(cache=True)
def error_based_leaf_cost(n_rows, n_errors, confidence):
    """C4.5's predicted errors of each node as a leaf: ``N * U_CF(E, N)``.

    With :func:`subtree_replacement_collapse` this is C4.5's error-based pruning by subtree
    replacement (subtree raising is not performed).

    Parameters
    ----------
    n_rows : ndarray of shape (node_count,), float64 (IN)
        ``N``: (weighted) training rows at each node.
    n_errors : ndarray of shape (node_count,), float64 (IN)
        ``E``: (weighted) training rows not in the node's majority class.
    confidence : float
        ``CF`` (C4.5's default 0.25); smaller charges more and so prunes more.

    Returns
    -------
    cost : ndarray of shape (node_count,), float64
    """
    cost = np.empty(n_rows.shape[0])
    for node in range(n_rows.shape[0]):
        cost[node] = n_rows[node] * binomial_upper_limit(n_errors[node], n_rows[node], confidence)
    return cost


@njit(cache=True)
def minimum_error_collapse(children_left, children_right, n_rows, n_majority, n_classes):
    """Niblett-Bratko minimum-error pruning with the Laplace estimate.

    Static error ``E(S) = (N - n + K - 1) / (N + K)``; backed-up error
    ``B(S) = sum_i N_i / N * Error(S_i)``; ``Error(S) = min(E(S), B(S))``; bottom-up, a node is
    collapsed when ``B(S) >= E(S)``.  Leaves have ``Error = E``.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    n_rows : ndarray of shape (node_count,), float64 (IN)
        ``N``: (weighted) training rows at each node.
    n_majority : ndarray of shape (node_count,), float64 (IN)
        ``n``: (weighted) rows of the node's majority class.
    n_classes : int
        ``K``.

    Returns
    -------
    collapse : ndarray of shape (node_count,), uint8
    """
    node_count = children_left.shape[0]
    collapse = np.zeros(node_count, dtype=np.uint8)
    error = np.empty(node_count)
    for node in range(node_count - 1, -1, -1):
        static = (n_rows[node] - n_majority[node] + n_classes - 1) / (n_rows[node] + n_classes)
        if children_left[node] == -1:
            error[node] = static
            continue
        backed_up = 0.0
        for child in range(children_left[node], children_right[node] + 1):
            backed_up += n_rows[child] * error[child]
        backed_up /= n_rows[node]
        if backed_up >= static:
            collapse[node] = 1
            error[node] = static
        else:
            error[node] = backed_up
    return collapse


@njit(cache=True)
def pessimistic_collapse(children_left, children_right, n_rows, n_errors):
    """Quinlan's pessimistic error pruning (1987): 1/2 continuity correction, one standard error.

    A leaf is charged its training errors + 1/2, a subtree the sum of its leaves' charges
    ``e'(T_t)``.  A node is collapsed when ``e(t) + 1/2 <= e'(T_t) + SE`` with
    ``SE = sqrt(e'(T_t) * (N(t) - e'(T_t)) / N(t))``.  Nodes are judged bottom-up against their
    already pruned subtrees, like the other rules here, which makes the result idempotent;
    Quinlan's description visits nodes top-down and judges each against its unpruned subtree, so
    a node it keeps may still have children that this order collapses first.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    n_rows, n_errors : ndarray of shape (node_count,), float64 (IN)
        (Weighted) training rows and errors (rows outside the majority class) at each node.

    Returns
    -------
    collapse : ndarray of shape (node_count,), uint8
    """
    node_count = children_left.shape[0]
    collapse = np.zeros(node_count, dtype=np.uint8)
    charge = n_errors + 0.5
    for node in range(node_count - 1, -1, -1):
        if children_left[node] == -1:
            continue
        below = 0.0
        for child in range(children_left[node], children_right[node] + 1):
            below += charge[child]
        se = math.sqrt(max(below * (n_rows[node] - below), 0.0) / n_rows[node])
        if n_errors[node] + 0.5 <= below + se:
            collapse[node] = 1  # charge[node] keeps its leaf charge
        else:
            charge[node] = below
    return collapse


@njit(cache=True)
def node_validation_errors(leaf_path, n_path, y_true, sample_weight, node_prediction,
                           regression):
    """Validation error each node would make as a leaf, from the rows' decision paths.

    Parameters
    ----------
    leaf_path : ndarray of shape (n_rows, max_depth + 1), int32 (IN)
        Nodes visited by each validation row (from :func:`decision_paths`).
    n_path : ndarray of shape (n_rows,), int32 (IN)
        Length of each path.
    y_true : ndarray of shape (n_rows,), float64 (IN)
        Encoded class (classification) or target (regression) of each row.
    sample_weight : ndarray of shape (n_rows,), float64 (IN)
    node_prediction : ndarray of shape (node_count,), float64 (IN)
        Each node's prediction as a leaf: its training majority class, or its training mean.
    regression : bool
        Squared error if True, else misclassification (0/1) error.

    Returns
    -------
    leaf_error : ndarray of shape (node_count,), float64
    """
    node_count = node_prediction.shape[0]
    leaf_error = np.zeros(node_count)
    for i in range(leaf_path.shape[0]):
        for d in range(n_path[i]):
            node = leaf_path[i, d]
            if regression:
                diff = y_true[i] - node_prediction[node]
                leaf_error[node] += sample_weight[i] * diff * diff
            elif node_prediction[node] != y_true[i]:
                leaf_error[node] += sample_weight[i]
    return leaf_error


#: loss codes of :func:`node_loss_sums` and :func:`row_losses`
LOSS_MISCLASSIFICATION = 0
LOSS_SQUARED = 1
LOSS_ABSOLUTE = 2
LOSS_POISSON = 3


@njit(cache=True, inline="always")
def _row_loss(y_true, i, prediction, loss):
    """Loss of row ``i`` under ``prediction`` (one value per output), averaged over outputs:
    0/1 misclassification of the class code, squared error, absolute error, or half the Poisson
    deviance ``y log(y / mu) - y + mu``."""
    n_outputs = y_true.shape[1]
    total = 0.0
    for k in range(n_outputs):
        y = y_true[i, k]
        mu = prediction[k]
        if loss == LOSS_MISCLASSIFICATION:
            if y != mu:
                total += 1.0
        elif loss == LOSS_SQUARED:
            total += (y - mu) * (y - mu)
        elif loss == LOSS_ABSOLUTE:
            total += abs(y - mu)
        elif y > 0.0:
            total += (y * math.log(y / mu) - y + mu) if mu > 0.0 else np.inf
        else:
            total += mu
    return total / n_outputs


@njit(cache=True)
def row_losses(y_true, prediction, loss):
    """Each row's loss (see :func:`node_loss_sums`) under its own prediction.

    Parameters
    ----------
    y_true, prediction : ndarray of shape (n_rows, n_outputs), float64 (IN)
    loss : int
        One of the ``LOSS_*`` codes.

    Returns
    -------
    ndarray of shape (n_rows,), float64
    """
    out = np.empty(y_true.shape[0])
    for i in range(y_true.shape[0]):
        out[i] = _row_loss(y_true, i, prediction[i], loss)
    return out


@njit(cache=True)
def node_loss_sums(leaf_path, n_path, y_true, sample_weight, node_prediction, loss):
    """Held-out loss each node would make as a leaf, with the sums its standard error needs.

    Parameters
    ----------
    leaf_path : ndarray of shape (n_rows, max_depth + 1), int32 (IN)
        Nodes visited by each held-out row (from :func:`decision_paths`).
    n_path : ndarray of shape (n_rows,), int32 (IN)
    y_true : ndarray of shape (n_rows, n_outputs), float64 (IN)
        Encoded classes (classification) or targets.
    sample_weight : ndarray of shape (n_rows,), float64 (IN)
    node_prediction : ndarray of shape (node_count, n_outputs), float64 (IN)
        Each node's prediction as a leaf: its class code per output, or its value.
    loss : int
        ``LOSS_MISCLASSIFICATION``, ``LOSS_SQUARED``, ``LOSS_ABSOLUTE`` or ``LOSS_POISSON``; a
        row's loss is the mean over outputs.

    Returns
    -------
    sums : ndarray of shape (node_count, 3), float64
        Over the rows reaching each node: ``sum w l``, ``sum w^2 l`` and ``sum w^2 l^2``.
    """
    sums = np.zeros((node_prediction.shape[0], 3))
    for i in range(leaf_path.shape[0]):
        w = sample_weight[i]
        for d in range(n_path[i]):
            node = leaf_path[i, d]
            value = _row_loss(y_true, i, node_prediction[node], loss)
            sums[node, 0] += w * value
            sums[node, 1] += w * w * value
            sums[node, 2] += w * w * value * value
    return sums


@njit(cache=True)
def loss_along_sequence(children_left, children_right, collapsed_node, node_sums):
    """Totals of per-node sums over the leaves of every subtree of a weakest-link sequence.

    After ``s`` steps of :func:`cost_complexity_sequence` (nodes ``collapsed_node[1..s]``
    collapsed), node ``t`` is a leaf exactly for ``c_t <= s < r_t``, where ``c_t`` is the step
    that collapses ``t`` (0 for a leaf of the full tree, never for a node an ancestor removes
    first) and ``r_t`` the first step collapsing a strict ancestor.  Each node adds its sums over
    that range of steps: one pass over the nodes and a running total over the steps, instead of
    pruning the tree once per step.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp (IN)
    collapsed_node : ndarray of shape (n_steps + 1,), int64 (IN)
        As :func:`cost_complexity_sequence` returns it (-1 first).
    node_sums : ndarray of shape (node_count, n_sums), float64 (IN)

    Returns
    -------
    totals : ndarray of shape (n_steps + 1, n_sums), float64
        ``totals[s]``: the sums over the leaves of the tree after ``s`` steps.
    """
    node_count = children_left.shape[0]
    n_steps = collapsed_node.shape[0] - 1
    never = n_steps + 1
    first = np.full(node_count, never, dtype=np.int64)  # c_t
    for step in range(1, n_steps + 1):
        first[collapsed_node[step]] = step
    last = np.full(node_count, never, dtype=np.int64)  # r_t
    for node in range(node_count):  # top-down
        if children_left[node] == -1:
            first[node] = 0
        else:
            bound = min(last[node], first[node])
            for child in range(children_left[node], children_right[node] + 1):
                last[child] = bound
    diff = np.zeros((n_steps + 2, node_sums.shape[1]))
    for node in range(node_count):
        if first[node] < last[node]:
            for j in range(node_sums.shape[1]):
                diff[first[node], j] += node_sums[node, j]
                diff[last[node], j] -= node_sums[node, j]
    totals = np.empty((n_steps + 1, node_sums.shape[1]))
    running = np.zeros(node_sums.shape[1])
    for step in range(n_steps + 1):
        for j in range(node_sums.shape[1]):
            running[j] += diff[step, j]
            totals[step, j] = running[j]
    return totals
