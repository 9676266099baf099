"""The bounded search of large nodes (:mod:`fasttree.kernels.bounded_search`): its bins, and
its splits against the scan of the sorted node, which it must equal exactly."""

import numpy as np
import pytest
from numba import njit

from fasttree import depth_first
from fasttree._dtypes import CRITERION_ENTROPY, CRITERION_GINI
from fasttree.estimators import DecisionTreeClassifier
from fasttree.kernels import xlog2x_table
from fasttree.kernels import depth_first as depth_first_kernels
from fasttree.kernels.bounded_search import (_SAMPLE, MISSING_CODE, N_CODES, bounded_search,
                                             fine_bin_codes)
from fasttree.kernels.split_search import FEATURE_THRESHOLD, _class_scan, _midpoint

from test_depth_first import _assert_same, _data, _grow


@njit
def _search(*args):  # the kernels are callable from kernels only (no Python wrapper)
    return bounded_search(*args)


_SCANNERS = {}


def _scanner(unit):
    if unit not in _SCANNERS:
        scan = _class_scan(unit, True, False, False, not unit)

        @njit
        def call(*args):
            return scan(*args)
        _SCANNERS[unit] = call
    return _SCANNERS[unit]


def _columns(rng, n, kind):
    """One feature of ``kind``: real values, few distinct ones (ties), values a float32 ulp
    or two apart (within FEATURE_THRESHOLD of each other), or with NaN."""
    x = rng.normal(size=n).astype(np.float32)
    if kind == "ties":
        x = np.round(x * 3).astype(np.float32)
    elif kind == "ulps":  # runs of neighbours closer than FEATURE_THRESHOLD
        k = rng.integers(0, 3000, n)
        x = (np.float32(0.5) + (k + k // 3).astype(np.float32)  # one ulp, every third two
             * np.float32(6e-8)).astype(np.float32)
    elif kind == "missing":
        x[rng.random(n) < 0.05] = np.nan
    return x


def _check_bins(x, codes):
    """The codes' properties: uint16, NaN alone on MISSING_CODE, bins in increasing order of
    value, never cut between values within FEATURE_THRESHOLD, none empty; the bins' sizes."""
    assert codes.dtype == np.uint16
    np.testing.assert_array_equal(codes == MISSING_CODE, np.isnan(x))
    known = ~np.isnan(x)
    order = np.argsort(x[known], kind="stable")
    v, c = x[known][order], codes[known][order]
    assert np.all(np.diff(c.astype(np.int64)) >= 0)  # bins in increasing order of value
    assert c.max() < N_CODES - 1
    cut = np.flatnonzero(np.diff(c.astype(np.int64)) > 0)
    assert np.all(v[cut + 1] > v[cut] + FEATURE_THRESHOLD)  # never between close values
    assert set(np.unique(c)) == set(range(c.max() + 1))  # no bin empty
    return np.bincount(c)


@pytest.mark.parametrize("kind", ["real", "ties", "ulps", "missing"])
def test_fine_bin_codes(kind):
    rng = np.random.default_rng(3)
    x = _columns(rng, 50_000, kind)  # fewer than twice the sample: every value places cuts
    sizes = _check_bins(x, fine_bin_codes(np.ascontiguousarray(x[:, None]))[0])
    if kind == "real":  # equal rows
        assert len(sizes) >= N_CODES - 3 and sizes.max() <= 2 * 50_000 // (N_CODES - 1) + 1


@pytest.mark.parametrize("kind", ["real", "ties", "missing", "hidden", "infinite", "skewed"])
def test_fine_bin_codes_from_a_sample(kind):
    """Cuts placed on a sample: the codes keep their properties when values the sample missed
    lie within FEATURE_THRESHOLD above a cut ("hidden": a seventh of the values have unsampled
    neighbours one float32 ulp above them, which merge their bin with the next) or are
    infinite or skewed (buckets of equal width would hold many cuts: every cut searched)."""
    rng = np.random.default_rng(5)
    n = 5 * _SAMPLE
    if kind == "hidden":
        k = rng.integers(0, 50_000, n)
        x = (np.float32(0.25) + k.astype(np.float32) * np.float32(1e-6)).astype(np.float32)
        hidden = k % 7 == 0  # a seventh of the values, where not sampled
        hidden[::n // _SAMPLE] = False
        x[hidden] = np.nextafter(x[hidden], np.float32(1))
    elif kind == "infinite":
        x = _columns(rng, n, "real")
        x[rng.random(n) < 0.01] = np.inf
        x[rng.random(n) < 0.01] = -np.inf
    elif kind == "skewed":
        x = np.exp(3.0 * _columns(rng, n, "real")).astype(np.float32)
    else:
        x = _columns(rng, n, kind)
    sizes = _check_bins(x, fine_bin_codes(np.ascontiguousarray(x[:, None]))[0])
    if kind in ("real", "missing"):  # about equal rows
        assert len(sizes) >= N_CODES - 50 and sizes.max() <= 4 * n // (N_CODES - 1)
    elif kind == "skewed":  # the smallest values, within FEATURE_THRESHOLD, share bins
        assert len(sizes) >= N_CODES // 2 and sizes.max() <= 8 * n // (N_CODES - 1)


def _scan_of_sorted_node(x, labels, counts, criterion, min_rows, min_weight_leaf, table):
    """The sorted node's scan (what the depth-first tree does without codes)."""
    unit = counts.shape[0] == 0
    order = np.argsort(x, kind="stable").astype(np.int32)
    xs = x[order]
    total = np.zeros(2, np.int64)
    np.add.at(total, labels, 1 if unit else counts.astype(np.int64))
    value, p, _, _, _ = _scanner(unit)(xs, order, labels[order], counts, total, np.zeros(2, np.int64), 0,
                             np.zeros((2, 2), np.int64), criterion, min_rows, min_weight_leaf,
                             table, 0, -np.inf, np.inf, 0, x.shape[0])
    if p < 0:
        return value, -1, 0.0
    return value, p + 1, _midpoint(xs[p], xs[p + 1])


@pytest.mark.parametrize("kind", ["real", "ties", "ulps"])
@pytest.mark.parametrize("criterion", [CRITERION_GINI, CRITERION_ENTROPY])
@pytest.mark.parametrize("counted", [False, True])
@pytest.mark.parametrize("min_rows, min_weight_leaf", [(1, 0.0), (40, 0.0), (1, 300.0)])
def test_bounded_search_is_the_scan_of_the_sorted_node(kind, criterion, counted, min_rows,
                                                       min_weight_leaf):
    rng = np.random.default_rng(7)
    n_all = 200_000  # bins of about 49 rows: whole nodes bounded, pruned and scanned
    x_all = _columns(rng, n_all, kind)
    X = np.ascontiguousarray(x_all[:, None])
    X_t = np.ascontiguousarray(X.T)
    codes_t = fine_bin_codes(X)
    for trial in range(16):
        n = int(rng.integers(50, 30_000))
        rows = np.sort(rng.choice(n_all, n, replace=False)).astype(np.int32)
        if trial % 4 == 3:  # a node below a split of the feature: a part of its codes
            window = np.flatnonzero(np.abs(x_all - x_all[rows[0]]) < rng.uniform(0.01, 0.5))
            rows = np.sort(rng.choice(window, min(n, window.size), replace=False))
            rows = rows.astype(np.int32)
            n = rows.size
        signal = np.nan_to_num(x_all[rows]) + rng.normal(scale=1.0 + trial, size=n)
        labels = (signal > np.median(signal)).astype(np.uint8)
        counts = (rng.poisson(1.0, n).clip(1, 9).astype(np.uint8) if counted
                  else np.empty(0, np.uint8))
        w_total = n if not counted else int(counts.sum())
        table = xlog2x_table(w_total)
        expected = _scan_of_sorted_node(x_all[rows], labels, counts, criterion,
                                        min_rows if counted else max(min_rows, min_weight_leaf),
                                        min_weight_leaf, table)
        weight = counts if counted else np.empty(0)
        scratch = dict(codes=np.empty(n, np.uint16), hist=np.empty((5, N_CODES), np.int64),
                       bounds=np.empty(N_CODES), values=np.empty(n, np.float32),
                       positions=np.empty(n, np.int32), order=np.empty(n, np.int32),
                       keys_tmp=np.empty(n, np.uint32), idx_tmp=np.empty(n, np.int32),
                       sort_counts=np.empty((4, 2048), np.int64))
        total_1 = int(labels.sum()) if not counted else int((labels * counts).sum())
        # codes read one row per feature, or one row per sample where the rows lie scattered
        codes_rows = np.ascontiguousarray(codes_t.T) if trial % 3 else np.empty((0, 0), np.uint16)
        searched, value, n_left, threshold, lowest, highest = _search(
            codes_t, codes_rows, X, X_t, trial % 2 == 0, 0, rows, labels, weight, 0, n, *scratch.values(),
            w_total, total_1, criterion,
            min_rows if counted else max(min_rows, int(np.ceil(min_weight_leaf))),
            min_weight_leaf, table)
        assert searched == (np.unique(codes_t[0, rows]).size > 1)
        if not searched:
            continue
        assert (value, n_left) == expected[:2]
        if n_left >= 0:
            assert threshold == expected[2]
            # rows of bins below lowest go left, above highest right; the rest by value
            c = scratch["codes"][:n]
            x = x_all[rows]
            assert np.all(x[c < lowest] <= threshold) and np.all(x[c > highest] > threshold)


def test_bounded_search_leaves_missing_values_and_one_bin_to_the_scan():
    rng = np.random.default_rng(1)
    x = rng.normal(size=10_000).astype(np.float32)
    x[5] = np.nan
    x[100:200] = 7.0  # one value: one bin
    X = np.ascontiguousarray(x[:, None])
    X_t = np.ascontiguousarray(X.T)
    codes_t = fine_bin_codes(X)
    n = 100
    for start in (0, 100):
        rows = np.arange(start, start + n, dtype=np.int32)
        scratch = (np.empty(n, np.uint16), np.empty((5, N_CODES), np.int64),
                   np.empty(N_CODES), np.empty(n, np.float32), np.empty(n, np.int32),
                   np.empty(n, np.int32), np.empty(n, np.uint32), np.empty(n, np.int32),
                   np.empty((4, 2048), np.int64))
        labels = (np.arange(n) % 2).astype(np.uint8)
        searched, *_ = _search(codes_t, np.ascontiguousarray(codes_t.T), X, X_t, True, 0, rows,
                               labels, np.empty(0), 0, n, *scratch, n, n // 2, CRITERION_GINI,
                               1, 0.0, np.empty(0))
        assert not searched


CASES = [
    ("gini", {}),
    ("entropy", {}),
    ("gini", {"max_features": None, "min_samples_leaf": 3}),
    ("entropy", {"max_features": 1, "min_weight_fraction_leaf": 0.01}),
    ("gini", {"max_depth": 5, "min_impurity_decrease": 0.001}),
]


@pytest.mark.parametrize("criterion, options", CASES)
@pytest.mark.parametrize("rounded, missing", [(True, True), (False, False)])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_forests_trees_with_the_bounded_search(monkeypatch, criterion, options, rounded,
                                               missing, bootstrap):
    """Every node of at least 16 rows searched by bounded_search where it can: the trees the
    level-wise grower grows, which sorts every node."""
    X, y, counts = _data(11, n=3000, m=6, n_classes=2, missing=missing, rounded=rounded)
    if not bootstrap:
        counts[:] = 1
    params = DecisionTreeClassifier(criterion=criterion, **{"max_features": "sqrt",
                                                            **options})._resolve_params(
        X.shape[0], X.shape[1], float(counts[0].sum()), True)
    assert depth_first.serves(params, False, False, False, True, True)
    calls = []
    real_search = depth_first_kernels.grow_best_trees

    def counting(*args, **kwargs):
        calls.append(args[25] is not None and kwargs["codes_rows"] is not None)
        return real_search(*args, **kwargs)

    monkeypatch.setattr(depth_first, "grow_best_trees", counting)
    monkeypatch.setattr(depth_first_kernels, "BOUNDED_ROWS", 16)
    trees = _grow(X, y, counts, params, 2, 4)
    assert calls and all(calls)  # codes were given
    monkeypatch.setattr(depth_first, "serves", lambda *args: False)
    _assert_same(trees, _grow(X, y, counts, params, 2, 4))


@pytest.mark.parametrize("options, made", [
    ({}, True),  # bootstrap counts
    ({"bootstrap": False}, True),  # every weight 1
    ({"bootstrap": False, "class_weight": {0: 1.0, 1: 2.5}}, False),  # fractional weights
    ({"class_weight": "balanced_subsample"}, False),  # each tree's class weights
    ({"class_weight": {0: 1.0, 1: 2.5}}, True),  # weights only draw the bootstrap
])
def test_bins_are_made_only_for_fits_that_read_them(monkeypatch, options, made):
    """The bins cost four bytes a value and a sort of every feature: made only where the
    bounded search can run (whole weights, two classes, best thresholds)."""
    from fasttree import RandomForestClassifier

    calls = []
    real = depth_first.fine_bin_codes
    monkeypatch.setattr(depth_first, "fine_bin_codes",
                        lambda X: calls.append(X.shape) or real(X))
    X, y, _ = _data(2, n=depth_first.BINNED_ROWS, m=4, n_classes=2, missing=False)
    RandomForestClassifier(n_estimators=2, random_state=0, **options).fit(X, y)
    assert bool(calls) == made
    calls.clear()  # fewer rows: bins would cost more than the few bounded nodes save
    RandomForestClassifier(n_estimators=2, random_state=0, **options).fit(X[1:], y[1:])
    assert not calls
