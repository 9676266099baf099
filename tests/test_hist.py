"""The binned splitter (``splitter="hist"``): its kernels against naive twins, the exactness
guarantee (at most ``max_bins`` distinct values per column: the tree of ``splitter="best"``, bit
for bit), consistency of the stored thresholds with the bins, and the refusals."""

import numpy as np
import pytest

import fasttree
import fasttree.hist_splitter as hist_splitter
from fasttree.hist_splitter import bin_features
from fasttree.kernels.histogram import (
    HIST_BINS,
    MISSING_BIN,
    bin_bounds,
    bin_codes,
    build_histograms,
    combine_histograms,
    partition_hist_segments,
)

TREE_FIELDS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
               "n_node_samples", "weighted_n_node_samples", "missing_branch")


def assert_same_tree(expected, actual):
    assert expected.node_count == actual.node_count
    for name in TREE_FIELDS:
        a, b = getattr(expected, name), getattr(actual, name)
        # bit for bit: the same float64 values, not only close ones
        assert np.array_equal(a.view(np.uint8) if a.dtype.kind == "f" else a,
                              b.view(np.uint8) if b.dtype.kind == "f" else b), name


def few_values(seed, n=600, m=5, levels=12, missing=0.0, classes=2, regression=False):
    """Columns with at most ``levels`` distinct values (some of them closer than 1e-7), a target
    that depends on two of them."""
    rng = np.random.default_rng(seed)
    grid = np.sort(rng.normal(size=levels)).astype(np.float32)
    grid[1] = grid[0] + np.float32(5e-8)  # one pair that counts as one value
    X = grid[rng.integers(0, levels, size=(n, m))]
    if missing:
        X[rng.random((n, m)) < missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.7 * np.nan_to_num(X[:, 1]) + rng.normal(0, 0.7, n)
    if regression:
        y = np.round(4 * signal)  # integer targets: sums are exact in any order
    else:
        y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, classes + 1)[1:-1]))
    return rng, X, y


