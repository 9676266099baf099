"""Grow trees level by level (or best-first under ``max_leaf_nodes``) through a splitter.

The grower never loops over features or rows in Python: for a batch of nodes it asks the splitter
(:mod:`fasttree.splitter`) for node statistics and split records, selects one split per node,
applies the stopping rules, and asks the splitter to move the rows.
Level-wise growth makes the batch a whole level; best-first growth (scikit-learn's rule when
``max_leaf_nodes`` is set) expands one node at a time, always the one with the largest impurity
improvement.

The open nodes are a frontier of one tree or of several: a splitter whose layout holds several
trees' rows (:meth:`fasttree.splitter.ExactSplitter.from_samples`) gives each tree a root, and
every batch then holds the nodes of every tree at that level, each node knowing its tree: one
kernel call per phase and level for the whole forest, each tree the same as grown alone.
"""

import contextvars
import heapq
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from ._dtypes import (
    CRITERION_ABSOLUTE_ERROR,
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    EPSILON,
    SELECT_GAIN_RATIO,
    SELECT_IMPURITY,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
)
from .kernels import node_impurity, select_best_splits
from .kernels.draws import child_keys, node_draws, root_key
from .kernels.split_record import new_split_record, take_best_splits
from .kernels.monotonic import child_bounds
from ._jit import njit
from ._validation import is_sparse
from .sparse_splitter import SparseSplitter
from .hist_splitter import HistSplitter, bounds_from_cut_points
from .splitter import ExactSplitter, check_counts
from . import depth_first
from .tree import TREE_UNDEFINED, Tree


# A level whose nodes hold fewer (rows x features) than this runs on one thread: its kernels take
# tens of microseconds, less than waking the other threads costs (far less than it costs when
# the cores are busy with other processes, where a parallel region waits for a descheduled
# thread). Thread counts never change the tree, only who computes it.
SMALL_LEVEL_WORK = 1 << 17

CLASSIFICATION_CRITERIA = {"gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
                           "log_loss": CRITERION_ENTROPY, "gain_ratio": CRITERION_ENTROPY}
REGRESSION_CRITERIA = {"squared_error": CRITERION_SQUARED_ERROR, "poisson": CRITERION_POISSON,
                       "absolute_error": CRITERION_ABSOLUTE_ERROR}
SPLITTERS = ("best", "random", "hist")
BINNINGS = ("quantile", "entropy")
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
    splitter: str = "best"  # "random": one random threshold per feature and node; "hist": bins
    max_bins: int = 255  # splitter="hist": value bins per feature
    binning: str = "quantile"  # splitter="hist": "quantile" or "entropy" (MDL cut points)

    @property
    def criterion_code(self):
        if self.criterion in REGRESSION_CRITERIA:
            return REGRESSION_CRITERIA[self.criterion]
        return CLASSIFICATION_CRITERIA[self.criterion]

    @property
    def select_rule(self):
        return SELECT_GAIN_RATIO if self.criterion == "gain_ratio" else SELECT_IMPURITY


# the per-level callback of report_progress (a context variable: fits on other threads unseen)
_progress = contextvars.ContextVar("fasttree_grow_progress", default=None)


@contextmanager
def report_progress(callback):
    """Call ``callback(depth, n_nodes, n_rows, seconds)`` after each level that level-wise
    growth splits inside this block: the depth of the level, how many of its nodes were split,
    the rows they held and the seconds the level took (the command line's ``--verbose``).

    Best-first growth (``max_leaf_nodes``) reports nothing.  The callback is per context (a
    ``contextvars`` variable), so fits on other threads are not reported.
    """
    token = _progress.set(callback)
    try:
        yield
    finally:
        _progress.reset(token)


class _Batch:
    """Nodes created together: statistics first, then (for candidates) their best split."""

    __slots__ = ("ids", "tree", "start", "end", "depth", "stats", "weight", "impurity", "banned",
                 "bounds", "feature", "kind", "threshold", "missing_branch", "n_branches",
                 "n_left", "n_missing", "subset_class", "category_offset", "category_n_codes",
                 "improvement", "splittable", "node_key")


#: the node arrays of every batch a tree is built from (and ``bounds`` under constraints)
_TREE_FIELDS = ("tree", "start", "end", "depth", "stats", "weight", "impurity", "feature", "kind",
                "threshold", "missing_branch", "category_offset", "category_n_codes")


