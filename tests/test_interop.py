"""est.to_sklearn(): a fitted scikit-learn tree that predicts, routes and explains as fasttree."""

import numpy as np
import onnxruntime
import pandas as pd
import pytest
import sklearn.tree
from skl2onnx import to_onnx
from sklearn.datasets import load_diabetes, load_iris
from sklearn.utils.validation import check_is_fitted

import fasttree
from fasttree import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    ID3Classifier,
    NotFittedError,
)
from fasttree.interop import to_sklearn

DATA = "/work/shared/data/"
RNG = np.random.default_rng(0)
IRIS_X, IRIS_Y = (a.astype(dtype) for a, dtype in zip(load_iris(return_X_y=True),
                                                       (np.float32, np.int64)))
DIAB_X, DIAB_Y = load_diabetes(return_X_y=True)
DIAB_X = DIAB_X.astype(np.float32)


def _with_nan(X, fraction=0.15, seed=1):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


IRIS_NAN = _with_nan(IRIS_X)
DIAB_NAN = _with_nan(DIAB_X, 0.1)
WEIGHTS = RNG.random(IRIS_X.shape[0]) * 3


def _assert_same_tree(est, X):
    """The converted estimator's predictions, leaves, paths and importances equal fasttree's."""
    converted = est.to_sklearn()
    expected_class = (sklearn.tree.DecisionTreeClassifier if est._estimator_type == "classifier"
                      else sklearn.tree.DecisionTreeRegressor)
    assert type(converted) is expected_class
    check_is_fitted(converted)
    assert converted.n_features_in_ == est.n_features_in_
    assert converted.n_outputs_ == est.n_outputs_
    assert converted.max_features_ == est.max_features_
    assert converted.tree_.node_count == est.tree_.node_count
    assert converted.get_depth() == est.get_depth()
    assert converted.get_n_leaves() == est.get_n_leaves()
    np.testing.assert_array_equal(converted.predict(X), est.predict(X))
    if est._estimator_type == "classifier":
        expected, got = est.predict_proba(X), converted.predict_proba(X)
        if est.n_outputs_ == 1:
            expected, got = [expected], [got]
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)
        classes = [est.classes_] if est.n_outputs_ == 1 else est.classes_
        converted_classes = [converted.classes_] if est.n_outputs_ == 1 else converted.classes_
        assert len(converted_classes) == len(classes)
        for e, g in zip(classes, converted_classes):
            np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(converted.n_classes_, est.n_classes_)
    np.testing.assert_array_equal(converted.apply(X), est.apply(X))
    path_sklearn, path_fasttree = converted.decision_path(X), est.decision_path(X)
    assert path_sklearn.shape == path_fasttree.shape
    assert (path_sklearn != path_fasttree).nnz == 0
    # the same formula summed in another order: equal to the last bits
    np.testing.assert_allclose(converted.feature_importances_, est.feature_importances_,
                               rtol=1e-12, atol=1e-15)
    return converted


@pytest.mark.parametrize("est, X, y, weights", [
    (DecisionTreeClassifier(random_state=0), IRIS_X, IRIS_Y, None),
    (DecisionTreeClassifier(criterion="entropy", max_depth=4), IRIS_NAN, IRIS_Y, WEIGHTS),
    (DecisionTreeClassifier(criterion="gain_ratio", categorical_features=None), IRIS_NAN,
     IRIS_Y, None),
    (DecisionTreeClassifier(class_weight="balanced", max_leaf_nodes=6), IRIS_NAN, IRIS_Y,
     WEIGHTS),
    (DecisionTreeClassifier(ccp_alpha=0.02), IRIS_NAN, IRIS_Y, None),
    (DecisionTreeClassifier(pruning="reduced_error", random_state=0), IRIS_NAN, IRIS_Y, None),
    (DecisionTreeClassifier(pruning="error_based"), IRIS_X, IRIS_Y, WEIGHTS),
    (DecisionTreeClassifier(splitter="hist", max_bins=16), IRIS_NAN, IRIS_Y, WEIGHTS),
    (ExtraTreeClassifier(random_state=0), IRIS_NAN, IRIS_Y, None),
    (DecisionTreeClassifier(max_depth=3), IRIS_X, np.c_[IRIS_Y, IRIS_Y % 2], None),
    (DecisionTreeRegressor(max_depth=6), DIAB_X, DIAB_Y, None),
    (DecisionTreeRegressor(min_samples_leaf=5), DIAB_NAN, DIAB_Y, RNG.random(DIAB_Y.shape[0])),
    (DecisionTreeRegressor(criterion="poisson", max_depth=5), DIAB_NAN, DIAB_Y, None),
    (DecisionTreeRegressor(criterion="absolute_error", max_depth=4), DIAB_X, DIAB_Y, None),
    (DecisionTreeRegressor(splitter="hist", max_depth=6), DIAB_NAN, DIAB_Y, None),
    (ExtraTreeRegressor(random_state=0, max_depth=8), DIAB_NAN, DIAB_Y, None),
    (DecisionTreeRegressor(max_depth=4), DIAB_NAN, np.c_[DIAB_Y, DIAB_X[:, 0] * 100], None),
])
def test_same_tree(est, X, y, weights):
    est.fit(X, y, sample_weight=weights)
    converted = _assert_same_tree(est, X)
    # rows unlike the training rows, NaN in every column included
    X_new = _with_nan(np.random.default_rng(3).normal(X[:100].mean(0), 2 * X.std(0) + 1e-3,
                                                      (100, X.shape[1])).astype(np.float32),
                      0.3, seed=4)
    np.testing.assert_array_equal(converted.apply(X_new), est.apply(X_new))
    np.testing.assert_array_equal(converted.predict(X_new), est.predict(X_new))


