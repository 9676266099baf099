"""Model files: round trips of every estimator kind, the committed fixture, and damaged files."""

import importlib.util
import io
import json
import pickle
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import fasttree
from fasttree import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    ID3Classifier,
    NotFittedError,
    export_text,
)
from fasttree.model_io import FORMAT_VERSION, TREE_ARRAYS
from fasttree.tree import Tree

DATA = Path(__file__).with_name("data")


def _fixture_module():
    spec = importlib.util.spec_from_file_location("make_model_fixture",
                                                  DATA / "make_model_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- data --------------------------------------------------------------------------------------
def numeric(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).round(2)
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(0, 0.3, n)
    return X, score


def labels3(score):
    return np.digitize(score, [-0.3, 0.8])  # 0, 1, 2


def with_missing(seed=1):
    X, score = numeric(seed=seed)
    X[np.random.default_rng(seed).random(X.shape) < 0.15] = np.nan
    return X, score


def frame(seed=2):
    """Numeric (with NaN), pandas categorical and string columns; string labels."""
    rng = np.random.default_rng(seed)
    n = 90
    df = pd.DataFrame({
        "size": rng.normal(size=n).round(2),
        "color": pd.Categorical(rng.choice(["red", "green", "blue"], n),
                                categories=["red", "green", "blue", "black"]),
        "shape": rng.choice(["round", "square", "flat", "oval"], n).astype(object),
    })
    df.loc[rng.random(n) < 0.1, "size"] = np.nan
    df.loc[rng.random(n) < 0.1, "shape"] = None
    score = df["size"].fillna(0) + (df["color"] == "red") + (df["shape"] == "flat") \
        + rng.normal(0, 0.3, n)
    return df, np.array(["lo", "mid", "hi"])[np.digitize(score, [0.0, 1.0])], score.to_numpy()


def case(make, kind="numeric"):
    """(estimator factory, X, y, fit kwargs) for one round-trip case."""
    def build():
        X, score = numeric()
        if kind == "numeric":
            return make(), X, labels3(score), {}
        if kind == "regression":
            return make(), X, score, {}
        if kind == "poisson":
            return make(), X, np.exp(score), {}
        if kind == "weights":
            return make(), X, labels3(score), {"sample_weight": np.linspace(0.5, 3.0, len(X))}
        if kind == "missing":
            X, score = with_missing()
            return make(), X, labels3(score), {}
        if kind == "missing_regression":
            X, score = with_missing()
            return make(), X, score, {}
        if kind == "frame":
            df, y, _ = frame()
            return make(), df, y, {}
        if kind == "frame_regression":
            df, _, score = frame()
            return make(), df, score, {}
        if kind == "multi_output":
            y = np.c_[labels3(score), (X[:, 2] > 0).astype(int)]
            return make(), X, y, {}
        if kind == "multi_output_regression":
            return make(), X, np.c_[score, X[:, 3] * 2], {}
        if kind == "bool_labels":
            return make(), X, score > 0, {}
        if kind == "codes":  # integer category codes in a NumPy array
            X = X.copy()
            X[:, 3] = np.abs(np.round(X[:, 3] * 2))
            return make(), X, labels3(score), {}
        if kind == "sparse":
            Xs = X.copy()
            Xs[np.abs(Xs) < 0.5] = 0.0
            return make(), sp.csc_matrix(Xs), labels3(score), {}
        raise AssertionError(kind)
    return build


CASES = {
    "gini": case(lambda: DecisionTreeClassifier(max_depth=6)),
    "entropy": case(lambda: DecisionTreeClassifier(criterion="entropy")),
    "log_loss": case(lambda: DecisionTreeClassifier(criterion="log_loss", max_leaf_nodes=9)),
    "gain_ratio": case(lambda: DecisionTreeClassifier(criterion="gain_ratio")),
    "squared_error": case(lambda: DecisionTreeRegressor(max_depth=5), "regression"),
    "absolute_error": case(lambda: DecisionTreeRegressor(criterion="absolute_error",
                                                         max_depth=4), "regression"),
    "poisson": case(lambda: DecisionTreeRegressor(criterion="poisson", max_depth=4), "poisson"),
    "weights_class_weight": case(lambda: DecisionTreeClassifier(
        class_weight={0: 2.0, 2: 0.5}), "weights"),
    "balanced": case(lambda: DecisionTreeClassifier(class_weight="balanced"), "weights"),
    "missing": case(lambda: DecisionTreeClassifier(), "missing"),
    "missing_regression": case(lambda: DecisionTreeRegressor(max_depth=5), "missing_regression"),
    "frame_binary_split": case(lambda: DecisionTreeClassifier(), "frame"),
    "frame_regression": case(lambda: DecisionTreeRegressor(max_depth=5), "frame_regression"),
    "frame_multiway": case(lambda: DecisionTreeClassifier(categorical_split="multiway"), "frame"),
    "codes": case(lambda: DecisionTreeClassifier(categorical_features=[3]), "codes"),
    "multi_output": case(lambda: DecisionTreeClassifier(max_depth=5), "multi_output"),
    "multi_output_regression": case(lambda: DecisionTreeRegressor(max_depth=5),
                                    "multi_output_regression"),
    "multi_output_class_weight": case(lambda: DecisionTreeClassifier(
        class_weight=[{0: 2.0}, {1: 3.0}]), "multi_output"),
    "bool_labels": case(lambda: DecisionTreeClassifier(), "bool_labels"),
    "sparse": case(lambda: DecisionTreeClassifier(max_depth=5), "sparse"),
    "ccp_alpha": case(lambda: DecisionTreeClassifier(ccp_alpha=0.01)),
    "pruning_cost_complexity": case(lambda: DecisionTreeClassifier(
        pruning="cost_complexity", ccp_alpha=0.02)),
    "pruning_reduced_error": case(lambda: DecisionTreeClassifier(
        pruning="reduced_error", random_state=3), "frame"),
    "pruning_reduced_error_regression": case(lambda: DecisionTreeRegressor(
        pruning="reduced_error", random_state=3), "regression"),
    "pruning_error_based": case(lambda: DecisionTreeClassifier(pruning="error_based",
                                                               pruning_confidence=0.1)),
    "pruning_minimum_error": case(lambda: DecisionTreeClassifier(pruning="minimum_error")),
    "pruning_pessimistic": case(lambda: DecisionTreeClassifier(pruning="pessimistic"),
                                "missing"),
    "hist": case(lambda: DecisionTreeClassifier(splitter="hist", max_bins=16), "missing"),
    "hist_regression": case(lambda: DecisionTreeRegressor(splitter="hist", max_bins=8),
                            "regression"),
    "hist_entropy_frame": case(lambda: DecisionTreeClassifier(
        splitter="hist", binning="entropy"), "frame"),
    "random_splitter": case(lambda: DecisionTreeClassifier(splitter="random", random_state=5)),
    "monotonic": case(lambda: DecisionTreeRegressor(monotonic_cst=np.array([1, 0, 0, -1])),
                      "regression"),
    "extra_tree": case(lambda: ExtraTreeClassifier(random_state=np.random.RandomState(0)),
                       "missing"),
    "extra_tree_regression": case(lambda: ExtraTreeRegressor(random_state=7), "regression"),
    "id3": case(lambda: ID3Classifier(max_depth=4), "frame"),
    "c45": case(lambda: C45Classifier(), "frame"),
    "c45_numeric_missing": case(lambda: C45Classifier(pruning_confidence=0.4), "missing"),
}


def assert_same_model(a, b, X):
    """Equal tree arrays, fitted attributes and every prediction ``a`` and ``b`` give on X."""
    assert type(a) is type(b)
    for name in TREE_ARRAYS:
        left, right = getattr(a.tree_, name), getattr(b.tree_, name)
        assert left.dtype == right.dtype, name
        np.testing.assert_array_equal(left, right, err_msg=name)
    assert a.tree_.n_features == b.tree_.n_features
    assert a.tree_.fractional_missing == b.tree_.fractional_missing
    np.testing.assert_array_equal(a.tree_.n_classes, b.tree_.n_classes)
    for name in ("n_features_in_", "n_outputs_", "max_features_", "n_classes_"):
        np.testing.assert_array_equal(getattr(a, name, None), getattr(b, name, None))
    for name in ("is_categorical_", "missing_in_fit_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    if hasattr(a, "feature_names_in_"):
        assert b.feature_names_in_.dtype == a.feature_names_in_.dtype == object
        assert b.feature_names_in_.tolist() == a.feature_names_in_.tolist()
    else:
        assert not hasattr(b, "feature_names_in_")
    for ca, cb in zip(a.categories_, b.categories_):
        assert (ca is None) == (cb is None)
        if ca is not None:
            assert ca.dtype == cb.dtype and ca.tolist() == cb.tolist()
    if hasattr(a, "classes_"):
        classes_a = a.classes_ if a.n_outputs_ > 1 else [a.classes_]
        classes_b = b.classes_ if b.n_outputs_ > 1 else [b.classes_]
        for ca, cb in zip(classes_a, classes_b, strict=True):
            assert ca.dtype == cb.dtype and ca.tolist() == cb.tolist()
    methods = ["predict", "apply"] + (["predict_proba"] if hasattr(a, "classes_") else [])
    for method in methods:
        pa, pb = getattr(a, method)(X), getattr(b, method)(X)
        for ra, rb in zip(pa if isinstance(pa, list) else [pa],
                          pb if isinstance(pb, list) else [pb], strict=True):
            assert ra.dtype == rb.dtype, method
            np.testing.assert_array_equal(ra, rb, err_msg=method)
    assert (a.decision_path(X) != b.decision_path(X)).nnz == 0
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert export_text(a, show_weights=hasattr(a, "classes_")) == export_text(
        b, show_weights=hasattr(b, "classes_"))
    assert a.get_depth() == b.get_depth() and a.get_n_leaves() == b.get_n_leaves()


@pytest.mark.parametrize("name", list(CASES))
def test_round_trip(name, tmp_path):
    est, X, y, fit_kwargs = CASES[name]()
    est.fit(X, y, **fit_kwargs)
    path = tmp_path / "model.ft"
    est.save(path)
    loaded = fasttree.load(path)
    assert_same_model(est, loaded, X)
    expected = est.get_params()
    dropped = isinstance(expected.get("random_state"), np.random.RandomState)
    if dropped:
        expected["random_state"] = None  # stored as null and listed in params_not_saved
        with zipfile.ZipFile(path) as archive:
            meta = json.loads(archive.read("metadata.json"))
        assert meta["params_not_saved"] == ["random_state"]
    got = loaded.get_params()
    assert set(got) == set(expected)
    for key, value in expected.items():
        if isinstance(value, np.ndarray):
            assert isinstance(got[key], np.ndarray) and got[key].dtype == value.dtype
            np.testing.assert_array_equal(got[key], value)
        else:
            assert got[key] == value and type(got[key]) is type(value), key
    # a loaded model pickles like a fitted one, and saves to the same bytes
    assert_same_model(est, pickle.loads(pickle.dumps(loaded)), X)
    again = io.BytesIO()
    loaded.save(again)
    if not dropped:
        assert again.getvalue() == path.read_bytes()


TREE_ARRAY_NAMES = ("children_left", "children_right", "feature", "threshold", "value",
                    "impurity", "n_node_samples", "weighted_n_node_samples", "depth",
                    "split_kind", "missing_branch", "category_offset", "category_n_codes",
                    "category_branch")


def assert_same_tree_arrays(a, b):
    for name in TREE_ARRAY_NAMES:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.flags.c_contiguous == y.flags.c_contiguous, name
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("name", ["gini", "frame_binary_split", "frame_multiway", "codes",
                                  "missing", "multi_output_regression", "c45", "sparse"])
def test_pickle_gives_every_tree_array_back(name):
    est, X, y, fit_kwargs = CASES[name]()
    est.fit(X, y, **fit_kwargs)
    again = pickle.loads(pickle.dumps(est))
    assert_same_tree_arrays(est.tree_, again.tree_)
    assert_same_model(est, again, X)
    # an older pickle's state, every array as the tree holds it, loads too
    old = Tree.__new__(Tree)
    old.__setstate__(est.tree_.__dict__.copy())
    assert_same_tree_arrays(est.tree_, old)


def test_pickle_of_numeric_splits_leaves_out_what_it_can_rebuild():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 6))
    tree = DecisionTreeClassifier(random_state=0).fit(X, X[:, 0] + rng.normal(size=5000) > 0)
    state = tree.tree_.__getstate__()
    for name in ("split_kind", "category_offset", "category_n_codes", "children_right"):
        assert name not in state
    assert state["children_left"].dtype == np.int16  # a few thousand nodes
    full = len(pickle.dumps(tree.tree_.__dict__))
    assert len(pickle.dumps(tree.tree_)) < 0.55 * full


