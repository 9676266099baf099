"""The kernels run as plain Python (NUMBA_DISABLE_JIT=1) and give the same tree as compiled.

This keeps the kernel lines visible to coverage and tracebacks, and guards against code that only
works by accident of compilation (typing quirks, wrap-around indexing).
"""

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = """
import numpy as np, fasttree, fasttree.splitter

def trees():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(80, 3)), 2)
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    clf = fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=4).fit(X, y)
    reg = fasttree.DecisionTreeRegressor(max_leaf_nodes=6).fit(X, X[:, 0] * 3 + X[:, 2])
    # categorical (codes in column 3) and missing values: routed, k-way and fractional paths
    Xc = np.column_stack([X, rng.integers(0, 4, 80)])
    Xc[::7, 0] = np.nan
    Xc[::9, 3] = np.nan
    yc = y + (Xc[:, 3] == 2)
    kinds = {"subset": fasttree.DecisionTreeClassifier(max_depth=4, categorical_features=[3]),
             "multiway": fasttree.DecisionTreeClassifier(
                 criterion="gain_ratio", max_depth=4, categorical_features=[3],
                 categorical_split="multiway", missing="fractional")}
    fitted = {name: est.fit(Xc, yc) for name, est in kinds.items()}
    span, fasttree.splitter.CACHED_ID_SPAN = fasttree.splitter.CACHED_ID_SPAN, 30
    try:  # renumber the rows (relabel_rows) as a fit of many millions of rows does
        renumbered = fasttree.DecisionTreeClassifier(max_depth=6).fit(X, y)
    finally:
        fasttree.splitter.CACHED_ID_SPAN = span
    trees = {name: [est.tree_.feature.tolist(), est.tree_.threshold.tolist(),
                    est.predict(X).tolist()]
             for name, est in (("clf", clf), ("reg", reg), ("renumbered", renumbered))}
    for name, est in fitted.items():
        trees[name] = [est.tree_.feature.tolist(), est.tree_.category_branch.tolist(),
                       est.predict_proba(Xc).tolist()]
    return trees
"""


def test_pure_python_kernels_give_the_compiled_tree():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    code = SCRIPT + "\nimport json\nprint(json.dumps(trees()))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    interpreted = json.loads(out.stdout)
    namespace = {}
    exec(SCRIPT, namespace)
    compiled = namespace["trees"]()
    for name in ("clf", "reg", "renumbered", "subset", "multiway"):
        for a, b in zip(interpreted[name], compiled[name]):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
