"""fasttree.preprocessing: entropy (MDL), equal-frequency and equal-width discretizers.

The entropy kernel is checked against a plain recursive reference written here from the
definitions (Fayyad and Irani 1993), the MDL decision against hand-computed examples, and all
three transformers against Orange's cut points and labels (tests/orange_discretize_reference.json,
written by tests/orange_discretize_reference.py with Orange installed; Orange is not needed to
run these tests).
"""

import json
import math
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from fasttree.exceptions import NotFittedError
from fasttree.kernels import entropy_cut_level, gather_targets, presort_features, xlog2x_table
from fasttree.preprocessing import (
    EntropyDiscretizer,
    EqualFrequencyDiscretizer,
    EqualWidthDiscretizer,
    interval_labels,
)

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "orange_discretize_reference.json"
ALL = [EntropyDiscretizer, EqualFrequencyDiscretizer, EqualWidthDiscretizer]
SAME_VALUE = np.float32(1e-7)  # sorted float32 values this close are one value (the trees' rule)


# -- a plain reference: Fayyad and Irani's recursion, written from the definitions ----------------

def _entropy(counts):
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def _reference_tree(x, y, w, n_classes, *, stop="mdl", min_gain=0.0, force=False):
    """Every cut of the recursion as (threshold, parent index, N * gain), depth first."""
    x = np.asarray(x, dtype=np.float32)
    keep = ~np.isnan(x) & (w > 0)
    x, y, w = x[keep], y[keep], w[keep]
    order = np.argsort(x, kind="stable")
    x, y, w = x[order], y[order], w[order]
    cuts = []

    def counts(lo, hi):
        return np.bincount(y[lo:hi], weights=w[lo:hi], minlength=n_classes)

    def recurse(lo, hi, parent, top):
        total = counts(lo, hi)
        n = total.sum()
        best = None
        for p in range(lo, hi - 1):
            if x[p + 1] <= x[p] + SAME_VALUE:  # no cut between (nearly) equal values
                continue
            left, right = counts(lo, p + 1), counts(p + 1, hi)
            if left.sum() <= 0 or right.sum() <= 0:
                continue
            e = (left.sum() * _entropy(left) + right.sum() * _entropy(right)) / n
            if best is None or e < best[0] - 1e-12:  # the first of (nearly) equal candidates
                best = (e, p, left, right)
        if best is None:
            return
        e, p, left, right = best
        gain = _entropy(total) - e
        k, k1, k2 = ((c > 0).sum() for c in (total, left, right))
        delta = math.log2(3.0 ** k - 2) - (k * _entropy(total) - k1 * _entropy(left)
                                            - k2 * _entropy(right))
        accept = gain > min_gain
        if stop == "mdl":
            accept = accept and n > 1 and gain > math.log2(n - 1) / n + delta / n
        if not accept and not (force and top):
            return
        cuts.append((float(x[p]) / 2 + float(x[p + 1]) / 2, parent, n * gain))
        if accept:
            me = len(cuts) - 1
            recurse(lo, p + 1, me, False)
            recurse(p + 1, hi, me, False)

    recurse(0, len(x), -1, True)
    return cuts


def reference_cuts(x, y, w, n_classes, *, max_bins=None, **kw):
    cuts = _reference_tree(x, y, w, n_classes, **kw)
    if max_bins is None:
        return np.sort([c[0] for c in cuts])
    chosen, frontier = [], [i for i, c in enumerate(cuts) if c[1] == -1]
    while frontier and len(chosen) < max_bins - 1:  # best first
        i = max(frontier, key=lambda i: (cuts[i][2], -i))
        frontier.remove(i)
        chosen.append(i)
        frontier += [j for j, c in enumerate(cuts) if c[1] == i]
    return np.sort([cuts[i][0] for i in chosen])


def random_problem(seed, n=240, n_features=4, n_classes=3, nan_fraction=0.1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = np.empty((n, n_features))
    X[:, 0] = rng.integers(0, 6, n) + y                     # few distinct values: many ties
    X[:, 1] = np.round(rng.normal(y, 1.0, n), 1)            # ties and signal
    X[:, 2] = rng.normal(0.0, 1.0, n)                        # noise
    X[:, 3:] = rng.normal(y[:, None] * 0.8, 1.0, (n, n_features - 3))
    X[rng.random(X.shape) < nan_fraction] = np.nan
    return X, y


# -- the kernel and the recursion against the reference -------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("params", [{}, {"force": True}, {"stop": "gain", "min_gain": 0.05},
                                    {"max_bins": 3}, {"stop": "gain", "min_gain": 0.02,
                                                      "max_bins": 4}])
