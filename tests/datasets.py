"""Data for the tests: fresh draws from seeds, shaped so that no two candidate splits tie."""

import numpy as np


def make_data(seed, n=600, m=6, task="classification", n_classes=3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, m)) * 3, 3)
    signal = X[:, 0] + np.sin(X[:, 1]) + 0.5 * X[:, 2] * X[:, 3] + rng.normal(size=n)
    if task == "regression":
        return X, signal
    edges = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(signal, edges)


def exact_weights(seed, n):
    """Random weights in [0.5, 1.5], multiples of 2**-20: sums of them are exact in float64, and
    two different partitions practically never tie."""
    return np.random.default_rng(seed).integers(2**19, 3 * 2**19, n) / 2.0**20


def same_partition(a, b):
    """Two leaf assignments group the rows identically (leaf ids may be numbered differently)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


SHARED_DATA = __import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "data"


def load_shared(name):
    """A dataset of shared/data as a DataFrame whose categorical columns (per columns.json) have
    pandas' ``category`` dtype, and its target; rows with a missing target are dropped."""
    import json

    import pandas as pd

    kinds = json.loads((SHARED_DATA / "columns.json").read_text())[name]
    frame = pd.read_csv(SHARED_DATA / f"{name}.csv", keep_default_na=False, na_values=[""])
    target = kinds["target"]
    frame = frame[frame[target].notna()].reset_index(drop=True)
    for column, kind in zip(frame.columns, kinds["kinds"]):
        if column != target and kind == "categorical":
            frame[column] = frame[column].astype(str).where(frame[column].notna()).astype(
                "category")
    return frame.drop(columns=target), frame[target]
