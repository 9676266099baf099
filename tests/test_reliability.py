"""Deployment conditions (issue 11): fasttree starts and works where real deployments run it.

Each test runs a fresh interpreter, so that the condition holds from ``import fasttree`` on and a
crash is a failed test rather than a lost test run.
"""

import subprocess
import sys
import textwrap


def run_python(code, timeout=600):
    """Run ``code`` in a fresh interpreter; returns the completed process."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)


def test_import_and_kernels_work_without_a_writable_cache():
    """No cache location at all (numba's locators all refuse, as in a read-only container
    without a home): import works, one RuntimeWarning says the kernels compile in memory."""
    proc = run_python("""
        import warnings
        import numba.core.caching as caching
        caching.CacheImpl._locator_classes = []   # what numba finds in a read-only deployment
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import fasttree
            from fasttree.kernels import xlog2x_table
        messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
        assert len(messages) == 1 and "no writable cache location" in messages[0], messages
        assert xlog2x_table(4)[4] == 8.0
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# -- public kernels on hostile trees -----------------------------------------------------------
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import fasttree  # noqa: E402
from fasttree import kernels  # noqa: E402
from fasttree.pruning import build_pruned_tree  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return fasttree.DecisionTreeClassifier(max_depth=3).fit(X, y), X


def _routing(tree, **changes):
    names = ["children_left", "children_right", "feature", "threshold", "split_kind",
             "missing_branch", "category_offset", "category_n_codes", "category_branch"]
    arrays = {n: a.copy() for n, a in zip(names, tree._routing())}
    for name, edit in changes.items():
        edit(arrays[name])
    return [arrays[n] for n in names]


def _set(index, value):
    def edit(a):
        a[index] = value
    return edit


HOSTILE = {
    "child out of range": {"children_left": _set(0, 10**6), "children_right": _set(0, 10**6 + 1)},
    "cycle": {"children_left": _set(1, 0), "children_right": _set(1, 1)},
    "feature out of range": {"feature": _set(0, 7)},
    "negative feature": {"feature": _set(0, -5)},
    "missing branch": {"missing_branch": _set(0, 5)},
    "unknown kind": {"split_kind": _set(0, 9)},
    "three children of a threshold": {"children_right": _set(0, 3)},
}


def _csr(X):
    """``(data, indices, indptr)`` of X in the dtypes the CSR walking kernels take."""
    Xs = pytest.importorskip("scipy.sparse").csr_matrix(X)
    return Xs.data.astype(np.float32), Xs.indices.astype(np.int32), Xs.indptr.astype(np.int64)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_walking_kernels_refuse_a_broken_tree(fitted, case):
    est, X = fitted
    routing = _routing(est.tree_, **HOSTILE[case])
    X = np.ascontiguousarray(X)
    csr = _csr(X)
    node_count = routing[0].shape[0]
    calls = [
        lambda: kernels.apply_tree(X, *routing),
        lambda: kernels.decision_paths(X, *routing, 50),
        lambda: kernels.predict_fractional(X, *routing, np.ones(node_count),
                                           np.ones((node_count, 2))),
    ]
    if case != "feature out of range":  # a CSR row has no width: a column past it reads 0
        calls += [lambda: kernels.apply_tree_csr(*csr, *routing),
                  lambda: kernels.decision_paths_csr(*csr, *routing, 50)]
    for call in calls:
        with pytest.raises(ValueError):
            call()


def test_walking_kernels_accept_the_fitted_tree_and_check_depth(fitted):
    est, X = fitted
    leaves = kernels.apply_tree(np.ascontiguousarray(X), *est.tree_._routing())
    np.testing.assert_array_equal(leaves, est.apply(X))
    with pytest.raises(ValueError, match="max_depth"):
        kernels.decision_paths(np.ascontiguousarray(X), *est.tree_._routing(), 1)
    with pytest.raises(ValueError, match="feature is out of range"):
        kernels.apply_tree(np.ascontiguousarray(X[:, :1]), *est.tree_._routing())


def test_depth_check_counts_the_longest_walk_into_a_shared_child():
    """Node 11 is a child of node 7 (depth 4) and of node 9 (depth 2): a walk through node 7
    visits seven nodes, so a six-node path table must be refused, not overrun."""
    n = 15
    left = np.full(n, -1, dtype=np.int64)
    for parent, first_child in {0: 1, 1: 3, 3: 5, 5: 7, 2: 9, 7: 11, 9: 11, 11: 13}.items():
        left[parent] = first_child
    right = np.where(left == -1, -1, left + 1)
    feature, threshold = np.zeros(n, dtype=np.int64), np.full(n, 10.0)  # every row goes left
    routing = (left, right, feature, threshold,
               *kernels.numeric_split_arrays(np.zeros(n, dtype=np.int32)))
    assert kernels.check_tree(1, *routing) == 6
    X = np.zeros((3, 1), dtype=np.float32)
    with pytest.raises(ValueError, match="max_depth"):
        kernels.decision_paths(X, *routing, 5)
    with pytest.raises(ValueError, match="max_depth"):
        kernels.decision_paths_csr(*_csr(X), *routing, 5)
    path, length = kernels.decision_paths(X, *routing, 6)
    np.testing.assert_array_equal(length, 7)
    np.testing.assert_array_equal(path, np.tile([0, 1, 3, 5, 7, 11, 13], (3, 1)))


