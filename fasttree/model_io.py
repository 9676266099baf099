"""Model files: a fitted estimator saved as arrays plus JSON metadata, loaded without pickle.

A model file is a zip archive (deflated) holding ``metadata.json`` and one ``.npy`` member per
node array of the tree (see ``docs/model_files.rst`` for the format).  Loading reads nothing that
executes code (``json``; ``.npy`` headers, then raw values of a plain dtype, never pickle) and
checks everything prediction will index before building the estimator, so a tampered or
truncated file raises ``ValueError``.
"""

import io
import json
import math
import numbers
import re
import zipfile
import zlib

import numpy as np

from ._dtypes import NODE_DTYPE, SPLIT_SUBSET, SPLIT_THRESHOLD, TREE_LEAF
from .kernels import check_tree
from .kernels.forest_predict import MISSING_RIGHT_BIT
from .packed_forest import PackedForest, check_packed_forest, packs
from .tree import TREE_UNDEFINED, Tree

#: Name in ``metadata.json``'s ``format`` field.
FORMAT_NAME = "fasttree-model"

#: Version written by this fasttree, and the newest it reads.  Raise it when a reader of the
#: previous version could no longer read a file correctly; keep reading every older one.
FORMAT_VERSION = 1
#: parameters added since format 1 was first written; older files lack them
PARAMS_ADDED = ("ccp_folds", "subtree_raising")

METADATA_MEMBER = "metadata.json"

#: The tree's node arrays: member dtype in the file (little-endian, fixed width on every
#: platform) and shape, written in terms of the node count ``n``, the outputs ``o``, the width
#: of ``value`` ``c`` and the length of the category maps ``m``.
TREE_ARRAYS = {
    "children_left": ("<i8", ("n",)),
    "children_right": ("<i8", ("n",)),
    "feature": ("<i8", ("n",)),
    "threshold": ("<f8", ("n",)),
    "value": ("<f8", ("n", "o", "c")),
    "impurity": ("<f8", ("n",)),
    "n_node_samples": ("<i8", ("n",)),
    "weighted_n_node_samples": ("<f8", ("n",)),
    "depth": ("<i8", ("n",)),
    "split_kind": ("|u1", ("n",)),
    "missing_branch": ("<i4", ("n",)),
    "category_offset": ("<i8", ("n",)),
    "category_n_codes": ("<i8", ("n",)),
    "category_branch": ("<i4", ("m",)),
}

#: A forest's members: its trees packed for prediction (see
#: :mod:`fasttree.kernels.forest_predict`: internal nodes in preorder, float32 thresholds, int32
#: children, leaf values only), each node's id in its tree, each tree's (unnormalized) feature
#: importances and, for :class:`~fasttree.RandomTreesEmbedding`, the leaves its output columns
#: stand for.  Shapes in terms of the trees ``t`` (``t1`` = t + 1), internal nodes ``i``, leaves
#: ``l``, the width of a leaf's values ``w``, the features ``f`` and the embedding's columns ``e``.
FOREST_ARRAYS = {
    "tree_node_start": ("<i8", ("t1",)),
    "tree_leaf_start": ("<i8", ("t1",)),
    "nodes": ("<i4", ("i", 4)),
    "leaf_value": ("<f8", ("l", "w")),
    "node_id": ("<i4", ("i",)),
    "leaf_node": ("<i4", ("l",)),
    "importances": ("<f8", ("t", "f")),
    "embedding_leaf": ("<i4", ("e",)),
}

# A metadata member larger than this is not a model file (2**24 categories of short strings fit).
_MAX_METADATA_BYTES = 1 << 30
# Label arrays (classes, categories) restored from JSON: at most this many bytes.
_MAX_LABEL_BYTES = 1 << 30
# A fixed-width string dtype may be this much wider than its longest value (predictions are
# arrays of it: a file must not make them needlessly huge); a wider one is saved narrowed.
_SLACK_CHARS = 64
_LABEL_DTYPE = re.compile(r"^(<U[1-9][0-9]{0,6}|[<|]i[1248]|[<|]u[1248]|<f[48]|\|b1|\|O)$")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed: the same model gives the same bytes


def _estimator_classes():
    from . import estimators

    return {cls.__name__: cls for cls in (
        estimators.DecisionTreeClassifier, estimators.DecisionTreeRegressor,
        estimators.ExtraTreeClassifier, estimators.ExtraTreeRegressor,
        estimators.ID3Classifier, estimators.C45Classifier)}


def _forest_classes():
    from . import forest

    return {cls.__name__: cls for cls in (
        forest.RandomForestClassifier, forest.RandomForestRegressor,
        forest.ExtraTreesClassifier, forest.ExtraTreesRegressor, forest.RandomTreesEmbedding)}


