"""Reading CSV files, and the tables bundled with the package (numpy only; pandas only for
``as_frame=True``)."""

import csv
import io
from dataclasses import dataclass
from importlib import resources

import numpy as np


@dataclass
class Dataset:
    """Features, target and names read from a CSV file.

    ``X`` is a float64 matrix (NaN for an empty cell) when every feature column is numeric, else
    an object matrix holding floats (NaN for an empty cell) in the numeric columns and strings
    (None for an empty cell) in the categorical ones, which ``categorical`` marks.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target_name: str
    categorical: np.ndarray
    #: the whole table as a pandas DataFrame (``load_dataset(..., as_frame=True)`` only)
    frame: object = None


class DatasetError(ValueError):
    """A CSV file that cannot be turned into a numeric feature matrix; the message says why."""


def read_csv(source, target=None):
    """Read a CSV file with a header row into features and a target column.

    Parameters
    ----------
    source : str, path or text file object
    target : str, optional
        Name of the target column; defaults to the last column.

    Returns
    -------
    Dataset

    A feature column whose non-empty cells are all numbers is numeric; any other is categorical.
    An empty cell is a missing value.  The file is read by :func:`read_rows` (delimiter, byte-order
    mark, blank lines).

    Raises
    ------
    DatasetError
        Unknown target column, an empty target cell, or any error of :func:`read_rows`.
    """
    header, body = read_rows(source)
    if target is None:
        target = header[-1]
    if target not in header:
        raise DatasetError(f"no column named {target!r}; columns are: {', '.join(header)}")
    t = header.index(target)
    columns = list(zip(*body))
    y = np.array(columns[t], dtype=object)
    missing_target = y == ""
    if missing_target.any():
        raise DatasetError(
            f"target column {target!r} has {int(missing_target.sum())} empty cells; drop those "
            "rows first")
    feature_names = [name for i, name in enumerate(header) if i != t]
    feature_columns = [columns[i] for i in range(len(header)) if i != t]
    numeric = [_parse_numbers(values) for values in feature_columns]
    categorical = np.array([values is None for values in numeric], dtype=bool)
    if categorical.any():
        X = np.empty((len(body), len(feature_names)), dtype=object)
        for j, values in enumerate(feature_columns):
            X[:, j] = ([None if v == "" else v for v in values] if categorical[j]
                       else numeric[j])
    else:
        X = np.column_stack(numeric) if numeric else np.empty((len(body), 0))
    return Dataset(X=X, y=_as_numbers_if_possible(y), feature_names=feature_names,
                   target_name=target, categorical=categorical)


def read_rows(source):
    """The header and data rows of a CSV file, checked: not empty, no ragged row.

    Parameters
    ----------
    source : str, path or text file object

    Returns
    -------
    header : list of str
    rows : list of list of str
        The data rows, blank lines skipped.

    The delimiter is the one of ``, ; TAB |`` that the header line holds most often (``,`` if
    none); a UTF-8 byte-order mark is ignored; line numbers in messages are the file's.

    Raises
    ------
    DatasetError
        An empty file, a header without data rows, a ragged row or malformed CSV.
    """
    if hasattr(source, "read"):
        text = source.read()
    else:
        with open(source, newline="", encoding="utf-8-sig") as handle:
            text = handle.read()
    text = text.removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    try:
        numbered = [(reader.line_num, row) for row in reader if row]
    except csv.Error as exc:
        raise DatasetError(f"line {reader.line_num}: {exc}") from None
    if not numbered:
        raise DatasetError("the file is empty")
    header = numbered[0][1]
    if len(numbered) == 1:
        raise DatasetError("the file has a header but no data rows")
    for line_no, row in numbered[1:]:
        if len(row) != len(header):
            raise DatasetError(
                f"line {line_no} has {len(row)} fields; the header has {len(header)}")
    return header, [row for _, row in numbered[1:]]


DELIMITERS = (",", ";", "\t", "|")


def _delimiter(text):
    """The candidate delimiter the header line holds most often (``,`` on a tie or none)."""
    header = text.split("\n", 1)[0]
    counts = [header.count(d) for d in DELIMITERS]
    return DELIMITERS[counts.index(max(counts))] if max(counts) > 0 else ","


def _parse_numbers(values):
    """A column's cells as float64 (NaN for an empty cell), or None if one is not a number."""
    try:
        return np.array([np.nan if v == "" else float(v) for v in values], dtype=np.float64)
    except ValueError:
        return None


def _as_numbers_if_possible(values):
    """A target column as int64 (whole numbers), float64, or str."""
    try:
        numbers = values.astype(np.float64)
    except ValueError:
        return values.astype(str)
    if np.all(np.mod(numbers, 1) == 0) and np.all(np.abs(numbers) < 2**53):
        return numbers.astype(np.int64)
    return numbers


