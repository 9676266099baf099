"""Work items: a level's work cut into pieces of about equal rows, so that every core has work
whatever the data's shape (one feature or hundreds, one node or thousands).

numba's parallel loops hand each thread an equal share of the iterations, so a loop over
features leaves cores idle when there are fewer features than cores, and a loop over nodes when
one node holds most rows.  A loop over items does not: a (feature, node) pair larger than an item
is cut into row chunks, and smaller pairs are batched into one item until it holds about an
item's rows::

    pairs (feature, node) and their rows:  (0, a) 4M     (0, b) 10k  (0, c) 10k  (1, a) ...
    items:                                 [chunk 0] ... [chunk 63]  [(0, b) (0, c)]   ...

A chunked pair is scanned from each chunk's offset with the statistics of the rows before it
(their prefix over the chunks), and the chunks' best candidates are reduced in chunk order, so
the lowest threshold still wins a tie.  Item sizes depend on the level's rows only, never on the
number of threads: the trees are the same for any thread count.
"""

import numpy as np
from .._jit import njit

from .._dtypes import CRITERION_GRADIENT, CRITERION_SQUARED_ERROR
from .node_stats import segment_class_weights, segment_target_sums

#: an item holds at least this many rows: below, a chunk's fixed costs (its prefix statistics,
#: its slot in the reduction) would show next to its scan
MIN_ITEM_ROWS = 1 << 14
#: a level is cut into about this many items, two per thread for 64 threads (at 512, the root
#: search of 1M x 20 took about 16 % longer than one scan per pair; fewer chunks cost less)
TARGET_ITEMS = 128


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
    n_chunks = np.maximum(1, -(-rows // int(chunk_rows)))
    first_chunk = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_chunks, out=first_chunk[1:])
    return first_chunk, np.repeat(np.arange(rows.shape[0], dtype=np.int64), n_chunks)


def rows_per_item(total_rows):
    """Rows of one work item for a level of ``total_rows`` (feature, node) rows in all."""
    return max(MIN_ITEM_ROWS, -(-int(total_rows) // TARGET_ITEMS))


class WorkItems:
    """Pairs (feature, node) and the items that cover them.

    Attributes
    ----------
    pair_feature, pair_segment : ndarray of shape (n_pairs,), int64
        The pairs, feature-major.
    item_first, item_stop : ndarray of shape (n_items,), int64
        Item ``i`` covers the pairs ``item_first[i] .. item_stop[i] - 1``.
    item_lo, item_hi : ndarray of shape (n_items,), int64
        For a chunk of a pair (one pair, ``item_hi[i] > 0``): its positions ``[lo, hi)`` counted
        from the node's first row; 0 and 0 for an item covering whole pairs.
    pair_chunk : ndarray of shape (n_pairs,), int64
        First item of a chunked pair, -1 for a pair covered whole.
    pair_n_chunks : ndarray of shape (n_pairs,), int64
        Its number of chunks (1 for a pair covered whole).
    """

    def __init__(self, pair_feature, pair_segment, pair_rows, chunkable, item_rows=None):
        if item_rows is None:
            item_rows = rows_per_item(pair_rows.sum())
        self.pair_feature = pair_feature
        self.pair_segment = pair_segment
        (self.item_first, self.item_stop, self.item_lo, self.item_hi, self.pair_chunk,
         self.pair_n_chunks) = _plan(pair_rows, chunkable, np.int64(max(1, item_rows)))

    def arrays(self):
        """The eight arrays, in the order the kernels take them."""
        return (self.pair_feature, self.pair_segment, self.item_first, self.item_stop,
                self.item_lo, self.item_hi, self.pair_chunk, self.pair_n_chunks)


@njit(cache=True)
def _plan(pair_rows, chunkable, item_rows):
    """Chunk every chunkable pair of more than ``item_rows`` rows into equal chunks; batch the
    other pairs, in order, into items of at most ``item_rows`` rows (or one pair).  A kernel:
    in NumPy it took about 0.2 ms a level even for a 235-row fit."""
    n_pairs = pair_rows.shape[0]
    pair_chunk = np.full(n_pairs, -1, dtype=np.int64)
    pair_n_chunks = np.ones(n_pairs, dtype=np.int64)
    n_chunks = 0
    for q in range(n_pairs):
        if chunkable[q] and pair_rows[q] > item_rows:
            pair_n_chunks[q] = (pair_rows[q] + item_rows - 1) // item_rows
            n_chunks += pair_n_chunks[q]
    capacity = n_chunks + n_pairs
    item_first = np.empty(capacity, dtype=np.int64)
    item_stop = np.empty(capacity, dtype=np.int64)
    item_lo = np.zeros(capacity, dtype=np.int64)
    item_hi = np.zeros(capacity, dtype=np.int64)
    n_items = 0
    batch_rows = 0  # rows of the open batch (item n_items - 1); 0: none open
    for q in range(n_pairs):
        n = pair_rows[q]
        k = pair_n_chunks[q]
        if k > 1:
            pair_chunk[q] = n_items
            for j in range(k):
                item_first[n_items] = q
                item_stop[n_items] = q + 1
                item_lo[n_items] = j * n // k
                item_hi[n_items] = (j + 1) * n // k
                n_items += 1
            batch_rows = 0
        elif batch_rows > 0 and batch_rows + n <= item_rows:
            item_stop[n_items - 1] = q + 1
            batch_rows += n
        else:
            item_first[n_items] = q
            item_stop[n_items] = q + 1
            n_items += 1
            batch_rows = max(n, 1)
    return (item_first[:n_items], item_stop[:n_items], item_lo[:n_items], item_hi[:n_items],
            pair_chunk, pair_n_chunks)


def _rows_before_another(seg_start, pair_feature, pair_segment, item_first, item_lo, item_hi,
                         pair_chunk, pair_n_chunks):
    """Each item's feature row and positions ``[first, stop)``: a chunk's own rows if another
    chunk of its pair comes after it (the rows a prefix adds up), else an empty range."""
    q = item_first
    last_chunk = pair_chunk[q] + pair_n_chunks[q] - 1
    needed = (item_hi > 0) & (np.arange(q.shape[0]) != last_chunk)
    start = seg_start[pair_segment[q]]
    first = np.where(needed, start + item_lo, 0).astype(np.int64)
    stop = np.where(needed, start + item_hi, 0).astype(np.int64)
    return pair_feature[q].astype(np.int64), first, stop


@njit(cache=True)
def _exclusive_prefix(own, pair_chunk, pair_n_chunks):
    """Each chunk's sum of the chunks before it in its pair (``own``: each chunk's own), in
    chunk order: the same sums for any thread count."""
    prefix = np.zeros_like(own)
    for q in range(pair_chunk.shape[0]):
        first = pair_chunk[q]
        if first < 0:
            continue
        for i in range(first + 1, first + pair_n_chunks[q]):
            for k in range(own.shape[1]):
                prefix[i, k] = prefix[i - 1, k] + own[i - 1, k]
    return prefix


def chunk_class_prefix(sorted_idx, sorted_y, sample_weight, seg_start, pair_feature, pair_segment,
                       item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                       n_classes):
    """Weighted class counts of the rows before each chunk of its node (zeros for the first
    chunk and for items scanning whole pairs), shape (n_items, n_classes).

    Each chunk's own counts, by the node-statistics kernel
    (:func:`~fasttree.kernels.segment_class_weights`, every chunk a segment of its feature
    row, in parallel), then their exclusive prefix per pair in chunk order."""
    feature, first, stop = _rows_before_another(seg_start, pair_feature, pair_segment,
                                                item_first, item_lo, item_hi, pair_chunk,
                                                pair_n_chunks)
    own = segment_class_weights(sorted_idx, sorted_y, sample_weight, first, stop, feature,
                                n_classes)
    return _exclusive_prefix(own, pair_chunk, pair_n_chunks)


def chunk_sum_prefix(sorted_idx, sorted_y, row_weight, seg_start, pair_feature, pair_segment,
                     item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                     presummed):
    """Weight and weighted target sums ``[sum w, sum w*y]`` of the rows before each chunk of
    its node (zeros for the first chunk and for items scanning whole pairs), shape
    (n_items, 2); ``presummed``: the targets are gradients, summed as they are (``sum y``).

    Each chunk's own sums by :func:`~fasttree.kernels.segment_target_sums` (in parallel, the
    same additions in the same order as a scan), then their exclusive prefix per pair."""
    feature, first, stop = _rows_before_another(seg_start, pair_feature, pair_segment,
                                                item_first, item_lo, item_hi, pair_chunk,
                                                pair_n_chunks)
    criterion = CRITERION_GRADIENT if presummed else CRITERION_SQUARED_ERROR
    own = segment_target_sums(sorted_idx, sorted_y, row_weight, first, stop, feature, criterion)
    return _exclusive_prefix(np.ascontiguousarray(own[:, :2]), pair_chunk, pair_n_chunks)