# -- writing ---------------------------------------------------------------------------------
def save(estimator, path):
    """Write a fitted fasttree estimator to a model file.

    Parameters
    ----------
    estimator : fitted fasttree estimator
        One of ``DecisionTreeClassifier``, ``DecisionTreeRegressor``, ``ExtraTreeClassifier``,
        ``ExtraTreeRegressor``, ``ID3Classifier``, ``C45Classifier``, or a forest
        (``RandomForestClassifier``, ``RandomForestRegressor``, ``ExtraTreesClassifier``,
        ``ExtraTreesRegressor``, ``RandomTreesEmbedding``; see :func:`_forest_members`).
    path : str, os.PathLike or writable binary file object

    Raises
    ------
    TypeError
        ``estimator`` is not one of those classes.
    NotFittedError
        ``estimator`` is not fitted.
    ValueError
        Class labels or categories that cannot be stored without pickle (see
        ``docs/model_files.rst``); a forest with categorical splits.

    Notes
    -----
    Parameters that JSON cannot hold (a ``RandomState`` or ``Generator`` as ``random_state``)
    are stored as ``null`` and listed under ``params_not_saved``; they only matter to a refit.
    """
    classes = {**_estimator_classes(), **_forest_classes()}
    name = type(estimator).__name__
    if classes.get(name) is not type(estimator):
        raise TypeError(f"save takes a fasttree estimator ({', '.join(sorted(classes))}); got "
                        f"{name}.")
    estimator._check_is_fitted()
    metadata = _shared_metadata(estimator)
    if name in _forest_classes():
        extra, arrays = _forest_members(estimator)
        metadata.update(extra)
        specs = FOREST_ARRAYS
    else:
        tree = estimator.tree_
        metadata.update({
            "ccp_alpha": float(getattr(estimator, "ccp_alpha_", estimator.ccp_alpha)),
            "target_name": _target_name(estimator),
            "tree": {
                "node_count": tree.node_count,
                "n_map": int(tree.category_branch.shape[0]),
                "fractional_missing": tree.fractional_missing,
                "n_classes": None if tree._n_classes is None else [
                    int(k) for k in tree._n_classes],
            },
        })
        arrays, specs = {member: getattr(tree, member) for member in TREE_ARRAYS}, TREE_ARRAYS
    try:
        text = json.dumps(metadata, allow_nan=False, indent=1)
    except ValueError as exc:  # a non-finite float among labels or parameters
        raise ValueError(f"cannot save {name}: {exc}") from None
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(METADATA_MEMBER, _ZIP_DATE), text.encode("utf-8"),
                         compress_type=zipfile.ZIP_DEFLATED)
        for member, (dtype, _) in specs.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(
                buffer, np.ascontiguousarray(arrays[member], dtype=dtype), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(member + ".npy", _ZIP_DATE), buffer.getvalue(),
                             compress_type=zipfile.ZIP_DEFLATED)


def _shared_metadata(estimator):
    """What a tree's and a forest's files both say: format, estimator, parameters, inputs."""
    from . import __version__

    params, not_saved = {}, []
    for key, value in estimator.get_params().items():
        try:
            params[key] = _param_to_json(value)
        except _Unstorable:
            params[key] = None
            not_saved.append(key)
    n_outputs = int(estimator.n_outputs_)
    classes_ = getattr(estimator, "classes_", None)
    if classes_ is not None:
        classes_ = [_labels_to_json(c, "classes_") for c in (
            [classes_] if n_outputs == 1 else classes_)]
    names = getattr(estimator, "feature_names_in_", None)
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "fasttree_version": __version__,
        "estimator": type(estimator).__name__,
        "params": params,
        "params_not_saved": not_saved,
        "n_features_in": int(estimator.n_features_in_),
        "n_outputs": n_outputs,
        "max_features": int(estimator.max_features_),
        "classes": classes_,
        "feature_names_in": None if names is None else [str(n) for n in names],
        "is_categorical": [bool(b) for b in estimator.is_categorical_],
        "categories": [None if c is None else _labels_to_json(c, "categories_")
                       for c in estimator.categories_],
        "missing_in_fit": [bool(b) for b in estimator.missing_in_fit_],
    }


