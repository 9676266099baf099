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

#: an item holds at least this many rows: below, a chunk's fixed costs (its prefix statistics,
#: its slot in the reduction) would show next to its scan
MIN_ITEM_ROWS = 1 << 14
#: a level is cut into about this many items, about eight per thread for 64 threads
TARGET_ITEMS = 512


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


def _plan(pair_rows, chunkable, item_rows):
    """Cut every chunkable pair of more than ``item_rows`` rows into equal chunks; batch each run
    of other pairs (between chunked ones), in order, by ``item_rows`` of the run's rows before
    each pair.  NumPy, not a kernel: O(pairs) and nothing to compile."""
    pair_rows = np.asarray(pair_rows, dtype=np.int64)
    n_pairs = pair_rows.shape[0]
    chunked = np.asarray(chunkable, dtype=bool) & (pair_rows > item_rows)
    n_chunks = np.where(chunked, -(-pair_rows // item_rows), 1)
    # a whole pair starts an item unless it follows a whole pair of its run and batch
    whole_rows = np.where(chunked, 0, pair_rows)
    run = np.cumsum(chunked)
    rows_before = np.cumsum(whole_rows) - whole_rows  # whole rows before the pair, in all
    run_first = np.flatnonzero(np.r_[True, run[1:] != run[:-1]]) if n_pairs else np.zeros(0, int)
    rows_before -= np.repeat(rows_before[run_first], np.diff(np.r_[run_first, n_pairs]))
    batch = rows_before // item_rows
    starts = ~chunked
    starts[1:] &= chunked[:-1] | (run[1:] != run[:-1]) | (batch[1:] != batch[:-1])
    items_of_pair = np.where(chunked, n_chunks, starts)
    first_item = np.cumsum(items_of_pair) - items_of_pair
    n_items = int(items_of_pair.sum())
    # every item's first pair: a chunk's pair, or the pair starting a batch
    item_first = np.repeat(np.arange(n_pairs), items_of_pair)
    item_stop = np.r_[item_first[1:], n_pairs].astype(np.int64)  # a batch: up to the next item
    item_lo = np.zeros(n_items, dtype=np.int64)
    item_hi = np.zeros(n_items, dtype=np.int64)
    in_chunk = np.repeat(chunked, items_of_pair)
    q = item_first[in_chunk]
    j = np.flatnonzero(in_chunk) - first_item[q]  # the chunk's rank in its pair
    item_stop[in_chunk] = q + 1
    item_lo[in_chunk] = j * pair_rows[q] // n_chunks[q]
    item_hi[in_chunk] = (j + 1) * pair_rows[q] // n_chunks[q]
    pair_chunk = np.where(chunked, first_item, -1)
    return item_first.astype(np.int64), item_stop, item_lo, item_hi, pair_chunk, n_chunks


@njit(cache=True, inline="always")
def item_span(i, q, seg_start, seg_end, pair_segment, item_lo, item_hi):
    """Positions ``[first, stop)`` of pair ``q``'s node that item ``i`` covers."""
    s = pair_segment[q]
    if item_hi[i] > 0:
        return seg_start[s] + item_lo[i], seg_start[s] + item_hi[i]
    return seg_start[s], seg_end[s]


@njit(cache=True)
def chunk_class_prefix(sorted_idx, sorted_y, sample_weight, seg_start, pair_feature, pair_segment,
                       item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                       n_classes):
    """Weighted class counts of the rows before each chunk of its node (zeros for the first
    chunk and for items scanning whole pairs), shape (n_items, n_classes).

    Each chunk's own counts, then their exclusive prefix per pair in chunk order.  Serial: one
    more parallel kernel costs seconds of compilation for every new environment, and for two
    classes with unit weights (a vectorized sum of the labels) this pass is a small fraction of
    the scan it feeds."""
    n_items = item_first.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    own = np.zeros((n_items, n_classes))
    for i in range(n_items):
        if item_hi[i] == 0:
            continue
        q = item_first[i]
        if i + 1 == pair_chunk[q] + pair_n_chunks[q]:
            continue  # the last chunk's rows come before no chunk
        # a chunk (item_hi > 0): its span needs no seg_end
        first, stop = item_span(i, q, seg_start, seg_start, pair_segment, item_lo, item_hi)
        labels = sorted_y[pair_feature[q], first:stop]
        ids = sorted_idx[pair_feature[q], first:stop]
        if unit_weight and n_classes == 2:  # a sum the compiler vectorizes
            n_1 = 0
            for p in range(labels.shape[0]):
                n_1 += np.int64(labels[p])
            own[i, 0] = labels.shape[0] - n_1
            own[i, 1] = n_1
        elif unit_weight:  # integer counters: no float addition waiting on the previous one
            counts = np.zeros(n_classes, dtype=np.int64)
            for p in range(labels.shape[0]):
                counts[labels[p]] += 1
            for k in range(n_classes):
                own[i, k] = counts[k]
        else:
            for p in range(labels.shape[0]):
                own[i, labels[p]] += sample_weight[np.uint64(ids[p])]
    prefix = np.zeros((n_items, n_classes))
    for q in range(pair_chunk.shape[0]):
        first = pair_chunk[q]
        if first < 0:
            continue
        for i in range(first + 1, first + pair_n_chunks[q]):
            for k in range(n_classes):
                prefix[i, k] = prefix[i - 1, k] + own[i - 1, k]
    return prefix


@njit(cache=True)
def chunk_sum_prefix(sorted_idx, sorted_y, row_weight, seg_start, pair_feature, pair_segment,
                     item_first, item_stop, item_lo, item_hi, pair_chunk, pair_n_chunks,
                     presummed):
    """Weight and weighted target sums ``[sum w, sum w*y]`` of the rows before each chunk of
    its node (zeros for the first chunk and for items scanning whole pairs), shape
    (n_items, 2); ``presummed``: the targets are gradients, summed as they are (``sum y``)."""
    n_items = item_first.shape[0]
    unit_weight = row_weight.shape[0] == 0
    own = np.zeros((n_items, 2))
    for i in range(n_items):
        if item_hi[i] == 0:
            continue
        q = item_first[i]
        if i + 1 == pair_chunk[q] + pair_n_chunks[q]:
            continue  # the last chunk's rows come before no chunk
        # a chunk (item_hi > 0): its span needs no seg_end
        first, stop = item_span(i, q, seg_start, seg_start, pair_segment, item_lo, item_hi)
        ys = sorted_y[pair_feature[q], first:stop]
        ids = sorted_idx[pair_feature[q], first:stop]
        w_sum = 0.0
        y_sum = 0.0
        for p in range(ys.shape[0]):
            w = 1.0 if unit_weight else row_weight[np.uint64(ids[p])]
            w_sum += w
            y_sum += ys[p] if presummed else w * ys[p]
        own[i, 0] = w_sum
        own[i, 1] = y_sum
    prefix = np.zeros((n_items, 2))
    for q in range(pair_chunk.shape[0]):
        first = pair_chunk[q]
        if first < 0:
            continue
        for i in range(first + 1, first + pair_n_chunks[q]):
            prefix[i, 0] = prefix[i - 1, 0] + own[i - 1, 0]
            prefix[i, 1] = prefix[i - 1, 1] + own[i - 1, 1]
    return prefix
