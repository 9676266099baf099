"""The binned splitter (``splitter="hist"``): histograms of bin codes instead of sorted values.

Every column is binned once (:func:`bin_features`) to uint8 codes, features as rows, by row id;
the nodes are ranges of one row order that the splits partition (:mod:`fasttree.kernels.
histogram`).  A node's split search
reads its histograms: per feature and bin, the statistics of the node's rows.  Of two sibling
nodes only the smaller one's histograms are built; the larger one's are its parent's minus the
smaller's.  Thresholds are stored in the original units, so the ``tree_`` arrays, prediction,
pruning and export are those of the exact splitter.

The splitter implements the phases of :class:`fasttree.splitter.ExactSplitter` for the grower.
"""

import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numba

import numpy as np

from ._dtypes import SPLIT_THRESHOLD, label_dtype
from .kernels import new_split_record
from .kernels.histogram import (
    HIST_BINS,
    MISSING_BIN,
    bin_bounds,
    bin_codes,
    build_histograms,
    combine_histograms,
    find_best_splits_hist,
    bin_branches,
    find_best_splits_hist_categorical,
    hist_category_maps,
    partition_hist_segments,
    routed_child_stats,
    segment_code_range,
    sample_columns,
)
from .kernels.node_stats import run_segment_class_weights, run_segment_target_sums
from .splitter import CategoryMaps, weight_tables
from .splitter_contract import one_tree

#: Rows sampled to choose the bins of a column (LightGBM samples as many).
BIN_SAMPLE_ROWS = 200_000
#: Histograms kept for the subtraction trick, at most (bytes).
HIST_CACHE_BYTES = 256 * 2**20
#: Histograms built at once, at most (bytes): a level's nodes are searched in groups.
HIST_GROUP_BYTES = 64 * 2**20


def bin_features(X, max_bins, *, upper=None, n_threads=1, seed=0):
    """Bin every column of ``X``.

    Bins come from :data:`BIN_SAMPLE_ROWS` sampled rows (all rows if fewer), or from ``upper``
    bounds given per column (e.g. cut points of :class:`fasttree.preprocessing.
    EntropyDiscretizer`, through :func:`bounds_from_cut_points`).  A column binned one
    value per bin whose full data hold a value the sample missed is binned again from all its
    rows, so that a column with at most ``max_bins`` distinct values always has one bin per value
    (the exactness guarantee of the binned splitter).

    Returns
    -------
    codes, (bin_min, bin_max, n_bins, one_value), has_missing
        See :func:`~fasttree.kernels.histogram.bin_bounds` and
        :func:`~fasttree.kernels.histogram.bin_codes`.
    """
    if upper is None:
        upper = _sample_bounds(X, max_bins, n_threads, seed)
    upper, bin_min, bin_max, n_bins, one_value = upper
    codes, mixed, has_missing = bin_codes(X, upper, bin_min, one_value)
    mixed = np.flatnonzero(mixed)
    if mixed.size:  # the sample missed a value of a column with few values: use every row
        column = np.ascontiguousarray(X[:, mixed])
        bounds = _sample_bounds(column, max_bins, n_threads, every_row=True)
        c, _, _ = bin_codes(column, bounds[0], bounds[1], bounds[4])
        codes[mixed] = c
        for full, part in zip((upper, bin_min, bin_max, n_bins, one_value), bounds):
            full[mixed] = part
    return codes, (bin_min, bin_max, n_bins, one_value), has_missing


def _sort_rows(columns, n_threads):
    """Sort each row of ``columns`` in place (NaN last): numpy's vectorized sort, the rows
    shared among threads."""
    parts = [p for p in np.array_split(np.arange(columns.shape[0]),
                                       max(min(n_threads, columns.shape[0]), 1)) if p.size]
    if len(parts) == 1:
        columns.sort(axis=1)
        return columns

    def sort_part(rows):
        columns[rows[0]:rows[-1] + 1].sort(axis=1)

    with ThreadPoolExecutor(len(parts)) as pool:
        list(pool.map(sort_part, parts))
    return columns


