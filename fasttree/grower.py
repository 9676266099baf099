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

from ._dtypes import CRITERION_ENTROPY, CRITERION_GINI, TREE_LEAF, label_dtype
from .kernels import (
    find_best_splits_classification,
    find_best_splits_regression,
    gather_targets,
    partition_segments,
    presort_features,
    reciprocal_table,
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
                           "log_loss": CRITERION_ENTROPY}
REGRESSION_CRITERIA = ("squared_error",)


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


def node_impurity(stats, criterion):
    """Impurity of nodes from their statistics.

    Parameters
    ----------
    stats : ndarray of shape (n_nodes, n_classes) or (n_nodes, 3), float64
        Weighted class counts, or ``[sum w, sum w*y, sum w*y**2]`` for ``"squared_error"``.
    criterion : str

    Returns
    -------
    weight : ndarray of shape (n_nodes,)
    impurity : ndarray of shape (n_nodes,)
    """
    if criterion == "squared_error":
        weight = stats[:, 0]
        safe = np.where(weight > 0.0, weight, 1.0)
        mean = stats[:, 1] / safe
        return weight, np.maximum(stats[:, 2] / safe - mean * mean, 0.0) * (weight > 0.0)
    weight = stats.sum(axis=1)
    p = stats / np.where(weight > 0.0, weight, 1.0)[:, None]
    if criterion == "gini":
        impurity = 1.0 - np.einsum("ij,ij->i", p, p)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            impurity = -np.where(p > 0.0, p * np.log2(p), 0.0).sum(axis=1)
    return weight, np.where(weight > 0.0, impurity, 0.0)


class _Batch:
    """Nodes created together: statistics first, then (for candidates) their best split."""

    __slots__ = ("ids", "start", "end", "depth", "stats", "weight", "impurity", "feature",
                 "threshold", "n_left", "improvement", "splittable")