def test_nan_routing_is_copied():
    est = DecisionTreeClassifier(random_state=0).fit(IRIS_NAN, IRIS_Y)
    tree = est.to_sklearn().tree_
    internal = est.tree_.children_left != -1
    assert est.missing_in_fit_.any()
    np.testing.assert_array_equal(tree.missing_go_to_left[internal],
                                  est.tree_.missing_branch[internal] == 0)
    assert 0 < tree.missing_go_to_left[internal].sum() < internal.sum()  # both directions


def test_params_mapped():
    est = DecisionTreeClassifier(criterion="gain_ratio", splitter="hist", max_depth=3,
                                 min_samples_leaf=2, random_state=np.random.default_rng(0),
                                 categorical_features=None).fit(IRIS_X, IRIS_Y)
    params = est.to_sklearn().get_params()
    assert params["criterion"] == "entropy"
    assert params["splitter"] == "best"
    assert params["random_state"] is None
    assert (params["max_depth"], params["min_samples_leaf"]) == (3, 2)
    extra = ExtraTreeRegressor(random_state=1).fit(DIAB_X, DIAB_Y).to_sklearn()
    assert extra.get_params()["splitter"] == "random"
    assert extra.get_params()["max_features"] == 1.0
    # the converted parameters are valid scikit-learn parameters: it refits
    sklearn.base.clone(extra).fit(DIAB_X, DIAB_Y)


def test_string_classes_and_feature_names():
    names = ["sepal length", "sepal width", "petal length", "petal width"]
    X = pd.DataFrame(IRIS_NAN, columns=names)
    y = np.array(["setosa", "versicolor", "virginica"])[IRIS_Y]
    est = DecisionTreeClassifier(max_depth=4).fit(X, y)
    converted = _assert_same_tree(est, X)
    assert list(converted.classes_) == ["setosa", "versicolor", "virginica"]
    assert list(converted.feature_names_in_) == names
    assert sklearn.tree.export_text(converted, feature_names=names).startswith(
        "|--- petal")


def test_sklearn_export_text_of_converted_tree():
    est = DecisionTreeClassifier(max_depth=4).fit(IRIS_X, IRIS_Y)
    assert fasttree.export_text(est, show_weights=True) == sklearn.tree.export_text(
        est.to_sklearn(), show_weights=True)
    reg = DecisionTreeRegressor(max_depth=3).fit(DIAB_X, DIAB_Y)
    assert fasttree.export_text(reg) == sklearn.tree.export_text(reg.to_sklearn())


def test_export_text_max_depth_counts_as_sklearn():
    """max_depth=0 prints the root's split and its leaves; every depth truncates where
    scikit-learn's does, with the same ``truncated branch of depth N``."""
    stump = DecisionTreeRegressor(max_depth=1).fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    assert fasttree.export_text(stump, feature_names=["x"], max_depth=0) == (
        "|--- x <= 1.50\n|   |--- value: [0.00]\n|--- x >  1.50\n|   |--- value: [1.00]\n")
    clf = DecisionTreeClassifier(max_depth=5).fit(IRIS_X, IRIS_Y)
    reg = DecisionTreeRegressor(max_depth=5).fit(DIAB_X, DIAB_Y)
    for est in (clf, reg):
        for max_depth in range(6):
            assert fasttree.export_text(est, max_depth=max_depth) == sklearn.tree.export_text(
                est.to_sklearn(), max_depth=max_depth), max_depth
    assert "truncated branch of depth 2" in fasttree.export_text(clf, max_depth=2)


def test_export_text_spacing_as_sklearn():
    est = DecisionTreeClassifier(max_depth=3).fit(IRIS_X, IRIS_Y)
    assert fasttree.export_text(est, spacing=1, max_depth=0) == (
        "|- feature_2 <= 2.45\n| |- class: 0\n|- feature_2 >  2.45\n"
        "| |- truncated branch of depth 3\n")
    for spacing in (1, 2, 5):
        assert fasttree.export_text(est, spacing=spacing, show_weights=True) == \
            sklearn.tree.export_text(est.to_sklearn(), spacing=spacing, show_weights=True)


@pytest.mark.parametrize("constructor", [list, np.array, tuple])
def test_export_text_class_names_as_sklearn(constructor):
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    names = constructor(["setosa", "versicolor", "virginica"])
    text = fasttree.export_text(est, class_names=names)
    assert "class: setosa" in text and "class: 0" not in text
    assert text == sklearn.tree.export_text(est.to_sklearn(), class_names=names)
    # the given names replace the labels in classes_, by position
    strings = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, np.array(["a", "b", "c"])[IRIS_Y])
    assert fasttree.export_text(strings, class_names=names) == text