def bounds_from_cut_points(cut_points, max_bins):
    """The bins of :func:`bin_features` from increasing cut points per column (a value ``v``
    falls in bin ``b`` when ``cut[b - 1] < v <= cut[b]``); at most ``max_bins - 1`` cuts each."""
    n_features = len(cut_points)
    upper = np.full((n_features, MISSING_BIN), np.inf, dtype=np.float32)
    bin_min = np.full((n_features, HIST_BINS), -np.inf, dtype=np.float32)
    bin_max = np.full((n_features, HIST_BINS), np.inf, dtype=np.float32)
    n_bins = np.ones(n_features, dtype=np.int64)
    for f, cuts in enumerate(cut_points):
        if cuts is None:  # a column left out (categorical): one bin until its bins are set
            continue
        cuts = np.unique(np.asarray(cuts, dtype=np.float32))
        if cuts.size > max_bins - 1:
            raise ValueError(f"column {f} has {cuts.size} cut points; at most {max_bins - 1} "
                             f"make {max_bins} bins")
        k = cuts.size
        upper[f, :k] = cuts
        bin_max[f, :k] = cuts  # a bin's values lie in (cut[b - 1], cut[b]]
        bin_min[f, 1:k + 1] = cuts
        n_bins[f] = k + 1
    return upper, bin_min, bin_max, n_bins, np.zeros(n_features, dtype=bool)


