"""Text and DOT renderings of a fitted tree and the wording they share (read the node arrays)."""

import html
import numbers

import numpy as np

from ._dtypes import SPLIT_MULTIWAY, SPLIT_THRESHOLD
from .estimators import _BaseDecisionTree


#: The scikit-learn criterion whose impurity a fasttree criterion stores (gain ratio chooses
#: splits by gain / split information, but the nodes' impurity is Shannon entropy).
SKLEARN_CRITERION = {"gain_ratio": "entropy"}


def sklearn_criterion(criterion):
    """scikit-learn's name of the impurity that a fasttree ``criterion`` stores in the tree."""
    return SKLEARN_CRITERION.get(criterion, criterion)


def check_fitted_tree(estimator, caller):
    """``TypeError`` unless ``estimator`` is a fasttree tree estimator; ``NotFittedError`` unless
    it is fitted."""
    if not isinstance(estimator, _BaseDecisionTree):
        # scikit-learn's wording for an object that is no estimator at all (a Tree, an array)
        got = (f"{type(estimator).__name__}" if hasattr(estimator, "fit")
               else f"{type(estimator).__name__}, which is not an estimator instance")
        raise TypeError(f"{caller} takes a fitted fasttree tree estimator; got {got}.")
    estimator._check_is_fitted()


def _names(values, name):
    """``values`` as a list of names; ``ValueError`` unless it is a 1-D sequence."""
    if isinstance(values, str):
        raise ValueError(f"{name} must be a 1-D sequence of names; got the str {values!r}.")
    array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of names; got an array of shape "
                         f"{array.shape}.")
    return list(array)


