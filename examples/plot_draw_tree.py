"""
A tree drawn
============

:func:`fasttree.plot_tree` draws a fitted tree with matplotlib and
:func:`fasttree.export_graphviz` writes it in Graphviz's DOT language, both with scikit-learn's
signatures and texts.  A binary tree on the iris data, then an ID3 tree whose categorical
splits have one child per category.
"""

import io
import shutil
import subprocess

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.datasets import load_iris
from sklearn.tree import export_graphviz as sklearn_export_graphviz

from fasttree import DecisionTreeClassifier, ID3Classifier, export_graphviz, plot_tree

iris = load_iris()
clf = DecisionTreeClassifier(max_depth=3, random_state=0, n_jobs=1).fit(iris.data, iris.target)
print(f"depth {clf.get_depth()}, {clf.get_n_leaves()} leaves, "
      f"training accuracy {clf.score(iris.data, iris.target):.3f}")

# %%
# With matplotlib
# ---------------
#
# ``filled=True`` colours each node by its majority class, lighter where the classes mix.

fig, ax = plt.subplots(figsize=(11, 5.5))
plot_tree(clf, feature_names=iris.feature_names, class_names=list(iris.target_names),
          filled=True, rounded=True, ax=ax)

# %%
# As DOT text
# -----------
#
# ``export_graphviz`` returns the DOT text when ``out_file`` is None; for this tree it is the
# text scikit-learn's ``export_graphviz`` writes for ``clf.to_sklearn()``.

dot = export_graphviz(clf, feature_names=iris.feature_names,
                      class_names=list(iris.target_names), filled=True, rounded=True)
print(dot)
same = dot == sklearn_export_graphviz(clf.to_sklearn(), feature_names=iris.feature_names,
                                      class_names=list(iris.target_names), filled=True,
                                      rounded=True)
print(f"the same text as scikit-learn's export_graphviz of clf.to_sklearn(): {same}")

# %%
# Graphviz's ``dot`` program renders it, where it is installed (it is not a Python package;
# the documentation builds without it and then shows the text only).

if shutil.which("dot"):
    png = subprocess.run(["dot", "-Tpng"], input=dot.encode(), capture_output=True,
                         check=True).stdout
    fig, ax = plt.subplots(figsize=(11, 6))
    ax.imshow(plt.imread(io.BytesIO(png), format="png"))
    ax.set_axis_off()
else:
    print("Graphviz's dot is not installed here: the DOT text above is the result.")

# %%
# Multiway splits
# ---------------
#
# Quinlan's weather table: should we play?  ID3 splits on a categorical feature with one child
# per category; ``plot_tree`` draws every child and labels each edge with its category.

weather = pd.DataFrame({
    "outlook": ["sunny", "sunny", "overcast", "rainy", "rainy", "rainy", "overcast",
                "sunny", "sunny", "rainy", "sunny", "overcast", "overcast", "rainy"],
    "temperature": ["hot", "hot", "hot", "mild", "cool", "cool", "cool",
                    "mild", "cool", "mild", "mild", "mild", "hot", "mild"],
    "humidity": ["high", "high", "high", "high", "normal", "normal", "normal",
                 "high", "normal", "normal", "normal", "high", "normal", "high"],
    "windy": ["false", "true", "false", "false", "false", "true", "true",
              "false", "false", "false", "true", "true", "false", "true"],
    "play": ["no", "no", "yes", "yes", "yes", "no", "yes",
             "no", "yes", "yes", "yes", "yes", "yes", "no"],
})
id3 = ID3Classifier().fit(weather.drop(columns="play"), weather["play"])
fig, ax = plt.subplots(figsize=(9, 4.5))
plot_tree(id3, feature_names=list(id3.feature_names_in_), class_names=list(id3.classes_),
          filled=True, ax=ax)
