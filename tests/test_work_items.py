"""Work items balanced by rows (fasttree.kernels.work_items): the kernels that cut large nodes
into row chunks give the same answers as one scan per node, at every chunk size."""

import contextlib

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttree
from fasttree._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_SQUARED_ERROR,
)
from fasttree.kernels import (
    find_best_splits_classification,
    find_best_splits_regression,
    gather_targets,
    left_rows_bits,
    partition_segments,
    reciprocal_table,
    segment_class_weights,
    segment_target_sums,
    xlog2x_table,
)
from fasttree.kernels import presort as presort_module
from fasttree.kernels import split_search, work_items
from fasttree.kernels.work_items import MIN_TASK_ROWS, WorkItems
from test_gradient_kind import test_gradient_split_matches_a_direct_computation as gradient_test
from test_kernels import check_classification, layout, search_record, segmented_layout
from test_kernels import test_regression_split_matches_brute_force as regression_test


@contextlib.contextmanager
def tiny_tasks(rows, block_rows=1, threads=1 << 40):
    """Every level cut into tasks of ``rows`` to ``2 * rows`` rows (the smallest the kernels
    would use is MIN_TASK_ROWS; a test makes them tiny so that small data cross many chunk
    boundaries), sums added in blocks of ``block_rows`` rows, and searches whose tasks follow
    the thread count cut as for ``threads`` threads."""
    saved = (work_items.MIN_TASK_ROWS, work_items.MAX_TASKS, work_items.SUM_BLOCK_ROWS,
             split_search.search_threads)
    work_items.MIN_TASK_ROWS, work_items.MAX_TASKS = rows, 1 << 40
    work_items.SUM_BLOCK_ROWS = block_rows
    split_search.search_threads = lambda: threads
    try:
        yield
    finally:
        (work_items.MIN_TASK_ROWS, work_items.MAX_TASKS, work_items.SUM_BLOCK_ROWS,
         split_search.search_threads) = saved


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.integers(0, 50), max_size=12), chunk_rows=st.integers(1, 20))
def test_row_chunks_cut_every_range_in_order(rows, chunk_rows):
    """row_chunks: each range's chunks are consecutive, every one but its last holds
    chunk_rows rows and together they hold the range's rows; an empty range has one chunk."""
    rows = np.array(rows, dtype=np.int64)
    first, owner = work_items.row_chunks(rows, chunk_rows)
    assert first[0] == 0 and first[-1] == owner.size
    for i, n in enumerate(rows):
        chunks = np.arange(first[i], first[i + 1])
        assert chunks.size == max(1, -(-n // chunk_rows))
        assert np.all(owner[chunks] == i)
        starts = (chunks - first[i]) * chunk_rows
        sizes = np.minimum(chunk_rows, n - starts)
        assert np.all(starts < max(n, 1)) and sizes.sum() == n


def test_row_chunks_refuse_chunks_of_no_rows():
    with pytest.raises(ValueError, match="chunk_rows must be at least 1"):
        work_items.row_chunks(np.array([5]), 0)


@settings(max_examples=80, deadline=None)
@given(pair_rows=st.lists(st.integers(0, 50), max_size=12), n_tasks=st.integers(1, 9),
       seed=st.integers(0, 2**31 - 1), all_chunkable=st.booleans(), granule=st.integers(1, 4))
def test_plan_cuts_the_pairs_into_tasks_of_equal_rows(pair_rows, n_tasks, seed, all_chunkable,
                                                      granule):
    """Every pair covered once, in order; a pair is cut only if chunkable, its chunks tiling it
    consecutively and cut only at task boundaries (rounded up to a multiple of the granule);
    every item starts inside its task; with every pair chunkable and a granule of one row, every
    task holds its share of the rows exactly."""
    pair_rows = np.array(pair_rows, dtype=np.int64)
    chunkable = np.random.default_rng(seed).random(pair_rows.size) < 0.7
    chunkable |= all_chunkable
    n = pair_rows.size
    items = WorkItems(np.arange(n), np.arange(n), pair_rows, chunkable, n_tasks, granule)
    total = pair_rows.sum()
    bound = np.arange(n_tasks + 1) * total // n_tasks  # task t: rows [bound[t], bound[t + 1])
    before = np.concatenate([[0], np.cumsum(pair_rows)])  # the level's rows before each pair
    task_item = items.task_item
    assert task_item.shape == (n_tasks + 1,) and task_item[0] == 0
    assert task_item[-1] == items.item_first.size and np.all(np.diff(task_item) >= 0)
    task_rows = np.zeros(n_tasks, dtype=np.int64)
    covered = []
    for t in range(n_tasks):
        for i in range(task_item[t], task_item[t + 1]):
            first, stop = items.item_first[i], items.item_stop[i]
            assert first < stop
            if items.item_hi[i] > 0:  # a chunk of one pair, ending at its pair's or task's end
                lo, hi = items.item_lo[i], items.item_hi[i]
                assert stop == first + 1 and chunkable[first] and 0 <= lo < hi
                # the first multiple of the granule at or past the task's end
                assert hi == pair_rows[first] or (
                    hi % granule == 0 and 0 <= before[first] + hi - bound[t + 1] < granule)
                start, rows = before[first] + lo, hi - lo
            else:  # whole pairs
                start, rows = before[first], pair_rows[first:stop].sum()
            assert bound[t] <= start and (start < bound[t + 1] or t == n_tasks - 1)
            task_rows[t] += rows
            covered.extend(range(first, stop))
    assert task_rows.sum() == total
    if all_chunkable and granule == 1:
        np.testing.assert_array_equal(task_rows, np.diff(bound))
    # a chunked pair appears once per chunk, consecutively, its chunks tiling [0, n)
    assert sorted(set(covered)) == list(range(n)) and covered == sorted(covered)
    for q in range(n):
        k = items.pair_n_chunks[q]
        if items.pair_chunk[q] < 0:
            assert k == 1
            continue
        assert k >= 2
        chunks = slice(items.pair_chunk[q], items.pair_chunk[q] + k)
        assert items.item_lo[chunks][0] == 0 and items.item_hi[chunks][-1] == pair_rows[q]
        np.testing.assert_array_equal(items.item_lo[chunks][1:], items.item_hi[chunks][:-1])


@pytest.mark.parametrize("total, expected", [(0, 1), (1, 1), (MIN_TASK_ROWS - 1, 1),
                                             (2 * MIN_TASK_ROWS, 2), (7 * MIN_TASK_ROWS, 4),
                                             (10**12, work_items.MAX_TASKS)])
def test_tasks_per_level_is_a_power_of_two_of_at_least_min_rows(total, expected):
    assert work_items.tasks_per_level(total) == expected


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 40),
    m=st.integers(1, 3),
    n_classes=st.integers(1, 4),
    n_values=st.integers(1, 6),
    criterion=st.sampled_from(["gini", "entropy"]),
    msl=st.integers(1, 4),
    weighted=st.booleans(),
    n_segments=st.integers(1, 3),
    rows=st.integers(1, 6),
)
def test_chunked_classification_search_matches_brute_force(seed, n, m, n_classes, n_values,
                                                           criterion, msl, weighted, n_segments,
                                                           rows):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, m)).astype(np.float32) * 0.5
    y = rng.integers(0, n_classes, size=n).astype(np.int32)
    w = rng.uniform(0.1, 2.0, n) if weighted else np.ones(n)
    with tiny_tasks(rows):
        check_classification(rng, X, y, w, n_classes, criterion,
                             1 if n < 2 * n_segments else n_segments, msl, 0.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 40), m=st.integers(1, 3),
       n_values=st.integers(1, 6), msl=st.integers(1, 4), weighted=st.booleans(),
       rows=st.integers(1, 6), block_rows=st.integers(1, 5))