def export_text(decision_tree, *, feature_names=None, class_names=None, max_depth=10, spacing=3,
                decimals=2, show_weights=False):
    """Render a fitted fasttree estimator as indented text (scikit-learn's ``export_text``).

    For a tree of binary numeric splits the text equals scikit-learn's ``export_text`` of
    ``decision_tree.to_sklearn()`` called with the same arguments.  Every other kind of split
    node is shown too: ``color in {red, blue}`` for each side of a subset split, ``outlook =
    sunny`` for each branch of a multiway split.  Where the split feature had missing values in
    training, the branch that takes them is marked ``(missing → left)``, ``(missing → right)``
    or ``(missing)``; in a tree grown with C4.5's fractional rows, where a missing value goes
    down every branch with a share of its weight, every branch of such a node is marked
    ``(missing → every branch)``.

    Parameters
    ----------
    decision_tree : fitted fasttree estimator
    feature_names : sequence of str, optional
        Names of the features; defaults to ``feature_names_in_`` (fitted on a DataFrame), else
        ``feature_0, feature_1, ...``.
    class_names : sequence of str, optional
        Names of the classes of a single-output classifier, one per entry of ``classes_`` in
        its order; None shows the labels in ``classes_``.  Ignored for a regressor.
    max_depth : int or None, default=10
        Splits are shown down to depth ``max_depth`` (the root's is depth 0); a deeper subtree
        is summarised as ``truncated branch of depth N``, ``N`` its number of levels (a leaf
        there is shown).  None shows the whole tree.
    spacing : int, default=3
        Width of one level of indentation (the ``-`` and spaces after each ``|``).
    decimals : int, default=2
        Decimals shown for thresholds and values.
    show_weights : bool, default=False
        For a classifier, also show the weighted class counts at each leaf (``fractions: [...]``,
        the class fractions, for a tree of a forest loaded from a model file, which does not
        store the counts).

    Returns
    -------
    report : str
    """
    if feature_names is not None:
        feature_names = _names(feature_names, "feature_names")
    if class_names is not None:
        class_names = _names(class_names, "class_names")
    check_fitted_tree(decision_tree, "export_text")
    _check_int(max_depth, "max_depth", allow_none=True)
    _check_int(spacing, "spacing", allow_none=False, low=1)
    _check_int(decimals, "decimals", allow_none=False)
    if not isinstance(show_weights, (bool, np.bool_)):
        raise TypeError(f"show_weights must be a bool; got {show_weights!r}.")
    tree = decision_tree.tree_
    n_outputs = tree.n_outputs
    # one output: classes_ is the classes; several: a list of them, one per output
    classes = getattr(decision_tree, "classes_", None)
    classes_per_output = None if classes is None else (
        [classes] if n_outputs == 1 else list(classes))
    if class_names is not None and classes is not None:
        if n_outputs != 1:
            raise ValueError("class_names names the classes of a tree of one output; this tree "
                             f"has {n_outputs} outputs.")
        if len(class_names) != len(classes):  # scikit-learn's wording
            raise ValueError(
                "When `class_names` is an array, it should contain as many items as "
                f"`decision_tree.classes_`. Got {len(class_names)} while the tree was fitted "
                f"with {len(classes)} classes.")
        classes_per_output = [class_names]
    if feature_names is None:
        feature_names = getattr(decision_tree, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"feature_{i}" for i in range(tree.n_features)]
    feature_names = list(feature_names)
    if len(feature_names) != tree.n_features:  # scikit-learn's wording
        raise ValueError(f"feature_names must contain {tree.n_features} elements, got "
                         f"{len(feature_names)}")
    wording = _Wording(decision_tree, feature_names)

    statistics = tree.has_node_statistics  # else a loaded forest's tree: leaves' fractions

    def leaf_text(node):
        if classes is None:
            values = ", ".join(f"{tree.value[node, k, 0]:.{decimals}f}" for k in range(n_outputs))
            return f"value: [{values}]"
        labels, weights = [], []
        for k, classes_k in enumerate(classes_per_output):
            fractions = tree.value[node, k, :len(classes_k)]
            labels.append(str(classes_k[int(np.argmax(fractions))]))
            if statistics:
                fractions = fractions * tree.weighted_n_node_samples[node]
            weights.append(", ".join(f"{c:.{decimals}f}" for c in fractions))
        text = f"class: {labels[0]}" if n_outputs == 1 else f"class: [{', '.join(labels)}]"
        if show_weights:  # a loaded forest's tree keeps its leaves' class fractions only
            shown = weights[0] if n_outputs == 1 else "], [".join(weights)
            name = "weights" if statistics else "fractions"
            text = f"{name}: [{shown}] {text}"
        return text

    def branch_conditions(node):
        """The condition text of each branch of a split node."""
        name, conditions = wording.conditions(node, lambda t: f"{t:.{decimals}f}")
        texts = [f"{name} {c}" for c in conditions]
        m = wording.missing_branch(node)
        if m is not None:
            texts[m] += f" ({wording.missing_text(node, m)})"
        elif wording.shares_missing(node):
            texts = [f"{text} ({wording.shared_missing_text()})" for text in texts]
        return texts

    # Iterative depth-first walk (a full-depth tree can be deeper than Python's recursion limit).
    # The stack holds nodes to expand and ready-made lines; children are pushed last-first, each
    # after the line that opens it, so every branch prints its line, then its whole subtree.
    lines = []
    stack = [(0, 0, None)]
    while stack:
        node, depth, line = stack.pop()
        if line is not None:
            lines.append(line)
            continue
        indent = ("|" + " " * spacing) * depth + "|" + "-" * spacing + " "
        if tree.children_left[node] == -1:
            lines.append(indent + leaf_text(node))
            continue
        if max_depth is not None and depth > max_depth:
            lines.append(indent + f"truncated branch of depth {_subtree_depth(tree, node) + 1}")
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