def test_broken_csr_arrays_are_refused(fitted):
    est, X = fitted
    data = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="indptr"):
        kernels.apply_tree_csr(data, np.zeros(3, np.int32), np.array([0, 5], np.int64),
                               *est.tree_._routing())
    with pytest.raises(ValueError, match="negative column"):
        kernels.apply_tree_csr(data, np.array([0, -4, 1], np.int32),
                               np.array([0, 3], np.int64), *est.tree_._routing())


def test_build_pruned_tree_refuses_a_short_mask(fitted):
    est, _ = fitted
    with pytest.raises(ValueError, match="one entry per node"):
        build_pruned_tree(est.tree_, np.zeros(2, np.uint8))


# -- numerics ------------------------------------------------------------------------------------
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("exponent", [-600, -100, 100, 600])
def test_weights_scaled_by_a_power_of_two_grow_the_same_tree(task, exponent):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    w = rng.uniform(0.5, 2.0, 300)
    if task == "classification":
        y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
        Estimator = fasttree.DecisionTreeClassifier
    else:
        y = X[:, 0] + 0.5 * rng.normal(size=300)
        Estimator = fasttree.DecisionTreeRegressor
    base = Estimator(max_depth=6, min_weight_fraction_leaf=0.01).fit(X, y, w).tree_
    scaled = Estimator(max_depth=6, min_weight_fraction_leaf=0.01).fit(
        X, y, np.ldexp(w, exponent)).tree_
    for name in ("children_left", "feature", "threshold", "value", "impurity"):
        np.testing.assert_array_equal(getattr(scaled, name), getattr(base, name))
    np.testing.assert_array_equal(scaled.weighted_n_node_samples,
                                  np.ldexp(base.weighted_n_node_samples, exponent))


