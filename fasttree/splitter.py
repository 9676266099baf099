"""The exact presorted splitter: every feature sorted once, every node a sorted range of it.

:class:`ExactSplitter` implements :class:`fasttree.splitter_contract.Splitter` (the methods the
grower calls, written down there) over the layout of :mod:`fasttree.kernels.split_search`.
"""

import time

import numpy as np

from ._dtypes import (
    CRITERION_SQUARED_ERROR,
    SPLIT_THRESHOLD,
    label_dtype,
)
from ._dtypes import CRITERION_ABSOLUTE_ERROR
from .kernels import (
    categorical_split_maps,
    find_best_splits_categorical,
    find_best_splits_classification,
    find_best_splits_regression,
    find_random_splits_classification,
    find_random_splits_regression,
    find_splits_absolute_error,
    find_splits_multioutput,
    gather_targets,
    new_split_record,
    node_target_ranks,
    partition_segments_fractional,
    presort_features,
    presort_samples,
    reciprocal_table,
    relabel_rows,
    route_rows,
    segment_multi_stats,
    xlog2x_table,
)
from .kernels.node_stats import run_segment_class_weights, run_segment_target_sums
from .kernels.partition import MoveScratch, _partition_kway, _partition_prefix
from .kernels.split_search import FEATURE_THRESHOLD

# The moves look a row's direction up at its id, in a table of one bit per id.  While a node's ids
# span at most this many (1 MiB of bits), its part of the table stays in cache as the rows stream
# past; over more it does not, so the rows are renumbered (relabel_rows) once every child spans
# at most this many.  In four 10M x 20 fits timed per level, the moves took 11 to 17 ns per row
# and thread before renumbering and 4 to 10 after it; renumbering cost about one level's move.
CACHED_ID_SPAN = 1 << 23


def no_draws():
    """The random splitter's draws when thresholds are not random: empty arrays."""
    return np.empty((0, 0)), np.empty((0, 0), dtype=np.uint8)


def checked_draws(draws, random_thresholds, n_features, n_nodes):
    """``draws`` (uniform, coin), checked to be the nodes' when thresholds are random (the
    grower's :func:`~fasttree.kernels.draws.node_draws`), else empty arrays."""
    if not random_thresholds or n_features == 0:
        return no_draws()
    if draws is None or draws[0].shape != (n_features, n_nodes):
        raise ValueError("random thresholds need the nodes' draws (uniform, coin) of shape "
                         f"({n_features}, {n_nodes})")
    return draws


def check_counts(counts, n_samples, sample_weight):
    """``counts`` as an array, checked to give ``n_trees`` trees of ``n_samples`` rows each at
    least one row drawn, with ``sample_weight`` of shape (n_samples,) or that of counts."""
    counts = np.asarray(counts)
    if (counts.ndim != 2 or counts.shape[1] != n_samples
            or not np.issubdtype(counts.dtype, np.integer)):
        raise ValueError("counts must be an integer array of shape (n_trees, n_samples)")
    if counts.size and counts.min() < 0:
        raise ValueError("counts must not be negative")
    if sample_weight is not None and sample_weight.shape not in (counts.shape[1:],
                                                                 counts.shape):
        raise ValueError("sample_weight must have shape (n_samples,) or that of counts")
    if not (counts > 0).any(axis=1).all():
        raise ValueError("every tree needs at least one row (a count above 0)")
    return counts


def drawn_weights(counts, sample_weight):
    """The weight of every drawn row, tree after tree, each tree's rows in order: its count
    times ``sample_weight`` (of shape (n_samples,) or that of ``counts``); None when every one
    is 1."""
    in_sample = counts > 0
    weight = counts[in_sample].astype(np.float64)
    if sample_weight is not None and sample_weight.shape == counts.shape:
        weight *= sample_weight[in_sample]
    elif sample_weight is not None:
        weight *= sample_weight[np.nonzero(in_sample)[1]]
    elif np.all(weight == 1.0):
        weight = None
    return weight