class TreeGrower:
    """Grow one tree from validated arrays, or one or several from a prebuilt splitter.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous, or None
        NaN marks a missing value; categorical features hold codes ``0 .. n_categories - 1``.
        A float32 CSC matrix (canonical: sorted indices, no duplicates) grows through
        :class:`~fasttree.sparse_splitter.SparseSplitter` (numeric features, best thresholds,
        one output).  None when ``splitter`` is given.
    y : ndarray of shape (n_samples,) or None
        int32 encoded classes (classification) or float64 target (regression).
    sample_weight : ndarray of shape (n_samples,), float64, or None
        None when every weight is 1: the kernels then count in integers and skip weight reads.
        With ``counts``, also of shape (n_trees, n_samples): each tree's own weights.
    params : GrowerParams
    n_classes : int or None
        None for regression.
    rng : numpy.random.Generator, sequence of them, or None
        Each tree's root key (:func:`~fasttree.kernels.draws.root_key`), from which every
        random draw of its nodes follows (:mod:`fasttree.kernels.draws`: the features a node
        draws when ``params.max_features < n_features``, random thresholds); a layout of
        several trees takes one generator per tree.  Needed only when something is drawn.
    n_categories : ndarray of shape (n_features,), int64, or None
        Categories of each categorical feature, 0 for numeric ones; None: all numeric.
    multi_output : tuple (Y, offsets) or None
        Several outputs (then ``y`` is ignored): ``Y`` of shape (n_samples, n_outputs), float64
        (class codes or values), and each output's first column in the node statistics
        (:mod:`fasttree.kernels.multi_output`; for classification ``offsets`` are the cumulated
        class counts, for regression ``3 * k``).
    splitter : Splitter or None
        A splitter over a prebuilt layout (any object implementing
        :class:`~fasttree.splitter_contract.Splitter`), of one tree or several (its
        ``tree_offsets``); None builds the exact presorted one from ``X``.
    monotonic_cst : ndarray of shape (n_features,), int8, or None
        Monotonicity constraints (:mod:`fasttree.kernels.monotonic`): -1, 0 or 1 per feature,
        on the mean, the median (absolute error) or the fraction of class 0 (two classes); one
        output, numeric features only.  A prebuilt ``splitter`` must hold the same ones.
    counts : ndarray of shape (n_trees, n_samples), integer, or None
        Grow ``n_trees`` trees at once, tree ``k`` on the rows ``counts[k] > 0`` weighted by
        their counts (a forest's bootstrap samples): the exact splitter's layout of several
        trees (:meth:`~fasttree.splitter.ExactSplitter.from_samples`); ``rng`` then gives one
        generator per tree, and :meth:`grow_trees` returns the trees.  Dense ``X`` and
        ``splitter="best"`` or ``"random"`` only.
    columns : tuple or None
        What trees grown depth first read besides ``X`` (:func:`fasttree.depth_first.
        fit_columns`: ``X`` transposed, or the bins of the bounded search), when the caller has
        it (a forest's batches share it); None: made when needed.

    Attributes
    ----------
    timings : dict of str to float
        Seconds spent in each phase of the last :meth:`grow` (``presort``, ``search``,
        ``partition``, ``node_stats``, ``total``).
    missing_features : ndarray of shape (n_features,), bool
        Features that had missing values (set by :meth:`grow`).

    Notes
    -----
    Per batch of nodes: node statistics, split search (a SplitRecord over every (feature, node)
    pair), selection, stopping rules, then moving rows to the children.  A numeric split whose
    left child is a prefix of the split feature's sorted row (no missing rows, or missing rows
    going right) takes the fast path: children's statistics read from that row, and only nodes
    with a child to search are partitioned.  Other splits are routed and partitioned k-way.
    """

    def __init__(self, X, y, sample_weight, params, n_classes=None, rng=None, n_categories=None,
                 splitter=None, multi_output=None, monotonic_cst=None, counts=None,
                 columns=None):
        self.X = X
        self.columns = columns
        self.y = y
        self.sample_weight = sample_weight
        self.params = params
        self.n_classes = n_classes
        self._rngs = [rng] if rng is None or isinstance(rng, np.random.Generator) else list(rng)
        self.n_features = X.shape[1] if splitter is None else splitter.n_features
        self.n_categories = (np.zeros(self.n_features, dtype=np.int64) if n_categories is None
                             else np.asarray(n_categories, dtype=np.int64))
        self.is_categorical = self.n_categories > 0
        self.any_categorical = bool(self.is_categorical.any())
        self.splitter = splitter
        self.multi_output = multi_output
        self.monotonic_cst = (None if monotonic_cst is None or not np.any(monotonic_cst)
                              else np.asarray(monotonic_cst, dtype=np.int8))
        self.counts = counts
        if counts is not None and (splitter is not None or is_sparse(X)
                                   or params.splitter == "hist"):
            raise ValueError("counts (several trees) need dense X and splitter 'best' or "
                             "'random'")
        self.timings = {}

    def _make_splitter(self):
        p = self.params
        if is_sparse(self.X):  # a validated float32 CSC matrix
            return SparseSplitter.from_csc(
                self.X.data, self.X.indices, self.X.indptr, self.X.shape[0], self.y,
                self.sample_weight, n_classes=self.n_classes, criterion_code=p.criterion_code,
                min_samples_leaf=p.min_samples_leaf, min_weight_leaf=p.min_weight_leaf,
                random_thresholds=p.splitter == "random",
                multi_output=self.multi_output, monotonic_cst=self.monotonic_cst)
        if p.splitter == "hist":
            return HistSplitter.from_data(
                self.X, self.y, self.sample_weight, max_bins=p.max_bins,
                upper=self._entropy_bins() if p.binning == "entropy" else None,
                n_classes=self.n_classes, n_categories=self.n_categories,
                criterion_code=p.criterion_code, min_samples_leaf=p.min_samples_leaf,
                min_weight_leaf=p.min_weight_leaf,
                categorical_kind=CATEGORICAL_SPLITS[p.categorical_split],
                level_wise=p.max_leaf_nodes is None)
        exact = dict(
            n_classes=self.n_classes, n_categories=self.n_categories,
            criterion_code=p.criterion_code, min_samples_leaf=p.min_samples_leaf,
            min_weight_leaf=p.min_weight_leaf,
            categorical_kind=CATEGORICAL_SPLITS[p.categorical_split],
            missing_fractional=p.missing == "fractional",
            min_branch_fraction=p.min_branch_fraction,
            random_thresholds=p.splitter == "random",
            multi_output=self.multi_output, monotonic_cst=self.monotonic_cst)
        if self.counts is not None:
            return ExactSplitter.from_samples(self.X, self.y, self.counts, self.sample_weight,
                                              **exact)
        return ExactSplitter.from_data(self.X, self.y, self.sample_weight, **exact)

    def _entropy_bins(self):
        """``binning="entropy"``: bins cut where the class entropy drops most (MDL stop)."""
        from .preprocessing import EntropyDiscretizer

        p = self.params
        categorical = np.flatnonzero(self.is_categorical)  # their bins are their categories
        cut_points = EntropyDiscretizer(
            max_bins=p.max_bins, categorical_features=categorical if categorical.size else None,
        ).fit(self.X, self.y, sample_weight=self.sample_weight).cut_points_
        return bounds_from_cut_points(cut_points, p.max_bins)

    # -- phases ------------------------------------------------------------------------------
    def _draws(self):
        """Whether the nodes draw features or thresholds: else their keys are never read (all
        0, and neither :func:`child_keys` nor :func:`node_draws` is compiled)."""
        return (self.params.max_features < self.n_features
                or getattr(self._splitter, "random_thresholds", False))

    def _find_splits(self, start, end, stats, node_key, banned, bounds):
        """The splitter's search of the nodes' allowed features, with the nodes' draws."""
        n_features = self.n_features
        mask = np.ones((n_features, start.shape[0]), dtype=np.uint8)
        if banned is not None:
            mask[banned.T] = 0
        k = self.params.max_features
        random_thresholds = getattr(self._splitter, "random_thresholds", False)
        if self._draws():  # else nothing is drawn (nor compiled)
            keys, uniform, coin = node_draws(node_key, n_features, k < n_features,
                                             random_thresholds)
        if k < n_features:
            # Like scikit-learn: draw features in random order until k non-constant ones are
            # found.
            non_constant = self._splitter.non_constant(start, end) & (mask == 1)
            keys[~non_constant] = 2.0
            rank = np.argsort(np.argsort(keys, axis=0, kind="stable"), axis=0, kind="stable")
            mask[:] = (rank < k) & non_constant
        if random_thresholds:
            return self._splitter.find_splits(start, end, stats, mask, bounds,
                                              draws=(uniform, coin))
        return self._splitter.find_splits(start, end, stats, mask, bounds)

    def _candidates(self, batch):
        """Nodes that the stopping rules allow to split (scikit-learn's pre-search checks)."""
        p = self.params
        candidate = ((batch.depth < p.max_depth)
                     & (batch.end - batch.start >= max(p.min_samples_split,
                                                       2 * p.min_samples_leaf))
                     & (batch.impurity > EPSILON))
        if p.min_weight_leaf > 0.0:  # (a node's weight is never negative)
            candidate &= batch.weight >= 2.0 * p.min_weight_leaf
        return candidate

    def _search(self, batch, candidate):
        """Find the best split of the candidate nodes and decide which ones to split."""
        p = self.params
        size = batch.start.shape[0]
        cand = np.flatnonzero(candidate)
        record, best = None, np.zeros(0, dtype=np.int64)
        if cand.size:
            take = _rows_of(batch, cand)
            start, end, stats = take("start"), take("end"), take("stats")
            banned = None if batch.banned is None else take("banned")
            bounds = None if batch.bounds is None else take("bounds")
            record = self._find_splits(start, end, stats, take("node_key"), banned, bounds)
            gain, n_branches = record.gain, record.n_branches
            if p.select_rule == SELECT_GAIN_RATIO:
                # C4.5 charges a numeric split log2(candidate thresholds) / node weight; a split
                # left with no gain is no candidate (nor counts toward the average gain)
                penalty = np.log2(np.maximum(record.n_candidates, 1)) / batch.weight[cand]
                gain = np.where(self.is_categorical[:, None], gain, gain - penalty)
                n_branches = np.where(self.is_categorical[:, None] | (gain > 0.0), n_branches, 0)
            best = select_best_splits(record.children_impurity, gain, record.split_info,
                                      n_branches.astype(np.int32), p.select_rule)
        if record is None:
            record = new_split_record(self.n_features, 0)
        (batch.feature, batch.kind, batch.threshold, batch.missing_branch, batch.n_branches,
         batch.n_left, batch.n_missing, batch.subset_class, batch.improvement) = take_best_splits(
            best, cand, size, record.children_impurity, record.threshold, record.n_left,
            record.n_branches, record.missing_branch, record.n_missing, record.subset_class,
            self.is_categorical, CATEGORICAL_SPLITS[p.categorical_split], batch.weight,
            batch.impurity, 1.0)
        # improvements are relative to each node's root: divided here (x / 1.0 is x exactly, so
        # the result is the kernel's division by that root's weight)
        batch.improvement /= self._tree_weights[batch.tree]
        batch.category_offset = np.full(size, -1, dtype=np.int64)
        batch.category_n_codes = np.zeros(size, dtype=np.int64)
        if self.any_categorical:
            self._describe_categorical(batch, np.flatnonzero(batch.kind != SPLIT_THRESHOLD))
        batch.splittable = (batch.feature >= 0) & (
            batch.improvement + EPSILON >= p.min_impurity_decrease)

    def _describe_categorical(self, batch, rows):
        """Category -> branch maps of the categorical splits chosen for ``rows`` of a batch."""
        if rows.size == 0:
            return
        take = _rows_of(batch, rows)
        offset, n_codes = self._splitter.describe_categorical(
            take("start"), take("end"), take("stats"), take("feature"), take("kind"),
            take("threshold"), take("missing_branch"), take("subset_class"))
        batch.category_offset[rows] = offset
        batch.category_n_codes[rows] = n_codes
        batch.threshold[rows] = float(TREE_UNDEFINED)

    def _new_batch(self, tree, start, end, depth, node_key, stats_feature, banned):
        """Register new nodes (of the trees ``tree``, keys ``node_key``) and compute their
        statistics (not yet their splits, nor under monotonicity constraints their value
        ranges)."""
        batch = _Batch()
        batch.ids = np.arange(self._n_nodes, self._n_nodes + start.shape[0])
        self._n_nodes += start.shape[0]
        batch.tree, batch.start, batch.end, batch.depth = tree, start, end, depth
        batch.node_key = node_key
        batch.banned = banned
        batch.bounds = None
        batch.stats = self._splitter.node_stats(start, end, stats_feature)
        batch.weight, batch.impurity = self._node_impurity(batch.stats)
        self._batches.append(batch)
        return batch

    def _node_impurity(self, stats):
        """Weight and impurity of nodes; with several outputs, the mean of their impurities."""
        code = self.params.criterion_code
        if self.multi_output is None:
            return node_impurity(stats, code)
        offsets = self.multi_output[1]
        blocks = [node_impurity(np.ascontiguousarray(stats[:, a:b]), code)
                  for a, b in zip(offsets[:-1], offsets[1:])]
        return blocks[0][0], np.mean([impurity for _, impurity in blocks], axis=0)

    def _split(self, batch, rows):
        """Split the given nodes of a batch: create, partition where needed, search children.

        Children of a node get consecutive ids, branch order, and consecutive segments::

            parent [start ........................................ end)
            child  [start, +rows of branch 0) [.., +rows of branch 1) ... [.., end)
        """
        if not self._all_levels_small:  # else on one thread since the presort
            self._set_level_threads(int(np.sum(batch.end[rows] - batch.start[rows])))
        take = _rows_of(batch, rows)
        feature, n_branches, n_left = take("feature"), take("n_branches"), take("n_left")
        start, end, branch_rows = self._splitter.split(
            take("start"), take("end"), feature, take("kind"), take("threshold"),
            take("missing_branch"), n_branches, n_left, take("n_missing"),
            take("category_offset"), take("category_n_codes"))
        parent_of_child, child_start, child_end, first_child = _child_segments(
            start, n_branches, branch_rows)
        child_depth = take("depth")[parent_of_child] + 1
        banned = self._child_bans(batch, rows, parent_of_child)
        # The split feature's row holds each child's rows (prefix splits: left first; routed
        # splits: already partitioned), so the children's statistics, and with them the stopping
        # rules, are known before partitioning prefix splits; a parent none of whose children
        # will be searched (pure, too small, at max_depth) is not partitioned at all.
        branch = np.arange(parent_of_child.shape[0]) - first_child[parent_of_child]
        child_key = (child_keys(take("node_key")[parent_of_child], branch) if self._draws()
                     else np.zeros(branch.shape[0], dtype=np.uint64))
        children = self._new_batch(take("tree")[parent_of_child], child_start, child_end,
                                   child_depth, child_key, feature[parent_of_child], banned)
        if batch.bounds is not None:
            children.bounds = self._child_bounds(batch.bounds[rows], feature, n_branches,
                                                 parent_of_child, children)
        candidate = self._candidates(children)
        has_candidate = np.bincount(parent_of_child, weights=candidate, minlength=rows.size) > 0
        prefix = self._splitter.is_prefix(take("kind"), take("n_missing"),
                                          take("missing_branch"))
        needed = np.flatnonzero(prefix & has_candidate)
        if needed.size:
            self._splitter.partition_prefix(start[needed], end[needed], feature[needed],
                                            n_left[needed])
        self._search(children, candidate)
        self._links.append((take("ids"), children.ids[first_child], n_branches))
        return children

    def _child_bounds(self, bounds, feature, n_branches, parent_of_child, children):
        """Value ranges of the children of split nodes (ranges ``bounds``, split on
        ``feature``): inherited, or cut at the middle value below a constrained feature."""
        child = bounds[parent_of_child]
        cst = self.monotonic_cst[feature]
        split = np.flatnonzero(cst != 0)  # numeric thresholds: two children each
        if split.size:
            left = np.concatenate([[0], np.cumsum(n_branches)[:-1]])[split]
            value = self._constrained_value(children.stats, children.weight)
            child[left], child[left + 1] = child_bounds(
                cst[split], child[left, 0], child[left, 1], value[left], value[left + 1])
        return child

    def _constrained_value(self, stats, weight):
        """The value monotonicity constraints apply to (:mod:`fasttree.kernels.monotonic`)."""
        if self.n_classes is not None:
            return stats[:, 0] / weight  # the fraction of class 0
        if self.params.criterion_code == CRITERION_ABSOLUTE_ERROR:
            return stats[:, 3]  # the weighted median
        return stats[:, 1] / weight

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

    # -- growth ------------------------------------------------------------------------------
    def grow(self):
        """Grow the tree and return it as a :class:`~fasttree.tree.Tree` (one tree only: see
        :meth:`grow_trees`)."""
        counts = None if self.counts is None else np.asarray(self.counts)
        n_trees = (self.splitter.tree_offsets.shape[0] - 1 if self.splitter is not None
                   else counts.shape[0] if counts is not None and counts.ndim == 2 else 1)
        if n_trees != 1:  # said before growing them
            raise ValueError(f"the layout holds {n_trees} trees: use grow_trees()")
        return self.grow_trees()[0]

    def grow_trees(self):
        """Grow every tree of the splitter's layout at once; a list of
        :class:`~fasttree.tree.Tree`, in the order of its ``tree_offsets``."""
        dense = self.splitter is None and not is_sparse(self.X)
        # a forest's trees and a small tree grow depth first, each in one kernel call
        if dense and depth_first.serves(self.params, self.any_categorical,
                                        self.multi_output is not None,
                                        self.monotonic_cst is not None,
                                        self.n_classes is not None, self.counts is not None,
                                        self.X.shape[0] * self.n_features):
            return self._grow_depth_first()
        t_total = time.perf_counter()
        self._n_threads = numba.get_num_threads()  # the fit's (numba_threads), restored after
        self._level_threads = self._n_threads
        n_samples = (self.splitter.n_samples if self.splitter is not None
                     else self.X.shape[0] if self.counts is None
                     else int(np.count_nonzero(self.counts)))
        # C4.5's fractional rows add copies: their levels are measured each time
        self._all_levels_small = (n_samples * self.n_features < SMALL_LEVEL_WORK
                                  and self.params.missing != "fractional")
        # the presort too: a small table is sorted on one thread
        self._set_level_threads(n_samples)
        self._splitter = self._make_splitter() if self.splitter is None else self.splitter
        self._batches = []
        self._n_nodes = 0
        self._links = []  # (parent ids, first child ids, number of children) per split call
        self._tree_weights = np.asarray(self._splitter.tree_weights, dtype=np.float64)
        offsets = np.asarray(self._splitter.tree_offsets, dtype=np.int64)
        n_trees = offsets.shape[0] - 1
        draws = (self.params.max_features < self.n_features
                 or getattr(self._splitter, "random_thresholds", False))
        if draws and (len(self._rngs) != n_trees or None in self._rngs):
            raise ValueError(f"rng needs one generator per tree ({n_trees})")
        keys = np.array([root_key(rng) for rng in self._rngs] if draws else [0] * n_trees,
                        dtype=np.uint64)
        roots = self._new_batch(np.arange(n_trees), offsets[:-1].copy(), offsets[1:].copy(),
                                np.zeros(n_trees, dtype=np.int64), keys,
                                np.zeros(n_trees, dtype=np.int64), None)
        if self.monotonic_cst is not None:
            roots.bounds = np.tile([-np.inf, np.inf], (n_trees, 1))
        self._search(roots, self._candidates(roots))
        if self.params.max_leaf_nodes is None:
            self._grow_level_wise(roots)
        else:
            self._grow_best_first(roots)
        # every batch's node arrays concatenated once, then each tree takes its own nodes
        names = _TREE_FIELDS + (("bounds",) if self.monotonic_cst is not None else ())
        nodes = {name: np.concatenate([getattr(batch, name) for batch in self._batches])
                 for name in names}
        trees = [self._build_tree(nodes, t) for t in range(n_trees)]
        del nodes
        self.timings = dict(self._splitter.timings)
        self.missing_features = self._splitter.missing_features
        self.timings["total"] = time.perf_counter() - t_total
        # release the working layout (several times the size of X) as soon as the tree exists
        del self._splitter, self._batches, self._links
        numba.set_num_threads(self._n_threads)
        return trees

    def _grow_depth_first(self):
        """Every tree of ``counts`` (or the one tree of every row) grown depth first, one per
        thread (:mod:`fasttree.depth_first`): the trees level-wise growth grows, without its
        cost per level."""
        t_total = time.perf_counter()
        counts = (np.ones((1, self.X.shape[0]), dtype=np.uint8) if self.counts is None
                  else check_counts(self.counts, self.X.shape[0], self.sample_weight))
        n_trees = counts.shape[0]
        rngs = [None] * n_trees  # no key needed where nothing is drawn
        if self.params.max_features < self.n_features or self.params.splitter == "random":
            if len(self._rngs) != n_trees or None in self._rngs:
                raise ValueError(f"rng needs one generator per tree ({n_trees})")
            rngs = self._rngs
        self.timings = {}
        columns = self.columns
        if columns is None and self.counts is None:  # a small single tree: no bins
            columns = depth_first.fit_columns(self.X, self.params, self.n_classes, bins=False)
        nodes, self.missing_features = depth_first.grow_depth_first(
            self.X, self.y, counts, self.sample_weight, self.params, self.n_classes, rngs,
            self.timings, columns)
        trees = [self._make_tree(
            n["left"], n["right"], n["feature"], n["threshold"], n["stats"], n["weight"],
            n["impurity"], n["n_node_samples"], n["depth"], None, n["missing_branch"], None, None,
            None, None) for n in nodes]
        self.timings["total"] = time.perf_counter() - t_total
        return trees

    def _set_level_threads(self, n_rows):
        """One thread for a level of fewer than SMALL_LEVEL_WORK rows x features, else the
        fit's threads."""
        threads = 1 if n_rows * self.n_features < SMALL_LEVEL_WORK else self._n_threads
        if threads != self._level_threads:  # setting costs microseconds, as much as a level
            numba.set_num_threads(threads)
            self._level_threads = threads

    def _grow_level_wise(self, batch):
        progress = _progress.get()
        while True:
            rows = np.flatnonzero(batch.splittable)
            if rows.size == 0:
                return
            start = time.perf_counter()
            parents = batch
            batch = self._split(batch, rows)
            if progress is not None:
                progress(int(parents.depth[rows[0]]), int(rows.size),
                         int(np.sum(parents.end[rows] - parents.start[rows])),
                         time.perf_counter() - start)

    def _grow_best_first(self, roots):
        """Each tree in turn (its nodes are numbered in the order it creates them, as alone)."""
        for t in range(roots.ids.size):
            # Heap of (-improvement, node id, batch, row); node ids break ties deterministically.
            heap = []

            def push(batch, rows):
                for row in rows[batch.splittable[rows]]:
                    heapq.heappush(heap, (-batch.improvement[row], int(batch.ids[row]), batch,
                                          row))

            push(roots, np.array([t]))
            n_leaves = 1
            while heap and n_leaves < self.params.max_leaf_nodes:
                _, _, batch, row = heapq.heappop(heap)
                children = self._split(batch, np.array([row]))
                push(children, np.arange(children.ids.size))
                n_leaves += children.ids.size - 1

    def _build_tree(self, nodes, t):
        """Tree ``t`` from every batch's node arrays concatenated once (``nodes``, by name): its
        own nodes, numbered in the order they were created."""
        in_tree = nodes["tree"] == t
        node_count = int(np.count_nonzero(in_tree))
        local = np.cumsum(in_tree) - 1  # a node's number in its own tree

        def cat(name):
            if node_count == in_tree.size:  # one tree: every node its own, no copy to take
                return nodes[name]
            return nodes[name][in_tree]

        left = np.full(node_count, TREE_LEAF, dtype=np.int64)
        right = np.full(node_count, TREE_LEAF, dtype=np.int64)
        for parents, first_child, n_children in self._links:
            own = in_tree[parents]
            left[local[parents[own]]] = local[first_child[own]]
            right[local[parents[own]]] = local[first_child[own]] + n_children[own] - 1
        category_offset, category_branch = cat("category_offset"), self._splitter.category_map
        if self._tree_weights.shape[0] > 1:
            category_offset, category_branch = _own_maps(
                category_offset, cat("category_n_codes"), category_branch)
        return self._make_tree(
            left, right, cat("feature"), cat("threshold"), cat("stats"), cat("weight"),
            cat("impurity"), cat("end") - cat("start"), cat("depth"), cat("kind"),
            cat("missing_branch"), category_offset, cat("category_n_codes"), category_branch,
            cat("bounds") if self.monotonic_cst is not None else None)

    def _make_tree(self, left, right, feature, threshold, stats, weight, impurity,
                   n_node_samples, depth, kind, missing_branch, category_offset,
                   category_n_codes, category_branch, bounds):
        """A :class:`~fasttree.tree.Tree` from its node arrays (a split's fields are read at
        split nodes only; values from the statistics, clipped to ``bounds`` if given).
        ``kind``, ``category_offset``, ``category_n_codes`` and ``category_branch`` None: every
        split a threshold, no category maps."""
        is_split = left != TREE_LEAF
        safe = np.where(weight > 0.0, weight, 1.0)
        if self.params.criterion_code == CRITERION_ABSOLUTE_ERROR:
            value = stats[:, 3::4][:, :, None]  # each output's weighted median
        elif self.multi_output is not None:
            value = _multi_output_values(stats, safe, self.multi_output[1], self.n_classes)
        elif self.n_classes is None:
            value = (stats[:, 1] / safe)[:, None, None]
        else:
            value = (stats / safe[:, None])[:, None, :]
        if bounds is not None:
            _clip_values(value, bounds, classification=self.n_classes is not None)
        return Tree(
            children_left=left, children_right=right,
            feature=np.where(is_split, feature, TREE_UNDEFINED),
            threshold=np.where(is_split, threshold, float(TREE_UNDEFINED)),
            value=value, impurity=impurity, n_node_samples=n_node_samples,
            weighted_n_node_samples=weight, depth=depth, n_features=self.n_features,
            split_kind=None if kind is None else np.where(is_split, kind, SPLIT_THRESHOLD),
            missing_branch=np.where(is_split, missing_branch, 0),
            category_offset=(None if category_offset is None
                             else np.where(is_split, category_offset, -1)),
            category_n_codes=(None if category_n_codes is None
                              else np.where(is_split, category_n_codes, 0)),
            category_branch=category_branch,
            fractional_missing=self.params.missing == "fractional",
            n_classes=(np.diff(self.multi_output[1]) if self.multi_output is not None
                       and self.n_classes is not None else None),
        )