def _forest_members(forest):
    """A forest's metadata and arrays (:data:`FOREST_ARRAYS`): what prediction needs.

    The trees are stored packed (:class:`~fasttree.packed_forest.PackedForest`): thresholds as
    the largest float32 not above them (the same split of every input, which prediction turns
    into float32), leaf values only, and each tree's feature importances in place of its node
    statistics (impurity, sample counts, the values of internal nodes), which are not stored.
    """
    trees = [e.tree_ for e in forest.estimators_]
    if not packs(trees):
        raise ValueError(f"cannot save {type(forest).__name__}: its trees have categorical "
                         "splits or C4.5's fractional missing values (a forest file stores "
                         "numeric thresholds); pickle it instead.")
    packed = PackedForest.from_trees(trees, forest.n_features_in_)
    leaf_ids = getattr(forest, "_leaf_ids", None)  # RandomTreesEmbedding's output columns
    sample_weight = getattr(forest, "_sample_weight", None)
    metadata = {"forest": {
        "n_trees": len(trees),
        "n_internal": int(packed.nodes.shape[0]),
        "n_leaves": int(packed.leaf_value.shape[0]),
        "tree_n_classes": None if trees[0]._n_classes is None else [
            int(k) for k in trees[0]._n_classes],
        "tree_random_state": [int(e.random_state) for e in forest.estimators_],
        # what estimators_samples_ draws from (not with sample weights: they are not stored)
        "n_samples": (None if sample_weight is not None
                      or getattr(forest, "_n_samples", None) is None
                      else int(forest._n_samples)),
        "n_samples_bootstrap": (None if sample_weight is not None
                                or getattr(forest, "_n_samples_bootstrap", None) is None
                                else int(forest._n_samples_bootstrap)),
        "oob_score": float(forest.oob_score_) if hasattr(forest, "oob_score_") else None,
        "embedding_leaf_counts": None if leaf_ids is None else [int(ids.size)
                                                                for ids in leaf_ids],
    }}
    arrays = {
        "tree_node_start": packed.tree_node_start, "tree_leaf_start": packed.tree_leaf_start,
        "nodes": packed.nodes, "leaf_value": packed.leaf_value, "node_id": packed.node_id,
        "leaf_node": packed.leaf_node,
        "importances": np.array([t.compute_feature_importances(normalize=False)
                                 for t in trees]).reshape(len(trees), forest.n_features_in_),
        "embedding_leaf": (np.empty(0, np.int32) if leaf_ids is None
                           else np.concatenate(leaf_ids)),
    }
    return metadata, arrays


def _target_name(estimator):
    """``target_name_``: the target column's name, which the command line sets from the CSV
    header (scikit-learn's API has no such attribute; Python fits have none)."""
    name = getattr(estimator, "target_name_", None)
    if name is not None and not isinstance(name, str):
        raise ValueError(f"target_name_ must be a str; got {type(name).__name__}.")
    return name


class _Unstorable(Exception):
    """A parameter value JSON cannot hold."""


def _param_to_json(value):
    """JSON for a parameter: plain JSON values as they are; tagged objects for arrays, dicts
    (keys may be class labels of any type) and non-finite floats."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        value = value.item()
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise _Unstorable
        try:
            return {"ndarray": _labels_to_json(value, "parameter")}
        except ValueError:
            raise _Unstorable from None
    if isinstance(value, (list, tuple)):
        return [_param_to_json(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[_param_to_json(k), _param_to_json(v)] for k, v in value.items()]}
    raise _Unstorable


def _labels_to_json(array, what):
    """``{"dtype": ..., "values": [...]}`` for a 1-D array of numbers, bools or strings."""
    array = np.asarray(array)
    kind = array.dtype.kind
    if kind not in "biufUO" or array.ndim != 1 or not _LABEL_DTYPE.match(array.dtype.str):
        raise ValueError(f"{what} of dtype {array.dtype} cannot be saved without pickle; use "
                         "numbers or strings.")
    values = [v.item() if isinstance(v, np.generic) else v for v in array.tolist()]
    dtype = array.dtype.str
    if kind == "U" and not _width_ok(array.dtype, values):
        dtype = f"<U{max(max(map(len, values), default=1), 1)}"
    for v in values:
        if not isinstance(v, (str, bool, int, float)) or (
                isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"{what} holds {v!r} ({type(v).__name__}), which cannot be saved "
                             "without pickle; use finite numbers or strings.")
    return {"dtype": dtype, "values": values}


def _width_ok(dtype, values):
    return dtype.itemsize // 4 <= max(max(map(len, values), default=0), _SLACK_CHARS)


# -- reading ---------------------------------------------------------------------------------
def load(path):
    """Read an estimator written by :meth:`save <fasttree.DecisionTreeClassifier.save>`.

    Nothing in the file is executed or unpickled; every array prediction indexes is checked.

    Parameters
    ----------
    path : str, os.PathLike or readable binary file object

    Returns
    -------
    estimator : fitted fasttree estimator
        Of the class that was saved, with its parameters and fitted attributes (not
        ``fit_timings_``, which pickling leaves out too).

    Raises
    ------
    ValueError
        Not a model file, a file written in a newer format, or any inconsistency (a truncated,
        corrupted or tampered file).
    OSError
        The path cannot be opened (``FileNotFoundError``, ``IsADirectoryError``, ...).
    """
    if hasattr(path, "read"):
        return _load_from(path)
    with open(path, "rb") as handle:
        return _load_from(handle)


def _load_from(handle):
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError):
        raise ValueError("not a fasttree model file (not a readable zip archive)") from None
    try:
        with archive:
            metadata = _read_metadata(archive)
            name = metadata.get("estimator")
            forest = isinstance(name, str) and name in _forest_classes()
            specs = FOREST_ARRAYS if forest else TREE_ARRAYS
            sizes = _forest_sizes(metadata) if forest else _array_sizes(metadata)
            arrays = {name: _read_array(archive, name, specs[name], sizes) for name in specs}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError,
            NotImplementedError, UnicodeDecodeError, RecursionError, OverflowError) as exc:
        # a damaged archive: bad CRC, truncated or undecodable member, unknown compression
        raise ValueError(f"corrupted fasttree model file ({type(exc).__name__}: {exc})") from None
    return (_build_forest if forest else _build_estimator)(metadata, arrays)


def _open_member(archive, name, max_bytes):
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ValueError(f"model file: member {name!r} is missing") from None
    if info.flag_bits & 0x1:
        raise ValueError(f"model file: member {name!r} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"model file: member {name!r} uses an unknown compression")
    if info.file_size > max_bytes:
        raise ValueError(f"model file: member {name!r} declares {info.file_size} bytes, more "
                         "than its metadata allows")
    with archive.open(info) as member:
        data = member.read(max_bytes + 1)
    if len(data) != info.file_size:
        raise ValueError(f"model file: member {name!r} is truncated")
    return data


def _read_metadata(archive):
    data = _open_member(archive, METADATA_MEMBER, _MAX_METADATA_BYTES)
    try:
        metadata = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"model file: metadata.json is not valid JSON ({exc})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise ValueError("not a fasttree model file (metadata.json names no fasttree format)")
    version = metadata.get("format_version")
    if not _is_int(version) or version < 1:
        raise ValueError("model file: format_version must be a positive integer")
    if version > FORMAT_VERSION:
        from . import __version__

        writer = metadata.get("fasttree_version")
        writer = writer if isinstance(writer, str) else "(unknown version)"
        raise ValueError(
            f"model file written by fasttree {writer}, format {version}; this version "
            f"(fasttree {__version__}) reads up to format {FORMAT_VERSION}. Upgrade fasttree.")
    return metadata


def _reject_constant(name):
    raise ValueError(f"model file: metadata.json holds {name}, which is not JSON")


def _output_sizes(metadata):
    """The outputs ``o`` and the most classes of an output ``c`` (1 for a regressor)."""
    sizes = {"o": _get(metadata, "n_outputs", int), "c": 1}
    classes = metadata.get("classes")
    if classes is not None:
        if not isinstance(classes, list) or not all(
                isinstance(c, dict) and isinstance(c.get("values"), list) for c in classes):
            raise ValueError("model file: classes must be a list of label arrays")
        sizes["c"] = max((len(c["values"]) for c in classes), default=0)
    return sizes


def _array_sizes(metadata):
    """The sizes the node arrays' shapes are written in (see :data:`TREE_ARRAYS`)."""
    tree = _get(metadata, "tree", dict)
    sizes = {"n": _get(tree, "node_count", int, "tree"), "m": _get(tree, "n_map", int, "tree"),
             **_output_sizes(metadata)}
    if min(sizes.values()) < 0:
        raise ValueError("model file: negative sizes in the metadata")
    return sizes


