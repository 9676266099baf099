"""A splitter whose columns live on other processes: feature-parallel growth, same tree.

Each shard (a :class:`ColumnShard`, run by a worker: a Dask actor in :mod:`fasttree.dask`)
holds a contiguous block of columns for every row, presorted, in an
:class:`~fasttree.splitter.ExactSplitter` of its own, plus the targets and weights.  The driver's
:class:`ShardedSplitter` has the methods :class:`~fasttree.grower.TreeGrower` calls on an
``ExactSplitter``, so the unchanged grower (its selection, stopping rules and ``max_features``
draws) grows the tree.  Per level::

    driver                                  shards (every one)       owners of split features
    ──────                                  ──────────────────       ────────────────────────
    find_splits ── nodes, stats, mask ────► partition (last level's
                                            bitmap), search, keep
                ◄── best split per node ─── the block's best
    (select: lowest children impurity,
     lowest feature on a tie)
    split ──────── chosen splits ─────────────────────────────────► first n_left rows → bit
                ◄── bitmap, children's statistics ──────────────── (stats read from the split
    node_stats: answered from that reply                            feature's row, as one
    partition_prefix: the OR of the bitmaps waits for the next       machine reads them)
    find_splits (or non_constant), which carries it

Two round trips per level (three with ``max_features``: the non-constant features of the
children are needed before the draws).  The tree is the one-machine tree by construction: every
shard runs the one-machine kernels on the same rows in the same order, each shard reduces its
block with :func:`~fasttree.kernels.select_best_splits` (lowest feature wins a tie inside the
block), and the grower's selection over the blocks' winners then picks the lowest feature among
the global minima, as it does over every feature.
"""

import pickle
import time

import numpy as np
from ._dtypes import SELECT_IMPURITY, SPLIT_SUBSET, SPLIT_THRESHOLD, label_dtype
from .kernels import (
    left_rows_bits,
    new_split_record,
    node_impurity,
    partition_segments_bits,
    partition_segments_kway,
    route_rows,
    select_best_splits,
)
from .splitter import ExactSplitter, weight_tables
from .splitter_contract import one_tree

#: One shard's best split of one node, as sent to the driver: 24 bytes.  ``code`` packs the
#: global feature (``code >> 2``), the missing branch (bit 1) and whether the node has rows
#: missing that feature (bit 0: all the grower reads of ``n_missing``, see ``is_prefix``); -1: no
#: valid split in the block.
RECORD_DTYPE = np.dtype([("children_impurity", "<f8"), ("threshold", "<f8"),
                         ("n_left", "<u4"), ("code", "<i4")])


def payload_bytes(obj):
    """Bytes of ``obj`` pickled with protocol 5 (arrays as out-of-band buffers, not copied)."""
    buffers = []
    header = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    return len(header) + sum(b.raw().nbytes for b in buffers)


