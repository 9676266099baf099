"""fasttree.export_graphviz: scikit-learn's DOT text for binary numeric trees, every node kind
rendered and parseable."""

import io

import numpy as np
import pandas as pd
import pydot
import pytest
import sklearn.tree
from sklearn.datasets import load_diabetes, load_iris

import fasttree
from fasttree import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    NotFittedError,
    export_graphviz,
)

DATA = "/work/shared/data/"
IRIS_X, IRIS_Y = load_iris(return_X_y=True)
DIAB_X, DIAB_Y = load_diabetes(return_X_y=True)
WEIGHTS = np.random.default_rng(0).random(IRIS_Y.shape[0]) * 2

OPTIONS = [
    {},
    {"class_names": True},
    {"filled": True},
    {"proportion": True, "precision": 1},
    {"node_ids": True, "label": "root"},
    {"rounded": True, "filled": True, "leaves_parallel": True, "rotate": True},
    {"impurity": False, "label": "none"},
    {"max_depth": 1},
    {"max_depth": 0, "filled": True},
    {"special_characters": True, "node_ids": True},
    {"fontname": "times", "precision": 5},
]

FITTED = {
    "classifier": lambda: DecisionTreeClassifier(max_depth=4).fit(IRIS_X, IRIS_Y),
    "weighted": lambda: DecisionTreeClassifier(max_depth=3, criterion="entropy").fit(
        IRIS_X, IRIS_Y, sample_weight=WEIGHTS),
    "multi_output_classifier": lambda: DecisionTreeClassifier(max_depth=2).fit(
        IRIS_X, np.c_[IRIS_Y, IRIS_Y % 2]),
    "gain_ratio": lambda: DecisionTreeClassifier(max_depth=3, criterion="gain_ratio").fit(
        IRIS_X, IRIS_Y),
    "regressor": lambda: DecisionTreeRegressor(max_depth=3).fit(DIAB_X, DIAB_Y),
    "multi_output_regressor": lambda: DecisionTreeRegressor(max_depth=2).fit(
        DIAB_X, np.c_[DIAB_Y, DIAB_Y / 3]),
}


@pytest.mark.parametrize("kind", sorted(FITTED))
def test_equals_sklearn_export_graphviz(kind):
    est = FITTED[kind]()
    converted = est.to_sklearn()
    names = [f"feature {i}" for i in range(est.n_features_in_)]
    options = OPTIONS + [{"feature_names": names, "filled": True}]
    if est._estimator_type == "classifier" and est.n_outputs_ == 1:
        options.append({"class_names": ["setosa", "versicolor", 'vir"ginica'],
                        "feature_names": names})
    for kwargs in options:
        expected = sklearn.tree.export_graphviz(converted, **kwargs)
        assert export_graphviz(est, **kwargs) == expected, kwargs


def test_out_file(tmp_path):
    est = FITTED["classifier"]()
    text = export_graphviz(est)
    path = tmp_path / "tree.dot"
    assert export_graphviz(est, str(path)) is None
    assert path.read_text(encoding="utf-8") == text
    buffer = io.StringIO()
    assert export_graphviz(est, buffer) is None
    assert buffer.getvalue() == text


def _load(name):
    frame = pd.read_csv(DATA + name)
    frame = frame[frame.iloc[:, -1].notna()]
    return frame.iloc[:, :-1], frame.iloc[:, -1]


def _parse(dot):
    """Node ids and (parent, child) edges of DOT text, read by pydot."""
    (graph,) = pydot.graph_from_dot_data(dot)
    nodes = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    edges = [(int(e.get_source()), int(e.get_destination())) for e in graph.get_edges()]
    return graph, nodes, edges


def _tree_edges(tree):
    parent = tree.parent()
    return sorted((int(parent[i]), i) for i in range(1, tree.node_count))


@pytest.mark.parametrize("name, make, special_characters", [
    ("weather.csv", ID3Classifier, False),
    ("weather_numeric.csv", C45Classifier, True),
    ("lenses.csv", ID3Classifier, True),
    ("zoo.csv", ID3Classifier, False),
    ("adult_sample_missing.csv", lambda: DecisionTreeClassifier(max_depth=4), True),
    ("adult_sample_missing.csv", C45Classifier, False),
    ("heart_disease.csv", lambda: DecisionTreeClassifier(max_depth=3), False),
    ("heart_disease.csv", lambda: ID3Classifier(max_depth=2), True),
    ("heart_disease.csv", lambda: C45Classifier(max_depth=3), False),
    ("imports_85.csv", lambda: DecisionTreeRegressor(max_depth=3), True),
    ("imports_85.csv", lambda: DecisionTreeRegressor(max_depth=2, categorical_split="multiway"),
     False),
])
def test_every_node_kind_parses(name, make, special_characters):
    X, y = _load(name)
    est = make().fit(X, y)
    dot = export_graphviz(est, feature_names=list(est.feature_names_in_), filled=True,
                          special_characters=special_characters, node_ids=True)
    graph, nodes, edges = _parse(dot)
    tree = est.tree_
    assert sorted(int(n.get_name()) for n in nodes) == list(range(tree.node_count))
    assert sorted(edges) == _tree_edges(tree)
    # every node's label starts with its id
    for node in nodes:
        assert f"node {'&#35;' if special_characters else '#'}{node.get_name()}" in \
            node.get_label()