# --- the exactness guarantee ------------------------------------------------------------------
CASES = [
    dict(criterion="gini"),
    dict(criterion="entropy", max_depth=4),
    dict(criterion="log_loss", min_samples_leaf=7),
    dict(criterion="gain_ratio"),
    dict(criterion="entropy", classes=4),
    dict(criterion="gini", classes=3, missing=0.15),
    dict(criterion="entropy", missing=0.2),
    dict(criterion="gini", missing=0.1, weights=True),
    dict(criterion="entropy", classes=3, weights=True),
    dict(criterion="gini", max_features=2),
    dict(criterion="entropy", max_leaf_nodes=9),
    dict(criterion="gini", min_weight_fraction_leaf=0.05, missing=0.1),
    dict(criterion="squared_error", regression=True),
    dict(criterion="squared_error", regression=True, missing=0.2),
    dict(criterion="squared_error", regression=True, weights=True, min_samples_leaf=3),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("seed", [0, 1])
def test_hist_grows_the_exact_tree_when_columns_have_few_values(case, seed):
    case = dict(case)
    regression = case.pop("regression", False)
    rng, X, y = few_values(seed, missing=case.pop("missing", 0.0),
                           classes=case.pop("classes", 2), regression=regression)
    # integer weights: weighted sums are exact in any order
    w = rng.integers(1, 4, size=len(y)).astype(float) if case.pop("weights", False) else None
    Est = fasttree.DecisionTreeRegressor if regression else fasttree.DecisionTreeClassifier
    exact = Est(random_state=seed, **case).fit(X, y, sample_weight=w)
    hist = Est(random_state=seed, splitter="hist", **case).fit(X, y, sample_weight=w)
    assert_same_tree(exact.tree_, hist.tree_)
    assert exact.tree_.node_count > 3


@pytest.mark.parametrize("split", ["binary", "multiway"])
@pytest.mark.parametrize("case", [dict(criterion="gini"), dict(criterion="entropy", classes=3),
                                  dict(criterion="gain_ratio", missing=0.1),
                                  dict(criterion="entropy", missing=0.15, weights=True),
                                  dict(criterion="squared_error", regression=True, missing=0.1)],
                         ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_hist_grows_the_exact_tree_with_categorical_features(split, case):
    case = dict(case)
    regression = case.pop("regression", False)
    rng, X, y = few_values(7, missing=case.pop("missing", 0.0), classes=case.pop("classes", 2),
                           regression=regression)
    X[:, 2] = rng.integers(0, 9, len(y))  # categories, some absent from some nodes
    X[:, 4] = rng.integers(0, 40, len(y))
    X[rng.random(len(y)) < 0.05, 2] = np.nan
    y = y + (np.nan_to_num(X[:, 2]) % 3 == 0) * (1 if regression else 0)
    w = rng.integers(1, 4, size=len(y)).astype(float) if case.pop("weights", False) else None
    Est = fasttree.DecisionTreeRegressor if regression else fasttree.DecisionTreeClassifier
    params = dict(categorical_features=[2, 4], categorical_split=split, max_depth=6, **case)
    exact = Est(**params).fit(X, y, sample_weight=w)
    hist = Est(splitter="hist", **params).fit(X, y, sample_weight=w)
    assert_same_tree(exact.tree_, hist.tree_)
    np.testing.assert_array_equal(exact.tree_.category_branch, hist.tree_.category_branch)
    assert (exact.tree_.split_kind != 0).any()  # categorical splits were chosen


@pytest.mark.parametrize("n_features", [1, 2])
def test_hist_is_exact_with_one_or_two_features(n_features):
    """X.T of a single column is a view of X: sorting it must not sort X."""
    rng, X, y = few_values(12, m=2)
    X = np.ascontiguousarray(X[:, :n_features])
    X_before = X.copy()
    exact = fasttree.DecisionTreeClassifier().fit(X, y)
    hist = fasttree.DecisionTreeClassifier(splitter="hist").fit(X, y)
    np.testing.assert_array_equal(X, X_before)
    assert_same_tree(exact.tree_, hist.tree_)


@pytest.mark.parametrize("max_leaf_nodes", [None, 30])
def test_hist_is_exact_in_small_groups_and_with_an_evicting_cache(monkeypatch, max_leaf_nodes):
    """Nodes searched a few at a time, histograms evicted at once: no subtraction from a parent
    that is gone, and the same tree."""
    monkeypatch.setattr(hist_splitter, "HIST_GROUP_BYTES", 1)
    monkeypatch.setattr(hist_splitter, "HIST_CACHE_BYTES", 3 * 5 * 256 * 2 * 8)
    rng, X, y = few_values(13, missing=0.1)
    exact = fasttree.DecisionTreeClassifier(max_leaf_nodes=max_leaf_nodes).fit(X, y)
    hist = fasttree.DecisionTreeClassifier(splitter="hist", max_leaf_nodes=max_leaf_nodes)
    assert_same_tree(exact.tree_, hist.fit(X, y).tree_)


def test_hist_probabilities_stay_in_range_with_float_weights():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(3000, 4)).astype(np.float32)
    y = rng.integers(0, 3, 3000)
    w = rng.uniform(0.1, 3.0, 3000)
    proba = fasttree.DecisionTreeClassifier(splitter="hist", max_bins=16).fit(
        X, y, sample_weight=w).predict_proba(X)
    assert proba.min() >= 0.0 and proba.max() <= 1.0


def test_hist_is_exact_when_the_sample_misses_a_value(monkeypatch):
    """A column with few values, one of them rare: the bins come from a sample that misses it,
    and the column is binned again from all rows."""
    monkeypatch.setattr(hist_splitter, "BIN_SAMPLE_ROWS", 50)
    rng, X, y = few_values(3, n=800)
    X[17, 2] = 99.0  # a value the sample of 50 rows is unlikely to hold
    y[17] = 1 - y[17]
    exact = fasttree.DecisionTreeClassifier(criterion="entropy").fit(X, y)
    hist = fasttree.DecisionTreeClassifier(criterion="entropy", splitter="hist").fit(X, y)
    assert_same_tree(exact.tree_, hist.tree_)


def test_hist_trees_do_not_depend_on_the_threads():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 6)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] + rng.normal(0, 0.3, 3000) > 0).astype(int)
    trees = [fasttree.DecisionTreeClassifier(splitter="hist", max_bins=32, n_jobs=n)
             .fit(X, y).tree_ for n in (1, 2)]
    assert_same_tree(*trees)


