"""
The pruning rules side by side
==============================

fasttree has five post-pruning rules on one tree structure (see :doc:`/pruning`): CART's
cost-complexity pruning, reduced-error pruning on held-out rows, C4.5's error-based pruning,
Niblett and Bratko's minimum-error pruning and Quinlan's pessimistic pruning.  Here each one
prunes entropy trees on two datasets, with 5-fold stratified cross-validation: test accuracy and
leaves per rule.

Each rule is fitted exactly as in the pruning comparison of :doc:`/pruning`
(``docs/pruning_comparison.py``, whose ``fit_with_rule`` this example imports): cost-complexity
pruning picks its alpha on each training fold by an inner 5-fold grid search over that fold's
pruning path, as CART does; reduced-error pruning holds out 25% of each training fold.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold

from fasttree import DecisionTreeClassifier
from fasttree.datasets import load_ionosphere

# The gallery runs each example in its own folder, examples/, next to docs/.
sys.path.insert(0, str(Path.cwd().parent / "docs"))
from pruning_comparison import CLASSIFIER_RULES, fit_with_rule  # noqa: E402

ionosphere = load_ionosphere()
datasets = {
    "ionosphere (351 x 32)": (ionosphere.X, ionosphere.y),
    "breast cancer (569 x 30)": load_breast_cancer(return_X_y=True),
}


def entropy_tree(**params):
    # a few hundred rows: one thread is faster than two that wait for each other at every level
    return DecisionTreeClassifier(criterion="entropy", n_jobs=1, **params)


# %%
# Cross-validation
# ----------------
#
# The same folds for every rule; accuracy is the share of rows predicted right over all folds.

results = {}
for name, (X, y) in datasets.items():
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    for rule in CLASSIFIER_RULES:
        correct, leaves = 0, []
        for seed, (train, test) in enumerate(folds):
            tree = fit_with_rule(entropy_tree, rule, X[train], y[train], seed)
            correct += int((tree.predict(X[test]) == y[test]).sum())
            leaves.append(tree.get_n_leaves())
        results[name, str(rule)] = (correct / len(y), np.mean(leaves), np.std(leaves))

for name in datasets:
    print(name)
    print(f"  {'rule':<16} accuracy   leaves")
    for rule in CLASSIFIER_RULES:
        accuracy, mean_leaves, sd_leaves = results[name, str(rule)]
        print(f"  {str(rule):<16} {accuracy:.3f}   {mean_leaves:5.1f} +- {sd_leaves:.1f}")

# %%
# Accuracy and size
# -----------------
#
# The unpruned tree (``None``) is the largest; the rules differ far more in how much they cut
# than in accuracy.

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
width = 0.38
positions = np.arange(len(CLASSIFIER_RULES))
for i, name in enumerate(datasets):
    accuracy = [results[name, str(rule)][0] for rule in CLASSIFIER_RULES]
    leaves = [results[name, str(rule)][1] for rule in CLASSIFIER_RULES]
    axes[0].bar(positions + (i - 0.5) * width, accuracy, width, label=name)
    axes[1].bar(positions + (i - 0.5) * width, leaves, width, label=name)
axes[0].set_ylim(0.8, 1.0)
axes[0].set_ylabel("cross-validated accuracy")
axes[1].set_ylabel("leaves (mean over folds)")
for ax in axes:
    ax.set_xticks(positions, [str(rule) for rule in CLASSIFIER_RULES], rotation=30, fontsize=8)
    ax.legend(fontsize=8)
fig.tight_layout()
