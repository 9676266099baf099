"""From user tables to the float32 matrix the kernels take: categories become codes.

A categorical feature is stored in the kernels' matrix as its category codes ``0 .. C - 1``
(exact in float32 up to 2**24 categories), a missing value as NaN, a category never seen in
training as ``C`` (the routing rule's "unseen" slot).  The categories of a feature are the
distinct non-missing training values, sorted (a pandas ``category`` column keeps its own order).
"""

import numbers

import numpy as np

from ._dtypes import X_DTYPE
from ._frames import display_name, is_missing
from ._validation import is_dataframe

#: Most categories a categorical feature may have (codes must be exact in float32).
MAX_CATEGORIES = 2**24


def _is_categorical_dtype(dtype):
    name = str(dtype)
    return name in ("category", "object", "bool", "boolean") or name.startswith("string") or (
        getattr(dtype, "kind", "") in "OSUb")


def _column_is_textual(values):
    """An object column whose known values are not all numbers."""
    for v in values:
        if isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, bool):
            continue
        if v is None or (isinstance(v, float) and v != v):
            continue
        return True
    return False


def resolve_categorical(X, categorical_features, n_features):
    """Boolean mask of the categorical features.

    Parameters
    ----------
    X : array-like or DataFrame
    categorical_features : "from_dtype", None, array-like of int, str or bool
        ``"from_dtype"``: DataFrame columns of pandas ``category``, object, string and bool
        dtypes, and object NumPy columns holding non-numbers; None: none; otherwise indices,
        column names or a boolean mask.
    n_features : int
    """
    if categorical_features is None:
        return np.zeros(n_features, dtype=bool)
    if isinstance(categorical_features, str):
        if categorical_features != "from_dtype":
            raise ValueError(
                "categorical_features must be 'from_dtype', None, or indices, names or a boolean "
                f"mask of the features; got {categorical_features!r}.")
        if is_dataframe(X):
            return np.array([_is_categorical_dtype(d) for d in X.dtypes], dtype=bool)
        arr = np.asarray(X)
        if arr.dtype.kind in "OSU" and arr.ndim == 2:
            if arr.dtype.kind in "SU":
                return np.ones(n_features, dtype=bool)
            return np.array([_column_is_textual(arr[:, j]) for j in range(n_features)])
        if arr.dtype.kind == "b":
            return np.ones(n_features, dtype=bool)
        return np.zeros(n_features, dtype=bool)
    spec = np.asarray(categorical_features)
    if spec.size == 0:
        return np.zeros(n_features, dtype=bool)
    if spec.dtype.kind == "b":
        if spec.shape != (n_features,):
            raise ValueError(f"categorical_features as a boolean mask needs {n_features} values; "
                             f"got shape {spec.shape}.")
        return spec.copy()
    if spec.dtype.kind in "OU":
        names = list(X.columns) if is_dataframe(X) else None
        if names is None:
            raise ValueError("categorical_features names columns, but X has no column names "
                             "(pass a DataFrame, or indices).")
        mask = np.zeros(n_features, dtype=bool)
        for name in spec.ravel():
            if name not in names:
                raise ValueError(
                    f"categorical_features names {display_name(name)}, which is not a column of "
                    f"X; columns are [{', '.join(display_name(c) for c in names)}].")
            mask[names.index(name)] = True
        return mask
    if spec.dtype.kind in "iu":
        mask = np.zeros(n_features, dtype=bool)
        for i in spec.ravel():
            if not -n_features <= i < n_features:
                raise ValueError(f"categorical_features index {i} is out of range for "
                                 f"{n_features} features.")
            mask[i] = True
        return mask
    raise ValueError("categorical_features must be 'from_dtype', None, or indices, names or a "
                     f"boolean mask of the features; got {categorical_features!r}.")


def _columns(X, n_features):
    if is_dataframe(X):
        return [X.iloc[:, j] for j in range(n_features)]
    arr = np.asarray(X)
    return [arr[:, j] for j in range(n_features)]