# --- many values: bins are quantiles, thresholds route as the bins did ------------------------
@pytest.mark.parametrize("max_bins", [2, 7, 255])
@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_thresholds_route_training_rows_as_the_bins_did(max_bins, missing):
    rng = np.random.default_rng(max_bins)
    X = rng.normal(size=(4000, 4)).astype(np.float32)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 > 0.8).astype(int)
    est = fasttree.DecisionTreeClassifier(splitter="hist", max_bins=max_bins, max_depth=6)
    est.fit(X, y)
    # the node counts the binned search recorded are those of the thresholds in original units
    reached = est.decision_path(X).sum(axis=0).A1
    np.testing.assert_array_equal(reached, est.tree_.n_node_samples)
    # a split's threshold lies between bins: at most max_bins - 1 distinct thresholds a feature
    inner = est.tree_.feature >= 0
    for f in range(4):
        thresholds = est.tree_.threshold[inner & (est.tree_.feature == f)]
        assert np.unique(thresholds[np.isfinite(thresholds)]).size <= max_bins - 1


def test_hist_accuracy_is_close_to_exact_on_continuous_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 8)).astype(np.float32)
    y = (X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(0, 0.5, 20000) > 0).astype(int)
    Xt = rng.normal(size=(20000, 8)).astype(np.float32)
    yt = (Xt[:, 0] + np.sin(3 * Xt[:, 1]) > 0).astype(int)
    exact = fasttree.DecisionTreeClassifier(max_depth=8).fit(X, y).score(Xt, yt)
    hist = fasttree.DecisionTreeClassifier(max_depth=8, splitter="hist").fit(X, y).score(Xt, yt)
    assert abs(exact - hist) < 0.01


# --- kernels against naive twins --------------------------------------------------------------
def test_bins_and_codes_against_numpy():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 3)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)  # few values
    X[rng.random(X.shape) < 0.05] = np.nan
    upper, bin_min, bin_max, n_bins, one_value = bin_bounds(np.sort(X.T, axis=1), 16)
    codes, mixed, has_missing = bin_codes(X, upper, bin_min, one_value)
    assert not mixed.any() and has_missing.all()
    for f in range(3):
        column = X[:, f]
        known = ~np.isnan(column)
        bounds = upper[f, :n_bins[f] - 1]
        assert np.all(np.diff(bounds) > 0) and np.isinf(upper[f, n_bins[f] - 1:]).all()
        expected = np.searchsorted(bounds, column[known], side="left")
        np.testing.assert_array_equal(codes[f, known], expected)
        assert (codes[f, ~known] == MISSING_BIN).all()
        values = np.unique(column[known])
        if one_value[f]:
            np.testing.assert_array_equal(bin_min[f, :n_bins[f]], values)
        else:
            assert n_bins[f] <= 16 < values.size
            counts = np.bincount(expected, minlength=n_bins[f])
            assert counts.max() < 3 * known.sum() / n_bins[f]  # quantiles: balanced bins
    assert one_value[1] and not one_value[0]


def test_mixed_flags_a_value_without_a_bin():
    sample = np.array([[1.0], [2.0], [3.0]], dtype=np.float32)
    bounds = bin_bounds(np.sort(sample.T, axis=1), 8)
    _, mixed, _ = bin_codes(np.array([[1.0], [2.5], [3.0]], np.float32), bounds[0], bounds[1],
                            bounds[4])
    assert mixed[0]
    codes, (bin_min, _, n_bins, one_value), _ = bin_features(
        np.array([[1.0], [2.5], [3.0]], np.float32), 8)
    assert one_value[0] and n_bins[0] == 3 and codes.tolist() == [[0, 1, 2]]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("regression", [False, True])
