"""Input validation at the Python boundary: check once, coerce once, fail with a clear message."""

import numbers
import warnings

import numpy as np

from ._dtypes import FLOAT_DTYPE, INDEX_DTYPE, X_DTYPE
from ._frames import (
    as_vector,
    column_names,
    display_name,
    is_dataframe,
    is_missing,
    unsupported_column,
)
from .exceptions import data_conversion_warning

_FLOAT32_MAX = np.finfo(np.float32).max
_BLOCK_BYTES = 64 * 2**20  # float64 temporaries while a DataFrame becomes float32


def is_sparse(X):
    """A scipy.sparse matrix or array (duck-typed: no scipy import)."""
    return type(X).__module__.startswith("scipy.sparse")


def check_sparse_X(X, *, fmt, name="X"):
    """Return a scipy sparse ``X`` as a float32 matrix in format ``fmt`` ("csc" or "csr"),
    its duplicates summed, after scikit-learn's checks for sparse input.

    Raises
    ------
    TypeError
        Values that are not numbers.
    ValueError
        Not 2-D, empty, NaN (sparse input has no missing values, as in scikit-learn), infinity,
        or a value too large for float32.
    """
    if len(X.shape) != 2:
        raise ValueError(f"{name} must be a 2-D sparse matrix; got shape {X.shape}.")
    _check_not_empty(X.shape)
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric; got a sparse matrix of dtype {X.dtype}.")
    if X.shape[0] >= np.iinfo(INDEX_DTYPE).max:
        raise ValueError(f"{name} has {X.shape[0]} rows; row ids are int32, so fasttree takes "
                         f"at most {np.iinfo(INDEX_DTYPE).max - 1}.")
    out = X.asformat(fmt)
    out = out.copy() if out is X else out  # never change the caller's matrix
    out.sum_duplicates()  # also sorts the indices
    data = out.data
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        if np.isnan(data).any():
            raise ValueError(f"Input {name} contains NaN; sparse input cannot have missing "
                             "values (pass a dense array to use them).")
        raise ValueError(f"Input {name} contains infinity.")
    if data.dtype != X_DTYPE and data.size and np.abs(data).max() > _FLOAT32_MAX:
        raise ValueError(f"{name} contains a value too large for float32.")
    return out.astype(X_DTYPE, copy=False)


def feature_names_of(X):
    """Column names of a pandas, polars or pyarrow table whose names are all strings, else None.

    Raises
    ------
    TypeError
        Names mixing strings and other types (scikit-learn's rule and message).
    """
    names = column_names(X)
    if not names:
        return None
    names = np.asarray(names, dtype=object)
    types = sorted(t.__qualname__ for t in set(type(v) for v in names))
    if len(types) > 1 and "str" in types:
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but your input has {types} as feature name / column name types. "
            "If you want feature names to be stored and validated, you must convert "
            "them all to strings, by using X.columns = X.columns.astype(str) for "
            "example. Otherwise you can remove feature / column names from your input "
            "data, or convert them all to a non-string data type.")
    return names if types == ["str"] else None


def check_feature_names(estimator, X, *, reset):
    """Set (``reset=True``, in fit) or check ``estimator.feature_names_in_`` against ``X``'s
    column names, with scikit-learn's rules, warnings and messages
    (``sklearn.utils.validation._check_feature_names``).

    Raises
    ------
    ValueError
        Names that differ from fit's, or the same names in another order.
    """
    names = feature_names_of(X)
    if reset:
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    estimator_name = type(estimator).__name__
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {estimator_name} was fitted without feature "
                      "names", UserWarning, stacklevel=3)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {estimator_name} was fitted "
                      "with feature names", UserWarning, stacklevel=3)
        return
    if len(fitted) == len(names) and np.all(fitted == names):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    for title, listed in (("Feature names unseen at fit time:\n", unexpected),
                          ("Feature names seen at fit time, yet now missing:\n", missing)):
        if listed:
            message += title + "".join(f"- {v}\n" for v in listed[:5])
            message += "- ...\n" if len(listed) > 5 else ""
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


def _check_not_empty(shape):
    """scikit-learn's errors (``check_array``'s wording) for no rows or no columns."""
    for count, what in ((shape[0], "sample"), (shape[1], "feature")):
        if count == 0:
            raise ValueError(f"Found array with 0 {what}(s) (shape={tuple(shape)}) while a "
                             "minimum of 1 is required.")