def fit_categories(X, is_categorical):
    """Categories of each categorical column (sorted distinct known values), None elsewhere."""
    n_features = is_categorical.shape[0]
    columns = _columns(X, n_features)
    categories = []
    for j in range(n_features):
        if not is_categorical[j]:
            categories.append(None)
            continue
        col = columns[j]
        dtype = getattr(col, "dtype", None)
        if str(dtype) == "category":
            cats = np.asarray(col.cat.categories.to_numpy(), dtype=object)
        elif getattr(dtype, "kind", "O") in "biuf":  # numbers (codes): vectorised
            values = np.asarray(col)
            cats = np.unique(values[~np.isnan(values)] if values.dtype.kind == "f" else values)
        else:
            values = np.asarray(col.to_numpy() if hasattr(col, "to_numpy") else col, dtype=object)
            known = values[~is_missing(values)]
            odd = [v for v in known.tolist()
                   if not isinstance(v, (str, bytes, numbers.Number, np.bool_))]
            if odd:
                raise TypeError(
                    f"categorical feature {j} holds a {type(odd[0]).__name__}; each value's "
                    "argument must be a string or a number.")
            try:
                cats = np.array(sorted(set(known.tolist())), dtype=object)
            except TypeError:
                raise TypeError(
                    f"categorical feature {j} mixes values that cannot be ordered (e.g. numbers "
                    "and strings); convert the column to one type.") from None
        if cats.shape[0] > MAX_CATEGORIES:
            raise ValueError(f"categorical feature {j} has {cats.shape[0]} categories; at most "
                             f"{MAX_CATEGORIES} are supported.")
        categories.append(cats)
    return categories


def encode(X, is_categorical, categories, numeric_matrix):
    """The kernels' float32 matrix: numeric columns from ``numeric_matrix(X_numeric)``,
    categorical ones as codes (NaN missing, ``len(categories)`` for a category never seen)."""
    n_samples = X.shape[0]
    n_features = is_categorical.shape[0]
    out = np.empty((n_samples, n_features), dtype=X_DTYPE)
    numeric = np.flatnonzero(~is_categorical)
    columns = _columns(X, n_features)
    if numeric.size:
        if is_dataframe(X):
            part = X.iloc[:, numeric]
        else:
            part = np.asarray(X)[:, numeric]
        out[:, numeric] = numeric_matrix(part)
    for j in np.flatnonzero(is_categorical):
        col = columns[j]
        out[:, j] = _codes(col, categories[j])
    return np.ascontiguousarray(out)


def _missing_mask(col, values):
    if hasattr(col, "isna"):  # a pandas Series: pandas knows its own missing markers
        return np.asarray(col.isna(), dtype=bool)
    return is_missing(values)


def _codes(col, categories):
    """Category codes of one column (float64: NaN missing, ``len(categories)`` unseen)."""
    numbers = np.asarray(col.to_numpy() if hasattr(col, "to_numpy") else col)
    if numbers.dtype.kind in "biuf" and np.asarray(categories).dtype.kind in "biuf":
        return _number_codes(numbers, np.asarray(categories))
    values = np.asarray(numbers, dtype=object)
    missing = _missing_mask(col, values)
    codes = np.full(values.shape[0], np.nan)
    known = values[~missing].tolist()
    unseen = float(len(categories))
    cats = categories.tolist()
    keys = np.asarray(known)
    table = np.asarray(cats)
    if keys.size and table.size and (keys.dtype.kind in "OSU") == (table.dtype.kind in "OSU") \
            and keys.dtype.kind != "O" and table.dtype.kind != "O":
        # vectorised: binary search in the sorted categories, then check the hit
        sorter = np.argsort(table, kind="stable")
        pos = np.minimum(np.searchsorted(table, keys, sorter=sorter), table.size - 1)
        found = table[sorter[pos]] == keys
        codes[~missing] = np.where(found, sorter[pos], unseen)
    else:
        lookup = {v: i for i, v in enumerate(cats)}
        codes[~missing] = [lookup.get(v, unseen) for v in known]
    return codes


def _number_codes(values, categories):
    """Vectorised :func:`_codes` for a numeric column and sorted numeric categories."""
    values = values.astype(np.float64)
    codes = np.full(values.shape[0], np.nan)
    known = ~np.isnan(values)
    if categories.size == 0:
        codes[known] = 0.0
        return codes
    pos = np.minimum(np.searchsorted(categories, values[known]), categories.size - 1)
    codes[known] = np.where(categories[pos] == values[known], pos, categories.size)
    return codes