def _sklearn_message(call, *args, **kwargs):
    with pytest.raises(ValueError) as info:
        call(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize("kwargs", [
    {"feature_names": ["a"]},
    {"feature_names": ["a", "b", "c", "d", "e"]},
    {"class_names": ["a"]},
    {"class_names": ["a", "b", "c", "d"]},
])
def test_export_text_errors_worded_as_sklearn(kwargs):
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    expected = _sklearn_message(sklearn.tree.export_text, est.to_sklearn(), **kwargs)
    assert _sklearn_message(fasttree.export_text, est, **kwargs) == expected


@pytest.mark.parametrize("kwargs, error, match", [
    ({"max_depth": -1}, ValueError, "max_depth must be a non-negative int or None"),
    ({"max_depth": 1.5}, ValueError, "max_depth"),
    ({"spacing": 0}, ValueError, "spacing must be a positive int"),
    ({"spacing": None}, ValueError, "spacing"),
    ({"decimals": -1}, ValueError, "decimals must be a non-negative int"),
    ({"show_weights": 1}, TypeError, "show_weights must be a bool"),
    ({"feature_names": "abcd"}, ValueError, "feature_names must be a 1-D sequence"),
    ({"feature_names": [["a", "b", "c", "d"]]}, ValueError, "feature_names must be a 1-D"),
    ({"class_names": "abc"}, ValueError, "class_names must be a 1-D sequence"),
])
def test_export_text_bad_arguments(kwargs, error, match):
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    with pytest.raises(error, match=match):
        fasttree.export_text(est, **kwargs)


def test_export_text_class_names_of_several_outputs_refused():
    y = np.column_stack([IRIS_Y, IRIS_Y % 2])
    est = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, y)
    assert "class: [" in fasttree.export_text(est)
    with pytest.raises(ValueError, match="class_names.*one output"):
        fasttree.export_text(est, class_names=["a", "b", "c"])


@pytest.mark.parametrize("est, X, y", [
    (DecisionTreeClassifier(random_state=0), IRIS_X, IRIS_Y),
    (DecisionTreeClassifier(max_depth=4), IRIS_X, np.array(["a", "b", "c"])[IRIS_Y]),
    (DecisionTreeRegressor(max_depth=6), DIAB_X, DIAB_Y),
])
def test_onnx_predictions(est, X, y):
    """skl2onnx converts the converted tree and onnxruntime predicts as fasttree (no NaN:
    skl2onnx 1.20 does not carry ``missing_go_to_left``, not even for scikit-learn's trees)."""
    est.fit(X, y)
    converted = est.to_sklearn()
    options = {"zipmap": False} if est._estimator_type == "classifier" else None
    model = to_onnx(converted, X[:1], options=options)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    outputs = session.run(None, {session.get_inputs()[0].name: X})
    if est._estimator_type == "classifier":
        np.testing.assert_array_equal(outputs[0], est.predict(X))
        np.testing.assert_allclose(outputs[1], est.predict_proba(X), rtol=1e-6)
    else:  # onnxruntime sums leaf values in float32
        np.testing.assert_allclose(outputs[0].ravel(), est.predict(X), rtol=1e-5)


def _load(name):
    frame = pd.read_csv(DATA + name)
    frame = frame[frame.iloc[:, -1].notna()]
    return frame.iloc[:, :-1], frame.iloc[:, -1]


def test_categorical_trees_are_refused():
    X, y = _load("weather.csv")
    with pytest.raises(ValueError, match="categorical splits"):
        ID3Classifier().fit(X, y).to_sklearn()
    X, y = _load("heart_disease.csv")
    with pytest.raises(ValueError, match="categorical splits"):
        DecisionTreeClassifier(max_depth=3).fit(X, y).to_sklearn()
    # a categorical column that no split uses is still an input scikit-learn cannot take
    X = pd.DataFrame({"x": IRIS_X[:, 2], "colour": np.array(["red", "blue"])[IRIS_Y % 2]})
    est = DecisionTreeClassifier(max_depth=1).fit(X, IRIS_Y == 0)
    assert est.tree_.split_kind[0] == 0
    with pytest.raises(ValueError, match="categorical features"):
        est.to_sklearn()


def test_fractional_missing_is_refused():
    with pytest.raises(ValueError, match="fractional"):
        C45Classifier().fit(IRIS_NAN, IRIS_Y).to_sklearn()
    with pytest.raises(ValueError, match="fractional"):
        DecisionTreeClassifier(missing="fractional").fit(IRIS_NAN, IRIS_Y).to_sklearn()


def test_not_fitted():
    with pytest.raises(NotFittedError):
        DecisionTreeClassifier().to_sklearn()
    with pytest.raises(TypeError, match="fasttree tree estimator"):
        to_sklearn(sklearn.tree.DecisionTreeClassifier().fit(IRIS_X, IRIS_Y))
