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


# -- writing ---------------------------------------------------------------------------------
def save(estimator, path):
    """Write a fitted fasttree estimator to a model file.

    Parameters
    ----------
    estimator : fitted fasttree estimator
        One of ``DecisionTreeClassifier``, ``DecisionTreeRegressor``, ``ExtraTreeClassifier``,
        ``ExtraTreeRegressor``, ``ID3Classifier``, ``C45Classifier``.
    path : str, os.PathLike or writable binary file object

    Raises
    ------
    TypeError
        ``estimator`` is not one of those classes.
    NotFittedError
        ``estimator`` is not fitted.
    ValueError
        Class labels or categories that cannot be stored without pickle (see
        ``docs/model_files.rst``).

    Notes
    -----
    Parameters that JSON cannot hold (a ``RandomState`` or ``Generator`` as ``random_state``)
    are stored as ``null`` and listed under ``params_not_saved``; they only matter to a refit.
    """
    classes = _estimator_classes()
    name = type(estimator).__name__
    if classes.get(name) is not type(estimator):
        raise TypeError(f"save takes a fasttree estimator ({', '.join(sorted(classes))}); got "
                        f"{name}.")
    estimator._check_is_fitted()
    from . import __version__

    tree = estimator.tree_
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
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "fasttree_version": __version__,
        "estimator": name,
        "params": params,
        "params_not_saved": not_saved,
        "n_features_in": int(estimator.n_features_in_),
        "n_outputs": n_outputs,
        "max_features": int(estimator.max_features_),
        "ccp_alpha": float(getattr(estimator, "ccp_alpha_", estimator.ccp_alpha)),
        "classes": classes_,
        "feature_names_in": None if names is None else [str(n) for n in names],
        "target_name": _target_name(estimator),
        "is_categorical": [bool(b) for b in estimator.is_categorical_],
        "categories": [None if c is None else _labels_to_json(c, "categories_")
                       for c in estimator.categories_],
        "missing_in_fit": [bool(b) for b in estimator.missing_in_fit_],
        "tree": {
            "node_count": tree.node_count,
            "n_map": int(tree.category_branch.shape[0]),
            "fractional_missing": tree.fractional_missing,
            "n_classes": None if tree._n_classes is None else [int(k) for k in tree._n_classes],
        },
    }
    try:
        text = json.dumps(metadata, allow_nan=False, indent=1)
    except ValueError as exc:  # a non-finite float among labels or parameters
        raise ValueError(f"cannot save {name}: {exc}") from None
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(METADATA_MEMBER, _ZIP_DATE), text.encode("utf-8"),
                         compress_type=zipfile.ZIP_DEFLATED)
        for member, (dtype, _) in TREE_ARRAYS.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(
                buffer, np.ascontiguousarray(getattr(tree, member), dtype=dtype),
                allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(member + ".npy", _ZIP_DATE), buffer.getvalue(),
                             compress_type=zipfile.ZIP_DEFLATED)


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
            sizes = _array_sizes(metadata)
            arrays = {name: _read_array(archive, name, sizes) for name in TREE_ARRAYS}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError,
            NotImplementedError, UnicodeDecodeError, RecursionError, OverflowError) as exc:
        # a damaged archive: bad CRC, truncated or undecodable member, unknown compression
        raise ValueError(f"corrupted fasttree model file ({type(exc).__name__}: {exc})") from None
    return _build_estimator(metadata, arrays)


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


def _array_sizes(metadata):
    """The sizes the node arrays' shapes are written in (see :data:`TREE_ARRAYS`)."""
    tree = _get(metadata, "tree", dict)
    sizes = {"n": _get(tree, "node_count", int, "tree"), "m": _get(tree, "n_map", int, "tree"),
             "o": _get(metadata, "n_outputs", int), "c": 1}
    classes = metadata.get("classes")
    if classes is not None:
        if not isinstance(classes, list) or not all(
                isinstance(c, dict) and isinstance(c.get("values"), list) for c in classes):
            raise ValueError("model file: classes must be a list of label arrays")
        sizes["c"] = max((len(c["values"]) for c in classes), default=0)
    if min(sizes.values()) < 0:
        raise ValueError("model file: negative sizes in the metadata")
    return sizes


def _read_array(archive, name, sizes):
    """One node array: its ``.npy`` header's dtype (never an object dtype: nothing is unpickled)
    and shape, and the member's size, checked against the metadata before the data are read."""
    dtype, shape_spec = TREE_ARRAYS[name]
    dtype = np.dtype(dtype)
    shape = tuple(sizes[s] for s in shape_spec)
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


