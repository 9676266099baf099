"""Sort every feature once per fit: a parallel LSD radix sort of float32 keys."""

import numba
import numpy as np
from numba import prange

from .._jit import njit, specialized, with_globals
from .._threads import each_in_threads, each_range_in_threads
from .work_items import chunks_by_rows, even_chunks

_SIGN_BIT = np.uint32(0x80000000)
_ABS_MASK = np.uint32(0x7FFFFFFF)
_INF_BITS = np.uint32(0x7F800000)
_NAN_KEY = np.uint32(0xFFFFFFFF)  # decodes to a (positive) NaN
_RADIX_BITS = 11
_N_BUCKETS = 1 << _RADIX_BITS
_DIGIT_MASK = np.uint32(_N_BUCKETS - 1)
_N_PASSES = 3  # 3 x 11 bits covers the 32-bit key
_TRANSPOSE_BLOCK = 512
#: rows of a chunk of a feature in :func:`_scatter_by_leading_digit`'s passes
_SORT_CHUNK = 1 << 16
#: tasks a thread for the buckets' sorts (whole buckets, so they may follow the thread count):
#: numba's static schedule gives every thread as many, and four leave room to even out their rows
TASKS_PER_THREAD = 4


@njit(cache=True, inline="always")
def _float_to_key(bits):
    """Map float32 bits to a uint32 whose unsigned order is the float order.

    Positive floats get the sign bit set; negative floats are inverted, so that larger magnitudes
    sort first.  -0.0 is mapped like +0.0 so that the two (equal) zeros keep their row order.
    Every NaN, whatever its sign and payload, gets the largest key: missing values sort last.
    """
    if (bits & _ABS_MASK) > _INF_BITS:
        return _NAN_KEY
    if bits == _SIGN_BIT:
        bits = np.uint32(0)
    if bits & _SIGN_BIT:
        return ~bits
    return bits | _SIGN_BIT


@njit(cache=True, inline="always")
def _key_to_float_bits(key):
    if key & _SIGN_BIT:
        return key ^ _SIGN_BIT
    return ~key


def presort_features(X):
    """Sort the rows by each feature's value, all features in parallel.

    An O(n) least-significant-digit radix sort (three passes of 11 bits) of the float32 values'
    order-preserving integer keys; stable, so tied values keep their row order and the result
    equals a stable argsort.  Passes whose digit is the same for every row are skipped.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
        NaN marks a missing value and sorts after every number (infinities are ordered too).

    Returns
    -------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous
        ``sorted_x[f]`` holds feature ``f``'s values in non-decreasing order (``-0.0`` as ``0.0``),
        then its NaN (as one positive quiet NaN).
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous
        ``sorted_idx[f, p]`` is the row whose value is ``sorted_x[f, p]``.

    Notes
    -----
    These two arrays are the working layout of the grower: the partition kernel later keeps each
    node's rows contiguous and still sorted inside them, so no node is ever sorted again.
    Features are sorted in parallel, in blocks of whole features, one per thread.  When a few
    features do not share out evenly (fewer than two a thread: one feature on two threads,
    three on two), every feature is instead cut by its leading digit into buckets, in parallel
    over row chunks, and the buckets are sorted in tasks shared out to the threads
    (:func:`sort_by_buckets`); a stable sort has one result, so both give the same arrays.
    Scratch memory: two arrays of ``n_samples`` 32-bit words per block (per feature with the
    buckets), allocated once per call (``sorted_x`` and ``sorted_idx`` themselves hold the keys
    and row ids being sorted).
    """
    n_samples, n_features = X.shape
    n_threads = numba.get_num_threads()
    sorted_x = np.empty((n_features, n_samples), dtype=np.float32)
    sorted_idx = np.empty((n_features, n_samples), dtype=np.int32)
    if by_buckets(n_samples, n_features, n_threads):
        sort_by_buckets(X, sorted_x, sorted_idx, bucket_tasks(n_threads), _SORT_CHUNK)
    else:
        n_blocks = max(1, min(n_threads, n_features))
        keys_tmp = np.empty((n_blocks, n_samples), dtype=np.uint32)
        idx_tmp = np.empty((n_blocks, n_samples), dtype=np.int32)
        transpose(X, sorted_x)  # then each feature is sorted in place
        _sort_blocks("small" if n_samples <= _SMALL_RADIX else "large",
                     np.array([0, n_samples], dtype=np.int64), sorted_x, sorted_idx, keys_tmp,
                     idx_tmp)
    return sorted_x, sorted_idx


