"""Drawing a fitted tree with matplotlib (imported lazily: ``import fasttree`` does not need it)."""

from .export import _MPL_CHARACTERS, NodeLabels, _check_int, drawn_nodes


def _layout(tree, max_depth):
    """Drawn nodes in pre-order with their (x, depth) positions: leaves (and cut subtrees) one
    unit apart from left to right, every parent centred over its first and last child.

    Returns
    -------
    nodes : list of (node, parent, branch, depth, truncated)
    x : dict node -> float
    n_columns : int
        Number of leaf columns (the layout's width).
    """
    nodes = list(drawn_nodes(tree, max_depth))
    x = {}
    n_columns = 0
    children = {}
    for node, parent, _, _, _ in nodes:  # pre-order: leaves come left to right
        if parent is not None:
            children.setdefault(parent, []).append(node)
    for node, _, _, _, _ in nodes:
        if node not in children:
            x[node] = float(n_columns)
            n_columns += 1
    for node, _, _, _, _ in reversed(nodes):  # children before parents
        if node in children:
            x[node] = (x[children[node][0]] + x[children[node][-1]]) / 2.0
    return nodes, x, n_columns


def plot_tree(decision_tree, *, max_depth=None, feature_names=None, class_names=None,
              label="all", filled=False, impurity=True, node_ids=False, proportion=False,
              rounded=False, precision=3, ax=None, fontsize=None):
    """Draw a fitted fasttree tree with matplotlib (scikit-learn's ``plot_tree``).

    Each node is a box holding the same text as its :func:`~fasttree.export_graphviz` label
    (for a tree of binary numeric splits, scikit-learn's ``plot_tree`` of
    ``decision_tree.to_sklearn()`` writes the same texts).  The edges from the root of a binary
    split are marked ``True`` (left) and ``False``; every edge from a multiway split is labelled
    with its branch's categories.  Leaves are spaced evenly and each parent is centred over its
    children, so a multiway node is drawn with all its children.

    Parameters
    ----------
    decision_tree : fitted fasttree estimator
    max_depth : int, optional
        Nodes deeper than this are drawn as ``(...)``; None draws the whole tree.
    feature_names, class_names, label, filled, impurity, node_ids, proportion, precision
        As in :func:`~fasttree.export_graphviz`.
    rounded : bool, default=False
        Rounded node boxes.
    ax : matplotlib Axes, optional
        Axes to draw in (cleared first); defaults to the current axes.
    fontsize : float, optional
        Text size; None fits the text to the axes.

    Returns
    -------
    annotations : list of matplotlib.text.Annotation
        The node boxes and edge labels, in pre-order (each node, then its edge label).

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("plot_tree needs matplotlib: install fasttree's 'plot' extra "
                          "(pip install 'fasttree[plot]') or matplotlib itself") from exc

    labels = NodeLabels(decision_tree, feature_names=feature_names, class_names=class_names,
                        label=label, filled=filled, impurity=impurity, node_ids=node_ids,
                        proportion=proportion, precision=precision,
                        characters=_MPL_CHARACTERS, escape=str, caller="plot_tree")
    _check_int(max_depth, "max_depth", allow_none=True)
    tree = decision_tree.tree_
    nodes, x, n_columns = _layout(tree, max_depth)
    n_rows = max(depth for _, _, _, depth, _ in nodes) + 1
    if ax is None:
        ax = plt.gca()
    ax.clear()
    ax.set_axis_off()

    def position(node, depth):  # centre of a cell of the (columns x rows) grid, in axes units
        return (x[node] + 0.5) / n_columns, (n_rows - depth - 0.5) / n_rows

    text_kwargs = {"xycoords": "axes fraction"}
    if fontsize is not None:
        text_kwargs["fontsize"] = fontsize
    depth_of = {}
    edge_labels = {}
    annotations = []
    for node, parent, branch, depth, truncated in nodes:
        depth_of[node] = depth
        box = {"boxstyle": "round"} if rounded else {}
        if truncated:
            box["fc"] = "grey"
        else:
            box["fc"] = labels.fill_color(node) if filled else ax.get_facecolor()
        text = "\n  (...)  \n" if truncated else labels.text(node)
        xy = position(node, depth)
        box_kwargs = dict(ha="center", va="center", bbox=box, zorder=100 - 10 * depth,
                          **text_kwargs)
        if parent is None:
            annotations.append(ax.annotate(text, xy, **box_kwargs))
        else:
            xy_parent = position(parent, depth - 1)
            arrow = {"arrowstyle": "<-", "edgecolor": plt.rcParams["text.color"]}
            annotations.append(ax.annotate(text, xy_parent, xy, arrowprops=arrow, **box_kwargs))
            edge = edge_labels[parent][branch]
            middle = ((xy_parent[0] + xy[0]) / 2, (xy_parent[1] + xy[1]) / 2)
            if edge is not None:
                annotations.append(ax.annotate(edge, middle, ha="center",
                                               zorder=100 - 10 * depth, **text_kwargs))
            elif parent == 0 and not truncated:  # which side of the root's condition is which
                side, align = ("True  ", "right") if branch == 0 else ("  False", "left")
                annotations.append(ax.annotate(side, middle, ha=align,
                                               zorder=100 - 10 * depth, **text_kwargs))
        if not truncated and tree.children_left[node] != -1:
            edge_labels[node] = labels.edge_labels(node)
    if fontsize is None:
        _fit_fontsize(ax, annotations, n_columns, n_rows)
    return annotations


def _fit_fontsize(ax, annotations, n_columns, n_rows):
    """Shrink or grow the text so that the widest box fits its column and the tallest its row."""
    renderer = ax.figure.canvas.get_renderer()
    for ann in annotations:
        ann.update_bbox_position_size(renderer)
    extents = [ann.get_bbox_patch().get_window_extent() for ann in annotations
               if ann.get_bbox_patch() is not None]
    width = max(extent.width for extent in extents)
    height = max(extent.height for extent in extents)
    window = ax.get_window_extent()
    scale = min(window.width / n_columns / width, window.height / n_rows / height)
    size = annotations[0].get_fontsize() * scale
    for ann in annotations:
        ann.set_fontsize(size)
