"""Text rendering of a fitted tree (reads the node arrays only)."""

import numpy as np


def export_text(estimator, *, feature_names=None, max_depth=10, decimals=2, show_weights=False):
    """Render a fitted fasttree estimator as indented text, scikit-learn's ``export_text`` layout.

    Parameters
    ----------
    estimator : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted estimator.
    feature_names : sequence of str, optional
        Names of the features; defaults to ``feature_names_in_`` or ``feature_0, feature_1, ...``.
    max_depth : int, default=10
        Deeper nodes are summarised as ``truncated branch of depth N``.
    decimals : int, default=2
        Decimals shown for thresholds and values.
    show_weights : bool, default=False
        For a classifier, also show the weighted class counts at each leaf.

    Returns
    -------
    text : str
    """
    estimator._check_is_fitted()
    tree = estimator.tree_
    if feature_names is None:
        feature_names = getattr(estimator, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"feature_{i}" for i in range(tree.n_features)]
    feature_names = list(feature_names)
    if len(feature_names) != tree.n_features:
        raise ValueError(
            f"feature_names has {len(feature_names)} names; the tree has {tree.n_features} "
            "features.")
    classes = getattr(estimator, "classes_", None)
    lines = []

    def leaf_text(node):
        if classes is None:
            return f"value: [{tree.value[node, 0, 0]:.{decimals}f}]"
        text = f"class: {classes[int(np.argmax(tree.value[node, 0]))]}"
        if show_weights:
            counts = tree.value[node, 0] * tree.weighted_n_node_samples[node]
            text = f"weights: [{', '.join(f'{c:.{decimals}f}' for c in counts)}] {text}"
        return text

    # Iterative depth-first walk (a full-depth tree can be deeper than Python's recursion limit).
    # The stack holds nodes to expand and ready-made lines; pushing "right, '> t' line, left" makes
    # the whole left subtree print before the line that opens the right one.
    stack = [(0, 0, None)]
    while stack:
        node, depth, line = stack.pop()
        if line is not None:
            lines.append(line)
            continue
        indent = "|   " * depth + "|--- "
        if tree.children_left[node] == -1:
            lines.append(indent + leaf_text(node))
            continue
        if depth >= max_depth:
            lines.append(indent + f"truncated branch of depth {_subtree_depth(tree, node)}")
            continue
        name = feature_names[tree.feature[node]]
        t = tree.threshold[node]
        lines.append(indent + f"{name} <= {t:.{decimals}f}")
        stack.append((tree.children_right[node], depth + 1, None))
        stack.append((None, None, indent + f"{name} >  {t:.{decimals}f}"))
        stack.append((tree.children_left[node], depth + 1, None))
    return "\n".join(lines) + "\n"


def _subtree_depth(tree, node):
    """Depth of the subtree rooted at ``node`` (node ids are parents-first, depths stored)."""
    deepest = 0
    stack = [node]
    while stack:
        n = stack.pop()
        deepest = max(deepest, int(tree.depth[n] - tree.depth[node]))
        if tree.children_left[n] != -1:
            stack.extend((tree.children_left[n], tree.children_right[n]))
    return deepest
