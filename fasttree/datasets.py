"""Reading CSV files and the dataset bundled with the package (numpy only, no pandas)."""

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np


@dataclass
class Dataset:
    """Features, target and names read from a CSV file."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target_name: str


class DatasetError(ValueError):
    """A CSV file that cannot be turned into a numeric feature matrix; the message says why."""


def read_csv(source, target=None):
    """Read a CSV file with a header row into numeric features and a target column.

    Parameters
    ----------
    source : str, path or text file object
    target : str, optional
        Name of the target column; defaults to the last column.

    Returns
    -------
    Dataset

    Raises
    ------
    DatasetError
        Unknown target column, a non-numeric or incomplete feature column, a ragged row, or
        no data rows.
    """
    if hasattr(source, "read"):
        rows = list(csv.reader(source))
    else:
        with open(source, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    if not rows:
        raise DatasetError("the file is empty")
    header, body = rows[0], [r for r in rows[1:] if r]
    if not body:
        raise DatasetError("the file has a header but no data rows")
    for line_no, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise DatasetError(
                f"line {line_no} has {len(row)} fields; the header has {len(header)}")
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
    X = np.empty((len(body), len(feature_names)), dtype=np.float64)
    j = 0
    for i, name in enumerate(header):
        if i == t:
            continue
        values = columns[i]
        if any(v == "" for v in values):
            raise DatasetError(
                f"column {name!r} has missing cells; missing values are not supported yet")
        try:
            X[:, j] = np.array(values, dtype=np.float64)
        except ValueError:
            raise DatasetError(
                f"column {name!r} is not numeric; categorical columns are not supported yet"
            ) from None
        j += 1
    return Dataset(X=X, y=_as_numbers_if_possible(y), feature_names=feature_names,
                   target_name=target)


def _as_numbers_if_possible(values):
    try:
        return values.astype(np.float64)
    except ValueError:
        return values.astype(str)


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