def small_counts(sample_weight):
    """``sample_weight`` as uint8 counts when every weight is a whole number from 0 to 255 (a
    bootstrap's counts, say): the classification search then counts in integers; else None
    (and None for unit weights, an empty array, which have their own path)."""
    w = sample_weight
    if w.shape[0] == 0 or not (np.all(w >= 0.0) and np.all(w <= 255.0)
                               and np.all(w == np.floor(w))):
        return None
    return w.astype(np.uint8)


def _renumbered(table, new_id):
    """A copy of ``table`` (indexed by row id along its first axis) under the new ids."""
    out = np.empty_like(table)
    out[new_id] = table
    return out


def _constraints(monotonic_cst, n_features):
    """The kernels' form of monotonicity constraints: int8 per feature, empty for none."""
    if monotonic_cst is None:
        return np.empty(0, dtype=np.int8)
    cst = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
    if cst.shape != (n_features,) or not np.isin(cst, (-1, 0, 1)).all():
        raise ValueError(f"monotonic_cst must hold -1, 0 or 1 for each of {n_features} features")
    return cst if cst.any() else np.empty(0, dtype=np.int8)


def _node_bounds(monotonic_cst, bounds):
    """The kernels' ``node_bounds``: the nodes' ranges when there are constraints."""
    if monotonic_cst.size == 0:
        return np.empty((0, 2))
    if bounds is None:
        raise ValueError("monotonicity constraints need each node's bounds")
    return np.ascontiguousarray(bounds, dtype=np.float64)


def weight_tables(sample_weight, n_samples, n_classes, criterion_code):
    """The kernels' weights (an empty array when every weight is 1), the root's weight, and with
    unit weights the count table the scans read (``c log2 c`` for classification, ``1 / c`` for
    squared error; empty otherwise)."""
    weights = np.empty(0) if sample_weight is None else sample_weight
    unit_weight = weights.shape[0] == 0
    root_weight = float(n_samples if unit_weight else weights.sum())
    table = np.empty(0)
    if unit_weight and n_classes is not None:
        table = xlog2x_table(n_samples)
    elif unit_weight and criterion_code == CRITERION_SQUARED_ERROR:
        table = reciprocal_table(n_samples)
    return weights, root_weight, table


def absolute_error_stats(rows, targets, sample_weight, start, end, rank_of_row, node_sorted_y):
    """``[w, sum w*y, absolute error, median]`` of every node, one block per output, from one row
    of positions holding each node's row ids (``rows``, shape (1, n_samples)) and the targets by
    row id (``targets``, (n_samples, n_outputs)); fills each output's ranks."""
    row_zero = np.zeros_like(start)
    return np.hstack([
        node_target_ranks(rows, np.ascontiguousarray(targets[rows, k]), sample_weight, start,
                          end, row_zero, rank_of_row[k], node_sorted_y[k])
        for k in range(targets.shape[1])])


class CategoryMaps:
    """The category -> branch maps of a tree's categorical splits, one after another (what
    ``Tree.category_branch`` holds), growing as splits are described."""

    def __init__(self):
        self._parts = []
        self._size = 0

    def add(self, maps, n_codes):
        """Append the maps of some nodes (``n_codes`` entries each); returns their offsets."""
        offset = self._size + np.concatenate([[0], np.cumsum(n_codes)[:-1]])
        self._parts.append(maps)
        self._size += maps.shape[0]
        return offset

    @property
    def array(self):
        if len(self._parts) > 1:
            self._parts = [np.concatenate(self._parts)]
        return self._parts[0] if self._parts else np.zeros(0, dtype=np.int32)


