"""Every kernel against its naive twin in tests/reference.py."""

import inspect
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from fasttree._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    SELECT_IMPURITY,
)
from fasttree.kernels import (
    apply_tree,
    decision_paths,
    find_best_splits_classification,
    find_best_splits_regression,
    gather_targets,
    new_split_record,
    numeric_split_arrays,
    left_rows_bits,
    partition_segments,
    partition_segments_bits,
    presort_features,
    reciprocal_table,
    relabel_rows,
    segment_class_weights,
    segment_target_sums,
    select_best_splits,
    xlog2x_table,
    unconstrained,
)
from fasttree.tree import Tree
from fasttree.kernels.node_stats import run_segment_class_weights, run_segment_target_sums
from fasttree.kernels.presort import sort_values, stable_argsort
from reference import apply_naive, brute_force_split, missing_aware_numeric_split

CRITERIA = {"gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY}


#: Optional rules of the search kernels (C4.5's minimum branch weight, fractional missing rows,
#: monotonicity constraints), off unless a test turns them on.
OPTIONS_OFF = {"min_branch_fraction": 0.0, "missing_fractional": False,
               "monotonic_cst": unconstrained()[0], "node_bounds": unconstrained()[1]}


def search_record(kernel, *args, **options):
    """Run a search kernel into a fresh SplitRecord and return the record.

    ``args`` are the kernel's arguments up to its count table (``args[7]`` is the feature mask,
    whose shape is the record's); the optional rules the kernel has are passed by name (off
    unless given in ``options``), the record's arrays by field name.
    """
    params = inspect.signature(getattr(kernel, "py_func", kernel)).parameters
    kwargs = {k: v for k, v in {**OPTIONS_OFF, **options}.items() if k in params}
    record = new_split_record(*args[7].shape)
    kernel(*args, **kwargs, record=record)
    return record


def search(kernel, *args, **options):
    """:func:`search_record`, returning ``(children_impurity, threshold, n_left)`` (what the
    kernels returned before they filled a SplitRecord)."""
    record = search_record(kernel, *args, **options)
    return record.children_impurity, record.threshold, record.n_left


def layout(X):
    """Presorted working layout of a float32 matrix."""
    return presort_features(np.ascontiguousarray(X, dtype=np.float32))


def random_segments(rng, n, n_segments):
    """Split 0..n into contiguous, non-overlapping segments (some rows left out)."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, 2 * n_segments), replace=False))
    cuts = np.concatenate([[0], cuts, [n]])
    starts, ends = cuts[:-1:2], cuts[1::2]
    return starts.astype(np.int64), ends.astype(np.int64)


def segmented_layout(rng, X, n_segments):
    """A layout in which each segment holds a random subset of rows, each feature sorted inside.

    Built independently of the partition kernel: rows are assigned to segments at random, then
    every feature is sorted within each segment with numpy.
    """
    n, m = X.shape
    starts, ends = random_segments(rng, n, n_segments)
    perm = rng.permutation(n)
    sorted_x = np.zeros((m, n), np.float32)
    sorted_idx = np.zeros((m, n), np.int32)
    for f in range(m):
        for s, e in zip(starts, ends):
            rows = perm[s:e]
            order = rows[np.argsort(X[rows, f], kind="stable")]
            sorted_idx[f, s:e] = order
            sorted_x[f, s:e] = X[order, f]
    return sorted_x, sorted_idx, starts, ends


@pytest.mark.parametrize("kind", ["ties", "normal", "wide", "signed-zeros", "constant"])
def test_presort_matches_stable_argsort(rng, kind):
    n = 3000
    X = {
        "ties": rng.integers(-3, 3, size=(n, 4)),
        "normal": rng.normal(size=(n, 4)),
        # magnitudes from 1e-38 to 1e38, both signs: every radix digit matters
        "wide": rng.choice([-1, 1], size=(n, 4)) * 10.0 ** rng.uniform(-38, 38, size=(n, 4)),
        "signed-zeros": rng.choice([-0.0, 0.0, -1.5, 2.5], size=(n, 4)),
        "constant": np.full((n, 4), 7.25),
    }[kind].astype(np.float32)
    sorted_x, sorted_idx = layout(X)
    for f in range(4):
        expected = np.argsort(X[:, f], kind="stable")
        np.testing.assert_array_equal(sorted_idx[f], expected)
        np.testing.assert_array_equal(sorted_x[f], X[expected, f])  # -0.0 == 0.0 here
        assert not np.signbit(sorted_x[f][sorted_x[f] == 0]).any()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=60))
def test_presort_any_float32_values(values):
    x = np.array(values, dtype=np.float32)[:, None]
    sorted_x, sorted_idx = layout(x)
    np.testing.assert_array_equal(sorted_idx[0], np.argsort(x[:, 0], kind="stable"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True),
                          st.sampled_from([0.0, -0.0, 1.5])), max_size=90))
def test_sort_values_is_a_stable_argsort(values):
    """The radix (and, up to 32 values, insertion) sort of a node's values: numpy's stable
    argsort (NaN last), zeros unsigned, every NaN one quiet NaN."""
    x = np.array(values, dtype=np.float32)
    sorted_x, order = x.copy(), np.empty(x.size, dtype=np.int32)
    sort_values(sorted_x, order, np.empty(x.size, np.uint32), np.empty(x.size, np.int32),
                np.empty((4, 2048), np.int64))
    expected = np.argsort(np.where(x == 0, np.float32(0), x), kind="stable")
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(sorted_x, x[expected])  # NaN == NaN here, -0.0 == 0.0
    assert not np.signbit(sorted_x[sorted_x == 0]).any()


@njit
def _stable_argsort_called(key):
    return stable_argsort(key)  # the kernel has no Python wrapper of its own


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=True) | st.sampled_from([0.0, 1.5]),
                max_size=120))
def test_stable_argsort_is_numpys(values):
    """Positions of a node's targets (absolute error) or categories' means (subset splits) in
    increasing key order, equal keys in their order: across and within the insertion runs."""
    key = np.array(values)
    np.testing.assert_array_equal(_stable_argsort_called(key), np.argsort(key, kind="stable"))


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 1000, 100_000])
def test_stable_argsort_of_every_size(rng, n):
    for key in (rng.normal(size=n), rng.integers(0, 7, n).astype(np.float64), -np.arange(n)):
        np.testing.assert_array_equal(_stable_argsort_called(key),
                                      np.argsort(key, kind="stable"))


@pytest.mark.parametrize("n", [33, 1000, 4096, 4097, 20000])
def test_sort_values_of_every_size(rng, n):
    """Each way of sorting (8-bit digits up to 4,096 values, 11-bit above), on values of every
    sign and magnitude, ties, zeros of both signs, infinities and NaN."""
    x = (rng.choice([-1, 1], size=n) * 10.0 ** rng.uniform(-38, 38, size=n)).astype(np.float32)
    special = rng.random(n)
    x[special < 0.1] = np.round(x[special < 0.1], 0)
    x[special < 0.02] = np.nan
    x[(special > 0.5) & (special < 0.52)] = -0.0
    x[(special > 0.6) & (special < 0.61)] = np.inf
    sorted_x, order = x.copy(), np.empty(n, dtype=np.int32)
    sort_values(sorted_x, order, np.empty(n, np.uint32), np.empty(n, np.int32),
                np.empty((4, 2048), np.int64))
    expected = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(sorted_x, x[expected])


def check_classification(rng, X, y, w, n_classes, criterion, n_segments, msl, mwl):
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, n_segments)
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    np.testing.assert_array_equal(sorted_y, y[sorted_idx])
    # unit weights take the kernels' fast path: an empty weight array
    w_kernel = np.empty(0) if np.all(w == 1.0) else w
    counts = segment_class_weights(sorted_idx, sorted_y, w_kernel, starts, ends, starts * 0,
                                   n_classes)
    mask = np.ones((X.shape[1], starts.size), np.uint8)
    imp, thr, n_left = search(
        find_best_splits_classification, sorted_x, sorted_idx, sorted_y, w_kernel, starts, ends,
        counts, mask, CRITERIA[criterion], msl, mwl, xlog2x_table(len(y)))
    for s, (a, b) in enumerate(zip(starts, ends)):
        rows = sorted_idx[0, a:b]
        np.testing.assert_allclose(counts[s], np.bincount(y[rows], w[rows], n_classes))
        for f in range(X.shape[1]):
            ref_value, _, _ = brute_force_split(
                X[rows, f], y[rows], w[rows], criterion=criterion, n_classes=n_classes,
                min_samples_leaf=msl, min_weight_leaf=mwl)
            check_against_reference(imp[f, s], thr[f, s], n_left[f, s], ref_value, X[rows, f])


def check_against_reference(value, thr, n_left, ref_value, x, tolerance=1e-9):
    """The kernel's best value equals brute force's, and its threshold sends n_left rows left."""
    if not np.isfinite(ref_value):
        assert value == np.inf
        return
    assert value == pytest.approx(ref_value, rel=tolerance, abs=tolerance)
    assert int((x <= thr).sum()) == n_left


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 40),
    m=st.integers(1, 4),
    n_classes=st.integers(1, 4),
    n_values=st.integers(1, 6),
    criterion=st.sampled_from(["gini", "entropy"]),
    msl=st.integers(1, 4),
    weighted=st.booleans(),
    n_segments=st.integers(1, 3),
)
def test_classification_split_matches_brute_force(seed, n, m, n_classes, n_values, criterion,
                                                   msl, weighted, n_segments):
    rng = np.random.default_rng(seed)
    # few distinct values: ties, duplicates and constant columns are common
    X = rng.integers(0, n_values, size=(n, m)).astype(np.float32) * 0.5
    y = rng.integers(0, n_classes, size=n).astype(np.int32)
    w = rng.uniform(0.1, 2.0, n) if weighted else np.ones(n)
    if n < 2 * n_segments:
        n_segments = 1
    check_classification(rng, X, y, w, n_classes, criterion, n_segments, msl, 0.0)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", range(8))
def test_classification_split_random_continuous(seed, criterion):
    rng = np.random.default_rng(seed)
    n, m, k = 200, 5, 3
    X = rng.normal(size=(n, m)).astype(np.float32)
    X[:, 2] = 1.0  # constant column
    y = rng.integers(0, k, size=n).astype(np.int32)
    w = rng.uniform(0.0, 1.0, n)  # includes near-zero weights
    check_classification(rng, X, y, w, k, criterion, 4, 3, 0.5)



@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 40),
    n_classes=st.integers(1, 4),
    criterion=st.sampled_from(["gini", "entropy"]),
    missing=st.booleans(),
    constrained=st.booleans(),
    msl=st.integers(1, 3),
    mwl=st.sampled_from([0.0, 2.5]),
    n_segments=st.integers(1, 3),
)
def test_classification_split_with_uint8_counts_matches_brute_force(
        seed, n, n_classes, criterion, missing, constrained, msl, mwl, n_segments):
    """uint8 weights are counts (a bootstrap's): every pair's best split, candidates and the
    weight sent left as a direct search with those counts as float weights finds them (rows
    of count 0 included; missing values; a monotonicity constraint with two classes)."""
    rng = np.random.default_rng(seed)
    m = 2
    X = rng.integers(0, 5, size=(n, m)).astype(np.float32) * 0.5
    if missing:
        X[rng.random((n, m)) < 0.2] = np.nan
    y = rng.integers(0, n_classes, size=n).astype(np.int32)
    counts = rng.integers(0, 4, size=n).astype(np.uint8)
    w = counts.astype(np.float64)
    n_segments = n_segments if n >= 2 * n_segments else 1
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, n_segments)
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    stats = segment_class_weights(sorted_idx, sorted_y, counts, starts, ends, starts * 0,
                                  n_classes)
    constrain = constrained and n_classes == 2
    cst = np.array([1, -1], np.int8) if constrain else unconstrained()[0]
    bounds = np.tile([0.2, 0.9], (starts.size, 1)) if constrain else unconstrained()[1]
    record = search_record(
        find_best_splits_classification, sorted_x, sorted_idx, sorted_y, counts, starts, ends,
        stats, np.ones((m, starts.size), np.uint8), CRITERIA[criterion], msl, mwl,
        xlog2x_table(int(w.sum())), monotonic_cst=cst, node_bounds=bounds)
    for s, (a, b) in enumerate(zip(starts, ends)):
        rows = sorted_idx[0, a:b]
        np.testing.assert_array_equal(stats[s], np.bincount(y[rows], w[rows], n_classes))
        for f in range(m):
            monotonic = (cst[f], 0.2, 0.9) if constrain else None
            expected, _, n_valid = missing_aware_numeric_split(
                X[rows, f], y[rows], w[rows], criterion=criterion, n_classes=n_classes,
                min_samples_leaf=msl, min_weight_leaf=mwl, monotonic=monotonic)
            got = record.children_impurity[f, s]
            if not np.isfinite(expected):
                assert got == np.inf
                continue
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
            assert record.n_candidates[f, s] == n_valid
            x = X[rows, f]
            left = np.where(np.isnan(x), record.missing_branch[f, s] == 0,
                            x <= record.threshold[f, s])
            assert record.n_left[f, s] == left.sum()


def test_uint8_counts_need_a_long_enough_table_and_no_fractional_rows():
    X = np.arange(6, dtype=np.float32)[:, None]
    sorted_x, sorted_idx = layout(X)
    sorted_y = gather_targets(sorted_idx, np.array([0, 0, 1, 1, 0, 1], np.uint8))
    counts = np.full(6, 3, np.uint8)
    start, end = np.array([0]), np.array([6])
    stats = segment_class_weights(sorted_idx, sorted_y, counts, start, end, start * 0, 2)
    args = (sorted_x, sorted_idx, sorted_y, counts, start, end, stats,
            np.ones((1, 1), np.uint8), CRITERION_GINI, 1, 0.0)
    with pytest.raises(ValueError, match="longer than each node's count"):
        search_record(find_best_splits_classification, *args, xlog2x_table(6))
    with pytest.raises(ValueError, match="missing_fractional"):
        search_record(find_best_splits_classification, *args, xlog2x_table(18),
                      missing_fractional=True)
    with pytest.raises(TypeError, match="float64 or uint8"):
        search_record(find_best_splits_classification, *args[:3], counts.astype(np.int32),
                      *args[4:], xlog2x_table(18))
    record = search_record(find_best_splits_classification, *args, xlog2x_table(18))
    assert record.n_left[0, 0] == 2 and record.children_impurity[0, 0] < np.inf

@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 40),
    m=st.integers(1, 4),
    n_values=st.integers(1, 6),
    msl=st.integers(1, 4),
    weighted=st.booleans(),
)
def test_regression_split_matches_brute_force(seed, n, m, n_values, msl, weighted):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, m)).astype(np.float32)
    y = rng.normal(size=n) * 10
    w = rng.uniform(0.1, 2.0, n) if weighted else np.ones(n)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 1 if n < 6 else 2)
    sorted_y = gather_targets(sorted_idx, y)
    w_kernel = w if weighted else np.empty(0)
    sums = segment_target_sums(sorted_idx, sorted_y, w_kernel, starts, ends, starts * 0 + m - 1,
                               CRITERION_SQUARED_ERROR)
    mask = np.ones((m, starts.size), np.uint8)
    imp, thr, n_left = search(
        find_best_splits_regression, sorted_x, sorted_idx, sorted_y, w_kernel, starts, ends, sums,
        mask, CRITERION_SQUARED_ERROR, msl, 0.0, reciprocal_table(n))
    for s, (a, b) in enumerate(zip(starts, ends)):
        rows = sorted_idx[0, a:b]
        np.testing.assert_allclose(
            sums[s], [w[rows].sum(), (w * y)[rows].sum(), (w * y * y)[rows].sum()])
        for f in range(m):
            ref_value, _, _ = brute_force_split(
                X[rows, f], y[rows], w[rows], criterion="squared_error", min_samples_leaf=msl)
            if not np.isfinite(ref_value):
                assert imp[f, s] == np.inf
                continue
            check_against_reference(imp[f, s], thr[f, s], n_left[f, s], ref_value, X[rows, f],
                                    tolerance=1e-7)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 60),
    n_segments=st.integers(1, 5),
    n_classes=st.integers(2, 4),
    weighted=st.booleans(),
    criterion=st.sampled_from(["squared_error", "poisson", "gradient"]),
)
def test_node_statistics_run_as_tasks_equal_the_public_kernels(seed, n, n_segments, n_classes,
                                                               weighted, criterion):
    """What the growers call (each segment a task function) gives the public kernels' very
    statistics, which the tests above check against numpy; each segment read from its own
    feature row."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, min(n_segments, n))
    feature = rng.integers(0, 3, size=starts.size)
    w = rng.uniform(0.1, 2.0, n) if weighted else np.empty(0)
    labels = gather_targets(sorted_idx, rng.integers(0, n_classes, n).astype(np.uint8))
    np.testing.assert_array_equal(
        run_segment_class_weights(sorted_idx, labels, w, starts, ends, feature, n_classes),
        segment_class_weights(sorted_idx, labels, w, starts, ends, feature, n_classes))
    code = {"squared_error": CRITERION_SQUARED_ERROR, "poisson": CRITERION_POISSON,
            "gradient": CRITERION_GRADIENT}[criterion]
    targets = gather_targets(sorted_idx, rng.poisson(2.0, n).astype(np.float64))
    np.testing.assert_array_equal(
        run_segment_target_sums(sorted_idx, targets, w, starts, ends, feature, code),
        segment_target_sums(sorted_idx, targets, w, starts, ends, feature, code))


def test_threshold_is_midpoint_and_lowest_on_ties():
    # the worked example of ALGORITHMS.md: best entropy split of hours studied at t = 10
    x = np.array([[4], [5], [8], [12], [15]], np.float32)
    y = np.array([0, 1, 0, 1, 1], np.int32)
    w = np.ones(5)
    sorted_x, sorted_idx = layout(x)
    start, end = np.array([0]), np.array([5])
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    counts = segment_class_weights(sorted_idx, sorted_y, w, start, end, start * 0, 2)
    # weights given explicitly (all 1.0): the general path, entropy from logarithms
    imp, thr, n_left = search(
        find_best_splits_classification, sorted_x, sorted_idx, sorted_y, w, start, end, counts,
        np.ones((1, 1), np.uint8), CRITERION_ENTROPY, 1, 0.0, np.empty(0))
    assert thr[0, 0] == 10.0 and n_left[0, 0] == 3
    parent = -(0.6 * np.log2(0.6) + 0.4 * np.log2(0.4))
    assert parent - imp[0, 0] / 5 == pytest.approx(0.420, abs=5e-4)
    # two mirror-image splits with equal gain: the lower threshold wins
    x = np.array([[1], [2], [3], [4]], np.float32)
    y = np.array([0, 1, 1, 0], np.int32)
    sorted_x, sorted_idx = layout(x)
    start, end = np.array([0]), np.array([4])
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    counts = segment_class_weights(sorted_idx, sorted_y, np.empty(0), start, end, start * 0, 2)
    _, thr, _ = search(
        find_best_splits_classification, sorted_x, sorted_idx, sorted_y, np.empty(0), start, end,
        counts, np.ones((1, 1), np.uint8), CRITERION_GINI, 1, 0.0, xlog2x_table(4))
    assert thr[0, 0] == 1.5


def test_feature_mask_skips_pairs(rng):
    X = rng.normal(size=(50, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int32)
    sorted_x, sorted_idx = layout(X)
    start, end = np.array([0]), np.array([50])
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    counts = segment_class_weights(sorted_idx, sorted_y, np.ones(50), start, end, start * 0, 2)
    mask = np.array([[0], [1], [1]], np.uint8)
    imp, _, _ = search(
        find_best_splits_classification, sorted_x, sorted_idx, sorted_y, np.ones(50), start, end,
        counts, mask, CRITERION_GINI, 1, 0.0, np.empty(0))
    assert imp[0, 0] == np.inf and np.isfinite(imp[1:, 0]).all()


def test_xlog2x_table():
    table = xlog2x_table(5)
    np.testing.assert_allclose(table, [0.0] + [c * np.log2(c) for c in range(1, 6)])


def test_select_best_splits_lowest_feature_wins_ties():
    imp = np.array([[3.0, np.inf, 1.0], [2.0, np.inf, 1.0], [2.0, np.inf, 5.0]])
    n_branches = np.where(np.isfinite(imp), 2, 0).astype(np.int32)
    zeros = np.zeros_like(imp)
    np.testing.assert_array_equal(
        select_best_splits(imp, zeros, zeros, n_branches, SELECT_IMPURITY), [1, -1, 0])


def assert_prefix_partition(before_idx, sorted_idx, starts, ends, feature, n_left, sorted_x=None,
                            X=None):
    """Each segment of every feature row holds its left rows (the first ``n_left[s]`` of the
    split feature's row before the call) then the others, each side in its old order."""
    for s, (a, b) in enumerate(zip(starts, ends)):
        left_rows = set(before_idx[feature[s], a:a + n_left[s]].tolist())
        for g in range(before_idx.shape[0]):
            old = before_idx[g, a:b].tolist()
            expected = [r for r in old if r in left_rows] + [r for r in old if r not in left_rows]
            np.testing.assert_array_equal(sorted_idx[g, a:b], expected)
            if X is not None:
                np.testing.assert_array_equal(sorted_x[g, a:b], X[expected, g])


@pytest.mark.parametrize("seed", range(5))
def test_partition_is_stable_and_routes_by_split(seed):
    rng = np.random.default_rng(seed)
    n, m = 120, 4
    X = rng.integers(0, 10, size=(n, m)).astype(np.float32)
    y = rng.integers(0, 300, size=n).astype(np.uint16)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 3)
    sorted_y = gather_targets(sorted_idx, y)
    before_idx = sorted_idx.copy()
    feature = rng.integers(0, m, size=starts.size)
    n_left = np.array([rng.integers(0, e - s + 1) for s, e in zip(starts, ends)], np.int64)
    partition_segments(sorted_x, sorted_idx, sorted_y, starts, ends, feature, n_left, n)
    np.testing.assert_array_equal(sorted_y, y[sorted_idx])  # labels moved with their rows
    assert_prefix_partition(before_idx, sorted_idx, starts, ends, feature, n_left,
                            sorted_x=sorted_x, X=X)
    # positions outside the segments are untouched
    outside = np.ones(n, bool)
    for a, b in zip(starts, ends):
        outside[a:b] = False
    np.testing.assert_array_equal(sorted_idx[:, outside], before_idx[:, outside])
    # without labels (regression) the same partition happens
    sorted_x2, sorted_idx2 = layout(X)
    sorted_x2[:], sorted_idx2[:] = sorted_x, sorted_idx
    partition_segments(sorted_x2, sorted_idx2, np.empty((m, 0), np.uint8), starts, ends, feature,
                       np.zeros_like(n_left), n)  # n_left 0: everything goes right
    np.testing.assert_array_equal(sorted_idx2, sorted_idx)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_threads", [1, 2])
def test_partition_by_bits_matches_naive_stable_partition(seed, n_threads):
    import numba

    rng = np.random.default_rng(seed)
    n, m = 203, 5  # not a multiple of 8: the last byte of the bitmap is partial
    X = rng.integers(0, 6, size=(n, m)).astype(np.float32)
    y = rng.integers(0, 3, size=n).astype(np.uint8)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 4)
    sorted_y = gather_targets(sorted_idx, y)
    before_idx = sorted_idx.copy()
    goes_left = rng.random(n) < rng.random()
    goes_left[sorted_idx[0, starts[0]:ends[0]]] = True  # a segment going left whole
    n_left = np.array([goes_left[sorted_idx[0, a:b]].sum() for a, b in zip(starts, ends)])
    bits = np.packbits(goes_left, bitorder="little")
    previous = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        partition_segments_bits(sorted_x, sorted_idx, sorted_y, starts, ends, n_left, bits)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(sorted_y, y[sorted_idx])
    inside = np.zeros(n, bool)
    for a, b in zip(starts, ends):
        inside[a:b] = True
        for g in range(m):
            old = before_idx[g, a:b]
            expected = np.concatenate([old[goes_left[old]], old[~goes_left[old]]])
            np.testing.assert_array_equal(sorted_idx[g, a:b], expected)
            np.testing.assert_array_equal(sorted_x[g, a:b], X[expected, g])
    np.testing.assert_array_equal(sorted_idx[:, ~inside], before_idx[:, ~inside])
    # rows already in order (left rows first) stay as they are
    again = sorted_idx.copy()
    partition_segments_bits(sorted_x, sorted_idx, sorted_y, starts, ends, n_left, bits)
    np.testing.assert_array_equal(sorted_idx, again)


def test_partition_with_more_row_ids_than_positions():
    """C4.5's copies of rows get new ids: ids run past the layout's width, and the partition
    must mark and read them all (a table sized by positions was written out of bounds)."""
    rng = np.random.default_rng(3)
    n, m = 300, 3
    X = rng.normal(size=(n, m)).astype(np.float32)
    sorted_x, sorted_idx, starts, ends = segmented_layout(rng, X, 2)
    sorted_idx = sorted_idx * 7 + 5  # ids up to 7n: e.g. copies of copies
    before = sorted_idx.copy()
    y_by_id = rng.integers(0, 3, size=7 * n).astype(np.uint8)
    sorted_y = y_by_id[sorted_idx]
    feature = rng.integers(0, m, size=starts.size)
    n_left = (ends - starts) // 3
    partition_segments(sorted_x, sorted_idx, sorted_y, starts, ends, feature, n_left, 7 * n)
    assert_prefix_partition(before, sorted_idx, starts, ends, feature, n_left)
    np.testing.assert_array_equal(sorted_y, y_by_id[sorted_idx])


def test_partition_refuses_row_ids_its_table_cannot_hold():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2)).astype(np.float32)
    sorted_x, sorted_idx = layout(X)
    args = (sorted_x, sorted_idx, np.empty((2, 0), np.uint8), np.array([0]), np.array([50]))
    with pytest.raises(ValueError, match="n_ids must cover every row id"):
        partition_segments(*args, np.array([0]), np.array([20]), 49)  # ids run to 49
    with pytest.raises(ValueError, match="left_bits must cover every row id"):
        partition_segments_bits(*args, np.array([20]), np.zeros(6, np.uint8))  # 48 bits
    sorted_idx[1, 7] = -1
    with pytest.raises(ValueError, match="outside"):
        partition_segments(*args, np.array([1]), np.array([20]), 50)