def test_huge_uniform_weights_grow_the_unweighted_tree():
    """1e200 squared overflows: before scaling, gini saw inf - inf and grew hundreds of nodes."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0.3).astype(int)
    plain = fasttree.DecisionTreeClassifier().fit(X, y)
    heavy = fasttree.DecisionTreeClassifier().fit(X, y, np.full(500, 1e200))
    assert heavy.tree_.node_count == plain.tree_.node_count == 3
    np.testing.assert_array_equal(heavy.tree_.threshold, plain.tree_.threshold)


def test_class_weight_zeroing_every_class_is_refused():
    X, y = np.arange(20.0)[:, None], np.arange(20) % 2
    with pytest.raises(ValueError, match="zero"):
        fasttree.DecisionTreeClassifier(class_weight={0: 0.0, 1: 0.0}).fit(X, y)


def test_n_jobs_accepts_numpy_integers():
    X, y = np.arange(40.0)[:, None], np.arange(40) % 3
    est = fasttree.DecisionTreeClassifier(n_jobs=np.int64(2)).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), y)
    with pytest.raises(ValueError, match="n_jobs"):
        fasttree.DecisionTreeClassifier(n_jobs=np.float64(2.0)).fit(X, y)


# -- renumbering rows at scale -------------------------------------------------------------------
RELABEL_CASES = {
    "entropy": ("classifier", dict(criterion="entropy", max_depth=8), {}),
    "weighted gini": ("classifier", dict(max_depth=8), {"weights": True}),
    "best-first": ("classifier", dict(max_leaf_nodes=40), {}),
    # random thresholds of numeric features alone grow depth first, without this layout
    "random thresholds": ("classifier", dict(splitter="random", random_state=0, max_depth=9,
                                             categorical_features=[5]), {}),
    "categorical, missing": ("classifier", dict(categorical_features=[5], max_depth=7,
                                                 missing="learn"), {"nan": True}),
    "squared error": ("regressor", dict(max_depth=8), {"weights": True}),
    "two outputs": ("regressor", dict(max_depth=6), {"outputs": 2}),
    "absolute error": ("regressor", dict(criterion="absolute_error", max_depth=6),
                       {"weights": True}),
    "absolute error, two outputs": ("regressor", dict(criterion="absolute_error", max_depth=6),
                                    {"outputs": 2}),
}


@pytest.mark.parametrize("case", list(RELABEL_CASES))
def test_renumbering_the_rows_leaves_the_tree_unchanged(case, monkeypatch):
    """Large fits renumber the rows once the nodes are small (ExactSplitter._relabel_rows):
    forced on 3000 rows here, every estimator path must grow the tree it grows without."""
    import fasttree
    import fasttree.splitter as splitter

    kind, params, data = RELABEL_CASES[case]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    X[:, 5] = rng.integers(0, 6, size=3000)
    target = X[:, 0] + np.sin(3 * X[:, 1]) + 0.5 * X[:, 5] + 0.3 * rng.normal(size=3000)
    if data.get("nan"):
        X[rng.random(3000) < 0.1, 2] = np.nan
    if kind == "classifier":
        y, Estimator = np.digitize(target, [-1, 0.5, 1.5]), fasttree.DecisionTreeClassifier
    else:
        y, Estimator = target, fasttree.DecisionTreeRegressor
        if data.get("outputs"):
            y = np.c_[target, X[:, 3] * X[:, 4]]
    weights = rng.random(3000) + 0.1 if data.get("weights") else None

    monkeypatch.setattr(splitter, "CACHED_ID_SPAN", 1 << 40)  # never renumber
    reference = Estimator(**params).fit(X, y, sample_weight=weights)
    calls = []
    relabel = splitter.relabel_rows
    monkeypatch.setattr(splitter, "relabel_rows", lambda *a: calls.append(1) or relabel(*a))
    monkeypatch.setattr(splitter, "CACHED_ID_SPAN", 1000)
    weights_before = None if weights is None else weights.copy()
    renumbered = Estimator(**params).fit(X, y, sample_weight=weights)
    assert calls, "the fit did not renumber its rows"
    for name in ("children_left", "children_right", "feature", "threshold", "value",
                 "weighted_n_node_samples", "impurity"):
        np.testing.assert_array_equal(getattr(renumbered.tree_, name),
                                      getattr(reference.tree_, name), err_msg=name)
    np.testing.assert_array_equal(renumbered.predict(X), reference.predict(X))
    if weights is not None:  # the caller's weights are not renumbered in place
        np.testing.assert_array_equal(weights, weights_before)


# -- pruning results -----------------------------------------------------------------------------
def _noisy(seed=3, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = ((X[:, 0] + rng.normal(0, 1.0, n)) > 0).astype(int)
    return X, y


def test_reduced_error_refuses_labels_it_cannot_match():
    from fasttree import pruning

    X, y = _noisy()
    est = fasttree.DecisionTreeClassifier(random_state=0).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="same type"):
        pruning.reduced_error(est, X[300:], y[300:].astype(str))
    with pytest.raises(ValueError, match="never seen"):
        pruning.reduced_error(est, X[300:], np.where(y[300:] == 1, 7, 0))
    kept = pruning.reduced_error(est, X[300:], y[300:])  # matching labels: a real pruning
    assert 1 < kept.tree_.node_count < est.tree_.node_count


@pytest.mark.parametrize("rule,kwargs,params", [
    ("cost_complexity", {"alpha": 0.01}, {"ccp_alpha": 0.01}),
    ("error_based", {"confidence": 0.1}, {"pruning": "error_based", "pruning_confidence": 0.1}),
    ("minimum_error", {}, {"pruning": "minimum_error"}),
    ("pessimistic", {}, {"pruning": "pessimistic"}),
])
def test_clone_of_a_pruning_result_refits_the_pruned_tree(rule, kwargs, params):
    from sklearn.base import clone

    from fasttree import pruning

    X, y = _noisy()
    est = fasttree.DecisionTreeClassifier().fit(X, y)
    pruned = getattr(pruning, rule)(est, **kwargs)
    assert {k: pruned.get_params()[k] for k in params} == params
    assert est.get_params()["pruning"] is None and est.ccp_alpha == 0.0  # input unchanged
    refit = clone(pruned).fit(X, y)
    assert refit.tree_.node_count == pruned.tree_.node_count < est.tree_.node_count
    np.testing.assert_array_equal(refit.tree_.threshold, pruned.tree_.threshold)


# -- fuzz ----------------------------------------------------------------------------------------
def test_fuzzed_estimators_raise_clearly_or_return_sound_trees():
    """tests/fuzz_estimators.py (hypothesis, 150 derandomized examples: NaN, infinities, -0.0,
    float32 extremes and denormals, colliding values, zero and extreme weights, random
    parameters) in a child process: a crash fails here instead of ending the test run."""
    from pathlib import Path

    script = Path(__file__).with_name("fuzz_estimators.py")
    proc = subprocess.run([sys.executable, str(script), "150"], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert proc.stdout.strip().endswith("ok")