def test_chunked_regression_search_matches_brute_force(seed, n, m, n_values, msl, weighted,
                                                       rows, block_rows):
    with tiny_tasks(rows, block_rows):
        regression_test.hypothesis.inner_test(seed, n, m, n_values, msl, weighted)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 40), m=st.integers(1, 3),
       n_values=st.integers(1, 6), missing=st.booleans(), unit_hessian=st.booleans(),
       reg_lambda=st.sampled_from([0.0, 3.0]), msl=st.integers(1, 3),
       mcw=st.sampled_from([0.0, 2.5]), constrained=st.booleans(), rows=st.integers(1, 6),
       block_rows=st.integers(1, 5))
def test_chunked_gradient_search_matches_a_direct_computation(seed, n, m, n_values, missing,
                                                              unit_hessian, reg_lambda, msl,
                                                              mcw, constrained, rows,
                                                              block_rows):
    with tiny_tasks(rows, block_rows):
        gradient_test.hypothesis.inner_test(seed, n, m, n_values, missing, unit_hessian,
                                            reg_lambda, msl, mcw, constrained)


def whole_record(rng, X, y, w, n_classes, criterion, msl, rows, **options):
    """The search's record on a random segmented layout, with items of ``rows`` rows."""
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 3)
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    with tiny_tasks(rows):
        counts = segment_class_weights(sorted_idx, sorted_y, w, starts, ends, starts * 0,
                                       n_classes)
        return counts, search_record(
            find_best_splits_classification, sorted_x, sorted_idx, sorted_y, w, starts, ends,
            counts, np.ones((X.shape[1], starts.size), np.uint8), criterion, msl, 0.0,
            xlog2x_table(len(y)), **options)


