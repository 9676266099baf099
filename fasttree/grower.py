"""Grow a tree level by level (or best-first under ``max_leaf_nodes``) with the kernels.

The grower never loops over features or rows in Python: for a batch of nodes it calls the split
kernel once, reduces the per-(feature, node) results, and calls the partition kernel once.
Level-wise growth makes the batch a whole level; best-first growth (scikit-learn's rule when
``max_leaf_nodes`` is set) expands one node at a time, always the one with the largest impurity
improvement.
"""

import heapq
import time
from dataclasses import dataclass

import numpy as np

from ._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_SQUARED_ERROR,
    FEATURE_CATEGORICAL,
    SELECT_GAIN_RATIO,
    SELECT_IMPURITY,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    label_dtype,
)
from .kernels import (
    categorical_split_maps,
    find_best_splits_categorical,
    find_best_splits_classification,
    find_best_splits_regression,
    gather_targets,
    new_split_record,
    node_impurity,
    partition_segments,
    partition_segments_fractional,
    partition_segments_kway,
    presort_features,
    reciprocal_table,
    route_rows,
    segment_class_weights,
    segment_target_sums,
    select_best_splits,
    xlog2x_table,
)
from .tree import TREE_UNDEFINED, Tree

# scikit-learn's tolerance: a node whose impurity is at most this is pure, and a split must improve
# by at least min_impurity_decrease - EPSILON.
EPSILON = np.finfo(np.float64).eps

CLASSIFICATION_CRITERIA = {"gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
                           "log_loss": CRITERION_ENTROPY, "gain_ratio": CRITERION_ENTROPY}
REGRESSION_CRITERIA = ("squared_error",)
CATEGORICAL_SPLITS = {"binary": SPLIT_SUBSET, "multiway": SPLIT_MULTIWAY}
MISSING_MODES = ("learn", "fractional")


@dataclass(frozen=True)
class GrowerParams:
    """Validated, resolved stopping rules (see the estimators for their meaning)."""

    criterion: str
    max_depth: int  # a huge number stands for "no limit"
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    min_impurity_decrease: float
    max_leaf_nodes: int | None
    max_features: int  # number of features drawn per node; n_features means all
    categorical_split: str = "binary"
    missing: str = "learn"
    min_branch_fraction: float = 0.0  # C4.5's minimum branch weight for thresholds (0.1), or 0

    @property
    def criterion_code(self):
        if self.criterion in REGRESSION_CRITERIA:
            return CRITERION_SQUARED_ERROR
        return CLASSIFICATION_CRITERIA[self.criterion]

    @property
    def select_rule(self):
        return SELECT_GAIN_RATIO if self.criterion == "gain_ratio" else SELECT_IMPURITY


class _Batch:
    """Nodes created together: statistics first, then (for candidates) their best split."""

    __slots__ = ("ids", "start", "end", "depth", "stats", "weight", "impurity", "banned",
                 "feature", "kind", "threshold", "missing_branch", "n_branches", "n_left",
                 "n_missing", "subset_class", "category_offset", "category_n_codes",
                 "improvement", "splittable")


