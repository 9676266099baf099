"""
The cost-complexity pruning path
================================

A fully grown tree fits its training rows perfectly and overfits.  Minimal cost-complexity
pruning (CART's weakest link) removes, one after the other, the subtrees that buy the least
impurity per leaf; the *path* is the sequence of effective alphas at which they go.  Every alpha
of the path is a smaller tree: here train and test accuracy along it, on the breast cancer data
bundled with scikit-learn (569 rows, 30 features).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier as SklearnTree

from fasttree import DecisionTreeClassifier, pruning

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)

# %%
# The path
# --------
#
# ``cost_complexity_pruning_path`` has scikit-learn's signature and meaning; on the same data it
# gives the same alphas and impurities.

full = DecisionTreeClassifier(random_state=0, n_jobs=1).fit(X_train, y_train)  # small: 1 thread
path = full.cost_complexity_pruning_path(X_train, y_train)
reference = SklearnTree(random_state=0).cost_complexity_pruning_path(X_train, y_train)
print(f"{len(path.ccp_alphas)} alphas, from {path.ccp_alphas[0]:.4f} to "
      f"{path.ccp_alphas[-1]:.4f}; scikit-learn's path equal: "
      f"{np.allclose(path.ccp_alphas, reference.ccp_alphas)}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(path.ccp_alphas[:-1], path.impurities[:-1], marker="o", drawstyle="steps-post")
ax.set_xlabel("effective alpha")
ax.set_ylabel("total impurity of the leaves")
ax.set_title("Total impurity vs alpha (training rows)")
fig.tight_layout()

# %%
# Accuracy along the path
# -----------------------
#
# :func:`fasttree.pruning.cost_complexity` prunes the fitted tree at each alpha (a new estimator
# every time; the full tree is never refitted nor modified).  The last alpha leaves the root
# alone, so it is left out.

trees = [pruning.cost_complexity(full, alpha) for alpha in path.ccp_alphas[:-1]]
leaves = [tree.get_n_leaves() for tree in trees]
train_accuracy = [tree.score(X_train, y_train) for tree in trees]
test_accuracy = [tree.score(X_test, y_test) for tree in trees]
best = int(np.argmax(test_accuracy))
print(f"full tree: {leaves[0]} leaves, test accuracy {test_accuracy[0]:.3f}")
print(f"best alpha on the test rows: {path.ccp_alphas[best]:.4f}, {leaves[best]} leaves, "
      f"test accuracy {test_accuracy[best]:.3f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(path.ccp_alphas[:-1], train_accuracy, marker="o", drawstyle="steps-post", label="train")
ax.plot(path.ccp_alphas[:-1], test_accuracy, marker="o", drawstyle="steps-post", label="test")
ax.set_xlabel("alpha")
ax.set_ylabel("accuracy")
ax.set_title("Accuracy vs alpha")
ax.legend()
fig.tight_layout()

# %%
# Choosing alpha on the test rows, as above, only shows the shape of the curve; to choose it
# honestly, cross-validate ``ccp_alpha`` on the training rows (``GridSearchCV`` over the path's
# alphas), as the pruning comparison of :doc:`/pruning` does.
