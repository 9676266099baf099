"""Route each split node's rows to its two children, in place, keeping every feature sorted."""

import bisect

import numba
import numpy as np
from numba import prange

from .._jit import njit, specialized, with_globals
from .._tasks import load_pointer, run_tasks, task_address
from .presort import check_row_ids
from .work_items import chunk_index, chunks_by_rows


#: rows of a chunk when a large (feature, segment) pair is moved by every thread: about
#: MOVE_CHUNK_ROWS, fewer when a feature row's chunked pairs would give a thread fewer than
#: four chunks, not much fewer than MIN_MOVE_CHUNK_ROWS (a chunk's fixed costs would show)
MOVE_CHUNK_ROWS = 1 << 16
MIN_MOVE_CHUNK_ROWS = 1 << 12
#: time per row of a chunked move against a move by one thread (both on one thread, scratch
#: already touched: 0.75 to 1.06 on a 2M-row pair, 1.27 to 1.29 on a 10M-row one)
CHUNKED_MOVE_COST = 1.3

def partition_segments(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_feature,
                       split_n_left, n_ids):
    """Stable in-place partition of the split nodes' segments, every feature row in parallel.

    ::

        before, feature g:  [ r3 r0 r7 r1 r5 ]     rows sorted by x_g inside the node
        goes left:             1  0  1  0  1       decided by the split feature f
        after,  feature g:  [ r3 r7 r5 | r0 r1 ]   left child  |  right child,
                                                   each still sorted by x_g (stable)

    The rows' directions are marked once as one bit per row (:func:`left_rows_bits`), then
    every other feature row is moved as by :func:`partition_segments_bits`; the split feature's
    own row is already in that order and is skipped.

    Parameters
    ----------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous (IN/OUT)
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN/OUT)
    sorted_y : ndarray of shape (n_features, n_samples) or (n_features, 0), C-contiguous (IN/OUT)
        The working layout (see :mod:`fasttree.kernels.split_search`).  Labels carried along for
        classification; pass a zero-width array (any dtype, e.g. uint8) when there are none.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Segments of the nodes to split; ranges must not overlap.
    split_feature : ndarray of shape (n_segments,), int64 (IN)
        Feature each node is split on.
    split_n_left : ndarray of shape (n_segments,), int64 (IN)
        Rows of the node that go left: the first ``split_n_left[s]`` positions of its segment in
        ``sorted_idx[split_feature[s]]``.
    n_ids : int
        Row ids in ``sorted_idx`` are below it: ``n_samples`` for a layout from
        :func:`presort_features`; more in a layout holding some rows only (a bootstrap sample)
        or copies of rows (C4.5's, :func:`partition_segments_fractional`).

    Raises
    ------
    ValueError
        A row id of these segments is negative or not below ``n_ids``.

    Notes
    -----
    After the call, node ``s``'s left child owns ``[seg_start[s], seg_start[s] + split_n_left[s])``
    and its right child ``[seg_start[s] + split_n_left[s], seg_end[s])`` in every feature row.
    The (feature, node) pairs are moved in lanes, one per thread; on several threads a pair
    too large for a lane is moved by all of them in row chunks, through a scratch of up to one
    feature row's rows of such pairs (the result is the same).
    """
    _partition_prefix(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_feature,
                      split_n_left, n_ids, True)


def _partition_prefix(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_feature,
                      split_n_left, n_ids, check, scratch=None):
    """:func:`partition_segments`; the row ids checked only if ``check`` (a grower's own
    layout holds the ids its presort and splitter gave it: checking them again each level read
    every row id once more, 21 of B18's 417 ms); ``scratch`` a :class:`MoveScratch` kept
    between calls."""
    split_feature = np.asarray(split_feature, dtype=np.int64)
    if sorted_x.shape[0] == 1:  # the split feature's row is the only one, in order already
        if check:
            _left_bits(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids, False)
        return
    left_bits = _left_bits(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids,
                           True, check=check)
    _move_two_way_pairs(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_n_left,
                        split_feature, left_bits, scratch)


def left_rows_bits(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids):
    """The rows going left in prefix splits, one bit per row.

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32 (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    split_feature, split_n_left : ndarray of shape (n_segments,), int64 (IN)
        Segment ``s``'s left rows are the first ``split_n_left[s]`` positions of its segment in
        ``sorted_idx[split_feature[s]]``.
    n_ids : int
        Row ids are below it (see :func:`partition_segments`).

    Returns
    -------
    left_bits : ndarray of shape (ceil(n_ids / 8),), uint8
        Bit ``row & 7`` of byte ``row >> 3`` set for those rows, all other bits clear: the
        layout of ``np.packbits(goes_left, bitorder="little")`` that
        :func:`partition_segments_bits` reads.

    Notes
    -----
    Bits, not a byte per row: the moves read a row's direction at a random row id, once per
    feature, and a table eight times smaller stays in cache (and in the TLB's reach) for tens of
    millions of rows, where a byte per row would not (the move's time per row grew with the
    number of rows).

    Raises
    ------
    ValueError
        A row id of these segments is negative or not below ``n_ids``.
    """
    return _left_bits(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids, True)