def test_file_objects_and_str_paths(tmp_path):
    X, score = numeric()
    est = DecisionTreeClassifier(max_depth=3).fit(X, labels3(score))
    buffer = io.BytesIO()
    est.save(buffer)
    buffer.seek(0)
    assert_same_model(est, fasttree.load(buffer), X)
    est.save(str(tmp_path / "m.ft"))
    assert_same_model(est, fasttree.load(str(tmp_path / "m.ft")), X)
    # identical models give identical bytes (fixed zip timestamps, no wall-clock timings)
    again = io.BytesIO()
    DecisionTreeClassifier(max_depth=3).fit(X, labels3(score)).save(again)
    assert again.getvalue() == buffer.getvalue()


def test_save_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(NotFittedError):
        DecisionTreeClassifier().save(tmp_path / "m.ft")
    with pytest.raises(TypeError, match="fasttree estimator"):
        fasttree.model_io.save(object(), tmp_path / "m.ft")
    X, _ = numeric()
    labels = np.array([b"a", b"b"])[(X[:, 0] > 0).astype(int)]  # bytes labels
    with pytest.raises(ValueError, match="without pickle"):
        DecisionTreeClassifier().fit(X, labels).save(tmp_path / "m.ft")


def test_load_errors_of_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        fasttree.load(tmp_path / "absent.ft")
    with pytest.raises(IsADirectoryError):
        fasttree.load(tmp_path)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a fasttree model file"):
        fasttree.load(tmp_path / "data.csv")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(ValueError, match="'metadata.json' is missing"):
        fasttree.load(tmp_path / "other.zip")


