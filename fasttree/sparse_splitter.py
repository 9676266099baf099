"""A splitter over a sparse (CSC) matrix: exact splits, memory and work in O(nnz).

:class:`SparseSplitter` implements the phases of :class:`~fasttree.splitter.ExactSplitter` that
the grower calls (see :mod:`fasttree.splitter`) on the layout of :mod:`fasttree.kernels.sparse`:
per feature only the stored nonzero values, sorted inside each node; the zero rows of a node are
implicit.  Trees are bit-identical to the exact splitter's on ``X.toarray()`` (same features,
thresholds, counts, impurities, values), for Gini, entropy, squared error and Poisson, with or
without sample weights.

Only numeric threshold splits exist here: no categorical features, no missing values (scikit-learn
rejects NaN in sparse input; the estimator checks).

Example, the way an estimator grows a tree from a sparse ``X``::

    data, indices, indptr = csc_arrays(X)                  # canonical CSC, float32 / int32 / int64
    splitter = SparseSplitter.from_csc(
        data, indices, indptr, X.shape[0], y, sample_weight, n_classes=n_classes,
        criterion_code=params.criterion_code, min_samples_leaf=params.min_samples_leaf,
        min_weight_leaf=params.min_weight_leaf)
    tree = TreeGrower(None, None, None, params, n_classes=n_classes, rng=rng,
                      splitter=splitter).grow()
    leaves = apply_tree_csr(*csr_arrays(X_test), *tree._routing())
"""

import time

import numba
import numpy as np

from ._dtypes import (
    CRITERION_ABSOLUTE_ERROR,
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    SPLIT_THRESHOLD,
    label_dtype,
)
from .kernels import new_split_record
from .splitter import (
    _constraints,
    _node_bounds,
    absolute_error_stats,
    checked_draws,
    weight_tables,
)
from .splitter_contract import one_tree
from .kernels.sparse import (
    build_sparse_layout,
    find_best_splits_sparse_classification,
    find_best_splits_sparse_regression,
    find_segments,
    find_splits_sparse_absolute_error,
    find_splits_sparse_generic,
    partition_sparse_segments,
    route_node_rows,
    segment_entries,
    sparse_node_stats,
    sparse_non_constant,
)


def _canonical(X, fmt):
    """``X`` (any scipy sparse matrix or array) in ``fmt`` with summed duplicates and sorted
    indices, as a new object when a conversion is needed (the caller's matrix is not changed)."""
    converted = X.asformat(fmt)
    if converted is X:
        converted = X.copy()
    converted.sum_duplicates()  # also sorts the indices
    return converted


def csc_arrays(X):
    """The ``(data, indices, indptr)`` of a scipy sparse matrix as :meth:`SparseSplitter.
    from_csc` takes them: canonical CSC, float32 values, int32 row ids, int64 pointers.

    The values are cast to float32 (the dtype of dense ``X``, see :mod:`fasttree._dtypes`);
    validation (finite values) is the caller's.
    """
    if X.shape[0] >= 2**31:
        raise ValueError("sparse fit: more than 2**31 - 1 rows is not supported")
    Xc = _canonical(X, "csc")
    return (np.ascontiguousarray(Xc.data, dtype=np.float32),
            np.ascontiguousarray(Xc.indices, dtype=np.int32),
            np.ascontiguousarray(Xc.indptr, dtype=np.int64))


def csr_arrays(X):
    """The ``(data, indices, indptr)`` of a scipy sparse matrix as
    :func:`~fasttree.kernels.apply_tree_csr` takes them (float32 / int32 / int64, CSR)."""
    Xr = X.asformat("csr")
    return (np.ascontiguousarray(Xr.data, dtype=np.float32),
            np.ascontiguousarray(Xr.indices, dtype=np.int32),
            np.ascontiguousarray(Xr.indptr, dtype=np.int64))