def by_buckets(n_samples, n_features, n_threads):
    """Whether :func:`presort_features` sorts by leading-digit buckets: fewer than two features
    a thread that do not share out evenly (one feature on two threads, three on two), and rows
    enough for the buckets to pay."""
    return (n_features % n_threads != 0 and n_features < 2 * n_threads
            and n_samples >= _SORT_CHUNK)


def bucket_tasks(n_threads):
    """Tasks the buckets' sorts are shared out in: ``TASKS_PER_THREAD`` a thread, of about
    equal rows (the tasks only share out the work: the sort is the same for any number)."""
    return TASKS_PER_THREAD * n_threads


def transpose(X, sorted_x, origin=None):
    """``sorted_x[f, i] = X[origin[i], f]`` (``X[i, f]`` without ``origin``), ranges of row
    blocks on threads (:func:`fasttree._threads.each_range_in_threads`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
    sorted_x : ndarray of shape (n_features, n_ids), float32, C-contiguous (OUT)
        A new array (the function is compiled ``noalias``).
    origin : ndarray of shape (n_ids,), int64, optional (IN)
        The row of ``X`` of each column of ``sorted_x``; None: ``n_ids == n_samples``, in order.
    """
    origin = np.empty(0, dtype=np.int64) if origin is None else origin
    n_row_blocks = -(-sorted_x.shape[1] // _TRANSPOSE_BLOCK)
    each_range_in_threads(lambda first, last: _transpose_blocks(X, origin, sorted_x, first,
                                                                last), n_row_blocks)


@njit(cache=True, nogil=True, noalias=True)
def _transpose_blocks(X, origin, sorted_x, first_block, last_block):
    """:func:`transpose` of blocks ``first_block .. last_block - 1`` of ``_TRANSPOSE_BLOCK``
    columns of ``sorted_x``: reading a column of a C-ordered X directly would pull every cache
    line of X once per feature."""
    n_ids = sorted_x.shape[1]
    gather = origin.shape[0] > 0
    for b in range(first_block, last_block):
        for i in range(b * _TRANSPOSE_BLOCK, min(n_ids, (b + 1) * _TRANSPOSE_BLOCK)):
            row = origin[i] if gather else i
            for f in range(X.shape[1]):
                sorted_x[f, i] = X[row, f]


@njit(cache=True, inline="always")
def _chunk(it, n_chunks, n_samples, chunk_rows):
    """Feature and rows ``[lo, hi)`` of item ``it`` of :func:`_scatter_by_leading_digit`: every
    feature cut into chunks of ``chunk_rows`` rows."""
    c = it % n_chunks
    return it // n_chunks, c * chunk_rows, min(n_samples, (c + 1) * chunk_rows)


def sort_by_buckets(X, sorted_x, sorted_idx, n_tasks, chunk_rows):
    """:func:`presort_features` for a few features on more threads: one most-significant-digit
    pass, then each digit's bucket sorted on its own, the buckets shared out in ``n_tasks``
    tasks of about equal rows.

    In chunks of ``chunk_rows`` rows, every feature's keys are made, its leading digit found
    (the 11 bits below the prefix all its keys share: :func:`leading_shift`), and its rows
    scattered into buckets by that digit (:func:`_scatter_by_leading_digit`).  A bucket larger
    than a task's share (a tenth of a feature where values crowd one binade, as a normal
    distribution's do around 1) would hold up one thread while the others wait, so such buckets
    are cut again by their next 11 bits, in parallel over their row chunks
    (:func:`_split_buckets`, compiled only for data that need it).  Then the buckets, each in the
    task its middle row falls in (:func:`_bucket_tasks`), are sorted on their remaining bits
    (:func:`_sort_buckets`).  Every cut depends on the data and ``n_tasks`` only, and a stable
    sort has one result, so the arrays are the same for any cut.
    """
    n_samples, n_features = X.shape
    keys_tmp = np.empty((n_features, n_samples), dtype=np.uint32)
    idx_tmp = np.empty((n_features, n_samples), dtype=np.int32)
    transpose(X, sorted_x)
    bucket_start, shift = _scatter_by_leading_digit(sorted_x, keys_tmp, idx_tmp, chunk_rows)
    feature, lo, hi = _nonempty_buckets(bucket_start)
    low_bits = shift[feature].astype(np.int64)
    # larger than a task's share, and of keys that differ (equal keys cannot be cut)
    large = np.flatnonzero(((hi - lo) * n_tasks > n_features * n_samples) & (low_bits > 0))
    if large.size:
        rows = hi[large] - lo[large]
        # row chunks of about chunk_rows rows, a multiple of the tasks in all (numba's static
        # schedule then gives every thread as many), shared out by the buckets' rows
        n_items = n_tasks * -(-(-(-int(rows.sum()) // chunk_rows)) // n_tasks)
        item_bucket, item_lo, item_hi = even_chunks(lo[large], rows,
                                                    chunks_by_rows(rows, n_items))
        sub_bits = np.maximum(low_bits[large] - _RADIX_BITS, 0)
        sub_start = _split_buckets(keys_tmp, idx_tmp, sorted_x.view(np.uint32), sorted_idx,
                                   feature[large], sub_bits.astype(np.uint32), item_bucket,
                                   item_lo, item_hi)
        feature, lo, hi, low_bits = _cut_into(feature, lo, hi, low_bits, large, sub_start,
                                              sub_bits)
    task_bucket = _bucket_tasks(feature, lo, hi, n_samples, n_features, n_tasks)
    _sort_buckets(keys_tmp, idx_tmp, sorted_x, sorted_idx, feature, lo, hi,
                  low_bits.astype(np.uint32), task_bucket)


def _nonempty_buckets(bucket_start):
    """Every feature's nonempty buckets, one feature after another: each one's feature and rows
    ``[lo, hi)``, from ``bucket_start`` (each feature's bucket starts, then its row count)."""
    starts = bucket_start[:, :-1]
    sizes = bucket_start[:, 1:] - starts
    feature, bucket = np.nonzero(sizes)
    lo = starts[feature, bucket]
    return feature.astype(np.int64), lo, lo + sizes[feature, bucket]


def _cut_into(feature, lo, hi, low_bits, large, sub_start, sub_bits):
    """The bucket list with each bucket of ``large`` replaced, in place in the order, by its
    nonempty sub-buckets (``sub_start``, one row per large bucket), their keys differing in
    ``sub_bits`` lowest bits."""
    sub_feature, sub_lo, sub_hi = _nonempty_buckets(sub_start)
    where = np.repeat(large, np.bincount(sub_feature, minlength=large.size))
    keep = np.ones(feature.size, dtype=bool)
    keep[large] = False
    # each large bucket's place goes to its sub-buckets, stably
    order = np.argsort(np.concatenate([np.flatnonzero(keep), where]), kind="stable")
    return tuple(np.concatenate([mine[keep], sub])[order] for mine, sub in (
        (feature, feature[large][sub_feature]), (lo, sub_lo), (hi, sub_hi),
        (low_bits, sub_bits[sub_feature])))


@njit(parallel=True, cache=True)
def _scatter_by_leading_digit(sorted_x, keys_tmp, idx_tmp, chunk_rows):
    """The first passes of :func:`sort_by_buckets`: the values of ``sorted_x`` (``X``
    transposed) made keys in place, in chunks of ``chunk_rows`` rows (an argument, not a
    global: numba compiles a global in as a constant, and its cache would keep it) every
    feature's key range found, the chunks' leading digits counted and their rows scattered
    into the buckets (digits in order, chunks in order within a digit: stable) in ``keys_tmp``
    and ``idx_tmp``.  Returns each feature's bucket starts (then its row count) and the shift
    of its leading digit (the bits below it)."""
    n_features, n_samples = sorted_x.shape
    keys = sorted_x.view(np.uint32)
    n_chunks = (n_samples + chunk_rows - 1) // chunk_rows
    n_items = n_features * n_chunks
    lowest = np.empty(n_items, dtype=np.uint32)
    highest = np.empty(n_items, dtype=np.uint32)
    for it in prange(n_items):
        f, lo, hi = _chunk(it, n_chunks, n_samples, chunk_rows)
        k_lo, k_hi = _NAN_KEY, np.uint32(0)
        for i in range(lo, hi):
            key = _float_to_key(keys[f, i])
            keys[f, i] = key
            k_lo = min(k_lo, key)
            k_hi = max(k_hi, key)
        lowest[it] = k_lo
        highest[it] = k_hi
    shift = np.zeros(n_features, dtype=np.uint32)  # of the leading digit
    for f in range(n_features):
        shift[f] = leading_shift(lowest[f * n_chunks:(f + 1) * n_chunks].min(),
                                 highest[f * n_chunks:(f + 1) * n_chunks].max())
    counts = np.zeros((n_items, _N_BUCKETS), dtype=np.int64)
    for it in prange(n_items):
        f, lo, hi = _chunk(it, n_chunks, n_samples, chunk_rows)
        _count_digits(keys[f], lo, hi, shift[f], counts[it])
    bucket_start = np.empty((n_features, _N_BUCKETS + 1), dtype=np.int64)
    for f in range(n_features):
        _digit_prefix(counts, f * n_chunks, (f + 1) * n_chunks, 0, bucket_start[f])
    for it in prange(n_items):
        f, lo, hi = _chunk(it, n_chunks, n_samples, chunk_rows)
        _scatter_digits(keys[f], idx_tmp[f], lo, hi, shift[f], counts[it], keys_tmp[f],
                        idx_tmp[f], True)
    return bucket_start, shift


@njit(cache=True, inline="always")
def _count_digits(keys, lo, hi, shift, counts):
    """Add the digits (11 bits from ``shift``) of ``keys[lo:hi]`` to ``counts``."""
    for i in range(lo, hi):
        counts[(keys[i] >> shift) & _DIGIT_MASK] += 1


@njit(cache=True, inline="always")
def _digit_prefix(counts, first, last, start, bucket_start):
    """Chunks ``first .. last - 1`` of one range: their digit counts (rows of ``counts``) become
    each chunk's first slot per digit, digit-major then chunk (a stable scatter), from slot
    ``start``; ``bucket_start`` gets each digit's first slot, then the range's end."""
    running = start
    for b in range(_N_BUCKETS):
        bucket_start[b] = running
        for c in range(first, last):
            n_b = counts[c, b]
            counts[c, b] = running
            running += n_b
    bucket_start[_N_BUCKETS] = running


@njit(cache=True, inline="always")
def _scatter_digits(keys, ids, lo, hi, shift, slots, keys_out, ids_out, ids_are_positions):
    """Scatter ``keys[lo:hi]`` and their ids to ``keys_out`` and ``ids_out`` by their digits
    (11 bits from ``shift``), each to its digit's next slot (``slots``, from
    :func:`_digit_prefix`); ``ids_are_positions`` (a constant): the ids are the positions
    themselves (``ids`` unread)."""
    for i in range(lo, hi):
        key = keys[i]
        b = (key >> shift) & _DIGIT_MASK
        slot = slots[b]
        slots[b] = slot + 1
        keys_out[slot] = key
        ids_out[slot] = i if ids_are_positions else ids[i]


@njit(parallel=True, cache=True)
def _split_buckets(keys, idx, keys_out, idx_out, bucket_feature, sub_shift, item_bucket,
                   item_lo, item_hi):
    """Cut large buckets (of ``keys``, ``idx``; in place) by their next digit, the 11 bits from
    ``sub_shift``: the same count, prefix and stable scatter as
    :func:`_scatter_by_leading_digit`, over the buckets' row chunks (items ``item_lo`` ..
    ``item_hi`` of bucket ``item_bucket``, each bucket's items consecutive and in order), through
    ``keys_out`` and ``idx_out`` (free: the sorted layout before the buckets' sorts) and back.
    Returns each bucket's sub-bucket starts (absolute positions), then its end."""
    n_items = item_bucket.shape[0]
    n_large = bucket_feature.shape[0]
    counts = np.zeros((n_items, _N_BUCKETS), dtype=np.int64)
    for it in prange(n_items):
        j = item_bucket[it]
        _count_digits(keys[bucket_feature[j]], item_lo[it], item_hi[it], sub_shift[j],
                      counts[it])
    sub_start = np.empty((n_large, _N_BUCKETS + 1), dtype=np.int64)
    first = 0
    for j in range(n_large):
        last = first
        while last < n_items and item_bucket[last] == j:
            last += 1
        _digit_prefix(counts, first, last, item_lo[first], sub_start[j])
        first = last
    for it in prange(n_items):
        j = item_bucket[it]
        f = bucket_feature[j]
        _scatter_digits(keys[f], idx[f], item_lo[it], item_hi[it], sub_shift[j], counts[it],
                        keys_out[f], idx_out[f], False)
    for it in prange(n_items):
        f = bucket_feature[item_bucket[it]]
        for i in range(item_lo[it], item_hi[it]):
            keys[f, i] = keys_out[f, i]
            idx[f, i] = idx_out[f, i]
    return sub_start


@njit(parallel=True, cache=True)
def _sort_buckets(keys_tmp, idx_tmp, sorted_x, sorted_idx, bucket_feature, bucket_lo,
                  bucket_hi, low_bits, task_bucket):
    """The last pass of :func:`sort_by_buckets`: task ``t`` sorts the buckets
    ``task_bucket[t] .. task_bucket[t + 1] - 1`` (feature, rows ``[lo, hi)`` of ``keys_tmp``
    and ``idx_tmp``, keys differing in their ``low_bits`` lowest bits) into ``sorted_x`` and
    ``sorted_idx``."""
    keys = sorted_x.view(np.uint32)
    for t in prange(task_bucket.shape[0] - 1):
        bucket_counts = np.empty((_N_PASSES, _N_BUCKETS), dtype=np.int64)
        for j in range(task_bucket[t], task_bucket[t + 1]):
            f = bucket_feature[j]
            lo = bucket_lo[j]
            hi = bucket_hi[j]
            _sort_bucket(keys_tmp[f, lo:hi], idx_tmp[f, lo:hi], keys[f, lo:hi],
                         sorted_idx[f, lo:hi], bucket_counts, low_bits[j])


@njit(cache=True, inline="always")
def leading_shift(lowest, highest):
    """Shift of the leading digit of keys in ``[lowest, highest]`` (uint32): the 11 bits below
    the prefix every such key shares (0 when they differ in fewer bits)."""
    differing = lowest ^ highest
    width = 0
    while differing:
        differing >>= np.uint32(1)
        width += 1
    return np.uint32(max(0, width - _RADIX_BITS))


def _bucket_tasks(feature, lo, hi, n_samples, n_features, n_tasks):
    """The cut of the buckets (each one's feature and rows ``[lo, hi)``, features one after
    another, in order) into ``n_tasks`` tasks of about equal rows: a bucket goes to the task its
    middle row falls in (a bucket is never split here, so a task holds at least its largest
    one); task ``t`` sorts the buckets ``task_bucket[t] .. task_bucket[t + 1] - 1``."""
    total = max(1, n_features * n_samples)
    task = np.minimum(n_tasks - 1, (2 * (feature * n_samples + lo) + hi - lo) * n_tasks
                      // (2 * total))
    return np.searchsorted(task, np.arange(n_tasks + 1), side="left").astype(np.int64)


@njit(cache=True, no_cpython_wrapper=True)
def _sort_bucket(keys, idx, out_keys, out_idx, counts, low_bits):
    """Sort one bucket's keys (``keys``, ``idx``: its row ids), which differ only in their
    ``low_bits`` lowest bits, into ``out_keys`` (as float bits) and ``out_idx``; the two pairs
    of arrays are each other's scratch."""
    n = keys.shape[0]
    if n <= _INSERTION_MAX:
        _insertion_sort(keys, idx)
        in_out = False
    else:
        bits = 8 if n <= _SMALL_RADIX else _RADIX_BITS
        keys, idx, in_out = _lsd_passes(keys, idx, out_keys, out_idx, counts, bits,
                                        (low_bits + bits - 1) // bits, False)
    for p in range(n):
        out_keys[p] = _key_to_float_bits(keys[p])
        if not in_out:
            out_idx[p] = idx[p]


def _sort_blocks(rows, tree_offsets, sorted_x, sorted_idx, keys_tmp, idx_tmp):
    """Sort in place every (tree, feature) row ``sorted_x[f, tree_offsets[k]:tree_offsets[k +
    1]]`` (``sorted_idx`` receiving its ids, counted from the tree's start), tree-major, in
    ``keys_tmp.shape[0]`` blocks of equal runs, one a thread
    (:func:`fasttree._threads.each_in_threads`), each with that row of the scratch.  ``rows``:
    "small" (every row at most ``_SMALL_RADIX`` values), "large" (more) or "any": each compiles
    only the sort it uses (:func:`sort_values` holds both, each about half a second of a first
    fit's compile, and again in every module it is linked into).  As a parallel kernel with the
    transpose, the presort took 1.6 s of a first fit's compile.

    The arrays are the callers' own, made by numpy: every large allocation maps fresh pages,
    each first touched through a page fault, and numpy asks the kernel for huge pages for large
    arrays (one fault per 2 MiB), numba's allocator does not; a scratch per feature would fault
    on ``8 * n_samples`` bytes per feature."""
    sort_block = specialized(_make_sort_block, rows)
    each_in_threads(lambda block: sort_block(block, tree_offsets, sorted_x, sorted_idx, keys_tmp,
                                             idx_tmp), keys_tmp.shape[0])


def _make_sort_block(rows):
    """The function that sorts one block of :func:`_sort_blocks` with the sort ``rows`` names."""

    def sort_block(block, tree_offsets, sorted_x, sorted_idx, keys_tmp, idx_tmp):
        n_features = sorted_x.shape[0]
        n_items = (tree_offsets.shape[0] - 1) * n_features
        n_blocks = keys_tmp.shape[0]
        counts = np.empty((4, _N_BUCKETS), np.int64)
        for item in range(block * n_items // n_blocks, (block + 1) * n_items // n_blocks):
            start = tree_offsets[item // n_features]
            end = tree_offsets[item // n_features + 1]
            f = item % n_features
            sort_row(sorted_x[f, start:end], sorted_idx[f, start:end], keys_tmp[block],
                     idx_tmp[block], counts)
            if start > 0:  # a later tree's ids follow the trees before it
                for p in range(start, end):
                    sorted_idx[f, p] += start

    # the row sort as the function's global, not a cell it closes over (see with_globals: so
    # no local here may be named sort_row)
    chosen = {"small": _sort_small, "large": _sort_large, "any": sort_values}[rows]
    return njit(cache=True, nogil=True, noalias=True)(with_globals(sort_block, sort_row=chosen))


@njit(cache=True)
def sort_values(values, order, keys_tmp, idx_tmp, counts):
    """Sort float32 ``values`` in place, stably: numbers in increasing order (``-0.0`` as
    ``0.0``), then every NaN (as one positive quiet NaN); ``order[i]`` receives the position
    the ``i``-th sorted value had.

    An LSD radix sort of the values' order-preserving integer keys (three passes of 11 bits,
    or four of 8 bits for at most ``_SMALL_RADIX`` values: fewer buckets to count and sum; a
    pass skipped when every key has the same digit), or an insertion sort of them for at most
    ``_INSERTION_MAX`` values; all stable, so the result is a stable argsort's.  The keys
    replace the float bits in ``values``' own memory and the positions start in ``order``, so
    the scratch is one array of keys and one of positions (``keys_tmp``, ``idx_tmp``: uint32
    and ``order``'s dtype, at least as long) and ``counts`` (int64, (4, 2048), overwritten).
    """
    if values.shape[0] <= _SMALL_RADIX:
        _sort_small(values, order, keys_tmp, idx_tmp, counts)
    else:
        _sort_large(values, order, keys_tmp, idx_tmp, counts)


@njit(cache=True, no_cpython_wrapper=True)
def _sort_small(values, order, keys_tmp, idx_tmp, counts):
    """:func:`sort_values` of at most ``_SMALL_RADIX`` values."""
    n = values.shape[0]
    if n <= _INSERTION_MAX:
        keys = values.view(np.uint32)
        for i in range(n):
            keys[i] = _float_to_key(keys[i])
            order[i] = i
        _insertion_sort(keys, order)
        for p in range(n):
            keys[p] = _key_to_float_bits(keys[p])
        return
    _radix_sort(values, order, keys_tmp, idx_tmp, counts, 8, 4)


@njit(cache=True, no_cpython_wrapper=True)
def _sort_large(values, order, keys_tmp, idx_tmp, counts):
    """:func:`sort_values` of more than ``_SMALL_RADIX`` values."""
    _radix_sort(values, order, keys_tmp, idx_tmp, counts, _RADIX_BITS, _N_PASSES)


@njit(cache=True, inline="always")
def _insertion_sort(keys, idx):
    """Stable insertion sort of ``keys``, ``idx`` moved alike."""
    for i in range(1, keys.shape[0]):
        key = keys[i]
        moved = idx[i]
        j = i
        while j > 0 and keys[j - 1] > key:  # strict: equal keys keep their order
            keys[j] = keys[j - 1]
            idx[j] = idx[j - 1]
            j -= 1
        keys[j] = key
        idx[j] = moved


@njit(cache=True, no_cpython_wrapper=True)
def stable_argsort(key):
    """``np.argsort(key, kind="stable")`` for keys without NaN, of any dtype: runs of
    ``_MERGE_RUN`` positions sorted by insertion, then merged bottom-up, equal keys in their
    order.

    numba's own ``np.argsort(kind="mergesort")`` took 1.8 s to compile in a first fit; this one
    sorts as fast within 5-20 % on a million targets and as fast on nodes of 256 rows or more
    (``docs/performance.md``).
    """
    n = key.shape[0]
    src = np.arange(n)
    for lo in range(0, n, _MERGE_RUN):
        hi = min(lo + _MERGE_RUN, n)
        for i in range(lo + 1, hi):
            moved = src[i]
            k = key[moved]
            j = i
            while j > lo and key[src[j - 1]] > k:  # strict: equal keys keep their order
                src[j] = src[j - 1]
                j -= 1
            src[j] = moved
    dst = np.empty(n, dtype=np.int64)
    width = _MERGE_RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                # the right run's key only when strictly smaller: stable
                if j < hi and (i >= mid or key[src[j]] < key[src[i]]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
        src, dst = dst, src
        width *= 2
    return src


#: positions :func:`stable_argsort` sorts by insertion before it merges (16 against 32: 0.155
#: against 0.171 s for a million values)
_MERGE_RUN = 16
#: a slice of at most this many values is sorted by insertion: fewer steps than a radix sort's
#: bucket counts and prefix sums
_INSERTION_MAX = 32
#: at most this many values are sorted with 8-bit digits
_SMALL_RADIX = 4096


@njit(cache=True, inline="always")
def _radix_sort(values, order, keys_tmp, idx_tmp, counts, bits, n_passes):
    """:func:`sort_values`' radix sort, ``n_passes`` digits of ``bits`` (constants: inlined,
    its loops unrolled)."""
    keys, idx, in_scratch = _lsd_passes(values.view(np.uint32), order, keys_tmp, idx_tmp, counts,
                                        bits, n_passes, True)
    out_bits = values.view(np.uint32)
    for p in range(values.shape[0]):
        out_bits[p] = _key_to_float_bits(keys[p])
    if in_scratch:
        for p in range(values.shape[0]):
            order[p] = idx[p]


@njit(cache=True, inline="always")
def _lsd_passes(keys, idx, keys_tmp, idx_tmp, counts, bits, n_passes, from_floats):
    """LSD radix passes over the ``n_passes`` lowest digits of ``bits`` bits of ``keys``
    (``from_floats``, a constant: ``keys`` hold float bits, made keys, and ``idx`` gets the
    positions, in the counting pass), ``idx`` moved alike, ``keys_tmp`` and ``idx_tmp`` the
    scratch, ``counts`` (int64, at least (n_passes, 2 ** bits)) overwritten.  A pass is skipped
    when every key has the same digit.

    Returns the keys and ids sorted (``keys`` and ``idx`` or the scratch arrays) and whether
    they are the scratch arrays."""
    n = keys.shape[0]
    mask = np.uint32((1 << bits) - 1)
    counts[:n_passes, :1 << bits] = 0
    for i in range(n):
        key = keys[i]
        if from_floats:
            key = _float_to_key(key)
            keys[i] = key
            idx[i] = i
        for d in range(n_passes):
            counts[d, (key >> np.uint32(d * bits)) & mask] += 1
    in_scratch = False  # whether the latest pass wrote to the scratch arrays
    for d in range(n_passes):
        shift = np.uint32(d * bits)
        if counts[d, (keys[0] >> shift) & mask] == n:
            continue  # every key has the same digit: the pass would not move anything
        # exclusive prefix sums: counts[d, b] becomes the first output slot of bucket b
        running = 0
        for b in range(1 << bits):
            c = counts[d, b]
            counts[d, b] = running
            running += c
        for i in range(n):
            key = keys[i]
            b = (key >> shift) & mask
            slot = counts[d, b]
            counts[d, b] = slot + 1
            keys_tmp[slot] = key
            idx_tmp[slot] = idx[i]
        keys, keys_tmp = keys_tmp, keys
        idx, idx_tmp = idx_tmp, idx
        in_scratch = not in_scratch
    return keys, idx, in_scratch


def check_row_ids(sorted_idx, n_ids, what="n_ids"):
    """ValueError unless ``sorted_idx`` is a C-contiguous 2-D int32 layout whose first feature row
    holds ids in ``[0, n_ids)`` (every feature row holds the same ids; kernels reading the other
    rows clamp theirs, so a wrong layout gives wrong values, never a read out of bounds)."""
    if (not isinstance(sorted_idx, np.ndarray) or sorted_idx.ndim != 2
            or sorted_idx.dtype != np.int32 or not sorted_idx.flags.c_contiguous):
        raise ValueError("sorted_idx must be a C-contiguous 2-D int32 array")
    if sorted_idx.size == 0:
        return
    first = sorted_idx[0]
    if n_ids <= 0 or first.min() < 0 or first.max() >= n_ids:
        raise ValueError(f"sorted_idx holds a row id outside [0, {int(n_ids)}) ({what})")


def presort_samples(X, in_sample):
    """Presort several samples of the rows of ``X`` (a forest's), each into a block of its own.

    Tree ``k``'s sample (the rows ``in_sample[k]``, in row order) becomes the block
    ``[tree_offsets[k], tree_offsets[k + 1])`` of every feature row, sorted as
    :func:`presort_features` sorts it alone (stable: tied values keep the rows' order), under
    ids of its own: the sample's rows get the ids ``tree_offsets[k], tree_offsets[k] + 1, ...``
    in row order, so a row drawn by several trees is in each of their blocks.  Several trees can
    then be grown in one layout (:meth:`fasttree.splitter.ExactSplitter.from_samples`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous (IN)
    in_sample : ndarray of shape (n_trees, n_samples), bool (IN)
        Whether tree ``k``'s sample holds row ``i``; every tree at least one row.

    Returns
    -------
    sorted_x : ndarray of shape (n_features, n_ids), float32, C-contiguous
    sorted_idx : ndarray of shape (n_features, n_ids), int32, C-contiguous
        The trees' blocks one after another, ``sorted_idx`` holding the new ids.
    origin : ndarray of shape (n_ids,), int64
        The row of ``X`` of every new id (targets and weights by id: ``y[origin]``).
    tree_offsets : ndarray of shape (n_trees + 1,), int64
        Where each tree's block starts; ``tree_offsets[-1] == n_ids``.

    Raises
    ------
    ValueError
        ``X`` or ``in_sample`` not as above, a tree with no row, or more ids than int32 holds.

    Notes
    -----
    One gather of the samples' rows into the feature rows, then one radix sort per (tree,
    feature) block, the blocks shared out to the threads in equal runs, each thread with its
    own scratch: no copy of a sorted block, where presorting each sample on its own and copying
    it into place took about twice as long (four bootstrap samples of 800,000 x 20).
    """
    if (not isinstance(X, np.ndarray) or X.dtype != np.float32 or X.ndim != 2
            or not X.flags.c_contiguous):
        raise ValueError("X must be a C-contiguous 2-D float32 array")
    in_sample = np.asarray(in_sample)
    if in_sample.dtype != np.bool_ or in_sample.ndim != 2 or in_sample.shape[1] != X.shape[0]:
        raise ValueError("in_sample must be a boolean array of shape (n_trees, n_samples)")
    tree_rows = in_sample.sum(axis=1)
    if tree_rows.size == 0 or not tree_rows.all():
        raise ValueError("every tree needs at least one row of its sample")
    tree_offsets = np.zeros(tree_rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(tree_rows, out=tree_offsets[1:])
    n_ids = int(tree_offsets[-1])
    if n_ids > np.iinfo(np.int32).max:
        raise ValueError(f"the samples hold {n_ids} rows in all, more than int32 ids")
    origin = np.nonzero(in_sample)[1].astype(np.int64)  # tree-major, rows in order: by new id
    n_features = X.shape[1]
    n_blocks = max(1, min(numba.get_num_threads(), tree_rows.shape[0] * n_features))
    sorted_x = np.empty((n_features, n_ids), dtype=np.float32)
    sorted_idx = np.empty((n_features, n_ids), dtype=np.int32)
    keys_tmp = np.empty((n_blocks, int(tree_rows.max())), dtype=np.uint32)
    idx_tmp = np.empty((n_blocks, int(tree_rows.max())), dtype=np.int32)
    if n_features:
        transpose(X, sorted_x, origin)
        _sort_blocks("any", tree_offsets, sorted_x, sorted_idx, keys_tmp, idx_tmp)
    return sorted_x, sorted_idx, origin, tree_offsets