# -- the committed fixture -------------------------------------------------------------------
def test_fixture_file_still_loads_and_equals_a_fresh_fit():
    fixture = _fixture_module()
    loaded = fasttree.load(fixture.FIXTURE)
    X, y = fixture.make_data()
    fresh = fixture.make_estimator().fit(X, y)
    assert loaded.get_params() == fresh.get_params()
    assert_same_model(fresh, loaded, X)
    assert fixture.FIXTURE.stat().st_size < 50_000
    with zipfile.ZipFile(fixture.FIXTURE) as archive:
        meta = json.loads(archive.read("metadata.json"))
    assert meta["format_version"] == 1 and meta["fasttree_version"] == "0.1.0"


# -- damaged and tampered files --------------------------------------------------------------
@pytest.fixture(scope="module")
def model_bytes():
    df, y, _ = frame()
    est = DecisionTreeClassifier(max_depth=4).fit(df, y)
    buffer = io.BytesIO()
    est.save(buffer)
    return buffer.getvalue()


def members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rebuild(data, meta=None, arrays=None, raw=None, drop=()):
    """A well-formed zip (valid CRCs) from ``data`` with members replaced: ``meta`` edits the
    metadata dict in place, ``arrays`` maps a node array's name to a new array, ``raw`` a
    member's name to new bytes."""
    contents = members(data)
    if meta is not None:
        metadata = json.loads(contents["metadata.json"])
        meta(metadata)
        contents["metadata.json"] = json.dumps(metadata).encode()
    for name, array in (arrays or {}).items():
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=True)
        contents[name + ".npy"] = buffer.getvalue()
    contents.update(raw or {})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, member in contents.items():
            if name not in drop:
                archive.writestr(name, member)
    return out.getvalue()