def test_categorical_nodes_worded():
    X, y = _load("weather.csv")
    est = ID3Classifier().fit(X, y)
    dot = export_graphviz(est, feature_names=list(est.feature_names_in_))
    graph, nodes, edges = _parse(dot)
    tree = est.tree_
    # the root splits outlook three ways: its label names the feature, its edges the categories
    root = graph.get_node("0")[0].get_label()
    assert root.startswith('"outlook\\n')
    labels = {int(e.get_destination()): e.get_label() for e in graph.get_edges()
              if e.get_source() == "0"}
    children = range(tree.children_left[0], tree.children_right[0] + 1)
    assert [labels[c] for c in children] == ['"overcast"', '"rainy"', '"sunny"']
    assert sorted(est.categories_[0]) == ["overcast", "rainy", "sunny"]

    X, y = _load("heart_disease.csv")
    est = DecisionTreeClassifier(max_depth=2).fit(X, y)
    dot = export_graphviz(est, feature_names=list(est.feature_names_in_))
    tree = est.tree_
    assert tree.split_kind[0] == 1  # a subset of thal's categories goes left
    thal = list(est.feature_names_in_).index("thal")
    assert tree.feature[0] == thal
    left = [c for c, (b, seen) in enumerate(zip(*tree.category_map(0)))
            if b == 0 and seen and c < len(est.categories_[thal])]
    expected = "thal in {" + ", ".join(str(est.categories_[thal][c]) for c in left) + "}"
    assert f'0 [label="{expected}\\n' in dot


def test_missing_routing_shown():
    X, y = _load("heart_disease.csv")
    est = DecisionTreeClassifier(max_depth=3).fit(X, y)
    dot = export_graphviz(est)
    graph = pydot.graph_from_dot_data(dot)[0]
    tree = est.tree_
    for node in range(tree.node_count):
        label = graph.get_node(str(node))[0].get_label()
        internal = tree.children_left[node] != -1
        shown = internal and est.missing_in_fit_[tree.feature[node]]
        side = "left" if tree.missing_branch[node] == 0 else "right"
        assert (f"missing → {side}" in label) == bool(shown)
    assert "missing →" in dot

    # fractional rows: a missing value goes down every branch
    est = C45Classifier(max_depth=3).fit(X, y)
    dot = export_graphviz(est)
    assert est.tree_.fractional_missing
    assert "missing → every branch" in dot

    # multiway split with missing values in training: the edge taking them is marked
    est = DecisionTreeClassifier(max_depth=2, categorical_split="multiway",
                                 criterion="entropy").fit(X, y)
    graph = pydot.graph_from_dot_data(export_graphviz(est))[0]
    tree = est.tree_
    node = int(np.flatnonzero((tree.split_kind == 2) & est.missing_in_fit_[tree.feature])[0])
    child = tree.children_left[node] + tree.missing_branch[node]
    edge = graph.get_edge(str(node), str(child))[0]
    assert edge.get_label().endswith(' (missing)"')


def test_html_labels_escape_names():
    X, y = _load("adult_sample_missing.csv")
    est = DecisionTreeClassifier(max_depth=2).fit(X, y)
    assert "<=50K" in list(est.classes_)
    dot = export_graphviz(est, class_names=list(est.classes_), special_characters=True)
    assert "class = &lt;=50K>" in dot and "class = <=50K" not in dot
    _, nodes, edges = _parse(dot)
    assert len(nodes) == est.tree_.node_count


def test_label_text_matches_export_text_wording():
    """One wording: a subset condition reads the same in export_text and export_graphviz."""
    X, y = _load("adult_sample_missing.csv")
    est = DecisionTreeClassifier(max_depth=1).fit(X, y)
    names = list(est.feature_names_in_)
    first_line = fasttree.export_text(est, feature_names=names).splitlines()[0]
    condition = first_line.removeprefix("|--- ").split(" (missing")[0]
    assert f'0 [label="{condition}\\n' in export_graphviz(est, feature_names=names)


def test_export_text_marks_fractional_missing_on_every_branch():
    """C4.5's fractional rows: each branch line of a node whose feature had missing values in
    training reads ``(missing → every branch)``, the words of export_graphviz's line."""
    X, y = _load("heart_disease.csv")
    est = C45Classifier(max_depth=3).fit(X, y)
    tree = est.tree_
    assert tree.fractional_missing
    marker = "missing → every branch"
    assert marker in export_graphviz(est)
    lines = fasttree.export_text(est).splitlines()
    marked = [line for line in lines if line.endswith(f" ({marker})")]
    internal = np.flatnonzero(tree.children_left != -1)
    shared = internal[est.missing_in_fit_[tree.feature[internal]]]
    assert len(shared) > 0 and len(shared) < len(internal)  # both kinds of node are shown
    n_branches = tree.children_right - tree.children_left + 1
    assert len(marked) == int(n_branches[shared].sum())
    assert sum("missing" in line for line in lines) == len(marked)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"label": "some"}, ValueError, "label"),
    ({"precision": -1}, ValueError, "precision"),
    ({"max_depth": 1.5}, ValueError, "max_depth"),
    ({"feature_names": ["a", "b"]}, ValueError, "feature_names"),
    ({"feature_names": [1, 2, 3, 4]}, ValueError, "strings"),
    ({"class_names": ["a"]}, ValueError, "class_names"),
    ({"out_file": 3}, TypeError, "out_file"),
    ({"fontname": 3}, TypeError, "fontname"),
])
def test_bad_arguments(kwargs, error, match):
    est = FITTED["classifier"]()
    with pytest.raises(error, match=match):
        export_graphviz(est, **kwargs)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        export_graphviz(DecisionTreeClassifier())


def test_not_a_fasttree_tree():
    est = FITTED["classifier"]()
    converted = est.to_sklearn()
    for function in (export_graphviz, fasttree.export_text, fasttree.plot_tree):
        with pytest.raises(TypeError, match="fasttree tree estimator"):
            function(converted)
        # scikit-learn's words (its test_export.py matches them) for what is no estimator
        with pytest.raises(TypeError, match="got Tree, which is not an estimator instance"):
            function(est.tree_)
