"""Hand a fitted fasttree estimator to scikit-learn as a genuinely fitted scikit-learn tree.

The converted estimator holds the same node arrays in scikit-learn's ``Tree`` (built with its
public constructor and ``__setstate__``, the path scikit-learn's own unpickling takes), so every
tool that reads scikit-learn trees (``sklearn.tree.export_graphviz``, skl2onnx, SHAP's
``TreeExplainer``, dtreeviz, treelite) reads it unchanged.  scikit-learn is imported only here,
inside :func:`to_sklearn`.
"""

import numpy as np

from ._dtypes import SPLIT_THRESHOLD
from .export import check_fitted_tree, sklearn_criterion


def check_representable(estimator):
    """Raise ``ValueError`` if scikit-learn's ``Tree`` cannot hold this fitted tree.

    scikit-learn's trees have binary numeric threshold nodes only, take numeric input only and
    send a missing value down one child.
    """
    tree = estimator.tree_
    kinds = tree.split_kind[~tree.is_leaf()]
    if np.any(kinds != SPLIT_THRESHOLD):
        raise ValueError(
            "This tree has categorical splits (category subsets or one branch per category), "
            "which scikit-learn's trees cannot represent; fit with categorical_features=None "
            "(e.g. one-hot or ordinal-encode the columns first) to convert it.")
    if tree.fractional_missing:
        raise ValueError(
            "This tree sends a missing value down every branch with a share of its weight "
            "(missing='fractional', C4.5); scikit-learn's trees send it down one child. Fit "
            "with missing='learn' to convert it.")
    is_categorical = getattr(estimator, "is_categorical_", None)
    if is_categorical is not None and np.any(is_categorical):
        raise ValueError(
            "This estimator was fitted with categorical features, which it encodes itself; a "
            "scikit-learn tree takes numeric columns only. Fit with categorical_features=None "
            "on encoded columns to convert it.")


def _sklearn_params(estimator, sklearn_class):
    """The converted estimator's hyperparameters: fasttree's where scikit-learn has the same
    parameter and value, the nearest scikit-learn value otherwise."""
    params = estimator.get_params()
    params["criterion"] = sklearn_criterion(params["criterion"])
    if params.get("splitter") == "hist":  # binned thresholds are ordinary thresholds
        params["splitter"] = "best"
    if isinstance(params.get("random_state"), np.random.Generator):
        params["random_state"] = None  # scikit-learn takes an int or a RandomState
    if hasattr(estimator, "ccp_alpha_"):  # the alpha cross-validation chose, if it did
        params["ccp_alpha"] = estimator.ccp_alpha_
    names = sklearn_class().get_params()
    return {name: value for name, value in params.items() if name in names}


