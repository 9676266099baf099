"""The fitted tree: flat node arrays with scikit-learn's names and meaning."""

from typing import NamedTuple

import numpy as np

from ._dtypes import NODE_DTYPE, SPLIT_MULTIWAY, SPLIT_THRESHOLD, THRESHOLD_DTYPE, TREE_LEAF
from .kernels import (
    apply_tree,
    apply_tree_csr,
    decision_paths,
    decision_paths_csr,
    predict_fractional,
)

#: Value of ``feature`` and ``threshold`` at a leaf (scikit-learn's ``TREE_UNDEFINED``).
TREE_UNDEFINED = -2

#: the integer arrays of a tree, each with its type: a pickle stores each in the smallest integer
#: type that holds its values (:meth:`Tree.__getstate__`), and gets it back in this one
_INTEGER_ARRAYS = {"children_left": NODE_DTYPE, "children_right": NODE_DTYPE,
                   "feature": NODE_DTYPE, "n_node_samples": np.int64, "depth": NODE_DTYPE,
                   "split_kind": np.uint8, "missing_branch": np.int32,
                   "category_offset": np.int64, "category_n_codes": np.int64}
#: the arrays of categorical splits, left out of the pickle of a tree that has none
_CATEGORICAL_ARRAYS = ("split_kind", "category_offset", "category_n_codes")


