"""Reading CSV files and the dataset bundled with the package (numpy only, no pandas)."""

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


def load_ionosphere():
    """The UCI ionosphere data bundled with fasttree: 351 radar returns, 32 numeric features.

    The target ``y`` is ``"g"`` (good) or ``"b"`` (bad).

    Returns
    -------
    Dataset
    """
    with resources.files("fasttree.data").joinpath("ionosphere.csv").open(
            "r", encoding="utf-8", newline="") as handle:
        return read_csv(handle)