@pytest.mark.parametrize("seed", range(4))
def test_left_rows_bits_pack_the_prefix_rows_of_each_segment(seed):
    rng = np.random.default_rng(seed)
    n, m = 203, 5  # not a multiple of 8: the last byte is partial
    X = rng.integers(0, 6, size=(n, m)).astype(np.float32)
    _, sorted_idx, starts, ends = segmented_layout(rng, X, 4)
    feature = rng.integers(0, m, size=starts.size)
    n_left = np.array([rng.integers(0, e - s + 1) for s, e in zip(starts, ends)], np.int64)
    goes_left = np.zeros(n, bool)
    for s, a in enumerate(starts):
        goes_left[sorted_idx[feature[s], a:a + n_left[s]]] = True
    np.testing.assert_array_equal(left_rows_bits(sorted_idx, starts, ends, feature, n_left, n),
                                  np.packbits(goes_left, bitorder="little"))


def test_partition_by_bits_with_a_wrong_count_stays_in_bounds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 3)).astype(np.float32)
    sorted_x, sorted_idx = layout(X)
    goes_left = np.arange(64) % 2 == 0
    # the count promises every row goes left: buffers of one slot for 32 right rows
    partition_segments_bits(sorted_x, sorted_idx, np.empty((3, 0), np.uint8), np.array([0]),
                            np.array([64]), np.array([64]), np.packbits(goes_left,
                                                                        bitorder="little"))
    assert sorted_idx.min() >= 0 and sorted_idx.max() < 64
    # the left rows still come first, in order
    np.testing.assert_array_equal(sorted_idx[:, :32] % 2, 0)
    # the count promises every row goes right (the backward scan): the right rows still last
    sorted_x, sorted_idx = layout(X)
    partition_segments_bits(sorted_x, sorted_idx, np.empty((3, 0), np.uint8), np.array([0]),
                            np.array([64]), np.array([0]), np.packbits(goes_left,
                                                                       bitorder="little"))
    assert sorted_idx.min() >= 0 and sorted_idx.max() < 64
    np.testing.assert_array_equal(sorted_idx[:, 32:] % 2, 1)