#: the tables bundled in ``fasttree/data`` (see that package's docstring for their sources)
BUNDLED = ("heart_disease", "housing", "ionosphere", "titanic", "weather", "weather_numeric")


def bundled_csv(name):
    """The text of a bundled table as a file object, for :func:`read_csv` and :func:`read_rows`.

    Parameters
    ----------
    name : str
        One of :data:`BUNDLED`.

    Returns
    -------
    io.StringIO

    Raises
    ------
    ValueError
        ``name`` is not a bundled table.
    """
    if name not in BUNDLED:
        raise ValueError(f"no bundled table named {name!r}; the bundled tables are: "
                         f"{', '.join(BUNDLED)}")
    return io.StringIO(resources.files("fasttree.data").joinpath(f"{name}.csv").read_text(
        encoding="utf-8"), newline="")


def load_dataset(name, *, as_frame=False, return_X_y=False):
    """A table bundled with fasttree, by name.

    Parameters
    ----------
    name : str
        One of :data:`BUNDLED`: ``heart_disease``, ``housing``, ``ionosphere``, ``titanic``,
        ``weather`` or ``weather_numeric``.
    as_frame : bool, default=False
        False: numpy arrays read by :func:`read_csv` (no pandas needed).  True: ``X`` a pandas
        DataFrame and ``y`` a Series, exactly what ``pandas.read_csv`` gives for the file
        (string columns stay strings, empty cells are NaN), and ``frame`` the whole table.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of the :class:`Dataset`.

    Returns
    -------
    Dataset or (X, y)
        The target is the table's last column.

    Raises
    ------
    ValueError
        An unknown name.
    ImportError
        ``as_frame=True`` without pandas installed.
    """
    handle = bundled_csv(name)
    if not as_frame:
        data = read_csv(handle)
    else:
        try:
            import pandas as pd  # only here: import fasttree needs numpy and numba alone
        except ImportError:
            raise ImportError("as_frame=True needs pandas (pip install pandas); "
                              "as_frame=False gives numpy arrays") from None
        frame = pd.read_csv(handle)
        target = frame.columns[-1]
        X = frame.drop(columns=target)
        categorical = np.array([pd.api.types.is_bool_dtype(X[c])  # fasttree's rule for bool
                                or not pd.api.types.is_numeric_dtype(X[c]) for c in X], dtype=bool)
        data = Dataset(X=X, y=frame[target], feature_names=list(X.columns), target_name=target,
                       categorical=categorical, frame=frame)
    return (data.X, data.y) if return_X_y else data


def load_ionosphere(*, as_frame=False, return_X_y=False):
    """The UCI ionosphere data: 351 radar returns, 32 numeric features.

    The target ``y`` is ``"g"`` (good) or ``"b"`` (bad).  Parameters and return value as
    :func:`load_dataset`.
    """
    return load_dataset("ionosphere", as_frame=as_frame, return_X_y=return_X_y)


def load_weather(numeric=False, *, as_frame=False, return_X_y=False):
    """Quinlan's 14-day weather data: outlook, temperature, humidity, windy; target ``play``.

    ``numeric=False``: all four attributes categorical (ID3's example); ``numeric=True``:
    temperature and humidity in degrees and percent (C4.5's example).  Other parameters and
    return value as :func:`load_dataset`.
    """
    return load_dataset("weather_numeric" if numeric else "weather", as_frame=as_frame,
                        return_X_y=return_X_y)


def load_heart_disease(*, as_frame=False, return_X_y=False):
    """UCI heart disease (Cleveland): 303 patients, 13 mixed numeric and string features with
    6 empty cells; target ``diameter narrowing`` (0 or 1).  Parameters and return value as
    :func:`load_dataset`.
    """
    return load_dataset("heart_disease", as_frame=as_frame, return_X_y=return_X_y)


def load_titanic(*, as_frame=False, return_X_y=False):
    """The 2201 people aboard the Titanic: ``status``, ``age``, ``sex`` (all categorical);
    target ``survived``.  Parameters and return value as :func:`load_dataset`.
    """
    return load_dataset("titanic", as_frame=as_frame, return_X_y=return_X_y)


def load_housing(*, as_frame=False, return_X_y=False):
    """Boston housing: 506 districts, 13 numeric features; target ``MEDV`` (median home value,
    $1000s), a regression.  Parameters and return value as :func:`load_dataset`.
    """
    return load_dataset("housing", as_frame=as_frame, return_X_y=return_X_y)