def _build_estimator(metadata, arrays):
    """The estimator the metadata and node arrays describe, every cross-reference checked."""
    from ._base import resolve_n_jobs

    classes = _estimator_classes()
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

    n_features = _get(metadata, "n_features_in", int)
    n_outputs = _get(metadata, "n_outputs", int)
    max_features = _get(metadata, "max_features", int)
    if n_features < 1 or n_outputs < 1 or not 1 <= max_features <= n_features:
        raise ValueError("model file: n_features_in, n_outputs and max_features must be "
                         "positive, max_features at most n_features_in")
    tree_meta = _get(metadata, "tree", dict)
    fractional = _get(tree_meta, "fractional_missing", bool, "tree")
    node_count = tree_meta["node_count"]  # read and checked with the arrays
    if node_count < 1:
        raise ValueError("model file: the tree has no node")

    classifier = cls._estimator_type == "classifier"
    raw_classes = metadata.get("classes")
    value = arrays["value"]
    if classifier:
        if not isinstance(raw_classes, list) or len(raw_classes) != n_outputs:
            raise ValueError(f"model file: a classifier needs a list of {n_outputs} class "
                             "arrays")
        class_arrays = [_labels_from_json(c, "classes") for c in raw_classes]
        n_classes = np.array([c.shape[0] for c in class_arrays], dtype=np.intp)
        if n_classes.min() < 1 or value.shape[2] != n_classes.max():
            raise ValueError("model file: the classes do not match the width of value")
    elif raw_classes is not None or value.shape[2] != 1:
        raise ValueError("model file: a regressor has no classes and one value per output")
    # classes per output (1 for regression), recorded by trees of several outputs and by pruned
    # trees
    tree_n_classes = tree_meta.get("n_classes")
    per_output = n_classes.tolist() if classifier else [1] * n_outputs
    if tree_n_classes != per_output and (tree_n_classes is not None
                                         or (classifier and n_outputs > 1)):
        raise ValueError("model file: tree n_classes does not match the classes")

    names = metadata.get("feature_names_in")
    if names is not None and (not isinstance(names, list) or len(names) != n_features
                              or not all(isinstance(s, str) for s in names)):
        raise ValueError(f"model file: feature_names_in must be {n_features} strings")
    is_categorical = _bool_list(metadata, "is_categorical", n_features)
    missing_in_fit = _bool_list(metadata, "missing_in_fit", n_features)
    raw_categories = _get(metadata, "categories", list)
    if len(raw_categories) != n_features or any(
            (c is None) == bool(is_cat) for c, is_cat in zip(raw_categories, is_categorical)):
        raise ValueError("model file: categories must list the categories of each categorical "
                         "feature and null for the others")
    categories = [None if c is None else _labels_from_json(c, f"categories of feature {j}")
                  for j, c in enumerate(raw_categories)]

    _check_tree_arrays(arrays, n_features)
    _check_categorical_nodes(arrays, is_categorical, categories)
    tree = Tree(
        **{k: arrays[k] for k in TREE_ARRAYS},
        n_features=n_features, fractional_missing=fractional,
        n_classes=None if tree_n_classes is None else np.array(tree_n_classes, dtype=np.intp))

    estimator.n_features_in_ = n_features
    estimator.n_outputs_ = n_outputs
    estimator.max_features_ = max_features
    ccp_alpha = metadata.get("ccp_alpha", estimator.ccp_alpha)  # absent before ccp_folds
    if not (isinstance(ccp_alpha, numbers.Real) and not isinstance(ccp_alpha, bool)
            and ccp_alpha >= 0):
        raise ValueError("model file: ccp_alpha must be a number >= 0")
    estimator.ccp_alpha_ = float(ccp_alpha)
    estimator.is_categorical_ = is_categorical
    estimator.categories_ = categories
    estimator.missing_in_fit_ = missing_in_fit
    if names is not None:
        estimator.feature_names_in_ = np.array(names, dtype=object)
    target_name = metadata.get("target_name")
    if target_name is not None:
        if not isinstance(target_name, str):
            raise ValueError("model file: target_name must be a string or null")
        estimator.target_name_ = target_name
    if classifier:
        estimator.classes_ = class_arrays[0] if n_outputs == 1 else class_arrays
        estimator.n_classes_ = int(n_classes[0]) if n_outputs == 1 else n_classes
    estimator.tree_ = tree
    return estimator


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