class ColumnShard:
    """One worker's block of columns, presorted, and the shard's side of each level.

    Parameters
    ----------
    X_block : ndarray of shape (n_samples, n_block_features)
        The block's columns for every row (any real dtype; checked and made float32 here, as the
        estimators do with the whole ``X``).
    y : ndarray of shape (n_samples,)
        Class codes ``0 .. n_classes - 1`` (any integer dtype) or float64 targets, already
        without the zero-weight rows.
    sample_weight : ndarray of shape (n_samples,), float64, or None
    rows : ndarray of shape (n_rows_of_X_block,), bool, or None
        Rows of ``X_block`` to keep (the rows of positive weight), None for all.
    first_feature : int
        Global index of the block's first column.
    settings : dict
        ``n_classes``, ``criterion_code``, ``min_samples_leaf`` and ``min_weight_leaf``.
    n_threads : int
        numba threads for this shard's kernels, set before every call (numba's thread count is
        per calling thread, and Dask's nanny sets ``OMP_NUM_THREADS=1``).
    """

    def __init__(self, X_block, y, sample_weight, rows, first_feature, settings, n_threads):
        from ._validation import check_X

        t0 = time.perf_counter()
        X = check_X(X_block, order="C")
        if rows is not None:
            X = np.ascontiguousarray(X[rows])
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"a column block has {X.shape[0]} rows, y has {y.shape[0]}")
        self._setup(X, y, sample_weight, first_feature, settings, n_threads)
        warm_up(settings, sample_weight is not None, n_threads)
        self.setup_seconds = time.perf_counter() - t0

    def _setup(self, X, y, sample_weight, first_feature, settings, n_threads):
        self.n_threads = int(n_threads)
        self._begin(None)
        self.first_feature = int(first_feature)
        self.splitter = ExactSplitter.from_data(
            X, y, sample_weight, n_classes=settings["n_classes"],
            n_categories=np.zeros(X.shape[1], dtype=np.int64),
            criterion_code=settings["criterion_code"],
            min_samples_leaf=settings["min_samples_leaf"],
            min_weight_leaf=settings["min_weight_leaf"], categorical_kind=SPLIT_SUBSET)

    def _begin(self, partition):
        """Set numba's threads for this call, apply ``partition``; the call's start time."""
        import numba

        t0 = time.perf_counter()
        numba.set_num_threads(self.n_threads)
        if partition is not None:
            self._partition(*partition)
        return t0

    def _partition(self, bitmap, seg_start, seg_end, n_left):
        """Move the rows of binary splits in every column, left rows first (stable): the bit of
        a row is 1 when it goes left (``np.packbits(..., bitorder="little")``)."""
        sp = self.splitter
        partition_segments_bits(sp.sorted_x, sp.sorted_idx, sp.sorted_y, seg_start, seg_end,
                                n_left, bitmap)

    def describe(self):
        """``(missing_features, n_threads, threading layer, set-up seconds, seconds)`` of this
        shard: the seconds its set-up took (check, presort), then this call's."""
        import numba

        t0 = self._begin(None)
        return (self.splitter.missing_features, numba.get_num_threads(),
                numba.threading_layer(), self.setup_seconds, time.perf_counter() - t0)

    def node_stats(self, start, end, feature):
        """Statistics of nodes read from the rows of the block's (local) ``feature``."""
        t0 = self._begin(None)
        stats = self.splitter.node_stats(start, end, feature)
        return stats, time.perf_counter() - t0

    def non_constant(self, partition, start, end):
        """Apply ``partition``; the block's non-constant mask of the nodes, as packed bits."""
        t0 = self._begin(partition)
        bits = np.packbits(self.splitter.non_constant(start, end))
        return bits, time.perf_counter() - t0

    def search(self, partition, start, end, stats, mask_bits):
        """Apply ``partition``, search the block and return its best split per node
        (:data:`RECORD_DTYPE`).  ``mask_bits``: the block's rows of the feature mask, packed;
        None for every feature."""
        t0 = self._begin(partition)
        sp = self.splitter
        k = start.shape[0]
        if mask_bits is None:
            mask = np.ones((sp.n_features, k), dtype=np.uint8)
        else:
            mask = np.unpackbits(mask_bits, count=sp.n_features * k).reshape(sp.n_features, k)
        record = sp.find_splits(start, end, stats, mask)
        best = select_best_splits(record.children_impurity, record.gain, record.split_info,
                                  record.n_branches, SELECT_IMPURITY)
        f, nodes = np.maximum(best, 0), np.arange(k)
        out = np.empty(k, dtype=RECORD_DTYPE)
        out["children_impurity"] = record.children_impurity[f, nodes]
        out["threshold"] = record.threshold[f, nodes]
        out["n_left"] = record.n_left[f, nodes]
        out["code"] = np.where(
            best >= 0, 4 * (best + self.first_feature) + 2 * record.missing_branch[f, nodes]
            + (record.n_missing[f, nodes] > 0), -1)
        return out, time.perf_counter() - t0

    def route(self, start, end, feature, threshold, missing_branch, n_left, prefix):
        """Where the rows of the splits on this block's features go, and their children's
        statistics.

        Prefix splits (no missing rows, or missing rows going right) send the first ``n_left``
        positions of the split feature's row left; the others (missing rows going left) are
        routed by value and moved here at once, so that their children's statistics can be read
        from the split feature's row as one machine reads them.

        Returns
        -------
        bitmap : ndarray of uint8
            One bit per row (little bit order), 1 for the rows going left (0 for rows of other
            nodes).
        routed_rows : ndarray of shape (2 * n_routed,), int64
            Rows per branch of the routed splits.
        child_stats : ndarray of shape (2 * n_nodes, n_stats)
            Left then right child of each node.
        seconds : float
        """
        t0 = self._begin(None)
        sp = self.splitter
        left_bits = left_rows_bits(sp.sorted_idx, start[prefix], end[prefix], feature[prefix],
                                   n_left[prefix], sp.n_samples)
        routed = np.flatnonzero(~prefix)
        routed_rows = np.zeros(0, dtype=np.int64)
        left = n_left.copy()
        if routed.size:
            r_start, r_end = start[routed], end[routed]
            n = routed.size
            offset = 2 * np.arange(n + 1, dtype=np.int64)
            row_branch = np.full(sp.n_samples, -1, dtype=np.int32)  # -1 outside the routed nodes
            routed_rows, _, _ = route_rows(
                sp.sorted_x, sp.sorted_idx, sp.sample_weight, r_start, r_end, feature[routed],
                np.full(n, SPLIT_THRESHOLD, dtype=np.int64),
                np.ascontiguousarray(threshold[routed]), missing_branch[routed],
                np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64),
                np.zeros(0, dtype=np.int32), offset, row_branch)
            left_bits |= np.packbits(row_branch == 0, bitorder="little")
            partition_segments_kway(sp.sorted_x, sp.sorted_idx, sp.sorted_y, r_start, r_end,
                                    offset, routed_rows, row_branch)
            left[routed] = routed_rows[0::2]
        child_start = np.repeat(start, 2)
        child_start[1::2] += left
        child_end = np.repeat(end, 2)
        child_end[0::2] = start + left
        stats = sp.node_stats(child_start, child_end, np.repeat(feature, 2))
        return (left_bits, routed_rows, stats,
                time.perf_counter() - t0)


