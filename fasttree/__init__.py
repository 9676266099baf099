"""fasttree: exact decision trees trained on every core, with scikit-learn's API.

``import fasttree`` needs only numpy and numba; the split-search kernels live in
:mod:`fasttree.kernels` for use in other learners.
"""

from .estimators import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    ID3Classifier,
)
from .exceptions import NotFittedError
from .forest import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    RandomTreesEmbedding,
)
from .export import export_graphviz, export_text
from .plot import plot_tree
from .model_io import load

__version__ = "0.1.0"

__all__ = [
    "C45Classifier",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "ID3Classifier",
    "NotFittedError",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "RandomTreesEmbedding",
    "export_graphviz",
    "export_text",
    "plot_tree",
    "load",
    "__version__",
]