@pytest.mark.parametrize("seed", range(3))
def test_relabel_rows_gives_every_segment_its_own_positions_as_ids(seed):
    rng = np.random.default_rng(seed)
    n, m = 157, 4
    X = rng.integers(0, 5, size=(n, m)).astype(np.float32)
    # every row in one node; the nodes' rows at random, each feature sorted inside each node
    cuts = np.concatenate([[0], np.sort(rng.choice(np.arange(1, n), 5, replace=False)), [n]])
    starts, ends = cuts[:-1], cuts[1:]
    perm = rng.permutation(n)
    sorted_idx = np.empty((m, n), np.int32)
    for g in range(m):
        for a, b in zip(starts, ends):
            sorted_idx[g, a:b] = perm[a:b][np.argsort(X[perm[a:b], g], kind="stable")]
    before = sorted_idx.copy()
    new_id = relabel_rows(sorted_idx, n)
    # naive twin: a row's new id is its position in the first feature row
    expected_new_id = np.empty(n, np.int32)
    for position, row in enumerate(before[0]):
        expected_new_id[row] = position
    np.testing.assert_array_equal(new_id, expected_new_id)
    np.testing.assert_array_equal(sorted_idx, expected_new_id[before])  # same order, new names
    np.testing.assert_array_equal(sorted_idx[0], np.arange(n))
    for a, b in zip(starts, ends):
        for g in range(m):
            np.testing.assert_array_equal(np.sort(sorted_idx[g, a:b]), np.arange(a, b))
    # a table indexed by row id follows the rows the way the docstring says
    table = rng.normal(size=n)
    moved = table.copy()
    moved[new_id] = table
    np.testing.assert_array_equal(moved[sorted_idx], table[before])