def test_histograms_against_bincount(weighted, regression):
    rng = np.random.default_rng(4)
    n, m = 500, 3
    codes = rng.integers(0, 6, size=(m, n)).astype(np.uint8)
    codes[rng.random((m, n)) < 0.1] = MISSING_BIN
    rows = rng.permutation(n).astype(np.int32).reshape(1, -1)
    labels = (rng.normal(size=(1, n)) if regression
              else rng.integers(0, 3, size=(1, n)).astype(np.uint8))
    w = rng.uniform(0.5, 2, n) if weighted else np.empty(0)
    from fasttree._dtypes import CRITERION_GINI, CRITERION_SQUARED_ERROR

    start, end = np.array([0, 120, 300]), np.array([120, 300, 500])
    n_stats = 3
    n_channels = n_stats + (1 if weighted else 0)
    criterion = CRITERION_SQUARED_ERROR if regression else CRITERION_GINI
    hist = build_histograms(codes, rows, labels, w, start, end, n_channels, criterion)
    assert hist.shape == (3, m, HIST_BINS, n_channels)
    for s in range(3):
        pos = np.arange(start[s], end[s])
        weight = w[rows[0, pos]] if weighted else np.ones(pos.size)
        for f in range(m):
            b = codes[f, rows[0, pos]]  # codes by row id
            if regression:
                expected = [np.bincount(b, weight, HIST_BINS),
                            np.bincount(b, weight * labels[0, pos], HIST_BINS),
                            np.bincount(b, weight * labels[0, pos] ** 2, HIST_BINS)]
            else:
                expected = [np.bincount(b[labels[0, pos] == k], weight[labels[0, pos] == k],
                                        HIST_BINS) for k in range(3)]
            if weighted:
                expected.append(np.bincount(b, minlength=HIST_BINS))
            np.testing.assert_allclose(hist[s, f], np.column_stack(expected), atol=1e-12)


@pytest.mark.parametrize("clip", [False, True])
def test_combine_histograms_copies_subtracts_and_skips(clip):
    rng = np.random.default_rng(8)
    built = rng.normal(size=(3, 7))
    parents = rng.normal(size=(2, 7))
    built_index = np.array([2, 0, 1, 0, 2])
    parent_index = np.array([-1, 1, -2, 0, -1])  # copy, subtract, skip, subtract, copy
    out = np.full((5, 7), 99.0)
    combine_histograms(built, built_index, parents, parent_index, clip, out)
    expected = np.full((5, 7), 99.0)
    for j, (b, p) in enumerate(zip(built_index, parent_index)):
        if p == -1:
            expected[j] = built[b]
        elif p >= 0:
            expected[j] = parents[p] - built[b]
            if clip:
                expected[j] = np.maximum(expected[j], 0.0)
    np.testing.assert_array_equal(out, expected)
    assert (out[[1, 3]] < 0).any() != clip  # the data has negative differences to clip


def test_partition_is_a_stable_partition_of_the_rows():
    rng = np.random.default_rng(6)
    n, m = 70000, 4  # more rows than one routing chunk
    codes = rng.integers(0, 10, size=(m, n)).astype(np.uint8)
    codes[rng.random((m, n)) < 0.1] = MISSING_BIN
    rows = rng.permutation(n).astype(np.int32).reshape(1, -1)
    labels = rng.normal(size=(1, n))
    start, end = np.array([0, 40000, 50000]), np.array([30000, 50000, 70000])
    feature, cut = np.array([0, 3, 1]), np.array([4, 0, 9])
    missing_left = np.array([1, 0, 1], dtype=np.uint8)
    before = codes.copy(), rows.copy(), labels.copy()
    branch_rows = partition_hist_segments(
        codes, rows, labels, start, end, feature, cut, 1 - missing_left.astype(np.int64),
        np.full(3, -1), np.zeros(0, np.int32), np.array([0, 2, 4, 6]), np.empty_like(rows),
        np.empty_like(labels))
    n_left = branch_rows[0::2]
    expected_rows, expected_labels = rows.copy(), labels.copy()
    for s in range(3):
        pos = np.arange(start[s], end[s])
        b = codes[feature[s], before[1][0, pos]]  # codes by row id
        left = np.where(b == MISSING_BIN, missing_left[s] == 1, b <= cut[s])
        order = np.concatenate([pos[left], pos[~left]])
        assert n_left[s] == left.sum()
        expected_rows[0, pos] = before[1][0, order]
        expected_labels[0, pos] = before[2][0, order]
    untouched = np.r_[30000:40000]
    expected_rows[0, untouched] = before[1][0, untouched]
    np.testing.assert_array_equal(codes, before[0])  # the codes never move
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(labels, expected_labels)