def to_sklearn(estimator):
    """A fitted scikit-learn tree holding the same tree as a fitted fasttree estimator.

    Parameters
    ----------
    estimator : fitted fasttree estimator
        A classifier (:class:`~fasttree.DecisionTreeClassifier`, its presets, or
        :class:`~fasttree.ExtraTreeClassifier`) or a regressor.

    Returns
    -------
    sklearn_estimator : sklearn.tree.DecisionTreeClassifier or DecisionTreeRegressor
        Fitted: ``tree_`` (the same nodes, thresholds, values, impurities, counts and
        missing-value directions), ``classes_``, ``n_classes_``, ``n_outputs_``,
        ``n_features_in_``, ``feature_names_in_`` (when fasttree has it) and ``max_features_``.
        Its ``predict``, ``predict_proba``, ``apply``, ``decision_path`` and
        ``feature_importances_`` equal fasttree's.  Hyperparameters are mapped to scikit-learn's
        (``criterion="gain_ratio"`` → ``"entropy"``, ``splitter="hist"`` → ``"best"``, a numpy
        ``Generator`` ``random_state`` → None, ``ccp_alpha`` → ``ccp_alpha_``, the alpha the
        tree was pruned at); fasttree-only parameters are dropped, so refitting the returned
        estimator grows scikit-learn's tree, not this one.

    Raises
    ------
    ImportError
        If scikit-learn is not installed.
    ValueError
        If scikit-learn cannot represent the tree: category subset or multiway splits,
        C4.5's fractional missing values, or categorical input features.
    """
    check_fitted_tree(estimator, "to_sklearn")
    check_representable(estimator)
    try:
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
        from sklearn.tree._tree import NODE_DTYPE
        from sklearn.tree._tree import Tree as SklearnTree
    except ImportError as exc:
        raise ImportError("to_sklearn needs scikit-learn: pip install scikit-learn") from exc

    is_classifier = estimator._estimator_type == "classifier"
    sklearn_class = DecisionTreeClassifier if is_classifier else DecisionTreeRegressor
    converted = sklearn_class(**_sklearn_params(estimator, sklearn_class))

    tree = estimator.tree_
    n_outputs = tree.n_outputs
    if is_classifier:
        n_classes = np.atleast_1d(np.asarray(estimator.n_classes_, dtype=np.intp))
    else:
        n_classes = np.ones(n_outputs, dtype=np.intp)
    nodes = np.zeros(tree.node_count, dtype=NODE_DTYPE)
    nodes["left_child"] = tree.children_left
    nodes["right_child"] = tree.children_right
    nodes["feature"] = tree.feature
    nodes["threshold"] = tree.threshold
    nodes["impurity"] = tree.impurity
    nodes["n_node_samples"] = tree.n_node_samples
    nodes["weighted_n_node_samples"] = tree.weighted_n_node_samples
    nodes["missing_go_to_left"] = tree.missing_go_to_left
    sklearn_tree = SklearnTree(tree.n_features, n_classes, n_outputs)
    sklearn_tree.__setstate__({
        "max_depth": tree.max_depth,
        "node_count": tree.node_count,
        "nodes": nodes,
        "values": np.ascontiguousarray(tree.value[:, :, :int(n_classes.max())]),
    })

    converted.tree_ = sklearn_tree
    converted.n_features_in_ = estimator.n_features_in_
    converted.n_outputs_ = n_outputs
    converted.max_features_ = estimator.max_features_
    if hasattr(estimator, "feature_names_in_"):
        converted.feature_names_in_ = np.asarray(estimator.feature_names_in_, dtype=object)
    if is_classifier:
        if n_outputs == 1:
            converted.classes_ = estimator.classes_
            converted.n_classes_ = int(n_classes[0])
        else:
            converted.classes_ = list(estimator.classes_)
            converted.n_classes_ = n_classes
    return converted


def forest_to_sklearn(forest):
    """A fitted scikit-learn forest holding the same trees as a fitted fasttree forest.

    Parameters
    ----------
    forest : fitted fasttree forest
        :class:`~fasttree.RandomForestClassifier`, :class:`~fasttree.RandomForestRegressor`,
        :class:`~fasttree.ExtraTreesClassifier` or :class:`~fasttree.ExtraTreesRegressor`.

    Returns
    -------
    sklearn_forest : the scikit-learn forest of the same name
        Fitted: ``estimators_`` (each tree converted by :func:`to_sklearn`), ``classes_``,
        ``n_classes_``, ``n_outputs_``, ``n_features_in_``, ``feature_names_in_`` (when fasttree
        has it), the out-of-bag attributes, and the draws behind ``estimators_samples_`` (the
        same rows, as the seeds are the same).  Its ``predict``, ``predict_proba``, ``apply``,
        ``decision_path`` and ``feature_importances_`` equal fasttree's.  fasttree-only
        parameters are dropped.

    Raises
    ------
    ImportError
        If scikit-learn is not installed.
    ValueError
        If scikit-learn cannot represent a tree (see :func:`to_sklearn`).
    """
    forest._check_is_fitted()
    try:
        from sklearn import ensemble
    except ImportError as exc:
        raise ImportError("to_sklearn needs scikit-learn: pip install scikit-learn") from exc
    sklearn_class = getattr(ensemble, type(forest).__name__)
    converted = sklearn_class(**_sklearn_params(forest, sklearn_class))
    converted.estimators_ = [to_sklearn(tree) for tree in forest.estimators_]
    converted.estimator_ = converted.estimator
    for name in ("n_features_in_", "n_outputs_", "classes_", "n_classes_", "oob_score_",
                 "oob_decision_function_", "oob_prediction_", "_n_samples",
                 "_n_samples_bootstrap", "_sample_weight"):
        if hasattr(forest, name):
            setattr(converted, name, getattr(forest, name))
    if hasattr(forest, "feature_names_in_"):
        converted.feature_names_in_ = np.asarray(forest.feature_names_in_, dtype=object)
    return converted