class _CSR(NamedTuple):
    """A checked CSR input: the arrays the CSR kernels take, and the number of rows."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    n_rows: int


class Tree:
    """A tree stored as parallel arrays indexed by node id, every kind of split node included.

    Node 0 is the root.  Nodes are numbered in creation order, so every parent comes before its
    children and a reversed loop over node ids visits the tree bottom-up.  The children of a node
    have consecutive ids: ``children_left[i] .. children_right[i]`` (two for binary splits, one
    per branch for multiway splits), so branch ``b`` of node ``i`` is node
    ``children_left[i] + b``.  scikit-learn's fields keep their meaning for binary numeric nodes.

    Attributes
    ----------
    children_left, children_right : ndarray of shape (node_count,), intp
        First and last child; ``-1`` at leaves.  For a binary split, the left and right child.
    feature : ndarray of shape (node_count,), intp
        Split feature; ``-2`` at leaves.
    threshold : ndarray of shape (node_count,), float64
        Threshold of a numeric split (rows with ``x[feature] <= threshold`` go left); ``-2`` at
        leaves and categorical splits.
    split_kind : ndarray of shape (node_count,), uint8
        ``SPLIT_THRESHOLD`` (0), ``SPLIT_SUBSET`` (1: a set of categories goes left) or
        ``SPLIT_MULTIWAY`` (2: a branch per category); 0 at leaves.
    missing_branch : ndarray of shape (node_count,), int32
        Branch taken by a row whose split value is missing (0 = left); 0 at leaves.
    category_offset, category_n_codes : ndarray of shape (node_count,), int64
        Categorical splits: their map is ``category_branch[category_offset[i]:][:category_n_codes
        [i]]``, the branch of each category code plus a last slot for a category the tree never
        saw.  ``-1`` / 0 elsewhere.
    category_branch : ndarray of shape (n_map,), int32
        The maps of all categorical splits, one after the other: ``b`` for a category that
        reached the node in training, ``-1 - b`` for one that did not and is sent to ``b``, the
        branch with the most training weight (see :mod:`fasttree.kernels.routing`).
    fractional_missing : bool
        Grown with C4.5's fractional rows: a row missing a split value goes down every branch,
        weighted by the branches' training weight (:meth:`predict_value`); :meth:`apply` sends it
        down ``missing_branch``, the heaviest.
    value : ndarray of shape (node_count, n_outputs, max_n_classes), float64
        Weighted class fractions of each output (classification; zero past an output's classes)
        or the leaf prediction of each output (regression: weighted mean, or weighted median for
        ``absolute_error``) of the training rows at each node.
    impurity : ndarray of shape (node_count,), float64
    n_node_samples : ndarray of shape (node_count,), int64
    weighted_n_node_samples : ndarray of shape (node_count,), float64
    depth : ndarray of shape (node_count,), intp
        Depth of each node (root 0).
    n_features : int
    importances : ndarray of shape (n_features,), float64, or None
        The total impurity decrease by feature, for a tree loaded from a forest's model file
        without its node statistics (its ``impurity`` and ``weighted_n_node_samples`` are NaN);
        None when :meth:`compute_feature_importances` computes it from them.
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
        split_kind=None,
        missing_branch=None,
        category_offset=None,
        category_n_codes=None,
        category_branch=None,
        fractional_missing=False,
        n_classes=None,
        importances=None,
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
        n = self.children_left.shape[0]
        self.split_kind = np.ascontiguousarray(
            np.full(n, SPLIT_THRESHOLD, dtype=np.uint8) if split_kind is None else split_kind,
            dtype=np.uint8)
        if missing_branch is None:  # scikit-learn's rule without missing values: larger child
            missing_branch = _larger_child_branch(
                self.children_left, self.children_right, self.n_node_samples)
        self.missing_branch = np.ascontiguousarray(missing_branch, dtype=np.int32)
        self.category_offset = np.ascontiguousarray(
            np.full(n, -1, dtype=np.int64) if category_offset is None else category_offset,
            dtype=np.int64)
        self.category_n_codes = np.ascontiguousarray(
            np.zeros(n, dtype=np.int64) if category_n_codes is None else category_n_codes,
            dtype=np.int64)
        self.category_branch = np.ascontiguousarray(
            np.zeros(0) if category_branch is None else category_branch, dtype=np.int32)
        self.fractional_missing = bool(fractional_missing)
        self._n_classes = None if n_classes is None else np.asarray(n_classes, dtype=np.intp)
        self.importances = None if importances is None else np.array(importances, np.float64)
        internal = self.children_left != TREE_LEAF
        binary = internal & (self.split_kind != SPLIT_MULTIWAY)
        # elementwise, no masked copies: a forest's trees are checked in milliseconds
        if np.any(binary & (self.children_right != self.children_left + 1)) or np.any(
                internal & (self.children_right < self.children_left)):
            raise ValueError("Tree: the children of a node must have consecutive ids "
                             "(children_left .. children_right).")

    def __getstate__(self):
        """The tree for pickle, in fewer bytes (about half, for numeric splits: a forest's
        pickle was larger than scikit-learn's): each integer array in the smallest integer type
        that holds its values, and without the arrays a tree of threshold splits only can do
        without (the categorical splits' defaults, and each right child, next to its left one).
        :meth:`__setstate__` gives every array back as it was."""
        state = self.__dict__.copy()
        if (not self.split_kind.any() and not self.category_n_codes.any()
                and np.all(self.category_offset == -1)):
            for name in _CATEGORICAL_ARRAYS:
                del state[name]
            if np.array_equal(self.children_right, _right_children(self.children_left)):
                del state["children_right"]
        for name in _INTEGER_ARRAYS:
            if name in state:
                state[name] = _narrowest_integers(state[name])
        return state

    def __setstate__(self, state):
        """A tree from :meth:`__getstate__`'s state (or an older pickle's full one)."""
        state = dict(state)
        n = len(state["children_left"])
        if "split_kind" not in state:
            state.update(split_kind=np.zeros(n), category_offset=np.full(n, -1),
                         category_n_codes=np.zeros(n))
        if "children_right" not in state:
            state["children_right"] = _right_children(
                np.asarray(state["children_left"], dtype=NODE_DTYPE))
        for name, dtype in _INTEGER_ARRAYS.items():
            state[name] = np.ascontiguousarray(state[name], dtype=dtype)
        self.__dict__.update(state)

    @property
    def node_count(self):
        return int(self.children_left.shape[0])

    @property
    def n_outputs(self):
        return int(self.value.shape[1])

    @property
    def n_classes(self):
        """Classes per output (1 for regression), scikit-learn's ``intp`` array."""
        if self._n_classes is None:
            return np.full(self.n_outputs, self.value.shape[2], dtype=np.intp)
        return self._n_classes.copy()

    @property
    def max_n_classes(self):
        return int(self.value.shape[2])

    @property
    def capacity(self):
        """Allocated nodes; the arrays are exact-sized, so the node count (scikit-learn's name)."""
        return self.node_count

    def compute_node_depths(self):
        """Depth of every node counting the root as 1 (scikit-learn's convention; ``depth`` counts
        it as 0).

        Returns
        -------
        depths : ndarray of shape (node_count,), int64
        """
        return self.depth.astype(np.int64) + 1

    @property
    def max_depth(self):
        return int(self.depth.max())

    @property
    def has_node_statistics(self):
        """Whether the tree holds its nodes' training statistics (impurity, sample counts and
        weights, internal nodes' values): not a tree of a forest loaded from a model file,
        which stores only what prediction needs (NaN there)."""
        return not np.isnan(self.weighted_n_node_samples).any()

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def missing_go_to_left(self):
        """scikit-learn's field: 1 where a missing value goes to the first (left) child."""
        return (self.missing_branch == 0).astype(np.uint8) * (self.children_left != TREE_LEAF)

    @property
    def n_children(self):
        """Children per node (0 at leaves)."""
        return np.where(self.children_left == TREE_LEAF, 0,
                        self.children_right - self.children_left + 1).astype(np.int64)

    def parent(self):
        """Parent of every node (``-1`` for the root)."""
        parent = np.full(self.node_count, -1, dtype=np.int64)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        n_children = self.n_children[internal]
        children = np.repeat(self.children_left[internal], n_children) + _ranks(n_children)
        parent[children] = np.repeat(internal, n_children)
        return parent

    def _routing(self):
        return (self.children_left, self.children_right, self.feature, self.threshold,
                self.split_kind, self.missing_branch, self.category_offset,
                self.category_n_codes, self.category_branch)

    def category_map(self, node):
        """Branch of each category code at a categorical split, and whether each category reached
        the node in training (the last slot stands for a category never seen)."""
        start = self.category_offset[node]
        raw = self.category_branch[start:start + self.category_n_codes[node]]
        return np.where(raw >= 0, raw, -1 - raw), raw >= 0

    def is_leaf(self):
        """Boolean mask of the leaves."""
        return self.children_left == TREE_LEAF

    def _check_input(self, X):
        """scikit-learn's ``Tree`` contract: a 2-D float32 ndarray with ``n_features`` columns
        (made C-contiguous here), or a float32 CSR matrix (returned as its three arrays).
        Anything else is a ``ValueError`` before a kernel sees it."""
        if type(X).__module__.startswith("scipy.sparse"):
            if X.format != "csr":
                raise ValueError(f"X should be in csr_matrix format, got {type(X)}")
            if X.dtype != np.float32:
                raise ValueError(f"X.dtype should be np.float32, got {X.dtype}")
            if X.shape[1] != self.n_features:
                raise ValueError(f"X should have shape (n_samples, {self.n_features}), got "
                                 f"{X.shape}")
            return _CSR(np.ascontiguousarray(X.data), X.indices.astype(np.int32),
                        X.indptr.astype(np.int64), X.shape[0])
        if not isinstance(X, np.ndarray):
            raise ValueError(f"X should be in np.ndarray format, got {type(X)}")
        if X.dtype != np.float32:
            raise ValueError(f"X.dtype should be np.float32, got {X.dtype}")
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X should have shape (n_samples, {self.n_features}), got "
                             f"{X.shape}")
        return np.ascontiguousarray(X)

    def apply(self, X):
        """Leaf id of every row of ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), float32, or a float32 CSR matrix
            NaN marks a missing value.  The estimators' ``apply`` takes any array-like.

        Returns
        -------
        leaves : ndarray of shape (n_samples,), intp
        """
        return self._leaves(self._check_input(X)).astype(np.intp)

    def _leaves(self, X):
        """Leaf of every row of a checked input (dense array or :class:`_CSR`)."""
        if isinstance(X, _CSR):
            return apply_tree_csr(X.data, X.indices, X.indptr, *self._routing())
        return apply_tree(X, *self._routing())

    def predict_value(self, X):
        """Value (class fractions or mean target) of every row of a validated ``X``.

        With ``fractional_missing``, a row missing a split value gets the mixture of its
        branches' values, weighted by their training weight (C4.5); otherwise its leaf's value.

        Returns
        -------
        ndarray of shape (n_samples, n_outputs_values), float64
        """
        X = self._check_input(X)
        if not self.fractional_missing or isinstance(X, _CSR):  # sparse rows miss no value
            return self.value[self._leaves(X), 0, :]
        return predict_fractional(X, *self._routing(), self.weighted_n_node_samples,
                                  np.ascontiguousarray(self.value[:, 0, :]))

    def decision_path(self, X):
        """Node indicator matrix (scipy CSR) of shape (n_samples, node_count)."""
        try:
            from scipy.sparse import csr_matrix
        except ImportError as exc:  # pragma: no cover - scipy comes with scikit-learn
            raise ImportError("decision_path returns a scipy.sparse matrix; install scipy") from exc
        X = self._check_input(X)
        if isinstance(X, _CSR):
            path, length = decision_paths_csr(X.data, X.indices, X.indptr, *self._routing(),
                                              self.max_depth)
            n_rows = X.n_rows
        else:
            path, length = decision_paths(X, *self._routing(), self.max_depth)
            n_rows = X.shape[0]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(length, out=indptr[1:])
        indices = path[path >= 0]  # row-major: each row's nodes in visiting order
        data = np.ones(indices.shape[0], dtype=np.int64)
        return csr_matrix((data, indices, indptr), shape=(n_rows, self.node_count))

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
        if getattr(self, "importances", None) is not None:  # stored, not the node statistics
            importances = self.importances.copy()
        else:
            internal = ~self.is_leaf()
            weighted = self.weighted_n_node_samples * self.impurity
            parent = self.parent()
            children = np.bincount(parent[1:], weights=weighted[1:], minlength=self.node_count)
            decrease = weighted[internal] - children[internal]
            importances = np.bincount(
                self.feature[internal], weights=decrease, minlength=self.n_features
            ).astype(np.float64)
            importances /= self.weighted_n_node_samples[0]
        if normalize:
            total = importances.sum()
            if total > 0.0:
                importances /= total
        return importances


def _ranks(counts):
    """``0 .. c - 1`` for every count ``c``, concatenated."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


def _right_children(children_left):
    """``children_right`` of a tree of binary splits: each left child's next node, -1 at leaves."""
    return np.where(children_left == TREE_LEAF, TREE_LEAF, children_left + 1)


def _narrowest_integers(values):
    """``values`` (integers) in the smallest signed integer type that holds them all."""
    if values.size == 0:
        return values
    low, high = int(values.min()), int(values.max())
    for dtype in (np.int8, np.int16, np.int32):
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values


def _larger_child_branch(children_left, children_right, n_node_samples):
    """scikit-learn's missing-value branch where none was seen: left if it has more rows."""
    internal = children_left != TREE_LEAF
    branch = np.zeros(children_left.shape[0], dtype=np.int32)
    left = n_node_samples[children_left[internal]]
    right = n_node_samples[children_right[internal]]
    branch[internal] = np.where(left > right, 0, 1)
    return branch