def test_entropy_cuts_match_reference_recursion(seed, params):
    X, y = random_problem(seed, n_classes=2 + seed % 3)
    fitted = EntropyDiscretizer(**params).fit(X, y)
    n_classes = len(np.unique(y))
    ones = np.ones(len(y))
    for j in range(X.shape[1]):
        expected = reference_cuts(X[:, j], y, ones, n_classes, **params)
        np.testing.assert_allclose(fitted.cut_points_[j], expected, rtol=0, atol=0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("params", [{}, {"stop": "gain", "min_gain": 0.05}])
def test_weighted_entropy_cuts_match_reference_recursion(seed, params):
    X, y = random_problem(100 + seed, n=200)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 3.0, len(y))
    w[rng.random(len(y)) < 0.1] = 0.0  # weightless rows take no part
    fitted = EntropyDiscretizer(**params).fit(X, y, sample_weight=w)
    for j in range(X.shape[1]):
        expected = reference_cuts(X[:, j], y, w, 3, **params)
        np.testing.assert_allclose(fitted.cut_points_[j], expected, rtol=0, atol=0)


def test_many_classes_match_reference_recursion():
    """More than 256 classes: the uint16 label layout."""
    rng = np.random.default_rng(4)
    y = rng.permutation(np.arange(400) % 300)  # 300 classes
    X = np.column_stack([np.round(y / 7 + rng.normal(0, 3, 400)), rng.normal(y, 40.0)])
    fitted = EntropyDiscretizer(stop="gain", min_gain=0.2).fit(X, y)
    n_classes = len(np.unique(y))
    assert n_classes > 256
    for j in range(2):
        codes = np.unique(y, return_inverse=True)[1]
        expected = reference_cuts(X[:, j], codes, np.ones(len(y)), n_classes, stop="gain",
                                  min_gain=0.2)
        assert len(expected) > 5
        np.testing.assert_array_equal(fitted.cut_points_[j], expected)


def test_all_columns_passed_through_still_checks_y():
    X, y = random_problem(0, n=40)
    est = EntropyDiscretizer(categorical_features=[0, 1, 2, 3]).fit(X, y)
    assert est.cut_points_ == [None] * 4 and len(est.classes_) == 3
    np.testing.assert_array_equal(est.transform(X), X)
    with pytest.raises(ValueError, match="requires y"):
        EntropyDiscretizer(categorical_features=[0, 1, 2, 3]).fit(X)


def test_integer_weights_equal_repeated_rows():
    X, y = random_problem(7, n=150, nan_fraction=0.05)
    w = np.random.default_rng(1).integers(0, 4, len(y))
    weighted = EntropyDiscretizer().fit(X, y, sample_weight=w)
    repeated = EntropyDiscretizer().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert any(len(c) for c in weighted.cut_points_)
    for a, b in zip(weighted.cut_points_, repeated.cut_points_):
        np.testing.assert_array_equal(a, b)


def test_kernel_one_level_by_hand():
    """Two columns, one segment each: gains, MDL bounds and counts computed by hand."""
    x0 = np.arange(1.0, 9.0)                # classes 0 0 0 0 1 1 1 1: a clean cut at 4.5
    x1 = np.array([6.0, 5.0, 1.0, 2.0, 3.0, 4.0, 7.0, 8.0])  # sorted classes 0 0 0 0 1 1 1 1 too
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=np.uint8)
    X = np.ascontiguousarray(np.column_stack([x0, x1]), dtype=np.float32)
    sorted_x, sorted_idx = presort_features(X)
    sorted_y = gather_targets(sorted_idx, y)
    counts = np.array([[4.0, 4.0], [2.0, 2.0]])
    out = entropy_cut_level(sorted_x, sorted_y, np.empty((0, 0)), np.array([0, 1]),
                            np.array([0, 0]), np.array([8, 4]), counts, xlog2x_table(8))
    cut_pos, threshold, gain, mdl, left, right = out
    # column 0: Gain = 1 bit; k = 2, k1 = k2 = 1, Ent(S) = 1: Delta = log2(7) - 2, N = 8
    assert cut_pos[0] == 3 and threshold[0] == 4.5
    assert gain[0] == pytest.approx(1.0, abs=1e-15)
    assert mdl[0] == pytest.approx((math.log2(7) + math.log2(7) - 2) / 8, abs=1e-14)
    np.testing.assert_array_equal(left[0], [4, 0])
    np.testing.assert_array_equal(right[0], [0, 4])
    # column 1, first 4 positions only (values 1, 2, 3, 4 -> rows 2, 3, 4, 5: classes 0 0 1 1)
    assert cut_pos[1] == 1 and threshold[1] == 2.5
    np.testing.assert_array_equal(left[1], [2, 0])
    assert gain[1] == pytest.approx(1.0, abs=1e-15)
    assert mdl[1] == pytest.approx((math.log2(3) + math.log2(7) - 2) / 4, abs=1e-14)


