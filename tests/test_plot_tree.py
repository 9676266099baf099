"""fasttree.plot_tree: scikit-learn's node texts and look; multiway nodes drawn with every child."""

import builtins

import matplotlib
import numpy as np
import pandas as pd
import pytest
import sklearn.tree
from sklearn.datasets import load_diabetes, load_iris

from fasttree import DecisionTreeClassifier, DecisionTreeRegressor, ID3Classifier, plot_tree

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

DATA = "/work/shared/data/"
IRIS_X, IRIS_Y = load_iris(return_X_y=True)
DIAB_X, DIAB_Y = load_diabetes(return_X_y=True)


@pytest.fixture
def ax():
    figure, axes = plt.subplots(figsize=(8, 5))
    yield axes
    plt.close(figure)


def _boxes(annotations):
    """The node boxes (edge labels have no box)."""
    return [a for a in annotations if a.get_bbox_patch() is not None]


@pytest.mark.parametrize("est, kwargs", [
    (DecisionTreeClassifier(max_depth=3), {}),
    (DecisionTreeClassifier(max_depth=4), {"filled": True, "rounded": True,
                                           "class_names": ["a", "b", "c"], "node_ids": True}),
    (DecisionTreeClassifier(max_depth=5), {"max_depth": 2, "proportion": True}),
    (DecisionTreeClassifier(max_depth=2), {"max_depth": 0, "filled": True}),
    (DecisionTreeRegressor(max_depth=3), {"filled": True, "impurity": False, "label": "root",
                                          "precision": 1}),
])
def test_same_texts_as_sklearn(est, kwargs, ax):
    X, y = (IRIS_X, IRIS_Y) if est._estimator_type == "classifier" else (DIAB_X, DIAB_Y)
    est.fit(X, y)
    ours = plot_tree(est, ax=ax, **kwargs)
    figure, sklearn_ax = plt.subplots(figsize=(8, 5))
    try:
        theirs = sklearn.tree.plot_tree(est.to_sklearn(), ax=sklearn_ax, **kwargs)
        assert [a.get_text() for a in ours] == [a.get_text() for a in theirs]
        assert [a.get_bbox_patch().get_facecolor() for a in _boxes(ours)] == [
            a.get_bbox_patch().get_facecolor() for a in _boxes(theirs)]
    finally:
        plt.close(figure)
    max_depth = kwargs.get("max_depth")
    drawn = est.tree_.node_count if max_depth is None else int(
        np.count_nonzero(est.tree_.depth <= max_depth + 1))
    assert len(_boxes(ours)) == drawn
    assert all(a.axes is ax for a in ours)


def test_multiway_tree_draws_every_child(ax):
    frame = pd.read_csv(DATA + "weather.csv")
    est = ID3Classifier().fit(frame.iloc[:, :-1], frame.iloc[:, -1])
    tree = est.tree_
    assert tree.n_children.max() == 3
    annotations = plot_tree(est, ax=ax, feature_names=list(est.feature_names_in_))
    boxes = _boxes(annotations)
    edge_labels = [a.get_text() for a in annotations if a.get_bbox_patch() is None]
    assert len(boxes) == tree.node_count
    assert sorted(edge_labels) == sorted(
        str(c) for node in np.flatnonzero(tree.n_children > 0)
        for c in est.categories_[tree.feature[node]])
    # pre-order: find each node's box by walking the tree the same way
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(range(tree.children_left[node], tree.children_right[node] + 1))
                     if tree.children_left[node] != -1 else [])
    position = {node: np.array(box.xyann) for node, box in zip(order, boxes)}
    for node in np.flatnonzero(tree.n_children > 0):
        children = range(tree.children_left[node], tree.children_right[node] + 1)
        xs = [position[c][0] for c in children]
        assert xs == sorted(xs) and len(set(xs)) == len(xs)  # left to right, apart
        assert all(position[c][1] < position[node][1] for c in children)  # below
        assert position[node][0] == pytest.approx((xs[0] + xs[-1]) / 2)  # centred
    leaves = sorted(position[n][0] for n in np.flatnonzero(tree.n_children == 0))
    assert np.allclose(np.diff(leaves), leaves[1] - leaves[0])  # evenly spaced
    assert boxes[0].get_text().startswith("outlook\n")


def test_current_axes_and_fontsize():
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    figure = plt.figure()
    try:
        annotations = plot_tree(est, fontsize=7)
        assert all(a.axes is plt.gca() for a in annotations)
        assert {a.get_fontsize() for a in annotations} == {7}
    finally:
        plt.close(figure)


def test_bad_max_depth(ax):
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    with pytest.raises(ValueError, match="max_depth"):
        plot_tree(est, ax=ax, max_depth=-1)


def test_without_matplotlib(monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    est = DecisionTreeClassifier(max_depth=1).fit(IRIS_X, IRIS_Y)
    with pytest.raises(ImportError, match=r"fasttree\[plot\]"):
        plot_tree(est)