class SparseSplitter:
    """Exact splits of a CSC matrix's features, the zeros never stored.

    Parameters
    ----------
    entry_x, entry_row, entry_y, feature_ptr : ndarray
        The working layout (:func:`~fasttree.kernels.build_sparse_layout`), owned and moved by
        the splitter.
    targets : ndarray of shape (n_samples,)
        Target of every row: labels (uint8 / uint16) or float64 regression values.
    sample_weight : ndarray of shape (n_samples,), float64, or None
        None: every weight is 1 (the kernels' integer fast paths).
    n_samples : int
    n_classes : int or None
        None for regression.
    criterion_code : int
    min_samples_leaf : int
    min_weight_leaf : float
    exact_zero_block : bool, default=True
        With float statistics (sample weights, or regression), add a node's zero rows one by one
        in the dense order, so that trees are bit-identical to the exact splitter's.  That costs
        O(rows of the node) per feature having positive values in it; False costs O(nnz) per
        level, and trees then equal the dense ones up to float rounding (a near-tie may go the
        other way).  Unweighted classification is always exact and O(nnz).

    Attributes
    ----------
    n_features, n_samples : int
    tree_offsets, tree_weights : ndarray
        One tree (:class:`~fasttree.splitter_contract.Splitter`).
    missing_features : ndarray of shape (n_features,), bool
        All False: sparse input has no missing values.
    timings : dict of str to float
        Seconds per phase: ``presort`` (building the layout), ``search``, ``partition``,
        ``node_stats``.
    category_map : ndarray of shape (0,), int32
        No categorical split.
    """

    capabilities = frozenset({"sparse", "several_outputs", "poisson", "absolute_error",
                              "monotonic_cst"})
    one_output_only = frozenset({"monotonic_cst"})
    choice = "sparse X"
    remedy = "pass a dense array (X.toarray())"

    def __init__(self, entry_x, entry_row, entry_y, feature_ptr, targets, sample_weight, *,
                 n_samples, n_classes, criterion_code, min_samples_leaf, min_weight_leaf,
                 exact_zero_block=True, random_thresholds=False, multi_output=None,
                 monotonic_cst=None, timings=None):
        self.entry_x, self.entry_row, self.entry_y = entry_x, entry_row, entry_y
        self.feature_ptr = feature_ptr
        self.row_y = targets
        self.n_features = feature_ptr.shape[0] - 1
        self.n_samples = int(n_samples)
        self.n_classes = n_classes
        self.criterion_code = criterion_code
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.exact_zero_block = bool(exact_zero_block)
        self.random_thresholds = bool(random_thresholds)
        self.multi_output = multi_output
        if criterion_code == CRITERION_ABSOLUTE_ERROR:  # per-node ranks of each output's targets
            n_outputs = 1 if multi_output is None else multi_output[0].shape[1]
            self._rank_of_row = np.zeros((n_outputs, self.n_samples), dtype=np.int64)
            self._node_sorted_y = np.zeros((n_outputs, self.n_samples))
        self.monotonic_cst = _constraints(monotonic_cst, self.n_features)
        if self.monotonic_cst.size and multi_output is not None:
            raise ValueError("monotonicity constraints need one output")
        if multi_output is None:
            # targets by row id and where each output's statistics start: one output's are
            # class counts, or [w, sum w*y, c] (node statistics, and the generic search)
            width = n_classes if n_classes is not None else 3
            self._targets = (np.ascontiguousarray(targets, dtype=np.float64)[:, None],
                             np.array([0, width], dtype=np.int64))
        else:
            self._targets = multi_output
        # the generic search kernel alone checks monotonicity constraints (besides the
        # absolute-error kernel)
        generic = multi_output is not None or self.random_thresholds or self.monotonic_cst.size
        self._generic = self._targets if generic else None
        self.timings = {} if timings is None else timings
        self.missing_features = np.zeros(self.n_features, dtype=bool)
        self.category_map = np.zeros(0, dtype=np.int32)
        self.sample_weight, root_weight, self._count_table = weight_tables(
            sample_weight, self.n_samples, n_classes, criterion_code)
        self.tree_offsets, self.tree_weights = one_tree(self.n_samples, root_weight)
        # every node a range of positions of node_rows, its rows by ascending id (the dense
        # order of a zero block); row_pos is the inverse
        self.node_rows = np.arange(self.n_samples, dtype=np.int32)
        self.row_pos = np.arange(self.n_samples, dtype=np.int32)
        self._marks = np.zeros(self.n_samples, dtype=np.uint8)
        self._row_branch = np.zeros(self.n_samples, dtype=np.uint8)
        counts = np.diff(feature_ptr)
        self._max_segment = int(counts.max()) if counts.size else 0
        self.nnz = int(feature_ptr[-1])
        self._entries_of = None  # (start, end, entry_start, entry_end) of the latest nodes

    @classmethod
    def from_csc(cls, data, indices, indptr, n_samples, y, sample_weight, *, n_classes,
                 criterion_code, min_samples_leaf, min_weight_leaf, n_categories=None,
                 categorical_kind=None, missing_fractional=False, min_branch_fraction=0.0,
                 random_thresholds=False, multi_output=None, monotonic_cst=None,
                 exact_zero_block=True):
        """Build the layout from a CSC matrix's arrays, then the splitter.

        Parameters
        ----------
        data : ndarray of shape (nnz,), float32
            Finite values (validated by the caller); stored zeros behave as zeros.
        indices : ndarray of shape (nnz,), int32
            Row ids; no duplicated (row, column) pair (:func:`csc_arrays` makes it canonical).
        indptr : ndarray of shape (n_features + 1,), int64
        n_samples : int
        y : ndarray of shape (n_samples,)
            int32 encoded classes, or float64 targets when ``n_classes`` is None.
        sample_weight : ndarray of shape (n_samples,), float64, or None
        n_classes, criterion_code, min_samples_leaf, min_weight_leaf
            As for :class:`~fasttree.splitter.ExactSplitter`.
        n_categories, categorical_kind, missing_fractional, min_branch_fraction, \
random_thresholds, multi_output
            Accepted so that the keyword arguments of
            :meth:`ExactSplitter.from_data <fasttree.splitter.ExactSplitter.from_data>` can be
            passed as they are; random thresholds (``splitter="random"``) and several outputs
            (``(Y, offsets)``, :mod:`fasttree.kernels.multi_output`) and monotonicity
            constraints (``monotonic_cst``, one output) are supported, categorical
            features, fractional missing rows and C4.5's minimum branch weight are not
            (``ValueError`` when asked for).
        exact_zero_block : bool, default=True
            See the class docstring.
        """
        if n_categories is not None and np.any(np.asarray(n_categories) > 0):
            raise ValueError("sparse input: categorical features are not supported")
        if missing_fractional or min_branch_fraction > 0.0:
            raise ValueError(
                "sparse input: C4.5's fractional rows and minimum branch weight are not supported")
        regression = criterion_code in (CRITERION_SQUARED_ERROR, CRITERION_POISSON,
                                        CRITERION_ABSOLUTE_ERROR)
        if criterion_code not in (CRITERION_GINI, CRITERION_ENTROPY) and not regression:
            raise ValueError(f"sparse input: criterion code {criterion_code} is not supported")
        if regression != (n_classes is None):
            raise ValueError("n_classes must be None for regression criteria, and only then")
        timings = {}
        t0 = time.perf_counter()
        if multi_output is not None:  # the targets are read by row id from multi_output
            targets = np.zeros(n_samples, dtype=np.uint8)
        elif n_classes is None:
            targets = np.ascontiguousarray(y, dtype=np.float64)
        else:
            targets = np.ascontiguousarray(y, dtype=label_dtype(n_classes))
        if targets.shape[0] != n_samples:
            raise ValueError(f"y has {targets.shape[0]} rows, the matrix {n_samples}")
        entry_x, entry_row, entry_y, feature_ptr = build_sparse_layout(
            np.ascontiguousarray(data, dtype=np.float32),
            np.ascontiguousarray(indices, dtype=np.int32),
            np.ascontiguousarray(indptr, dtype=np.int64), targets)
        timings["presort"] = time.perf_counter() - t0
        if sample_weight is not None:
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        return cls(entry_x, entry_row, entry_y, feature_ptr, targets, sample_weight,
                   n_samples=n_samples, n_classes=n_classes, criterion_code=criterion_code,
                   min_samples_leaf=min_samples_leaf, min_weight_leaf=min_weight_leaf,
                   exact_zero_block=exact_zero_block, random_thresholds=random_thresholds,
                   multi_output=multi_output, monotonic_cst=monotonic_cst, timings=timings)

    def _timed(self, phase, func, *args):
        t0 = time.perf_counter()
        result = func(*args)
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0
        return result

    @staticmethod
    def _n_chunks():
        # a few tasks per thread, each a run of pairs of equal work: results unchanged
        return 4 * numba.get_num_threads()

    def _entries(self, start, end, phase="search"):
        """Every feature's entries of the nodes ``[start, end)`` (:func:`segment_entries`, its
        time counted in ``phase``).  A level asks for the same nodes twice (their non-constant
        features, the search), then for those of them that split (the partition), so the
        latest walk is kept until entries move, and a subset of its nodes takes its columns."""
        kept = self._entries_of
        if kept is not None:
            if np.array_equal(kept[0], start) and np.array_equal(kept[1], end):
                return kept[2], kept[3]
            columns = _columns_of(kept[0], kept[1], start, end)
            if columns is not None:
                return (np.ascontiguousarray(kept[2][:, columns]),
                        np.ascontiguousarray(kept[3][:, columns]))
        bounds = self._timed(phase, segment_entries, self.entry_row, self.feature_ptr,
                             self.row_pos, start, end, _order(start))
        self._entries_of = (start.copy(), end.copy()) + bounds
        return bounds

    def _search_layout(self, start, end):
        """The arguments the search kernels start with."""
        return (self.entry_x, self.entry_row, self.entry_y, self.node_rows, self.row_y,
                self.sample_weight, start, end) + self._entries(start, end)

    # -- phases ------------------------------------------------------------------------------
    def node_stats(self, start, end, feature):
        """Statistics of the nodes ``[start, end)``, summed in the order the exact splitter sums
        them (the sorted order of ``feature``, which must hold each node's entries: any feature
        once a node is partitioned; before that, its parent's split feature)."""
        start, end = _int64(start), _int64(end)
        feature = _int64(feature)
        if self.criterion_code == CRITERION_ABSOLUTE_ERROR:
            # ranks of each node's targets (rows by id), kept until the node splits
            targets = (self.row_y[:, None] if self.multi_output is None
                       else self.multi_output[0])
            return self._timed("node_stats", absolute_error_stats, self.node_rows[None, :],
                               targets, self.sample_weight, start, end, self._rank_of_row,
                               self._node_sorted_y)
        Y, offsets = self._targets
        seg_a, seg_b = self._timed("node_stats", find_segments, self.entry_row,
                                   self.feature_ptr, self.row_pos, start, end, feature)
        return self._timed("node_stats", sparse_node_stats, self.entry_x, self.entry_row,
                           self.node_rows, Y, self.sample_weight, start, end, seg_a, seg_b,
                           offsets, self.criterion_code, self._marks)

    def non_constant(self, start, end):
        """(n_features, n_nodes) mask of the features not constant in each node (zeros count)."""
        start, end = _int64(start), _int64(end)
        return sparse_non_constant(self.entry_x, start, end, *self._entries(start, end))

    def find_splits(self, start, end, stats, mask, bounds=None, draws=None):
        """Best split of every unmasked (feature, node) pair, as a SplitRecord (``bounds`` and
        ``draws``: as for :meth:`ExactSplitter.find_splits
        <fasttree.splitter.ExactSplitter.find_splits>`)."""
        start, end = _int64(start), _int64(end)
        uniform, coin = checked_draws(draws, self.random_thresholds, self.n_features,
                                      start.shape[0])
        constraints = self.monotonic_cst, _node_bounds(self.monotonic_cst, bounds)
        record = new_split_record(self.n_features, start.shape[0])
        mask = np.ascontiguousarray(mask, dtype=np.uint8)
        stats = np.ascontiguousarray(stats, dtype=np.float64)
        if self.criterion_code == CRITERION_ABSOLUTE_ERROR:
            self._timed("search", find_splits_sparse_absolute_error, self.entry_x,
                        self.entry_row, self.node_rows, self.sample_weight, start, end,
                        *self._entries(start, end), stats, mask,
                        self._rank_of_row, self._node_sorted_y, self.min_samples_leaf,
                        self.min_weight_leaf, uniform, coin, *constraints, self._n_chunks(),
                        record)
        elif self._generic is not None:  # random thresholds, several outputs, constraints
            Y, offsets = self._generic
            self._timed("search", find_splits_sparse_generic, self.entry_x, self.entry_row,
                        self.node_rows, Y, self.sample_weight, start, end,
                        *self._entries(start, end), stats, mask, offsets, self.criterion_code,
                        self.min_samples_leaf, self.min_weight_leaf, uniform, coin,
                        *constraints, self._n_chunks(), record)
        elif self.n_classes is None:
            self._timed("search", find_best_splits_sparse_regression,
                        *self._search_layout(start, end), stats, mask, self.criterion_code,
                        self.min_samples_leaf, self.min_weight_leaf, self._count_table,
                        self.exact_zero_block, self._n_chunks(), record)
        else:
            self._timed("search", find_best_splits_sparse_classification,
                        *self._search_layout(start, end), stats, mask, self.criterion_code,
                        self.min_samples_leaf, self.min_weight_leaf, self._count_table,
                        self.exact_zero_block, self._n_chunks(), record)
        return record

    def describe_categorical(self, *args):
        raise ValueError("sparse input has no categorical features")

    def is_prefix(self, kind, n_missing, missing_branch):
        """Every split here is a numeric threshold with no missing rows: a prefix split."""
        return (kind == SPLIT_THRESHOLD) & (
            (n_missing == 0) | (missing_branch == 1))

    def split(self, start, end, feature, kind, threshold, missing_branch, n_branches, n_left,
              n_missing, category_offset, category_n_codes):
        """Rows per branch of every split node; sends each node's rows to its children.

        Unlike the dense splitter, every split node's rows are routed here (O(rows + the split
        feature's entries)), because the children's statistics are summed over their rows; the
        features' entries move in :meth:`partition_prefix`, for the nodes whose children will be
        searched.
        """
        start, end, feature = _int64(start), _int64(end), _int64(feature)
        if np.any(kind != SPLIT_THRESHOLD) or np.any(n_missing != 0):
            raise ValueError("sparse input: only numeric threshold splits")
        routed = self._timed(
            "partition", route_node_rows, self.entry_x, self.entry_row, self.feature_ptr,
            self.row_pos, self.node_rows, start, end, feature, _int64(kind),
            np.ascontiguousarray(threshold, dtype=np.float64), _int64(missing_branch),
            self._row_branch)
        if not np.array_equal(routed, n_left):
            raise RuntimeError("SparseSplitter: rows routed left differ from the split record")
        branch_rows = np.empty(2 * start.shape[0], dtype=np.int64)
        branch_rows[0::2] = n_left
        branch_rows[1::2] = end - start - n_left
        return start, end, branch_rows

    def partition_prefix(self, start, end, feature, n_left):
        """Move every feature's entries of these (already routed) nodes: left child's first."""
        start, end = _int64(start), _int64(end)
        self._timed("partition", partition_sparse_segments, self.entry_x, self.entry_row,
                    self.entry_y, self.row_pos, start, end,
                    *self._entries(start, end, "partition"),
                    _int64(feature), _int64(n_left), self._max_segment, self._n_chunks())
        self._entries_of = None  # the nodes' entries moved: their children's are found anew


def _int64(a):
    return np.ascontiguousarray(a, dtype=np.int64)


def _columns_of(kept_start, kept_end, start, end):
    """Where each node ``[start, end)`` stands among the kept nodes, or None if one is not
    among them (nodes do not overlap, so a node is known by its start)."""
    if kept_start.size == 0:
        return None
    order = np.argsort(kept_start, kind="stable")
    at = order[np.minimum(np.searchsorted(kept_start[order], start), order.size - 1)]
    if np.array_equal(kept_start[at], start) and np.array_equal(kept_end[at], end):
        return at
    return None


def _order(start):
    """Nodes by position: the kernels walk each feature's segments in that order."""
    return np.argsort(start, kind="stable").astype(np.int64)