class ExactSplitter:
    """Every feature sorted once; every node a contiguous, sorted range of every feature row.

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y : ndarray of shape (n_features, n_samples)
        The working layout (:func:`~fasttree.kernels.presort_features`,
        :func:`~fasttree.kernels.gather_targets`), owned and moved by the splitter.
    sample_weight : ndarray of shape (n_samples,) or None
        None: every weight is 1 (the kernels' integer fast paths).
    n_classes : int or None
        None for regression.
    n_categories : ndarray of shape (n_features,), int64
        Categories of each categorical feature, 0 for numeric ones.
    criterion_code : int
    min_samples_leaf : int
    min_weight_leaf : float
    categorical_kind : int
        ``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY``.
    missing_fractional : bool
        C4.5's fractional rows: missing rows go down every branch, the layout grows.
    min_branch_fraction : float
        C4.5's minimum branch weight for thresholds (0 disables it).
    random_thresholds : bool
        Score one random threshold per numeric (feature, node) pair (scikit-learn's
        ``splitter="random"``), at the positions :meth:`find_splits` is given, instead of
        searching every midpoint.
    multi_output : tuple (Y, offsets) or None
        Several outputs: ``Y`` (n_samples, n_outputs) float64 targets by row id and the
        statistics offsets of :mod:`fasttree.kernels.multi_output`; ``sorted_y`` is then unused.
    monotonic_cst : ndarray of shape (n_features,), int8, or None
        Monotonicity constraints (:mod:`fasttree.kernels.monotonic`; one output, numeric
        features, not with ``missing_fractional``).
    tree_offsets : ndarray of shape (n_trees + 1,), int64, or None
        The layout holds several trees' rows, tree ``k``'s in the block
        ``[tree_offsets[k], tree_offsets[k + 1])`` under ids of its own (:meth:`from_samples`);
        None: one tree.

    Attributes
    ----------
    missing_features : ndarray of shape (n_features,), bool
        Features with missing values in the training data.
    tree_offsets, tree_weights : ndarray
        Each tree's block of the layout and its root's weight
        (:class:`~fasttree.splitter_contract.Splitter`).
    timings : dict of str to float
        Seconds spent per phase (``presort`` when built from ``X``, ``search``, ``partition``,
        ``node_stats``).
    """

    # what it takes (fasttree.splitter_contract): everything but sparse input
    capabilities = frozenset({"several_outputs", "categorical", "gain_ratio", "c45_rules",
                              "poisson", "absolute_error", "monotonic_cst"})
    # the multi-output and absolute-error searches score no split information, no C4.5 rule,
    # no constraint across outputs; categorical splits are of one output's statistics
    one_output_only = frozenset({"categorical", "gain_ratio", "c45_rules", "monotonic_cst"})
    choice = "the exact splitter"
    remedy = "see the estimator's documentation"

    def __init__(self, sorted_x, sorted_idx, sorted_y, sample_weight, *, n_classes, n_categories,
                 criterion_code, min_samples_leaf, min_weight_leaf, categorical_kind,
                 missing_fractional=False, min_branch_fraction=0.0, random_thresholds=False,
                 multi_output=None, monotonic_cst=None, timings=None, tree_offsets=None):
        self.sorted_x, self.sorted_idx, self.sorted_y = sorted_x, sorted_idx, sorted_y
        self.n_features, self.n_samples = sorted_x.shape
        self.n_classes = n_classes
        self.n_categories = np.asarray(n_categories, dtype=np.int64)
        self.is_categorical = self.n_categories > 0
        self.criterion_code = criterion_code
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.categorical_kind = categorical_kind
        self.missing_fractional = missing_fractional
        self.min_branch_fraction = min_branch_fraction
        self.tree_offsets = (np.array([0, sorted_x.shape[1]], dtype=np.int64)
                             if tree_offsets is None else tree_offsets)
        n_trees = self.tree_offsets.shape[0] - 1
        self.random_thresholds = bool(random_thresholds)
        if n_trees > 1 and missing_fractional:
            raise ValueError("C4.5's fractional rows grow one tree's layout: one tree only")
        self.multi_output = multi_output
        self.monotonic_cst = _constraints(monotonic_cst, self.n_features)
        if self.monotonic_cst.size and (multi_output is not None or missing_fractional):
            raise ValueError("monotonicity constraints need one output and no fractional rows")
        self.timings = {} if timings is None else timings
        self._move_scratch = MoveScratch()  # the chunked moves', mapped once per fit
        # NaN sorts last: a feature misses values iff the last sorted value of a tree is NaN
        tree_ends = self.tree_offsets[1:][self.tree_offsets[1:] > self.tree_offsets[:-1]]
        self.missing_features = np.isnan(sorted_x[:, tree_ends - 1]).any(axis=1)
        self._any_missing = bool(self.missing_features.any())
        self._any_categorical = bool(self.is_categorical.any())
        if missing_fractional and sample_weight is None:
            # rows sent down several branches carry fractional weights: no unit-weight path
            sample_weight = np.ones(self.n_samples)
        self.sample_weight, root_weight, self._count_table = weight_tables(
            sample_weight, self.n_samples, n_classes, criterion_code)
        # each tree's root weight summed as a layout of that tree alone would sum it
        self.tree_weights = (np.array([root_weight]) if n_trees == 1 else np.array([
            float(b - a) if self.sample_weight.shape[0] == 0 else self.sample_weight[a:b].sum()
            for a, b in zip(self.tree_offsets[:-1], self.tree_offsets[1:])]))
        if criterion_code == CRITERION_ABSOLUTE_ERROR:  # per-node ranks of each output's targets
            n_outputs = 1 if multi_output is None else multi_output[0].shape[1]
            self._rank_of_row = np.zeros((n_outputs, self.n_samples), dtype=np.int64)
            self._node_sorted_y = np.zeros((n_outputs, self.n_samples))
        # whole weights up to 255 (a bootstrap's counts): the numeric classification search
        # counts in integers, as with unit weights (exact; 4-5 times faster than float weights)
        self._counts = (small_counts(self.sample_weight)
                        if n_classes is not None and multi_output is None
                        and not missing_fractional else None)
        self._counts_table = (np.empty(0) if self._counts is None
                              else xlog2x_table(int(self.tree_weights.max())))
        self._row_branch = np.empty(self.n_samples, dtype=np.int32)
        self._category_maps = CategoryMaps()
        self._id_span = int(np.max(np.diff(self.tree_offsets)))  # most ids a node spreads over

    @classmethod
    def from_data(cls, X, y, sample_weight, **kwargs):
        """Build the layout from a validated float32 ``X`` and encoded ``y`` (int32 classes, or
        float64 targets when ``n_classes`` is None), then the splitter."""
        timings = {}
        t0 = time.perf_counter()
        sorted_x, sorted_idx = presort_features(X)
        n_classes = kwargs["n_classes"]
        if kwargs.get("multi_output") is not None:  # targets read through the row ids
            sorted_y = np.zeros(sorted_idx.shape, dtype=np.uint8)
        else:
            # targets travel with the rows: uint8/uint16 class labels, or float64 values
            targets = y if n_classes is None else y.astype(label_dtype(n_classes))
            sorted_y = gather_targets(sorted_idx, targets)
        timings["presort"] = time.perf_counter() - t0
        return cls(sorted_x, sorted_idx, sorted_y, sample_weight, timings=timings, **kwargs)

    @classmethod
    def from_samples(cls, X, y, counts, sample_weight=None, **kwargs):
        """The layout of several trees, each on its own sample of the rows of ``X`` (a forest's
        bootstrap samples, say), each presorted into a block of its own; the grower grows them all
        at once.

        Tree ``k`` sees each row as often as ``counts[k]`` says: rows drawn several times weigh
        that many times as much (scikit-learn's bootstrap), rows drawn none are not in its
        block at all.  Grown by :class:`~fasttree.grower.TreeGrower` (one generator per tree in
        ``rng``: each root's key), tree ``k`` is the tree grown alone on the rows
        ``counts[k] > 0`` in order with weights ``counts[k]`` (times ``sample_weight``).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), float32, C-contiguous
        y : ndarray of shape (n_samples,)
            int32 encoded classes, or float64 targets when ``n_classes`` is None.
        counts : ndarray of shape (n_trees, n_samples), integer
            How many times each tree drew each row; every tree at least one row.
        sample_weight : ndarray of shape (n_samples,) or (n_trees, n_samples), float64, or None
            Every tree's row weights, or each tree's own (a forest's ``"balanced_subsample"``).
        **kwargs
            As for the constructor (``tree_offsets`` excepted); ``multi_output``'s targets are
            by row of ``X``.

        Returns
        -------
        ExactSplitter
            Its :attr:`tree_offsets` give each tree's block.  Weights are counts (times
            ``sample_weight``): with every count 1 and no ``sample_weight`` the kernels keep
            their unit-weight paths.
        """
        counts = check_counts(counts, X.shape[0], sample_weight)
        in_sample = counts > 0
        timings = {}
        t0 = time.perf_counter()
        tree_x, tree_idx, origin, tree_offsets = presort_samples(X, in_sample)
        weight = drawn_weights(counts, sample_weight)  # by new id
        n_classes = kwargs["n_classes"]
        if kwargs.get("multi_output") is not None:
            Y, offsets = kwargs.pop("multi_output")
            kwargs["multi_output"] = (np.ascontiguousarray(Y[origin]), offsets)
            sorted_y = np.zeros(tree_idx.shape, dtype=np.uint8)
        else:
            targets = y[origin] if n_classes is None else y[origin].astype(label_dtype(n_classes))
            sorted_y = gather_targets(tree_idx, targets)
        timings["presort"] = time.perf_counter() - t0
        return cls(tree_x, tree_idx, sorted_y, weight, timings=timings,
                   tree_offsets=tree_offsets, **kwargs)

    @staticmethod
    def bytes_per_row(n_features, classification):
        """Bytes of layout per row of a tree: every feature's value, row id and target."""
        return n_features * (8 + (1 if classification else 8))

    def _timed(self, phase, func, *args):
        t0 = time.perf_counter()
        result = func(*args)
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0
        return result

    # -- phases ------------------------------------------------------------------------------
    def node_stats(self, start, end, feature):
        """Statistics of the nodes ``[start, end)``, read from the row of ``feature`` (which must
        hold each node's rows in that range: any row once a node is partitioned; before that,
        the split feature of its parent)."""
        if self.criterion_code == CRITERION_ABSOLUTE_ERROR:
            # the ranks are kept per row id and per node position: valid until the node splits
            return self._timed("node_stats", self._absolute_error_stats, start, end, feature)
        if self.multi_output is not None:
            Y, offsets = self.multi_output
            return self._timed("node_stats", segment_multi_stats, self.sorted_idx, Y,
                               self.sample_weight, start, end, feature, offsets,
                               self.criterion_code)
        if self.n_classes is None:
            return self._timed("node_stats", run_segment_target_sums, self.sorted_idx,
                               self.sorted_y, self.sample_weight, start, end, feature,
                               self.criterion_code)
        # counts as the search reads them (one compiled variant of the kernel, 1 byte a row)
        weight = self.sample_weight if self._counts is None else self._counts
        return self._timed("node_stats", run_segment_class_weights, self.sorted_idx, self.sorted_y,
                           weight, start, end, feature, self.n_classes)

    def _absolute_error_stats(self, start, end, feature):
        """[w, sum w*y, absolute error, median] of every node, one block per output."""
        if self.multi_output is None:
            return node_target_ranks(self.sorted_idx, self.sorted_y, self.sample_weight, start,
                                     end, feature, self._rank_of_row[0], self._node_sorted_y[0])
        # several outputs: the nodes' rows in one row of positions, then each output's targets
        sizes = end - start
        within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        pos = np.repeat(start, sizes) + within
        rows = np.zeros((1, self.n_samples), dtype=self.sorted_idx.dtype)
        rows[0, pos] = self.sorted_idx[np.repeat(feature, sizes), pos]
        return absolute_error_stats(rows, self.multi_output[0], self.sample_weight, start, end,
                                    self._rank_of_row, self._node_sorted_y)

    def non_constant(self, start, end):
        """(n_features, n_nodes) mask of the features not constant in each node."""
        first, last = self.sorted_x[:, start], self.sorted_x[:, end - 1]
        # scikit-learn's rule: constant when the values span at most FEATURE_THRESHOLD (float32);
        # a feature with missing values (NaN last) is not constant
        return ~(last <= first + FEATURE_THRESHOLD)

    def find_splits(self, start, end, stats, mask, bounds=None, draws=None):
        """Best split of every unmasked (feature, node) pair, as a SplitRecord; ``bounds``
        (n_nodes, 2): each node's value range, needed with monotonicity constraints; ``draws``
        (uniform, coin), (n_features, n_nodes) each: the random thresholds' positions and
        missing sides (:func:`~fasttree.kernels.draws.node_draws`), needed when they are
        random."""
        record = new_split_record(self.n_features, start.shape[0])
        uniform, coin = checked_draws(draws, self.random_thresholds, self.n_features,
                                      start.shape[0])
        numeric_mask = mask * ~self.is_categorical[:, None] if self._any_categorical else mask
        constraints = self.monotonic_cst, _node_bounds(self.monotonic_cst, bounds)
        if self.criterion_code == CRITERION_ABSOLUTE_ERROR:  # one output or several
            self._timed("search", find_splits_absolute_error, self.sorted_x, self.sorted_idx,
                        self.sample_weight, start, end, stats, numeric_mask, self._rank_of_row,
                        self._node_sorted_y, self.min_samples_leaf, self.min_weight_leaf,
                        uniform, coin, *constraints, record)
        elif self.multi_output is not None:
            Y, offsets = self.multi_output
            self._timed("search", find_splits_multioutput, self.sorted_x, self.sorted_idx, Y,
                        self.sample_weight, start, end, stats, numeric_mask, offsets,
                        self.criterion_code, self.min_samples_leaf, self.min_weight_leaf,
                        uniform, coin, record)
        elif self.random_thresholds:
            kernel = (find_random_splits_regression if self.n_classes is None
                      else find_random_splits_classification)
            self._timed("search", kernel, self.sorted_x, self.sorted_idx, self.sorted_y,
                        self.sample_weight, start, end, stats, numeric_mask, uniform, coin,
                        self.criterion_code, self.min_samples_leaf, self.min_weight_leaf,
                        *constraints, record)
        elif self.n_classes is None:
            self._timed("search", find_best_splits_regression, self.sorted_x, self.sorted_idx,
                        self.sorted_y, self.sample_weight, start, end, stats, numeric_mask,
                        self.criterion_code, self.min_samples_leaf, self.min_weight_leaf,
                        self._count_table, self.missing_fractional, *constraints, record)
        elif self._counts is not None:
            self._timed("search", find_best_splits_classification, self.sorted_x,
                        self.sorted_idx, self.sorted_y, self._counts, start, end, stats,
                        numeric_mask, self.criterion_code, self.min_samples_leaf,
                        self.min_weight_leaf, self._counts_table, self.min_branch_fraction,
                        False, *constraints, record)
        else:
            self._timed("search", find_best_splits_classification, self.sorted_x,
                        self.sorted_idx, self.sorted_y, self.sample_weight, start, end, stats,
                        numeric_mask, self.criterion_code, self.min_samples_leaf,
                        self.min_weight_leaf, self._count_table, self.min_branch_fraction,
                        self.missing_fractional, *constraints, record)
        if self._any_categorical:
            self._timed("search", find_best_splits_categorical, self.sorted_x, self.sorted_idx,
                        self.sorted_y, self.sample_weight, start, end, stats,
                        mask * self.is_categorical[:, None], self.n_categories,
                        self.criterion_code, self.categorical_kind, self.min_samples_leaf,
                        self.min_weight_leaf, self.missing_fractional, record)
        return record

    def describe_categorical(self, start, end, stats, feature, kind, cut, missing_branch,
                             subset_class):
        """Category maps of chosen categorical splits; returns their offsets and lengths into
        :attr:`category_map`."""
        n_codes = self.n_categories[feature] + 1  # one more slot: a category never seen
        maps = self._timed(
            "search", categorical_split_maps, self.sorted_x, self.sorted_idx, self.sorted_y,
            self.sample_weight, start, end, stats, feature, n_codes, kind, cut, missing_branch,
            subset_class, self.criterion_code)
        return self._category_maps.add(maps, n_codes), n_codes

    @property
    def category_map(self):
        """The category -> branch maps of every categorical split so far, one after another."""
        return self._category_maps.array

    def is_prefix(self, kind, n_missing, missing_branch):
        """Splits whose left child is a prefix of the split feature's row: numeric thresholds
        with no missing rows, or with missing rows going right (and not fractional)."""
        if not self._any_missing:
            return kind == SPLIT_THRESHOLD
        return (kind == SPLIT_THRESHOLD) & (
            (n_missing == 0) | ((missing_branch == 1) & (not self.missing_fractional)))

    def split(self, start, end, feature, kind, threshold, missing_branch, n_branches, n_left,
              n_missing, category_offset, category_n_codes):
        """Rows per branch of every split node; routes and moves the rows of non-prefix splits.

        Prefix splits are not moved here (see :meth:`partition_prefix`).  Returns the split
        nodes' ranges (shifted if fractional rows grew the layout) and the rows of each branch,
        nodes in order, branches in order.
        """
        prefix = self.is_prefix(kind, n_missing, missing_branch)
        if prefix.all():  # two branches each, nothing to route: the usual numeric level
            branch_rows = np.empty(2 * start.shape[0], dtype=np.int64)
            branch_rows[0::2] = n_left
            branch_rows[1::2] = end - start - n_left
            return start, end, branch_rows
        branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
        branch_rows = np.zeros(branch_offset[-1], dtype=np.int64)
        first = branch_offset[:-1][prefix]
        branch_rows[first] = n_left[prefix]
        branch_rows[first + 1] = (end - start - n_left)[prefix]
        routed = np.flatnonzero(~prefix)
        if routed.size == 0:
            return start, end, branch_rows
        r_start, r_end = start[routed], end[routed]
        r_branches = n_branches[routed]
        r_offset = np.concatenate([[0], np.cumsum(r_branches)]).astype(np.int64)
        r_missing_branch = missing_branch[routed]
        if self.missing_fractional:  # every branch
            r_missing_branch = np.where(n_missing[routed] > 0, -1, r_missing_branch)
        counts, weights, all_branches = self._timed(
            "partition", route_rows, self.sorted_x, self.sorted_idx, self.sample_weight,
            r_start, r_end, feature[routed], kind[routed],
            np.ascontiguousarray(threshold[routed]), r_missing_branch, category_offset[routed],
            category_n_codes[routed], self.category_map, r_offset, self._row_branch)
        if all_branches.any():
            copy_base = self._allocate_copies(feature[routed], r_end, r_branches, r_offset,
                                              weights, all_branches)
            new_x, new_idx, new_y, _ = self._timed(
                "partition", partition_segments_fractional, self.sorted_x, self.sorted_idx,
                self.sorted_y, r_start, r_end, r_offset, counts, all_branches,
                self._row_branch, copy_base)
            self.sorted_x, self.sorted_idx, self.sorted_y = new_x, new_idx, new_y
            # every split node moves by the growth of the routed nodes before it
            growth = (r_branches - 1) * all_branches
            before = np.concatenate([[0], np.cumsum(growth)])
            shift = before[np.searchsorted(r_start, start, side="left")]
            own = np.zeros(start.size, dtype=np.int64)
            own[routed] = growth
            start, end = start + shift, end + shift + own
            counts = counts + np.repeat(all_branches, r_branches)
        else:
            self._timed("partition", _partition_kway, self.sorted_x, self.sorted_idx,
                        self.sorted_y, r_start, r_end, r_offset, counts, self._row_branch,
                        self._move_scratch)
        for j, node in enumerate(routed):
            branch_rows[branch_offset[node]:branch_offset[node + 1]] = \
                counts[r_offset[j]:r_offset[j + 1]]
        return start, end, branch_rows

    def partition_prefix(self, start, end, feature, n_left):
        """Move the rows of prefix splits: the left child's rows first, in every feature row."""
        # ids, not positions: C4.5's copies of rows get new ids (_allocate_copies)
        self._timed("partition", _partition_prefix, self.sorted_x, self.sorted_idx,
                    self.sorted_y, start, end, feature, n_left, self._row_branch.shape[0], False,
                    self._move_scratch)
        if self._id_span > CACHED_ID_SPAN:
            largest_child = int(np.max(np.maximum(n_left, end - start - n_left), initial=0))
            if largest_child <= CACHED_ID_SPAN:
                self._timed("partition", self._relabel_rows)
                self._id_span = largest_child

    def _relabel_rows(self):
        """Give every node the ids of its own segment (:func:`~fasttree.kernels.relabel_rows`),
        and every table indexed by row id the new ids."""
        if self.missing_fractional or self._row_branch.shape[0] != self.n_samples:
            return  # copies of rows have ids of their own beyond the layout's positions
        new_id = relabel_rows(self.sorted_idx, self.n_samples)
        if self.sample_weight.shape[0]:
            self.sample_weight = _renumbered(self.sample_weight, new_id)
        if self._counts is not None:
            self._counts = _renumbered(self._counts, new_id)
        if self.multi_output is not None:
            self.multi_output = (_renumbered(self.multi_output[0], new_id), self.multi_output[1])
        if self.criterion_code == CRITERION_ABSOLUTE_ERROR:
            self._rank_of_row = _renumbered(self._rank_of_row.T, new_id).T

    def _allocate_copies(self, feature, seg_end, n_branches, branch_offset, branch_weight,
                         all_branches):
        """New row ids (and weights) for the copies of the rows sent down every branch.

        A row of weight ``w`` missing the split feature becomes one copy per branch ``b`` of
        weight ``w * W_b / W``, ``W_b`` the branch's known weight (C4.5).  Returns ``copy_base``:
        the id of each such row's copy in branch 0 (the others follow).
        """
        n_ids = self.sample_weight.shape[0]
        n_new = int(np.sum(n_branches * all_branches))
        copy_base = np.zeros(n_ids, dtype=np.int64)
        new_weight = np.empty(n_new)
        next_id = 0
        for j in np.flatnonzero(all_branches):
            # the missing rows are the tail of the split feature's row of the segment
            ids = self.sorted_idx[feature[j], seg_end[j] - all_branches[j]:seg_end[j]]
            k = n_branches[j]
            w_branch = branch_weight[branch_offset[j]:branch_offset[j + 1]]
            share = w_branch / w_branch.sum() if w_branch.sum() > 0 else np.full(k, 1.0 / k)
            base = next_id + k * np.arange(ids.size)
            copy_base[ids] = n_ids + base
            new_weight[(base[:, None] + np.arange(k)).ravel()] = (
                self.sample_weight[ids][:, None] * share[None, :]).ravel()
            next_id += k * ids.size
        self.sample_weight = np.concatenate([self.sample_weight, new_weight])
        self._row_branch = np.concatenate([self._row_branch, np.zeros(n_new, np.int32)])
        return copy_base