def test_relabel_rows_refuses_bad_layouts_and_stays_in_bounds():
    sorted_idx = np.array([[2, 0, 1], [1, 2, 0]], np.int32)
    with pytest.raises(ValueError, match="int32"):
        relabel_rows(sorted_idx.astype(np.int64), 3)
    with pytest.raises(ValueError, match="int32"):
        relabel_rows(sorted_idx[:, ::2], 3)
    with pytest.raises(ValueError, match="int32"):
        relabel_rows(sorted_idx[0], 3)
    with pytest.raises(ValueError, match=r"outside \[0, 2\)"):
        relabel_rows(sorted_idx.copy(), 2)
    with pytest.raises(ValueError, match="outside"):
        relabel_rows(np.array([[0, -1, 1]], np.int32), 3)
    # another feature row holding ids the first does not: clamped, never read out of bounds
    bad = np.array([[0, 1, 2], [7, -5, 1]], np.int32)
    relabel_rows(bad, 3)
    assert bad.min() >= 0 and bad.max() < 3
    empty = np.zeros((2, 0), np.int32)
    assert relabel_rows(empty, 0).shape == (0,)


def test_gather_targets_refuses_ids_outside_y_and_never_reads_outside_it():
    sorted_idx = np.array([[2, 0, 1], [1, 2, 0]], np.int32)
    y = np.array([5, 6, 7], np.uint8)
    np.testing.assert_array_equal(gather_targets(sorted_idx, y), y[sorted_idx])
    with pytest.raises(ValueError, match=r"outside \[0, 2\)"):
        gather_targets(sorted_idx, y[:2])
    with pytest.raises(ValueError, match="outside"):
        gather_targets(np.array([[0, -1, 1]], np.int32), y)
    with pytest.raises(ValueError, match="int32"):
        gather_targets(sorted_idx.astype(np.int64), y)
    with pytest.raises(ValueError, match="1-D"):
        gather_targets(sorted_idx, y[:, None])
    # another feature row holding ids the first does not: clamped to y, never read outside it
    got = gather_targets(np.array([[0, 1, 2], [9, -4, 1]], np.int32), y)
    assert set(got[1]) <= set(y)


