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
from .kernels.criteria import node_impurity
from .kernels.pruning import (
    LOSS_ABSOLUTE,
    LOSS_MISCLASSIFICATION,
    LOSS_POISSON,
    LOSS_SQUARED,
    binomial_upper_limit,
    cost_complexity_sequence,
    error_based_leaf_cost,
    keep_mask,
    loss_along_sequence,
    minimum_error_collapse,
    node_loss_sums,
    node_validation_errors,
    pessimistic_collapse,
    row_losses,
    split_branches,
    subtree_replacement_collapse,
    training_error_collapse,
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


def _check_node_statistics(tree):
    """ValueError unless ``tree`` carries the node statistics the pruners read (training weights,
    impurities, internal nodes' values): a tree of a forest loaded from a model file has NaN in
    their place, and pruning by them would hang or keep every node."""
    if not tree.has_node_statistics:
        raise ValueError("this tree has no node statistics to prune by (training weights, "
                         "impurities, internal nodes' values): it belongs to a forest loaded "
                         "from a model file, which keeps only what prediction needs. Prune a "
                         "tree fitted in this process, or fit the forest with ccp_alpha.")


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
    _check_node_statistics(tree)
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
    _check_node_statistics(tree)
    alphas, impurities, _ = cost_complexity_sequence(
        tree.children_left, tree.children_right, tree.weighted_n_node_samples, tree.impurity)
    return PruningPath(ccp_alphas=alphas, impurities=impurities)


def cost_complexity_tree(tree, alpha):
    """The subtree that minimal cost-complexity pruning keeps for ``alpha`` (scikit-learn's rule:
    collapse the weakest links while their effective alpha is at most ``alpha``)."""
    if not (isinstance(alpha, (int, float, np.floating, np.integer)) and alpha >= 0):
        raise ValueError(f"alpha must be a non-negative number; got {alpha!r}.")
    _check_node_statistics(tree)
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
    alpha = max(getattr(estimator, "ccp_alpha_", estimator.ccp_alpha), alpha)
    pruned = _with_tree(estimator, cost_complexity_tree(estimator.tree_, alpha), ccp_alpha=alpha)
    pruned.ccp_alpha_ = alpha
    return pruned


#: the loss that chooses ``ccp_alpha`` by cross-validation, by regression criterion (a
#: classifier's is CART's, the misclassification rate)
_CV_LOSSES = {"squared_error": LOSS_SQUARED, "absolute_error": LOSS_ABSOLUTE,
              "poisson": LOSS_POISSON}


@dataclass
class AlphaSearch:
    """What :func:`cross_validated_alpha` measured.

    Attributes
    ----------
    alpha : float
        The chosen alpha: ``candidates[chosen]``, or the last path alpha when the chosen tree is
        the root alone (its candidate is infinite).
    chosen : int
        Index of the chosen subtree of the full tree's pruning sequence.
    candidates : ndarray of shape (n_subtrees,)
        Breiman's representative alpha of each subtree: the geometric mean of the two path
        alphas bounding it (0 for the full tree, infinity for the root).
    errors, standard_errors : ndarray of shape (n_subtrees,)
        Cross-validated weighted mean loss of each candidate, and its standard error.
    """

    alpha: float
    chosen: int
    candidates: np.ndarray
    errors: np.ndarray
    standard_errors: np.ndarray


def cv_folds(n_samples, y_codes, n_folds, rng):
    """The fold of every row for k-fold cross-validation, stratified when classes are given.

    The rows are shuffled, ordered by class (stably, so shuffled within each class) and dealt
    out to the folds in turn: every fold holds ``n // k`` or ``n // k + 1`` rows, and each class
    is spread over the folds as evenly as it can be.

    Parameters
    ----------
    n_samples : int
    y_codes : ndarray of shape (n_samples,) or None
        Class codes to stratify on; None for plain k-fold.
    n_folds : int
        ``k``, at most ``n_samples``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_samples,), intp
        The fold, in ``0 .. k - 1``, of each row.
    """
    order = rng.permutation(n_samples)
    if y_codes is not None:
        order = order[np.argsort(np.asarray(y_codes)[order], kind="stable")]
    fold = np.empty(n_samples, dtype=np.intp)
    fold[order] = np.arange(n_samples) % n_folds
    return fold


def _subtree_alphas(tree):
    """The bounds ``0 = b_0 < b_1 < ... < b_K`` of the alphas at which pruning ``tree`` gives
    each of its distinct subtrees (:func:`cost_complexity_tree`'s rule), and Breiman's
    representative ``sqrt(b_k b_{k+1})`` of each (infinity for the last, the root alone)."""
    alphas, _, _ = cost_complexity_sequence(tree.children_left, tree.children_right,
                                            tree.weighted_n_node_samples, tree.impurity)
    bounds = np.unique(np.maximum.accumulate(alphas))
    return bounds, np.append(np.sqrt(bounds[:-1] * bounds[1:]), np.inf)


def _node_predictions(tree, classification):
    """Every node's prediction as a leaf, one column per output: class code or value."""
    if classification:
        return np.argmax(tree.value, axis=2).astype(np.float64)
    return np.ascontiguousarray(tree.value[:, :, 0])


def _loss_sums(losses, weight):
    return np.array([weight @ losses, (weight * weight) @ losses,
                     (weight * weight) @ (losses * losses)])


def _held_out_losses(tree, collapsed, X, y, weight, loss, classification, steps, n_jobs):
    """Sums of the held-out losses (``w l``, ``w^2 l``, ``w^2 l^2``) of the subtree after each
    of ``steps`` steps of ``tree``'s weakest-link sequence (``collapsed``, the nodes it collapses
    in turn), as an array over those steps."""
    if not tree.fractional_missing:  # a row's prediction is one node's: sums per node suffice
        with numba_threads(n_jobs):
            path, length = _decision_paths(tree, X)
        sums = node_loss_sums(path, length, y, weight, _node_predictions(tree, classification),
                              loss)
        return loss_along_sequence(tree.children_left, tree.children_right, collapsed,
                                   sums)[steps]
    # C4.5's fractional rows mix several leaves: prune and predict once per distinct subtree
    out = np.zeros((steps.shape[0], 3))
    for step in np.unique(steps):
        collapse = np.zeros(tree.node_count, dtype=np.uint8)
        collapse[collapsed[1:step + 1]] = 1
        value = build_pruned_tree(tree, collapse).predict_value(X)
        prediction = (np.argmax(value, axis=1)[:, None].astype(np.float64) if classification
                      else np.ascontiguousarray(value[:, :1]))
        out[steps == step] = _loss_sums(row_losses(y, prediction, loss), weight)
    return out


def cross_validated_alpha(estimator, X, y, sample_weight, class_weights, offsets, *, n_classes,
                          n_folds, rng):
    """CART's choice of ``ccp_alpha``: k-fold cross-validation with the one-standard-error rule.

    The candidates are the subtrees of the full tree's weakest-link sequence, each represented
    by Breiman's ``alpha'_k = sqrt(alpha_k alpha_{k+1})`` (Breiman et al. 1984, section 3.4.2).
    On every fold an unpruned tree is grown on the other folds (``estimator``'s ``_fit`` with the
    same parameters, ``pruning=None``), and its held-out loss is measured at every candidate:
    from each node's loss as a leaf and the range of steps over which it is a leaf
    (:func:`fasttree.kernels.pruning.loss_along_sequence`), in
    O(nodes + held-out rows x depth) per fold.  The loss is the weighted misclassification rate
    for a classifier, the squared error, absolute error or half Poisson deviance for a regressor
    (its criterion); the mean over outputs for several.  Its standard error is
    ``sqrt(sum w^2 (l - R)^2) / sum w`` over all rows (Breiman's
    ``sqrt(R (1 - R) / N)`` for unit weights and 0/1 loss).  The chosen subtree is the smallest
    whose cross-validated loss is at most the minimum plus its standard error.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier or DecisionTreeRegressor
        Holding the full tree grown on all rows (``tree_``) and the encoding of ``X``.
    X : the kernels' matrix
        ``X`` as ``estimator._fit`` received it.
    y, sample_weight, class_weights, offsets
        As ``estimator._fit`` received them (``sample_weight`` may be None).
    n_classes : int or None
        None for a regressor.
    n_folds : int
        ``k``; fewer when there are fewer rows of positive weight.
    rng : numpy.random.Generator
        Draws the folds.

    Returns
    -------
    AlphaSearch
    """
    bounds, candidates = _subtree_alphas(estimator.tree_)
    n_samples = X.shape[0]
    sample_weight = None if sample_weight is None else check_sample_weight(sample_weight,
                                                                           n_samples)
    weight = np.ones(n_samples) if sample_weight is None else sample_weight
    if class_weights is not None:
        weight = weight * class_weights
    rows = np.flatnonzero(weight > 0.0)  # rows of no weight count for nothing, here as in fit
    n_folds = min(n_folds, rows.shape[0])
    if candidates.shape[0] == 1 or n_folds < 2:
        return AlphaSearch(0.0, 0, candidates, np.zeros(1), np.zeros(1))
    classification = n_classes is not None
    fold = cv_folds(rows.shape[0], y[rows] if classification and y.ndim == 1 else None, n_folds,
                    rng)
    loss = LOSS_MISCLASSIFICATION if classification else _CV_LOSSES[estimator.criterion]
    learner = copy.copy(estimator)
    learner.__dict__ = dict(estimator.__dict__)
    learner.pruning, learner.ccp_alpha = None, 0.0
    totals = np.zeros((candidates.shape[0], 3))
    for k in range(n_folds):
        train, test = rows[fold != k], rows[fold == k]
        learner._fit(estimator._take_rows(X, train), y[train],
                     None if sample_weight is None else sample_weight[train],
                     n_classes=n_classes,
                     class_weights=None if class_weights is None else class_weights[train],
                     offsets=offsets)
        tree = learner.tree_
        alphas, _, collapsed = cost_complexity_sequence(
            tree.children_left, tree.children_right, tree.weighted_n_node_samples, tree.impurity)
        # the steps cost_complexity_tree takes at each candidate: while the alphas stay below it
        steps = np.searchsorted(np.maximum.accumulate(alphas), candidates, side="right") - 1
        y_test = np.ascontiguousarray(y[test], dtype=np.float64).reshape(test.shape[0], -1)
        totals += _held_out_losses(tree, collapsed, estimator._take_rows(X, test), y_test,
                                   weight[test], loss, classification, steps, estimator.n_jobs)
    total_weight = weight[rows].sum()
    errors = totals[:, 0] / total_weight
    spread = totals[:, 2] - 2.0 * errors * totals[:, 1] + errors ** 2 * (weight[rows] ** 2).sum()
    standard_errors = np.sqrt(np.maximum(spread, 0.0)) / total_weight
    best = int(np.argmin(errors))
    # ties within rounding (the sums are accumulated in different orders) count as ties
    limit = (errors[best] + standard_errors[best]) * (1.0 + 1e-12)
    chosen = int(np.flatnonzero(errors <= limit)[-1])
    alpha = bounds[-1] if chosen == candidates.shape[0] - 1 else candidates[chosen]
    return AlphaSearch(float(alpha), chosen, candidates, errors, standard_errors)


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
    _check_node_statistics(tree)
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


def error_based(estimator, confidence=0.25, *, subtree_raising=False, X=None, y=None,
                sample_weight=None):
    """C4.5's error-based pruning: subtree replacement, and optionally subtree raising.

    Each leaf with ``E`` training errors among ``N`` rows is charged ``N * U_CF(E, N)``, the upper
    limit of the binomial error rate at confidence ``CF``
    (:func:`fasttree.kernels.pruning.binomial_upper_limit`).

    Without ``subtree_raising``, a subtree is replaced by a leaf when the leaf's charge is no more
    than the subtree's total (bottom-up, from the node statistics of the tree alone).

    With ``subtree_raising`` the rule is J48's (Weka's ``C45PruneableClassifierTree``, the default
    of J48 and of Quinlan's C4.5): first a subtree whose leaves make no fewer training errors
    than its root alone (within ``1e-3``) is collapsed to a leaf; then, bottom-up, each node is
    compared as a leaf, as its subtree, and with its largest branch (the child with the most
    training weight, the last such child on a tie) raised in its place: the node's training rows
    all go down that branch (a row missing a split value goes down every branch with its share of
    the known weight, on fractional trees) and its leaves are charged for the rows they then
    hold.  The leaf wins when its charge is at most both others + 0.1; otherwise the raised
    branch wins when its charge is at most the subtree's + 0.1, takes the node's place with the
    class counts of the rows now reaching each of its nodes, and is pruned again.  A leaf that
    ends up with no rows predicts its parent's class fractions.  Raising needs the training rows:
    pass the ``X``, ``y`` and ``sample_weight`` the estimator was fitted on.

    Parameters
    ----------
    estimator : fitted DecisionTreeClassifier
    confidence : float, default=0.25
        ``CF`` in (0, 1); smaller values prune more.
    subtree_raising : bool, default=False
        Also raise subtrees, as J48 does by default.
    X : array-like of shape (n_samples, n_features), optional
        The training rows (required with ``subtree_raising``).
    y : array-like of shape (n_samples,), optional
        Their labels (required with ``subtree_raising``).
    sample_weight : array-like of shape (n_samples,), optional
        Their weights (times the class weights, if the estimator has any); ones if omitted.

    Returns
    -------
    A new fitted DecisionTreeClassifier whose ``pruning`` (and ``subtree_raising``, where the
    class has it) parameters name this rule, so that ``clone()`` and refits prune the same way
    (when the input was grown unpruned).
    """
    _check_confidence(confidence)
    if not isinstance(subtree_raising, (bool, np.bool_)):
        raise ValueError(f"subtree_raising must be a bool; got {subtree_raising!r}.")
    _classification_counts(estimator, "error-based")  # a fitted classifier
    if not subtree_raising:
        if X is not None or y is not None or sample_weight is not None:
            raise ValueError("error_based reads X, y and sample_weight only with "
                             "subtree_raising=True (replacement needs the tree alone).")
        tree = error_based_tree(estimator.tree_, confidence)
    else:
        if X is None or y is None:
            raise ValueError("subtree_raising=True re-routes the training rows: pass the X and y "
                             "the estimator was fitted on (and its sample_weight, if any).")
        if getattr(estimator, "n_outputs_", 1) > 1:
            raise ValueError("subtree raising takes a tree of one output.")
        X = estimator._validate_X_predict(X)
        if is_sparse(X):
            raise ValueError("subtree_raising=True cannot be used with sparse X yet; pass a "
                             "dense array (X.toarray()).")
        y = check_y(y, X.shape[0], regression=False)
        w = check_sample_weight(sample_weight, X.shape[0])
        tree = subtree_raising_tree(estimator, X, _class_codes(estimator.classes_, y), w,
                                    confidence)
    return _with_tree(estimator, tree, pruning="error_based", pruning_confidence=confidence,
                      subtree_raising=bool(subtree_raising))


def _check_confidence(confidence):
    if not (isinstance(confidence, (int, float, np.floating)) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be a float in (0, 1); got {confidence!r}.")


def error_based_tree(tree, confidence):
    """The tree :func:`error_based` keeps by subtree replacement alone."""
    _check_node_statistics(tree)
    n_rows = tree.weighted_n_node_samples
    n_errors = n_rows - n_rows * tree.value[:, 0, :].max(axis=1)
    leaf_cost = error_based_leaf_cost(n_rows, n_errors, float(confidence))
    collapse = subtree_replacement_collapse(tree.children_left, tree.children_right, leaf_cost)
    return build_pruned_tree(tree, collapse)


#: J48's margins: a subtree whose leaves' training errors are within COLLAPSE_TOLERANCE of its
#: root's is collapsed before pruning; a simpler choice wins a comparison of charges by up to
#: RAISING_MARGIN (Weka's ``C45PruneableClassifierTree.collapse`` and ``prune``).
COLLAPSE_TOLERANCE = 1e-3
RAISING_MARGIN = 0.1


def subtree_raising_tree(estimator, X, y_code, sample_weight, confidence):
    """The tree :func:`error_based` keeps with subtree raising, from an already validated and
    encoded ``X`` (dense, the kernels' float32 matrix), class codes ``y_code`` and the rows'
    weights (as the grower weighted them, class weights included)."""
    from .grower import CLASSIFICATION_CRITERIA  # the grower's criterion codes

    tree = estimator.tree_
    n_rows = tree.weighted_n_node_samples
    n_errors = n_rows - n_rows * tree.value[:, 0, :].max(axis=1)
    collapse = training_error_collapse(tree.children_left, tree.children_right, n_errors,
                                       COLLAPSE_TOLERANCE)
    tree = build_pruned_tree(tree, collapse)
    keep = sample_weight > 0.0
    raiser = _SubtreeRaiser(tree, X, np.asarray(y_code, np.intp), float(confidence))
    rows = np.flatnonzero(keep)
    root = raiser.prune(0, rows, sample_weight[rows].astype(np.float64))
    return raiser.build(root, CLASSIFICATION_CRITERIA[estimator.criterion])


def _at_most(simpler, other):
    """J48's test that a simpler choice wins: ``Utils.smOrEq(simpler, other + 0.1)``."""
    return simpler - (other + RAISING_MARGIN) < 1e-6


class _SubtreeRaiser:
    """J48's bottom-up pruning with subtree raising over the nodes of a fasttree tree.

    Nodes keep their ids in ``tree``; ``children[node]`` lists the nodes now below ``node`` (None
    for a leaf), so raising a branch puts that branch's node in its parent's slot.  Each node's
    training rows (ids into ``X`` and weights, fractional rows included) come down from the root.
    """

    def __init__(self, tree, X, y, confidence):
        self.tree, self.X, self.y, self.confidence = tree, X, y, confidence
        self.n_classes = tree.value.shape[2]
        self.children = [None if tree.children_left[node] == -1 else
                         list(range(tree.children_left[node], tree.children_right[node] + 1))
                         for node in range(tree.node_count)]
        self.counts = tree.value[:, 0, :] * tree.weighted_n_node_samples[:, None]
        self.n_samples = tree.n_node_samples.copy()
        self.changed = np.zeros(tree.node_count, dtype=bool)

    # -- rows and charges ------------------------------------------------------------------
    def route(self, node, rows, weight):
        """The rows (and weights) that go down each branch of ``node``."""
        t = self.tree
        branch = split_branches(self.X[rows, t.feature[node]], t.split_kind[node],
                                t.threshold[node], t.missing_branch[node],
                                t.category_offset[node], t.category_n_codes[node],
                                t.category_branch, t.fractional_missing)
        n_branches = len(self.children[node])
        known = branch >= 0
        missing = ~known
        if not missing.any():
            return [(rows[branch == b], weight[branch == b]) for b in range(n_branches)]
        known_weight = np.bincount(branch[known], weights=weight[known], minlength=n_branches)
        total = known_weight.sum()
        share = known_weight / total if total > 0.0 else np.full(n_branches, 1.0 / n_branches)
        parts = []
        for b in range(n_branches):
            sel = branch == b
            if share[b] > 0.0:
                parts.append((np.concatenate([rows[sel], rows[missing]]),
                              np.concatenate([weight[sel], weight[missing] * share[b]])))
            else:
                parts.append((rows[sel], weight[sel]))
        return parts

    def class_counts(self, rows, weight):
        return np.bincount(self.y[rows], weights=weight, minlength=self.n_classes)

    def charge(self, counts):
        """C4.5's predicted errors of a leaf holding ``counts``: ``N * U_CF(E, N)``, 0 if empty."""
        total = counts.sum()
        if total <= 1e-6:  # Weka's Utils.eq(total, 0)
            return 0.0
        return total * binomial_upper_limit(total - counts.max(), total, self.confidence)

    def subtree_charge(self, node):
        if self.children[node] is None:
            return self.charge(self.counts[node])
        return sum(self.subtree_charge(child) for child in self.children[node])

    def branch_charge(self, node, rows, weight):
        """The charge of ``node``'s subtree if ``rows`` went down it instead of its own rows."""
        if self.children[node] is None:
            return self.charge(self.class_counts(rows, weight))
        return sum(self.branch_charge(child, *part)
                   for child, part in zip(self.children[node], self.route(node, rows, weight)))

    def redistribute(self, node, rows, weight):
        """Give ``node``'s subtree the class counts of ``rows``."""
        self.counts[node] = self.class_counts(rows, weight)
        self.n_samples[node] = rows.shape[0]
        self.changed[node] = True
        if self.children[node] is not None:
            for child, part in zip(self.children[node], self.route(node, rows, weight)):
                self.redistribute(child, *part)

    # -- J48's prune -----------------------------------------------------------------------
    def prune(self, node, rows, weight):
        """Prune the subtree of ``node``, which holds ``rows``; returns the node now in its
        place (itself, or a raised branch)."""
        children = self.children[node]
        if children is None:
            return node
        parts = self.route(node, rows, weight)
        for b, part in enumerate(parts):
            children[b] = self.prune(children[b], *part)
        branch_weight = np.array([part[1].sum() for part in parts])
        # Weka's Distribution.maxBag: the last branch within 1e-6 of the heaviest
        largest = int(np.flatnonzero(branch_weight >= branch_weight.max() - 1e-6)[-1])
        raised = self.branch_charge(children[largest], rows, weight)
        as_leaf = self.charge(self.counts[node])
        as_tree = self.subtree_charge(node)
        if _at_most(as_leaf, as_tree) and _at_most(as_leaf, raised):
            self.children[node] = None
            return node
        if _at_most(raised, as_tree):
            branch = children[largest]
            self.redistribute(branch, rows, weight)
            return self.prune(branch, rows, weight)
        return node

    # -- the new tree ----------------------------------------------------------------------
    def build(self, root, criterion):
        """A compact tree of the nodes now below ``root``, parents first, each node's children
        consecutive; nodes whose rows changed get new counts, fractions and impurity."""
        t = self.tree
        order, parent = [root], [-1]
        first_child = []
        for position in range(t.node_count):  # breadth-first; the list grows as we go
            if position >= len(order):
                break
            node = order[position]
            kids = self.children[node]
            first_child.append(-1 if kids is None else len(order))
            if kids is not None:
                order.extend(kids)
                parent.extend([position] * len(kids))
        old = np.array(order, dtype=np.intp)
        parent = np.array(parent, dtype=np.intp)
        n = old.shape[0]
        is_leaf = np.array([self.children[node] is None for node in order])
        n_kids = np.array([0 if kids is None else len(kids)
                           for kids in (self.children[node] for node in order)])
        left = np.where(is_leaf, -1, np.array(first_child))
        right = np.where(is_leaf, -1, left + n_kids - 1)
        depth = np.zeros(n, dtype=np.intp)
        for position in range(1, n):
            depth[position] = depth[parent[position]] + 1
        counts = self.counts[old]
        weight, impurity = node_impurity(counts, criterion)
        changed = self.changed[old]
        value = t.value[old].copy()
        for position in range(n):  # parents first: an empty leaf takes its parent's fractions
            if not changed[position]:
                continue
            if weight[position] > 0.0:
                value[position, 0, :] = counts[position] / weight[position]
            else:
                value[position] = value[parent[position]]
        missing_branch = t.missing_branch[old].copy()
        if t.fractional_missing:  # apply() sends a missing value down the heaviest branch
            for position in np.flatnonzero(changed & ~is_leaf):
                children = weight[left[position]:right[position] + 1]
                missing_branch[position] = int(np.argmax(children))
        weighted = np.where(changed, weight, t.weighted_n_node_samples[old])
        return Tree(
            children_left=left,
            children_right=right,
            feature=np.where(is_leaf, TREE_UNDEFINED, t.feature[old]),
            threshold=np.where(is_leaf, float(TREE_UNDEFINED), t.threshold[old]),
            split_kind=np.where(is_leaf, 0, t.split_kind[old]),
            missing_branch=np.where(is_leaf, 0, missing_branch),
            category_offset=np.where(is_leaf, -1, t.category_offset[old]),
            category_n_codes=np.where(is_leaf, 0, t.category_n_codes[old]),
            category_branch=t.category_branch,
            fractional_missing=t.fractional_missing,
            value=value,
            impurity=np.where(changed, impurity, t.impurity[old]),
            n_node_samples=self.n_samples[old],
            weighted_n_node_samples=weighted,
            depth=depth,
            n_features=t.n_features,
            n_classes=t.n_classes,
        )


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