def _left_bits(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids, mark,
               what="n_ids", check=True):
    """:func:`left_rows_bits`; only the check of the row ids unless ``mark`` (the moves index a
    table by row id and do not check; a segment holds the same rows in every feature row, so
    one feature row per segment tells), no check unless ``check``."""
    n_ids = int(n_ids)
    left_bits = np.zeros((max(n_ids, 0) + 7) // 8 if mark else 0, dtype=np.uint8)
    if not _mark_left_rows(sorted_idx, seg_start, seg_end,
                           np.asarray(split_feature, dtype=np.int64), split_n_left,
                           np.int64(n_ids), left_bits, check):
        raise ValueError(f"sorted_idx holds a row id outside [0, {n_ids}) in the segments "
                         f"to partition; {what} must cover every row id")
    return left_bits


@njit(cache=True)
def _mark_left_rows(sorted_idx, seg_start, seg_end, split_feature, split_n_left, n_ids,
                    left_bits, check):
    """Check every row id of the segments if ``check`` (a min and a max, a loop the compiler
    vectorizes: about 2 ms per 4M rows), then set the left rows' bits; False, with no bit set,
    if an id is outside ``[0, n_ids)``.  Serial: one write per left row into a table of n/8
    bytes that stays in cache; parallel writers would race on a byte's bits, and threads owning
    blocks of the table each read every row and mispredict which are theirs (two threads took
    longer than one at 4M rows)."""
    for s in range(seg_start.shape[0] if check else 0):
        ids = sorted_idx[split_feature[s], seg_start[s]:seg_end[s]]
        smallest = n_ids
        largest = -1
        for p in range(ids.shape[0]):
            smallest = min(smallest, ids[p])
            largest = max(largest, ids[p])
        if ids.shape[0] > 0 and (smallest < 0 or largest >= n_ids):
            return False
    for s in range(seg_start.shape[0] if left_bits.shape[0] > 0 else 0):
        n_left = min(max(split_n_left[s], 0), seg_end[s] - seg_start[s])
        ids = sorted_idx[split_feature[s], seg_start[s]:seg_start[s] + n_left]
        for p in range(ids.shape[0]):
            row = np.uint64(ids[p])
            left_bits[row >> np.uint64(3)] |= np.uint8(1 << (row & np.uint64(7)))
    return True


def partition_segments_bits(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, seg_n_left,
                            left_bits):
    """Stable in-place partition of segments by one bit per row, every feature row in parallel.

    The move of :func:`partition_segments` for callers that know the rows' directions already
    (e.g. from another process: :mod:`fasttree.sharded_splitter`): a row goes left when its bit
    is set.  Rows already in that order (left rows first) are left as they are.

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y : the working layout (IN/OUT)
        As in :func:`partition_segments`.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Segments to partition; ranges must not overlap.
    seg_n_left : ndarray of shape (n_segments,), int64 (IN)
        Rows of each segment whose bit is set (sizes the buffers; a wrong count gives wrong rows
        in that segment, never a write out of bounds).
    left_bits : ndarray of shape (ceil(n_ids / 8),), uint8 (IN)
        Bit ``row & 7`` of byte ``row >> 3`` set for the rows that go left: numpy's
        ``np.packbits(goes_left, bitorder="little")``, ``goes_left`` one entry per row id (see
        ``n_ids`` in :func:`partition_segments`).

    Raises
    ------
    ValueError
        A row id of these segments has no bit in ``left_bits``.

    Notes
    -----
    After the call, segment ``s``'s left rows own
    ``[seg_start[s], seg_start[s] + seg_n_left[s])`` in every feature row, each side still
    sorted (stable).
    """
    first_feature = np.zeros(seg_start.shape[0], dtype=np.int64)
    _left_bits(sorted_idx, seg_start, seg_end, first_feature, seg_n_left, 8 * left_bits.shape[0],
               False, "left_bits")
    no_skip = np.full(seg_start.shape[0], -1, dtype=np.int64)
    _move_two_way_pairs(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, seg_n_left, no_skip,
                        left_bits)


def _move_two_way_pairs(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, seg_n_left,
                        skip_feature, left_bits, scratch=None):
    """Two-way moves of every (feature, segment) pair but segment ``s`` in feature row
    ``skip_feature[s]`` (in order already), by :func:`_move_pairs`."""
    n_segments = seg_start.shape[0]
    branch_rows = np.empty(2 * n_segments, dtype=np.int64)  # left, right of each segment
    branch_rows[0::2] = seg_n_left
    branch_rows[1::2] = seg_end - seg_start - seg_n_left
    _move_pairs(False, sorted_x, sorted_idx, sorted_y, seg_start, seg_end,
                np.arange(0, 2 * n_segments + 1, 2, dtype=np.int64), branch_rows,
                np.empty(0, dtype=np.int32), left_bits, skip_feature, scratch)


#: the chunked pairs' table of a level with none (nothing reads it)
_NOT_CHUNKED = np.zeros((0, 0), dtype=np.uint8)


def _move_pairs(k_way, sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                branch_rows, row_branch, branch_0_bits, skip_feature, scratch=None):
    """Move every (feature, segment) pair but segment ``s`` in feature row ``skip_feature[s]``
    as :func:`_move_plan` lays them out: the pairs moved whole in lanes, one lane per thread
    (:func:`_make_movers`), then the large pairs in row chunks (:func:`_make_chunk_movers`).
    ``k_way`` False: two branches everywhere (``branch_0_bits`` tells them apart); ``scratch``
    a :class:`MoveScratch` kept between calls, or None for one of this call's own."""
    n_features = sorted_x.shape[0]
    lane_first, chunked_feature, chunked_segment, chunked_n_chunks = _move_plan(
        n_features, seg_start, seg_end, skip_feature, numba.get_num_threads(),
        MIN_MOVE_CHUNK_ROWS, MOVE_CHUNK_ROWS)
    # a two-way move buffers a segment's smaller side, a k-way one its whole slice; only the
    # segments with a pair moved whole need them (with none chunked, all of them: buffers as
    # long as a skipped segment's at most, without the NumPy calls, 20 us of a small level)
    used = slice(None)
    if chunked_feature.shape[0] > 0:
        not_whole = np.bincount(chunked_segment, minlength=seg_start.shape[0])
        not_whole += (skip_feature >= 0) & (skip_feature < n_features)
        used = not_whole < n_features
    if lane_first[-1] > 0 and seg_start[used].shape[0] > 0:
        if k_way:
            lengths = np.where(np.diff(branch_offset)[used] == 2,
                               _smaller_side(seg_start[used], seg_end[used],
                                             branch_rows[branch_offset[:-1][used]]),
                               (seg_end - seg_start)[used])
        else:
            lengths = _smaller_side(seg_start[used], seg_end[used], branch_rows[0::2][used])
        buffers = _thread_buffers(lane_first.shape[0] - 1, sorted_y, lengths)
        chunked = _NOT_CHUNKED
        if chunked_feature.shape[0] > 0:
            chunked = np.zeros((n_features, seg_start.shape[0]), dtype=np.uint8)
            chunked[chunked_feature, chunked_segment] = 1
        data = (sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset, branch_rows,
                row_branch, branch_0_bits, skip_feature, chunked, lane_first, *buffers)
        run_tasks(task_address(specialized(_make_movers, k_way), data), data,
                  lane_first.shape[0] - 1)
    if chunked_feature.shape[0] > 0:
        rows = (seg_end - seg_start)[chunked_segment]
        # the scratch holds one feature row's chunked segments at most (never more than the
        # layout's width); the mover takes the pairs a batch at a time
        capacity = int(np.bincount(chunked_feature, weights=rows).max())
        scratch = MoveScratch() if scratch is None else scratch
        _move_chunks(k_way)(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                            row_branch, branch_0_bits, chunked_feature, chunked_segment,
                            *chunk_index(chunked_n_chunks), *scratch.arrays(capacity, sorted_y))


class MoveScratch:
    """The scratch of the chunked moves, kept by a grower from one level to the next.

    A fresh scratch is memory the kernel touches for the first time: every page faults and is
    zeroed first (a 2M-row chunked move on two threads took 10.6 ms with a fresh scratch, 6.3
    with one already touched).  Kept, it is mapped once per fit, at its largest (the first
    levels').
    """

    def __init__(self):
        self._arrays = None

    def arrays(self, n_rows, sorted_y):
        """Scratch ``x``, ``idx`` and ``y`` of at least ``n_rows`` rows for this layout."""
        held = self._arrays
        if (held is None or held[0].shape[0] < n_rows or held[2].dtype != sorted_y.dtype
                or (held[2].shape[0] > 0) != (sorted_y.shape[1] > 0)):
            self._arrays = tuple(a[0] for a in _thread_buffers(1, sorted_y, [n_rows]))
        return self._arrays


def _move_plan(n_features, seg_start, seg_end, skip_feature, n_threads, min_chunk_rows,
               max_chunk_rows):
    """Which (feature, segment) pairs to move whole, in lanes, and which in row chunks.

    A pair moved whole is moved by one thread: a pair larger than a thread's share of the level
    (the root of tall data, a node holding most rows) would keep the other threads waiting.  A
    pair moved in row chunks keeps every thread busy, but costs about
    :data:`CHUNKED_MOVE_COST` times as much per row (its rows are counted, scattered to a
    scratch and copied back).  So the largest pairs are chunked, one by one, as long as that
    lowers the level's estimated time: the largest lane's rows plus the chunked rows' cost
    shared by all threads; a plan that saves less than a tenth of the time of moving every pair
    whole is not taken (its scratch holds a feature row's chunked segments: B17's first level
    on two threads would chunk one 10M-row pair to save 3 %).  On one thread nothing is
    chunked.  The choice changes how the rows move, never where they end (a stable partition
    has one result).

    The lanes are ranges of the (feature, segment) grid, so that a deep level's million small
    pairs are never listed: where no pair is worth chunking and the cut nearest the threads'
    shares is good enough (:func:`_cut_lanes`), it is found from the segments alone
    (:func:`_grid_cut`).

    Returns
    -------
    lane_first : ndarray of shape (n_lanes + 1,), int64
        Lane ``j`` moves the pairs ``q`` of ``lane_first[j] <= q < lane_first[j + 1]`` of the
        grid, feature-major (feature ``q // n_segments``, segment ``q % n_segments``), but each
        segment's ``skip_feature`` and the chunked pairs.
    chunked_feature, chunked_segment : ndarray of shape (n_chunked,), int64
        The pairs moved in row chunks, feature-major.
    chunked_n_chunks : ndarray of shape (n_chunked,), int64
        Chunks of each chunked pair, its rows cut evenly.  A feature row's chunked pairs (the
        chunk mover's one parallel loop) have chunks of about ``max_chunk_rows`` rows, or fewer
        (not much below ``min_chunk_rows``) to give every thread four; their number is a
        multiple of ``n_threads`` where it is at least that, shared out by the pairs' rows, so
        that numba's static schedule gives each thread as many chunks of about equal rows.
    """
    n_segments = seg_start.shape[0]
    no_pairs = np.empty(0, dtype=np.int64)
    if n_threads == 1:  # one lane of the whole grid, nothing chunked (what the cut below gives
        # one thread, without its dozen numpy calls: a small level's 10 us, measured)
        return (np.array([0, n_features * n_segments], dtype=np.int64), no_pairs, no_pairs,
                np.ones(0, dtype=np.int64))
    seg_rows = seg_end - seg_start
    skips = (skip_feature >= 0) & (skip_feature < n_features)
    feature_rows = int(seg_rows.sum()) - np.bincount(skip_feature[skips], seg_rows[skips],
                                                     minlength=n_features).astype(np.int64)
    total = int(feature_rows.sum())
    # worth trying: two chunks or more, and more than a quarter of a thread's share (checked on
    # the segments first: deep levels hold a million small pairs and no candidate)
    large = (seg_rows >= 2 * min_chunk_rows) & (4 * n_threads * seg_rows > total)
    if n_threads == 1 or not large.any():
        n_lanes = min(n_threads, n_features * n_segments - int(skips.sum()))
        lane_first = _grid_cut(seg_rows, skip_feature, feature_rows, n_lanes)
        if lane_first is not None:
            return lane_first, no_pairs, no_pairs, np.ones(0, dtype=np.int64)
    grid = np.arange(n_features)[:, None] * n_segments + np.arange(n_segments)
    pairs = grid[np.arange(n_features)[:, None] != skip_feature[None, :]]
    feature, segment = np.divmod(pairs, max(n_segments, 1))
    rows = seg_rows[segment]
    chunked = np.zeros(feature.shape[0], dtype=bool)
    if n_threads > 1 and feature.shape[0] > 0 and large.any():
        candidates = np.flatnonzero(large[segment])
        candidates = candidates[np.argsort(-rows[candidates], kind="stable")]
        whole_time = _lane_makespan(rows, n_threads)
        best_time, best_k = 0.9 * whole_time, 0
        chunked_rows = 0
        for k, q in enumerate(candidates, start=1):
            chunked[q] = True
            chunked_rows += rows[q]
            # no lanes beat a thread's share: once that and the chunks' cost exceed the best,
            # every larger k does too (each chunked row costs more than a row moved whole)
            floor = ((total - chunked_rows) + CHUNKED_MOVE_COST * chunked_rows) / n_threads
            if floor >= best_time:
                break
            time = (_lane_makespan(rows[~chunked], n_threads)
                    + CHUNKED_MOVE_COST * chunked_rows / n_threads)
            if time < best_time:
                best_time, best_k = time, k
        chunked[:] = False
        chunked[candidates[:best_k]] = True
    whole = ~chunked
    # each lane from its first pair's place in the grid
    lane_first = np.append(pairs[whole], n_features * n_segments)[_cut_lanes(rows[whole],
                                                                             n_threads)]
    lane_first[0] = 0
    lane_first[-1] = n_features * n_segments
    return (lane_first, feature[chunked], segment[chunked],
            _chunk_counts(feature[chunked], rows[chunked], n_threads, min_chunk_rows,
                          max_chunk_rows))


def _grid_cut(seg_rows, skip_feature, feature_rows, n_lanes):
    """The first stage of :func:`_cut_lanes` (each cut after the pair nearest its share) on the
    grid of every (feature, segment) pair but each segment's ``skip_feature``, found from the
    segments alone: the lanes' grid starts as in :func:`_move_plan`, or None where that cut's
    largest lane is beyond :func:`_cut_lanes`' tolerance (a large pair: it would bisect)."""
    n_features, n_segments = feature_rows.shape[0], seg_rows.shape[0]
    if n_lanes <= 1:
        return np.array([0, n_features * n_segments], dtype=np.int64)
    feature_end = np.cumsum(feature_rows)
    total = int(feature_end[-1])
    first, reached = [0], [0]
    for j in range(1, n_lanes):
        share = total * j / n_lanes
        g = min(int(np.searchsorted(feature_end, share)), n_features - 1)  # its feature row
        moved = np.where(skip_feature == g, 0, seg_rows)
        ends = np.cumsum(moved) + (feature_end[g] - feature_rows[g])
        s = min(int(np.searchsorted(ends, share)), n_segments - 1)  # the pair reaching it
        after = ends[s] - share < share - (ends[s] - moved[s])
        first.append(max(first[-1], g * n_segments + s + int(after)))
        reached.append(max(reached[-1], int(ends[s] if after else ends[s] - moved[s])))
    first.append(n_features * n_segments)
    reached.append(total)
    high = int(np.max(np.diff(reached)))
    bound = max(int(seg_rows.max()), -(-total // n_lanes))  # no cut is below it
    if high - bound > max(1, bound // 256):
        return None
    return np.array(first, dtype=np.int64)


def _chunk_counts(feature, rows, n_threads, min_chunk_rows, max_chunk_rows):
    """Chunks of each chunked pair (``feature``-major, of ``rows`` rows): see
    :func:`_move_plan`."""
    n_chunks = np.ones(rows.shape[0], dtype=np.int64)
    if rows.shape[0] == 0:
        return n_chunks
    feature_rows = np.bincount(feature, weights=rows).astype(np.int64)
    chunk_rows = int(np.clip(-(-feature_rows.max() // (4 * n_threads)), min_chunk_rows,
                             max_chunk_rows))
    for g in np.unique(feature):
        mine = np.flatnonzero(feature == g)
        total = -(-feature_rows[g] // chunk_rows)
        if total >= n_threads:
            total = n_threads * -(-total // n_threads)
        n_chunks[mine] = chunks_by_rows(rows[mine], total)
    return n_chunks


def _cut_lanes(rows, n_threads):
    """The cut of pairs of ``rows`` rows, in order, into at most ``n_threads`` lanes of
    consecutive pairs whose largest lane is within 1/256 of the smallest any such cut allows:
    lane ``j`` moves the pairs ``lane_first[j] .. lane_first[j + 1] - 1``.

    Lanes, not blocks of features: with fewer features than threads, or with a segment's own
    split feature skipped, whole feature rows per thread leave threads idle (one feature split
    on feature 0 of three: one thread moved both others).  Cuts placed after the pair nearest
    each thread's share leave a lane with a large pair and its neighbours' (10M x 4 at depth 5
    on 16 threads: 0.77 of the best balance, 0.88 with the cut below); so when the nearest cut's
    largest lane exceeds the bound no cut can beat (the largest pair, a thread's share), the
    smallest largest lane is found by bisection, each try filling lanes greedily up to it
    (:func:`_greedy_lanes`).  The cut depends on the thread count, the result does not (every
    pair is moved the same way by whichever thread).
    """
    n_lanes = max(1, min(n_threads, rows.shape[0]))
    if n_lanes == 1:
        return np.array([0, rows.shape[0]], dtype=np.int64)
    ends = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(rows, out=ends[1:])
    # each cut after the pair whose running rows come nearest to its share of the total
    share = ends[-1] * np.arange(1, n_lanes) / n_lanes
    after = np.searchsorted(ends[1:], share)  # first pair reaching the share
    cut = np.where(ends[after + 1] - share < share - ends[after], after + 1, after)
    nearest = np.concatenate([[0], np.maximum.accumulate(cut), [rows.shape[0]]])
    high = int(np.max(ends[nearest[1:]] - ends[nearest[:-1]]))  # feasible
    bound = max(int(rows.max()), -(-int(ends[-1]) // n_lanes))  # no cut is below it
    tolerance = max(1, bound // 256)
    if high - bound <= tolerance:
        return nearest.astype(np.int64)
    # bisect on a list is fast; making the list is not, for a deep level's million pairs
    running = ends.tolist() if ends.shape[0] <= 1 << 14 else ends
    first = _greedy_lanes(running, bound + tolerance, n_lanes)
    if first[-1] == rows.shape[0]:  # often: pairs small against a lane
        return np.array(first, dtype=np.int64)
    low = bound + tolerance  # infeasible
    while high - low > tolerance:
        mid = (low + high) // 2
        if _greedy_lanes(running, mid, n_lanes)[-1] == rows.shape[0]:
            high = mid
        else:
            low = mid
    return np.array(_greedy_lanes(running, high, n_lanes), dtype=np.int64)


def _greedy_lanes(running, largest, n_lanes):
    """Lane starts when each of ``n_lanes`` lanes takes pairs, in order, while its rows stay
    within ``largest`` (``running``: the pairs' running rows from 0, a list or an array); the
    last entry is where the last lane stopped (the number of pairs when they all fit)."""
    n_pairs = len(running) - 1
    find = (bisect.bisect_right if isinstance(running, list)
            else lambda ends, x: int(ends.searchsorted(x, side="right")))
    first = [0]
    for _ in range(n_lanes):
        stop = find(running, running[first[-1]] + largest) - 1
        if stop == n_pairs or stop == first[-1]:  # all taken, or a pair larger than a lane
            return first + [stop] * (n_lanes + 1 - len(first))
        first.append(stop)
    return first


def _lane_makespan(rows, n_threads):
    """Rows of the largest lane when pairs of ``rows`` rows are cut by :func:`_cut_lanes`."""
    if rows.shape[0] == 0:
        return 0
    ends = np.concatenate([[0], np.cumsum(rows)])
    lane_first = _cut_lanes(rows, n_threads)
    return int(np.max(ends[lane_first[1:]] - ends[lane_first[:-1]]))


def _smaller_side(seg_start, seg_end, seg_n_left):
    """Buffer slots the two-way mover needs per segment: its smaller side, plus one."""
    return np.minimum(seg_n_left, seg_end - seg_start - seg_n_left) + 1


def _thread_buffers(n_rows, sorted_y, lengths):
    """Buffers of the parallel moves: ``n_rows`` rows (one per lane or block of feature rows,
    each moved by one thread), as long as the largest of ``lengths`` (at least 1).

    Allocated here, by numpy, once per call: every large allocation maps fresh pages, each first
    touched through a page fault, and numpy asks for huge pages (one fault per 2 MiB) where
    numba's allocator does not; buffers per feature would fault once per feature (large buffers
    are mapped afresh by glibc every time, and every buffer is under Dask, whose nanny makes
    glibc return freed memory at once).
    """
    lengths = np.asarray(lengths)
    length = max(1, int(lengths.max())) if lengths.size else 1  # (np.max's initial: 2 us more)
    return (np.empty((n_rows, length), dtype=np.float32),
            np.empty((n_rows, length), dtype=np.int32),
            np.empty((n_rows, length if sorted_y.shape[1] > 0 else 0), dtype=sorted_y.dtype))


@njit(cache=True, inline="always")
def _move_two_way(xs, idx, ys, has_labels, left_bits, n_left, buf_x, buf_idx, buf_y):
    """Stable in-place two-way partition of one node's slice: rows whose bit is set in
    ``left_bits`` (:func:`left_rows_bits`) first; ``n_left`` of them.

    A forward scan writes each left row at ``write <= p`` (never clobbering a row not yet read)
    and buffers the right rows, which then follow.  When the buffers are too short for the right
    rows, a backward scan writes the right rows from the end and buffers the left rows, which
    then go first: the buffers need only hold each segment's smaller side, and the backward scan,
    about 40% slower per row (5.9 against 4.2 ns on one 1M-row segment, measured alone), runs
    only on the segments that need it (the big ones with more right rows).  Branch-free: every
    row is written to both places and only the matching cursor advances (a row's direction is
    unpredictable, a branch would mispredict).  The buffers need one slot more than the smaller
    side; the buffer index is clamped, so a wrong ``n_left`` (or a segment holding other rows in
    this feature) gives wrong rows, never a write out of bounds.  Every index is unsigned (never
    negative here): numba would test a signed one for Python's negative wrap-around at each
    access (with unsigned ones a 1M-row move took 13% less time per row forward, 23% less
    backward, measured alone).
    """
    n = xs.shape[0]
    last = buf_x.shape[0] - 1
    if n - n_left <= last:  # the right rows fit in the buffers
        write = 0
        n_buffered = 0
        for p in range(n):
            row = idx[p]
            x = xs[p]
            go = _goes_left(left_bits, row)
            slot = np.uint64(min(n_buffered, last))
            to = np.uint64(write)
            xs[to] = x
            idx[to] = row
            buf_x[slot] = x
            buf_idx[slot] = row
            if has_labels:
                label = ys[p]
                ys[to] = label
                buf_y[slot] = label
            write += go
            n_buffered += 1 - go
        kept = min(n_buffered, last + 1)
        for j in range(kept):  # the right rows, in order, after the left ones
            xs[np.uint64(write + j)] = buf_x[j]
            idx[np.uint64(write + j)] = buf_idx[j]
        if has_labels:
            for j in range(kept):
                ys[np.uint64(write + j)] = buf_y[j]
    else:
        # the mirror of the loop above, written out: sharing the step through an inline helper
        # made the partition kernels 3 to 4x slower (docs/performance.md, "Scaling to 10M rows")
        write = n - 1
        n_buffered = 0
        for p in range(n - 1, -1, -1):
            row = idx[p]
            x = xs[p]
            go = _goes_left(left_bits, row)
            slot = np.uint64(min(n_buffered, last))
            to = np.uint64(write)
            xs[to] = x
            idx[to] = row
            buf_x[slot] = x
            buf_idx[slot] = row
            if has_labels:
                label = ys[p]
                ys[to] = label
                buf_y[slot] = label
            write -= 1 - go
            n_buffered += go
        kept = min(n_buffered, last + 1, write + 1)
        for j in range(kept):  # the left rows, buffered last first, before the right ones
            xs[np.uint64(write - j)] = buf_x[j]
            idx[np.uint64(write - j)] = buf_idx[j]
        if has_labels:
            for j in range(kept):
                ys[np.uint64(write - j)] = buf_y[j]


@njit(cache=True, inline="always")
def _goes_left(left_bits, row):
    """1 if ``row``'s bit is set in ``left_bits`` (:func:`left_rows_bits`), else 0."""
    bit = np.uint64(row)
    return np.int64((left_bits[bit >> np.uint64(3)] >> (bit & np.uint64(7))) & np.uint64(1))


def relabel_rows(sorted_idx, n_ids):
    """Renumber the rows by their positions in the first feature row, in every feature row.

    The moves look up each row's direction at its id, in a table of ``n_ids`` bits.  When every
    node's ids spread over a table larger than the cache, those lookups miss it (a 10M-row move
    took 10.4 ns per row with ids over all 10M against 6.4 with ids within 8M and 5.2 within 1M,
    measured alone).  After this call every node's rows carry the ids of its own segment, so a
    node's lookups, and those of all its descendants, stay inside its own part of the table.

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN/OUT)
        The working layout's row ids (see :func:`partition_segments`); every node's segment must
        hold the same rows in every feature row.
    n_ids : int
        Row ids are below it (see :func:`partition_segments`).

    Returns
    -------
    new_id : ndarray of shape (n_ids,), int32
        The new id of each former one (0 for ids the layout does not hold): move every table
        indexed by row id along with ``table[new_id] = table.copy()``.  The new ids are the
        positions in the first feature row: afterwards ``sorted_idx[0]`` is
        ``0, 1, ..., n_samples - 1``, and node ``[a, b)`` holds the ids ``a .. b - 1`` in every
        feature row, in the same order as before.

    Raises
    ------
    ValueError
        ``sorted_idx`` is not a C-contiguous 2-D int32 array, or its first row holds an id
        outside ``[0, n_ids)``.
    """
    check_row_ids(sorted_idx, n_ids)
    new_id = np.zeros(max(int(n_ids), 0), dtype=np.int32)
    if sorted_idx.size:
        _relabel(sorted_idx, new_id)
    return new_id


@njit(parallel=True, cache=True)
def _relabel(sorted_idx, new_id):
    first = sorted_idx[0]
    for p in range(first.shape[0]):  # ids checked to be below new_id's length
        new_id[np.uint64(first[p])] = p
    # an id of another feature row outside the table (a row not holding the first one's rows)
    # is clamped: a wrong id, never a read out of bounds
    last = np.uint64(new_id.shape[0] - 1)
    for g in prange(1, sorted_idx.shape[0]):
        row = sorted_idx[g]
        for p in range(row.shape[0]):
            row[p] = new_id[min(np.uint64(row[p]), last)]
    for p in range(first.shape[0]):
        first[p] = p


def partition_segments_kway(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                            branch_rows, row_branch):
    """Stable in-place k-way partition of the split nodes' segments by the rows' branches.

    ::

        before, feature g:  [ r3 r0 r7 r1 r5 r2 ]   rows sorted by x_g inside the node
        row_branch:            2  0  1  0  2  1     from :func:`route_rows`
        after,  feature g:  [ r0 r1 | r7 r2 | r3 r5 ]   branch 0 | branch 1 | branch 2,
                                                        each still sorted by x_g (stable)

    The segment is copied to a buffer, then every row is written at its branch's cursor; cursors
    start at the running sum of the rows per branch, so branch ``b`` of node ``s`` ends up owning
    ``[seg_start[s] + sum(branch_rows[branch_offset[s]:branch_offset[s] + b]), ...)`` in every
    feature row.

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y : the working layout (IN/OUT)
        As in :func:`partition_segments`.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    branch_offset : ndarray of shape (n_segments + 1,), int64 (IN)
    branch_rows : ndarray of shape (branch_offset[-1],), int64 (IN)
        Rows per branch (from :func:`route_rows`).
    row_branch : ndarray of shape (n_samples,), int32 (IN)
        Branch of every row of these segments (from :func:`route_rows`).
    """
    _partition_kway(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                    branch_rows, row_branch)


def _partition_kway(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                    branch_rows, row_branch, scratch=None):
    """:func:`partition_segments_kway` with a :class:`MoveScratch` kept between calls.  A level
    whose nodes all have two branches (subset splits) takes the two-way movers of the numeric
    partition: a fit compiles the k-way ones only for a node of more branches."""
    branch_0_bits = np.packbits(row_branch == 0, bitorder="little")  # for two-branch nodes
    k_way = bool(np.any(np.diff(branch_offset) != 2))
    _move_pairs(k_way, sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                branch_rows, row_branch, branch_0_bits,
                np.full(seg_start.shape[0], -1, dtype=np.int64), scratch)


def _make_movers(k_way):
    """The task function (:mod:`fasttree._tasks`) that moves lane ``j`` of (feature, segment)
    pairs: ``k_way`` False for two-way splits only (the numeric partition), True for any number
    of branches (routed splits).

    A lane's pairs are moved by one call, with the lane's buffers (a segment's smaller side
    plus one slot for a two-branch segment, its whole slice otherwise): a two-branch segment by
    the branch-free two-way mover (``branch_0_bits``), any other by :func:`_move_k_way`
    (``row_branch``).  The pairs' function is a function of its own: inlined into the parallel
    loop it ran about 15 % slower per row (B19's partition on one thread).  As a parallel kernel
    the mover compiled in 2.4-3.5 s; as a task function, 1.4-1.7 s.
    ``k_way`` is a constant of the code made here, so a two-way fit compiles no k-way branch (it
    cost a first classifier fit about 1.5 s of compile CPU).
    """

    def move_pairs(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                   branch_rows, row_branch, branch_0_bits, skip_feature, chunked, first, stop,
                   buf_x, buf_idx, buf_y):
        has_labels = sorted_y.shape[1] > 0
        n_segments = seg_start.shape[0]
        any_chunked = chunked.shape[0] > 0
        if k_way:
            max_branches = 0
            for s in range(seg_start.shape[0]):
                max_branches = max(max_branches, branch_offset[s + 1] - branch_offset[s])
            cursor = np.empty(max_branches, dtype=np.int64)
        g = first // n_segments if n_segments > 0 else 0
        s = first - g * n_segments - 1
        for _ in range(first, stop):  # pair q = g * n_segments + s, without a division each
            s += 1
            if s == n_segments:
                s = 0
                g += 1
            if skip_feature[s] == g or (any_chunked and chunked[g, s] != 0):
                continue
            start = seg_start[s]
            end = seg_end[s]
            xs = sorted_x[g, start:end]
            idx = sorted_idx[g, start:end]
            ys = sorted_y[g, start:end] if has_labels else sorted_y[g]
            if k_way:
                if branch_offset[s + 1] - branch_offset[s] != 2:
                    _move_k_way(xs, idx, ys, has_labels, row_branch,
                                branch_rows[branch_offset[s]:branch_offset[s + 1]], cursor,
                                buf_x, buf_idx, buf_y)
                    continue
            _move_two_way(xs, idx, ys, has_labels, branch_0_bits,
                          branch_rows[branch_offset[s]], buf_x, buf_idx, buf_y)

    def move_lane(pointer, j):
        (sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset, branch_rows,
         row_branch, branch_0_bits, skip_feature, chunked, lane_first, buf_x, buf_idx,
         buf_y) = load_pointer(pointer)
        lane_pairs(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                   branch_rows, row_branch, branch_0_bits, skip_feature, chunked, lane_first[j],
                   lane_first[j + 1], buf_x[j], buf_idx[j], buf_y[j])

    # the pairs' function as the task's global, not a cell it closes over (see with_globals)
    return njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(with_globals(
        move_lane, lane_pairs=njit(cache=True, no_cpython_wrapper=True)(move_pairs)))


def _make_chunk_movers(k_way):
    """The parallel mover of large (feature, segment) pairs in row chunks (``k_way`` as in
    :func:`_make_movers`).

    ::

        pair, cut evenly:            [ c0        | c1        | c2        ]
        1. count, every chunk:        l0 r0        l1 r1       l2 r2     rows per branch
        2. prefix, in chunk order:    chunk c's left rows go to l0 + .. + l(c-1), its right
                                      rows to (l0 + l1 + l2) + r0 + .. + r(c-1)
        3. scatter, every chunk:      each row to its branch's cursor in the scratch
        4. copy back, every chunk:    the scratch's positions of the chunk to the layout

    The same stable partition as a move by one thread, with every thread on the pair; about
    twice the bytes (every row written to the scratch, then back).  The scratch holds a batch
    of pairs at a time: a feature row's pairs, as many as it fits in order (at least one), so
    that a feature row's chunks are one parallel loop (:func:`_move_plan` sizes them for it).
    A row's branch comes from ``branch_0_bits`` for a two-branch node (a table that stays in
    cache), else from ``row_branch``, clamped to the node's branches (a wrong branch gives wrong
    rows, never a write out of bounds).
    """

    def move_chunks(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, branch_offset,
                    row_branch, branch_0_bits, pair_feature, pair_segment, pair_chunk,
                    chunk_pair, scratch_x, scratch_idx, scratch_y):
        has_labels = sorted_y.shape[1] > 0
        n_pairs = pair_feature.shape[0]
        max_branches = 2
        for q in range(n_pairs):
            s = pair_segment[q]
            max_branches = max(max_branches, branch_offset[s + 1] - branch_offset[s])
        # each chunk's rows per branch, then where its next row of each branch goes
        cursor = np.zeros((chunk_pair.shape[0], max_branches), dtype=np.int64)
        scratch_start = np.zeros(n_pairs, dtype=np.int64)
        first = 0
        while first < n_pairs:
            stop = first
            used = 0
            while stop < n_pairs:
                rows = seg_end[pair_segment[stop]] - seg_start[pair_segment[stop]]
                if stop > first and (used + rows > scratch_x.shape[0]
                                     or pair_feature[stop] != pair_feature[first]):
                    break
                scratch_start[stop] = used
                used += rows
                stop += 1
            for step in range(3):  # count, scatter to the scratch, copy back
                if step == 1:  # the counts' prefix, in chunk order
                    for q in range(first, stop):
                        s = pair_segment[q]
                        at = scratch_start[q]
                        for b in range(branch_offset[s + 1] - branch_offset[s]):
                            for c in range(pair_chunk[q], pair_chunk[q + 1]):
                                rows = cursor[c, b]
                                cursor[c, b] = at
                                at += rows
                # one parallel loop for the three steps: each loop is one more function for
                # numba to compile
                for c in prange(pair_chunk[first], pair_chunk[stop]):
                    move_chunk(sorted_x, sorted_idx, sorted_y, has_labels, seg_start, seg_end,
                               branch_offset, row_branch, branch_0_bits, pair_feature,
                               pair_segment, chunk_pair, pair_chunk, scratch_start, cursor,
                               scratch_x, scratch_idx, scratch_y, c, step)
            first = stop

    def chunk_step(sorted_x, sorted_idx, sorted_y, has_labels, seg_start, seg_end,
                   branch_offset, row_branch, branch_0_bits, pair_feature, pair_segment,
                   chunk_pair, pair_chunk, scratch_start, cursor, scratch_x, scratch_idx,
                   scratch_y, c, step):
        """Step ``step`` of chunk ``c``: 0 count its rows per branch into ``cursor[c]``,
        1 scatter them to the scratch at ``cursor[c]``, 2 copy its positions back."""
        q = chunk_pair[c]
        g = pair_feature[q]
        s = pair_segment[q]
        n_pair = seg_end[s] - seg_start[s]
        k = pair_chunk[q + 1] - pair_chunk[q]
        j = c - pair_chunk[q]
        lo = seg_start[s] + j * n_pair // k
        hi = seg_start[s] + (j + 1) * n_pair // k
        xs = sorted_x[g, lo:hi]
        idx = sorted_idx[g, lo:hi]
        ys = sorted_y[g, lo:hi] if has_labels else sorted_y[g]
        n = xs.shape[0]
        if step == 2:  # loops, not slice assignments (whose shape checks numba compiles)
            at = scratch_start[q] + lo - seg_start[s]
            from_x = scratch_x[at:at + n]
            from_idx = scratch_idx[at:at + n]
            for p in range(n):
                xs[p] = from_x[p]
                idx[p] = from_idx[p]
            if has_labels:
                from_y = scratch_y[at:at + n]
                for p in range(n):
                    ys[p] = from_y[p]
            return
        two_way = not k_way or branch_offset[s + 1] - branch_offset[s] == 2
        last = np.uint64(max(branch_offset[s + 1] - branch_offset[s] - 1, 0))
        counts = cursor[c]
        if step == 0 and two_way:
            n_left = 0
            for p in range(n):
                n_left += _goes_left(branch_0_bits, idx[p])
            counts[0] = n_left
            counts[1] = n - n_left
        elif step == 0:
            for p in range(n):
                counts[min(np.uint64(row_branch[np.uint64(idx[p])]), last)] += 1
        elif two_way:  # branch-free: the row goes to the left or right cursor, the one advanced
            left = np.uint64(counts[0])
            right = np.uint64(counts[1])
            for p in range(n):
                row = idx[p]
                go = np.uint64(_goes_left(branch_0_bits, row))
                to = right + go * (left - right)
                scratch_x[to] = xs[p]
                scratch_idx[to] = row
                if has_labels:
                    scratch_y[to] = ys[p]
                left += go
                right += np.uint64(1) - go
        else:
            for p in range(n):
                row = idx[p]
                b = min(np.uint64(row_branch[np.uint64(row)]), last)
                to = np.uint64(counts[b])
                counts[b] = to + 1
                scratch_x[to] = xs[p]
                scratch_idx[to] = row
                if has_labels:
                    scratch_y[to] = ys[p]

    return njit(parallel=True, cache=True)(with_globals(
        move_chunks, move_chunk=njit(cache=True, no_cpython_wrapper=True)(chunk_step)))


def _move_chunks(k_way):
    """The chunk mover :func:`_make_chunk_movers` makes, once per process."""
    return specialized(_make_chunk_movers, k_way)


@njit(cache=True, inline="always")
def _move_k_way(xs, idx, ys, has_labels, row_branch, branch_rows, cursor, buf_x, buf_idx,
                buf_y):
    """Stable in-place k-way partition of one node's slice by ``row_branch`` of its rows:
    the slice copied to the buffers, then every row written at its branch's cursor (cursors
    start at the running sums of ``branch_rows``).  Inlined into the k-way mover's pairs
    function: a multiway level's nodes are small (B11's fourth level: 104k nodes of 10 rows
    in 20 features), and a call per pair made that level's move about 7 % slower (best of 15:
    127 against 118 ms)."""
    running = 0
    for b in range(branch_rows.shape[0]):
        cursor[b] = running
        running += branch_rows[b]
    n = xs.shape[0]
    for p in range(n):
        buf_x[p] = xs[p]
        buf_idx[p] = idx[p]
    if has_labels:
        for p in range(n):
            buf_y[p] = ys[p]
    for p in range(n):
        b = row_branch[buf_idx[p]]
        r = cursor[b]
        cursor[b] = r + 1
        xs[r] = buf_x[p]
        idx[r] = buf_idx[p]
        if has_labels:
            ys[r] = buf_y[p]


@njit(parallel=True, cache=True)
def partition_segments_fractional(sorted_x, sorted_idx, sorted_y, seg_start, seg_end,
                                  branch_offset, branch_rows, seg_all_branches, row_branch,
                                  copy_base):
    """k-way partition that also sends some rows down every branch (C4.5's fractional rows).

    A row whose branch is ``-1`` (its split value is missing) is copied into every child:
    branch ``b`` receives row id ``copy_base[row] + b`` (ids the caller has allocated, with
    their weights), at the position the row had, so every child stays sorted in every feature.
    The layout grows, so the result is a new layout::

        before:  | other | node s: k=2, one missing row m          | other |
        after:   | other | branch 0: its rows + m0 | branch 1: + m1 | other |   (positions shift)

    Parameters
    ----------
    sorted_x, sorted_idx, sorted_y : the working layout (IN)
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Segments of the nodes to split, in increasing position order, not overlapping.
    branch_offset : ndarray of shape (n_segments + 1,), int64 (IN)
    branch_rows : ndarray of shape (branch_offset[-1],), int64 (IN)
        Rows per branch, not counting the rows sent down every branch (from :func:`route_rows`).
    seg_all_branches : ndarray of shape (n_segments,), int64 (IN)
        Rows of each node sent down every branch.
    row_branch : ndarray of shape (n_ids,), int32 (IN)
        Branch of every row of these segments, ``-1`` for every branch.
    copy_base : ndarray of shape (n_ids,), int64 (IN)
        For the rows sent down every branch: the id of their copy in branch 0.

    Returns
    -------
    new_x, new_idx, new_y : the grown layout
    new_seg_start : ndarray of shape (n_segments,), int64
        Where each split node's segment now starts; its branch ``b`` holds
        ``branch_rows[branch_offset[s] + b] + seg_all_branches[s]`` positions, in branch order.
    """
    n_features, n_pos = sorted_x.shape
    n_segments = seg_start.shape[0]
    new_seg_start = np.empty(n_segments, dtype=np.int64)
    growth = 0
    max_branches = 1
    for s in range(n_segments):
        new_seg_start[s] = seg_start[s] + growth
        n_branches = branch_offset[s + 1] - branch_offset[s]
        growth += (n_branches - 1) * seg_all_branches[s]
        max_branches = max(max_branches, n_branches)
    new_n = n_pos + growth
    has_labels = sorted_y.shape[1] > 0
    new_x = np.empty((n_features, new_n), dtype=sorted_x.dtype)
    new_idx = np.empty((n_features, new_n), dtype=sorted_idx.dtype)
    new_y = np.empty((n_features, new_n if has_labels else 0), dtype=sorted_y.dtype)
    for g in prange(n_features):
        cursor = np.empty(max_branches, dtype=np.int64)
        out = 0
        previous_end = 0
        for s in range(n_segments + 1):
            # the positions between split nodes (other nodes, finished leaves) move unchanged
            stop = seg_start[s] if s < n_segments else n_pos
            for p in range(previous_end, stop):
                new_x[g, out] = sorted_x[g, p]
                new_idx[g, out] = sorted_idx[g, p]
                if has_labels:
                    new_y[g, out] = sorted_y[g, p]
                out += 1
            if s == n_segments:
                break
            running = out
            n_branches = branch_offset[s + 1] - branch_offset[s]
            for b in range(n_branches):
                cursor[b] = running
                running += branch_rows[branch_offset[s] + b] + seg_all_branches[s]
            for p in range(seg_start[s], seg_end[s]):
                row = sorted_idx[g, p]
                b = row_branch[row]
                first_b = b if b >= 0 else 0
                last_b = b if b >= 0 else n_branches - 1
                for c in range(first_b, last_b + 1):
                    q = cursor[c]
                    cursor[c] = q + 1
                    new_x[g, q] = sorted_x[g, p]
                    new_idx[g, q] = row if b >= 0 else copy_base[row] + c
                    if has_labels:
                        new_y[g, q] = sorted_y[g, p]
            out = running
            previous_end = seg_end[s]
    return new_x, new_idx, new_y, new_seg_start
