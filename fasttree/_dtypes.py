"""The dtypes every layer agrees on, declared once.

Kernels are compiled for exactly these dtypes (one specialization each); the estimators coerce user
input to them at the Python boundary, so a kernel never sees anything else.
"""

import numpy as np

#: Feature values.  float32 like scikit-learn: halves the memory traffic of the scan, and thresholds
#: computed from float32 values split float32 inputs exactly as scikit-learn's trees do.
X_DTYPE = np.float32

#: Row indices.  int32 while n_samples < 2**31 halves the index traffic of int64.
INDEX_DTYPE = np.int32

#: Encoded class labels (0 .. n_classes - 1) as the estimators hand them to the grower.
CLASS_DTYPE = np.int32

#: Most classes a classifier supports (labels travel through the layout as uint16 at most).
MAX_CLASSES = 2**16


def label_dtype(n_classes):
    """Narrowest label dtype of the working layout: uint8 up to 256 classes, else uint16.

    The labels are copied once per feature and moved by every partition, so one byte instead of
    four cuts that traffic; the uint16 specialization is compiled only for problems that need it.
    """
    return np.uint8 if n_classes <= 256 else np.uint16

#: Regression targets, sample weights, weighted counts, sums, impurities and gains: float64, because
#: cumulative sums over a million rows lose too much precision in float32.
FLOAT_DTYPE = np.float64

#: Thresholds are float64 midpoints a/2 + b/2 of two consecutive distinct float32 values.
THRESHOLD_DTYPE = np.float64

#: Node ids in the flat tree arrays (scikit-learn's ``intp``); -1 marks "no child" (a leaf).
NODE_DTYPE = np.intp
TREE_LEAF = -1

#: scikit-learn's tolerance: a node whose impurity is at most this is pure, and a split must
#: improve by at least ``min_impurity_decrease - EPSILON``.
EPSILON = np.finfo(np.float64).eps

#: Criterion codes understood by the kernels (:mod:`fasttree.kernels.criteria`).
CRITERION_GINI = 0
CRITERION_ENTROPY = 1
CRITERION_SQUARED_ERROR = 2
CRITERION_POISSON = 3  # half Poisson deviance; regression statistics carry sum w*y*log(y)
CRITERION_ABSOLUTE_ERROR = 4  # statistics [sum w, sum w*y, sum w*|y - median|, median]
#: Gradient boosting's second-order statistics: per row a gradient g (the layout's target) and a
#: hessian h (the row weight); statistics [sum h, sum g, 0]; a child's score G**2 / (H + lambda).
CRITERION_GRADIENT = 5

#: How a node's split is chosen among the features' best candidates
#: (:func:`fasttree.kernels.select_best_splits`): the lowest children impurity, or C4.5's gain
#: ratio among the candidates whose gain reaches the average.
SELECT_IMPURITY = 0
SELECT_GAIN_RATIO = 1

#: Kinds of features in the working layout (categorical: integer codes 0 .. n_categories - 1
#: stored as float32, NaN for missing).
FEATURE_NUMERIC = 0
FEATURE_CATEGORICAL = 1

#: Kinds of split nodes in a tree: a numeric threshold (two children), a subset of categories
#: (two children), one child per category (multiway).
SPLIT_THRESHOLD = 0
SPLIT_SUBSET = 1
SPLIT_MULTIWAY = 2
