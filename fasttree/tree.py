"""The fitted tree: flat node arrays with scikit-learn's names and meaning."""

import numpy as np

from ._dtypes import NODE_DTYPE, THRESHOLD_DTYPE, TREE_LEAF
from .kernels import apply_tree, decision_paths

#: Value of ``feature`` and ``threshold`` at a leaf (scikit-learn's ``TREE_UNDEFINED``).
TREE_UNDEFINED = -2


class Tree:
    """A binary tree stored as parallel arrays indexed by node id.

    Node 0 is the root.  Nodes are numbered in creation order, so every parent comes before its
    children and a reversed loop over node ids visits the tree bottom-up.

    Attributes
    ----------
    children_left, children_right : ndarray of shape (node_count,), int32
        Child ids; ``-1`` at leaves.  Rows with ``x[feature] <= threshold`` go left.
    feature : ndarray of shape (node_count,), int32
        Split feature; ``-2`` at leaves.
    threshold : ndarray of shape (node_count,), float64
        Split threshold; ``-2`` at leaves.
    value : ndarray of shape (node_count, 1, n_classes) or (node_count, 1, 1), float64
        Weighted class fractions (classification) or weighted mean target (regression) of the
        training rows at each node.
    impurity : ndarray of shape (node_count,), float64
    n_node_samples : ndarray of shape (node_count,), int64
    weighted_n_node_samples : ndarray of shape (node_count,), float64
    depth : ndarray of shape (node_count,), int32
        Depth of each node (root 0).
    n_features : int
    """

    def __init__(
        self,
        *,
        children_left,
        children_right,
        feature,
        threshold,
        value,
        impurity,
        n_node_samples,
        weighted_n_node_samples,
        depth,
        n_features,
    ):
        self.children_left = np.ascontiguousarray(children_left, dtype=NODE_DTYPE)
        self.children_right = np.ascontiguousarray(children_right, dtype=NODE_DTYPE)
        self.feature = np.ascontiguousarray(feature, dtype=NODE_DTYPE)
        self.threshold = np.ascontiguousarray(threshold, dtype=THRESHOLD_DTYPE)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.impurity = np.ascontiguousarray(impurity, dtype=np.float64)
        self.n_node_samples = np.ascontiguousarray(n_node_samples, dtype=np.int64)
        self.weighted_n_node_samples = np.ascontiguousarray(weighted_n_node_samples, np.float64)
        self.depth = np.ascontiguousarray(depth, dtype=NODE_DTYPE)
        self.n_features = int(n_features)

    @property
    def node_count(self):
        return int(self.children_left.shape[0])

    @property
    def n_outputs(self):
        return 1

    @property
    def n_classes(self):
        return np.array([self.value.shape[2]], dtype=np.intp)

    @property
    def max_depth(self):
        return int(self.depth.max())

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    def is_leaf(self):
        """Boolean mask of the leaves."""
        return self.children_left == TREE_LEAF

    def apply(self, X):
        """Leaf id of every row of a float32, C-contiguous ``X`` (validated by the caller)."""
        return apply_tree(X, self.children_left, self.children_right, self.feature, self.threshold)

    def decision_path(self, X):
        """Node indicator matrix (scipy CSR) of shape (n_samples, node_count)."""
        try:
            from scipy.sparse import csr_matrix
        except ImportError as exc:  # pragma: no cover - scipy comes with scikit-learn
            raise ImportError("decision_path returns a scipy.sparse matrix; install scipy") from exc
        path, length = decision_paths(
            X, self.children_left, self.children_right, self.feature, self.threshold,
            self.max_depth,
        )
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(length, out=indptr[1:])
        indices = path[path >= 0]  # row-major: each row's nodes in visiting order
        data = np.ones(indices.shape[0], dtype=np.int64)
        return csr_matrix((data, indices, indptr), shape=(X.shape[0], self.node_count))

    def compute_feature_importances(self, normalize=True):
        """Total weighted impurity decrease contributed by each feature (mean decrease in impurity).

        Parameters
        ----------
        normalize : bool, default=True
            Scale the importances to sum to 1 (left at zero for a tree without splits).

        Returns
        -------
        importances : ndarray of shape (n_features,), float64
        """
        internal = ~self.is_leaf()
        left = self.children_left[internal]
        right = self.children_right[internal]
        w = self.weighted_n_node_samples
        decrease = (
            w[internal] * self.impurity[internal]
            - w[left] * self.impurity[left]
            - w[right] * self.impurity[right]
        )
        importances = np.bincount(
            self.feature[internal], weights=decrease, minlength=self.n_features
        ).astype(np.float64)
        importances /= w[0]
        if normalize:
            total = importances.sum()
            if total > 0.0:
                importances /= total
        return importances
