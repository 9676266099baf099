"""The kernels of missing values and categorical features against their naive twins.

Missing-aware numeric search, categorical subset and multiway search, category maps, routing and
k-way partition, C4.5's selection rule, node impurity and prediction through every kind of split
node, each against the from-scratch twin in ``tests/reference.py``.  The hypothesis tests draw
small problems (ties, duplicates, constant and all-missing columns, nodes of 1-3 rows, weighted or
not, 2-4 classes or regression) and check both the objective value the kernel reports and that the
split it describes (threshold or category map, missing branch, rows going left) reproduces that
value when applied to the rows naively.
"""

import inspect
from types import SimpleNamespace

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import reference as ref
from fasttree._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_SQUARED_ERROR,
    SELECT_GAIN_RATIO,
    SELECT_IMPURITY,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
)
from fasttree.kernels import (
    apply_tree,
    branch_of,
    categorical_split_maps,
    decision_paths,
    find_best_splits_categorical,
    find_best_splits_classification,
    find_best_splits_regression,
    gather_targets,
    new_split_record,
    node_impurity,
    partition_segments_kway,
    presort_features,
    reciprocal_table,
    route_rows,
    segment_class_weights,
    segment_target_sums,
    select_best_splits,
    split_information,
    xlog2x_table,
    unconstrained,
)
from fasttree.tree import Tree

CRITERIA = {"gini": CRITERION_GINI, "entropy": CRITERION_ENTROPY,
            "squared_error": CRITERION_SQUARED_ERROR}
# Numeric values: negative, both zeros, two float32 values one ulp apart, a huge one.
NUMERIC_POOL = [-2.0, -0.0, 0.0, 1.0, float(np.nextafter(np.float32(1), np.float32(2))), 3.5,
                1e30]
# Dyadic weights and targets keep every sum exact, so that category orders (sorted by ratios of
# sums) are the same in the kernel and in the twins.
DYADIC_WEIGHTS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0]
HYPOTHESIS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- problems and layouts ------------------------------------------------------------------------
@st.composite
def problems(draw, categorical=False, max_node=9, max_categories=5):
    """A level of small nodes: segments of 1-9 rows (often 1-3) separated by rows of finished
    leaves, 1-3 features with few values (NaN for missing), targets and weights."""
    task = draw(st.sampled_from(["gini", "entropy", "squared_error"]))
    n_classes = None if task == "squared_error" else draw(st.integers(2, 4))
    sizes = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(1, max_node)),
                          min_size=1, max_size=3))
    gaps = draw(st.lists(st.integers(0, 2), min_size=len(sizes) + 1, max_size=len(sizes) + 1))
    n = sum(sizes) + sum(gaps)
    m = draw(st.integers(1, 3))
    n_values = draw(st.integers(1, max_categories))
    pool = np.array(draw(st.permutations(NUMERIC_POOL))[:n_values], np.float32)
    X = np.empty((n, m), np.float32)
    for f in range(m):
        style = draw(st.sampled_from(["mixed", "mixed", "known", "all-missing", "constant"]))
        if style == "all-missing":
            codes = np.full(n, -1)
        else:
            low = 0 if style == "known" else -1
            high = 0 if style == "constant" else n_values - 1
            codes = np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)))
        values = codes.astype(np.float32) if categorical else pool[np.maximum(codes, 0)]
        X[:, f] = np.where(codes < 0, np.float32(np.nan), values)
    if n_classes is None:
        y = np.array(draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n))) * 0.5
    else:
        y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    weights = draw(st.sampled_from(["unit", "dyadic"] if categorical
                                   else ["unit", "dyadic", "float"]))
    if weights == "unit":
        w = np.ones(n)
    elif weights == "dyadic":
        w = np.array(draw(st.lists(st.sampled_from(DYADIC_WEIGHTS), min_size=n, max_size=n)))
    else:
        w = np.array(draw(st.lists(st.floats(0.1, 3.0), min_size=n, max_size=n)))
    starts, ends, pos = [], [], gaps[0]
    for size, gap in zip(sizes, gaps[1:]):
        starts.append(pos)
        ends.append(pos + size)
        pos += size + gap
    return SimpleNamespace(
        task=task, n_classes=n_classes, X=X, y=y, w=w, unit=weights == "unit",
        msl=draw(st.sampled_from([1, 1, 2, 3])), mwl=draw(st.sampled_from([0.0, 0.0, 1.0, 2.5])),
        starts=np.array(starts, np.int64), ends=np.array(ends, np.int64),
        perm=np.array(draw(st.permutations(range(n))), np.int64),
        n_categories=np.full(m, n_values, np.int64))


def build_layout(X, perm, starts, ends):
    """Working layout: segment s holds rows perm[start:end], every feature sorted inside with a
    stable numpy argsort (NaN last); other positions hold the remaining rows of perm."""
    n, m = X.shape
    sorted_idx = np.empty((m, n), np.int32)
    for f in range(m):
        sorted_idx[f] = perm
        for a, b in zip(starts, ends):
            rows = perm[a:b]
            sorted_idx[f, a:b] = rows[np.argsort(X[rows, f], kind="stable")]
    sorted_x = np.ascontiguousarray(np.take_along_axis(X.T, sorted_idx, axis=1), np.float32)
    return sorted_x, sorted_idx


def prepare(P):
    """Layout, targets in layout order, node statistics and the kernels' weight argument."""
    sorted_x, sorted_idx = build_layout(P.X, P.perm, P.starts, P.ends)
    targets = P.y.astype(np.float64) if P.n_classes is None else P.y.astype(np.uint8)
    sorted_y = gather_targets(sorted_idx, targets)
    w_kernel = np.empty(0) if P.unit else P.w
    rows_of = np.zeros(P.starts.size, np.int64)  # feature 0's row holds every segment's rows
    if P.n_classes is None:
        stats = segment_target_sums(sorted_idx, sorted_y, w_kernel, P.starts, P.ends, rows_of,
                                    CRITERION_SQUARED_ERROR)
    else:
        stats = segment_class_weights(sorted_idx, sorted_y, w_kernel, P.starts, P.ends, rows_of,
                                      P.n_classes)
    return SimpleNamespace(sorted_x=sorted_x, sorted_idx=sorted_idx, sorted_y=sorted_y,
                           w_kernel=w_kernel, stats=stats)


def one_node(x, y, w=None, criterion="gini", n_classes=2, msl=1):
    """Problem of a single node holding every row (for hand-made examples)."""
    X = np.asarray(x, np.float32)[:, None]
    y = np.asarray(y)
    n = len(y)
    return SimpleNamespace(
        task=criterion, n_classes=None if criterion == "squared_error" else n_classes, X=X,
        y=y if criterion != "squared_error" else y.astype(np.float64),
        w=np.ones(n) if w is None else np.asarray(w, np.float64), unit=w is None, msl=msl,
        mwl=0.0, starts=np.array([0]), ends=np.array([n]), perm=np.arange(n),
        n_categories=np.zeros(1, np.int64))