def _h(p):
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


H_QUARTER = _h(0.25)


def test_mdl_refuses_a_weak_cut_computed_by_hand():
    """x = 1..6, y = 0 0 1 0 1 1.  Best cut 2.5 ([0 0] | [1 0 1 1]), tied with 4.5 (the lower
    wins): Gain = 1 - 4/6 H(1/4) = 0.459; Delta = log2 7 - (2 - 2 H(1/4)) = 2.430, so MDL asks
    for (log2 5 + Delta) / 6 = 0.792 > Gain: no cut."""
    X = np.arange(1.0, 7.0).reshape(-1, 1)
    y = np.array([0, 0, 1, 0, 1, 1])
    gain = 1 - 4 / 6 * _h(0.25)
    bound = (math.log2(5) + math.log2(7) - (2 - 2 * _h(0.25))) / 6
    assert gain == pytest.approx(0.4591, abs=1e-4) and bound == pytest.approx(0.7920, abs=1e-4)

    sorted_x, sorted_idx = presort_features(X.astype(np.float32))
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))
    out = entropy_cut_level(sorted_x, sorted_y, np.empty((0, 0)), np.array([0]), np.array([0]),
                            np.array([6]), np.array([[3.0, 3.0]]), xlog2x_table(6))
    assert out[1][0] == 2.5
    assert out[2][0] == pytest.approx(gain, abs=1e-14)
    assert out[3][0] == pytest.approx(bound, abs=1e-14)

    assert EntropyDiscretizer().fit(X, y).cut_points_[0].size == 0
    np.testing.assert_array_equal(EntropyDiscretizer(force=True).fit(X, y).cut_points_[0], [2.5])
    # stop="gain": 2.5; then [1 0 1 1] at 4.5 (gain H(1/4) - 1/2 > 0); then [1 0] at 3.5
    np.testing.assert_array_equal(EntropyDiscretizer(stop="gain").fit(X, y).cut_points_[0],
                                  [2.5, 3.5, 4.5])
    # min_gain 0.4 refuses 4.5 (gain 0.311), so [1 0] is never reached
    assert H_QUARTER - 0.5 == pytest.approx(0.3113, abs=1e-4)
    np.testing.assert_array_equal(
        EntropyDiscretizer(stop="gain", min_gain=0.4).fit(X, y).cut_points_[0], [2.5])
    np.testing.assert_array_equal(
        EntropyDiscretizer(stop="gain", min_gain=0.3).fit(X, y).cut_points_[0], [2.5, 3.5, 4.5])
    np.testing.assert_array_equal(
        EntropyDiscretizer(stop="gain", max_bins=2).fit(X, y).cut_points_[0], [2.5])


def test_max_bins_keeps_the_best_cuts_first():
    X, y = random_problem(3, n=600, n_features=4, n_classes=3, nan_fraction=0.0)
    full = EntropyDiscretizer().fit(X, y)
    assert max(len(c) for c in full.cut_points_) >= 3
    for m in (2, 3):
        limited = EntropyDiscretizer(max_bins=m).fit(X, y)
        for a, b in zip(limited.cut_points_, full.cut_points_):
            assert len(a) == min(m - 1, len(b)) and np.isin(a, b).all()
    big = EntropyDiscretizer(max_bins=100).fit(X, y)
    for a, b in zip(big.cut_points_, full.cut_points_):
        np.testing.assert_array_equal(a, b)


def test_nan_ignored_in_cuts_and_kept_in_output():
    X, y = random_problem(11, n=300, nan_fraction=0.0)
    Xn = X.copy()
    extra = np.full((60, X.shape[1]), np.nan)
    yn = np.concatenate([y, np.random.default_rng(0).integers(0, 3, 60)])
    Xn = np.vstack([Xn, extra])
    for cls in ALL:
        a = cls().fit(X, y)
        b = cls().fit(Xn, yn) if cls is EntropyDiscretizer else cls().fit(Xn)
        for ca, cb in zip(a.cut_points_, b.cut_points_):
            np.testing.assert_array_equal(ca, cb)
        out = b.transform(Xn)
        assert np.isnan(out[-60:]).all() and not np.isnan(out[:-60]).any()