def _read_array(archive, name, spec, sizes):
    """One array: its ``.npy`` header's dtype (never an object dtype: nothing is unpickled) and
    shape, and the member's size, checked against the metadata before the data are read."""
    dtype, shape_spec = spec
    dtype = np.dtype(dtype)
    shape = tuple(s if isinstance(s, int) else sizes[s] for s in shape_spec)
    n_bytes = math.prod(shape) * dtype.itemsize
    member = name + ".npy"
    data = _open_member(archive, member, n_bytes + 65536)  # + the .npy header
    buffer = io.BytesIO(data)
    try:
        major, _ = np.lib.format.read_magic(buffer)
        read_header = (np.lib.format.read_array_header_1_0 if major == 1
                       else np.lib.format.read_array_header_2_0)
        header_shape, fortran_order, header_dtype = read_header(buffer)
    except (ValueError, SyntaxError, TypeError, KeyError) as exc:
        raise ValueError(f"model file: {member} is not a valid .npy array ({exc})") from None
    if header_dtype.hasobject or header_dtype != dtype:
        raise ValueError(f"model file: {member} has dtype {header_dtype}; expected {dtype}")
    if tuple(header_shape) != shape:
        raise ValueError(f"model file: {member} has shape {header_shape}; the metadata says "
                         f"{shape}")
    if fortran_order:
        raise ValueError(f"model file: {member} is stored in Fortran order")
    if len(data) - buffer.tell() != n_bytes:
        raise ValueError(f"model file: {member} holds the wrong number of bytes")
    # a plain dtype, checked above: the data are raw values (what read_array would do next)
    return np.frombuffer(data, dtype=dtype, offset=buffer.tell()).reshape(shape).copy()


# -- metadata checks --------------------------------------------------------------------------
def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _get(mapping, key, kind, where="metadata"):
    """``mapping[key]``, which must be of ``kind`` (int excludes bool); ValueError otherwise."""
    if key not in mapping:
        raise ValueError(f"model file: {where} lacks {key!r}")
    value = mapping[key]
    ok = _is_int(value) if kind is int else isinstance(value, kind)
    if not ok:
        raise ValueError(f"model file: {where}[{key!r}] has the wrong type "
                         f"({type(value).__name__})")
    return value