def _own_maps(offset, n_codes, category_map):
    """One tree's category maps out of several trees' (``offset`` -1: a node without one),
    in the order they were described, and their offsets into them: what that tree grown alone
    holds."""
    described = np.flatnonzero(offset >= 0)
    own_offset = np.full(offset.shape, -1, dtype=np.int64)
    own_offset[described] = np.cumsum(n_codes[described]) - n_codes[described]
    parts = [category_map[offset[i]:offset[i] + n_codes[i]] for i in described]
    maps = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    return own_offset, maps.astype(np.int32, copy=False)


def _multi_output_values(stats, weight, offsets, n_classes):
    """``value`` array (nodes, outputs, max classes) from multi-output statistics: class
    fractions padded with zeros, or per-output means (regression, ``n_classes`` None)."""
    n_outputs = offsets.shape[0] - 1
    if n_classes is None:
        return (stats[:, 1::3] / weight[:, None])[:, :, None]
    width = int(np.max(np.diff(offsets)))
    value = np.zeros((stats.shape[0], n_outputs, width))
    for k in range(n_outputs):
        block = stats[:, offsets[k]:offsets[k + 1]]
        value[:, k, :block.shape[1]] = block / weight[:, None]
    return value


def _clip_values(value, bounds, classification):
    """Clip every node's constrained value to its range, in place (scikit-learn's rule; for two
    classes the other class gets the rest)."""
    v = value[:, 0, 0]
    lower, upper = bounds[:, 0], bounds[:, 1]
    value[:, 0, 0] = np.where(v < lower, lower, np.where(v > upper, upper, v))
    if classification and value.shape[2] == 2:
        value[:, 0, 1] = 1.0 - value[:, 0, 0]