@pytest.mark.parametrize("criterion", [CRITERION_GINI, CRITERION_ENTROPY])
@pytest.mark.parametrize("n_classes, weights", [(2, "unit"), (4, "unit"), (3, "integers")])
@pytest.mark.parametrize("rows", [1, 7, 64])
def test_chunks_give_the_unchunked_record_field_for_field(criterion, n_classes, weights, rows):
    # integer counts and integer-valued weights add up exactly in any order: every field of the
    # record, gain and impurity included, equals the one-scan-per-node record's
    rng = np.random.default_rng(rows + 10 * n_classes)
    n = 600
    X = rng.integers(0, 40, size=(n, 4)).astype(np.float32)
    X[rng.random(n) < 0.1, 1] = np.nan  # a feature with missing rows: scanned whole
    y = rng.integers(0, n_classes, size=n)
    w = np.empty(0) if weights == "unit" else rng.integers(1, 4, n).astype(np.float64)
    for msl in (1, 5):
        expected = whole_record(np.random.default_rng(1), X, y, w, n_classes, criterion, msl,
                                10**9)
        got = whole_record(np.random.default_rng(1), X, y, w, n_classes, criterion, msl, rows)
        np.testing.assert_array_equal(got[0], expected[0])
        for field, a, b in zip(expected[1]._fields, got[1], expected[1]):
            np.testing.assert_array_equal(a, b, err_msg=field)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("block_rows", [1, 5, 64])
def test_float_sums_give_the_unchunked_record_field_for_field(weighted, block_rows):
    """Float targets and weights, added in blocks: chunks of any size, cut for any thread
    count, give every field of the record bit for bit as one scan per node does."""
    rng = np.random.default_rng(block_rows)
    n = 700
    X = rng.integers(0, 60, size=(n, 3)).astype(np.float32)
    X[rng.random(n) < 0.1, 1] = np.nan  # a feature with missing rows: scanned whole
    y = rng.normal(size=n) * 1e3 + 1e-3 * rng.normal(size=n)
    w = rng.uniform(0.1, 2.0, n) if weighted else np.empty(0)

    def record(rows, threads):
        sorted_x, sorted_idx, starts, ends = segmented_layout(np.random.default_rng(1), X, 3)
        sorted_y = gather_targets(sorted_idx, y)
        with tiny_tasks(rows, block_rows, threads):
            sums = segment_target_sums(sorted_idx, sorted_y, w, starts, ends, starts * 0,
                                       CRITERION_SQUARED_ERROR)
            return search_record(
                find_best_splits_regression, sorted_x, sorted_idx, sorted_y, w, starts, ends,
                sums, np.ones((X.shape[1], starts.size), np.uint8), CRITERION_SQUARED_ERROR, 1,
                0.0, reciprocal_table(n))

    expected = record(10**9, 1)
    for rows, threads in [(1, 1 << 40), (7, 2), (13, 3), (64, 16)]:
        for field, a, b in zip(expected._fields, record(rows, threads), expected):
            np.testing.assert_array_equal(a, b, err_msg=f"{field}, tasks of {rows} rows")


