"""Text rendering of a fitted tree (reads the node arrays only)."""

import numpy as np

from ._dtypes import SPLIT_MULTIWAY, SPLIT_THRESHOLD


def export_text(estimator, *, feature_names=None, max_depth=10, decimals=2, show_weights=False):
    """Render a fitted fasttree estimator as indented text, scikit-learn's ``export_text`` layout.

    Every kind of split node is shown: ``humidity <= 75.00`` / ``humidity >  75.00`` for a
    threshold, ``color in {red, blue}`` for each side of a subset split, ``outlook = sunny`` for
    each branch of a multiway split.  Where the feature had missing values in training, the
    branch that takes them is marked ``(missing → left)``, ``(missing → right)`` or
    ``(missing)`` (not in trees grown with C4.5's fractional rows, where they take every branch).

    Parameters
    ----------
    estimator : fitted fasttree estimator
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
    categories = getattr(estimator, "categories_", [None] * tree.n_features)
    had_missing = getattr(estimator, "missing_in_fit_", np.zeros(tree.n_features, dtype=bool))
    lines = []

    n_outputs = tree.n_outputs
    # one output: classes_ is the classes; several: a list of them, one per output
    classes_per_output = None if classes is None else (
        [classes] if n_outputs == 1 else list(classes))

    def leaf_text(node):
        if classes is None:
            values = ", ".join(f"{tree.value[node, k, 0]:.{decimals}f}" for k in range(n_outputs))
            return f"value: [{values}]"
        labels, weights = [], []
        for k, classes_k in enumerate(classes_per_output):
            fractions = tree.value[node, k, :len(classes_k)]
            labels.append(str(classes_k[int(np.argmax(fractions))]))
            counts = fractions * tree.weighted_n_node_samples[node]
            weights.append(", ".join(f"{c:.{decimals}f}" for c in counts))
        text = f"class: {labels[0]}" if n_outputs == 1 else f"class: [{', '.join(labels)}]"
        if show_weights:
            shown = weights[0] if n_outputs == 1 else "], [".join(weights)
            text = f"weights: [{shown}] {text}"
        return text

    def branch_conditions(node):
        """The condition text of each branch of a split node."""
        f = tree.feature[node]
        name = feature_names[f]
        kind = tree.split_kind[node]
        if kind == SPLIT_THRESHOLD:
            t = tree.threshold[node]
            texts = [f"{name} <= {t:.{decimals}f}", f"{name} >  {t:.{decimals}f}"]
        else:
            branch, reached = tree.category_map(node)
            labels = [str(c) for c in categories[f]] if categories[f] is not None else [
                str(c) for c in range(branch.shape[0] - 1)]
            n_branches = tree.children_right[node] - tree.children_left[node] + 1
            texts = []
            for b in range(n_branches):
                members = [labels[c] for c in range(len(labels)) if branch[c] == b and reached[c]]
                if kind == SPLIT_MULTIWAY and len(members) == 1:
                    texts.append(f"{name} = {members[0]}")
                else:
                    texts.append(f"{name} in {{{', '.join(members)}}}")
        if had_missing[f] and not tree.fractional_missing:
            m = tree.missing_branch[node]
            if len(texts) == 2 and kind != SPLIT_MULTIWAY:
                texts[m] += " (missing → left)" if m == 0 else " (missing → right)"
            else:
                texts[m] += " (missing)"
        return texts

    # Iterative depth-first walk (a full-depth tree can be deeper than Python's recursion limit).
    # The stack holds nodes to expand and ready-made lines; children are pushed last-first, each
    # after the line that opens it, so every branch prints its line, then its whole subtree.
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
        texts = branch_conditions(node)
        children = range(tree.children_left[node], tree.children_right[node] + 1)
        for b in range(len(texts) - 1, -1, -1):
            stack.append((children[b], depth + 1, None))
            stack.append((None, None, indent + texts[b]))
    return "\n".join(lines) + "\n"


def _subtree_depth(tree, node):
    """Depth of the subtree rooted at ``node`` (node ids are parents-first, depths stored)."""
    deepest = 0
    stack = [node]
    while stack:
        n = stack.pop()
        deepest = max(deepest, int(tree.depth[n] - tree.depth[node]))
        if tree.children_left[n] != -1:
            stack.extend(range(tree.children_left[n], tree.children_right[n] + 1))
    return deepest