class TreeGrower:
    """Grow one tree from validated arrays.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous
    y : ndarray of shape (n_samples,)
        int32 encoded classes (classification) or float64 target (regression).
    sample_weight : ndarray of shape (n_samples,), float64, or None
        None when every weight is 1: the kernels then count in integers and skip weight reads.
    params : GrowerParams
    n_classes : int or None
        None for regression.
    rng : numpy.random.Generator or None
        Draws the per-node feature subsets when ``params.max_features < n_features``.

    Attributes
    ----------
    timings : dict of str to float
        Seconds spent in each phase of the last :meth:`grow` (``presort``, ``search``,
        ``partition``, ``node_stats``, ``total``).
    """

    def __init__(self, X, y, sample_weight, params, n_classes=None, rng=None):
        self.X = X
        self.y = y
        # the kernels' convention for "every weight is 1" is an empty weight array
        self.sample_weight = np.empty(0) if sample_weight is None else sample_weight
        self.params = params
        self.n_classes = n_classes
        self.rng = rng
        self.n_samples, self.n_features = X.shape
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

    def _feature_mask(self, start, end):
        n_features = self.n_features
        mask = np.ones((n_features, start.shape[0]), dtype=np.uint8)
        k = self.params.max_features
        if k >= n_features:
            return mask
        # Like scikit-learn: draw features in random order until k non-constant ones are found.
        non_constant = self._sorted_x[:, start] != self._sorted_x[:, end - 1]
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
        batch.threshold = np.zeros(size)
        batch.n_left = np.zeros(size, dtype=np.int64)
        batch.improvement = np.zeros(size)
        cand = np.flatnonzero(candidate)
        if cand.size:
            start = np.ascontiguousarray(batch.start[cand])
            end = np.ascontiguousarray(batch.end[cand])
            stats = np.ascontiguousarray(batch.stats[cand])
            mask = self._feature_mask(start, end)
            if self.n_classes is None:
                children, thr, n_left = self._timed(
                    "search", find_best_splits_regression, self._sorted_x, self._sorted_idx,
                    self._sorted_y, self.sample_weight, start, end, stats, mask,
                    p.min_samples_leaf, p.min_weight_leaf, self._count_table)
            else:
                children, thr, n_left = self._timed(
                    "search", find_best_splits_classification, self._sorted_x, self._sorted_idx,
                    self._sorted_y, self.sample_weight, start, end, stats, mask,
                    CLASSIFICATION_CRITERIA[p.criterion], p.min_samples_leaf, p.min_weight_leaf,
                    self._count_table)
            best = select_best_splits(children)
            found = best >= 0
            cols = np.arange(cand.size)
            f = np.where(found, best, 0)
            batch.feature[cand] = np.where(found, best, -1)
            batch.threshold[cand] = thr[f, cols]
            batch.n_left[cand] = n_left[f, cols]
            w = batch.weight[cand]
            # scikit-learn's improvement: weighted impurity decrease relative to the root's weight
            batch.improvement[cand] = np.where(
                found, (w * batch.impurity[cand] - children[f, cols]) / self._root_weight, 0.0)
        batch.splittable = (batch.feature >= 0) & (
            batch.improvement + EPSILON >= p.min_impurity_decrease)

    def _new_batch(self, start, end, depth, stats_feature):
        """Register new nodes and compute their statistics (not yet their splits)."""
        batch = _Batch()
        batch.ids = np.arange(self._n_nodes, self._n_nodes + start.shape[0])
        self._n_nodes += start.shape[0]
        batch.start, batch.end, batch.depth = start, end, depth
        batch.stats = self._segment_stats(start, end, stats_feature)
        batch.weight, batch.impurity = node_impurity(batch.stats, self.params.criterion)
        self._batches.append(batch)
        return batch

    def _split(self, batch, rows):
        """Split the given nodes of a batch: create, partition where needed, search children."""
        start = np.ascontiguousarray(batch.start[rows])
        end = np.ascontiguousarray(batch.end[rows])
        feature = np.ascontiguousarray(batch.feature[rows])
        n_left = np.ascontiguousarray(batch.n_left[rows])
        middle = start + n_left
        # children of node i are 2i (left) and 2i+1 (right) of the new batch
        child_start = np.empty(2 * rows.size, dtype=np.int64)
        child_end = np.empty(2 * rows.size, dtype=np.int64)
        child_start[0::2], child_end[0::2] = start, middle
        child_start[1::2], child_end[1::2] = middle, end
        child_depth = np.repeat(batch.depth[rows] + 1, 2)
        # The split feature's row already has each left child first, so the children's
        # statistics, and with them the stopping rules, are known before partitioning; a parent
        # none of whose children will be searched (pure, too small, at max_depth) is not
        # partitioned at all.
        children = self._new_batch(child_start, child_end, child_depth, np.repeat(feature, 2))
        candidate = self._candidates(children)
        needed = np.flatnonzero(candidate[0::2] | candidate[1::2])
        if needed.size:
            self._timed("partition", partition_segments, self._sorted_x, self._sorted_idx,
                        self._sorted_y, start[needed], end[needed], feature[needed],
                        n_left[needed], self._goes_left)
        self._search(children, candidate)
        self._links.append((batch.ids[rows], children.ids[0::2], children.ids[1::2]))
        return children

    # -- growth ------------------------------------------------------------------------------
    def grow(self):
        """Grow the tree and return it as a :class:`~fasttree.tree.Tree`."""
        self.timings = {}
        t_total = time.perf_counter()
        self._sorted_x, self._sorted_idx = self._timed("presort", presort_features, self.X)
        # targets travel with the rows: uint8/uint16 class labels, or float64 regression values
        targets = self.y if self.n_classes is None else self.y.astype(label_dtype(self.n_classes))
        self._sorted_y = self._timed("presort", gather_targets, self._sorted_idx, targets)
        self._goes_left = np.empty(self.n_samples, dtype=np.uint8)
        self._batches = []
        self._n_nodes = 0
        self._links = []  # (parent ids, left child ids, right child ids) per split call
        unit_weight = self.sample_weight.shape[0] == 0
        self._root_weight = float(self.n_samples if unit_weight else self.sample_weight.sum())
        # unit weights make counts integers: entropy reads c log2 c, regression 1 / c from a table
        self._count_table = np.empty(0)
        if unit_weight and self.params.criterion in ("entropy", "log_loss"):
            self._count_table = xlog2x_table(self.n_samples)
        elif unit_weight and self.params.criterion == "squared_error":
            self._count_table = reciprocal_table(self.n_samples)

        root = self._new_batch(np.array([0], dtype=np.int64),
                               np.array([self.n_samples], dtype=np.int64),
                               np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
        self._search(root, self._candidates(root))
        if self.params.max_leaf_nodes is None:
            self._grow_level_wise(root)
        else:
            self._grow_best_first(root)
        tree = self._build_tree()
        self.timings["total"] = time.perf_counter() - t_total
        # release the working layout (several times the size of X) as soon as the tree exists
        del self._sorted_x, self._sorted_idx, self._sorted_y, self._goes_left
        del self._batches, self._links, self._count_table
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
            push(self._split(batch, np.array([row])))
            n_leaves += 1

    def _build_tree(self):
        node_count = self._n_nodes
        cat = lambda name: np.concatenate([getattr(b, name) for b in self._batches])  # noqa: E731
        left = np.full(node_count, TREE_LEAF, dtype=np.int64)
        right = np.full(node_count, TREE_LEAF, dtype=np.int64)
        for parents, left_ids, right_ids in self._links:
            left[parents] = left_ids
            right[parents] = right_ids
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
        )