def _check_2d(X, arr, name):
    """scikit-learn's errors (``check_array``'s wording) for input that is not 2-D."""
    if arr.ndim == 2:
        return
    if arr.ndim == 1 and type(X).__module__.startswith("pandas") and hasattr(X, "to_frame"):
        raise ValueError(  # one row of a DataFrame, X.iloc[i], is a Series
            f"Expected a 2-dimensional container but got {type(X)} instead. Pass a DataFrame "
            "containing a single row (i.e. single sample) or a single column (i.e. single "
            "feature) instead. X.iloc[[i]] selects row i as a DataFrame.")
    if arr.ndim < 2:
        raise ValueError(
            f"Expected 2D array, got {'1D' if arr.ndim else 'scalar'} array instead:\n"
            f"array={arr}.\nReshape your data either using array.reshape(-1, 1) if your data "
            "has a single feature or array.reshape(1, -1) if it contains a single sample.")
    raise ValueError(f"Found array with dim {arr.ndim}; {name} must be 2-D (n_samples, "
                     "n_features).")


def _numeric_at_fit(name, column, dtype, categorical_features):
    """The error for a non-numeric column in predict whose feature was numeric in fit, worded
    for the ``categorical_features`` the estimator was fitted with."""
    where = f"{name} column {display_name(column)} has dtype {dtype}, but it was numeric when " \
            "the estimator was fitted"
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        return TypeError(
            f"{where}; a column must have the same dtype in predict as in fit (a categorical "
            "feature must already be categorical, with its categories, in the data passed to "
            "fit).")
    return TypeError(
        f"{where} (categorical_features={categorical_features!r} does not declare it); to use "
        "it as a category, fit with categorical_features='from_dtype' (the default) or name it "
        "in categorical_features.")


def check_X(X, *, order, name="X", fitted=False, categorical_features="from_dtype"):
    """Return ``X`` as a finite 2-D float32 array in the given memory order.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
    order : {"C", "F"}
        Memory order of the result; the kernels take C-contiguous arrays.
    name : str, default="X"
        What messages call ``X``.
    fitted : bool, default=False
        Whether ``X``'s features are those a fitted estimator took as numeric (predict's
        check): a column that is not numeric gets a message about fit's dtypes.
    categorical_features : default="from_dtype"
        The estimator's setting, for the wording of that message.

    NaN (and None or pandas NA in a DataFrame) marks a missing value; every NaN is made the
    positive quiet NaN, which the presort places after every number.

    Raises
    ------
    TypeError
        Sparse input, or a column that is not numeric.
    ValueError
        Not 2-D, empty, infinity, or a value too large for float32.
    """
    if is_sparse(X):
        raise TypeError(f"{name} is a sparse matrix; this path needs a dense array.")
    owned = is_dataframe(X)  # then the float32 result is built here: NaN fixed in place
    if owned:
        _check_not_empty(X.shape)  # before the dtypes: an empty table is the problem then
        for column, dtype in zip(X.columns, X.dtypes):
            kind = getattr(dtype, "kind", "O")
            if kind in "mM":  # dates and durations: neither numbers nor categories
                raise unsupported_column(name, column, dtype)
            if kind not in "biuf" and fitted:
                raise _numeric_at_fit(name, column, dtype, categorical_features)
            if kind not in "biuf":
                raise TypeError(
                    f"{name} column {display_name(column)} has dtype {dtype} and is not "
                    "declared categorical; pass categorical_features='from_dtype' (the default) "
                    "or name it in categorical_features.")
        X = _frame_as_float32(X, name, order)
    arr = np.asarray(X)
    _check_2d(X, arr, name)  # before the values: a 1-D row of strings is a shape problem
    if arr.dtype.kind in "OUS":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} must be numeric; it holds values that are not numbers ({exc})."
                + (" Those features were numeric when the estimator was fitted." if fitted
                   else "")) from None
    elif arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}.")
    elif arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}.")
    _check_not_empty(arr.shape)
    if arr.shape[0] >= np.iinfo(INDEX_DTYPE).max:
        raise ValueError(f"{name} has {arr.shape[0]} rows; row ids are int32, so fasttree takes "
                         f"at most {np.iinfo(INDEX_DTYPE).max - 1}.")
    nan = None
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():  # one pass in the common case
        nan = np.isnan(arr)
        if np.isinf(arr).any():
            raise ValueError(f"{name} contains infinity.")
        if not nan.any():
            nan = None
    if _too_large(arr):
        raise ValueError(f"{name} contains a value too large for float32.")
    out = np.array(arr, dtype=X_DTYPE, order=order, copy=(nan is not None and not owned) or None)
    if nan is not None:
        out[nan] = np.nan  # one NaN bit pattern: the presort orders NaN after every number
    return out


