"""Post-pruning: five rules, one tree structure, one builder.

Each pruner takes a fitted fasttree estimator and returns a new fitted estimator of the same class
whose tree is a subtree of the original; the input is never modified.  Every rule computes a
collapse mask with a kernel from :mod:`fasttree.kernels.pruning`, and :func:`build_pruned_tree`
turns the mask into a new compact tree.
"""

import copy
from dataclasses import dataclass

import numpy as np

from ._base import numba_threads
from ._validation import check_sample_weight, check_y, is_sparse
from .kernels import decision_paths, decision_paths_csr
from .kernels.pruning import (
    cost_complexity_sequence,
    error_based_leaf_cost,
    keep_mask,
    minimum_error_collapse,
    node_validation_errors,
    pessimistic_collapse,
    subtree_replacement_collapse,
)
from .tree import TREE_UNDEFINED, Tree

__all__ = [
    "PruningPath",
    "build_pruned_tree",
    "cost_complexity",
    "cost_complexity_path",
    "error_based",
    "minimum_error",
    "pessimistic",
    "reduced_error",
]


@dataclass
class PruningPath:
    """The minimal cost-complexity pruning path (scikit-learn's ``ccp_path`` Bunch).

    Attributes
    ----------
    ccp_alphas : ndarray of shape (n_steps + 1,)
        Effective alphas of the subtrees along the path, starting at 0.
    impurities : ndarray of shape (n_steps + 1,)
        Total weighted leaf impurity of the subtree for the matching alpha.
    """

    ccp_alphas: np.ndarray
    impurities: np.ndarray

    def __getitem__(self, key):  # dictionary access, as on scikit-learn's Bunch
        return getattr(self, key)


def build_pruned_tree(tree, collapse):
    """A new, compact tree in which the internal nodes marked in ``collapse`` are leaves.

    Parameters
    ----------
    tree : fasttree.tree.Tree
        Nodes numbered parents first (as every fasttree tree is).
    collapse : ndarray of shape (node_count,), uint8 or bool
        1 for the internal nodes to turn into leaves.

    Returns
    -------
    fasttree.tree.Tree
        Kept nodes in their original order (so still parents first); node statistics, values and
        the splits of the remaining internal nodes are copied unchanged.
    """
    collapse = np.ascontiguousarray(collapse, dtype=np.uint8)
    if collapse.shape != (tree.node_count,):
        raise ValueError(f"collapse must have one entry per node ({tree.node_count}); got shape "
                         f"{collapse.shape}")
    keep = keep_mask(tree.children_left, tree.children_right, collapse).astype(bool)
    kept = np.flatnonzero(keep)
    new_id = np.full(tree.node_count, -1, dtype=np.int64)
    new_id[kept] = np.arange(kept.size)
    left, right = tree.children_left[kept], tree.children_right[kept]
    is_leaf = (left == -1) | (collapse[kept] == 1)
    # a kept node keeps all its children, which stay consecutive (nothing between them is dropped)
    return Tree(
        children_left=np.where(is_leaf, -1, new_id[left]),
        children_right=np.where(is_leaf, -1, new_id[right]),
        feature=np.where(is_leaf, TREE_UNDEFINED, tree.feature[kept]),
        threshold=np.where(is_leaf, float(TREE_UNDEFINED), tree.threshold[kept]),
        split_kind=np.where(is_leaf, 0, tree.split_kind[kept]),
        missing_branch=np.where(is_leaf, 0, tree.missing_branch[kept]),
        category_offset=np.where(is_leaf, -1, tree.category_offset[kept]),
        category_n_codes=np.where(is_leaf, 0, tree.category_n_codes[kept]),
        category_branch=tree.category_branch,
        fractional_missing=tree.fractional_missing,
        value=tree.value[kept],
        impurity=tree.impurity[kept],
        n_node_samples=tree.n_node_samples[kept],
        weighted_n_node_samples=tree.weighted_n_node_samples[kept],
        depth=tree.depth[kept],
        n_features=tree.n_features,
        n_classes=tree.n_classes,
    )


def _with_tree(estimator, tree, **params):
    """A shallow copy of a fitted estimator carrying a new tree (the input is left as it was).

    ``params`` are the parameters under which ``fit`` grows this pruned tree; they are set on the
    copy where its class has them, so that ``clone()`` and refits prune the same way.
    """
    estimator._check_is_fitted()
    pruned = copy.copy(estimator)
    pruned.__dict__ = dict(estimator.__dict__)
    pruned.tree_ = tree
    names = pruned.get_params()
    for name, value in params.items():
        if name in names:
            setattr(pruned, name, value)
    return pruned


