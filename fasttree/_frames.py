"""Tables from other libraries, converted once at the Python boundary.

fasttree reads tables through pandas' interface (column names, dtypes, categoricals).  A polars
DataFrame or a pyarrow Table/RecordBatch is converted once, column by column with the library's
own ``to_numpy`` (so polars needs no pyarrow), into a pandas DataFrame:

====================================  ===========================================================
polars / Arrow column                 pandas column
====================================  ===========================================================
integers, floats                      NumPy numbers; a null becomes NaN (integers turn float64)
boolean                               bool, or object (True/False/None) when it has nulls
string (Utf8, large, view)            object strings, None for null
polars ``Enum``                       ``category`` with the Enum's categories, in their order
polars ``Categorical``                ``category`` of its distinct values, sorted (since polars
                                      2.0 a Categorical has no fixed category list)
Arrow ``dictionary``                  ``category`` with the dictionary, in its order (as
                                      ``pyarrow.Table.to_pandas``)
null (all missing)                    object column of missing values
anything else (dates, lists, ...)     ``TypeError`` naming the column
====================================  ===========================================================

A polars Series or a pyarrow Array/ChunkedArray (a target ``y``) becomes a 1-D NumPy array by
the same rules, categories decoded to their values.  Neither polars nor pyarrow is imported
unless the caller passes one of their objects.
"""

import numpy as np


def _library(obj):
    """Top-level module of ``obj``'s type: "polars", "pyarrow", "pandas", ..."""
    return type(obj).__module__.partition(".")[0]


def _is_polars_frame(obj):
    return _library(obj) == "polars" and hasattr(obj, "get_column") and hasattr(obj, "schema")


def _is_arrow_table(obj):
    return _library(obj) == "pyarrow" and hasattr(obj, "column_names") and hasattr(obj, "schema")


def _is_polars_series(obj):
    return _library(obj) == "polars" and hasattr(obj, "to_physical")


def _is_arrow_array(obj):
    return (_library(obj) == "pyarrow" and hasattr(obj, "type") and hasattr(obj, "__len__")
            and not hasattr(obj, "schema"))


def is_dataframe(X):
    """A pandas-like DataFrame (duck-typed: no pandas import)."""
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def column_names(X):
    """Column names of a pandas, polars or pyarrow table (a list), else None."""
    if _is_polars_frame(X):
        return list(X.columns)
    if _is_arrow_table(X):
        return list(X.column_names)
    if is_dataframe(X):
        return list(X.columns)
    return None


def _import_pandas(what):
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"fasttree reads {what} through pandas; install pandas "
                          "(pip install pandas).") from None
    return pd


def as_frame(X, name="X"):
    """``X`` ready for fasttree's table readers.

    A polars DataFrame or a pyarrow Table/RecordBatch becomes a pandas DataFrame (see the module
    docstring); a pandas DataFrame is returned as it is, except that a nullable ``boolean``
    column holding NA becomes an object column of True/False/None (NumPy cannot sort ``pd.NA``);
    anything else is returned unchanged.

    Raises
    ------
    TypeError
        A polars LazyFrame, or a column of a type fasttree cannot read (dates, lists, ...).
    """
    if _library(X) == "polars" and type(X).__name__ == "LazyFrame":
        raise TypeError(f"{name} is a polars LazyFrame; call .collect() on it first.")
    if _is_polars_frame(X):
        pd = _import_pandas("polars DataFrames")
        columns = [_polars_column(X.get_column(c), name, pd) for c in X.columns]
        return _assemble(pd, columns, list(X.columns), X.height)
    if _is_arrow_table(X):
        pd = _import_pandas("pyarrow Tables")
        names = list(X.column_names)
        columns = [_arrow_column(X.column(j), names[j], name, pd) for j in range(len(names))]
        return _assemble(pd, columns, names, X.num_rows)
    if column_names(X) is not None:
        return _normalize_pandas(X)
    return X


def as_vector(y, name="y"):
    """A polars Series or pyarrow Array/ChunkedArray as a 1-D NumPy array (categories decoded
    to their values, nulls as NaN or None); a polars or pyarrow table as a pandas DataFrame;
    anything else unchanged."""
    if _is_polars_series(y):
        return _polars_column(y, name, None)
    if _is_arrow_array(y):
        return _arrow_column(y, "", name, None)
    return as_frame(y, name)


def _assemble(pd, columns, names, n_rows):
    # integer keys then the real names: keeps duplicate names, as pandas and pyarrow allow them
    frame = pd.DataFrame(dict(enumerate(columns)), index=pd.RangeIndex(n_rows), copy=False)
    frame.columns = names
    return frame


