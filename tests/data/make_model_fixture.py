"""Regenerate ``model_v1.ft``, the model file that every later fasttree must still read.

Run from the repository root: ``python tests/data/make_model_fixture.py``.  Only regenerate it
when the data or parameters below change; ``tests/test_model_io.py`` refits this estimator on
this data and checks that the committed file holds the same tree.
"""

from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).with_name("model_v1.ft")


def make_data():
    """120 rows: a numeric column with missing values, a string categorical one, a numeric one;
    string class labels."""
    rng = np.random.default_rng(20261201)
    n = 120
    size = rng.normal(size=n).round(2)
    size[rng.random(n) < 0.1] = np.nan
    color = rng.choice(["red", "green", "blue", "violet"], size=n)
    count = rng.integers(0, 6, size=n).astype(np.float64)
    score = np.nan_to_num(size) + (color == "red") + 0.3 * count + rng.normal(0, 0.5, n)
    y = np.where(score > 1.2, "high", np.where(score > 0.0, "mid", "low"))
    X = np.empty((n, 3), dtype=object)
    X[:, 0], X[:, 1], X[:, 2] = size, color, count
    return X, y


def make_estimator():
    from fasttree import DecisionTreeClassifier

    return DecisionTreeClassifier(criterion="entropy", max_depth=5, ccp_alpha=0.005,
                                  random_state=0)


if __name__ == "__main__":
    X, y = make_data()
    make_estimator().fit(X, y).save(FIXTURE)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)")