def _presort_by_buckets(X, n_tasks, chunk_rows=1 << 16):
    n, n_features = X.shape
    sorted_x = np.empty((n_features, n), np.float32)
    sorted_idx = np.empty((n_features, n), np.int32)
    presort_module.sort_by_buckets(X, sorted_x, sorted_idx, n_tasks, chunk_rows)
    return sorted_x, sorted_idx


def _expect_stable_argsort(X, sorted_x, sorted_idx):
    order = np.argsort(X, axis=0, kind="stable").T
    np.testing.assert_array_equal(sorted_idx, order)
    np.testing.assert_array_equal(sorted_x, np.take_along_axis(X, order.T, 0).T)  # NaN too
    assert not np.signbit(sorted_x[sorted_x == 0]).any()  # -0.0 sorts and comes out as 0.0
    assert not np.signbit(sorted_x[np.isnan(sorted_x)]).any()  # every NaN positive


@pytest.mark.parametrize("n_tasks", [1, 7, 4096])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 16])
def test_presort_by_buckets_is_the_stable_argsort(rng, n_tasks, chunk):
    # row chunks of the leading-digit pass from 7 rows to the whole feature, one task to more
    # tasks than buckets; buckets from a few rows (insertion sort) to thousands (radix)
    n = 6000
    X = np.round(rng.normal(size=(n, 6)), 1).astype(np.float32)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[:5, 0] = -0.0
    X[5:9, 0] = np.float32(np.nan) * -1  # a negative NaN: sorts last too
    X[:, 1] = 3.0  # every key the same: no digit left to sort
    X[:, 2] = rng.normal(size=n).astype(np.float32)  # hardly a tie
    X[:, 3] = 1000 + np.abs(X[:, 2])  # a long prefix every key shares
    X[::3, 4] = np.inf
    X[1::3, 4] = -np.inf
    X[:, 5] = np.nan  # only NaN
    _expect_stable_argsort(X, *_presort_by_buckets(X, n_tasks, chunk))


@pytest.mark.parametrize("chunk", [5, 64, 1 << 16])
def test_large_buckets_are_cut_again_and_sort_the_same(rng, monkeypatch, chunk):
    """Values crowding one binade (a normal's around 1) leave a leading-digit bucket larger than
    a task's share: it is cut by its next digit, in row chunks, and the sort is unchanged; a
    bucket of equal keys is not cut (nothing to cut it by)."""
    n = 5000
    X = rng.normal(size=(n, 3)).astype(np.float32)
    X[rng.random(n) < 0.05, 0] = np.nan
    X[:, 1] = 7.0  # one bucket of every row, of equal keys
    X[:, 2] = np.round(X[:, 2], 2)  # ties
    split = presort_module._split_buckets
    cut = []
    monkeypatch.setattr(presort_module, "_split_buckets",
                        lambda *args: cut.append(args[4].tolist()) or split(*args))
    _expect_stable_argsort(X, *_presort_by_buckets(X, 64, chunk))
    assert len(cut) == 1 and {0, 2} == set(cut[0])  # the features of the buckets cut again


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32), min_size=1, max_size=300), st.integers(1, 40))
def test_presort_by_buckets_sorts_any_floats(values, n_tasks):
    X = np.array(values, dtype=np.float32)[:, None]
    _expect_stable_argsort(X, *_presort_by_buckets(X, n_tasks))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), min_size=4, max_size=4), min_size=1, max_size=3),
       st.integers(1, 12))