def _normalize_pandas(X):
    """A shallow copy of ``X`` whose nullable ``boolean`` columns holding NA are objects."""
    fixes = {}
    for j, dtype in enumerate(X.dtypes):
        if str(dtype) == "boolean":
            col = X.iloc[:, j]
            if col.isna().any():
                fixes[j] = col.astype(object).where(col.notna(), None)
    if not fixes:
        return X
    X = X.copy(deep=False)
    for j, col in fixes.items():
        X.isetitem(j, col)
    return X


def display_name(column):
    """A column name as messages print it: ``'Island'``, never ``np.str_('Island')``."""
    return repr(column.item() if isinstance(column, np.generic) else column)


def unsupported_column(name, column, dtype):
    """The error for a column whose type is neither numeric nor categorical."""
    return TypeError(f"{name} column {display_name(column)} has type {dtype}, which fasttree "
                     "cannot read; convert it to numbers, strings or a categorical first.")


def is_missing(values):
    """Missing cells of a 1-D object array: None, NaN, pandas NA and NaT."""
    values = np.asarray(values, dtype=object)
    try:  # vectorised: NaN and NaT differ from themselves, None equals None
        return np.asarray(values != values, dtype=bool) | np.equal(values, None)
    except (TypeError, ValueError):  # pd.NA's comparisons give NA, which has no truth value
        pass
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            out[i] = True
        else:
            try:
                out[i] = bool(v != v)  # NaN-like scalars (numpy floats, NaT; pd.NA raises)
            except (TypeError, ValueError):
                out[i] = type(v).__name__ in ("NAType", "NaTType")
    return out


# -- polars ----------------------------------------------------------------------------------------

def _polars_column(s, name, pd):
    """One polars column as a NumPy array or, for a categorical one with ``pd``, a pandas
    Categorical (without ``pd``: its values)."""
    import polars as pl

    dtype = s.dtype
    if dtype.is_integer() or dtype.is_float() or dtype == pl.Boolean:
        values = s.to_numpy()
        if values.dtype.kind == "O" and dtype != pl.Boolean:  # e.g. Int128 as Python ints
            raise unsupported_column(name, s.name, dtype)
        return values
    if dtype in (pl.String, pl.Null):
        return s.to_numpy().astype(object, copy=False)
    if not isinstance(dtype, (pl.Enum, pl.Categorical)):
        raise unsupported_column(name, s.name, dtype)
    if pd is None:
        return s.cast(pl.String).to_numpy().astype(object, copy=False)
    if isinstance(dtype, pl.Enum):
        codes = s.to_physical().fill_null(-1).to_numpy().astype(np.int64)
        return pd.Categorical.from_codes(codes, categories=dtype.categories.to_list())
    return pd.Categorical(s.cast(pl.String).to_numpy())  # sorted distinct values


# -- pyarrow ---------------------------------------------------------------------------------------

def _is_arrow_string(t):
    return str(t) in ("string", "large_string", "string_view")  # is_string_view: pyarrow>=16


def _arrow_column(col, column, name, pd):
    """One Arrow column (Array or ChunkedArray) as a NumPy array or a pandas Categorical."""
    import pyarrow as pa

    if isinstance(col, pa.Array):
        col = pa.chunked_array([col], type=col.type)
    t = col.type
    types = pa.types
    if types.is_integer(t) or types.is_floating(t) or types.is_boolean(t) or types.is_null(t):
        values = col.to_numpy()
        return values.astype(object, copy=False) if types.is_null(t) else values
    if _is_arrow_string(t):
        return col.to_numpy().astype(object, copy=False)
    if types.is_dictionary(t):
        value_type = t.value_type
        if not (_is_arrow_string(value_type) or types.is_integer(value_type)
                or types.is_floating(value_type)):
            raise unsupported_column(name, column, t)
        if pd is None:  # a target: the values themselves
            return col.cast(value_type).to_numpy().astype(object, copy=False)
        unified = col.unify_dictionaries()
        chunks = unified.chunks
        if chunks:
            categories = chunks[0].dictionary.to_numpy(zero_copy_only=False)
            codes = np.concatenate([c.indices.cast(pa.int64()).fill_null(-1).to_numpy()
                                    for c in chunks])
        else:
            categories, codes = [], np.zeros(0, dtype=np.int64)
        return pd.Categorical.from_codes(codes, categories=categories)
    raise unsupported_column(name, column, t)
