"""The partition's plan (pairs moved whole in lanes, large pairs in row chunks) and the chunked
moves against a naive stable partition, at chunk boundaries and through the estimators."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttree
from fasttree.kernels import partition as partition_module
from fasttree.kernels import partition_segments_bits, partition_segments_kway
from fasttree.kernels.partition import MoveScratch, _cut_lanes, _move_chunks, _move_plan
from fasttree.kernels.work_items import chunk_index
from test_kernels import gather_targets, segmented_layout


def naive_partition(before_idx, starts, ends, row_branch, n_branches):
    """Every segment of every feature row: its rows of branch 0, then 1, ..., each in its old
    order."""
    out = before_idx.copy()
    for s, (a, b) in enumerate(zip(starts, ends)):
        for g in range(before_idx.shape[0]):
            old = before_idx[g, a:b]
            out[g, a:b] = np.concatenate([old[row_branch[old] == k]
                                          for k in range(n_branches[s])])
    return out


def random_case(seed, n=211, m=3, n_segments=3, max_branches=1, labels=True):
    """A segmented layout, every row's branch (``max_branches`` 1: two branches, by bits)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 9, size=(n, m)).astype(np.float32)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, n_segments)
    y = rng.integers(0, 4, size=n).astype(np.uint8)
    sorted_y = gather_targets(sorted_idx, y) if labels else np.empty((m, 0), np.uint8)
    n_branches = (np.full(len(starts), 2) if max_branches == 1
                  else rng.integers(1, max_branches + 1, len(starts)))
    row_branch = np.zeros(n, np.int32)
    for s, (a, b) in enumerate(zip(starts, ends)):
        rows = sorted_idx[0, a:b]
        row_branch[rows] = rng.integers(0, n_branches[s], b - a)
    if len(starts):
        row_branch[sorted_idx[0, starts[0]:ends[0]]] = 0  # a segment going one way whole
    branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
    branch_rows = np.array([np.sum(row_branch[sorted_idx[0, a:b]] == k)
                            for s, (a, b) in enumerate(zip(starts, ends))
                            for k in range(n_branches[s])], dtype=np.int64)
    return dict(X=X, y=y, sorted_x=sorted_x, sorted_idx=sorted_idx, sorted_y=sorted_y,
                starts=starts, ends=ends, row_branch=row_branch, n_branches=n_branches,
                branch_offset=branch_offset, branch_rows=branch_rows)