_WARM_KINDS = set()


def warm_up(settings, weighted, n_threads):
    """Run every kernel a shard of this kind of fit calls, once per process, on tiny data.

    The split search is compiled per kind of call (weights, two classes or more, criterion,
    missing values or not: see :func:`fasttree._jit.specialized`), so warming a fixed set would
    miss some; this runs the fit's own kinds, both with and without missing values, during the
    shard's set-up, so that no level waits for numba to load or compile a kernel.
    """
    n_classes = settings["n_classes"]
    key = (n_classes if n_classes is None or n_classes <= 2 else min(n_classes, 257),
           settings["criterion_code"], weighted)
    if key in _WARM_KINDS:
        return
    n = 16
    X = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    X[-3:, 1] = np.nan  # feature 1 misses values in the last rows
    if n_classes is None:
        y = np.linspace(1.0, 2.0, n)
    else:
        y = (np.arange(n) % n_classes).astype(label_dtype(n_classes))
    shard = ColumnShard.__new__(ColumnShard)
    shard._setup(X, y, np.linspace(0.5, 1.5, n) if weighted else None, 0, settings, n_threads)
    start, end, zero = np.array([0]), np.array([n]), np.zeros(1, dtype=np.int64)
    stats, _ = shard.node_stats(start, end, zero)
    shard.non_constant(None, start, end)
    shard.search(None, start, end, stats, None)  # may miss values
    part = np.array([8])
    part_stats, _ = shard.node_stats(zero, part, zero)
    shard.search(None, zero, part, part_stats, np.packbits(np.ones(2, dtype=bool)))  # may not
    # feature 1 with its missing rows going left: routed by value, then moved
    bitmap, _, _, _ = shard.route(start, end, np.ones(1, dtype=np.int64), np.array([40.0]),
                                  zero, np.array([n - 3]), np.array([False]))
    shard.route(start, end, zero, np.array([7.5]), np.ones(1, dtype=np.int64), part,
                np.array([True]))
    shard.search((bitmap, start, end, np.array([n - 3])), start, end, stats, None)
    _WARM_KINDS.add(key)