def _rows_of(batch, rows):
    """A function of a field's name giving the batch's values of that field at ``rows`` (sorted
    node positions), contiguous: the batch's own array when ``rows`` is every node (most levels
    of a small tree), without a copy."""
    every = rows.size == batch.ids.size

    def take(name):
        values = getattr(batch, name)
        return np.ascontiguousarray(values if every else values[rows])

    return take


@njit(cache=True)
def _child_segments(start, n_branches, branch_rows):
    """Children of split nodes, in node order then branch order: each child's parent (its
    position among the nodes), its segment ``[child_start, child_end)`` (the branches' rows one
    after another from the parent's ``start``), and each parent's first child (its position
    among the children)."""
    n_children = branch_rows.shape[0]
    parent_of_child = np.empty(n_children, dtype=np.int64)
    child_start = np.empty(n_children, dtype=np.int64)
    child_end = np.empty(n_children, dtype=np.int64)
    first_child = np.empty(start.shape[0], dtype=np.int64)
    c = 0
    for node in range(start.shape[0]):
        first_child[node] = c
        position = start[node]
        for _ in range(n_branches[node]):
            parent_of_child[c] = node
            child_start[c] = position
            position += branch_rows[c]
            child_end[c] = position
            c += 1
    return parent_of_child, child_start, child_end, first_child