def test_files_written_before_a_parameter_existed_load_with_its_default():
    """ccp_folds (every estimator) and subtree_raising (C45Classifier) came after format 1:
    a file without them loads, the parameter at its default, the tree as saved."""
    from fasttree import C45Classifier, model_io

    df, y, _ = frame()
    for est, added in [(DecisionTreeClassifier(max_depth=3), ["ccp_folds"]),
                       (C45Classifier(), ["subtree_raising"])]:
        assert [n for n in model_io.PARAMS_ADDED if n in est.get_params()] == added
        est.fit(df, y)
        buffer = io.BytesIO()
        est.save(buffer)

        def drop_added(metadata):
            for name in added:
                del metadata["params"][name]

        loaded = load_bytes(rebuild(buffer.getvalue(), meta=drop_added))
        assert loaded.get_params() == type(est)().set_params(
            **{k: v for k, v in est.get_params().items() if k not in added}).get_params()
        np.testing.assert_array_equal(loaded.predict(df), est.predict(df))

        def drop_another(metadata):
            del metadata["params"]["max_depth"]  # not one added later: refused

        with pytest.raises(ValueError, match="parameters are"):
            load_bytes(rebuild(buffer.getvalue(), meta=drop_another))


def load_bytes(data):
    return fasttree.load(io.BytesIO(data))


def tree_array(data, name):
    return np.load(io.BytesIO(members(data)[name + ".npy"]), allow_pickle=False)


def first_internal(data):
    return int(np.flatnonzero(tree_array(data, "children_left") != -1)[0])


def test_rebuild_without_changes_loads(model_bytes):
    df, _, _ = frame()
    assert load_bytes(rebuild(model_bytes)).predict(df).shape == (len(df),)


def _set(name, index, value):
    def change(data):
        array = tree_array(data, name).copy()
        array[index] = value
        return {name: array}
    return change


TAMPERED_ARRAYS = {
    "child out of range": (_set("children_left", 0, 10_000), "consecutive ids"),
    "right child out of range": (_set("children_right", 0, 10_000), "consecutive ids"),
    "cycle to the root": (lambda d: {"children_left": _cycle(d)}, "consecutive ids"),
    "feature out of range": (_set("feature", 0, 3), "feature is out of range"),
    "negative feature": (_set("feature", 0, -5), "feature is out of range"),
    "NaN leaf value": (_set("value", -1, np.nan), "value holds NaN"),
    "infinite impurity": (_set("impurity", 0, np.inf), "impurity holds NaN"),
    "NaN threshold": (lambda d: {"threshold": _nan_threshold(d)}, "threshold is NaN"),
    "unknown split kind": (_set("split_kind", 0, 7), "unknown split_kind"),
    "missing branch out of range": (_set("missing_branch", 0, 2), "missing_branch"),
    "category map outside": (lambda d: {"category_offset": _categorical_set(
        d, "category_offset", 10**6)}, "map is outside"),
    "category map length": (lambda d: {"category_n_codes": _categorical_set(
        d, "category_n_codes", 2)}, "does not match the feature's categories"),
    "depth": (_set("depth", -1, 99), "depth does not match"),
    "negative weight": (_set("weighted_n_node_samples", 0, -1.0), "negative sample counts"),
    "leaf with feature": (lambda d: {"feature": _leaf_feature(d)}, "a leaf has a split feature"),
    "wrong dtype": (lambda d: {"children_left": tree_array(d, "children_left").astype(
        np.int32)}, "has dtype int32"),
    "float value as float32": (lambda d: {"value": tree_array(d, "value").astype(np.float32)},
                               "has dtype float32"),
    "wrong shape": (lambda d: {"impurity": tree_array(d, "impurity")[:-1]}, "has shape"),
    "2-d node array": (lambda d: {"depth": tree_array(d, "depth")[:, None]}, "has shape"),
    "object dtype": (lambda d: {"feature": tree_array(d, "feature").astype(object)},
                     "has dtype object"),
    "big-endian": (lambda d: {"threshold": tree_array(d, "threshold").astype(">f8")},
                   "has dtype >f8"),
    "fortran order": (lambda d: {"value": np.asfortranarray(tree_array(d, "value"))},
                      "Fortran order"),
}


def _cycle(data):
    left = tree_array(data, "children_left").copy()
    left[np.flatnonzero(left != -1)[-1]] = 0  # the last split node's first child is the root
    return left


def _nan_threshold(data):
    threshold = tree_array(data, "threshold").copy()
    kind = tree_array(data, "split_kind")
    left = tree_array(data, "children_left")
    threshold[np.flatnonzero((left != -1) & (kind == 0))[0]] = np.nan
    return threshold


def _categorical_set(data, name, value):
    array = tree_array(data, name).copy()
    kind = tree_array(data, "split_kind")
    left = tree_array(data, "children_left")
    array[np.flatnonzero((left != -1) & (kind > 0))[0]] = value
    return array


def _leaf_feature(data):
    feature = tree_array(data, "feature").copy()
    feature[np.flatnonzero(tree_array(data, "children_left") == -1)[0]] = 0
    return feature


@pytest.mark.parametrize("name", list(TAMPERED_ARRAYS))
def test_tampered_arrays_raise_value_error(model_bytes, name):
    change, message = TAMPERED_ARRAYS[name]
    with pytest.raises(ValueError, match=message):
        load_bytes(rebuild(model_bytes, arrays=change(model_bytes)))


def test_two_parents_is_not_a_tree(tmp_path):
    # node 0 -> (1, 2), node 1 -> (2, 3) passes check_tree's walk rules; node 2 has two parents
    X, score = numeric()
    est = DecisionTreeRegressor(max_depth=2).fit(X, score)
    data = io.BytesIO()
    est.save(data)
    data = data.getvalue()
    left = tree_array(data, "children_left").copy()
    right = tree_array(data, "children_right").copy()
    assert left[0] == 1 and left[1] == 3
    left[1], right[1] = 2, 3
    with pytest.raises(ValueError, match="do not form a tree"):
        load_bytes(rebuild(data, arrays={"children_left": left, "children_right": right}))