def assert_partitioned(case, before_idx):
    expected = naive_partition(before_idx, case["starts"], case["ends"], case["row_branch"],
                               case["n_branches"])
    np.testing.assert_array_equal(case["sorted_idx"], expected)
    for a, b in zip(case["starts"], case["ends"]):  # values and labels moved with their rows
        rows = expected[:, a:b]
        np.testing.assert_array_equal(
            case["sorted_x"][:, a:b], case["X"].T[np.arange(rows.shape[0])[:, None], rows])
        if case["sorted_y"].shape[1]:
            np.testing.assert_array_equal(case["sorted_y"][:, a:b], case["y"][rows])


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("max_branches", [1, 4])
@pytest.mark.parametrize("labels", [True, False])
@pytest.mark.parametrize("scratch_rows", ["one feature", "largest pair", "kept"])
def test_chunked_moves_match_naive_stable_partition(chunk_rows, max_branches, labels,
                                                     scratch_rows):
    """The chunk mover alone, on every pair: chunks of one row, chunks not dividing a segment,
    a chunk larger than its segment; a scratch of one pair at a time (several batches), of a
    feature row, and one kept from a larger call."""
    case = random_case(chunk_rows, max_branches=max_branches, labels=labels)
    starts, ends, m = case["starts"], case["ends"], case["X"].shape[1]
    feature = np.repeat(np.arange(m), len(starts)).astype(np.int64)
    segment = np.tile(np.arange(len(starts)), m).astype(np.int64)
    rows = (ends - starts)[segment]
    scratch = MoveScratch()
    if scratch_rows == "kept":
        scratch.arrays(10 * case["X"].shape[0], case["sorted_y"])
    capacity = {"one feature": int(np.bincount(feature, weights=rows).max()),
                "largest pair": int(rows.max()), "kept": 1}[scratch_rows]
    before_idx = case["sorted_idx"].copy()
    bits = np.packbits(case["row_branch"] == 0, bitorder="little")
    _move_chunks(max_branches > 1)(
        case["sorted_x"], case["sorted_idx"], case["sorted_y"], starts, ends,
        case["branch_offset"], case["row_branch"], bits, feature, segment,
        *chunk_index(np.maximum(1, -(-rows // chunk_rows))),
        *scratch.arrays(capacity, case["sorted_y"]))
    assert_partitioned(case, before_idx)


@pytest.fixture
def chunk_everything(monkeypatch):
    """Chunks of 3 rows, chunked moves as cheap as whole ones, and the plan made as for two
    threads at least (the kernels run on however many there are): the plan chunks every pair
    it may."""
    plan = partition_module._move_plan
    monkeypatch.setattr(partition_module, "MOVE_CHUNK_ROWS", 3)
    monkeypatch.setattr(partition_module, "MIN_MOVE_CHUNK_ROWS", 1)
    monkeypatch.setattr(partition_module, "CHUNKED_MOVE_COST", 0.0)
    monkeypatch.setattr(partition_module, "_move_plan",
                        lambda n_features, seg_start, seg_end, skip, n_threads, *chunk_rows:
                        plan(n_features, seg_start, seg_end, skip, max(n_threads, 2),
                             *chunk_rows))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("max_branches", [1, 3])
def test_public_partitions_with_chunked_pairs_match_naive(chunk_everything, seed, max_branches):
    case = random_case(seed, n=300, m=2, n_segments=2, max_branches=max_branches)
    starts, ends = case["starts"], case["ends"]
    no_skip = np.full(len(starts), -1, np.int64)
    *_, chunked_feature, _, n_chunks = _move_plan(2, starts, ends, no_skip, 2, 1, 3)
    assert chunked_feature.size > 0 and n_chunks.min() > 1  # the case exercises the chunks
    before_idx = case["sorted_idx"].copy()
    if max_branches == 1:
        partition_segments_bits(case["sorted_x"], case["sorted_idx"], case["sorted_y"], starts,
                                ends, case["branch_rows"][0::2],
                                np.packbits(case["row_branch"] == 0, bitorder="little"))
    else:
        partition_segments_kway(case["sorted_x"], case["sorted_idx"], case["sorted_y"], starts,
                                ends, case["branch_offset"], case["branch_rows"],
                                case["row_branch"])
    assert_partitioned(case, before_idx)


def fitted_arrays(est):
    t = est.tree_
    return [t.children_left, t.children_right, t.feature, t.threshold, t.value,
            t.n_node_samples]


@pytest.mark.parametrize("params", [
    dict(criterion="entropy", max_depth=6),
    dict(criterion="gini", missing="learn", categorical_features=[1]),
    dict(criterion="gini", missing="learn", categorical_features=[1],
         categorical_split="multiway"),
])
def test_trees_with_chunked_partitions_equal_the_unchunked_ones(chunk_everything, params):
    """Every partition of a fit chunked (numeric prefix splits, routed NaN rows and category
    subsets by the two-way movers, multiway category splits by the k-way ones): the same tree
    as with every pair moved whole."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    X[:, 1] = rng.integers(0, 5, 2000)
    X[rng.random(2000) < 0.1, 2] = np.nan
    y = (X[:, 0] + X[:, 1] + np.nan_to_num(X[:, 2]) + rng.normal(size=2000) > 2).astype(int)
    calls = []
    make = partition_module._move_chunks
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(partition_module, "_move_chunks",
                   lambda k_way: calls.append(k_way) or make(k_way))
        chunked = fasttree.DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(partition_module, "CHUNKED_MOVE_COST", 1e9)  # nothing chunked
        whole = fasttree.DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    # the fit moved in chunks, by the k-way movers only for nodes of more than two branches
    multiway = params.get("categorical_split") == "multiway"
    assert calls and (True in calls) == multiway
    assert chunked.tree_.node_count > 20
    for a, b in zip(fitted_arrays(chunked), fitted_arrays(whole)):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_features=st.integers(1, 7),
       n_segments=st.integers(0, 9), n_threads=st.integers(1, 70),
       min_chunk_rows=st.integers(1, 40), more_rows=st.integers(0, 40))
def test_move_plan_covers_every_pair_once(seed, n_features, n_segments, n_threads,
                                          min_chunk_rows, more_rows):
    """Every (feature, segment) pair but the segments' own split features, once: whole (in at
    most n_threads lanes, each within the largest pair of its fair share) or chunked (only on
    more than one thread, only pairs of two smallest chunks or more; a feature row's chunks a
    multiple of n_threads when at least as many, each pair's share of them about its share of
    the row's rows); each list feature-major."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 200, n_segments)
    ends = np.cumsum(rows).astype(np.int64)
    starts = ends - rows
    skip = rng.integers(-1, n_features, n_segments).astype(np.int64)
    lane_first, chunked_feature, chunked_segment, n_chunks = _move_plan(
        n_features, starts, ends, skip, n_threads, min_chunk_rows, min_chunk_rows + more_rows)
    expected = [(g, s) for g in range(n_features) for s in range(n_segments) if skip[s] != g]
    chunked = list(zip(chunked_feature.tolist(), chunked_segment.tolist()))
    # the lanes' pairs, read off the grid as the mover does
    lanes = [[(q // n_segments, q % n_segments) for q in range(a, b)
              if skip[q % n_segments] != q // n_segments
              and (q // n_segments, q % n_segments) not in chunked]
             for a, b in zip(lane_first[:-1], lane_first[1:])]
    whole = [pair for lane in lanes for pair in lane]
    assert sorted(whole + chunked) == expected
    assert whole == sorted(whole) and chunked == sorted(chunked)
    assert n_threads > 1 or not chunked
    assert all(rows[s] >= 2 * min_chunk_rows for _, s in chunked)
    assert n_chunks.shape == chunked_feature.shape and np.all(n_chunks >= 1)
    for g in np.unique(chunked_feature):
        mine = chunked_feature == g
        k, r = n_chunks[mine], rows[chunked_segment[mine]]
        total = -(-r.sum() // int(np.clip(-(-np.bincount(
            chunked_feature, weights=rows[chunked_segment]).max() // (4 * n_threads)),
            min_chunk_rows, min_chunk_rows + more_rows)))
        if total >= n_threads:
            total = n_threads * -(-total // n_threads)
        # rounded shares: total chunks unless a tiny pair was raised to one
        assert k.sum() == total or (k.sum() > total and (k == 1).any())
        share = r * total / r.sum()
        assert np.all((np.abs(k - share) < 1) | ((k == 1) & (share < 1)))
    assert lane_first[0] == 0 and lane_first[-1] == n_features * n_segments
    assert np.all(np.diff(lane_first) >= 0) and 1 <= len(lane_first) - 1 <= max(1, n_threads)
    if whole:
        lane_rows = np.array([sum(rows[s] for _, s in lane) for lane in lanes])
        cost = np.array([rows[s] for _, s in whole])
        assert lane_rows.max() <= cost.sum() / len(lanes) + cost.max()


def _best_largest_lane(rows, n_lanes):
    """The smallest largest lane over every cut of ``rows`` into ``n_lanes`` lanes of
    consecutive pairs (each nonempty), by trying them all."""
    n = len(rows)
    return min(max(sum(rows[a:b]) for a, b in zip((0, *cuts), (*cuts, n)))
               for cuts in itertools.combinations(range(1, n), n_lanes - 1))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.integers(0, 10**6), min_size=1, max_size=9), n_threads=st.integers(1, 6))
def test_cut_lanes_is_within_its_tolerance_of_the_best_cut(rows, n_threads):
    """The lanes cover the pairs in order, at most one per thread, and the largest holds at most
    1/256 of the lower bound (largest pair, a lane's share) more than the best cut's."""
    rows = np.array(rows, dtype=np.int64)
    lane_first = _cut_lanes(rows, n_threads)
    n_lanes = max(1, min(n_threads, rows.size))
    assert lane_first.shape == (n_lanes + 1,) and lane_first[0] == 0
    assert lane_first[-1] == rows.size and np.all(np.diff(lane_first) >= 0)
    ends = np.concatenate([[0], np.cumsum(rows)])
    largest = (ends[lane_first[1:]] - ends[lane_first[:-1]]).max()
    bound = max(rows.max(), -(-rows.sum() // n_lanes))
    assert largest <= _best_largest_lane(rows.tolist(), n_lanes) + max(1, bound // 256)


def test_cut_lanes_beats_the_nearest_cut_where_one_pair_is_large():
    """Three threads, a large pair near the start: cuts nearest each share of 4,000 rows put a
    small pair beside it (largest lane 7,000 rows), the best cut leaves it alone (6,000)."""
    lane_first = _cut_lanes(np.array([1000, 6000, 1000, 1000, 3000]), 3)
    assert lane_first.tolist() == [0, 1, 2, 5]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_features=st.integers(1, 6),
       n_segments=st.integers(1, 300), n_threads=st.integers(2, 70))
def test_grid_cut_gives_the_lanes_of_the_listed_pairs(seed, n_features, n_segments, n_threads):
    """The cut found from the segments alone (a deep level's many small pairs, never listed)
    gives lanes of the same rows as the nearest cut of the pairs listed one by one, and is
    declined exactly where that one would be bettered by bisection."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, rng.choice([3, 50, 5000]), n_segments).astype(np.int64)
    skip = rng.integers(-1, n_features, n_segments).astype(np.int64)
    listed = [(g, s) for g in range(n_features) for s in range(n_segments) if skip[s] != g]
    feature_rows = np.array([sum(rows[s] for h, s in listed if h == g)
                             for g in range(n_features)], dtype=np.int64)
    n_lanes = min(n_threads, len(listed))
    lane_first = partition_module._grid_cut(rows, skip, feature_rows, n_lanes)
    pair_rows = np.array([rows[s] for _, s in listed], dtype=np.int64)
    ends = np.concatenate([[0], np.cumsum(pair_rows)])
    # the nearest cut, naively: each share's running rows nearest it (the smaller on a tie)
    reached = [0]
    for j in range(1, n_lanes):
        share = ends[-1] * j / n_lanes
        nearest = min(ends.tolist(), key=lambda e: (abs(e - share), e))
        reached.append(max(reached[-1], nearest))
    reached.append(int(ends[-1]))
    nearest_lanes = np.diff(reached)
    bound = max(int(rows.max()), -(-int(ends[-1]) // max(n_lanes, 1)))
    if n_lanes > 1 and nearest_lanes.max() - bound > max(1, bound // 256):
        assert lane_first is None
        return
    assert lane_first[0] == 0 and lane_first[-1] == n_features * n_segments
    grid_lanes = [sum(rows[q % n_segments] for q in range(a, b)
                      if skip[q % n_segments] != q // n_segments)
                  for a, b in zip(lane_first[:-1], lane_first[1:])]
    assert grid_lanes == (nearest_lanes.tolist() if n_lanes > 1 else [ends[-1]])