def _frame_as_float32(X, name, order):
    """A numeric DataFrame as a float32 array, converted in blocks of columns: the float64
    temporaries stay under ``_BLOCK_BYTES`` instead of copying the whole table."""
    n_rows, n_columns = X.shape
    out = np.empty((n_rows, n_columns), dtype=X_DTYPE, order=order)
    step = max(1, _BLOCK_BYTES // (8 * max(n_rows, 1)))
    for start in range(0, n_columns, step):
        block = X.iloc[:, start:start + step].to_numpy(dtype=np.float64, na_value=np.nan)
        if _too_large(block):
            raise ValueError(f"{name} contains a value too large for float32.")
        out[:, start:start + step] = block
    return out


def _too_large(arr):
    """Whether a finite value of ``arr`` overflows float32 (without a temporary copy;
    infinity itself is reported by the caller)."""
    if arr.dtype.kind != "f" or arr.dtype.itemsize <= 4 or arr.size == 0:
        return False  # integers and float16/float32 always fit
    high = np.nanmax(arr, initial=-np.inf)
    low = np.nanmin(arr, initial=np.inf)
    return _FLOAT32_MAX < high < np.inf or -np.inf < low < -_FLOAT32_MAX


def check_y(y, n_samples, *, regression, estimator_name="The estimator", check_length=True,
            multi_output=False):
    """Return ``y`` as a 1-D array of length ``n_samples`` (float64 for regression).

    A column vector of shape (n, 1) is flattened; with ``multi_output``, a (n, n_outputs) array
    with several columns is returned 2-D.
    """
    if y is None:
        raise ValueError(f"{estimator_name} requires y to be passed, but the target y is None.")
    if is_sparse(y):
        raise TypeError("y is a sparse matrix; pass a 1-D array.")
    y = as_vector(y)  # a polars or pyarrow y: converted once here
    if is_dataframe(y):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        if not multi_output:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                          "flattened.", data_conversion_warning(), stacklevel=3)
        arr = arr.ravel()
    if not (arr.ndim == 1 or (multi_output and arr.ndim == 2 and arr.shape[1] > 1)):
        raise ValueError(
            f"y must be 1-D (n_samples,){' or 2-D (n_samples, n_outputs)' * multi_output}; got "
            f"shape {arr.shape}.")
    if check_length and arr.shape[0] != n_samples:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {n_samples}, y has "
            f"{arr.shape[0]}.")
    _check_no_missing_target(arr)  # first: labels with NaN would fail as unorderable
    if regression:
        if arr.dtype.kind not in "biuf":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError("y must be numeric for regression.") from None
        arr = np.asarray(arr, dtype=FLOAT_DTYPE)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("y contains infinity.")
    return arr


def _check_no_missing_target(arr):
    """Refuse a target with missing values: NaN, None, pandas NA or NaT (what a string,
    category or nullable column holds for an empty cell), in numbers, labels or objects."""
    if arr.dtype.kind == "f":
        missing = np.isnan(arr)
    elif arr.dtype.kind == "O":
        missing = is_missing(arr.ravel()).reshape(arr.shape)
    else:
        return
    if not missing.any():
        return
    first = arr.ravel()[np.argmax(missing.ravel())]
    marker = {"NoneType": "None", "NAType": "pd.NA", "NaTType": "NaT"}.get(
        type(first).__name__, "NaN")
    rows = missing if missing.ndim == 1 else missing.any(axis=1)
    raise ValueError(f"y contains {marker} in {int(rows.sum())} of {rows.shape[0]} rows; drop "
                     "the rows with a missing target first.")


def check_sample_weight(sample_weight, n_samples):
    """Return finite, non-negative float64 weights of length ``n_samples`` (ones if None)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=FLOAT_DTYPE)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=FLOAT_DTYPE)
    try:
        w = np.asarray(sample_weight, dtype=FLOAT_DTYPE)
    except (TypeError, ValueError):
        raise TypeError("sample_weight must be numeric.") from None
    if w.ndim == 0:  # scikit-learn's wording and exception type
        raise TypeError("Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, "
                        f"got scalar `{w!r}` instead.")
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},); got {w.shape}.")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinity.")
    if (w < 0).any():
        raise ValueError("sample_weight contains negative values.")
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero; at least one weight must be positive.")
    return np.ascontiguousarray(w)