@pytest.mark.parametrize("chunk_rows", [1, 3, 7, 1 << 16])
@pytest.mark.parametrize("n_features", [1, 2, 3])
def test_gather_targets_in_row_chunks_matches_indexing(monkeypatch, chunk_rows, n_features):
    from fasttree.kernels import split_search
    monkeypatch.setattr(split_search, "GATHER_CHUNK_ROWS", chunk_rows)
    rng = np.random.default_rng(chunk_rows + n_features)
    for n in (0, 1, 7, 20):
        sorted_idx = np.stack([rng.permutation(n) for _ in range(n_features)]).astype(np.int32)
        y = rng.normal(size=n)
        np.testing.assert_array_equal(gather_targets(sorted_idx, y), y[sorted_idx])


def small_tree():
    # root: x0 <= 0.5 ? (x1 <= 2.5 ? leaf 3 : leaf 4) : leaf 2
    left = np.array([1, 3, -1, -1, -1])
    return Tree(children_left=left, children_right=[2, 4, -1, -1, -1], feature=[0, 1, -2, -2, -2],
                threshold=[0.5, 2.5, -2, -2, -2], value=np.zeros((5, 1, 2)), impurity=np.zeros(5),
                n_node_samples=np.ones(5), weighted_n_node_samples=np.ones(5),
                depth=[0, 1, 1, 2, 2], n_features=2)