def _classification_counts(estimator, rule):
    estimator._check_is_fitted()
    if estimator._estimator_type != "classifier":
        raise TypeError(f"{rule} pruning counts classification errors; it needs a classifier, "
                        f"got {type(estimator).__name__}.")
    tree = estimator.tree_
    n_rows = tree.weighted_n_node_samples
    n_majority = n_rows * tree.value[:, 0, :].max(axis=1)
    return n_rows, n_majority


def cost_complexity_path(estimator):
    """The minimal cost-complexity pruning path of a fitted tree.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier or DecisionTreeRegressor, or Tree
        Like every other function of this module, an estimator; its ``tree_`` is accepted too.

    Returns
    -------
    PruningPath
        The effective alphas of the weakest-link sequence and the total leaf impurity after
        each step (scikit-learn's ``cost_complexity_pruning_path`` of this very tree).
    """
    if isinstance(estimator, Tree):
        tree = estimator
    elif hasattr(estimator, "_check_is_fitted"):
        estimator._check_is_fitted()
        tree = estimator.tree_
    else:
        raise TypeError("cost_complexity_path takes a fitted fasttree estimator (or its tree_); "
                        f"got {type(estimator).__name__}.")
    alphas, impurities, _ = cost_complexity_sequence(
        tree.children_left, tree.children_right, tree.weighted_n_node_samples, tree.impurity)
    return PruningPath(ccp_alphas=alphas, impurities=impurities)


def cost_complexity_tree(tree, alpha):
    """The subtree that minimal cost-complexity pruning keeps for ``alpha`` (scikit-learn's rule:
    collapse the weakest links while their effective alpha is at most ``alpha``)."""
    if not (isinstance(alpha, (int, float, np.floating, np.integer)) and alpha >= 0):
        raise ValueError(f"alpha must be a non-negative number; got {alpha!r}.")
    alphas, _, nodes = cost_complexity_sequence(
        tree.children_left, tree.children_right, tree.weighted_n_node_samples, tree.impurity)
    collapse = np.zeros(tree.node_count, dtype=np.uint8)
    for step in range(1, alphas.shape[0]):
        if alphas[step] > alpha:
            break
        collapse[nodes[step]] = 1
    return build_pruned_tree(tree, collapse)


def cost_complexity(estimator, alpha):
    """Minimal cost-complexity pruning with complexity parameter ``alpha``.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier or DecisionTreeRegressor
    alpha : float
        Non-negative; the larger, the smaller the tree.

    Returns
    -------
    A new fitted estimator of the same class, whose ``ccp_alpha`` is ``alpha`` (or the
    estimator's own, if larger: the pruned trees are nested), so that ``clone()`` refits it.
    """
    estimator._check_is_fitted()
    return _with_tree(estimator, cost_complexity_tree(estimator.tree_, alpha),
                      ccp_alpha=max(estimator.ccp_alpha, alpha))


def reduced_error(estimator, X_val, y_val, sample_weight=None):
    """Reduced-error pruning on a validation set.

    Bottom-up, a node becomes a leaf when its own prediction (learned from the training rows)
    makes no more validation errors than its already pruned subtree; ties prune.  Errors are
    misclassifications for a classifier and squared errors for a regressor, weighted by
    ``sample_weight``.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier or DecisionTreeRegressor
    X_val : array-like of shape (n_val, n_features)
    y_val : array-like of shape (n_val,)
    sample_weight : array-like of shape (n_val,), optional

    Returns
    -------
    A new fitted estimator of the same class, with ``pruning="reduced_error"``: ``clone()``
    refits it with reduced-error pruning on a held-out ``validation_fraction`` of its training
    rows (``X_val`` is data, not a parameter).
    """
    X = estimator._validate_X_predict(X_val)
    return _with_tree(estimator, reduced_error_tree(estimator, X, y_val, sample_weight),
                      pruning="reduced_error")


def reduced_error_tree(estimator, X, y_val, sample_weight=None):
    """The tree :func:`reduced_error` keeps, from an already validated and encoded ``X``
    (the kernels' float32 matrix, as the estimator's ``fit`` holds it)."""
    tree = estimator.tree_
    if getattr(estimator, "n_outputs_", 1) > 1:
        raise ValueError("reduced-error pruning takes a tree of one output.")
    regression = estimator._estimator_type == "regressor"
    y = check_y(y_val, X.shape[0], regression=regression)
    w = check_sample_weight(sample_weight, X.shape[0])
    if regression:
        y_code = y
        prediction = tree.value[:, 0, 0]
    else:
        y_code = _class_codes(estimator.classes_, y)
        prediction = np.argmax(tree.value[:, 0, :], axis=1).astype(np.float64)
    with numba_threads(estimator.n_jobs):
        path, length = _decision_paths(tree, X)
    leaf_error = node_validation_errors(path, length, np.asarray(y_code, np.float64), w,
                                        prediction, regression)
    collapse = subtree_replacement_collapse(tree.children_left, tree.children_right, leaf_error)
    return build_pruned_tree(tree, collapse)