def test_all_missing_and_constant_columns_get_one_bin():
    X = np.column_stack([np.full(20, np.nan), np.full(20, 3.0), np.arange(20.0)])
    y = np.arange(20) >= 10
    for est in (EntropyDiscretizer(force=True), EqualFrequencyDiscretizer(),
                EqualWidthDiscretizer()):
        est.fit(X, y)
        assert est.cut_points_[0].size == 0 and est.cut_points_[1].size == 0
        assert est.labels_[1] == ["single_value"]
        out = est.transform(X)
        assert np.isnan(out[:, 0]).all() and (out[:, 1] == 0).all()


# -- Orange ---------------------------------------------------------------------------------------

def _orange_cases():
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for ds in fixture["datasets"]:
        for result in ds["results"]:
            yield pytest.param(ds, result, id=f"{ds['name']}-{result['method']}-"
                               f"{'-'.join(f'{k}{v}' for k, v in result['params'].items())}")


def _make(method, params):
    if method == "EntropyMDL":
        return EntropyDiscretizer(force=params["force"])
    if method == "EqualFreq":
        return EqualFrequencyDiscretizer(n_bins=params["n"])
    return EqualWidthDiscretizer(n_bins=params["n"])


@pytest.mark.parametrize("dataset, result", list(_orange_cases()))
def test_same_cut_points_and_labels_as_orange(dataset, result):
    X = np.array([[np.nan if v is None else v for v in row] for row in dataset["X"]])
    y = np.array(dataset["y"])
    est = _make(result["method"], result["params"]).fit(X, y)
    for j, expected in enumerate(result["columns"]):
        np.testing.assert_allclose(est.cut_points_[j], expected["points"], rtol=1e-12, atol=0,
                                   err_msg=f"column {dataset['columns'][j]}")
        assert est.labels_[j] == expected["labels"]


def test_same_interval_labels_as_orange():
    cases = json.loads(FIXTURE.read_text(encoding="utf-8"))["labels"]
    assert len(cases) >= 5
    for case in cases:
        assert interval_labels(case["points"]) == case["labels"]


def test_orange_fixture_covers_every_method():
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    methods = {r["method"] for ds in fixture["datasets"] for r in ds["results"]}
    assert methods == {"EntropyMDL", "EqualFreq", "EqualWidth"}
    assert sum(len(c["points"]) for ds in fixture["datasets"] for r in ds["results"]
               for c in r["columns"]) > 100


# -- equal frequency and equal width --------------------------------------------------------------

def test_equal_width_edges_and_side_convention():
    X = np.array([[0.0], [2.0], [4.0], [8.0], [1.999], [-5.0], [20.0]])
    est = EqualWidthDiscretizer(n_bins=4).fit(X[:4])
    np.testing.assert_array_equal(est.cut_points_[0], [2.0, 4.0, 6.0])
    # bin i: cut[i-1] <= x < cut[i]; a value on a cut goes up; out of range: first / last bin
    np.testing.assert_array_equal(est.transform(X).ravel(), [0, 1, 2, 3, 0, 0, 3])
    assert est.labels_[0] == ["< 2", "2 - 4", "4 - 6", "≥ 6"]


def test_equal_frequency_balances_counts():
    x = np.random.default_rng(0).normal(size=(1000, 1))
    for n_bins in (2, 3, 5, 10):
        est = EqualFrequencyDiscretizer(n_bins=n_bins).fit(x)
        counts = np.bincount(est.transform(x).ravel().astype(int))
        assert len(counts) == n_bins
        assert counts.max() - counts.min() <= 1
    # fewer distinct values than bins: a cut between every two
    est = EqualFrequencyDiscretizer(n_bins=5).fit(np.array([[1.0], [1.0], [2.0], [4.0]]))
    np.testing.assert_array_equal(est.cut_points_[0], [1.5, 3.0])


def test_interval_labels_fall_back_to_fixed_decimals():
    assert interval_labels([]) == ["single_value"]
    assert interval_labels([1.5]) == ["< 1.5", "≥ 1.5"]
    assert interval_labels([-2.0, 1.5e10]) == ["< -2", "-2 - 1.5e+10", "≥ 1.5e+10"]
    assert interval_labels([-1.25, -1.2]) == ["< -1.25", "-1.25 - -1.2", "≥ -1.2"]
    # '%g' would print 1.00000 twice: the fewest decimals that tell the points apart
    assert interval_labels([1.0000001, 1.0000002]) == [
        "< 1.0000001", "1.0000001 - 1.0000002", "≥ 1.0000002"]