def random_problem(seed, task, categorical=False, n=80, m=4, n_segments=4):
    """A larger level than hypothesis draws: nodes of 6-17 rows, a quarter of the values missing,
    an all-missing and a constant column, leaf minimums that bind."""
    rng = np.random.default_rng(seed)
    n_values = 6
    codes = rng.integers(0, n_values, size=(n, m))
    X = (codes if categorical else codes * 0.5 - 1.0).astype(np.float32)
    X[rng.uniform(size=(n, m)) < 0.25] = np.nan
    X[:, m - 1] = np.nan
    X[:, m - 2] = np.where(rng.uniform(size=n) < 0.2, np.nan, 1.0)
    n_classes = None if task == "squared_error" else 2 + seed % 3
    y = rng.integers(-4, 5, size=n) * 0.5 if n_classes is None else rng.integers(0, n_classes, n)
    unit = seed % 2 == 0
    w = np.ones(n) if unit else rng.choice(DYADIC_WEIGHTS, size=n)
    sizes = rng.integers(6, n // n_segments - 2, size=n_segments)  # 6 .. 17 rows, gaps between
    starts = np.cumsum(np.concatenate([[1], sizes[:-1] + 2]))
    return SimpleNamespace(
        task=task, n_classes=n_classes, X=X, y=y, w=w, unit=unit,
        msl=[1, 2, 3, 5][seed % 4], mwl=[0.0, 0.0, 1.5, 4.0][(seed // 4) % 4],
        starts=starts.astype(np.int64), ends=(starts + sizes).astype(np.int64),
        perm=rng.permutation(n), n_categories=np.full(m, n_values, np.int64))


def node_rows(P, s):
    return P.perm[P.starts[s]:P.ends[s]]


def tolerance(P, rows):
    """Absolute tolerance on a children impurity: rounding of sums of the node's scale."""
    w, y = P.w[rows], P.y[rows]
    scale = (w * y * y).sum() if P.n_classes is None else w.sum() * np.log2(w.sum() + 2)
    return 1e-9 * (1.0 + scale)


#: Optional rules of the search kernels (C4.5's minimum branch weight, fractional missing rows,
#: monotonicity constraints), off here: these tests are about scikit-learn's learned direction
#: for missing values.
OPTIONS_OFF = {"min_branch_fraction": 0.0, "missing_fractional": False,
               "monotonic_cst": unconstrained()[0], "node_bounds": unconstrained()[1]}


def run_search(kernel, shape, *args):
    """A search kernel into a fresh SplitRecord of ``shape``: ``args`` positionally, the optional
    rules the kernel has (off) and the record's arrays by name."""
    params = inspect.signature(getattr(kernel, "py_func", kernel)).parameters
    record = new_split_record(*shape)
    kernel(*args, **{k: v for k, v in OPTIONS_OFF.items() if k in params}, record=record)
    return record


def numeric_search(P, L):
    shape = (P.X.shape[1], P.starts.size)
    mask = np.ones(shape, np.uint8)
    n = P.X.shape[0]
    if P.n_classes is None:
        return run_search(find_best_splits_regression, shape, L.sorted_x, L.sorted_idx,
                          L.sorted_y, L.w_kernel, P.starts, P.ends, L.stats, mask,
                          CRITERION_SQUARED_ERROR, P.msl, P.mwl, reciprocal_table(n))
    return run_search(find_best_splits_classification, shape, L.sorted_x, L.sorted_idx,
                      L.sorted_y, L.w_kernel, P.starts, P.ends, L.stats, mask, CRITERIA[P.task],
                      P.msl, P.mwl, xlog2x_table(n))


def categorical_search(P, L, kind):
    shape = (P.X.shape[1], P.starts.size)
    return run_search(find_best_splits_categorical, shape, L.sorted_x, L.sorted_idx, L.sorted_y,
                      L.w_kernel, P.starts, P.ends, L.stats, np.ones(shape, np.uint8),
                      P.n_categories, CRITERIA[P.task], kind, P.msl, P.mwl)


def category_maps(P, L, record, pairs, kind):
    """categorical_split_maps for the (feature, segment) pairs; returns one map per pair."""
    f = np.array([p[0] for p in pairs], np.int64)
    s = np.array([p[1] for p in pairs], np.int64)
    n_codes = P.n_categories[f] + 1
    maps = categorical_split_maps(
        L.sorted_x, L.sorted_idx, L.sorted_y, L.w_kernel, np.ascontiguousarray(P.starts[s]),
        np.ascontiguousarray(P.ends[s]), np.ascontiguousarray(L.stats[s]), f, n_codes,
        np.full(f.size, kind, np.int64), np.ascontiguousarray(record.threshold[f, s]),
        record.missing_branch[f, s].astype(np.int64),
        record.subset_class[f, s].astype(np.int64), CRITERIA[P.task])
    offsets = np.concatenate([[0], np.cumsum(n_codes)])
    assert maps.shape == (offsets[-1],)
    return [maps[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def check_split_description(P, record, f, s, branch, value, tol):
    """The fields of a record slot agree with the row -> branch assignment it describes."""
    rows = node_rows(P, s)
    y, w = P.y[rows], P.w[rows]
    x = P.X[rows, f]
    missing = np.isnan(x)
    n_branches = record.n_branches[f, s]
    assert branch.min() >= 0 and branch.max() < n_branches
    # the description, applied to the rows, gives the reported value ...
    recomputed = ref.children_impurity_of(branch, y, w, P.task, P.n_classes)
    assert value == pytest.approx(recomputed, rel=1e-9, abs=tol)
    # ... and the reported rows, weights and missing-value fields
    assert record.n_left[f, s] == (branch == 0).sum()
    assert record.n_missing[f, s] == missing.sum()
    if missing.any():
        assert (branch[missing] == record.missing_branch[f, s]).all()
    branch_w = np.bincount(branch, weights=w, minlength=n_branches)
    assert record.split_info[f, s] == pytest.approx(ref.split_information_of(branch_w),
                                                    rel=1e-9, abs=1e-12)
    W = w.sum()
    node = ref.weighted_node_impurity(y, w, P.task, P.n_classes)
    assert record.gain[f, s] == pytest.approx((node - value) / W, rel=1e-9, abs=tol / W)


# --- missing-aware numeric search --------------------------------------------------------------
def check_numeric_pair(P, L, record, f, s):
    rows = node_rows(P, s)
    x, y, w = P.X[rows, f], P.y[rows], P.w[rows]
    best, candidates, _ = ref.missing_aware_numeric_split(
        x, y, w, criterion=P.task, n_classes=P.n_classes, min_samples_leaf=P.msl,
        min_weight_leaf=P.mwl)
    value = record.children_impurity[f, s]
    if not np.isfinite(best):
        assert value == np.inf and record.n_branches[f, s] == 0
        return
    tol = tolerance(P, rows)
    assert value == pytest.approx(best, rel=1e-9, abs=tol)
    assert record.n_branches[f, s] == 2
    thr, mb = record.threshold[f, s], record.missing_branch[f, s]
    missing = np.isnan(x)
    left = (~missing & (x <= thr)) | (missing & (mb == 0))
    assert ref.binary_split_is_valid(left, w, P.msl, P.mwl)
    check_split_description(P, record, f, s, (~left).astype(np.int64), value, tol)
    if missing.any():
        assert (thr, bool(mb == 0)) in {(t, ml) for _, t, ml in candidates}
    else:
        assert thr in {t for _, t, _ in candidates}
        # no missing row seen: the branch with more rows, right on a tie (scikit-learn)
        assert mb == (0 if left.sum() > (~left).sum() else 1)
    if thr == np.inf:
        assert missing.any() and mb == 1
    if mb == 1 or not missing.any():
        # the grower's fast path: the left child is a prefix of the feature's sorted row
        a = P.starts[s]
        prefix = L.sorted_idx[f, a:a + record.n_left[f, s]]
        assert sorted(prefix.tolist()) == sorted(rows[left].tolist())


@settings(max_examples=400, **HYPOTHESIS)
@given(problems())
def test_missing_aware_numeric_search_matches_brute_force(P):
    L = prepare(P)
    record = numeric_search(P, L)
    for s in range(P.starts.size):
        for f in range(P.X.shape[1]):
            check_numeric_pair(P, L, record, f, s)


@settings(max_examples=100, **HYPOTHESIS)
@given(problems())
# min_samples_leaf 2: t = 1.5 is valid ({1, 1} | {2, nan}), t = inf is not ({1, 1, 2} | {nan})
@example(P=one_node([1, 1, 2, np.nan], [0, 1, 0, 1], msl=2))
def test_numeric_candidates_count_the_valid_thresholds(P):
    """``n_candidates`` (C4.5 charges log2 of it to a numeric split) is documented as the number
    of valid candidate thresholds, like C4.5's ``Tries`` (which honours its minimum leaf size);
    with missing values the threshold ``inf`` is one of them."""
    L = prepare(P)
    record = numeric_search(P, L)
    for s in range(P.starts.size):
        for f in range(P.X.shape[1]):
            rows = node_rows(P, s)
            _, _, n_valid = ref.missing_aware_numeric_split(
                P.X[rows, f], P.y[rows], P.w[rows], criterion=P.task, n_classes=P.n_classes,
                min_samples_leaf=P.msl, min_weight_leaf=P.mwl)
            if record.n_branches[f, s] > 0:
                assert record.n_candidates[f, s] == n_valid, (f, s)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("weighted", [False, True])
def test_missing_rows_right_win_a_tie(criterion, weighted):
    # t = 1.5 with the missing rows right: {0} | {1, 0, 1}; left: {0, 0, 1} | {1}: equal values
    P = one_node([1, 2, np.nan, np.nan], [0, 1, 0, 1], w=[1.0] * 4 if weighted else None,
                 criterion=criterion)
    record = numeric_search(P, prepare(P))
    assert record.threshold[0, 0] == 1.5
    assert record.missing_branch[0, 0] == 1 and record.n_left[0, 0] == 1
    assert record.n_missing[0, 0] == 2


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_every_known_value_left_is_the_infinite_threshold(criterion):
    P = one_node([1, 1, np.nan, np.nan], [0, 0, 1, 1], criterion=criterion)
    record = numeric_search(P, prepare(P))
    assert record.threshold[0, 0] == np.inf and record.missing_branch[0, 0] == 1
    assert record.n_left[0, 0] == 2 and record.children_impurity[0, 0] == 0.0
    # all missing, or a single known value without missing rows: no split
    for x in ([np.nan] * 4, [2.0] * 4):
        P = one_node(x, [0, 0, 1, 1], criterion=criterion)
        record = numeric_search(P, prepare(P))
        assert record.children_impurity[0, 0] == np.inf and record.n_branches[0, 0] == 0


@pytest.mark.parametrize("x, y, threshold, missing_branch, n_left", [
    # missing right, t = 2.5 and t = 4.5 tie: the lower threshold
    ([1, 2, 3, 4, 5, np.nan], [0, 0, 1, 0, 1, 1], 2.5, 1, 2),
    # missing left, t = 1.5 and t = 3.5 tie: the lower threshold
    ([1, 2, 3, 4, 5, np.nan], [0, 1, 0, 1, 1, 0], 1.5, 0, 2),
    # t = 3.5 missing right ties t = 1.5 missing left: missing right first, then the threshold
    ([1, 2, 3, 4, np.nan, np.nan], [0, 1, 1, 0, 0, 0], 3.5, 1, 3),
])
def test_ties_prefer_missing_right_then_the_lowest_threshold(x, y, threshold, missing_branch,
                                                             n_left):
    P = one_node(x, y)
    best, candidates, _ = ref.missing_aware_numeric_split(P.X[:, 0], P.y, P.w, criterion="gini",
                                                          n_classes=2)
    assert sum(value == best for value, _, _ in candidates) == 2  # the example has a tie
    record = numeric_search(P, prepare(P))
    assert record.children_impurity[0, 0] == best
    assert record.threshold[0, 0] == threshold
    assert record.missing_branch[0, 0] == missing_branch and record.n_left[0, 0] == n_left


@pytest.mark.parametrize("task", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("seed", range(8))
def test_missing_aware_numeric_search_random_levels(seed, task):
    P = random_problem(seed, task)
    L = prepare(P)
    record = numeric_search(P, L)
    for s in range(P.starts.size):
        for f in range(P.X.shape[1]):
            check_numeric_pair(P, L, record, f, s)
    assert np.isfinite(record.children_impurity).any()


# --- categorical subset search ---------------------------------------------------------------
def exact_subset_case(P):
    """Breiman's ordering is exact for two classes and regression (no leaf minimum binding)."""
    return (P.n_classes is None or P.n_classes == 2) and P.msl == 1 and P.mwl == 0.0


@settings(max_examples=250, **HYPOTHESIS)
@given(problems(categorical=True, max_categories=6))
def test_categorical_subset_search_matches_naive_orders_and_exhaustive_search(P):
    check_subset_level(P)


@pytest.mark.parametrize("task", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("seed", range(6))
def test_categorical_subset_search_random_levels(seed, task):
    check_subset_level(random_problem(seed, task, categorical=True))


def check_subset_level(P):
    L = prepare(P)
    record = categorical_search(P, L, SPLIT_SUBSET)
    m = P.X.shape[1]
    pairs = [(f, s) for s in range(P.starts.size) for f in range(m) if record.n_branches[f, s]]
    maps = dict(zip(pairs, category_maps(P, L, record, pairs, SPLIT_SUBSET))) if pairs else {}
    for s in range(P.starts.size):
        rows = node_rows(P, s)
        y, w = P.y[rows], P.w[rows]
        tol = tolerance(P, rows)
        for f in range(m):
            x = P.X[rows, f]
            kwargs = dict(criterion=P.task, n_classes=P.n_classes, min_samples_leaf=P.msl,
                          min_weight_leaf=P.mwl)
            prefix_best, _ = ref.prefix_subset_split(x, y, w, **kwargs)
            exhaustive_best, _ = ref.exhaustive_subset_split(x, y, w, **kwargs)
            value = record.children_impurity[f, s]
            if not np.isfinite(prefix_best):
                assert value == np.inf and record.n_branches[f, s] == 0
                if exact_subset_case(P):
                    assert exhaustive_best == np.inf
                continue
            assert value == pytest.approx(prefix_best, rel=1e-9, abs=tol)
            assert value >= exhaustive_best - tol
            if exact_subset_case(P):
                assert value == pytest.approx(exhaustive_best, rel=1e-9, abs=tol)
            # the description: the first `threshold` categories of the order go left
            assert record.n_branches[f, s] == 2
            cut = record.threshold[f, s]
            assert cut == int(cut) and 1 <= cut <= len(ref.present_categories(x))
            k = record.subset_class[f, s]
            if P.n_classes is None:
                assert k == -1
            elif P.n_classes == 2:
                assert k == 1
            else:
                assert 0 <= k < P.n_classes
            mb = record.missing_branch[f, s]
            n_codes = P.n_categories[f] + 1
            naive_map = ref.categorical_map(
                x, y, w, kind=SPLIT_SUBSET, cut=int(cut), missing_branch=mb,
                order_class=max(k, 0), n_codes=n_codes, criterion=P.task)
            np.testing.assert_array_equal(maps[f, s], naive_map)
            branch = np.array([ref.branch_naive(v, SPLIT_SUBSET, 0.0, mb, maps[f, s]) for v in x])
            assert ref.binary_split_is_valid(branch == 0, w, P.msl, P.mwl)
            check_split_description(P, record, f, s, branch, value, tol)
            if not np.isnan(x).any():
                n_left = (branch == 0).sum()
                assert mb == (0 if n_left > len(x) - n_left else 1)
    check_chosen_splits_route_and_partition(P, L, record, SPLIT_SUBSET)


def test_subset_search_with_more_classes_is_a_heuristic():
    # four classes, six categories: no one-vs-rest order has the best subset ({2, 3, 4}) as a
    # prefix, so the kernel returns the best prefix, worse than the exhaustive optimum
    x = np.array([0, 0, 0, 1, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5], np.float32)
    y = np.array([0, 2, 0, 0, 1, 3, 0, 3, 1, 3, 3, 2, 0, 3, 0, 3, 2, 2])
    P = one_node(x, y, criterion="gini", n_classes=4)
    P.n_categories = np.array([6])
    record = categorical_search(P, prepare(P), SPLIT_SUBSET)
    kwargs = dict(criterion="gini", n_classes=4)
    prefix_best, _ = ref.prefix_subset_split(x, y, P.w, **kwargs)
    exhaustive_best, (left, _) = ref.exhaustive_subset_split(x, y, P.w, **kwargs)
    assert sorted(left) in ([2, 3, 4], [0, 1, 5])
    assert record.children_impurity[0, 0] == pytest.approx(prefix_best, rel=1e-12) == 11.0
    assert exhaustive_best == pytest.approx(10.833333333333334, rel=1e-12)


# --- categorical multiway search ---------------------------------------------------------------
@settings(max_examples=250, **HYPOTHESIS)
@given(problems(categorical=True, max_categories=6))
def test_multiway_search_matches_naive(P):
    check_multiway_level(P)


@pytest.mark.parametrize("task", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("seed", range(6))
def test_multiway_search_random_levels(seed, task):
    check_multiway_level(random_problem(seed, task, categorical=True))


def check_multiway_level(P):
    L = prepare(P)
    record = categorical_search(P, L, SPLIT_MULTIWAY)
    m = P.X.shape[1]
    pairs = [(f, s) for s in range(P.starts.size) for f in range(m) if record.n_branches[f, s]]
    maps = dict(zip(pairs, category_maps(P, L, record, pairs, SPLIT_MULTIWAY))) if pairs else {}
    for s in range(P.starts.size):
        rows = node_rows(P, s)
        y, w = P.y[rows], P.w[rows]
        tol = tolerance(P, rows)
        for f in range(m):
            x = P.X[rows, f]
            best, tried = ref.multiway_split(x, y, w, criterion=P.task, n_classes=P.n_classes,
                                             min_samples_leaf=P.msl, min_weight_leaf=P.mwl)
            value = record.children_impurity[f, s]
            if not np.isfinite(best):
                assert value == np.inf and record.n_branches[f, s] == 0
                continue
            assert value == pytest.approx(best, rel=1e-9, abs=tol)
            codes = ref.present_categories(x)
            assert record.n_branches[f, s] == len(codes)
            assert record.n_candidates[f, s] == 1
            mb = record.missing_branch[f, s]
            missing = np.isnan(x)
            if not missing.any():  # the branch with the most rows, the first on a tie
                assert mb == np.argmax([(x == c).sum() for c in codes])
            naive_map = ref.categorical_map(
                x, y, w, kind=SPLIT_MULTIWAY, cut=0, missing_branch=mb, order_class=0,
                n_codes=P.n_categories[f] + 1, criterion=P.task)
            np.testing.assert_array_equal(maps[f, s], naive_map)
            branch = np.array([ref.branch_naive(v, SPLIT_MULTIWAY, 0.0, mb, maps[f, s])
                               for v in x])
            check_split_description(P, record, f, s, branch, value, tol)
    check_chosen_splits_route_and_partition(P, L, record, SPLIT_MULTIWAY)


# --- routing and k-way partition ---------------------------------------------------------------
def check_route_and_partition(X, y_layout, w, perm, starts, ends, sorted_x, sorted_idx, sorted_y,
                              splits, route_chunk_rows=None):
    """route_rows + partition_segments_kway against the naive rule, for one split per segment.

    ``splits``: per segment (feature, kind, threshold, missing_branch, category map or None,
    n_branches).  ``y_layout``: the targets by row id (None when sorted_y has no columns).
    ``w``: weights by row id, or None for unit weights.  Returns the rows per branch of every
    segment.  ``route_chunk_rows``: route_rows' chunk size (None: its default).
    """
    n, m = X.shape
    maps = [sp[4] if sp[4] is not None else np.zeros(0, np.int64) for sp in splits]
    n_codes = np.array([len(mp) for mp in maps], np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_codes)[:-1]]).astype(np.int64)
    category_branch = np.concatenate(maps + [np.zeros(0)]).astype(np.int32)
    n_branches = np.array([sp[5] for sp in splits], np.int64)
    branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
    feature = np.array([sp[0] for sp in splits], np.int64)
    row_branch = np.full(n, -1, np.int32)
    before_idx = sorted_idx.copy()
    before_x = sorted_x.copy()
    branch_rows, branch_weight, seg_all_branches = route_rows(
        sorted_x, sorted_idx, np.empty(0) if w is None else w, starts, ends, feature,
        np.array([sp[1] for sp in splits], np.int64),
        np.array([sp[2] for sp in splits], np.float64),
        np.array([sp[3] for sp in splits], np.int64),
        np.where(n_codes > 0, offsets, -1), n_codes, category_branch, branch_offset, row_branch,
        *([] if route_chunk_rows is None else [route_chunk_rows]))
    naive = {}
    inside = np.zeros(n, bool)
    for s, (a, b) in enumerate(zip(starts, ends)):
        f, kind, thr, mb, mp, k = splits[s]
        rows = perm[a:b]
        inside[rows] = True
        for r in rows:
            naive[r] = ref.branch_naive(X[r, f], kind, thr, mb, mp)
        np.testing.assert_array_equal(row_branch[rows], [naive[r] for r in rows])
        branches = [naive[r] for r in rows]
        np.testing.assert_array_equal(branch_rows[branch_offset[s]:branch_offset[s + 1]],
                                      np.bincount(branches, minlength=k))
        np.testing.assert_allclose(
            branch_weight[branch_offset[s]:branch_offset[s + 1]],
            np.bincount(branches, weights=np.ones(len(rows)) if w is None else w[rows],
                        minlength=k), rtol=1e-12)
    assert (seg_all_branches == 0).all()  # no missing branch sends rows down every branch
    assert (row_branch[~inside] == -1).all()  # rows of other nodes are not touched
    partition_segments_kway(sorted_x, sorted_idx, sorted_y, starts, ends, branch_offset,
                            branch_rows, row_branch)
    for s, (a, b) in enumerate(zip(starts, ends)):
        k = splits[s][5]
        child_end = a + np.cumsum(branch_rows[branch_offset[s]:branch_offset[s + 1]])
        child_start = child_end - branch_rows[branch_offset[s]:branch_offset[s + 1]]
        for g in range(m):
            old = before_idx[g, a:b].tolist()
            for c in range(k):
                # exactly the rows the naive rule sends to branch c, in their old order (stable)
                expected = [r for r in old if naive[r] == c]
                got = sorted_idx[g, child_start[c]:child_end[c]]
                np.testing.assert_array_equal(got, expected)
                xs = sorted_x[g, child_start[c]:child_end[c]]
                known = xs[~np.isnan(xs)]
                assert np.isnan(xs[known.size:]).all(), "missing values sort last in each child"
                assert (np.diff(known) >= 0).all(), "each child stays sorted"
    outside = np.ones(n, bool)
    for a, b in zip(starts, ends):
        outside[a:b] = False
    np.testing.assert_array_equal(sorted_idx[:, outside], before_idx[:, outside])
    np.testing.assert_array_equal(sorted_x[:, outside], before_x[:, outside])
    np.testing.assert_array_equal(sorted_x, np.take_along_axis(X.T, sorted_idx.astype(np.int64),
                                                               axis=1))
    if y_layout is not None:
        np.testing.assert_array_equal(sorted_y, y_layout[sorted_idx])
    return branch_rows


def check_chosen_splits_route_and_partition(P, L, record, kind):
    """Grow one level: the best categorical split of every node, its map, routing, partition;
    branch 0 of each routed node gets the record's n_left rows."""
    best = select_best_splits(record.children_impurity, record.gain, record.split_info,
                              record.n_branches, SELECT_IMPURITY)
    chosen = [s for s in range(P.starts.size) if best[s] >= 0]
    if not chosen:
        return
    maps = category_maps(P, L, record, [(best[s], s) for s in chosen], kind)
    splits = [(best[s], kind, 0.0, record.missing_branch[best[s], s], mp,
               record.n_branches[best[s], s]) for s, mp in zip(chosen, maps)]
    y_layout = P.y.astype(np.float64) if P.n_classes is None else P.y.astype(np.uint8)
    branch_rows = check_route_and_partition(
        P.X, y_layout, None if P.unit else P.w, P.perm, P.starts[chosen], P.ends[chosen],
        L.sorted_x, L.sorted_idx, L.sorted_y, splits)
    first = np.concatenate([[0], np.cumsum([sp[5] for sp in splits])[:-1]])
    np.testing.assert_array_equal(branch_rows[first], [record.n_left[best[s], s] for s in chosen])


ROUTING_VALUES = [-1.0, 0.0, 1.0, 2.0, 2.5, 7.0, np.nan]  # negative, fractional, unseen codes


@st.composite
def routing_problems(draw):
    sizes = draw(st.lists(st.integers(1, 10), min_size=1, max_size=4))
    gaps = draw(st.lists(st.integers(0, 2), min_size=len(sizes) + 1, max_size=len(sizes) + 1))
    n = sum(sizes) + sum(gaps)
    m = draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.sampled_from(ROUTING_VALUES), min_size=n * m,
                               max_size=n * m)), np.float32).reshape(n, m)
    starts, ends, pos = [], [], gaps[0]
    for size, gap in zip(sizes, gaps[1:]):
        starts.append(pos)
        ends.append(pos + size)
        pos += size + gap
    splits = []
    for _ in sizes:
        f = draw(st.integers(0, m - 1))
        kind = draw(st.sampled_from([SPLIT_THRESHOLD, SPLIT_SUBSET, SPLIT_MULTIWAY]))
        k = 2 if kind != SPLIT_MULTIWAY else draw(st.integers(2, 4))
        mb = draw(st.integers(0, k - 1))
        if kind == SPLIT_THRESHOLD:
            thr = draw(st.sampled_from([-np.inf, -0.5, 0.5, 1.0, 2.25, np.inf]))
            splits.append((f, kind, thr, mb, None, k))
        else:  # categories 0..3 and the unseen slot
            # an entry -1 - b: a category that never reached the node, sent to branch b
            mp = np.array(draw(st.lists(st.integers(-k, k - 1), min_size=5, max_size=5)))
            splits.append((f, kind, -2.0, mb, mp, k))
    labels = draw(st.sampled_from(["uint8", "float64", "none"]))
    w = draw(st.one_of(st.none(), st.lists(st.sampled_from(DYADIC_WEIGHTS), min_size=n,
                                           max_size=n).map(np.array)))
    return SimpleNamespace(X=X, w=w, perm=np.array(draw(st.permutations(range(n))), np.int64),
                           starts=np.array(starts, np.int64), ends=np.array(ends, np.int64),
                           splits=splits, labels=labels, y=np.arange(n) % 7)


@settings(max_examples=200, **HYPOTHESIS)
@given(routing_problems(), st.sampled_from([None, 1, 2, 3, 5]))
def test_route_rows_and_kway_partition_match_naive_rule(R, route_chunk_rows):
    """Also with nodes routed in chunks of 1, 2, 3 and 5 rows (their weights summed chunk by
    chunk, dyadic weights: exact in any order)."""
    sorted_x, sorted_idx = build_layout(R.X, R.perm, R.starts, R.ends)
    if R.labels == "none":
        y_layout, sorted_y = None, np.empty((R.X.shape[1], 0), np.uint8)
    else:
        y_layout = R.y.astype(R.labels)
        sorted_y = gather_targets(sorted_idx, y_layout)
    check_route_and_partition(R.X, y_layout, R.w, R.perm, R.starts, R.ends, sorted_x, sorted_idx,
                              sorted_y, R.splits, route_chunk_rows)


def test_route_rows_sends_missing_rows_down_every_branch_when_asked():
    # missing_branch -1 (C4.5's fractional rows): a NaN row's branch is -1, it is counted in
    # seg_all_branches and in no branch's rows or weight
    X = np.array([[0.0], [np.nan], [2.0], [1.0], [np.nan], [3.0]], np.float32)
    w = np.array([1.0, 2.0, 0.5, 1.5, 3.0, 0.25])
    starts, ends = np.array([0, 4], np.int64), np.array([4, 6], np.int64)
    sorted_x, sorted_idx = build_layout(X, np.arange(6), starts, ends)
    row_branch = np.full(6, 9, np.int32)
    branch_rows, branch_weight, all_branches = route_rows(
        sorted_x, sorted_idx, w, starts, ends, np.zeros(2, np.int64),
        np.array([SPLIT_THRESHOLD, SPLIT_MULTIWAY], np.int64), np.array([0.5, -2.0]),
        np.array([-1, -1], np.int64), np.array([-1, 0], np.int64), np.array([0, 5], np.int64),
        np.array([0, 1, 2, 1, -1], np.int32), np.array([0, 2, 5], np.int64), row_branch)
    np.testing.assert_array_equal(row_branch, [0, -1, 1, 1, -1, 1])
    np.testing.assert_array_equal(branch_rows, [1, 2, 0, 1, 0])  # node 0: 2 branches, node 1: 3
    np.testing.assert_allclose(branch_weight, [1.0, 2.0, 0.0, 0.25, 0.0])
    np.testing.assert_array_equal(all_branches, [1, 1])


def test_branch_of_edge_values():
    category_map = np.array([1, 0, 2, 1], np.int32)  # codes 0, 1, 2 and the unseen slot
    for x in [np.nan, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0, np.inf, -np.inf]:
        x = np.float32(x)
        for kind in (SPLIT_SUBSET, SPLIT_MULTIWAY):
            assert branch_of(x, kind, -2.0, 2, 0, 4, category_map) == ref.branch_naive(
                x, kind, -2.0, 2, category_map)
        for thr in (-np.inf, 0.0, 0.5, np.inf):
            assert branch_of(x, SPLIT_THRESHOLD, thr, 1, -1, 0, category_map) == \
                ref.branch_naive(x, SPLIT_THRESHOLD, thr, 1, None)


# --- selection rules ---------------------------------------------------------------------------
GAINS = [-0.2, -1e-4, 0.0, 1e-4, 0.05, 0.0505, 0.1, 0.1009, 0.2, 0.3]
SPLIT_INFOS = [0.0, 5e-4, 1e-3, 0.0011, 0.5, 1.0, 2.0]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_select_best_splits_matches_naive(n_features, n_segments, data):
    size = n_features * n_segments

    def draw(values):
        return np.array(data.draw(st.lists(st.sampled_from(values), min_size=size,
                                           max_size=size))).reshape(n_features, n_segments)

    n_branches = draw([0, 2, 2, 3]).astype(np.int32)
    gain = np.where(n_branches > 0, draw(GAINS), 0.0)
    split_info = np.where(n_branches > 0, draw(SPLIT_INFOS), 0.0)
    children_impurity = np.where(n_branches > 0, draw([0.5, 1.0, 1.0, 2.0]), np.inf)
    for rule in (SELECT_IMPURITY, SELECT_GAIN_RATIO):
        got = select_best_splits(children_impurity, gain, split_info, n_branches, rule)
        expected = ref.select_best_splits_naive(children_impurity, gain, split_info, n_branches,
                                                gain_ratio=rule == SELECT_GAIN_RATIO)
        np.testing.assert_array_equal(got, expected)


def test_gain_ratio_worked_example():
    # average gain (0.3 + 0.1 + 0.2) / 3 = 0.2: feature 1 is below it despite its best ratio;
    # features 0 and 2 qualify, 2 has the higher ratio; an invalid feature 3 does not count
    gain = np.array([[0.3], [0.1], [0.2], [5.0]])
    split_info = np.array([[1.0], [0.01], [0.5], [1.0]])
    n_branches = np.array([[2], [2], [2], [0]], np.int32)
    imp = np.where(n_branches > 0, 1.0, np.inf)
    assert select_best_splits(imp, gain, split_info, n_branches, SELECT_GAIN_RATIO)[0] == 2
    # within 1e-3 of the average still qualifies
    gain = np.array([[0.3], [0.1995], [0.2], [5.0]])  # average 0.2331...: 0.2 is below
    assert select_best_splits(imp, gain, split_info, n_branches, SELECT_GAIN_RATIO)[0] == 0
    # exactly at the floor (the average minus 1e-3) still qualifies
    gain = np.array([[0.01], [0.01 - 0.002]])
    assert (0.0 + gain[0, 0] + gain[1, 0]) / 2 - 1e-3 == gain[1, 0]
    two = np.full((2, 1), 2, np.int32)
    assert select_best_splits(np.ones((2, 1)), gain, np.array([[1.0], [0.01]]), two,
                              SELECT_GAIN_RATIO)[0] == 1
    # no valid split
    none = np.zeros((2, 1), np.int32)
    assert select_best_splits(np.full((2, 1), np.inf), np.zeros((2, 1)), np.ones((2, 1)), none,
                              SELECT_GAIN_RATIO)[0] == -1


# --- node impurity and split information ----------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["gini", "entropy", "squared_error"]), st.integers(2, 4),
       st.lists(st.lists(st.tuples(st.integers(0, 3), st.floats(-50, 50),
                                   st.sampled_from([0.25, 1.0, 1.7, 3.0])), max_size=12),
                min_size=1, max_size=4))
def test_node_impurity_matches_reference(criterion, n_classes, nodes):
    stats = np.zeros((len(nodes), 3 if criterion == "squared_error" else n_classes))
    expected_w, expected_imp = [], []
    for i, node in enumerate(nodes):
        labels = np.array([c % n_classes for c, _, _ in node], np.int64)
        target = np.array([t for _, t, _ in node])
        w = np.array([v for _, _, v in node])
        if criterion == "squared_error":
            stats[i] = [w.sum(), (w * target).sum(), (w * target * target).sum()]
            expected_imp.append(ref.weighted_variance(target, w) if node else 0.0)
        else:
            counts = np.bincount(labels, weights=w, minlength=n_classes)
            stats[i] = counts
            expected_imp.append((ref.entropy_bits if criterion == "entropy" else ref.gini)(counts))
        expected_w.append(w.sum())
    weight, impurity = node_impurity(stats, CRITERIA[criterion])
    np.testing.assert_allclose(weight, expected_w, rtol=1e-12)
    scale = 1.0 if criterion != "squared_error" else 1 + np.abs(stats[:, 1] / np.maximum(
        stats[:, 0], 1e-300)).max() ** 2
    np.testing.assert_allclose(impurity, expected_imp, rtol=1e-9, atol=1e-12 * scale)
    assert (impurity >= 0).all() and not np.signbit(impurity).any()


def test_split_information():
    assert split_information(np.array([2.0, 2.0]), 4.0) == pytest.approx(1.0)
    assert split_information(np.array([1.0, 1.0, 2.0]), 4.0) == pytest.approx(1.5)
    assert split_information(np.array([4.0, 0.0]), 4.0) == 0.0
    assert split_information(np.array([0.0]), 0.0) == 0.0


# --- prediction through every kind of node -----------------------------------------------------
def mixed_tree():
    """x0 numeric, x1 categorical (4 categories), x2 categorical (3), x3 numeric.

    0: x0 <= 0.5 (missing right)           -> 1, 2
    1: x1 in {0, 3} (subset; missing left)  -> 3, 4      unseen categories right
    2: x2 multiway (missing to branch 2)    -> 5, 6, 7   unseen categories to branch 1
    4: x3 <= -1 (missing left)              -> 8, 9
    7: x0 <= 2 (missing right)              -> 10, 11
    """
    left = [1, 3, 5, -1, 8, -1, -1, 10, -1, -1, -1, -1]
    right = [2, 4, 7, -1, 9, -1, -1, 11, -1, -1, -1, -1]
    n = len(left)
    return Tree(
        children_left=left, children_right=right,
        feature=[0, 1, 2, -2, 3, -2, -2, 0, -2, -2, -2, -2],
        threshold=[0.5, -2, -2, -2, -1.0, -2, -2, 2.0, -2, -2, -2, -2],
        split_kind=[SPLIT_THRESHOLD, SPLIT_SUBSET, SPLIT_MULTIWAY] + [SPLIT_THRESHOLD] * 9,
        missing_branch=[1, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        category_offset=[-1, 0, 5] + [-1] * 9, category_n_codes=[0, 5, 4] + [0] * 9,
        # node 1: codes 0..3, unseen; category 3 and unseen never reached it (-1 - b marks)
        # node 2: codes 0..2, unseen (-1 - 1: branch 1)
        category_branch=[0, 1, 1, -1, -2, 0, 1, 2, -2],
        value=np.zeros((n, 1, 2)), impurity=np.zeros(n), n_node_samples=np.ones(n),
        weighted_n_node_samples=np.ones(n), depth=[0, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3],
        n_features=4)


def threshold_tree():
    """Thresholds only (the block-walking path), with missing values both ways and inf."""
    left = [1, 3, 5, -1, -1, -1, -1]
    right = [2, 4, 6, -1, -1, -1, -1]
    n = len(left)
    return Tree(
        children_left=left, children_right=right, feature=[0, 1, 1, -2, -2, -2, -2],
        threshold=[0.5, np.inf, -0.5, -2, -2, -2, -2], missing_branch=[0, 1, 1, 0, 0, 0, 0],
        value=np.zeros((n, 1, 2)), impurity=np.zeros(n), n_node_samples=np.ones(n),
        weighted_n_node_samples=np.ones(n), depth=[0, 1, 1, 2, 2, 2, 2], n_features=2)


@pytest.mark.parametrize("make_tree", [mixed_tree, threshold_tree])
def test_apply_and_decision_paths_match_naive_walk(make_tree):
    tree = make_tree()
    rng = np.random.default_rng(1)
    values = np.array([np.nan, -np.inf, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 9.0,
                       np.inf], np.float32)
    X = np.ascontiguousarray(rng.choice(values, size=(300, tree.n_features)))
    leaves = apply_tree(X, *tree._routing())
    path, length = decision_paths(X, *tree._routing(), tree.max_depth)
    for i, row in enumerate(X):
        expected = ref.decision_path_naive(tree, row)
        assert leaves[i] == expected[-1]
        assert length[i] == len(expected)
        np.testing.assert_array_equal(path[i, :length[i]], expected)
        assert (path[i, length[i]:] == -1).all()
    np.testing.assert_array_equal(leaves, ref.apply_naive(tree, X))
    assert set(leaves.tolist()) == set(np.flatnonzero(tree.is_leaf()).tolist())  # all reached


# --- the layout -------------------------------------------------------------------------------
def test_presort_puts_missing_values_last():
    x = np.array([[2.0], [np.nan], [-1.0], [np.inf], [np.nan], [-np.inf], [0.0]], np.float32)
    sorted_x, sorted_idx = presort_features(x)
    np.testing.assert_array_equal(sorted_idx[0], np.argsort(x[:, 0], kind="stable"))


def test_presort_puts_every_nan_last():
    # x86 produces NaN with the sign bit set for invalid operations (inf - inf, 0 * inf); a NaN
    # may also carry a payload.  All are missing values: last, in row order (numpy's stable sort)
    with np.errstate(invalid="ignore"):
        negative_nan = (np.array([np.inf], np.float32) - np.float32(np.inf))[0]
    assert np.isnan(negative_nan) and np.signbit(negative_nan)
    payload_nan = np.array([0x7FC00123], np.uint32).view(np.float32)[0]
    x = np.array([[1.0], [negative_nan], [0.0], [np.nan], [payload_nan], [-np.inf]], np.float32)
    sorted_x, sorted_idx = presort_features(x)
    np.testing.assert_array_equal(sorted_idx[0], np.argsort(x[:, 0], kind="stable"))
    np.testing.assert_array_equal(sorted_idx[0], [5, 2, 0, 1, 3, 4])
    assert np.isnan(sorted_x[0, 3:]).all() and not np.isnan(sorted_x[0, :3]).any()


# --- threads ----------------------------------------------------------------------------------
def thread_problem():
    rng = np.random.default_rng(3)
    n, m = 600, 6
    X = rng.integers(0, 6, size=(n, m)).astype(np.float32)
    X[:, :3] += rng.normal(size=(n, 3)).round(1).astype(np.float32)
    X[rng.uniform(size=(n, m)) < 0.15] = np.nan
    y = rng.integers(0, 3, size=n)
    starts = np.array([0, 150, 310, 450], np.int64)
    ends = np.array([140, 300, 450, 600], np.int64)
    P = SimpleNamespace(task="entropy", n_classes=3, X=X, y=y, w=rng.uniform(0.5, 2.0, n),
                        unit=False, msl=2, mwl=0.0, starts=starts, ends=ends,
                        perm=rng.permutation(n), n_categories=np.array([0, 0, 0, 6, 6, 6]))
    return P


def run_kernels(P):
    """Numeric and categorical searches, maps, routing and partition; every output array."""
    L = prepare(P)
    out = list(numeric_search(P, L))
    R = SimpleNamespace(**{**vars(P), "task": "squared_error", "n_classes": None,
                           "y": P.y * 1.5})
    out += list(numeric_search(R, prepare(R)))
    for kind in (SPLIT_SUBSET, SPLIT_MULTIWAY):
        record = categorical_search(P, L, kind)
        out += list(record)
        pairs = [(f, s) for s in range(P.starts.size) for f in range(3, 6)
                 if record.n_branches[f, s]]
        out += category_maps(P, L, record, pairs, kind)
    f = np.array([0, 3, 4, 1], np.int64)
    record = categorical_search(P, L, SPLIT_MULTIWAY)
    maps = category_maps(P, L, record, [(3, 1), (4, 2)], SPLIT_MULTIWAY)
    n_branches = np.array([2, record.n_branches[3, 1], record.n_branches[4, 2], 2], np.int64)
    branch_offset = np.concatenate([[0], np.cumsum(n_branches)]).astype(np.int64)
    row_branch = np.zeros(P.X.shape[0], np.int32)
    branch_rows, branch_weight, _ = route_rows(
        L.sorted_x, L.sorted_idx, L.w_kernel, P.starts, P.ends, f,
        np.array([SPLIT_THRESHOLD, SPLIT_MULTIWAY, SPLIT_MULTIWAY, SPLIT_THRESHOLD], np.int64),
        np.array([1.0, -2, -2, np.inf]), np.array([1, 0, 1, 0], np.int64),
        np.array([-1, 0, 7, -1], np.int64), np.array([0, 7, 7, 0], np.int64),
        np.concatenate(maps).astype(np.int32), branch_offset, row_branch)
    partition_segments_kway(L.sorted_x, L.sorted_idx, L.sorted_y, P.starts, P.ends,
                            branch_offset, branch_rows, row_branch)
    out += [row_branch, branch_rows, branch_weight, L.sorted_x, L.sorted_idx, L.sorted_y]
    return out


def test_results_do_not_depend_on_the_number_of_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs at least two numba threads")
    P = thread_problem()
    default = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run_kernels(P)
        numba.set_num_threads(2)
        two = run_kernels(P)
    finally:
        numba.set_num_threads(default)
    assert len(one) == len(two)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(one[0]).any()  # the problem has splits to find


def test_fractional_partition_copies_missing_rows_into_every_branch():
    """partition_segments_fractional against a naive rebuild of the grown layout."""
    from fasttree.kernels import partition_segments_fractional

    rng = np.random.default_rng(11)
    n, m = 60, 3
    X = rng.normal(size=(n, m)).round(1).astype(np.float32)
    X[rng.random(n) < 0.25, 0] = np.nan
    X[rng.random(n) < 0.2, 2] = np.nan
    labels = rng.integers(0, 3, n).astype(np.uint8)
    # two nodes: rows 0..29 and 30..59, each sorted per feature (NaN last), then one leaf gap
    sorted_x = np.empty((m, n + 5), np.float32)
    sorted_idx = np.empty((m, n + 5), np.int32)
    segments = [(0, 30), (35, 65)]
    rows_of = [np.arange(0, 30), np.arange(30, 60)]
    for f in range(m):
        for (s, e), rows in zip(segments, rows_of):
            order = rows[np.argsort(X[rows, f], kind="stable")]
            sorted_idx[f, s:e] = order
            sorted_x[f, s:e] = X[order, f]
        sorted_idx[f, 30:35] = -7  # a finished leaf's positions: copied unchanged
        sorted_x[f, 30:35] = 99.0
    sorted_y = np.where(sorted_idx >= 0, labels[np.maximum(sorted_idx, 0)], 0).astype(np.uint8)
    thresholds = np.array([0.05, -0.25])
    row_branch = np.full(n, -5, np.int32)
    for (s, e), t in zip(segments, thresholds):
        for row in sorted_idx[0, s:e]:
            x = X[row, 0]
            row_branch[row] = -1 if np.isnan(x) else int(x > t)
    copy_base = np.zeros(n, np.int64)
    missing_rows = np.flatnonzero(row_branch == -1)
    copy_base[missing_rows] = n + 2 * np.arange(missing_rows.size)
    counts = np.array([((row_branch[r] == b).sum()) for r in rows_of for b in (0, 1)], np.int64)
    all_branches = np.array([(row_branch[r] == -1).sum() for r in rows_of], np.int64)
    new_x, new_idx, new_y, new_start = partition_segments_fractional(
        sorted_x, sorted_idx, sorted_y, np.array([0, 35]), np.array([30, 65]),
        np.array([0, 2, 4]), counts, all_branches, row_branch, copy_base)
    assert new_x.shape == (m, n + 5 + all_branches.sum())
    np.testing.assert_array_equal(new_start, [0, 35 + all_branches[0]])
    gap = 30 + all_branches[0]  # the finished leaf moved by the first node's growth
    np.testing.assert_array_equal(new_idx[:, gap:gap + 5], -7)
    for f in range(m):
        for j in range(len(rows_of)):
            position = new_start[j]
            for b in (0, 1):
                expected = [r for r in sorted_idx[f, segments[j][0]:segments[j][1]]
                            if row_branch[r] == b or row_branch[r] == -1]
                expected_ids = [r if row_branch[r] == b else copy_base[r] + b for r in expected]
                size = counts[2 * j + b] + all_branches[j]
                got = new_idx[f, position:position + size]
                np.testing.assert_array_equal(got, expected_ids)  # stable, copies in place
                values = new_x[f, position:position + size]
                np.testing.assert_array_equal(values, X[expected, f])
                np.testing.assert_array_equal(new_y[f, position:position + size],
                                              labels[expected])
                position += size