def test_apply_and_paths_match_naive(rng):
    tree = small_tree()
    X = np.ascontiguousarray(rng.uniform(-1, 4, size=(200, 2)).astype(np.float32))
    X[:5, 0] = 0.5  # exactly on the threshold goes left

    leaves = apply_tree(X, *tree._routing())
    np.testing.assert_array_equal(leaves, apply_naive(tree, X))
    path, length = decision_paths(X, *tree._routing(), 2)
    for i in range(X.shape[0]):
        assert path[i, length[i] - 1] == leaves[i]
        assert path[i, 0] == 0
        assert (path[i, length[i]:] == -1).all()


def test_public_kernels_grow_one_level_like_the_estimator():
    """The module docstring's recipe, as a user's own learner would run it, finds the root split
    of a fasttree estimator and partitions the rows accordingly."""
    import fasttree

    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 4)).astype(np.float32)
    y = ((X[:, 2] > 0.3) ^ (rng.uniform(size=500) < 0.1)).astype(np.int32)
    n_features, n_classes = 4, 2
    sorted_x, sorted_idx = presort_features(X)
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    start, end, row = np.array([0]), np.array([500]), np.array([0])
    w = np.empty(0)  # unit weights
    counts = segment_class_weights(sorted_idx, sorted_y, w, start, end, row, n_classes)
    record = new_split_record(n_features, 1)  # filled by the search kernels
    find_best_splits_classification(
        sorted_x, sorted_idx, sorted_y, w, start, end, counts, np.ones((n_features, 1), np.uint8),
        CRITERION_ENTROPY, 1, 0.0, xlog2x_table(len(y)), 0.0, False, *unconstrained(), record)
    best = select_best_splits(record.children_impurity, record.gain, record.split_info,
                              record.n_branches, SELECT_IMPURITY)
    est = fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, y)
    assert best[0] == est.tree_.feature[0] == 2
    thr = record.threshold[best, np.arange(len(best))]
    assert thr[0] == est.tree_.threshold[0]
    # no missing values here: the left child is a prefix of the split feature's sorted row
    assert (record.n_missing[best, np.arange(len(best))] == 0).all()
    n_left = record.n_left[best, np.arange(len(best))]
    partition_segments(sorted_x, sorted_idx, sorted_y, start, end, best, n_left, len(y))
    k = n_left[0]
    for f in range(4):
        assert (X[sorted_idx[f, :k], 2] <= thr[0]).all()
        assert (X[sorted_idx[f, k:], 2] > thr[0]).all()
        assert (np.diff(sorted_x[f, :k]) >= 0).all() and (np.diff(sorted_x[f, k:]) >= 0).all()


def test_numeric_split_arrays_walk_a_threshold_tree_like_the_estimator():
    """A learner's own threshold tree (here: an estimator's node arrays, missing values learned)
    walked by apply_tree with numeric_split_arrays reaches the estimator's leaves, NaN rows
    included."""
    import fasttree

    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 3))
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    y = (np.nan_to_num(X[:, 0], nan=1.0) + rng.normal(scale=0.3, size=400) > 0).astype(int)
    est = fasttree.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    t = est.tree_
    assert (t.missing_branch[t.children_left >= 0] == 1).any()  # both directions are exercised
    assert (t.missing_branch[t.children_left >= 0] == 0).any()
    arrays = numeric_split_arrays(t.missing_branch)
    assert [a.dtype for a in arrays] == [np.uint8, np.int32, np.int64, np.int64, np.int32]
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    leaf = apply_tree(X32, t.children_left, t.children_right, t.feature, t.threshold, *arrays)
    np.testing.assert_array_equal(leaf, est.apply(X))
    with pytest.raises(ValueError, match="1-D"):
        numeric_split_arrays(np.zeros((2, 2), dtype=np.int32))