class _Wording:
    """How a split node's condition is worded: the one source for :func:`export_text`,
    :func:`export_graphviz` and :func:`fasttree.plot_tree`.

    ``name <= t`` / ``name >  t`` for a threshold, ``name in {a, b}`` for each side of a subset
    split, ``name = a`` (or ``name in {a, b}``) for each branch of a multiway split; the branch
    that takes missing values is named where the feature had missing values in training.

    Parameters
    ----------
    estimator : fitted fasttree estimator
    feature_names : list of str
        One name per feature, already escaped for the output format.
    le : str, default="<="
        The "less or equal" sign.
    escape : callable, default=str
        Escapes a category label for the output format.
    """

    def __init__(self, estimator, feature_names, *, le="<=", escape=str):
        self.tree = estimator.tree_
        n_features = self.tree.n_features
        self.feature_names = feature_names
        self.le = le
        self.escape = escape
        self.categories = getattr(estimator, "categories_", [None] * n_features)
        self.had_missing = getattr(estimator, "missing_in_fit_",
                                   np.zeros(n_features, dtype=bool))

    def conditions(self, node, format_threshold):
        """The feature name and, per branch, the rest of its condition (``<= 0.5``, ``= sunny``,
        ``in {red, blue}``); ``format_threshold`` turns a threshold into text."""
        tree = self.tree
        f = tree.feature[node]
        name = self.feature_names[f]
        kind = tree.split_kind[node]
        if kind == SPLIT_THRESHOLD:
            t = format_threshold(tree.threshold[node])
            return name, [f"{self.le} {t}", f">  {t}"]
        return name, [f"= {members[0]}" if kind == SPLIT_MULTIWAY and len(members) == 1
                      else f"in {{{', '.join(members)}}}"
                      for members in self.branch_categories(node)]

    def branch_categories(self, node):
        """Labels of the training categories that each branch of a categorical split takes."""
        tree = self.tree
        f = tree.feature[node]
        branch, reached = tree.category_map(node)
        labels = [self.escape(str(c)) for c in self.categories[f]] if (
            self.categories[f] is not None) else [str(c) for c in range(branch.shape[0] - 1)]
        n_branches = tree.children_right[node] - tree.children_left[node] + 1
        return [[labels[c] for c in range(len(labels)) if branch[c] == b and reached[c]]
                for b in range(n_branches)]

    def missing_branch(self, node):
        """The branch that takes a missing value, or None where the feature had none in
        training or the tree sends it down every branch (C4.5's fractional rows)."""
        if not self.had_missing[self.tree.feature[node]] or self.tree.fractional_missing:
            return None
        return int(self.tree.missing_branch[node])

    def shares_missing(self, node):
        """Whether a missing value of the split feature, seen in training, goes down every
        branch with a share of its weight (C4.5's fractional rows)."""
        return bool(self.had_missing[self.tree.feature[node]] and self.tree.fractional_missing)

    @staticmethod
    def shared_missing_text(arrow="→"):
        """What a node whose missing values go down every branch (``shares_missing``) says."""
        return f"missing {arrow} every branch"

    def missing_text(self, node, branch, arrow="→"):
        """``missing → left`` / ``missing → right`` for a binary split, ``missing`` for a
        branch of a multiway split."""
        if self.tree.split_kind[node] == SPLIT_MULTIWAY:
            return "missing"
        return f"missing {arrow} {'left' if branch == 0 else 'right'}"


#: The characters of a label: node-id sign, subscript open/close, "<=", line break, label
#: close/open (scikit-learn's choice for each output).
_DOT_CHARACTERS = ("#", "[", "]", "<=", "\\n", '"', '"')
_HTML_CHARACTERS = ("&#35;", "<SUB>", "</SUB>", "&le;", "<br/>", ">", "<")
_MPL_CHARACTERS = ("#", "[", "]", "<=", "\n", "", "")


