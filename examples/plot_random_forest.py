"""
Random forests: scikit-learn's draws, fasttree's trees
======================================================

:class:`fasttree.RandomForestClassifier` takes scikit-learn's parameters and draws as
scikit-learn's forest does: for the same ``random_state`` each tree gets the same seed and the
same bootstrap rows, so the two forests have the same out-of-bag rows.  The trees themselves
grow depth first, one tree per thread, each node sorting only the features it searches (see
:doc:`/forests`).

This example grows both forests on the same data, compares their fit time, test accuracy and
out-of-bag estimates, and follows the out-of-bag score as ``warm_start`` adds trees.
"""

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn import ensemble
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

import fasttree

X, y = make_classification(n_samples=20_000, n_features=20, n_informative=10, random_state=0)
X = X.astype(np.float32)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

params = dict(n_estimators=50, max_features="sqrt", oob_score=True, n_jobs=2, random_state=0)
fasttree.RandomForestClassifier(n_estimators=2, max_depth=2).fit(X_train[:500], y_train[:500])

results = {}
for name, Forest in [("fasttree", fasttree.RandomForestClassifier),
                     ("scikit-learn", ensemble.RandomForestClassifier)]:
    forest = Forest(**params)
    start = time.perf_counter()
    forest.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    results[name] = (forest, seconds)
    print(f"{name:>12}: fit {seconds:.2f} s, test accuracy {forest.score(X_test, y_test):.4f}, "
          f"out-of-bag {forest.oob_score_:.4f}")

# %%
# The same draws
# --------------
# Tree ``k`` of both forests has the same seed and drew the same rows:

ours, theirs = results["fasttree"][0], results["scikit-learn"][0]
same_rows = all(np.array_equal(a, b) for a, b in
                zip(ours.estimators_samples_, theirs.estimators_samples_))
print("same seeds:", [e.random_state for e in ours.estimators_] ==
      [e.random_state for e in theirs.estimators_], "- same drawn rows:", same_rows)

# %%
# Out-of-bag score as trees are added
# -----------------------------------
# With ``warm_start=True`` each ``fit`` adds trees to the forest; the out-of-bag score of a
# row averages the trees that did not draw it.  (A few trees leave some rows in every bag,
# without an out-of-bag estimate: both libraries warn then.)

sizes = [5, 10, 20, 35, 50]
forest = fasttree.RandomForestClassifier(warm_start=True, oob_score=True, n_jobs=2,
                                         random_state=0)
oob = []
for n in sizes:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Some inputs do not have OOB scores")
        forest.set_params(n_estimators=n).fit(X_train, y_train)
    oob.append(forest.oob_score_)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
names = list(results)
left.bar(names, [results[n][1] for n in names], color=["tab:blue", "tab:gray"])
left.set_ylabel("fit seconds (50 trees, 2 threads)")
right.plot(sizes, oob, marker="o", label="out-of-bag score")
right.axhline(ours.score(X_test, y_test), color="tab:gray", linestyle="--",
              label="test accuracy, 50 trees")
right.set_xlabel("trees")
right.legend()
fig.tight_layout()
plt.show()