def test_bucket_tasks_cut_the_buckets_by_their_middle_rows(rows, n_tasks):
    """Every nonempty bucket once, in order (features one after another); each in the task its
    middle row falls in (so every task within a bucket of its share)."""
    rows = np.array(rows, dtype=np.int64)
    n_features, n_buckets = rows.shape
    n = rows[0].sum()
    rows[1:, -1] += n - rows[1:].sum(axis=1)  # every feature holds the same rows
    if (rows < 0).any():
        return
    bucket_start = np.zeros((n_features, n_buckets + 1), np.int64)
    np.cumsum(rows, axis=1, out=bucket_start[:, 1:])
    feature, lo, hi = presort_module._nonempty_buckets(bucket_start)
    expected = [(f, bucket_start[f, b], bucket_start[f, b + 1]) for f in range(n_features)
                for b in range(n_buckets) if rows[f, b] > 0]
    assert list(zip(feature.tolist(), lo.tolist(), hi.tolist())) == expected
    task_bucket = presort_module._bucket_tasks(feature, lo, hi, n, n_features, n_tasks)
    assert task_bucket.shape == (n_tasks + 1,) and task_bucket[0] == 0
    assert task_bucket[-1] == feature.size and np.all(np.diff(task_bucket) >= 0)
    for t in range(n_tasks):
        for j in range(task_bucket[t], task_bucket[t + 1]):
            middle = feature[j] * n + (lo[j] + hi[j]) / 2
            assert t == min(n_tasks - 1, int(middle * n_tasks // (n_features * n)))


def test_few_features_presort_uses_every_thread_and_sorts_the_same(rng, monkeypatch):
    monkeypatch.setattr(presort_module, "_SORT_CHUNK", 16)
    X = rng.integers(0, 50, size=(300, 3)).astype(np.float32)
    X[:, 1] = rng.normal(size=300)
    previous = numba.get_num_threads()
    try:
        for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(threads)
            for n_features in (1, 2, 3):
                part = np.ascontiguousarray(X[:, :n_features])
                sorted_x, sorted_idx = presort_module.presort_features(part)
                np.testing.assert_array_equal(sorted_idx,
                                              np.argsort(part, axis=0, kind="stable").T)
    finally:
        numba.set_num_threads(previous)


def test_one_feature_partition_checks_the_ids_and_moves_nothing(rng):
    n = 100
    sorted_x, sorted_idx = layout(rng.normal(size=(n, 1)))
    before = sorted_idx.copy()
    start, end = np.array([0]), np.array([n])
    partition_segments(sorted_x, sorted_idx, np.zeros((1, 0), np.uint8), start, end,
                       np.array([0]), np.array([40]), n)
    np.testing.assert_array_equal(sorted_idx, before)  # its rows are in order already
    with pytest.raises(ValueError, match="row id outside"):
        partition_segments(sorted_x, sorted_idx, np.zeros((1, 0), np.uint8), start, end,
                           np.array([0]), np.array([40]), n - 1)


def test_left_rows_bits_check_every_segment(rng):
    n = 1001
    ids = rng.permutation(n).astype(np.int32)[None, :]
    with tiny_tasks(3):
        bits = left_rows_bits(ids, np.array([0, 500]), np.array([500, 1001]),
                              np.array([0, 0]), np.array([100, 7]), n)
        goes_left = np.zeros(n, bool)
        goes_left[ids[0, :100]] = goes_left[ids[0, 500:507]] = True
        np.testing.assert_array_equal(bits, np.packbits(goes_left, bitorder="little"))
        with pytest.raises(ValueError, match="row id outside"):
            left_rows_bits(ids, np.array([0]), np.array([n]), np.array([0]), np.array([5]),
                           n - 1)
    # a bad id in the first of two pairs batched into one item
    bad = np.array([[5, 0, 1, 2]], dtype=np.int32)
    with pytest.raises(ValueError, match="row id outside"):
        left_rows_bits(bad, np.array([0, 2]), np.array([2, 4]), np.array([0, 0]),
                       np.array([1, 1]), 3)


@pytest.mark.parametrize("params", [
    {"criterion": "entropy"},
    {"criterion": "gini", "min_samples_leaf": 3, "class_weight": "balanced"},
    {"criterion": "entropy", "max_features": 1, "random_state": 0},
])
def test_trees_do_not_depend_on_the_item_size(params):
    from sklearn.datasets import make_classification
    X, y = make_classification(3000, 3, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    X = np.round(X, 1)
    X[::17, 2] = np.nan
    reference = fasttree.DecisionTreeClassifier(max_depth=8, **params).fit(X, y).tree_
    for rows in (1, 50, 999):
        with tiny_tasks(rows):
            tree = fasttree.DecisionTreeClassifier(max_depth=8, **params).fit(X, y).tree_
        for name in ("children_left", "feature", "threshold"):
            np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name),
                                          err_msg=name)
        # float weights (balanced classes) add up in another order when chunked
        exact = "class_weight" not in params
        for name in ("value", "impurity"):
            check = np.testing.assert_array_equal if exact else np.testing.assert_allclose
            check(getattr(tree, name), getattr(reference, name), err_msg=name)


@given(n_features=st.integers(0, 5), rows=st.lists(st.sampled_from([0, 1, 3, 40, 5000, 70000]),
                                                  max_size=8))
@settings(max_examples=200, deadline=None)
def test_grid_tasks_cut_the_grid_where_a_naive_cut_does(n_features, rows):
    """The random-threshold search's cut of the (feature, node) grid, against listing the
    pairs: each task starts at the first pair whose work before it reaches its share; the tasks
    cover every pair once, in order, as many as tasks_per_level gives for the work."""
    from fasttree.kernels.work_items import PAIR_COST, grid_tasks, tasks_per_level

    rows = np.array(rows, dtype=np.int64)
    seg_end = np.cumsum(rows)
    seg_start = seg_end - rows
    first = grid_tasks(seg_start, seg_end, n_features)
    work = np.tile(rows + PAIR_COST, n_features)
    before = np.concatenate([[0], np.cumsum(work)])[:-1]
    total = int(work.sum())
    n_tasks = tasks_per_level(total)
    want = [0]
    for t in range(1, n_tasks):
        reached = np.flatnonzero(before * n_tasks >= t * total)
        want.append(int(reached[0]) if reached.size else work.size)
    want.append(work.size)
    np.testing.assert_array_equal(first, want)


@settings(max_examples=60, deadline=None)
@given(pair_rows=st.lists(st.integers(0, 50), max_size=12), granule=st.integers(1, 4))
def test_one_task_items_are_the_plan_of_one_task(pair_rows, granule):
    """``WorkItems.one_task`` (a small layout's level) gives the arrays the plan gives for one
    task: one item of every pair, none cut."""
    pair_rows = np.array(pair_rows, dtype=np.int64)
    n = pair_rows.size
    pairs = np.arange(n, dtype=np.int64)
    planned = WorkItems(pairs, pairs, pair_rows, np.ones(n, dtype=bool), 1, granule)
    quick = WorkItems.one_task(pairs, pairs)
    for name in ("task_item", "item_first", "item_stop", "item_lo", "item_hi", "pair_chunk",
                 "pair_n_chunks"):
        np.testing.assert_array_equal(getattr(quick, name), getattr(planned, name), err_msg=name)
        assert getattr(quick, name).dtype == getattr(planned, name).dtype, name
    assert quick.n_chunked == planned.n_chunked == 0
    for a, b in zip(quick.arrays(), planned.arrays()):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 60), n_features=st.integers(1, 5),
       min_samples_leaf=st.integers(1, 4), missing=st.booleans(), constrained=st.booleans())