# -- the transformer API --------------------------------------------------------------------------

@pytest.fixture
def problem():
    return random_problem(5, n=300, n_features=4, nan_fraction=0.05)


@pytest.mark.parametrize("cls", ALL)
def test_transform_is_bin_index(cls, problem):
    X, y = problem
    est = cls().fit(X, y)
    out = est.transform(X)
    assert out.dtype == np.float64 and out.shape == X.shape
    for j, cuts in enumerate(est.cut_points_):
        known = ~np.isnan(X[:, j])
        x = X[known, j].astype(np.float32).astype(np.float64)
        b = out[known, j].astype(int)
        lower = np.concatenate([[-np.inf], cuts])[b]
        upper = np.concatenate([cuts, [np.inf]])[b]
        assert ((lower <= x) & (x < upper)).all()
        assert np.isnan(out[~known, j]).all()
    np.testing.assert_array_equal(est.fit_transform(X, y), out)
    assert est.n_features_in_ == 4
    np.testing.assert_array_equal(est.n_bins_, [len(c) + 1 for c in est.cut_points_])
    assert [est.bin_labels(j) for j in range(4)] == est.labels_


@pytest.mark.parametrize("spec", [[1, 3], np.array([False, True, False, True]), [-3, -1]])
def test_categorical_features_pass_through(spec, problem):
    X, y = problem
    est = EqualWidthDiscretizer(categorical_features=spec).fit(X, y)
    out = est.transform(X)
    np.testing.assert_array_equal(out[:, [1, 3]], X[:, [1, 3]])
    assert est.cut_points_[1] is None and est.labels_[3] is None and est.n_bins_[1] == 0
    np.testing.assert_array_equal(out[:, 0], EqualWidthDiscretizer().fit(X).transform(X)[:, 0])


def test_dataframe_names_and_pandas_output(problem):
    pd = pytest.importorskip("pandas")
    X, y = problem
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"], index=np.arange(100, 400))
    est = EntropyDiscretizer(categorical_features=["d"]).fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b", "c", "d"])
    np.testing.assert_array_equal(est.get_feature_names_out(), ["a", "b", "c", "d"])
    plain = est.transform(df)
    est.set_output(transform="pandas")
    out = est.transform(df)
    assert list(out.columns) == ["a", "b", "c", "d"]
    assert (out.index == df.index).all()
    for j, name in enumerate("abc"):
        col = out[name]
        assert isinstance(col.dtype, pd.CategoricalDtype) and col.cat.ordered
        assert list(col.cat.categories) == est.labels_[j]
        codes = col.cat.codes.to_numpy().astype(float)
        codes[codes < 0] = np.nan
        np.testing.assert_array_equal(codes, plain[:, j])
    np.testing.assert_array_equal(out["d"].to_numpy(), X[:, 3])
    with pytest.raises(ValueError, match="feature names"):
        est.transform(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="input_features"):
        est.get_feature_names_out(["p", "q", "r", "s"])
    assert list(EqualWidthDiscretizer().fit(X).get_feature_names_out()) == [
        "x0", "x1", "x2", "x3"]


def test_pipeline_clone_and_global_output(problem):
    pytest.importorskip("pandas")
    from sklearn import config_context
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = problem
    X = np.nan_to_num(X)
    pipe = Pipeline([("bins", EntropyDiscretizer(max_bins=4)),
                     ("onehot", OneHotEncoder(handle_unknown="ignore")),
                     ("clf", LogisticRegression(max_iter=500))])
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.5  # three classes: well above chance
    pipe.set_params(bins__max_bins=3).fit(X, y)
    assert max(len(c) for c in pipe.named_steps["bins"].cut_points_) <= 2

    est = EqualFrequencyDiscretizer(n_bins=5).set_output(transform="pandas")
    copy = clone(est)
    assert copy.get_params() == {"n_bins": 5, "categorical_features": None}
    assert type(copy.fit(X).transform(X)).__name__ == "DataFrame"
    with config_context(transform_output="pandas"):
        assert type(EqualWidthDiscretizer().fit(X).transform(X)).__name__ == "DataFrame"
    out = Pipeline([("bins", EqualWidthDiscretizer())]).set_output(transform="pandas") \
        .fit_transform(X)
    assert type(out).__name__ == "DataFrame"
    fitted = EntropyDiscretizer().fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.transform(X), fitted.transform(X))


