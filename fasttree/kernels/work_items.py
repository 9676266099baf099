"""Work items: a level's work cut into tasks of equal rows, so that every core has work whatever
the data's shape (one feature or hundreds, one node or thousands).

numba's parallel loops hand each thread an equal share of the iterations, so a loop over
features leaves cores idle when there are fewer features than cores, and a loop over nodes when
one node holds most rows.  A loop over tasks does not: the level's (feature, node) pairs, one
after another, are cut into tasks of equal rows, a power of two of them (so 2, 4, ..., 64
threads get as many each).  A task runs its items in turn: the chunk of a pair cut at the
task's start, the whole pairs inside it (one item), the chunk of a pair cut at its end::

    pairs (feature, node) and their rows:  (0, a) 4M                 (0, b) 10k  (0, c) 10k  ...
    tasks:                                 | task 0 | ... | task 31      ...                |
    items:                                 [chunk 0] ... [chunk 31]  [(0, b) (0, c) ...]

A chunk is scanned from its offset with the statistics of the rows before it (their prefix over
the pair's chunks), and the chunks' best candidates are reduced in order, so the lowest
threshold still wins a tie.  The trees are the same for any thread count because a cut cannot
change a sum: class counts with integer weights add up exactly in any order, and sums of floats
(regression, gradients) are added in blocks of ``SUM_BLOCK_ROWS`` rows of the node, each block
from zero and the blocks one after another, by one scan as by chunks cut at block boundaries
(:func:`chunk_sum_prefix`).  So these searches cut one task a thread
(:func:`exact_tasks`) and few pairs are summed twice; only class counts of float weights cut a
level by its rows alone (:func:`tasks_per_level`), which no thread count changes.
"""

import numpy as np
from .._jit import njit

from .._dtypes import CRITERION_GRADIENT, CRITERION_SQUARED_ERROR
from .node_stats import run_segment_class_weights, run_segment_target_sums

#: a task holds at least this many rows (unless the level has fewer): below, a chunk's fixed
#: costs (its prefix statistics, its slot in the reduction) would show next to its scan
MIN_TASK_ROWS = 1 << 14
#: a level is cut into at most this many tasks, two per thread for 64 threads (at 512 items,
#: the root search of 1M x 20 took about 16 % longer than one scan per pair); a power of two
MAX_TASKS = 128
#: a pair's fixed cost, in rows, where tasks are cut by rows (its bounds, its tests, its store),
#: so that a run of many tiny pairs is not cut as if they were free
PAIR_COST = 16
#: float sums of a node's rows are added in blocks of this many rows (each block from zero, then
#: the blocks in order), so that chunks cut at block boundaries give every sum of one scan
SUM_BLOCK_ROWS = 1 << 12


@njit(cache=True, inline="always")
def largest_node(seg_start, seg_end):
    """Rows of a level's largest node (at least 1): what a task's per-node scratch holds."""
    largest = np.int64(1)  # not the constant 1: a callee is typed for the first type seen
    for s in range(seg_start.shape[0]):
        largest = max(largest, seg_end[s] - seg_start[s])
    return largest