def _bool_list(metadata, key, length):
    values = _get(metadata, key, list)
    if len(values) != length or not all(isinstance(v, bool) for v in values):
        raise ValueError(f"model file: {key!r} must be {length} booleans")
    return np.array(values, dtype=bool)


def _labels_from_json(obj, what, distinct=True):
    """The array :func:`_labels_to_json` wrote, with its element types and dtype checked; labels
    (classes, categories) must be ``distinct``, and sorted when they are numbers."""
    if not isinstance(obj, dict) or not isinstance(obj.get("dtype"), str) or not isinstance(
            obj.get("values"), list) or not _LABEL_DTYPE.match(obj["dtype"]):
        raise ValueError(f"model file: {what} must be {{'dtype': ..., 'values': [...]}} with a "
                         "number, bool, str or object dtype")
    try:
        dtype = np.dtype(obj["dtype"])
    except TypeError:  # a width numpy does not take
        raise ValueError(f"model file: {what} has an unknown dtype {obj['dtype']!r}") from None
    values = obj["values"]
    allowed = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float), "U": (str,),
               "O": (str, bool, int, float)}[dtype.kind]
    for v in values:
        if not isinstance(v, allowed) or (dtype.kind in "iuf" and isinstance(v, bool)) or (
                isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"model file: {what} holds {v!r}, not of dtype {dtype}")
    if len(values) * dtype.itemsize > _MAX_LABEL_BYTES:
        raise ValueError(f"model file: {what} is too large")
    if dtype.kind == "O":
        array = np.empty(len(values), dtype=object)
        array[:] = values
    else:
        try:
            array = np.array(values, dtype=dtype)
        except OverflowError:
            raise ValueError(f"model file: {what} holds values out of range of {dtype}") from None
        if dtype.kind == "U" and any(len(v) > dtype.itemsize // 4 for v in values):
            raise ValueError(f"model file: {what} holds strings longer than its dtype {dtype}")
        if dtype.kind == "U" and not _width_ok(dtype, values):
            raise ValueError(f"model file: {what}'s dtype {dtype} is far wider than its values")
    if distinct and (len(set(values)) != len(values)
                     or (dtype.kind in "iuf" and np.any(np.diff(array) <= 0))):
        raise ValueError(f"model file: {what} must hold distinct values (sorted, for numbers)")
    return array


def _param_from_json(value, where):
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return [_param_from_json(v, where) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), = value.items()
        if tag == "float" and inner in ("inf", "-inf", "nan"):
            return float(inner)
        if tag == "ndarray":
            return _labels_from_json(inner, where, distinct=False)
        if tag == "dict" and isinstance(inner, list) and all(
                isinstance(p, list) and len(p) == 2 for p in inner):
            try:
                return {_param_from_json(k, where): _param_from_json(v, where) for k, v in inner}
            except TypeError:  # an unhashable key
                raise ValueError(f"model file: {where} has an unhashable dict key") from None
    raise ValueError(f"model file: {where} holds an unknown value {value!r}")


def _new_estimator(metadata, classes):
    """The estimator class the metadata names, made with the parameters it stores."""
    from ._base import resolve_n_jobs

    name = _get(metadata, "estimator", str)
    if name not in classes:
        raise ValueError(f"model file: unknown estimator {name!r}; expected one of "
                         f"{sorted(classes)}")
    cls = classes[name]
    params = _get(metadata, "params", dict)
    expected = set(cls._get_param_names())
    # a file written before a parameter existed lacks it: the parameter takes its default
    if not set(expected) - set(PARAMS_ADDED) <= set(params) <= expected:
        raise ValueError(f"model file: {name}'s parameters are {sorted(expected)}; the file has "
                         f"{sorted(params)}")
    estimator = cls(**{k: _param_from_json(v, f"parameter {k!r}") for k, v in params.items()})
    try:
        resolve_n_jobs(estimator.n_jobs)  # predict reads it
    except ValueError as exc:
        raise ValueError(f"model file: {exc}") from None
    return estimator


def _input_attributes(metadata, estimator):
    """The fitted attributes a tree's and a forest's files share (inputs, outputs, classes),
    checked, as ``{attribute: value}``; and the classes per output (None for a regressor)."""
    n_features = _get(metadata, "n_features_in", int)
    n_outputs = _get(metadata, "n_outputs", int)
    max_features = _get(metadata, "max_features", int)
    if n_features < 1 or n_outputs < 1 or not 1 <= max_features <= n_features:
        raise ValueError("model file: n_features_in, n_outputs and max_features must be "
                         "positive, max_features at most n_features_in")
    attributes = {"n_features_in_": n_features, "n_outputs_": n_outputs,
                  "max_features_": max_features}
    raw_classes = metadata.get("classes")
    n_classes = None
    if estimator._estimator_type == "classifier":
        if not isinstance(raw_classes, list) or len(raw_classes) != n_outputs:
            raise ValueError(f"model file: a classifier needs a list of {n_outputs} class "
                             "arrays")
        class_arrays = [_labels_from_json(c, "classes") for c in raw_classes]
        n_classes = np.array([c.shape[0] for c in class_arrays], dtype=np.intp)
        if n_classes.min() < 1:
            raise ValueError("model file: a classifier needs classes")
        attributes["classes_"] = class_arrays[0] if n_outputs == 1 else class_arrays
        attributes["n_classes_"] = int(n_classes[0]) if n_outputs == 1 else n_classes
    elif raw_classes is not None:
        raise ValueError("model file: a regressor has no classes")

    names = metadata.get("feature_names_in")
    if names is not None:
        if not isinstance(names, list) or len(names) != n_features or not all(
                isinstance(s, str) for s in names):
            raise ValueError(f"model file: feature_names_in must be {n_features} strings")
        attributes["feature_names_in_"] = np.array(names, dtype=object)
    is_categorical = _bool_list(metadata, "is_categorical", n_features)
    raw_categories = _get(metadata, "categories", list)
    if len(raw_categories) != n_features or any(
            (c is None) == bool(is_cat) for c, is_cat in zip(raw_categories, is_categorical)):
        raise ValueError("model file: categories must list the categories of each categorical "
                         "feature and null for the others")
    attributes["is_categorical_"] = is_categorical
    attributes["categories_"] = [
        None if c is None else _labels_from_json(c, f"categories of feature {j}")
        for j, c in enumerate(raw_categories)]
    attributes["missing_in_fit_"] = _bool_list(metadata, "missing_in_fit", n_features)
    return attributes, n_classes


def _tree_n_classes(meta, where, n_classes, n_outputs):
    """The classes per output a tree records (trees of several outputs, pruned trees), checked
    against the classes (1 per output for a regressor)."""
    tree_n_classes = meta.get("n_classes" if where == "tree" else "tree_n_classes")
    per_output = [1] * n_outputs if n_classes is None else n_classes.tolist()
    if tree_n_classes != per_output and (tree_n_classes is not None
                                         or (n_classes is not None and n_outputs > 1)):
        raise ValueError(f"model file: {where} n_classes does not match the classes")
    return None if tree_n_classes is None else np.array(tree_n_classes, dtype=np.intp)


def _build_estimator(metadata, arrays):
    """The tree estimator the metadata and node arrays describe, every cross-reference
    checked."""
    estimator = _new_estimator(metadata, _estimator_classes())
    attributes, n_classes = _input_attributes(metadata, estimator)
    n_features, n_outputs = attributes["n_features_in_"], attributes["n_outputs_"]
    tree_meta = _get(metadata, "tree", dict)
    fractional = _get(tree_meta, "fractional_missing", bool, "tree")
    node_count = tree_meta["node_count"]  # read and checked with the arrays
    if node_count < 1:
        raise ValueError("model file: the tree has no node")
    width = arrays["value"].shape[2]
    if width != (1 if n_classes is None else n_classes.max()):
        raise ValueError("model file: the classes do not match the width of value")
    tree_n_classes = _tree_n_classes(tree_meta, "tree", n_classes, n_outputs)

    _check_tree_arrays(arrays, n_features)
    _check_categorical_nodes(arrays, attributes["is_categorical_"], attributes["categories_"])
    tree = Tree(**{k: arrays[k] for k in TREE_ARRAYS}, n_features=n_features,
                fractional_missing=fractional, n_classes=tree_n_classes)

    for name, value in attributes.items():
        setattr(estimator, name, value)
    ccp_alpha = metadata.get("ccp_alpha", estimator.ccp_alpha)  # absent before ccp_folds
    if not (isinstance(ccp_alpha, numbers.Real) and not isinstance(ccp_alpha, bool)
            and ccp_alpha >= 0):
        raise ValueError("model file: ccp_alpha must be a number >= 0")
    estimator.ccp_alpha_ = float(ccp_alpha)
    target_name = metadata.get("target_name")
    if target_name is not None:
        if not isinstance(target_name, str):
            raise ValueError("model file: target_name must be a string or null")
        estimator.target_name_ = target_name
    estimator.tree_ = tree
    return estimator


def _forest_sizes(metadata):
    """The sizes a forest's arrays are written in (see :data:`FOREST_ARRAYS`)."""
    forest = _get(metadata, "forest", dict)
    n_trees = _get(forest, "n_trees", int, "forest")
    counts = forest.get("embedding_leaf_counts")
    if counts is not None and (not isinstance(counts, list) or len(counts) != n_trees
                               or not all(_is_int(c) and c >= 0 for c in counts)):
        raise ValueError("model file: embedding_leaf_counts must be a count per tree")
    sizes = {"t": n_trees, "t1": n_trees + 1, "i": _get(forest, "n_internal", int, "forest"),
             "l": _get(forest, "n_leaves", int, "forest"),
             "f": _get(metadata, "n_features_in", int),
             "e": 0 if counts is None else sum(counts)}
    outputs = _output_sizes(metadata)
    sizes["w"] = outputs["o"] * outputs["c"]
    if n_trees < 1 or min(sizes.values()) < 0:
        raise ValueError("model file: a forest needs trees, and sizes of at least 0")
    return sizes


def _build_forest(metadata, arrays):
    """The forest the metadata and packed arrays describe, every cross-reference checked; its
    trees hold what prediction needs (see :func:`_forest_members`)."""
    from .forest import _PACKED, _copy_fitted

    forest = _new_estimator(metadata, _forest_classes())
    attributes, n_classes = _input_attributes(metadata, forest)
    n_features, n_outputs = attributes["n_features_in_"], attributes["n_outputs_"]
    meta = _get(metadata, "forest", dict)
    tree_n_classes = _tree_n_classes(meta, "forest", n_classes, n_outputs)
    if attributes["is_categorical_"].any():
        raise ValueError("model file: a forest file stores numeric features only")
    packed = PackedForest(arrays["tree_node_start"], arrays["tree_leaf_start"], arrays["nodes"],
                          arrays["leaf_value"], arrays["leaf_node"].astype(np.int64), n_features,
                          arrays["node_id"].astype(np.int64))
    check_packed_forest(n_features, packed.tree_node_start, packed.tree_leaf_start,
                        packed.nodes, packed.leaf_value)
    importances = arrays["importances"]
    if not np.isfinite(importances).all() or not np.isfinite(packed.leaf_value).all():
        raise ValueError("model file: importances and leaf values must be finite")
    seeds = _get(meta, "tree_random_state", list, "forest")
    if len(seeds) != packed.n_trees or not all(_is_int(s) and 0 <= s < 2**32 for s in seeds):
        raise ValueError("model file: tree_random_state must be a seed per tree")

    ccp_alpha = forest.ccp_alpha
    if not (isinstance(ccp_alpha, numbers.Real) and not isinstance(ccp_alpha, bool)
            and ccp_alpha >= 0):
        raise ValueError("model file: ccp_alpha must be a number >= 0")
    template = forest._make_tree()
    for name, value in attributes.items():
        setattr(template, name, value)
    forest.estimators_ = []
    for t, seed in enumerate(seeds):
        tree = _unpack_tree(packed, t, n_outputs, n_features, tree_n_classes, importances[t])
        estimator = forest._make_tree(random_state=seed)
        _copy_fitted(template, estimator)
        estimator.tree_ = tree
        estimator.ccp_alpha_ = float(forest.ccp_alpha)
        forest.estimators_.append(estimator)
    for name, value in attributes.items():
        setattr(forest, name, value)
    forest.estimator_ = forest._make_tree()
    _PACKED[forest] = ([e.tree_ for e in forest.estimators_], packed)  # packed already
    forest._sample_weight = None
    for key, attribute in (("n_samples", "_n_samples"),
                           ("n_samples_bootstrap", "_n_samples_bootstrap")):
        value = meta.get(key)
        if value is not None and not (_is_int(value) and value >= 0):
            raise ValueError(f"model file: forest {key} must be a count or null")
        setattr(forest, attribute, value)
    oob = meta.get("oob_score")
    if oob is not None:
        if not isinstance(oob, (int, float)) or isinstance(oob, bool):
            raise ValueError("model file: oob_score must be a number or null")
        forest.oob_score_ = float(oob)
    counts = meta.get("embedding_leaf_counts")
    if counts is not None:
        ids = np.split(arrays["embedding_leaf"].astype(np.int64), np.cumsum(counts)[:-1])
        for t, leaf_ids in enumerate(ids):
            leaves = packed.leaf_node[packed.tree_leaf_start[t]:packed.tree_leaf_start[t + 1]]
            if leaf_ids.size == 0 or np.any(np.diff(leaf_ids) <= 0) or not np.isin(
                    leaf_ids, leaves).all():
                raise ValueError("model file: embedding leaves must be sorted leaves of their "
                                 "tree")
        forest._leaf_ids = ids
        forest._n_features_out = int(sum(counts))
    return forest


def _unpack_tree(packed, t, n_outputs, n_features, n_classes, importances):
    """Tree ``t`` of a packed forest as a :class:`~fasttree.tree.Tree` with its own node ids:
    float32 thresholds, leaf values; the statistics a forest file does not store (impurity,
    sample counts, internal nodes' values) are NaN, its importances given."""
    inner = slice(packed.tree_node_start[t], packed.tree_node_start[t + 1])
    leaves = slice(packed.tree_leaf_start[t], packed.tree_leaf_start[t + 1])
    node_id, leaf_node = packed.node_id[inner], packed.leaf_node[leaves]
    nodes = packed.nodes[inner]
    node_count = node_id.shape[0] + leaf_node.shape[0]
    ids = np.concatenate([node_id, leaf_node])
    if not np.array_equal(np.sort(ids), np.arange(node_count)) or (
            node_id.shape[0] and node_id[0] != 0):
        raise ValueError(f"model file: the node ids of tree {t} are not its nodes, root first")
    children = nodes[:, 2:].astype(np.int64)
    child_id = np.where(children >= 0, node_id[np.maximum(children, 0)],
                        leaf_node[np.maximum(~children, 0)])
    left = np.full(node_count, TREE_LEAF, dtype=np.int64)
    right = left.copy()
    left[node_id], right[node_id] = child_id[:, 0], child_id[:, 1]
    feature = np.full(node_count, TREE_UNDEFINED, dtype=np.int64)
    feature[node_id] = nodes[:, 0] & ((1 << MISSING_RIGHT_BIT) - 1)
    threshold = np.full(node_count, float(TREE_UNDEFINED))
    threshold[node_id] = nodes[:, 1].view(np.float32)
    missing_branch = np.zeros(node_count, dtype=np.int32)
    missing_branch[node_id] = nodes[:, 0] >> MISSING_RIGHT_BIT
    width = packed.leaf_value.shape[1] // n_outputs
    value = np.full((node_count, n_outputs, width), np.nan)
    value[leaf_node] = packed.leaf_value[leaves].reshape(-1, n_outputs, width)
    parent = np.zeros(node_count, dtype=np.int64)
    parent[child_id] = node_id[:, None]
    depth = np.zeros(node_count, dtype=np.int64)
    for _ in range(node_count):  # a level a round (the structure is checked: it ends)
        deeper = np.where(np.arange(node_count) == 0, 0, depth[parent] + 1)
        if np.array_equal(deeper, depth):
            break
        depth = deeper
    return Tree(children_left=left, children_right=right, feature=feature, threshold=threshold,
                value=value, impurity=np.full(node_count, np.nan),
                n_node_samples=np.zeros(node_count, dtype=np.int64),
                weighted_n_node_samples=np.full(node_count, np.nan), depth=depth,
                n_features=n_features, missing_branch=missing_branch, n_classes=n_classes,
                importances=importances)


def _check_tree_arrays(arrays, n_features):
    """The node arrays form a tree prediction can walk; values a reader uses are finite."""
    left, right = arrays["children_left"], arrays["children_right"]
    node_count = left.shape[0]
    check_tree(n_features, left.astype(NODE_DTYPE), right.astype(NODE_DTYPE),
               arrays["feature"].astype(NODE_DTYPE), arrays["threshold"],
               arrays["split_kind"], arrays["missing_branch"], arrays["category_offset"],
               arrays["category_n_codes"], arrays["category_branch"])
    internal = left != TREE_LEAF
    # check_tree makes every walk terminate; a tree also gives each node but the root one parent
    n_children = np.where(internal, right - left + 1, 0)
    children = np.repeat(left[internal], n_children[internal]) + (
        np.arange(n_children.sum()) - np.repeat(np.cumsum(n_children[internal]) -
                                                n_children[internal], n_children[internal]))
    if not np.array_equal(np.sort(children), np.arange(1, node_count)):
        raise ValueError("model file: the nodes do not form a tree (every node but the root "
                         "must be the child of exactly one node)")
    parent = np.repeat(np.flatnonzero(internal), n_children[internal])
    depth = arrays["depth"]
    if depth[0] != 0 or np.any(depth[children] != depth[parent] + 1):
        raise ValueError("model file: depth does not match the tree")
    leaves = ~internal
    if np.any(arrays["feature"][leaves] != TREE_UNDEFINED):
        raise ValueError("model file: a leaf has a split feature")
    threshold_nodes = internal & (arrays["split_kind"] == SPLIT_THRESHOLD)
    # +inf is a threshold (scikit-learn's split of the known values from the missing ones)
    if np.isnan(arrays["threshold"][threshold_nodes]).any():
        raise ValueError("model file: a threshold is NaN")
    for name in ("value", "impurity", "weighted_n_node_samples"):
        if not np.isfinite(arrays[name]).all():
            raise ValueError(f"model file: {name} holds NaN or infinity")
    if np.any(arrays["weighted_n_node_samples"] < 0) or np.any(arrays["n_node_samples"] < 0):
        raise ValueError("model file: negative sample counts")


def _check_categorical_nodes(arrays, is_categorical, categories):
    """Categorical splits name categorical features, with a map slot per category + unseen."""
    internal = arrays["children_left"] != TREE_LEAF
    categorical = np.flatnonzero(internal & (arrays["split_kind"] >= SPLIT_SUBSET))
    features = arrays["feature"][categorical]
    if not is_categorical[features].all():
        raise ValueError("model file: a categorical split names a numeric feature")
    n_codes = np.array([max(len(categories[f]), 1) + 1 for f in features], dtype=np.int64)
    if not np.array_equal(arrays["category_n_codes"][categorical], n_codes):
        raise ValueError("model file: a categorical split's map does not match the feature's "
                         "categories")