def _color_brew(n):
    """``n`` colours of equally spaced hues (saturation 0.75, value 0.9) as 0-255 RGB lists,
    the palette scikit-learn fills class nodes with."""
    chroma = 0.75 * 0.9
    shift = 0.9 - chroma
    colors = []
    for hue in np.arange(25, 385, 360.0 / n).astype(int):
        sector = hue / 60.0
        x = chroma * (1 - abs(sector % 2 - 1))
        r, g, b = [(chroma, x, 0), (x, chroma, 0), (0, chroma, x), (0, x, chroma),
                   (x, 0, chroma), (chroma, 0, x), (chroma, x, 0)][int(sector)]
        colors.append([int(255 * (r + shift)), int(255 * (g + shift)), int(255 * (b + shift))])
    return colors


def _check_int(value, name, allow_none, low=0):
    """``ValueError`` unless ``value`` is an int of at least ``low`` (0 or 1), or None where
    allowed."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        kind = "non-negative" if low == 0 else "positive"
        raise ValueError(f"{name} must be a {kind} int{' or None' if allow_none else ''};"
                         f" got {value!r}.")


class NodeLabels:
    """The text and fill colour of every node of a drawn tree, in scikit-learn's layout (the one
    source for :func:`export_graphviz` and :func:`fasttree.plot_tree`).

    Lines: ``node #i`` (``node_ids``), the split condition (the left child's for a binary split,
    the feature for a multiway one; then ``missing → left``/``right``/``every branch`` when the
    feature had missing values in training), ``<criterion> = ...`` (``impurity``),
    ``samples = ...``, ``value = ...`` and ``class = ...`` (``class_names``).  Parameters as in
    :func:`export_graphviz`; ``characters`` is the output's set of special characters,
    ``escape`` escapes a name for the output, ``caller`` names the function in errors.
    """

    def __init__(self, estimator, *, feature_names, class_names, label, filled, impurity,
                 node_ids, proportion, precision, characters, escape, caller):
        check_fitted_tree(estimator, caller)
        tree = estimator.tree_
        if label not in ("all", "root", "none"):
            raise ValueError(f"label must be 'all', 'root' or 'none'; got {label!r}.")
        _check_int(precision, "precision", allow_none=False)
        if feature_names is not None:
            feature_names = list(feature_names)
            if any(not isinstance(name, str) for name in feature_names):
                raise ValueError("All feature names must be strings.")
            if len(feature_names) != tree.n_features:
                raise ValueError(f"Length of feature_names, {len(feature_names)} does not match "
                                 f"number of features, {tree.n_features}")
            names = [escape(name) for name in feature_names]
        else:
            names = [f"x{characters[1]}{f}{characters[2]}" for f in range(tree.n_features)]
        if estimator._estimator_type == "classifier":
            self.n_classes = np.atleast_1d(np.asarray(estimator.n_classes_, dtype=np.intp))
        else:
            self.n_classes = np.ones(tree.n_outputs, dtype=np.intp)
        # scikit-learn's test: a tree of one class per output is worded like a regression tree
        self.counts_classes = self.n_classes[0] != 1
        if class_names is not None and not isinstance(class_names, bool):
            class_names = [escape(str(c)) for c in class_names]
            if self.counts_classes and tree.n_outputs == 1 and \
                    len(class_names) < self.n_classes[0]:
                raise ValueError(f"class_names has {len(class_names)} names; the tree has "
                                 f"{self.n_classes[0]} classes.")
        self.tree = tree
        # a tree of a forest loaded from a model file: leaves' values only (no impurity, no
        # samples, no internal values), its leaves' values shown as they are stored
        self.statistics = tree.has_node_statistics
        self.wording = _Wording(estimator, names, le=characters[3], escape=escape)
        self.criterion = sklearn_criterion(estimator.criterion)
        self.class_names = class_names
        self.label = label
        self.impurity = impurity
        self.node_ids = node_ids
        self.proportion = proportion
        self.precision = precision
        self.characters = characters
        self._colors = self._palette() if filled else None

    def _round(self, value):
        return round(value, self.precision)

    def _value(self, node):
        """Class fractions of one output (or of every output), or the predicted value(s)."""
        value = self.tree.value[node, :, :int(self.n_classes.max())]
        return value[0] if self.tree.n_outputs == 1 else value

    def text(self, node):
        """The label of ``node``, with the output's opening and closing characters."""
        tree, chars = self.tree, self.characters
        named = self.label == "all" or (self.label == "root" and node == 0)
        lines = []
        if self.node_ids:
            lines.append(f"{'node ' if named else ''}{chars[0]}{node}")
        if tree.children_left[node] != -1:
            name, conditions = self.wording.conditions(node, lambda t: str(self._round(t)))
            lines.append(name if tree.split_kind[node] == SPLIT_MULTIWAY
                         else f"{name} {conditions[0]}")
            m = self.wording.missing_branch(node)
            arrow = "&rarr;" if chars is _HTML_CHARACTERS else "→"
            if m is not None and tree.split_kind[node] != SPLIT_MULTIWAY:
                lines.append(self.wording.missing_text(node, m, arrow))
            elif self.wording.shares_missing(node):
                lines.append(self.wording.shared_missing_text(arrow))
        if self.impurity and self.statistics:
            lines.append(f"{self.criterion + ' = ' if named else ''}"
                         f"{self._round(tree.impurity[node])}")
        if self.statistics:
            if self.proportion:
                samples = (f"{round(100.0 * tree.n_node_samples[node] / tree.n_node_samples[0], 1)}"
                           "%")
            else:
                samples = str(tree.n_node_samples[node])
            lines.append(f"{'samples = ' if named else ''}{samples}")
        if self.statistics or tree.children_left[node] == -1:  # else no value to show
            lines.append(f"{'value = ' if named else ''}{self._value_text(node)}")
            if self.class_names is not None and self.counts_classes and tree.n_outputs == 1:
                k = int(np.argmax(self._value(node)))
                class_name = (f"y{chars[1]}{k}{chars[2]}" if self.class_names is True
                              else self.class_names[k])
                lines.append(f"{'class = ' if named else ''}{class_name}")
        return chars[6] + chars[4].join(lines) + chars[5]

    def _value_text(self, node):
        value = self._value(node)
        counts = self.counts_classes and not self.proportion and self.statistics
        if counts:
            value = value * self.tree.weighted_n_node_samples[node]  # weighted class counts
        if counts and np.all(np.mod(value, 1) == 0):
            value = value.astype(int)
        else:
            value = np.around(value, self.precision)
        # numpy's array printing (wrapping included), without the quotes of byte strings
        text = str(value.astype("S32")).replace("b'", "'").replace("' '", ", ").replace("'", "")
        if not self.counts_classes and self.tree.n_outputs == 1:
            text = text.replace("[", "").replace("]", "")
        return text.replace("\n ", self.characters[4])

    def edge_labels(self, node):
        """Per child of a split node, the text of its edge: the categories of a multiway
        branch (``sunny``, ``{rainy, overcast}``, plus ``(missing)`` on the branch that takes
        missing values); None for the children of a binary split."""
        if self.tree.split_kind[node] != SPLIT_MULTIWAY:
            return [None, None]
        labels = [members[0] if len(members) == 1 else f"{{{', '.join(members)}}}"
                  for members in self.wording.branch_categories(node)]
        m = self.wording.missing_branch(node)
        if m is not None:
            labels[m] += f" ({self.wording.missing_text(node, m)})"
        return labels

    def _palette(self):
        """Class colours, and the (low, high) of the values coloured on one hue (regression,
        several outputs: by impurity) or None (one output of classes)."""
        tree = self.tree
        bounds = None
        if tree.n_outputs != 1:
            bounds = (-np.max(tree.impurity), -np.min(tree.impurity))
        elif not self.counts_classes:
            known = tree.value[~np.isnan(tree.value)]  # a loaded forest's tree: leaves only
            if np.unique(known).shape[0] > 1:
                bounds = (np.min(known), np.max(known))
        return _color_brew(int(self.n_classes[0])), bounds

    def fill_color(self, node):
        """``#rrggbb``: the majority class's colour, paler as the class is less pure, or one
        hue scaled from the lowest to the highest value (impurity for several outputs)."""
        rgb, bounds = self._colors
        if self.tree.n_outputs != 1:
            value = -self.tree.impurity[node]
        else:
            value = self._value(node)
            if bounds is not None:
                value = value.item()
        if np.isnan(value).any():  # no statistics (a loaded forest's tree): left white
            return "#ffffff"
        if bounds is None:
            color = rgb[int(np.argmax(value))]
            ranked = sorted(value, reverse=True)
            alpha = 0.0 if len(ranked) == 1 else (ranked[0] - ranked[1]) / (1 - ranked[1])
        else:
            color = rgb[0]
            span = bounds[1] - bounds[0]
            alpha = (value - bounds[0]) / span if span > 0 else 0.0
        return "#%02x%02x%02x" % tuple(int(round(alpha * c + (1 - alpha) * 255, 0))
                                       for c in color)