def row_chunks(rows, chunk_rows):
    """Ranges of rows cut into chunks of ``chunk_rows`` rows, the last one of each range shorter
    (an empty range: one empty chunk): the one cut of the chunked moves and the routing.

    Parameters
    ----------
    rows : ndarray of shape (n_ranges,), int64
        Rows of each range.
    chunk_rows : int
        Rows of a chunk (at least 1).

    Returns
    -------
    first_chunk : ndarray of shape (n_ranges + 1,), int64
        Range ``i``'s chunks are ``first_chunk[i] .. first_chunk[i + 1] - 1``; chunk ``c`` of
        range ``i`` starts ``(c - first_chunk[i]) * chunk_rows`` rows into it.
    chunk_range : ndarray of shape (first_chunk[-1],), int64
        The range of every chunk.
    """
    if int(chunk_rows) < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    rows = np.asarray(rows, dtype=np.int64)
    return chunk_index(np.maximum(1, -(-rows // int(chunk_rows))))


def chunk_index(n_chunks):
    """Where each range's chunks are, given how many each range has: ``first_chunk`` (shape
    ``(n_ranges + 1,)``, range ``i``'s chunks are ``first_chunk[i] .. first_chunk[i + 1] - 1``)
    and ``chunk_range`` (the range of every chunk)."""
    n_chunks = np.asarray(n_chunks, dtype=np.int64)
    first_chunk = np.zeros(n_chunks.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_chunks, out=first_chunk[1:])
    return first_chunk, np.repeat(np.arange(n_chunks.shape[0], dtype=np.int64), n_chunks)


def chunks_by_rows(rows, total_chunks):
    """Chunks of each range of ``rows`` rows when ``total_chunks`` are shared out by the ranges'
    rows: range ``j``'s chunks end at ``round(total_chunks * its running rows / all rows)``, at
    least one each."""
    total = int(rows.sum())
    ends = (2 * total_chunks * np.cumsum(rows) + total) // (2 * total)
    return np.maximum(1, np.diff(ends, prepend=0))


def even_chunks(starts, rows, n_chunks):
    """Ranges ``[starts, starts + rows)`` each cut evenly into ``n_chunks`` chunks (the cut of
    the chunked movers): each chunk's range and its ``[lo, hi)``, ranges in order."""
    first, owner = chunk_index(n_chunks)
    j = np.arange(owner.size) - first[owner]
    k = np.asarray(n_chunks)[owner]
    return owner, starts[owner] + j * rows[owner] // k, starts[owner] + (j + 1) * rows[owner] // k


def tasks_per_level(total_rows):
    """Tasks a level of ``total_rows`` (feature, node) rows in all is cut into: the largest
    power of two, at most ``MAX_TASKS``, that leaves each task ``MIN_TASK_ROWS`` rows (1 for a
    smaller level)."""
    # the kernels' own formula run as Python: one formula, nothing compiled for this call
    return getattr(_task_count, "py_func", _task_count)(int(total_rows))


@njit(cache=True, inline="always")
def _task_count(total_rows):
    """:func:`tasks_per_level`, for the kernels that cut their own tasks (:func:`grid_tasks`)."""
    fits = min(max(1, total_rows // MIN_TASK_ROWS), MAX_TASKS)
    n_tasks = 1
    while n_tasks * 2 <= fits:
        n_tasks *= 2
    return n_tasks


def exact_tasks(total_rows, n_threads):
    """Tasks of a level whose statistics no cut can change (integer class counts, sums added in
    blocks): :func:`tasks_per_level`, but at most one a thread.  Tasks of equal rows need no
    more to share a level evenly, every chunk's rows but the last's are summed once more ahead of
    its scan (:func:`chunk_class_prefix`, :func:`chunk_sum_prefix`), and fewer tasks cut fewer
    pairs (B3: 8 % less time than four a thread, end to end); any cut gives the same sums, so
    this one may follow the thread count and the trees do not."""
    return min(tasks_per_level(total_rows), max(1, int(n_threads)))


@njit(cache=True)
def grid_tasks(seg_start, seg_end, n_features):
    """A level's (feature, node) grid, feature-major, cut into tasks of about equal rows, for a
    kernel whose pairs are never cut (each scans a node's rows once at most) and that every
    feature scans alike: a pair's work is its node's rows plus ``PAIR_COST``.

    Tasks: :func:`tasks_per_level` of the level's work.  Task ``t`` runs the pairs
    ``first[t] .. first[t + 1] - 1`` (pair ``q``: feature ``q // n_nodes``, node
    ``q % n_nodes``), starting at the first pair whose work before it reaches ``t / n_tasks``
    of the level's.  The cut depends on the nodes' sizes only, and the pairs write their own
    slots, so no cut changes a result.  O(n_nodes + n_tasks log n_nodes): the grid is never
    listed.

    Returns
    -------
    first : ndarray of shape (n_tasks + 1,), int64
    """
    n_segments = seg_start.shape[0]
    before = np.empty(n_segments + 1, dtype=np.int64)  # a feature's work before each node
    before[0] = 0
    for s in range(n_segments):
        before[s + 1] = before[s] + seg_end[s] - seg_start[s] + PAIR_COST
    per_feature = before[n_segments]
    total = per_feature * n_features
    n_tasks = _task_count(total)
    first = np.empty(n_tasks + 1, dtype=np.int64)
    for t in range(n_tasks + 1):
        target = (t * total + n_tasks - 1) // n_tasks  # the first whole unit of work at t / n
        if per_feature == 0 or target >= total:
            first[t] = n_features * n_segments if t > 0 else 0
            continue
        f = target // per_feature
        s = np.searchsorted(before[:n_segments], target - f * per_feature)
        first[t] = f * n_segments + s
    return first


class WorkItems:
    """Pairs (feature, node), the items that cover them and the tasks that run the items.

    Parameters
    ----------
    pair_feature, pair_segment : ndarray of shape (n_pairs,), int64
        The pairs, feature-major.
    pair_rows : ndarray of shape (n_pairs,), int64
        Their rows.
    chunkable : ndarray of shape (n_pairs,), bool
        Whether a pair may be cut into chunks (else it is scanned whole, in the task where it
        starts).
    n_tasks : int, optional
        Tasks of the level; by default :func:`tasks_per_level` of its rows.
    granule : int, optional
        A chunk starts at a multiple of this many rows of its pair (a chunk may then run up to
        ``granule - 1`` rows past its task's end): ``SUM_BLOCK_ROWS`` for sums added in blocks.

    Attributes
    ----------
    task_item : ndarray of shape (n_tasks + 1,), int64
        Task ``t`` runs the items ``task_item[t] .. task_item[t + 1] - 1`` (the parallel loop's
        iterations; a task may have none).
    item_first, item_stop : ndarray of shape (n_items,), int64
        Item ``i`` covers the pairs ``item_first[i] .. item_stop[i] - 1``.
    item_lo, item_hi : ndarray of shape (n_items,), int64
        For a chunk of a pair (one pair, ``item_hi[i] > 0``): its positions ``[lo, hi)`` counted
        from the node's first row; 0 and 0 for an item covering whole pairs.
    pair_chunk : ndarray of shape (n_pairs,), int64
        First item (chunk) of a pair cut into chunks, -1 for a pair covered whole.
    pair_n_chunks : ndarray of shape (n_pairs,), int64
        Its number of chunks (1 for a pair covered whole).
    n_chunked : int
        Pairs cut into chunks.
    """

    def __init__(self, pair_feature, pair_segment, pair_rows, chunkable, n_tasks=None,
                 granule=1):
        if n_tasks is None:
            n_tasks = tasks_per_level(pair_rows.sum())
        self.pair_feature = pair_feature
        self.pair_segment = pair_segment
        (self.task_item, self.item_first, self.item_stop, self.item_lo, self.item_hi,
         self.pair_chunk, self.pair_n_chunks, self.n_chunked) = _plan(
             pair_rows, chunkable, np.int64(max(1, n_tasks)), np.int64(max(1, granule)))

    @classmethod
    def one_task(cls, pair_feature, pair_segment):
        """The items of one task, as ``WorkItems(..., n_tasks=1)`` cuts them (one item of every
        pair, none cut), without a plan to work out: a small level's."""
        items = cls.__new__(cls)
        n_pairs = pair_feature.shape[0]
        items.pair_feature = pair_feature
        items.pair_segment = pair_segment
        items.task_item = np.array([0, min(n_pairs, 1)], dtype=np.int64)
        items.item_first = np.zeros(min(n_pairs, 1), dtype=np.int64)
        items.item_stop = np.full(min(n_pairs, 1), n_pairs, dtype=np.int64)
        items.item_lo = items.item_hi = items.item_first
        items.pair_chunk = np.full(n_pairs, -1, dtype=np.int64)
        items.pair_n_chunks = np.ones(n_pairs, dtype=np.int64)
        items.n_chunked = 0
        return items

    def arrays(self):
        """The eight arrays of the items, in the order the kernels take them (after
        ``task_item``)."""
        return (self.pair_feature, self.pair_segment, self.item_first, self.item_stop,
                self.item_lo, self.item_hi, self.pair_chunk, self.pair_n_chunks)


@njit(cache=True)
def _plan(pair_rows, chunkable, n_tasks, granule):
    """Cut the pairs, one after another, into ``n_tasks`` tasks of equal rows: a chunkable pair
    across a task boundary is cut there (rounded up to a multiple of ``granule`` rows of the
    pair) into chunks, the whole pairs of a task are one item, a
    pair that may not be cut goes whole to the task where it starts.  A kernel: in NumPy it
    took about 0.2 ms a level even for a 235-row fit."""
    n_pairs = pair_rows.shape[0]
    total = np.int64(0)
    for q in range(n_pairs):
        total += pair_rows[q]
    pair_chunk = np.full(n_pairs, -1, dtype=np.int64)
    pair_n_chunks = np.ones(n_pairs, dtype=np.int64)
    task_item = np.zeros(n_tasks + 1, dtype=np.int64)
    # a chunk ends at its pair's end or at a task boundary; a batch starts with a pair
    capacity = 2 * n_pairs + n_tasks  # not zeroed: a deep level has millions of pairs
    item_first = np.empty(capacity, dtype=np.int64)
    item_stop = np.empty(capacity, dtype=np.int64)
    item_lo = np.empty(capacity, dtype=np.int64)
    item_hi = np.empty(capacity, dtype=np.int64)
    n_items = 0
    t = 0  # the open task: it ends at row task_end = (t + 1) * total // n_tasks of the level
    task_end = total // n_tasks
    batch_open = False  # whether item n_items - 1 is a batch of whole pairs of task t
    before = np.int64(0)  # the level's rows before pair q
    n_chunked = 0
    for q in range(n_pairs):
        n = pair_rows[q]
        lo = np.int64(0)
        first_chunk_item = n_items
        while True:
            while t < n_tasks - 1 and before + lo >= task_end:
                t += 1
                task_end = (t + 1) * total // n_tasks
                task_item[t] = n_items
                batch_open = False
            hi = n
            if chunkable[q]:
                cut = task_end - before
                hi = min(n, (cut + granule - 1) // granule * granule)
            if lo == 0 and hi == n:  # whole: into the task's batch
                if batch_open:
                    item_stop[n_items - 1] = q + 1
                else:
                    item_first[n_items] = q
                    item_stop[n_items] = q + 1
                    item_lo[n_items] = 0
                    item_hi[n_items] = 0
                    n_items += 1
                    batch_open = True
                break
            item_first[n_items] = q
            item_stop[n_items] = q + 1
            item_lo[n_items] = lo
            item_hi[n_items] = hi
            n_items += 1
            batch_open = False
            lo = hi
            if lo >= n:
                pair_chunk[q] = first_chunk_item
                pair_n_chunks[q] = n_items - first_chunk_item
                n_chunked += 1
                break
        before += n
    task_item[t + 1:] = n_items
    return (task_item, item_first[:n_items], item_stop[:n_items], item_lo[:n_items],
            item_hi[:n_items], pair_chunk, pair_n_chunks, n_chunked)


def _blocks_before_another(seg_start, pair_feature, pair_segment, item_first, item_lo,
                           item_hi, pair_chunk, pair_n_chunks, block_rows):
    """The rows a prefix adds up, in blocks: a chunk's own rows if another chunk of its pair
    comes after it, cut into blocks of ``block_rows`` rows (a chunk starts at a multiple of
    it).  Returns each block's feature row and positions ``[first, stop)``, and each item's
    blocks, ``first_block[i] .. first_block[i + 1] - 1``."""
    q = item_first
    last_chunk = pair_chunk[q] + pair_n_chunks[q] - 1
    needed = (item_hi > 0) & (np.arange(q.shape[0]) != last_chunk)
    rows = np.where(needed, item_hi - item_lo, 0)
    first_block, block_item = chunk_index(-(-rows // block_rows))
    k = np.arange(block_item.shape[0]) - first_block[block_item]
    offset = item_lo[block_item] + k * block_rows  # from the node's first row
    first = seg_start[pair_segment[q]][block_item] + offset
    stop = first + np.minimum(block_rows, item_hi[block_item] - offset)
    return (pair_feature[q][block_item].astype(np.int64), first.astype(np.int64),
            stop.astype(np.int64), first_block)


@njit(cache=True)
def _block_prefix(own, first_block, pair_chunk, pair_n_chunks):
    """Each chunk's sum of the blocks before it in its pair (``own``: each block's own sum),
    added one block after another from zero, as a scan adds them: the same sums for any cut."""
    prefix = np.zeros((first_block.shape[0] - 1, own.shape[1]))
    for q in range(pair_chunk.shape[0]):
        first = pair_chunk[q]
        if first < 0:
            continue
        for i in range(first + 1, first + pair_n_chunks[q]):
            # element by element: a row copy (prefix[i] = prefix[i - 1]) compiles numba's
            # shape check and its message formatting, 1.6 s of a first classifier fit's compile
            for k in range(own.shape[1]):
                total = prefix[i - 1, k]
                for b in range(first_block[i - 1], first_block[i]):
                    total += own[b, k]
                prefix[i, k] = total
    return prefix


def chunk_class_prefix(sorted_idx, sorted_y, sample_weight, seg_start, pair_feature, pair_segment,
                       item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                       n_classes):
    """Weighted class counts of the rows before each chunk of its node (zeros for the first
    chunk and for items scanning whole pairs), shape (n_items, n_classes).

    Each chunk's own counts, by the node-statistics kernel
    (:func:`~fasttree.kernels.segment_class_weights`, every chunk a segment of its feature
    row, in parallel), then their exclusive prefix per pair in chunk order."""
    if not (item_hi > 0).any():  # no chunk: nothing to add (a small level's 50 us, measured)
        return np.zeros((item_first.shape[0], n_classes))
    feature, first, stop, first_block = _blocks_before_another(
        seg_start, pair_feature, pair_segment, item_first, item_lo, item_hi, pair_chunk,
        pair_n_chunks, np.iinfo(np.int64).max)
    own = run_segment_class_weights(sorted_idx, sorted_y, sample_weight, first, stop, feature,
                                    n_classes)
    return _block_prefix(own, first_block, pair_chunk, pair_n_chunks)


def chunk_sum_prefix(sorted_idx, sorted_y, row_weight, seg_start, pair_feature, pair_segment,
                     item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                     presummed, block_rows):
    """Weight and weighted target sums ``[sum w, sum w*y]`` of the rows before each chunk of
    its node (zeros for the first chunk and for items scanning whole pairs), shape
    (n_items, 2); ``presummed``: the targets are gradients, summed as they are (``sum y``).

    The chunks start at multiples of ``block_rows`` rows of their node (``WorkItems`` with that
    granule).  Each block's own sums by :func:`~fasttree.kernels.segment_target_sums` (in
    parallel, the same additions in the same order as a scan's within a block), then the blocks
    added one after another per pair, as the scan adds them (:func:`_block_prefix`): a chunk
    starts from the very sums one scan of the node would have there."""
    if not (item_hi > 0).any():  # no chunk: nothing to add
        return np.zeros((item_first.shape[0], 2))
    feature, first, stop, first_block = _blocks_before_another(
        seg_start, pair_feature, pair_segment, item_first, item_lo, item_hi, pair_chunk,
        pair_n_chunks, block_rows)
    criterion = CRITERION_GRADIENT if presummed else CRITERION_SQUARED_ERROR
    own = run_segment_target_sums(sorted_idx, sorted_y, row_weight, first, stop, feature,
                                  criterion)
    return _block_prefix(np.ascontiguousarray(own[:, :2]), first_block, pair_chunk,
                         pair_n_chunks)