class HistSplitter:
    """Binned layout: codes by row id; nodes are position ranges of one row order.

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_samples), uint8
    bins : tuple (bin_min, bin_max, n_bins, one_value)
    has_missing : ndarray of shape (n_features,), bool
        From :func:`bin_features`.
    y : ndarray of shape (n_samples,)
        Encoded classes (int) or float64 targets (``n_classes`` None).
    sample_weight : ndarray of shape (n_samples,) or None
    n_classes : int or None
    n_categories : ndarray of shape (n_features,), int64
        Categories of each categorical feature (at most 255; its bins are its codes), 0 for
        numeric ones.
    criterion_code : int
        Gini, entropy or squared error.
    min_samples_leaf : int
    min_weight_leaf : float
    categorical_kind : int
        ``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY``.
    level_wise : bool, default=True
        Every :meth:`split` call splits a whole level (the nodes searched before and not split
        are leaves: their histograms are dropped); False for best-first growth, where they are
        kept, within :data:`HIST_CACHE_BYTES`.
    timings : dict, optional

    Attributes
    ----------
    missing_features : ndarray of shape (n_features,), bool
    timings : dict of str to float
        Seconds per phase: ``binning`` (when built by :meth:`from_data`), ``histograms``,
        ``search``, ``partition``, ``node_stats``.
    """

    capabilities = frozenset({"categorical", "gain_ratio"})
    one_output_only = frozenset()
    choice = "splitter='hist'"
    remedy = "use splitter='best'"

    def __init__(self, codes, bins, has_missing, y, sample_weight, *, n_classes, n_categories,
                 criterion_code, min_samples_leaf, min_weight_leaf, categorical_kind,
                 level_wise=True, timings=None):
        self.codes = codes
        self.bin_min, self.bin_max, self.n_bins, self.one_value = bins
        self.n_features, self.n_samples = codes.shape
        self.n_classes = n_classes
        self.n_categories = np.asarray(n_categories, dtype=np.int64)
        self.is_categorical = self.n_categories > 0
        self.criterion_code = criterion_code
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.categorical_kind = categorical_kind
        self.level_wise = level_wise
        # the largest value of each bin and of those before it (+inf past the last bin)
        self._bin_top = np.maximum.accumulate(
            np.where(np.arange(HIST_BINS) < self.n_bins[:, None], self.bin_max, np.inf), axis=1)
        self.timings = {} if timings is None else timings
        self.regression = n_classes is None
        # a copy, always: the partition moves the targets in place
        self.labels = np.array(y, dtype=np.float64 if self.regression
                               else label_dtype(n_classes)).reshape(1, -1)
        self.rows = np.arange(self.n_samples, dtype=np.int32).reshape(1, -1)
        self.sample_weight, root_weight, self._table = weight_tables(
            sample_weight, self.n_samples, n_classes, criterion_code)
        self.tree_offsets, self.tree_weights = one_tree(self.n_samples, root_weight)
        self._unit_weight = self.sample_weight.shape[0] == 0
        self.n_stats = 3 if self.regression else n_classes
        self.n_channels = self.n_stats + (0 if self._unit_weight else 1)
        self.missing_features = has_missing
        # where the partition scatters rows
        self._buffers = (np.empty_like(self.rows), np.empty_like(self.labels))
        # (start, end) -> histograms of a searched node, as (its group's array, its index):
        # group[index]
        self._cache = OrderedDict()
        self._cache_bytes = 0
        self._pending = {}  # (start, end) of a child -> ((group, index) of parent, sibling range)
        self._category_maps = CategoryMaps()
        # the last split() call's two-branch nodes, not moved yet (routing arrays and rows of
        # the left child); moved when one of their children is searched
        self._unmoved = None
        self._child_stats = None  # their children's class weights, from the parents' histograms

    @classmethod
    def from_data(cls, X, y, sample_weight, *, max_bins, upper=None, n_categories=None,
                  **kwargs):
        """Bin a validated float32 ``X`` (C-contiguous) and build the splitter; a categorical
        column's bins are its category codes."""
        t0 = time.perf_counter()
        n_categories = (np.zeros(X.shape[1], np.int64) if n_categories is None
                        else np.asarray(n_categories, dtype=np.int64))
        if n_categories.any():
            if upper is None:
                upper = _sample_bounds(X, max_bins, numba.get_num_threads())
            upper = _with_category_bins(upper, n_categories)
        codes, bins, has_missing = bin_features(X, max_bins, upper=upper,
                                                n_threads=numba.get_num_threads())
        timings = {"binning": time.perf_counter() - t0}
        return cls(codes, bins, has_missing, y, sample_weight, n_categories=n_categories,
                   timings=timings, **kwargs)

    def _timed(self, phase, func, *args):
        t0 = time.perf_counter()
        result = func(*args)
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0
        return result

    # -- phases ------------------------------------------------------------------------------
    def node_stats(self, start, end, feature):
        """Statistics of the nodes ``[start, end)`` (``feature`` is unused: every feature shares
        the row order).  The children of the last :meth:`split`, not moved yet, are read
        through the routing."""
        if self._unmoved is not None and self._are_children(start):
            if self._child_stats is not None:
                return self._child_stats
            return self._timed("node_stats", routed_child_stats, self.codes, self.rows,
                               self.labels, self.sample_weight, *self._unmoved[:-1],
                               self.category_map, self.n_stats, self.criterion_code)
        row = np.zeros_like(start)
        if self.regression:
            return self._timed("node_stats", run_segment_target_sums, self.rows, self.labels,
                               self.sample_weight, start, end, row, self.criterion_code)
        return self._timed("node_stats", run_segment_class_weights, self.rows, self.labels,
                           self.sample_weight, start, end, row, self.n_classes)

    def _are_children(self, start):
        """Whether ``start`` are the children of the last split, left and right of each."""
        s, n_left = self._unmoved[0], self._unmoved[-1]
        return start.shape[0] == 2 * s.shape[0] and np.array_equal(
            start, np.column_stack([s, s + n_left]).ravel())

    def _move(self, start):
        """Move the rows of the last split's nodes one of whose children is among ``start``."""
        if self._unmoved is None:
            return
        s, e, f, cut, missing_branch, map_offset, n_left = self._unmoved
        self._unmoved = None
        wanted = _among(s, start) | _among(s + n_left, start)
        if wanted.any():
            take = lambda a: np.ascontiguousarray(a[wanted])  # noqa: E731
            rows = self._partition(take(s), take(e), take(f), take(cut), take(missing_branch),
                                   take(map_offset), np.full(int(wanted.sum()), 2))
            if not np.array_equal(rows[0::2], n_left[wanted]):
                raise RuntimeError("binned splitter: rows routed differ from the split record")

    def _partition(self, start, end, feature, cut, missing_branch, map_offset, n_branches):
        branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
        return self._timed("partition", partition_hist_segments, self.codes, self.rows,
                           self.labels, start, end, feature, cut, missing_branch, map_offset,
                           self.category_map, branch_offset, *self._buffers)

    def non_constant(self, start, end):
        """(n_features, n_nodes) mask of the features not constant in each node."""
        self._move(start)
        return self._timed("search", segment_code_range, self.codes, self.rows, self.bin_min,
                           self.bin_max, self.one_value, start, end)

    def find_splits(self, start, end, stats, mask, bounds=None, draws=None):
        """Best split of every unmasked (feature, node) pair, from the nodes' histograms, built
        for groups of nodes of at most :data:`HIST_GROUP_BYTES`."""
        if bounds is not None:
            raise ValueError("the binned splitter does not take monotonicity constraints")
        if draws is not None:
            raise ValueError("the binned splitter has no random thresholds")
        self._move(start)
        record = new_split_record(self.n_features, start.shape[0])
        node_bytes = self.n_features * HIST_BINS * self.n_channels * 8
        size = max(HIST_GROUP_BYTES // node_bytes, 2)
        for first in range(0, start.shape[0], size):
            cols = slice(first, first + size)
            group = new_split_record(self.n_features, min(size, start.shape[0] - first))
            self._search_group(start[cols], end[cols], np.ascontiguousarray(stats[cols]),
                               np.ascontiguousarray(mask[:, cols]), group)
            for field, whole in zip(group, record):
                whole[:, cols] = field
        self._pending = {}  # the children of the last split() are searched once, together
        return record

    def _search_group(self, start, end, stats, mask, record):
        hist = self._histograms(start, end)
        self._timed("search", find_best_splits_hist, hist, self.bin_min, self.bin_max,
                    self.n_bins, self.one_value, stats, end - start,
                    mask * ~self.is_categorical[:, None], self.criterion_code,
                    self._unit_weight, self.min_samples_leaf, self.min_weight_leaf, self._table,
                    record)
        if self.is_categorical.any():
            self._timed("search", find_best_splits_hist_categorical, hist, self.n_categories,
                        stats, end - start, mask * self.is_categorical[:, None],
                        self.criterion_code, self.categorical_kind, self._unit_weight,
                        self.min_samples_leaf, self.min_weight_leaf, record)
        for j in range(start.shape[0]):  # the group's array lives while one node is kept
            self._remember((int(start[j]), int(end[j])), hist, j)

    def _histograms(self, start, end):
        """Histograms of the nodes: the smaller of two siblings built from its rows, the larger
        one its parent's minus the smaller's; nodes without a known parent built directly."""
        keys = list(zip(start.tolist(), end.tolist()))
        build = []  # per node, the range whose histograms are built from its rows
        parents = []  # per node, (group, index) of its parent's histograms, or None
        for key in keys:
            parent, sibling = self._pending.pop(key, (None, None))
            if parent is not None and (key[1] - key[0], key[0]) > (sibling[1] - sibling[0],
                                                                   sibling[0]):
                build.append(sibling)  # the larger sibling: parent minus the smaller one
                parents.append(parent)
            else:
                build.append(key)
                parents.append(None)
        unique = list(dict.fromkeys(build))
        index = {key: i for i, key in enumerate(unique)}
        built = self._timed(
            "histograms", build_histograms, self.codes, self.rows, self.labels,
            self.sample_weight, np.array([k[0] for k in unique], dtype=np.int64),
            np.array([k[1] for k in unique], dtype=np.int64), self.n_channels,
            self.criterion_code)
        hist = np.empty((len(keys),) + built.shape[1:])
        built_index = np.array([index[key] for key in build], dtype=np.int64)
        # one call per array holding parents (one, unless a level was searched in groups); the
        # first also copies the nodes built directly
        groups = {id(p[0]): p[0] for p in parents if p is not None} or {None: built}
        for n, (group_id, group) in enumerate(groups.items()):
            parent_index = np.array(
                [-1 if p is None and n == 0 else -2 if p is None or id(p[0]) != group_id
                 else p[1] for p in parents], dtype=np.int64)
            self._timed("histograms", combine_histograms, built.reshape(built.shape[0], -1),
                        built_index, group.reshape(group.shape[0], -1), parent_index,
                        not self.regression, hist.reshape(len(keys), -1))
        return hist

    def _remember(self, key, group, index):
        """Keep a searched node's histograms (``group[index]``) until its children are searched
        (bounded)."""
        self._cache[key] = (group, index)
        self._cache_bytes += group[index].nbytes
        while self._cache_bytes > HIST_CACHE_BYTES and self._cache:
            _, (old, _) = self._cache.popitem(last=False)
            self._cache_bytes -= old[0].nbytes

    def describe_categorical(self, start, end, stats, feature, kind, cut, missing_branch,
                             subset_class):
        """Category maps of chosen categorical splits (from the split feature's histogram of
        each node); returns their offsets and lengths into :attr:`category_map`."""
        n_codes = self.n_categories[feature] + 1  # one more slot: a category never seen
        keys = list(zip(start.tolist(), end.tolist()))
        missing = [j for j, key in enumerate(keys) if key not in self._cache]
        hist = np.empty((len(keys), HIST_BINS, self.n_channels))
        if missing:  # evicted: built again from the rows (the nodes have been moved)
            rebuilt = self._timed("histograms", build_histograms, self.codes, self.rows,
                                  self.labels, self.sample_weight, start[missing], end[missing],
                                  self.n_channels, self.criterion_code)
            for i, j in enumerate(missing):
                hist[j] = rebuilt[i, feature[j]]
        for j, key in enumerate(keys):
            if key in self._cache:
                group, i = self._cache[key]
                hist[j] = group[i, feature[j]]
        maps = self._timed("search", hist_category_maps, hist, n_codes, kind, cut,
                           missing_branch, subset_class, self.criterion_code,
                           self._unit_weight)
        return self._category_maps.add(maps, n_codes), n_codes

    @property
    def category_map(self):
        """The category -> branch maps of every categorical split so far, one after another."""
        return self._category_maps.array

    def is_prefix(self, kind, n_missing, missing_branch):
        """No split is a prefix of a sorted row here: :meth:`split` handles every split node."""
        return np.zeros(kind.shape[0], dtype=bool)

    def split(self, start, end, feature, kind, threshold, missing_branch, n_branches, n_left,
              n_missing, category_offset, category_n_codes):
        """Record the splits and return the nodes' ranges and the rows of each branch.

        Two-branch splits (thresholds, category subsets) move their rows only when a child is
        searched (see :meth:`_move`; their children's statistics are read through the
        routing); a batch with a multiway split is moved at once.
        """
        self._move(np.zeros(0, dtype=np.int64))  # an earlier split's nodes stay where they are
        self._pending = {}
        numeric = kind == SPLIT_THRESHOLD
        # the last bin whose values are all <= threshold (bins between the two sides of the
        # chosen candidate are empty in the node, so any of them routes the same rows)
        cut = np.where(numeric, (self._bin_top[feature] <= threshold[:, None]).sum(axis=1) - 1,
                       0).astype(np.int64)
        map_offset = np.where(numeric, -1, category_offset).astype(np.int64)
        missing_branch = missing_branch.astype(np.int64)
        feature = np.ascontiguousarray(feature, dtype=np.int64)
        parents = []
        for s, e in zip(start.tolist(), end.tolist()):
            parent = self._cache.pop((s, e), None)
            parents.append(parent)
            if parent is not None:
                self._cache_bytes -= parent[0][0].nbytes
        if self.level_wise:  # the other searched nodes of the level are leaves now
            self._cache.clear()
            self._cache_bytes = 0
        if np.any(n_branches != 2):
            branch_rows = self._partition(start, end, feature, cut, missing_branch, map_offset,
                                          n_branches)
            offsets = np.concatenate([[0], np.cumsum(n_branches)])
            if not np.array_equal(branch_rows[offsets[:-1]], n_left):
                raise RuntimeError("binned splitter: rows routed differ from the split record")
            self._register_siblings(start, end, n_branches, branch_rows, offsets, parents)
            return start, end, branch_rows
        self._unmoved = (start, end, feature, cut, missing_branch, map_offset, n_left)
        branch_rows = np.column_stack([n_left, end - start - n_left]).ravel()
        self._register_siblings(start, end, n_branches, branch_rows,
                                np.arange(0, 2 * start.size + 1, 2), parents)
        self._child_stats = None
        if self._unit_weight and not self.regression and all(p is not None for p in parents):
            # counts are exact integers, whatever the order of the sums (weights are not)
            self._child_stats = self._timed(
                "node_stats", _children_class_weights, parents, feature,
                bin_branches(cut, missing_branch, map_offset,
                             np.asarray(category_n_codes, dtype=np.int64), self.category_map),
                self.n_classes)
        return start, end, branch_rows

    def _register_siblings(self, start, end, n_branches, branch_rows, offsets, parents):
        """Two children of a node whose histograms are known: the larger one's histograms will
        be the parent's minus the smaller one's."""
        for j, parent in enumerate(parents):
            if parent is None or n_branches[j] != 2:
                continue
            s, e = int(start[j]), int(end[j])
            mid = s + int(branch_rows[offsets[j]])
            self._pending[(s, mid)] = (parent, (mid, e))
            self._pending[(mid, e)] = (parent, (s, mid))

    def partition_prefix(self, start, end, feature, n_left):
        """Never called (:meth:`is_prefix` is always False)."""
        raise RuntimeError("the binned splitter moves rows in split()")


def _children_class_weights(parents, feature, bin_branch, n_classes):
    """Class weights of both children of two-branch splits from the parents' histograms
    (``(group, index)`` each: ``group[index]``) of their split features, each bin to its branch
    (``bin_branch``, (n_nodes, HIST_BINS)): (2 * n_nodes, n_classes), left then right of each
    node."""
    hist = np.stack([group[i, f, :, :n_classes]
                     for (group, i), f in zip(parents, feature.tolist())])
    stats = np.empty((2 * len(parents), n_classes))
    stats[0::2] = np.einsum("kbc,kb->kc", hist, (bin_branch == 0).astype(np.float64))
    stats[1::2] = np.einsum("kbc,kb->kc", hist, (bin_branch == 1).astype(np.float64))
    return stats


def _sample_bounds(X, max_bins, n_threads, seed=0, every_row=False):
    """:func:`~fasttree.kernels.histogram.bin_bounds` from a sample of the rows of ``X`` (from
    all of them with ``every_row``)."""
    n = X.shape[0]
    rows = np.arange(n, dtype=np.int64)
    if n > BIN_SAMPLE_ROWS and not every_row:
        # one random row in each of BIN_SAMPLE_ROWS equal strata: drawn in order (no sort), and
        # every part of X is represented
        rng = np.random.default_rng(seed)
        first = np.arange(BIN_SAMPLE_ROWS, dtype=np.int64) * n // BIN_SAMPLE_ROWS
        width = np.diff(np.append(first, n))
        rows = first + (rng.random(BIN_SAMPLE_ROWS) * width).astype(np.int64)
    # a new array (never a view of X), sorted in place
    return bin_bounds(_sort_rows(sample_columns(X, rows), n_threads), max_bins)


def _with_category_bins(bounds, n_categories):
    """The bins of categorical columns set to their category codes (one bin per code)."""
    upper, bin_min, bin_max, n_bins, one_value = bounds
    for f in np.flatnonzero(n_categories):
        k = int(n_categories[f])
        if k > MISSING_BIN:
            raise ValueError(f"splitter='hist' takes categorical features of at most "
                             f"{MISSING_BIN} categories; feature {f} has {k}. Use "
                             "splitter='best'.")
        codes = np.arange(k, dtype=np.float32)
        upper[f] = np.inf
        upper[f, :k - 1] = codes[:-1]
        bin_min[f], bin_max[f] = np.inf, -np.inf
        bin_min[f, :k] = bin_max[f, :k] = codes
        n_bins[f], one_value[f] = k, True
    return upper, bin_min, bin_max, n_bins, one_value


def _among(values, sorted_values):
    """Which of ``values`` are in the increasing array ``sorted_values`` (``np.isin`` without
    its sort)."""
    if sorted_values.size == 0:
        return np.zeros(values.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, values), sorted_values.size - 1)
    return sorted_values[at] == values