@pytest.mark.parametrize("regression", [False, True])
def test_childrens_statistics_read_through_the_routing(regression):
    """Routed statistics (no row moved) against a numpy sum over each child's rows; for classes,
    the same from the parents' histograms."""
    from fasttree._dtypes import CRITERION_GINI, CRITERION_SQUARED_ERROR
    from fasttree.hist_splitter import _children_class_weights
    from fasttree.kernels.histogram import routed_child_stats

    rng = np.random.default_rng(9)
    n, m = 3000, 3
    codes = rng.integers(0, 8, size=(m, n)).astype(np.uint8)
    codes[rng.random((m, n)) < 0.1] = MISSING_BIN
    rows = rng.permutation(n).astype(np.int32).reshape(1, -1)
    labels = (rng.normal(size=(1, n)) if regression
              else rng.integers(0, 3, size=(1, n)).astype(np.uint8))
    w = rng.integers(1, 4, n).astype(float)
    start, end = np.array([0, 1000]), np.array([1000, 3000])
    feature, cut = np.array([2, 0]), np.array([3, 6])
    missing_left = np.array([0, 1], dtype=np.uint8)
    criterion = CRITERION_SQUARED_ERROR if regression else CRITERION_GINI
    stats = routed_child_stats(codes, rows, labels, w, start, end, feature, cut,
                               1 - missing_left.astype(np.int64), np.full(2, -1),
                               np.zeros(0, np.int32), 3, criterion)
    for s in range(2):
        ids = rows[0, start[s]:end[s]]
        ys = labels[0, start[s]:end[s]]
        b = codes[feature[s], ids]
        left = np.where(b == MISSING_BIN, missing_left[s] == 1, b <= cut[s])
        for child, side in ((2 * s, left), (2 * s + 1, ~left)):
            if regression:
                expected = [w[ids][side].sum(), (w[ids] * ys)[side].sum(),
                            (w[ids] * ys ** 2)[side].sum()]
            else:
                expected = np.bincount(ys[side], w[ids][side], 3)
            np.testing.assert_allclose(stats[child], expected)
    if not regression:
        hist = build_histograms(codes, rows, labels, w, start, end, 4, criterion)
        bins = np.arange(HIST_BINS)
        bin_branch = (bins[None, :] > cut[:, None]).astype(np.int64)
        bin_branch[:, MISSING_BIN] = 1 - missing_left
        parents = [(hist, j) for j in range(hist.shape[0])]  # (group, index) each
        from_hist = _children_class_weights(parents, feature, bin_branch, 3)
        np.testing.assert_array_equal(from_hist, stats)


# --- refusals ---------------------------------------------------------------------------------
def test_hist_refuses_what_it_does_not_do():
    rng, X, y = few_values(0)
    Xc = X.copy()
    Xc[:, 0] = np.arange(len(y)) % 300  # more categories than bins
    with pytest.raises(ValueError, match="at most 255 categories"):
        fasttree.DecisionTreeClassifier(splitter="hist", categorical_features=[0]).fit(Xc, y)
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match="sparse"):
        fasttree.DecisionTreeClassifier(splitter="hist").fit(sparse.csr_matrix(X), y)
    with pytest.raises(ValueError, match="monotonic_cst"):
        fasttree.DecisionTreeClassifier(splitter="hist", monotonic_cst=[1, 0, 0, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="poisson"):
        fasttree.DecisionTreeRegressor(splitter="hist", criterion="poisson").fit(X, y + 1.0)
    with pytest.raises(ValueError, match="y must be 1-D"):
        fasttree.DecisionTreeRegressor(splitter="hist").fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="C4.5"):
        fasttree.DecisionTreeClassifier(splitter="hist", missing="fractional").fit(X, y)
    for bad in (1, 256, 2.5, "10"):
        with pytest.raises(ValueError, match="'max_bins' parameter"):
            fasttree.DecisionTreeClassifier(splitter="hist", max_bins=bad).fit(X, y)
    with pytest.raises(ValueError, match="'binning' parameter"):
        fasttree.DecisionTreeClassifier(splitter="hist", binning="width").fit(X, y)
    with pytest.raises(ValueError, match="'binning' parameter"):
        fasttree.DecisionTreeRegressor(splitter="hist", binning="entropy").fit(X, y)


