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

#: Encoded class labels (0 .. n_classes - 1).
CLASS_DTYPE = np.int32

#: Regression targets, sample weights, weighted counts, sums, impurities and gains: float64, because
#: cumulative sums over a million rows lose too much precision in float32.
FLOAT_DTYPE = np.float64

#: Thresholds are float64 midpoints a/2 + b/2 of two consecutive distinct float32 values.
THRESHOLD_DTYPE = np.float64

#: Node ids in the flat tree arrays; -1 marks "no child" (a leaf).
NODE_DTYPE = np.int32
TREE_LEAF = -1

#: Criterion codes understood by the classification split kernel.
CRITERION_GINI = 0
CRITERION_ENTROPY = 1