class ShardLost(Exception):
    """Raised by a transport (``call_shards``) for shard number ``shard`` that did not answer:
    ``cause`` says what the transport saw (a timeout, a closed connection)."""

    def __init__(self, shard, cause):
        super().__init__(shard, cause)
        self.shard, self.cause = shard, cause


class ShardedSplitter:
    """The driver's side: :class:`~fasttree.splitter.ExactSplitter`'s interface over shards.

    Parameters
    ----------
    call_shards : callable
        ``call_shards(method, calls, timeout)`` calls ``method`` on the given
        :class:`ColumnShard` objects at once (``calls`` a list of ``(shard, args)``, shards
        numbered in column order) and returns their answers in that order; a shard that does not
        answer within ``timeout`` seconds, or whose worker is gone, raises :class:`ShardLost`.
        :mod:`fasttree.dask` calls Dask actors.
    names : list of str
        A name per shard for messages (the worker's address).
    blocks : ndarray of shape (n_shards + 1,), int64
        Shard ``j`` holds the global features ``blocks[j] .. blocks[j + 1] - 1``.
    n_samples : int
    sample_weight : ndarray of shape (n_samples,), float64, or None
    n_classes : int or None
    criterion_code : int
    timeout : float
        Seconds each round trip may take before the fit is abandoned with an error.

    Attributes
    ----------
    levels : list of dict
        Per level (per ``split`` call of the grower, after the root's entry): ``round_trips``,
        ``bytes_out`` and ``bytes_in`` per shard (pickled payloads, driver to shard and back),
        and ``compute_seconds`` (the slowest shard's time in kernels, summed over round trips),
        ``wait_seconds`` (the slowest minus the fastest shard: imbalance) and
        ``communication_seconds`` (wall time of the round trips minus the slowest shard's
        compute: serialization, transport, scheduling).
    timings : dict of str to float
        Driver wall seconds per phase (``node_stats``, ``search``, ``route``).
    """

    capabilities = frozenset({"poisson"})
    one_output_only = frozenset()
    choice = "a sharded fit (fasttree.dask)"
    remedy = "fit fasttree's single-machine estimator"

    def __init__(self, call_shards, names, blocks, n_samples, sample_weight, n_classes,
                 criterion_code, timeout):
        self.call_shards, self.names = call_shards, list(names)
        self.blocks = np.asarray(blocks, dtype=np.int64)
        self.n_features = int(self.blocks[-1])
        self.n_samples = int(n_samples)
        self.criterion_code = criterion_code
        self.timeout = float(timeout)
        _, root_weight, _ = weight_tables(sample_weight, self.n_samples, n_classes,
                                          criterion_code)
        self.tree_offsets, self.tree_weights = one_tree(self.n_samples, root_weight)
        self.timings = {}
        self.levels = []
        self._new_level()
        self._pending = None  # (bitmap, [(start, end, n_left) arrays]) not yet applied
        self._child_stats = None  # (child start, child end, stats) from the last split
        described = self._round_trip("describe", [(j, ()) for j in range(len(self.names))])
        self.missing_features = np.concatenate([d[0] for d in described])
        self.shard_threads = [(d[1], d[2]) for d in described]
        self.shard_setup_seconds = [float(d[3]) for d in described]
        self.levels.pop()  # the set-up round trip is no level's
        self._new_level()

    category_map = np.zeros(0, dtype=np.int32)  # numeric splits only

    # -- transport ---------------------------------------------------------------------------
    def _new_level(self):
        n = len(self.names)
        self.levels.append({"round_trips": 0, "bytes_out": [0] * n, "bytes_in": [0] * n,
                            "compute_seconds": 0.0, "wait_seconds": 0.0,
                            "communication_seconds": 0.0})

    def _round_trip(self, method, calls):
        """Call ``method`` on the given shards at once, ``calls`` a list of (shard, args);
        return their results without the compute seconds; account them to the current level.

        Raises
        ------
        RuntimeError
            A shard that does not answer within ``timeout`` seconds, or whose worker is gone.
        """
        level = self.levels[-1]
        t0 = time.perf_counter()
        for j, args in calls:
            level["bytes_out"][j] += payload_bytes(args)
        try:
            answers = self.call_shards(method, calls, self.timeout)
        except ShardLost as lost:
            j = lost.shard
            raise RuntimeError(
                f"worker {self.names[j]} holding features {self.blocks[j]}.."
                f"{self.blocks[j + 1] - 1} did not answer {method!r} within "
                f"timeout={self.timeout:g} s ({lost.cause}); the worker died, was removed or is "
                "stuck, so the fit was abandoned") from lost.__cause__
        results, seconds = [], []
        for (j, _), answer in zip(calls, answers):
            level["bytes_in"][j] += payload_bytes(answer)
            results.append(answer[:-1] if len(answer) > 2 else answer[0])
            seconds.append(answer[-1])
        wall = time.perf_counter() - t0
        level["round_trips"] += 1
        level["compute_seconds"] += max(seconds)
        level["wait_seconds"] += max(seconds) - min(seconds)
        level["communication_seconds"] += wall - max(seconds)
        return results

    def _take_pending(self):
        """The partition every shard must apply before reading the layout, then forgotten."""
        if self._pending is None:
            return None
        bitmap, parts = self._pending
        self._pending = None
        start, end, n_left = (np.concatenate(a) for a in zip(*parts))
        return bitmap, start, end, n_left

    def _owner(self, feature):
        return np.searchsorted(self.blocks, feature, side="right") - 1

    def _timed(self, phase, t0):
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0

    # -- the grower's interface --------------------------------------------------------------
    def node_stats(self, start, end, feature):
        """Statistics of nodes: the children of the last split from its reply, else (the root)
        read by the owner of each node's ``feature``."""
        cached, self._child_stats = self._child_stats, None
        if (cached is not None and np.array_equal(cached[0], start)
                and np.array_equal(cached[1], end)):
            return cached[2]
        if self._pending is not None:
            raise RuntimeError("node statistics asked between a split and its partition")
        t0 = time.perf_counter()
        owner = self._owner(feature)
        calls = [(j, (start[owner == j], end[owner == j], feature[owner == j] - self.blocks[j]))
                 for j in np.unique(owner)]
        parts = self._round_trip("node_stats", calls)
        stats = None
        for (j, _), part in zip(calls, parts):
            if stats is None:
                stats = np.empty((start.shape[0], part.shape[1]))
            stats[owner == j] = part
        self._timed("node_stats", t0)
        return stats

    def non_constant(self, start, end):
        """(n_features, n_nodes) mask of the features not constant in each node."""
        t0 = time.perf_counter()
        pending = self._take_pending()
        k = start.shape[0]
        parts = self._round_trip("non_constant", [(j, (pending, start, end))
                                                  for j in range(len(self.names))])
        mask = np.concatenate([
            np.unpackbits(bits, count=(self.blocks[j + 1] - self.blocks[j]) * k).reshape(-1, k)
            for j, bits in enumerate(parts)]).astype(bool)
        self._timed("search", t0)
        return mask

    def find_splits(self, start, end, stats, mask, bounds=None, draws=None):
        """A SplitRecord holding each block's best split per node (the other pairs empty)."""
        if bounds is not None:
            raise ValueError("a sharded fit takes no monotonicity constraints")
        if draws is not None:
            raise ValueError("a sharded fit has no random thresholds")
        t0 = time.perf_counter()
        pending = self._take_pending()
        k = start.shape[0]
        every = bool(mask.all())
        calls = [(j, (pending, start, end, stats,
                      None if every else np.packbits(mask[self.blocks[j]:self.blocks[j + 1]])))
                 for j in range(len(self.names))]
        parts = self._round_trip("search", calls)
        record = new_split_record(self.n_features, k)
        weight, impurity = node_impurity(stats, self.criterion_code)
        for part in parts:
            nodes = np.flatnonzero(part["code"] >= 0)
            code = part["code"][nodes]
            f = code >> 2
            record.children_impurity[f, nodes] = part["children_impurity"][nodes]
            # gain as the kernels define it (the impurity rule selects on children_impurity)
            record.gain[f, nodes] = (impurity[nodes]
                                     - part["children_impurity"][nodes] / weight[nodes])
            record.threshold[f, nodes] = part["threshold"][nodes]
            record.n_left[f, nodes] = part["n_left"][nodes]
            record.n_branches[f, nodes] = 2
            record.missing_branch[f, nodes] = (code >> 1) & 1
            record.n_missing[f, nodes] = code & 1
        self._timed("search", t0)
        return record

    def describe_categorical(self, *args):
        raise ValueError("a sharded fit takes numeric features only")

    def is_prefix(self, kind, n_missing, missing_branch):
        """As :meth:`ExactSplitter.is_prefix <fasttree.splitter.ExactSplitter.is_prefix>`
        (no fractional rows)."""
        return (kind == SPLIT_THRESHOLD) & ((n_missing == 0) | (missing_branch == 1))

    def split(self, start, end, feature, kind, threshold, missing_branch, n_branches, n_left,
              n_missing, category_offset, category_n_codes):
        """Rows per branch of every split node, from one round trip to the owners of the split
        features (which also return the children's statistics and the rows' directions)."""
        if np.any(kind != SPLIT_THRESHOLD):
            raise ValueError("a sharded fit takes numeric features only")
        self._new_level()
        t0 = time.perf_counter()
        prefix = self.is_prefix(kind, n_missing, missing_branch)
        owner = self._owner(feature)
        shards = np.unique(owner)
        calls = []
        for j in shards:
            on = owner == j
            calls.append((j, (start[on], end[on], feature[on] - self.blocks[j], threshold[on],
                              missing_branch[on], n_left[on], prefix[on])))
        replies = self._round_trip("route", calls)
        left = n_left.copy()
        stats = None
        bitmap = None if self._pending is None else self._pending[0]
        for j, (bits, routed_rows, child_stats) in zip(shards, replies):
            on = np.flatnonzero(owner == j)
            left[on[~prefix[on]]] = routed_rows[0::2]
            if stats is None:
                stats = np.empty((2 * start.shape[0], child_stats.shape[1]))
            stats[np.repeat(2 * on, 2) + np.tile([0, 1], on.size)] = child_stats
            bitmap = bits if bitmap is None else bitmap | bits
        parts = [] if self._pending is None else self._pending[1]
        routed = ~prefix
        if routed.any():  # moved on their owner already; the other shards move them next time
            parts.append((start[routed], end[routed], left[routed]))
        self._pending = (bitmap, parts)
        branch_rows = np.empty(2 * start.shape[0], dtype=np.int64)
        branch_rows[0::2] = left
        branch_rows[1::2] = end - start - left
        child_start = np.repeat(start, 2)
        child_start[1::2] += left
        child_end = np.repeat(end, 2)
        child_end[0::2] = start + left
        self._child_stats = (child_start, child_end, stats)
        self._timed("route", t0)
        return start, end, branch_rows

    def partition_prefix(self, start, end, feature, n_left):
        """Queue the move of prefix splits' rows; it travels with the next search."""
        if start.size:
            self._pending[1].append((start, end, n_left))
