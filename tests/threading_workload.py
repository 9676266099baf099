"""Every kind of fasttree work, for the fork and thread tests of ``test_threading_layers.py``.

:func:`workload` fits, prunes, predicts and discretizes with every splitter and tree kind, and
returns the results as arrays, so that runs in another process or thread can be compared with
the parent's.  Run as a script it prints numba's threading layer.
"""

import numpy as np
import scipy.sparse as sp

import fasttree
from fasttree import pruning
from fasttree.preprocessing import EntropyDiscretizer


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0).astype(int)
    colour = rng.integers(0, 4, size=3000).astype(float)
    return X, y, np.column_stack([colour, X[:, :3]])


def workload():
    """Fit and use one model of each kind; return ``{name: ndarray}``."""
    X, y, X_cat = _data()
    Xf = np.nan_to_num(X)
    out = {}
    for name, est, data in [
        ("gini", fasttree.DecisionTreeClassifier(max_depth=6, random_state=0), X),
        ("hist", fasttree.DecisionTreeClassifier(max_depth=6, splitter="hist"), X),
        ("random", fasttree.ExtraTreeClassifier(max_depth=6, random_state=0), Xf),
        ("sparse", fasttree.DecisionTreeClassifier(max_depth=6), sp.csc_matrix(Xf)),
        ("regressor", fasttree.DecisionTreeRegressor(max_depth=6), X),
        ("subset", fasttree.DecisionTreeClassifier(max_depth=4, categorical_features=[0]),
         X_cat),
        ("id3", fasttree.ID3Classifier(max_depth=4, categorical_features=[0]), X_cat),
        ("c45", fasttree.C45Classifier(categorical_features=[0]), X_cat),
        ("cost_complexity", fasttree.DecisionTreeClassifier(ccp_alpha=0.002), X),
    ]:
        target = X[:, 2] if name == "regressor" else y
        est.fit(data, np.nan_to_num(target))
        out[f"{name}_threshold"] = est.tree_.threshold
        out[f"{name}_predict"] = est.predict(data)
        out[f"{name}_apply"] = est.apply(data)
        if name != "regressor":
            out[f"{name}_proba"] = est.predict_proba(data)
    full = fasttree.DecisionTreeClassifier(random_state=0).fit(X[:2000], y[:2000])
    out["reduced_error"] = pruning.reduced_error(full, X[2000:], y[2000:]).tree_.threshold
    out["error_based"] = pruning.error_based(full).tree_.threshold
    out["path"] = full.cost_complexity_pruning_path(X, y)["ccp_alphas"]
    out["decision_path"] = full.decision_path(X).toarray()
    out["cuts"] = np.concatenate(EntropyDiscretizer().fit(X, y).cut_points_)
    return out


def same(a, b):
    """True when two workload results hold equal arrays (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


if __name__ == "__main__":
    import numba

    workload()
    print(numba.threading_layer())