def test_a_small_layout_lists_the_pairs_a_large_one_does(seed, n_rows, n_features,
                                                          min_samples_leaf, missing, constrained):
    """The pairs of a layout small enough for one task a level (found serially, with its
    items made without a plan) are those of the parallel status and the plan: the same pairs,
    missing flag and items."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n_rows, n_features)).astype(np.float32)
    if missing:
        X[rng.random(X.shape) < 0.2] = np.nan
    sorted_x, _ = layout(X)
    cuts = np.unique(rng.integers(0, n_rows + 1, size=4))
    bounds = np.concatenate([[0], cuts[(cuts > 0) & (cuts < n_rows)], [n_rows]])
    seg_start, seg_end = bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64)
    mask = (rng.random((n_features, seg_start.size)) < 0.8).astype(np.uint8)
    cst = (rng.integers(-1, 2, n_features).astype(np.int8) if constrained
           else np.empty(0, dtype=np.int8))
    small = split_search.numeric_scan_items(sorted_x, seg_start, seg_end, mask, min_samples_leaf,
                                            cst)
    saved = split_search.ONE_TASK_LAYOUT
    split_search.ONE_TASK_LAYOUT = 0
    try:
        large = split_search.numeric_scan_items(sorted_x, seg_start, seg_end, mask,
                                                min_samples_leaf, cst)
    finally:
        split_search.ONE_TASK_LAYOUT = saved
    assert small[1] == large[1]
    for a, b in zip((small[0].task_item,) + small[0].arrays(),
                    (large[0].task_item,) + large[0].arrays()):
        np.testing.assert_array_equal(a, b)