class TreeGrower:
    """Grow one tree from validated arrays.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous
        NaN marks a missing value; categorical features hold codes ``0 .. n_categories - 1``.
    y : ndarray of shape (n_samples,)
        int32 encoded classes (classification) or float64 target (regression).
    sample_weight : ndarray of shape (n_samples,), float64, or None
        None when every weight is 1: the kernels then count in integers and skip weight reads.
    params : GrowerParams
    n_classes : int or None
        None for regression.
    rng : numpy.random.Generator or None
        Draws the per-node feature subsets when ``params.max_features < n_features``.
    n_categories : ndarray of shape (n_features,), int64, or None
        Categories of each categorical feature, 0 for numeric ones; None: all numeric.

    Attributes
    ----------
    timings : dict of str to float
        Seconds spent in each phase of the last :meth:`grow` (``presort``, ``search``,
        ``partition``, ``node_stats``, ``total``).

    Notes
    -----
    Per batch of nodes the grower runs the splitter's phases: node statistics, split search
    (one kernel per kind of feature, all writing one :class:`~fasttree.kernels.SplitRecord`),
    selection, then moving rows to the children.  A numeric split whose left child is a prefix
    of the split feature's sorted row (no missing rows, or missing rows going right) takes the
    fast path: children's statistics read from that row, and only nodes with a child to search
    are partitioned.  Other splits are routed (a branch per row) and partitioned k-way.
    """

    def __init__(self, X, y, sample_weight, params, n_classes=None, rng=None, n_categories=None):
        self.X = X
        self.y = y
        # the kernels' convention for "every weight is 1" is an empty weight array
        self.sample_weight = np.empty(0) if sample_weight is None else sample_weight
        self.params = params
        self.n_classes = n_classes
        self.rng = rng
        self.n_samples, self.n_features = X.shape
        self.n_categories = (np.zeros(self.n_features, dtype=np.int64) if n_categories is None
                             else np.asarray(n_categories, dtype=np.int64))
        self.is_categorical = self.n_categories > 0
        self.timings = {}

    # -- phases ------------------------------------------------------------------------------
    def _timed(self, phase, func, *args):
        t0 = time.perf_counter()
        result = func(*args)
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0
        return result

    def _segment_stats(self, start, end, feature):
        if self.n_classes is None:
            return self._timed("node_stats", segment_target_sums, self._sorted_idx,
                               self._sorted_y, self.sample_weight, start, end, feature)
        return self._timed("node_stats", segment_class_weights, self._sorted_idx, self._sorted_y,
                           self.sample_weight, start, end, feature, self.n_classes)

    def _feature_mask(self, start, end, banned):
        n_features = self.n_features
        mask = np.ones((n_features, start.shape[0]), dtype=np.uint8)
        if banned is not None:
            mask[banned.T] = 0
        k = self.params.max_features
        if k >= n_features:
            return mask
        # Like scikit-learn: draw features in random order until k non-constant ones are found.
        non_constant = (self._sorted_x[:, start] != self._sorted_x[:, end - 1]) & (mask == 1)
        keys = self.rng.random((n_features, start.shape[0]))
        keys[~non_constant] = 2.0
        rank = np.argsort(np.argsort(keys, axis=0, kind="stable"), axis=0, kind="stable")
        mask[:] = (rank < k) & non_constant
        return mask

    def _candidates(self, batch):
        """Nodes that the stopping rules allow to split (scikit-learn's pre-search checks)."""
        p = self.params
        n = batch.end - batch.start
        return (
            (batch.depth < p.max_depth)
            & (n >= p.min_samples_split)
            & (n >= 2 * p.min_samples_leaf)
            & (batch.weight >= 2.0 * p.min_weight_leaf)
            & (batch.impurity > EPSILON)
        )

    def _search(self, batch, candidate):
        """Find the best split of the candidate nodes and decide which ones to split."""
        p = self.params
        size = batch.start.shape[0]
        batch.feature = np.full(size, -1, dtype=np.int64)
        batch.kind = np.zeros(size, dtype=np.int64)
        batch.threshold = np.zeros(size)
        batch.missing_branch = np.zeros(size, dtype=np.int64)
        batch.n_branches = np.zeros(size, dtype=np.int64)
        batch.n_left = np.zeros(size, dtype=np.int64)
        batch.n_missing = np.zeros(size, dtype=np.int64)
        batch.subset_class = np.full(size, -1, dtype=np.int64)
        batch.category_offset = np.full(size, -1, dtype=np.int64)
        batch.category_n_codes = np.zeros(size, dtype=np.int64)
        batch.improvement = np.zeros(size)
        cand = np.flatnonzero(candidate)
        if cand.size:
            start = np.ascontiguousarray(batch.start[cand])
            end = np.ascontiguousarray(batch.end[cand])
            stats = np.ascontiguousarray(batch.stats[cand])
            banned = None if batch.banned is None else batch.banned[cand]
            mask = self._feature_mask(start, end, banned)
            record = new_split_record(self.n_features, cand.size)
            numeric_mask = mask * ~self.is_categorical[:, None]
            if self.n_classes is None:
                self._timed("search", find_best_splits_regression, self._sorted_x,
                            self._sorted_idx, self._sorted_y, self.sample_weight, start, end,
                            stats, numeric_mask, p.min_samples_leaf, p.min_weight_leaf,
                            self._count_table, self._fractional, *record)
            else:
                self._timed("search", find_best_splits_classification, self._sorted_x,
                            self._sorted_idx, self._sorted_y, self.sample_weight, start, end,
                            stats, numeric_mask, p.criterion_code, p.min_samples_leaf,
                            p.min_weight_leaf, self._count_table, p.min_branch_fraction,
                            self._fractional, *record)
            if self.is_categorical.any():
                self._timed("search", find_best_splits_categorical, self._sorted_x,
                            self._sorted_idx, self._sorted_y, self.sample_weight, start, end,
                            stats, mask * self.is_categorical[:, None], self.n_categories,
                            p.criterion_code, CATEGORICAL_SPLITS[p.categorical_split],
                            p.min_samples_leaf, p.min_weight_leaf, self._fractional, *record)
            gain = record.gain
            if p.select_rule == SELECT_GAIN_RATIO:
                # C4.5 charges a numeric split log2(candidate thresholds) / node weight
                penalty = np.log2(np.maximum(record.n_candidates, 1)) / batch.weight[cand]
                gain = np.where(self.is_categorical[:, None], gain, gain - penalty)
            best = select_best_splits(record.children_impurity, gain, record.split_info,
                                      record.n_branches, p.select_rule)
            found = best >= 0
            cols = np.arange(cand.size)
            f = np.where(found, best, 0)
            pick = lambda field: getattr(record, field)[f, cols]  # noqa: E731
            batch.feature[cand] = np.where(found, best, -1)
            batch.kind[cand] = np.where(
                self.is_categorical[f], CATEGORICAL_SPLITS[p.categorical_split], SPLIT_THRESHOLD)
            batch.threshold[cand] = pick("threshold")
            batch.missing_branch[cand] = pick("missing_branch")
            batch.n_branches[cand] = pick("n_branches")
            batch.n_left[cand] = pick("n_left")
            batch.n_missing[cand] = pick("n_missing")
            batch.subset_class[cand] = pick("subset_class")
            w = batch.weight[cand]
            # scikit-learn's improvement: weighted impurity decrease relative to the root's weight
            batch.improvement[cand] = np.where(
                found, (w * batch.impurity[cand] - pick("children_impurity")) / self._root_weight,
                0.0)
            self._describe_categorical(batch, cand[found & self.is_categorical[f]])
        batch.splittable = (batch.feature >= 0) & (
            batch.improvement + EPSILON >= p.min_impurity_decrease)

    def _describe_categorical(self, batch, rows):
        """Category -> branch maps of the categorical splits chosen for ``rows`` of a batch."""
        if rows.size == 0:
            return
        feature = batch.feature[rows]
        n_codes = self.n_categories[feature] + 1  # one more slot: a category never seen
        offset = self._n_map + np.concatenate([[0], np.cumsum(n_codes)[:-1]])
        maps = self._timed(
            "search", categorical_split_maps, self._sorted_x, self._sorted_idx, self._sorted_y,
            self.sample_weight, np.ascontiguousarray(batch.start[rows]),
            np.ascontiguousarray(batch.end[rows]), np.ascontiguousarray(batch.stats[rows]),
            feature, n_codes, batch.kind[rows], np.ascontiguousarray(batch.threshold[rows]),
            batch.missing_branch[rows], batch.subset_class[rows], self.params.criterion_code)
        self._category_maps.append(maps)
        self._n_map += maps.shape[0]
        batch.category_offset[rows] = offset
        batch.category_n_codes[rows] = n_codes
        batch.threshold[rows] = float(TREE_UNDEFINED)

    def _new_batch(self, start, end, depth, stats_feature, banned):
        """Register new nodes and compute their statistics (not yet their splits)."""
        batch = _Batch()
        batch.ids = np.arange(self._n_nodes, self._n_nodes + start.shape[0])
        self._n_nodes += start.shape[0]
        batch.start, batch.end, batch.depth = start, end, depth
        batch.banned = banned
        batch.stats = self._segment_stats(start, end, stats_feature)
        batch.weight, batch.impurity = node_impurity(batch.stats, self.params.criterion_code)
        self._batches.append(batch)
        return batch

    def _split(self, batch, rows):
        """Split the given nodes of a batch: create, partition where needed, search children.

        Children of a node get consecutive ids, branch order, and consecutive segments::

            parent [start ........................................ end)
            child  [start, +rows of branch 0) [.., +rows of branch 1) ... [.., end)
        """
        start = np.ascontiguousarray(batch.start[rows])
        end = np.ascontiguousarray(batch.end[rows])
        feature = np.ascontiguousarray(batch.feature[rows])
        n_branches = batch.n_branches[rows]
        n_left = batch.n_left[rows]
        has_missing = batch.n_missing[rows] > 0
        # prefix splits: the split feature's row already holds the left rows first
        prefix = (batch.kind[rows] == SPLIT_THRESHOLD) & (
            ~has_missing | ((batch.missing_branch[rows] == 1) & (not self._fractional)))
        branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
        branch_rows = np.zeros(branch_offset[-1], dtype=np.int64)
        first = branch_offset[:-1][prefix]
        branch_rows[first] = n_left[prefix]
        branch_rows[first + 1] = (end - start - n_left)[prefix]
        routed = np.flatnonzero(~prefix)
        if routed.size:
            start, end = self._route_and_partition(batch, rows, routed, start, end, branch_offset,
                                                   branch_rows, has_missing)
        parent_of_child = np.repeat(np.arange(rows.size), n_branches)
        child_end = np.repeat(start, n_branches) + _segmented_cumsum(branch_rows, n_branches)
        child_start = child_end - branch_rows
        child_depth = batch.depth[rows][parent_of_child] + 1
        banned = self._child_bans(batch, rows, parent_of_child)
        # The split feature's row holds each child's rows (prefix splits: left first; routed
        # splits: already partitioned), so the children's statistics, and with them the stopping
        # rules, are known before partitioning prefix splits; a parent none of whose children
        # will be searched (pure, too small, at max_depth) is not partitioned at all.
        children = self._new_batch(child_start, child_end, child_depth,
                                   feature[parent_of_child], banned)
        candidate = self._candidates(children)
        has_candidate = np.zeros(rows.size, dtype=bool)
        np.logical_or.at(has_candidate, parent_of_child, candidate)
        needed = np.flatnonzero(prefix & has_candidate)
        if needed.size:
            self._timed("partition", partition_segments, self._sorted_x, self._sorted_idx,
                        self._sorted_y, start[needed], end[needed], feature[needed],
                        n_left[needed], self._goes_left)
        self._search(children, candidate)
        first_child = children.ids[branch_offset[:-1]]
        self._links.append((batch.ids[rows], first_child, n_branches))
        return children

    def _route_and_partition(self, batch, rows, routed, start, end, branch_offset, branch_rows,
                             has_missing):
        """Route the rows of the non-prefix splits and move them; returns the split nodes'
        segments (shifted when C4.5's fractional rows grow the layout) and fills
        ``branch_rows`` for the routed nodes."""
        sel = rows[routed]
        r_start, r_end = start[routed], end[routed]
        n_branches = batch.n_branches[sel]
        r_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
        missing_branch = batch.missing_branch[sel]
        if self._fractional:
            missing_branch = np.where(has_missing[routed], -1, missing_branch)  # every branch
        counts, weights, all_branches = self._timed(
            "partition", route_rows, self._sorted_x, self._sorted_idx, self.sample_weight,
            r_start, r_end, batch.feature[sel], batch.kind[sel],
            np.ascontiguousarray(batch.threshold[sel]), missing_branch,
            batch.category_offset[sel], batch.category_n_codes[sel], self._category_map(),
            r_offset, self._row_branch)
        if all_branches.any():
            copy_base = self._allocate_copies(batch.feature[sel], r_end, n_branches, r_offset,
                                              weights, all_branches)
            new_x, new_idx, new_y, _ = self._timed(
                "partition", partition_segments_fractional, self._sorted_x, self._sorted_idx,
                self._sorted_y, r_start, r_end, r_offset, counts, all_branches,
                self._row_branch, copy_base)
            self._sorted_x, self._sorted_idx, self._sorted_y = new_x, new_idx, new_y
            # every split node moves by the growth of the routed nodes before it
            growth = (n_branches - 1) * all_branches
            before = np.concatenate([[0], np.cumsum(growth)])
            shift = before[np.searchsorted(r_start, start, side="left")]
            own = np.zeros(start.size, dtype=np.int64)
            own[routed] = growth
            start, end = start + shift, end + shift + own
            counts = counts + np.repeat(all_branches, n_branches)
        else:
            self._timed("partition", partition_segments_kway, self._sorted_x, self._sorted_idx,
                        self._sorted_y, r_start, r_end, r_offset, counts, self._row_branch)
        for j, node in enumerate(routed):
            branch_rows[branch_offset[node]:branch_offset[node + 1]] = \
                counts[r_offset[j]:r_offset[j + 1]]
        return start, end

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
            ids = self._sorted_idx[feature[j], seg_end[j] - all_branches[j]:seg_end[j]]
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
        self._goes_left = np.concatenate([self._goes_left, np.zeros(n_new, np.uint8)])
        return copy_base

    def _child_bans(self, batch, rows, parent_of_child):
        """Features a child may not split on: a categorical feature below a multiway split on it
        (each child holds one category of it)."""
        multiway = batch.kind[rows] == SPLIT_MULTIWAY
        if batch.banned is None and not multiway.any():
            return None
        banned = (np.zeros((rows.size, self.n_features), dtype=bool) if batch.banned is None
                  else batch.banned[rows].copy())
        banned[np.flatnonzero(multiway), batch.feature[rows][multiway]] = True
        return banned[parent_of_child]

    def _category_map(self):
        if len(self._category_maps) > 1:
            self._category_maps = [np.concatenate(self._category_maps)]
        return self._category_maps[0] if self._category_maps else np.zeros(0, dtype=np.int32)

    # -- growth ------------------------------------------------------------------------------
    def grow(self):
        """Grow the tree and return it as a :class:`~fasttree.tree.Tree`."""
        self.timings = {}
        t_total = time.perf_counter()
        self._sorted_x, self._sorted_idx = self._timed("presort", presort_features, self.X)
        # targets travel with the rows: uint8/uint16 class labels, or float64 regression values
        targets = self.y if self.n_classes is None else self.y.astype(label_dtype(self.n_classes))
        self._sorted_y = self._timed("presort", gather_targets, self._sorted_idx, targets)
        self._fractional = self.params.missing == "fractional"
        if self._fractional and self.sample_weight.shape[0] == 0:
            # rows sent down several branches carry fractional weights: no unit-weight path
            self.sample_weight = np.ones(self.n_samples)
        self._goes_left = np.empty(self.n_samples, dtype=np.uint8)
        self._row_branch = np.empty(self.n_samples, dtype=np.int32)
        self._batches = []
        self._n_nodes = 0
        self._links = []  # (parent ids, first child ids, number of children) per split call
        self._category_maps = []
        self._n_map = 0
        unit_weight = self.sample_weight.shape[0] == 0
        self._root_weight = float(self.n_samples if unit_weight else self.sample_weight.sum())
        # unit weights make counts integers: entropy reads c log2 c, regression 1 / c from a table
        self._count_table = np.empty(0)
        if unit_weight and self.params.criterion_code == CRITERION_ENTROPY:
            self._count_table = xlog2x_table(self.n_samples)
        elif unit_weight and self.params.criterion_code == CRITERION_SQUARED_ERROR:
            self._count_table = reciprocal_table(self.n_samples)

        root = self._new_batch(np.array([0], dtype=np.int64),
                               np.array([self.n_samples], dtype=np.int64),
                               np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), None)
        self._search(root, self._candidates(root))
        if self.params.max_leaf_nodes is None:
            self._grow_level_wise(root)
        else:
            self._grow_best_first(root)
        tree = self._build_tree()
        self.timings["total"] = time.perf_counter() - t_total
        # release the working layout (several times the size of X) as soon as the tree exists
        del self._sorted_x, self._sorted_idx, self._sorted_y, self._goes_left, self._row_branch
        del self._batches, self._links, self._count_table, self._category_maps
        return tree

    def _grow_level_wise(self, batch):
        while True:
            rows = np.flatnonzero(batch.splittable)
            if rows.size == 0:
                return
            batch = self._split(batch, rows)

    def _grow_best_first(self, root):
        # Heap of (-improvement, node id, batch, row); node ids break ties deterministically.
        heap = []

        def push(batch):
            for row in np.flatnonzero(batch.splittable):
                heapq.heappush(heap, (-batch.improvement[row], int(batch.ids[row]), batch, row))

        push(root)
        n_leaves = 1
        while heap and n_leaves < self.params.max_leaf_nodes:
            _, _, batch, row = heapq.heappop(heap)
            children = self._split(batch, np.array([row]))
            push(children)
            n_leaves += children.ids.size - 1

    def _build_tree(self):
        node_count = self._n_nodes
        cat = lambda name: np.concatenate([getattr(b, name) for b in self._batches])  # noqa: E731
        left = np.full(node_count, TREE_LEAF, dtype=np.int64)
        right = np.full(node_count, TREE_LEAF, dtype=np.int64)
        for parents, first_child, n_children in self._links:
            left[parents] = first_child
            right[parents] = first_child + n_children - 1
        is_split = left != TREE_LEAF
        feature = np.where(is_split, cat("feature"), TREE_UNDEFINED)
        threshold = np.where(is_split, cat("threshold"), float(TREE_UNDEFINED))
        stats = cat("stats")
        weight = cat("weight")
        safe = np.where(weight > 0.0, weight, 1.0)
        if self.n_classes is None:
            value = (stats[:, 1] / safe)[:, None, None]
        else:
            value = (stats / safe[:, None])[:, None, :]
        return Tree(
            children_left=left, children_right=right, feature=feature, threshold=threshold,
            value=value, impurity=cat("impurity"),
            n_node_samples=cat("end") - cat("start"), weighted_n_node_samples=weight,
            depth=cat("depth"), n_features=self.n_features,
            split_kind=np.where(is_split, cat("kind"), SPLIT_THRESHOLD),
            missing_branch=np.where(is_split, cat("missing_branch"), 0),
            category_offset=np.where(is_split, cat("category_offset"), -1),
            category_n_codes=np.where(is_split, cat("category_n_codes"), 0),
            category_branch=self._category_map(),
            fractional_missing=self._fractional,
        )


def _segmented_cumsum(values, lengths):
    """Inclusive cumulative sums of ``values`` restarted at every segment of the given lengths."""
    total = np.cumsum(values)
    ends = np.cumsum(lengths)
    before = np.concatenate([[0], total[ends[:-1] - 1]]) if lengths.size else np.zeros(0)
    return total - np.repeat(before, lengths)