def _decision_paths(tree, X):
    """Nodes each row of a validated ``X`` visits, root first (``path``, ``length``, as
    :func:`fasttree.kernels.decision_paths` returns them); ``X`` dense or scipy.sparse."""
    if is_sparse(X):
        X = tree._check_input(X.tocsr())
        return decision_paths_csr(X.data, X.indices, X.indptr, *tree._routing(), tree.max_depth)
    return decision_paths(X, *tree._routing(), tree.max_depth)


def _class_codes(classes, y):
    """Validation labels as class indices; labels of another type than ``classes`` or never seen
    in training are refused (every row would be an error at every node, which prunes to the
    root without saying why)."""
    y = np.asarray(y)
    numeric = np.issubdtype(classes.dtype, np.number) or classes.dtype == bool
    if numeric != (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
        raise ValueError(f"y_val holds {y.dtype} labels but the estimator's classes_ are "
                         f"{classes.dtype} ({classes[:5].tolist()}...); pass labels of the same "
                         "type as in fit.")
    position = np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)
    seen = classes[position] == y
    if not seen.all():
        raise ValueError(f"y_val has labels never seen in fit: {np.unique(y[~seen])[:10].tolist()}"
                         f"; classes_ are {classes[:10].tolist()}.")
    return position.astype(np.float64)


def error_based(estimator, confidence=0.25):
    """C4.5's error-based pruning (subtree replacement; subtree raising is not performed).

    Each leaf with ``E`` training errors among ``N`` rows is charged ``N * U_CF(E, N)``, the upper
    limit of the binomial error rate at confidence ``CF``; a subtree is replaced by a leaf when the
    leaf's charge is no more than the subtree's total.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier
    confidence : float, default=0.25
        ``CF`` in (0, 1); smaller values prune more.

    Returns
    -------
    A new fitted DecisionTreeClassifier whose ``pruning`` parameter names this rule, so that
    ``clone()`` and refits prune the same way (when the input was grown unpruned).
    """
    if not (isinstance(confidence, (int, float, np.floating)) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be a float in (0, 1); got {confidence!r}.")
    n_rows, n_majority = _classification_counts(estimator, "error-based")
    tree = estimator.tree_
    leaf_cost = error_based_leaf_cost(n_rows, n_rows - n_majority, float(confidence))
    collapse = subtree_replacement_collapse(tree.children_left, tree.children_right, leaf_cost)
    return _with_tree(estimator, build_pruned_tree(tree, collapse), pruning="error_based",
                      pruning_confidence=confidence)


def minimum_error(estimator):
    """Niblett-Bratko minimum-error pruning with the Laplace error estimate.

    ``E(S) = (N - n + K - 1) / (N + K)`` at a node of ``N`` rows, ``n`` of its majority class, for
    ``K`` classes; a node becomes a leaf when the backed-up error of its children is at least
    ``E(S)``.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier

    Returns
    -------
    A new fitted DecisionTreeClassifier whose ``pruning`` parameter names this rule, so that
    ``clone()`` and refits prune the same way (when the input was grown unpruned).
    """
    n_rows, n_majority = _classification_counts(estimator, "minimum-error")
    tree = estimator.tree_
    collapse = minimum_error_collapse(tree.children_left, tree.children_right, n_rows,
                                      n_majority, estimator.n_classes_)
    return _with_tree(estimator, build_pruned_tree(tree, collapse), pruning="minimum_error")


def pessimistic(estimator):
    """Quinlan's pessimistic error pruning (1/2 continuity correction per leaf, one SE).

    A node becomes a leaf when its training errors + 1/2 are at most its subtree's charge (errors
    + 1/2 per leaf) plus one standard error of that charge; judged bottom-up against the already
    pruned subtrees (see :func:`fasttree.kernels.pruning.pessimistic_collapse`).

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier

    Returns
    -------
    A new fitted DecisionTreeClassifier whose ``pruning`` parameter names this rule, so that
    ``clone()`` and refits prune the same way (when the input was grown unpruned).
    """
    n_rows, n_majority = _classification_counts(estimator, "pessimistic")
    tree = estimator.tree_
    collapse = pessimistic_collapse(tree.children_left, tree.children_right, n_rows,
                                    n_rows - n_majority)
    return _with_tree(estimator, build_pruned_tree(tree, collapse), pruning="pessimistic")
