"""Write tests/orange_discretize_reference.json: Orange's cut points and interval labels.

Run with a Python that has Orange (``pip install orange3``; it is not a test dependency and
pins older numpy/pandas, so use a separate environment)::

    python tests/orange_discretize_reference.py

The fixture holds the data too (values rounded to float32, which is what fasttree works on, so
Orange and fasttree see the very same numbers), then for each dataset and method the cut points
(``compute_value.points``) and labels (``values``) of the variable Orange builds for every
numeric column, and Orange's labels for a few sets of cut points.
``tests/test_preprocessing.py`` compares fasttree's discretizers with it.

Datasets: numeric columns of a few files of ``shared/data`` (beside the checkout), and a
synthetic one with ties, missing values, three classes and a constant column.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parents[1] / "shared" / "data"
OUT = HERE / "orange_discretize_reference.json"

# (file, numeric columns to keep (None: all numeric), at most this many rows)
DATASETS = [
    ("weather_numeric", None, None),
    ("heart_disease", None, None),
    ("ionosphere", ["a3", "a4", "a5", "a6", "a7", "a8"], None),
    ("breast_cancer_wisconsin", ["Clump thickness", "Unif_Cell_Size", "Bare_Nuclei",
                                 "Mitoses"], 400),
]

METHODS = [
    ("EntropyMDL", {"force": False}),
    ("EntropyMDL", {"force": True}),
    ("EqualFreq", {"n": 3}),
    ("EqualFreq", {"n": 4}),
    ("EqualFreq", {"n": 6}),
    ("EqualWidth", {"n": 4}),
    ("EqualWidth", {"n": 3}),
]


def _float32_list(a):
    """Values rounded to float32, written with the shortest decimals that give them back."""
    return [None if np.isnan(v) else float(str(np.float32(v))) for v in a]


def shared_dataset(name, keep, max_rows):
    kinds = json.loads((SHARED_DATA / "columns.json").read_text())[name]
    frame = pd.read_csv(SHARED_DATA / f"{name}.csv")
    target = frame.columns[-1]
    frame = frame[frame[target].notna()]
    if max_rows is not None:
        frame = frame.iloc[:max_rows]
    numeric = [c for c, kind in zip(frame.columns[:-1], kinds["kinds"][:-1]) if kind == "numeric"]
    if keep is not None:
        numeric = [c for c in numeric if c in keep]
    X = frame[numeric].to_numpy(dtype=np.float64)
    _, y = np.unique(frame[target].astype(str).to_numpy(), return_inverse=True)
    return numeric, X, y


def synthetic_dataset():
    rng = np.random.default_rng(20240611)
    n = 300
    y = rng.integers(0, 3, n)
    ties = (rng.integers(0, 8, n) + 2 * y).astype(np.float64)         # integers: many ties
    noisy = np.round(rng.normal(y * 1.5, 1.0, n), 1)                  # one decimal: ties
    missing = rng.normal(y, 0.7, n)
    missing[rng.random(n) < 0.15] = np.nan                            # 15% missing
    constant = np.full(n, 2.5)
    uninformative = rng.integers(0, 5, n).astype(np.float64)
    X = np.column_stack([ties, noisy, missing, constant, uninformative])
    return ["ties", "noisy", "missing", "constant", "uninformative"], X, y


def orange_cuts(X, y, method, params):
    from Orange.data import ContinuousVariable, DiscreteVariable, Domain, Table
    from Orange.preprocess import discretize

    n_classes = int(y.max()) + 1
    domain = Domain([ContinuousVariable(f"c{j}") for j in range(X.shape[1])],
                    DiscreteVariable("y", values=[str(k) for k in range(n_classes)]))
    table = Table.from_numpy(domain, X, y.astype(np.float64))
    discretizer = getattr(discretize, method)(**params)
    out = []
    for j in range(X.shape[1]):
        var = discretizer(table, table.domain[j])
        out.append({"points": [float(p) for p in var.compute_value.points],
                    "labels": list(var.values)})
    return out


# point sets whose '%g' labels collide (Orange then prints fixed decimals) or need no rounding
LABEL_CASES = [[1.0000001, 1.0000002], [-1.25, -1.2], [0.1234567, 0.1234568, 5.0],
               [100.5, 100.50001], [-3.0, 0.0, 2.5], [1e-05, 2e-05], [123456789.0]]


def orange_labels(points):
    from Orange.data import ContinuousVariable
    from Orange.preprocess.discretize import Discretizer

    _, labels, _ = Discretizer._get_discretized_values(ContinuousVariable("x"), points)
    return list(labels)


def main():
    import Orange

    datasets = [(name, *shared_dataset(name, keep, rows)) for name, keep, rows in DATASETS]
    datasets.append(("synthetic", *synthetic_dataset()))
    fixture = {"orange_version": Orange.version.version, "datasets": [],
               "labels": [{"points": p, "labels": orange_labels(p)} for p in LABEL_CASES]}
    for name, columns, X, y in datasets:
        X = np.array([_float32_list(col) for col in X.T], dtype=np.float64).T
        entry = {"name": name, "columns": columns,
                 "X": [[None if np.isnan(v) else v for v in row] for row in X.tolist()],
                 "y": y.tolist(), "results": []}
        X32 = X.astype(np.float32).astype(np.float64)  # the exact float32 values, for Orange
        for method, params in METHODS:
            entry["results"].append({"method": method, "params": params,
                                     "columns": orange_cuts(X32, y, method, params)})
        fixture["datasets"].append(entry)
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