def test_sklearn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (EntropyDiscretizer(), EqualFrequencyDiscretizer(), EqualWidthDiscretizer()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "does not inherit from sklearn's BaseEstimator"
            results = check_estimator(est, on_fail=None)
        failed = [r["check_name"] for r in results if r["status"] == "failed"]
        assert not failed, (type(est).__name__, failed)


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_raises_clear_errors(cls, problem):
    X, y = problem
    with pytest.raises(NotFittedError):
        cls().transform(X)
    from sklearn.exceptions import NotFittedError as SkNotFitted
    with pytest.raises(SkNotFitted):
        cls().transform(X)
    est = cls().fit(X, y)
    with pytest.raises(ValueError, match="3 features, but .* expecting 4"):
        est.transform(X[:, :3])
    with pytest.raises(TypeError, match="numbers|numeric"):
        cls().fit(np.array([["a", "b"], ["c", "d"]]), [0, 1])
    with pytest.raises(ValueError, match="infinity"):
        cls().fit(np.array([[1.0], [np.inf]]), [0, 1])
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        cls().fit(np.arange(4.0), [0, 1, 0, 1])
    with pytest.raises(TypeError, match="sparse"):
        import scipy.sparse
        cls().fit(scipy.sparse.csr_matrix(np.eye(3)), [0, 1, 0])
    with pytest.raises(ValueError, match="out of range"):
        cls(categorical_features=[7]).fit(X, y)
    with pytest.raises(ValueError, match="mask of length"):
        cls(categorical_features=[True, False]).fit(X, y)


def test_bad_parameters():
    X, y = random_problem(0, n=50)
    for bad in (1, 0, -3):
        with pytest.raises(ValueError, match="n_bins must be >= 2"):
            EqualWidthDiscretizer(n_bins=bad).fit(X)
        with pytest.raises(ValueError, match="n_bins must be >= 2"):
            EqualFrequencyDiscretizer(n_bins=bad).fit(X)
    with pytest.raises(TypeError, match="n_bins must be an integer"):
        EqualWidthDiscretizer(n_bins=2.5).fit(X)
    with pytest.raises(ValueError, match="max_bins must be >= 2"):
        EntropyDiscretizer(max_bins=1).fit(X, y)
    with pytest.raises(ValueError, match="stop must be"):
        EntropyDiscretizer(stop="chi2").fit(X, y)
    with pytest.raises(ValueError, match="min_gain"):
        EntropyDiscretizer(min_gain=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="requires y"):
        EntropyDiscretizer().fit(X)
    with pytest.raises(ValueError, match="continuous"):
        EntropyDiscretizer().fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="inconsistent"):
        EntropyDiscretizer().fit(X, y[:-1])
    with pytest.raises(TypeError, match="sample_weight"):
        EqualWidthDiscretizer().fit_transform(X, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="negative"):
        EntropyDiscretizer().fit(X, y, sample_weight=-np.ones(len(y)))
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="column 'c' has dtype"):
        EqualWidthDiscretizer().fit(pd.DataFrame({"a": [1.0, 2.0], "c": ["x", "y"]}))


def test_string_class_labels_and_classes_():
    X, y = random_problem(2, n=200)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    a = EntropyDiscretizer().fit(X, names)
    b = EntropyDiscretizer().fit(X, y)
    assert a.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    assert b.classes_.tolist() == [0, 1, 2]
    for ca, cb in zip(a.cut_points_, b.cut_points_):
        np.testing.assert_array_equal(ca, cb)


def test_import_and_use_without_sklearn():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "sklearn" or name.startswith("sklearn.") or name == "pandas":
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import numpy as np
        from fasttree.preprocessing import EntropyDiscretizer, EqualWidthDiscretizer
        X = np.arange(20.0).reshape(-1, 2)
        est = EntropyDiscretizer().fit(X, np.arange(10) >= 5)
        edges = EqualWidthDiscretizer().fit(X).cut_points_[0].tolist()
        print(est.transform(X)[:, 0].tolist(), edges)
        try:
            EqualWidthDiscretizer().transform(X)
        except Exception as exc:
            print(type(exc).__name__)
        assert "sklearn" not in sys.modules
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=HERE.parent, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"{[0.0] * 5 + [1.0] * 5} [4.5, 9.0, 13.5]",
                                       "NotFittedError"]