def test_entropy_binning_cuts_at_the_discretizers_cut_points():
    from fasttree.preprocessing import EntropyDiscretizer

    rng = np.random.default_rng(8)
    X = rng.normal(size=(5000, 3)).astype(np.float32)
    y = (X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(0, 0.5, 5000) > 0).astype(int)
    est = fasttree.DecisionTreeClassifier(splitter="hist", binning="entropy", max_bins=20,
                                          max_depth=6).fit(X, y)
    cuts = EntropyDiscretizer(max_bins=20).fit(X, y).cut_points_
    inner = est.tree_.feature >= 0
    assert inner.sum() > 5
    for f, t in zip(est.tree_.feature[inner], est.tree_.threshold[inner]):
        c = cuts[f].astype(np.float32).astype(np.float64)
        # the cut between the two bins, or the midpoint of two cuts around empty bins
        between = (c[:, None] / 2 + c[None, :] / 2).ravel()
        assert np.isin(t, np.concatenate([c, between]))
    reached = est.decision_path(X).sum(axis=0).A1
    np.testing.assert_array_equal(reached, est.tree_.n_node_samples)


def test_kway_partition_of_a_multiway_split():
    rng = np.random.default_rng(10)
    n = 40000
    codes = rng.integers(0, 5, size=(2, n)).astype(np.uint8)
    codes[1, rng.random(n) < 0.1] = MISSING_BIN
    rows = rng.permutation(n).astype(np.int32).reshape(1, -1)
    labels = rng.integers(0, 3, size=(1, n)).astype(np.uint8)
    category_map = np.array([2, 0, -2, 1, 0, 1], dtype=np.int32)  # code 2 absent: branch 1
    start, end = np.array([5000]), np.array([39000])
    before = rows.copy()
    branch_rows = partition_hist_segments(
        codes, rows, labels, start, end, np.array([1]), np.array([0]), np.array([2]),
        np.array([0]), category_map, np.array([0, 3]), np.empty_like(rows),
        np.empty_like(labels))
    pos = np.arange(5000, 39000)
    b = codes[1, before[0, pos]]
    mapped = np.where(category_map[np.minimum(b, 5)] >= 0, category_map[np.minimum(b, 5)],
                      -1 - category_map[np.minimum(b, 5)])
    branch = np.where(b == MISSING_BIN, 2, mapped)
    order = np.concatenate([pos[branch == k] for k in range(3)])
    np.testing.assert_array_equal(branch_rows, np.bincount(branch, minlength=3))
    np.testing.assert_array_equal(rows[0, pos], before[0, order])


@pytest.mark.parametrize("regression", [False, True])
def test_hist_leaves_the_callers_arrays_alone(regression):
    """The partition moves targets in place: it must move a copy, never the caller's ``y``."""
    rng, X, y = few_values(11, regression=regression)
    y = np.ascontiguousarray(y, dtype=np.float64 if regression else np.int64)
    X_before, y_before = X.copy(), y.copy()
    Est = fasttree.DecisionTreeRegressor if regression else fasttree.DecisionTreeClassifier
    first = Est(splitter="hist").fit(X, y)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(y, y_before)
    assert_same_tree(first.tree_, Est(splitter="hist").fit(X, y).tree_)


@pytest.mark.parametrize("pruning", ["cost_complexity", "reduced_error", "error_based"])
def test_pruning_and_export_read_a_binned_tree_like_an_exact_one(pruning):
    """Thresholds in original units: pruning, prediction and export see the same tree."""
    rng, X, y = few_values(15, missing=0.05)
    params = dict(pruning=pruning, ccp_alpha=0.002, random_state=0)
    exact = fasttree.DecisionTreeClassifier(**params).fit(X, y)
    hist = fasttree.DecisionTreeClassifier(splitter="hist", **params).fit(X, y)
    assert_same_tree(exact.tree_, hist.tree_)
    np.testing.assert_array_equal(exact.predict_proba(X), hist.predict_proba(X))
    assert fasttree.export_text(exact) == fasttree.export_text(hist)