def test_object_npy_is_never_unpickled(model_bytes, tmp_path):
    marker = tmp_path / "pwned"
    payload = np.empty(tree_array(model_bytes, "feature").shape, dtype=object)
    payload[0] = _Exploit(str(marker))
    with pytest.raises(ValueError, match="dtype object"):
        load_bytes(rebuild(model_bytes, arrays={"feature": payload}))
    assert not marker.exists()


class _Exploit:
    """Unpickling this would create a file: proof that code ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def _meta_set(*keys, value):
    def change(meta):
        target = meta
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


def _meta_del(*keys):
    def change(meta):
        target = meta
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]
    return change


TAMPERED_METADATA = {
    "newer format": (_meta_set("format_version", value=FORMAT_VERSION + 1),
                     f"format {FORMAT_VERSION + 1}; this version .* reads up to format "
                     f"{FORMAT_VERSION}"),
    "format_version as str": (_meta_set("format_version", value="1"), "positive integer"),
    "format_version as bool": (_meta_set("format_version", value=True), "positive integer"),
    "other format": (_meta_set("format", value="sklearn"), "not a fasttree model file"),
    "unknown estimator": (_meta_set("estimator", value="os.system"), "unknown estimator"),
    "estimator not str": (_meta_set("estimator", value=["DecisionTreeClassifier"]),
                          "wrong type"),
    "params not a dict": (_meta_set("params", value=[1, 2]), "wrong type"),
    "unknown param": (_meta_set("params", "evil", value=1), "parameters are"),
    "missing param": (_meta_del("params", "criterion"), "parameters are"),
    "bad n_jobs": (_meta_set("params", "n_jobs", value=0), "n_jobs"),
    "odd param value": (_meta_set("params", "class_weight", value={"x": 1, "y": 2}),
                        "unknown value"),
    "n_features as str": (_meta_set("n_features_in", value="3"), "wrong type"),
    "n_features too small": (lambda m: m.update(n_features_in=2, max_features=2),
                             "feature_names_in"),
    "max_features 0": (_meta_set("max_features", value=0), "max_features"),
    "n_outputs 2": (_meta_set("n_outputs", value=2), "has shape"),
    "huge node count": (_meta_set("tree", "node_count", value=10**12), "declares|has shape"),
    "negative node count": (_meta_set("tree", "node_count", value=-1), "negative sizes"),
    "n_map": (_meta_set("tree", "n_map", value=3), "has shape"),
    "tree not a dict": (_meta_set("tree", value=None), "wrong type"),
    "fractional as int": (_meta_set("tree", "fractional_missing", value=1), "wrong type"),
    "classes as int": (_meta_set("classes", value=3), "list of label arrays"),
    "classes missing": (_meta_set("classes", value=None), "has shape|needs a list"),
    "one class too many": (lambda m: m["classes"][0]["values"].append("zz"), "has shape"),
    "duplicate class": (lambda m: m["classes"][0]["values"].__setitem__(1, m["classes"][0][
        "values"][0]), "distinct"),
    "class of wrong type": (lambda m: m["classes"][0]["values"].__setitem__(0, 5),
                            "not of dtype"),
    "class dtype pickle": (lambda m: m["classes"][0].__setitem__("dtype", "|V8"),
                           "number, bool, str or object dtype"),
    "class longer than dtype": (lambda m: m["classes"][0]["values"].__setitem__(0, "x" * 50),
                                "longer than its dtype"),
    "huge string dtype": (lambda m: m["classes"][0].__setitem__("dtype", "<U9999999"),
                          "far wider than its values"),
    "giant string dtype": (lambda m: m["classes"][0].__setitem__("dtype", "<U999999999"),
                           "number, bool, str or object dtype"),
    "categories of numeric feature": (_meta_set("categories", 0, value={"dtype": "|O",
                                                                        "values": ["a"]}),
                                      "null for the others"),
    "too few categories": (lambda m: m["categories"][1]["values"].pop(), "map does not match"),
    "unsorted numeric categories": (_meta_set("categories", 1, value={
        "dtype": "<f8", "values": [3.0, 1.0, 2.0, 4.0]}), "distinct values"),
    "is_categorical ints": (_meta_set("is_categorical", value=[0, 1, 1]), "booleans"),
    "missing_in_fit short": (_meta_set("missing_in_fit", value=[True]), "booleans"),
    "feature names of wrong type": (_meta_set("feature_names_in", value=[1, 2, 3]), "strings"),
    "tree n_classes": (_meta_set("tree", "n_classes", value=[4]),
                                     "does not match"),
    "metadata not an object": (lambda m: m.clear(), "names no fasttree format"),
}


@pytest.mark.parametrize("name", list(TAMPERED_METADATA))
def test_tampered_metadata_raises_value_error(model_bytes, name):
    change, message = TAMPERED_METADATA[name]
    with pytest.raises(ValueError, match=message):
        load_bytes(rebuild(model_bytes, meta=change))


@pytest.mark.parametrize("raw, message", [
    (b"[" * 100_000 + b"]" * 100_000, "corrupted|names no fasttree format"),
    (b'{"format": "fasttree-model", "format_version": NaN}', "not JSON"),
    (b"\xff\xfe not utf-8", "corrupted"),
    (b"{", "not valid JSON"),
])
def test_bad_metadata_bytes(model_bytes, raw, message):
    with pytest.raises(ValueError, match=message):
        load_bytes(rebuild(model_bytes, raw={"metadata.json": raw}))


@pytest.mark.parametrize("member", ["metadata.json", "value.npy", "category_branch.npy"])
def test_missing_member(model_bytes, member):
    with pytest.raises(ValueError, match=f"{member!r} is missing"):
        load_bytes(rebuild(model_bytes, drop=[member]))


def test_npy_header_declaring_a_huge_shape(model_bytes):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    with pytest.raises(ValueError, match="has shape"):
        load_bytes(rebuild(model_bytes, raw={"impurity.npy": header.getvalue() + b"\0" * 64}))
    with pytest.raises(ValueError, match="not a valid .npy"):
        load_bytes(rebuild(model_bytes, raw={"impurity.npy": b"\x93NUMPY\x01\x00garbage"}))


CORRUPTION_CHILD = textwrap.dedent("""
    import io, json, sys, warnings
    import numpy as np
    import fasttree

    warnings.simplefilter("ignore")  # X has no column names

    data = sys.stdin.buffer.read()
    original = fasttree.load(io.BytesIO(data))
    X = np.random.default_rng(0).normal(size=(50, original.n_features_in_)).astype(object)
    for j, cats in enumerate(original.categories_):
        if cats is not None:
            X[:, j] = np.resize(cats, 50)
    expected = original.predict_proba(X), original.apply(X)
    rng = np.random.default_rng(1234)
    variants = [(f"truncated at {k}", data[:k]) for k in range(0, len(data), 17)]
    for i in range(int(sys.argv[1])):
        flipped = bytearray(data)
        position = int(rng.integers(len(data)))
        flipped[position] ^= 1 << int(rng.integers(8))
        variants.append((f"flip at {position}", bytes(flipped)))
    counts = {"ValueError": 0, "identical": 0}
    for label, variant in variants:
        try:
            model = fasttree.load(io.BytesIO(variant))
        except ValueError:
            counts["ValueError"] += 1
            continue
        except BaseException as exc:
            print(f"{label}: {type(exc).__name__}: {exc}")
            sys.exit(1)
        same = all(np.array_equal(a, b) for a, b in zip(
            expected, (model.predict_proba(X), model.apply(X))))
        trees = ([(model.tree_, original.tree_)] if hasattr(model, "tree_") else
                 [(a.tree_, b.tree_) for a, b in zip(model.estimators_, original.estimators_)])
        for tree, tree0 in trees:  # a forest's trees hold NaN statistics: equal_nan
            for name in ("children_left", "feature", "threshold", "value", "category_branch"):
                same = same and np.array_equal(getattr(tree, name), getattr(tree0, name),
                                               equal_nan=name == "value")
        if not same:
            print(f"{label}: loaded a different model")
            sys.exit(1)
        counts["identical"] += 1
    print(json.dumps(counts))