def drawn_nodes(tree, max_depth):
    """Depth-first (pre-order) walk of the nodes drawn to ``max_depth``: ``(node, parent,
    branch, depth, truncated)``, where a truncated node stands for a subtree cut at
    ``max_depth`` (drawn as ``(...)``)."""
    stack = [(0, None, 0, 0)]
    while stack:
        node, parent, branch, depth = stack.pop()
        truncated = max_depth is not None and depth > max_depth
        yield node, parent, branch, depth, truncated
        if not truncated and tree.children_left[node] != -1:
            children = range(tree.children_left[node], tree.children_right[node] + 1)
            for b in range(len(children) - 1, -1, -1):
                stack.append((children[b], node, b, depth + 1))


def export_graphviz(decision_tree, out_file=None, *, max_depth=None, feature_names=None,
                    class_names=None, label="all", filled=False, leaves_parallel=False,
                    impurity=True, node_ids=False, proportion=False, rotate=False,
                    rounded=False, special_characters=False, precision=3,
                    fontname="helvetica"):
    """Export a fitted fasttree tree in DOT format (scikit-learn's ``export_graphviz``).

    For a tree of binary numeric splits the text equals scikit-learn's ``export_graphviz`` of
    ``decision_tree.to_sklearn()`` called with the same arguments.  Other nodes render too:

    - a category subset split reads ``colour in {red, blue}`` (the left, "True" child takes
      those categories);
    - a multiway split names its feature, and each edge to a child is labelled with that
      branch's categories (``sunny`` or ``{rainy, overcast}``);
    - where the split feature had missing values in training, a binary node gets the line
      ``missing → left`` or ``missing → right`` and the multiway edge that takes them ends
      with ``(missing)``; in a tree grown with C4.5's fractional rows, such a node gets the
      line ``missing → every branch`` (a missing value goes down every branch with a share of
      its weight).

    Parameters
    ----------
    decision_tree : fitted fasttree estimator
    out_file : str, file object or None, default=None
        Where to write the DOT text; None returns it as a string.
    max_depth : int, optional
        Nodes deeper than this are drawn as ``(...)``; None draws the whole tree.
    feature_names : sequence of str, optional
        Names of the features; None writes ``x[i]`` (as scikit-learn does, even for an
        estimator fitted on a DataFrame: pass ``est.feature_names_in_`` to use them).
    class_names : sequence of str or bool, optional
        Names of the classes in ascending order (single-output classifiers); True writes
        ``y[k]``; None leaves the majority class out.
    label : {"all", "root", "none"}, default="all"
        Where to write the field names (``samples =`` and the others).
    filled : bool, default=False
        Fill nodes with the colour of their majority class, the extremity of their value
        (regression) or the purity of the node (several outputs).
    leaves_parallel : bool, default=False
        Draw all leaves at the bottom.
    impurity : bool, default=True
        Show the impurity of each node.
    node_ids : bool, default=False
        Show the id of each node.
    proportion : bool, default=False
        Show samples and values as proportions instead of counts.
    rotate : bool, default=False
        Lay the tree out left to right.
    rounded : bool, default=False
        Rounded node boxes.
    special_characters : bool, default=False
        HTML-like labels (the "less or equal" sign, subscripts) for PostScript output; names
        are HTML-escaped there (scikit-learn does not escape them).
    precision : int, default=3
        Digits after the point of thresholds, impurities and values.
    fontname : str, default="helvetica"

    Returns
    -------
    dot_data : str or None
        The DOT text if ``out_file`` is None.
    """
    _check_int(max_depth, "max_depth", allow_none=True)
    if not isinstance(fontname, str):
        raise TypeError(f"fontname must be a str; got {type(fontname).__name__}.")
    if not (out_file is None or isinstance(out_file, str) or hasattr(out_file, "write")):
        raise TypeError("out_file must be None, a path or an object with a write method; got "
                        f"{type(out_file).__name__}.")
    if special_characters:  # HTML-like labels: names may hold <, > or &
        characters, escape = _HTML_CHARACTERS, html.escape
    else:
        characters, escape = _DOT_CHARACTERS, lambda text: text.replace('"', r"\"")
    labels = NodeLabels(decision_tree, feature_names=feature_names, class_names=class_names,
                        label=label, filled=filled, impurity=impurity, node_ids=node_ids,
                        proportion=proportion, precision=precision, characters=characters,
                        escape=escape, caller="export_graphviz")
    tree = decision_tree.tree_
    style = [s for s, on in (("filled", filled), ("rounded", rounded)) if on]
    lines = ["digraph Tree {",
             "node [shape=box"
             + (f', style="{", ".join(style)}", color="black"' if style else "")
             + f', fontname="{fontname}"] ;']
    if leaves_parallel:
        lines.append("graph [ranksep=equally, splines=polyline] ;")
    lines.append(f'edge [fontname="{fontname}"] ;')
    if rotate:
        lines.append("rankdir=LR ;")
    ranks = {"leaves": []}  # node ids drawn at each depth, for leaves_parallel
    head_angle = 45 if not rotate else -45
    edge_labels = {}
    for node, parent, branch, depth, truncated in drawn_nodes(tree, max_depth):
        is_leaf = tree.children_left[node] == -1
        if truncated:
            ranks["leaves"].append(str(node))
            lines.append(f'{node} [label="(...)"'
                         + (', fillcolor="#C0C0C0"' if filled else "") + "] ;")
        else:
            ranks.setdefault("leaves" if is_leaf else str(depth), []).append(str(node))
            fill = f', fillcolor="{labels.fill_color(node)}"' if filled else ""
            lines.append(f"{node} [label={labels.text(node)}{fill}] ;")
            if not is_leaf:
                edge_labels[node] = labels.edge_labels(node)
        if parent is None:
            continue
        edge_label = edge_labels[parent][branch]
        if edge_label is not None:
            lines.append(f'{parent} -> {node} [label="{edge_label}"] ;')  # escaped already
        elif parent == 0 and not truncated:  # which side of the root's condition is which
            angle, side = (head_angle, "True") if branch == 0 else (-head_angle, "False")
            lines.append(f"{parent} -> {node} [labeldistance=2.5, labelangle={angle}, "
                         f'headlabel="{side}"] ;')
        else:
            lines.append(f"{parent} -> {node} ;")
    if leaves_parallel:
        for rank in sorted(ranks):
            lines.append("{rank=same ; " + "; ".join(ranks[rank]) + "} ;")
    dot = "\n".join(lines) + "\n}"
    if out_file is None:
        return dot
    if isinstance(out_file, str):
        with open(out_file, "w", encoding="utf-8") as handle:
            handle.write(dot)
    else:
        out_file.write(dot)
    return None