""")


@pytest.mark.parametrize("which", ["tree", "forest"])
def test_truncations_and_bit_flips_in_a_child_process(model_bytes, forest_bytes, which):
    """Truncations every 17 bytes and 400 seeded bit flips: ValueError or the same model; run in
    a child process so that a crash of the interpreter fails the test."""
    data = model_bytes if which == "tree" else forest_bytes
    out = subprocess.run([sys.executable, "-c", CORRUPTION_CHILD, "400"], input=data,
                         capture_output=True, timeout=600)
    assert out.returncode == 0, (out.stdout + out.stderr).decode()[-3000:]
    counts = json.loads(out.stdout.decode().strip().splitlines()[-1])
    assert counts["ValueError"] > len(data) // 17  # every truncation and most flips


MUTATION_CHILD = textwrap.dedent("""
    import io, json, sys, warnings, zipfile
    import numpy as np
    import fasttree

    warnings.simplefilter("ignore")
    data = sys.stdin.buffer.read()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    metadata = json.loads(contents["metadata.json"])
    original = fasttree.load(io.BytesIO(data))
    X = np.random.default_rng(0).normal(size=(40, original.n_features_in_)).astype(object)
    X[::5, 0] = np.nan
    for j, cats in enumerate(original.categories_):
        if cats is not None:
            X[:, j] = np.resize(np.append(cats, "unseen"), 40)

    def variant(meta=None, array=None):
        parts = dict(contents)
        if meta is not None:
            parts["metadata.json"] = json.dumps(meta).encode()
        if array is not None:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array[1])
            parts[array[0] + ".npy"] = buffer.getvalue()
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, member in parts.items():
                archive.writestr(name, member)
        return out.getvalue()

    def leaf_paths(node, path=()):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from leaf_paths(value, path + (key,))
        elif isinstance(node, list) and node:
            for i in (0, len(node) - 1):
                yield from leaf_paths(node[i], path + (i,))
        yield path

    def replaced(path, value):
        meta = json.loads(json.dumps(metadata))
        if not path:
            return value
        target = meta
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return meta

    variants = []
    for path in leaf_paths(metadata):
        for value in (None, -1, 2**70, "x", [], {"dtype": "|O"}):
            variants.append((f"metadata {path} = {value!r}", variant(meta=replaced(path, value))))
    n = int(metadata["tree"]["node_count"] if "tree" in metadata
            else metadata["forest"]["n_internal"])
    for name in sorted(n for n in contents if n.endswith(".npy")):
        array = np.load(io.BytesIO(contents[name]), allow_pickle=False)
        if array.size == 0:
            continue
        flat = array.reshape(-1)
        for index in sorted({0, flat.size // 2, flat.size - 1}):
            for value in (-1, 1, n, 2**40, np.nan):
                mutated = flat.copy()
                if mutated.dtype.kind != "f" and not np.isfinite(value):
                    continue
                if mutated.dtype.kind in "iu" and not (np.iinfo(mutated.dtype).min <= value
                                                       <= np.iinfo(mutated.dtype).max):
                    continue
                mutated[index] = value
                variants.append((f"{name}[{index}] = {value}",
                                 variant(array=(name[:-4], mutated.reshape(array.shape)))))
    counts = {"ValueError": 0, "loaded": 0}
    for label, blob in variants:
        try:
            model = fasttree.load(io.BytesIO(blob))
        except ValueError:
            counts["ValueError"] += 1
            continue
        except BaseException as exc:
            print(f"{label}: load raised {type(exc).__name__}: {exc}")
            sys.exit(1)
        try:  # a file that loads is a model every reader handles
            model.predict(X), model.apply(X), model.decision_path(X)
            model.feature_importances_, repr(model)
            if hasattr(model, "tree_"):
                fasttree.export_text(model)
            if hasattr(model, "classes_"):
                model.predict_proba(X)
        except BaseException as exc:
            print(f"{label}: loaded, then {type(exc).__name__}: {exc}")
            sys.exit(1)
        counts["loaded"] += 1
    counts["variants"] = len(variants)
    print(json.dumps(counts))
""")


@pytest.mark.parametrize("which", ["tree", "forest"])
def test_every_field_mutated_in_a_child_process(model_bytes, forest_bytes, which):
    """Each metadata field (first and last list entries) set to values of every JSON type, and
    entries of every node array set to boundary values: ValueError, or a model every reader
    (predict, apply, decision_path, importances, export_text) handles without an error."""
    out = subprocess.run([sys.executable, "-c", MUTATION_CHILD],
                         input=model_bytes if which == "tree" else forest_bytes,
                         capture_output=True, timeout=600)
    assert out.returncode == 0, (out.stdout + out.stderr).decode()[-3000:]
    counts = json.loads(out.stdout.decode().strip().splitlines()[-1])
    assert counts["ValueError"] > counts["loaded"] > 0, counts


# -- forests ----------------------------------------------------------------------------------
def forest_data(seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 5))
    X[rng.random(300) < 0.1, 2] = np.nan
    y = np.where(X[:, 0] + np.nan_to_num(X[:, 2]) > 0, "yes", "no")
    return X, y


FOREST_CASES = {
    "random forest, oob": lambda X, y: fasttree.RandomForestClassifier(
        8, oob_score=True, random_state=0).fit(X, y),
    "extra trees, two outputs, class weights": lambda X, y: fasttree.ExtraTreesClassifier(
        6, class_weight="balanced", random_state=0).fit(X, np.stack([y, X[:, 1] > 0], 1)),
    "random forest regressor, depth 4": lambda X, y: fasttree.RandomForestRegressor(
        5, max_depth=4, max_samples=0.5, random_state=0).fit(X, X[:, 0] * 3 + (y == "yes")),
    "extra trees regressor, two outputs, weights": lambda X, y: fasttree.ExtraTreesRegressor(
        4, random_state=0).fit(X, np.stack([X[:, 0], X[:, 1]], 1), sample_weight=X[:, 3] ** 2),
    "embedding": lambda X, y: fasttree.RandomTreesEmbedding(5, random_state=0).fit(X),
}


@pytest.fixture(scope="module")
def forest_bytes():
    X, y = forest_data()
    buffer = io.BytesIO()
    FOREST_CASES["random forest, oob"](X, y).save(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("name", list(FOREST_CASES))
def test_forest_round_trip(name, tmp_path):
    X, y = forest_data()
    forest = FOREST_CASES[name](X, y)
    path = tmp_path / "forest.ftm"
    forest.save(path)
    loaded = fasttree.load(path)
    assert type(loaded) is type(forest) and loaded.get_params() == forest.get_params()
    X_new = np.vstack([X, forest_data(seed=4)[0]])
    for method in ("predict", "predict_proba", "apply", "transform"):
        if hasattr(forest, method):
            a, b = getattr(forest, method)(X_new), getattr(loaded, method)(X_new)
            for p, q in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
                p, q = (p.toarray(), q.toarray()) if sp.issparse(p) else (p, q)
                np.testing.assert_array_equal(p, q, err_msg=method)
    np.testing.assert_array_equal(loaded.feature_importances_, forest.feature_importances_)
    assert (loaded.decision_path(X_new)[0] != forest.decision_path(X_new)[0]).nnz == 0
    for a, b in zip(forest.estimators_, loaded.estimators_):
        assert a.random_state == b.random_state
        for attr in ("children_left", "children_right", "feature", "missing_branch", "depth"):
            np.testing.assert_array_equal(getattr(a.tree_, attr), getattr(b.tree_, attr))
        leaves = a.tree_.children_left == -1
        np.testing.assert_array_equal(a.tree_.value[leaves], b.tree_.value[leaves])
        np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    if getattr(forest, "_sample_weight", None) is None:
        for a, b in zip(forest.estimators_samples_, loaded.estimators_samples_):
            np.testing.assert_array_equal(a, b)
    else:  # drawn by weights, which the file does not hold
        with pytest.raises(AttributeError, match="not stored in its model file"):
            loaded.estimators_samples_
    assert getattr(loaded, "oob_score_", None) == getattr(forest, "oob_score_", None)
    again = io.BytesIO()
    loaded.save(again)
    assert again.getvalue() == path.read_bytes()  # what was loaded saves to the same bytes


def test_forest_file_is_small_and_thresholds_split_float32_inputs_exactly():
    X, y = forest_data()
    forest = fasttree.RandomForestClassifier(10, random_state=0).fit(X, y)
    buffer = io.BytesIO()
    forest.save(buffer)
    loaded = load_bytes(buffer.getvalue())
    assert len(buffer.getvalue()) * 4 < len(pickle.dumps(forest))
    for a, b in zip(forest.estimators_, loaded.estimators_):
        inner = a.tree_.children_left != -1
        t, t32 = a.tree_.threshold[inner], b.tree_.threshold[inner]
        assert np.all(t32 <= t) and np.array_equal(t32.astype(np.float32).astype(np.float64), t32)
        # inputs at both sides of each threshold go the same way
        t32 = t32[np.isfinite(t32)]  # +inf: the known values from the missing ones
        x = np.concatenate([t32, np.nextafter(t32.astype(np.float32), np.float32(np.inf))])
        X_edge = np.tile(np.nan_to_num(X[:1]), (x.size, 1)).astype(np.float32)
        X_edge[:, 0] = x
        np.testing.assert_array_equal(a.apply(X_edge), b.apply(X_edge))


def test_loaded_forest_trees_refuse_pruning(forest_bytes):
    # the file stores no node statistics: every pruner says so (before: cost-complexity hung on
    # the NaN weights and the other rules silently kept every node)
    from fasttree import pruning

    X, y = forest_data()
    tree = load_bytes(forest_bytes).estimators_[0]
    calls = [lambda: pruning.cost_complexity(tree, 0.01),
             lambda: pruning.cost_complexity_path(tree),
             lambda: pruning.cost_complexity_path(tree.tree_),
             lambda: pruning.error_based(tree),
             lambda: pruning.error_based(tree, subtree_raising=True, X=X, y=y),
             lambda: pruning.minimum_error(tree),
             lambda: pruning.pessimistic(tree),
             lambda: pruning.reduced_error(tree, X, y)]
    for call in calls:
        with pytest.raises(ValueError, match="no node statistics to prune by"):
            call()


@pytest.mark.parametrize("name", ["random forest, oob", "random forest regressor, depth 4",
                                  "extra trees regressor, two outputs, weights"])
def test_loaded_forest_trees_export_their_leaves(name):
    # no node statistics: the exports show splits and the leaves' stored values, never NaN
    # (before: "gini = nan", "samples = 0", "value = [nan, nan]", and export_graphviz and
    # plot_tree with filled=True raised "cannot convert float NaN to integer" for a classifier)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = forest_data()
    buffer = io.BytesIO()
    FOREST_CASES[name](X, y).save(buffer)
    tree = load_bytes(buffer.getvalue()).estimators_[0]
    assert not tree.tree_.has_node_statistics
    dot = fasttree.export_graphviz(tree, filled=True, impurity=True)
    assert "nan" not in dot and "samples" not in dot
    leaves = tree.tree_.children_left == -1
    assert dot.count("value = ") == np.count_nonzero(leaves)
    text = fasttree.export_text(tree, show_weights=True)
    assert "nan" not in text
    if name == "random forest, oob":  # the leaves' class fractions, as stored
        first = int(np.flatnonzero(leaves)[0])
        fractions = ", ".join(f"{v:.2f}" for v in tree.tree_.value[first, 0])
        assert f"fractions: [{fractions}]" in text
    fasttree.plot_tree(tree, filled=True)
    plt.close("all")


def test_forest_with_categorical_splits_is_refused(tmp_path):
    X, y = forest_data()
    X[:, 4] = np.abs(np.round(X[:, 4] * 3))
    forest = fasttree.RandomForestClassifier(4, max_features=None, categorical_features=[4],
                                             random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="categorical splits"):
        forest.save(tmp_path / "forest.ftm")


TAMPERED_FOREST = {
    "child out of range": (_set("nodes", (0, 2), 10_000), "out of its tree"),
    "child before its parent": (_set("nodes", (1, 3), 0), "not after its parent"),
    "feature out of range": (_set("nodes", (0, 0), 5), "feature"),
    "NaN threshold": (_set("nodes", (0, 1), np.float32(np.nan).view(np.int32)), "NaN"),
    "NaN leaf value": (_set("leaf_value", (0, 0), np.nan), "finite"),
    "NaN importance": (_set("importances", (0, 0), np.nan), "finite"),
    "node ids": (_set("node_id", 1, 0), "node ids"),
    "leaf ids": (_set("leaf_node", 0, 10_000), "node ids"),
    "tree starts": (_set("tree_leaf_start", 1, 1), "one more leaf|tree starts"),
    "nodes as int64": (lambda d: {"nodes": tree_array(d, "nodes").astype(np.int64)},
                       "has dtype int64"),
    "leaf values' shape": (lambda d: {"leaf_value": tree_array(d, "leaf_value")[:, :1]},
                           "has shape"),
}


@pytest.mark.parametrize("name", list(TAMPERED_FOREST))
def test_tampered_forest_arrays_raise_value_error(forest_bytes, name):
    change, message = TAMPERED_FOREST[name]
    load_bytes(rebuild(forest_bytes))  # unchanged, it loads
    with pytest.raises(ValueError, match=message):
        load_bytes(rebuild(forest_bytes, arrays=change(forest_bytes)))


@pytest.mark.parametrize("key, value, message", [
    ("tree_random_state", [1], "seed per tree"),
    ("n_trees", 0, "needs trees"),
    ("n_internal", 3, "has shape"),
    ("oob_score", "high", "oob_score"),
    ("n_samples", -1, "n_samples"),
])
def test_tampered_forest_metadata_raises_value_error(forest_bytes, key, value, message):
    def change(metadata):
        metadata["forest"][key] = value
    with pytest.raises(ValueError, match=message):
        load_bytes(rebuild(forest_bytes, meta=change))
