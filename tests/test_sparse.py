"""Sparse input: the sparse layout's kernels against naive twins (tests/reference.py) and the
dense kernels, trees grown through SparseSplitter bit-identical to the exact splitter's trees on
``X.toarray()``, and CSR prediction equal to dense prediction."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

from fasttree._dtypes import SPLIT_SUBSET, SPLIT_THRESHOLD  # noqa: E402
from fasttree.grower import GrowerParams, TreeGrower  # noqa: E402
from fasttree.kernels import (  # noqa: E402
    apply_tree,
    apply_tree_csr,
    build_sparse_layout,
    decision_paths,
    decision_paths_csr,
    segment_entries,
)
from fasttree.sparse_splitter import SparseSplitter, csc_arrays, csr_arrays  # noqa: E402
from fasttree.splitter import ExactSplitter  # noqa: E402
from fasttree.tree import Tree  # noqa: E402
from reference import (  # noqa: E402
    apply_naive,
    brute_force_split,
    decision_path_naive,
    non_constant_naive,
    sparse_entries_naive,
)

KINDS = ("positive", "negative", "mixed", "empty_columns", "explicit_zeros", "duplicates",
         "tiny")
#: (criterion, n_classes): two classes take the kernels' binary path, three the general one
TARGETS = (("gini", 2), ("gini", 3), ("entropy", 2), ("entropy", 3), ("squared_error", None),
           ("poisson", None))
NO_LIMIT = np.iinfo(np.int32).max
GROWTH = {
    "max_depth": dict(max_depth=5),
    "min_samples_leaf": dict(min_samples_leaf=4),
    "max_leaf_nodes": dict(max_leaf_nodes=9),
    "max_features": dict(max_features=3),
    "min_weight_fraction_leaf": dict(min_weight_fraction_leaf=0.08),
}
TREE_FIELDS = ("children_left", "children_right", "feature", "threshold", "value", "impurity",
               "n_node_samples", "weighted_n_node_samples", "depth", "split_kind",
               "missing_branch", "category_offset", "category_n_codes", "category_branch")


@pytest.fixture(autouse=True)
def one_numba_thread():
    """The many small fits here run their kernels on one thread: with the omp threading layer a
    parallel launch can cost milliseconds on a loaded machine, thousands of times.  The thread
    count test and the larger matrix use every thread."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def all_threads():
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def make_sparse(kind, n_samples=90, n_features=7, density=0.35, seed=0):
    """A random CSC float32 matrix of the given kind and its dense twin."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n_samples, n_features)) < density
    shape = (n_samples, n_features)
    if kind == "positive":
        values = rng.uniform(0.1, 5.0, shape)
    elif kind == "negative":
        values = -rng.uniform(0.1, 5.0, shape)
    elif kind == "duplicates":  # few distinct values: ties everywhere, zero among them
        values = rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], shape)
    elif kind == "tiny":  # values within FEATURE_THRESHOLD (1e-7) of each other or of zero
        values = rng.choice([-0.3, -2e-7, -1e-7, -5e-8, 3e-8, 1e-7, 1.5e-7, 0.2, 0.2000001], shape)
    else:
        values = rng.normal(size=shape)
    dense = np.where(mask, values, 0.0).astype(np.float32)
    if kind == "empty_columns":
        dense[:, [1, 4]] = 0.0
    if kind == "explicit_zeros":
        # stored 0.0 and -0.0 must behave exactly as the zeros that are not stored
        row, col = np.nonzero(dense == 0.0)
        pick = rng.random(row.size) < 0.3
        r, c = row[pick], col[pick]
        zeros = np.where(rng.random(r.size) < 0.5, 0.0, -0.0).astype(np.float32)
        nz_r, nz_c = np.nonzero(dense)
        data = np.concatenate([dense[nz_r, nz_c], zeros])
        X = sp.csc_matrix((data, (np.concatenate([nz_r, r]), np.concatenate([nz_c, c]))),
                          shape=shape)
        assert X.nnz > np.count_nonzero(dense)  # the zeros are really stored
        return X, dense
    return sp.csc_matrix(dense), dense


def make_target(dense, n_classes, seed=0):
    rng = np.random.default_rng(seed + 1)
    score = dense @ rng.normal(size=dense.shape[1]) + 0.5 * rng.normal(size=dense.shape[0])
    if n_classes is None:  # rounded: repeated targets; >= 0 and often 0 for Poisson
        return np.maximum(np.round(score, 1), 0.0).astype(np.float64)
    cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.searchsorted(cuts, score).astype(np.int32)


def grower_params(criterion, n_features, total_weight, *, max_depth=NO_LIMIT,
                  min_samples_leaf=1, max_leaf_nodes=None, max_features=None,
                  min_weight_fraction_leaf=0.0):
    return GrowerParams(
        criterion=criterion, max_depth=max_depth, min_samples_split=2,
        min_samples_leaf=min_samples_leaf,
        min_weight_leaf=min_weight_fraction_leaf * total_weight, min_impurity_decrease=0.0,
        max_leaf_nodes=max_leaf_nodes,
        max_features=n_features if max_features is None else max_features)


def sparse_splitter(X, y, w, params, n_classes, **kwargs):
    return SparseSplitter.from_csc(
        *csc_arrays(X), X.shape[0], y, w, n_classes=n_classes,
        criterion_code=params.criterion_code, min_samples_leaf=params.min_samples_leaf,
        min_weight_leaf=params.min_weight_leaf, **kwargs)


def grow_both(X, dense, y, w, params, n_classes, seed=0, **kwargs):
    """The exact splitter's tree on the dense matrix and the sparse splitter's, same rng."""
    dense_tree = TreeGrower(dense, y, w, params, n_classes=n_classes,
                            rng=np.random.default_rng(seed)).grow()
    grower = TreeGrower(None, None, None, params, n_classes=n_classes,
                        rng=np.random.default_rng(seed),
                        splitter=sparse_splitter(X, y, w, params, n_classes, **kwargs))
    return dense_tree, grower.grow()


def assert_same_tree(expected, actual):
    for name in TREE_FIELDS:
        a, b = getattr(expected, name), getattr(actual, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        # bit for bit: the same float64 values, not only close ones
        assert np.array_equal(a.view(np.uint8) if a.dtype.kind == "f" else a,
                              b.view(np.uint8) if b.dtype.kind == "f" else b), name


# --- (a) kernels against their naive twins ---------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_layout_holds_each_features_nonzeros_sorted_by_value_then_row(kind):
    X, dense = make_sparse(kind, seed=3)
    X.sort_indices()
    y = make_target(dense, 3).astype(np.uint8)
    entry_x, entry_row, entry_y, feature_ptr = build_sparse_layout(
        X.data.astype(np.float32), X.indices.astype(np.int32), X.indptr.astype(np.int64), y)
    for f, (values, rows) in enumerate(sparse_entries_naive(dense)):
        seg = slice(feature_ptr[f], feature_ptr[f + 1])
        np.testing.assert_array_equal(entry_x[seg], values)
        np.testing.assert_array_equal(entry_row[seg], rows)
        np.testing.assert_array_equal(entry_y[seg], y[rows])


def test_layout_does_not_need_sorted_indices():
    X, dense = make_sparse("duplicates", seed=4)
    rng = np.random.default_rng(0)
    data, indices = X.data.copy(), X.indices.copy()
    for f in range(X.shape[1]):  # shuffle the rows inside every column
        seg = slice(X.indptr[f], X.indptr[f + 1])
        perm = rng.permutation(X.indptr[f + 1] - X.indptr[f])
        data[seg], indices[seg] = data[seg][perm], indices[seg][perm]
    y = np.zeros(X.shape[0], dtype=np.uint8)
    entry_x, entry_row, _, feature_ptr = build_sparse_layout(
        data, indices.astype(np.int32), X.indptr.astype(np.int64), y)
    for f, (values, rows) in enumerate(sparse_entries_naive(dense)):
        np.testing.assert_array_equal(entry_x[feature_ptr[f]:feature_ptr[f + 1]], values)
        np.testing.assert_array_equal(entry_row[feature_ptr[f]:feature_ptr[f + 1]], rows)


def split_root(splitter, dense, feature, threshold):
    """Split the root at ``x[feature] <= threshold`` through the splitter's phases; return the
    children's row sets (naive)."""
    n = dense.shape[0]
    left_rows = np.flatnonzero(dense[:, feature] <= threshold)
    right_rows = np.flatnonzero(dense[:, feature] > threshold)
    start, end = np.array([0]), np.array([n])
    n_left = np.array([left_rows.size])
    args = (start, end, np.array([feature]), np.array([SPLIT_THRESHOLD]), np.array([threshold]),
            np.array([1]), np.array([2]), n_left, np.array([0]), np.array([-1]), np.array([0]))
    _, _, branch_rows = splitter.split(*args)
    np.testing.assert_array_equal(branch_rows, [left_rows.size, right_rows.size])
    splitter.partition_prefix(start, end, np.array([feature]), n_left)
    return left_rows, right_rows


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_split_moves_rows_and_entries_like_the_naive_twin(kind, weighted):
    X, dense = make_sparse(kind, seed=5)
    y = make_target(dense, 3, seed=5)
    rng = np.random.default_rng(5)
    w = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    params = grower_params("gini", X.shape[1], 1.0)
    splitter = sparse_splitter(X, y, w, params, 3)
    n = X.shape[0]
    # the root: non-constant features and statistics
    np.testing.assert_array_equal(splitter.non_constant(np.array([0]), np.array([n]))[:, 0],
                                  non_constant_naive(dense, np.arange(n)))
    feature = int(np.argmax(np.count_nonzero(dense, axis=0)))
    values = np.unique(dense[:, feature])  # a threshold between two middle values
    threshold = float(values[values.size // 2 - 1] / 2 + values[values.size // 2] / 2)
    left_rows, right_rows = split_root(splitter, dense, feature, threshold)
    start = np.array([0, left_rows.size])
    end = np.array([left_rows.size, n])
    for child, rows in enumerate((left_rows, right_rows)):
        # node_rows: the child's rows by ascending id; row_pos its inverse
        np.testing.assert_array_equal(splitter.node_rows[start[child]:end[child]], rows)
        np.testing.assert_array_equal(splitter.row_pos[rows], np.arange(start[child], end[child]))
        # every feature's segment: the child's nonzeros, sorted by (value, row id)
        for f, (values, entry_rows) in enumerate(sparse_entries_naive(dense, rows)):
            first = splitter.feature_ptr[f]
            pos = splitter.row_pos[splitter.entry_row[first:splitter.feature_ptr[f + 1]]]
            inside = np.flatnonzero((pos >= start[child]) & (pos < end[child]))
            if inside.size:  # one contiguous segment
                assert inside[-1] - inside[0] + 1 == inside.size
            seg = slice(first + (inside[0] if inside.size else 0),
                        first + (inside[-1] + 1 if inside.size else 0))
            np.testing.assert_array_equal(splitter.entry_x[seg], values)
            np.testing.assert_array_equal(splitter.entry_row[seg], entry_rows)
        np.testing.assert_array_equal(
            splitter.non_constant(start, end)[:, child], non_constant_naive(dense, rows))
    stats = splitter.node_stats(start, end, np.array([feature, feature]))
    weights = np.ones(n) if w is None else w
    for child, rows in enumerate((left_rows, right_rows)):
        np.testing.assert_allclose(stats[child], np.bincount(y[rows], weights[rows], 3),
                                   rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_segment_entries_equal_a_naive_walk(kind):
    """Each (feature, node) pair's entries, found by galloping from the previous node's, are
    the entries whose row lies in the node (naive: a test of every entry); nodes given out of
    position order, empty ones among them."""
    X, dense = make_sparse(kind, seed=7)
    y = make_target(dense, 2, seed=7)
    splitter = sparse_splitter(X, y, None, grower_params("gini", X.shape[1], 1.0), 2)
    feature = int(np.argmax(np.count_nonzero(dense, axis=0)))
    values = np.unique(dense[:, feature])
    threshold = float(values[values.size // 2 - 1] / 2 + values[values.size // 2] / 2)
    left_rows, _ = split_root(splitter, dense, feature, threshold)
    n, cut = X.shape[0], left_rows.size
    # the right child, empty nodes between and around the children, the left child
    start = np.array([cut, cut, n, 0, 0], dtype=np.int64)
    end = np.array([n, cut, n, 0, cut], dtype=np.int64)
    order = np.argsort(start, kind="stable").astype(np.int64)
    entry_start, entry_end = segment_entries(splitter.entry_row, splitter.feature_ptr,
                                             splitter.row_pos, start, end, order)
    for f in range(X.shape[1]):
        lo, hi = splitter.feature_ptr[f], splitter.feature_ptr[f + 1]
        pos = splitter.row_pos[splitter.entry_row[lo:hi]]
        for s in range(start.size):
            inside = lo + np.flatnonzero((pos >= start[s]) & (pos < end[s]))
            if inside.size:
                assert (entry_start[f, s], entry_end[f, s]) == (inside[0], inside[-1] + 1)
            else:
                assert lo <= entry_start[f, s] == entry_end[f, s] <= hi


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("criterion,n_classes", TARGETS)
@pytest.mark.parametrize("weighted", [False, True])
def test_search_equals_the_dense_kernel_and_brute_force(kind, criterion, n_classes, weighted):
    X, dense = make_sparse(kind, seed=6)
    y = make_target(dense, n_classes, seed=6)
    rng = np.random.default_rng(6)
    w = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    params = grower_params(criterion, X.shape[1], 1.0, min_samples_leaf=2)
    sparse = sparse_splitter(X, y, w, params, n_classes)
    exact = ExactSplitter.from_data(
        dense, y, w, n_classes=n_classes, n_categories=np.zeros(X.shape[1], np.int64),
        criterion_code=params.criterion_code, min_samples_leaf=2, min_weight_leaf=0.0,
        categorical_kind=SPLIT_SUBSET)
    n = X.shape[0]
    start, end, first = np.array([0]), np.array([n]), np.array([0])
    stats = sparse.node_stats(start, end, first)
    assert np.array_equal(stats, exact.node_stats(start, end, first))
    mask = np.ones((X.shape[1], 1), dtype=np.uint8)
    got, want = sparse.find_splits(start, end, stats, mask), exact.find_splits(start, end, stats,
                                                                               mask)
    for field in want._fields:
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    if criterion == "poisson" or kind == "tiny":
        return  # the brute-force twin knows neither Poisson nor values within 1e-7 as one
    weights = np.ones(n) if w is None else w
    for f in range(X.shape[1]):
        value, threshold, n_left = brute_force_split(
            dense[:, f], y, weights, criterion=criterion, n_classes=n_classes, min_samples_leaf=2)
        if threshold is None:
            assert got.children_impurity[f, 0] == np.inf
        else:
            np.testing.assert_allclose(got.children_impurity[f, 0], value, rtol=1e-9, atol=1e-9)


# --- (b) trees: sparse splitter == exact splitter on X.toarray() -----------------------------
@pytest.mark.parametrize("growth", list(GROWTH))
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("criterion,n_classes", TARGETS)
@pytest.mark.parametrize("kind", KINDS)
def test_tree_is_bit_identical_to_the_dense_tree(kind, criterion, n_classes, weighted, growth):
    X, dense = make_sparse(kind, seed=11)
    y = make_target(dense, n_classes, seed=11)
    rng = np.random.default_rng(12)
    w = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    total = X.shape[0] if w is None else w.sum()
    params = grower_params(criterion, X.shape[1], total, **GROWTH[growth])
    dense_tree, sparse_tree = grow_both(X, dense, y, w, params, n_classes, seed=13)
    assert dense_tree.node_count > 1
    assert_same_tree(dense_tree, sparse_tree)


@pytest.mark.parametrize("criterion,n_classes", [("gini", 2), ("squared_error", None)])
def test_tree_identity_on_a_larger_matrix_and_unbounded_depth(criterion, n_classes):
    all_threads()
    X, dense = make_sparse("mixed", n_samples=600, n_features=25, density=0.1, seed=21)
    y = make_target(dense, n_classes, seed=21)
    w = np.random.default_rng(22).uniform(0.5, 2.0, X.shape[0])
    for weight in (None, w):
        params = grower_params(criterion, X.shape[1], 1.0)
        assert_same_tree(*grow_both(X, dense, y, weight, params, n_classes))


def test_coo_and_csr_input_and_all_zero_matrix():
    X, dense = make_sparse("mixed", seed=31)
    y = make_target(dense, 2, seed=31)
    params = grower_params("entropy", X.shape[1], 1.0)
    expected = TreeGrower(dense, y, None, params, n_classes=2).grow()
    for matrix in (X.tocoo(), X.tocsr()):
        assert_same_tree(expected, grow_both(matrix, dense, y, None, params, 2)[1])
    zero = sp.csc_matrix(X.shape, dtype=np.float32)
    tree = grow_both(zero, np.zeros(X.shape, np.float32), y, None, params, 2)
    assert_same_tree(*tree)
    assert tree[1].node_count == 1


def test_results_do_not_depend_on_the_number_of_threads():
    X, dense = make_sparse("duplicates", n_samples=300, n_features=12, seed=41)
    y = make_target(dense, 3, seed=41)
    w = np.random.default_rng(41).uniform(0.5, 2.0, X.shape[0])
    params = grower_params("gini", X.shape[1], 1.0)
    trees = []
    before = numba.get_num_threads()
    try:
        for n_threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(n_threads)
            grower = TreeGrower(None, None, None, params, n_classes=3,
                                splitter=sparse_splitter(X, y, w, params, 3))
            trees.append(grower.grow())
    finally:
        numba.set_num_threads(before)
    for tree in trees[1:]:
        assert_same_tree(trees[0], tree)


def _pair_tasks_naive(entry_start, entry_end, seg_start, seg_end, walks_rows, n_tasks):
    """Each task starts at the first pair (feature-major) whose work before it reaches the
    task's share of the level's work."""
    from fasttree.kernels.work_items import PAIR_COST

    work = (entry_end - entry_start + PAIR_COST
            + ((seg_end - seg_start)[None, :] if walks_rows else 0)).ravel()
    before = np.concatenate([[0], np.cumsum(work)])[:-1]
    total = work.sum()
    first = [0]
    for t in range(1, n_tasks):
        reached = np.flatnonzero(before * n_tasks >= t * total)
        first.append(int(reached[0]) if reached.size else work.size)
    return np.array(first + [work.size]), work


@given(n_features=st.integers(0, 6), n_nodes=st.integers(0, 6), n_tasks=st.integers(1, 40),
       walks_rows=st.booleans(), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=200, deadline=None)
def test_pair_tasks_cover_every_pair_once_by_equal_work(n_features, n_nodes, n_tasks,
                                                        walks_rows, seed):
    """The sparse searches' and partition's cut of a level's pairs into tasks: consecutive runs
    covering every pair once, each ending where the naive cut ends, so a task holds its share
    of the work and at most one pair more; a large pair is one task's alone."""
    from fasttree.kernels.sparse import _pair_tasks

    rng = np.random.default_rng(seed)
    rows = rng.choice([0, 1, 5, 300, 5000], size=n_nodes)
    seg_end = np.cumsum(rows).astype(np.int64)
    seg_start = seg_end - rows
    entries = np.minimum(rng.integers(0, 5000, (n_features, n_nodes)), rows[None, :])
    entry_start = rng.integers(0, 100, (n_features, n_nodes)).astype(np.int64)
    entry_end = entry_start + entries
    first = _pair_tasks(entry_start, entry_end, seg_start, seg_end, walks_rows, n_tasks)
    want, work = _pair_tasks_naive(entry_start, entry_end, seg_start, seg_end, walks_rows,
                                   n_tasks)
    np.testing.assert_array_equal(first, want)
    assert first[0] == 0 and first[-1] == n_features * n_nodes
    assert np.all(np.diff(first) >= 0)
    for t in range(n_tasks):  # the share, plus the one pair that crosses the task's end
        held = work[first[t]:first[t + 1]].sum()
        assert held <= -(-work.sum() // n_tasks) + (work.max() if work.size else 0)


@pytest.mark.parametrize("case", ["gini_weighted", "gini_binary", "entropy_classes",
                                  "squared_error", "poisson", "extra_classifier",
                                  "multi_regressor", "absolute_error"])
def test_sparse_trees_do_not_depend_on_the_task_count(monkeypatch, case):
    """Every sparse search kind, and the partition, cut into 1, 3 or 64 tasks: the same tree."""
    import fasttree

    X, _ = make_sparse("mixed", n_samples=300, n_features=9, seed=8)
    rng = np.random.default_rng(8)
    n = X.shape[0]
    y = rng.integers(0, 3 if case == "entropy_classes" else 2, n)
    w = rng.uniform(0.5, 2.0, n) if case in ("gini_weighted", "squared_error") else None
    params = {"random_state": 0}
    Estimator = fasttree.DecisionTreeClassifier
    if case.startswith("entropy"):
        params["criterion"] = "entropy"
    if case in ("squared_error", "poisson", "multi_regressor", "absolute_error"):
        Estimator = fasttree.DecisionTreeRegressor
        y = rng.poisson(2.0, n).astype(float)
        if case == "multi_regressor":
            y = np.c_[y, rng.normal(size=n)]
        if case in ("poisson", "absolute_error"):
            params["criterion"] = case
    if case == "extra_classifier":
        Estimator = fasttree.ExtraTreeClassifier
    trees = []
    for n_tasks in (1, 3, 64):
        monkeypatch.setattr(SparseSplitter, "_n_chunks", staticmethod(lambda k=n_tasks: k))
        trees.append(Estimator(**params).fit(X, y, sample_weight=w).tree_)
    for tree in trees[1:]:
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(trees[0], name),
                                          err_msg=name)
    assert trees[0].node_count > 9


def test_sparse_search_refuses_no_task():
    from fasttree.kernels.sparse import _search

    with pytest.raises(ValueError, match="n_chunks must be at least 1"):
        _search(("sums",), (), (), 0, False, 0, None)


@pytest.mark.parametrize("criterion,n_classes", [("gini", 3), ("squared_error", None)])
def test_summed_zero_block_is_exact_when_every_sum_is(criterion, n_classes):
    """``exact_zero_block=False`` adds a zero block as node minus segment sums: with integer
    weights and targets every float sum is exact, so the tree is still the dense one."""
    X, dense = make_sparse("mixed", n_samples=200, n_features=10, seed=51)
    y = make_target(dense, n_classes, seed=51)
    if n_classes is None:
        y = np.round(y * 4)
    w = np.random.default_rng(51).integers(1, 4, X.shape[0]).astype(np.float64)
    for weight in (None, w):
        params = grower_params(criterion, X.shape[1], 1.0)
        assert_same_tree(*grow_both(X, dense, y, weight, params, n_classes,
                                    exact_zero_block=False))


def test_unsupported_options_are_refused():
    X, dense = make_sparse("mixed")
    y = make_target(dense, 2)
    params = grower_params("gini", X.shape[1], 1.0)
    with pytest.raises(ValueError):
        sparse_splitter(X, y, None, params, 2, n_categories=np.ones(X.shape[1], np.int64))
    with pytest.raises(ValueError):
        sparse_splitter(X, y, None, params, 2, min_branch_fraction=0.1)


# --- (c) prediction on CSR -------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_apply_on_csr_equals_apply_on_dense(kind):
    X, dense = make_sparse(kind, seed=61)
    y = make_target(dense, 3, seed=61)
    params = grower_params("gini", X.shape[1], 1.0, max_depth=6)
    tree = grow_both(X, dense, y, None, params, 3)[1]
    X_test, dense_test = make_sparse(kind, n_samples=150, seed=62)
    leaves = apply_tree_csr(*csr_arrays(X_test), *tree._routing())
    np.testing.assert_array_equal(leaves, apply_tree(dense_test, *tree._routing()))
    np.testing.assert_array_equal(leaves, apply_naive(tree, dense_test))
    path, length = decision_paths_csr(*csr_arrays(X_test), *tree._routing(), tree.max_depth)
    want_path, want_length = decision_paths(dense_test, *tree._routing(), tree.max_depth)
    np.testing.assert_array_equal(path, want_path)
    np.testing.assert_array_equal(length, want_length)
    for i in range(0, X_test.shape[0], 37):
        assert list(path[i, :length[i]]) == decision_path_naive(tree, dense_test[i])


def test_apply_csr_unsorted_duplicated_entries_and_every_kind_of_node():
    """Unsorted column ids, duplicated entries (summed, as scipy means them), a NaN (missing), a
    categorical node and a column the tree never reads."""
    # root: x0 <= 0.5 (missing -> right); left: categories of x2 {0, 2} -> branch 0; right: leaf
    tree = Tree(
        children_left=np.array([1, 3, -1, -1, -1]), children_right=np.array([2, 4, -1, -1, -1]),
        feature=np.array([0, 2, -2, -2, -2]), threshold=np.array([0.5, -2.0, -2.0, -2.0, -2.0]),
        value=np.zeros((5, 1, 1)), impurity=np.zeros(5), n_node_samples=np.ones(5, np.int64),
        weighted_n_node_samples=np.ones(5), depth=np.array([0, 1, 1, 2, 2]), n_features=4,
        split_kind=np.array([SPLIT_THRESHOLD, SPLIT_SUBSET, 0, 0, 0]),
        missing_branch=np.array([1, 0, 0, 0, 0]), category_offset=np.array([-1, 0, -1, -1, -1]),
        category_n_codes=np.array([0, 4, 0, 0, 0]),
        category_branch=np.array([0, 1, 0, 1], dtype=np.int32))
    rows = [  # (column ids, values) per row; the dense row sums duplicates
        ([3, 2, 0], [7.0, 1.0, 0.25]),
        ([2, 2], [1.0, 1.0]),             # x2 = 2 -> branch 0
        ([0], [np.nan]),                  # missing x0 -> right
        ([], []),                         # all zeros: x0 = 0 <= 0.5, x2 = 0 -> branch 0
        ([0, 0, 2], [0.4, 0.4, 5.0]),     # x0 = 0.8 -> right
        ([2, 3], [9.0, -1.0]),            # unseen category -> last slot -> branch 1
    ]
    indptr = np.concatenate([[0], np.cumsum([len(c) for c, _ in rows])]).astype(np.int64)
    indices = np.array([c for cols, _ in rows for c in cols], dtype=np.int32)
    data = np.array([v for _, vals in rows for v in vals], dtype=np.float32)
    dense = np.zeros((len(rows), 4), dtype=np.float32)
    for i, (cols, vals) in enumerate(rows):
        for c, v in zip(cols, vals):
            dense[i, c] += v
    leaves = apply_tree_csr(data, indices, indptr, *tree._routing())
    np.testing.assert_array_equal(leaves, apply_tree(dense, *tree._routing()))
    np.testing.assert_array_equal(leaves, [4, 3, 2, 3, 2, 4])


def test_csr_arrays_coerce_dtypes():
    X, _ = make_sparse("mixed")
    data, indices, indptr = csr_arrays(X.astype(np.float64))
    assert (data.dtype, indices.dtype, indptr.dtype) == (np.float32, np.int32, np.int64)
    assert indptr.shape[0] == X.shape[0] + 1
    data, indices, indptr = csc_arrays(X.tocoo())
    assert indptr.shape[0] == X.shape[1] + 1


NOJIT_SCRIPT = """
import json, numpy as np, scipy.sparse as sp
from fasttree.grower import GrowerParams, TreeGrower
from fasttree.sparse_splitter import SparseSplitter, csc_arrays, csr_arrays
from fasttree.kernels import apply_tree_csr

def trees():
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((80, 5)) < 0.4, np.round(rng.normal(size=(80, 5)), 1), 0.0)
    X = sp.csc_matrix(dense.astype(np.float32))
    out = {}
    for criterion, n_classes in (("entropy", 3), ("squared_error", None)):
        y = (np.digitize(dense[:, 0] + dense[:, 1], [-0.3, 0.3]).astype(np.int32) if n_classes
             else dense[:, 0] * 3 + dense[:, 2])
        w = rng.uniform(0.5, 2.0, 80)
        params = GrowerParams(criterion=criterion, max_depth=4, min_samples_split=2,
                              min_samples_leaf=1, min_weight_leaf=0.0, min_impurity_decrease=0.0,
                              max_leaf_nodes=None, max_features=5)
        splitter = SparseSplitter.from_csc(*csc_arrays(X), 80, y, w, n_classes=n_classes,
                                           criterion_code=params.criterion_code,
                                           min_samples_leaf=1, min_weight_leaf=0.0)
        tree = TreeGrower(None, None, None, params, n_classes=n_classes, splitter=splitter).grow()
        out[criterion] = [tree.feature.tolist(), tree.threshold.tolist(), tree.impurity.tolist(),
                          apply_tree_csr(*csr_arrays(X), *tree._routing()).tolist()]
    return out
"""


def test_pure_python_kernels_give_the_compiled_tree():
    """NUMBA_DISABLE_JIT=1: the sparse kernels as plain Python grow the compiled tree."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    code = NOJIT_SCRIPT + "\nprint(json.dumps(trees()))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    interpreted = json.loads(out.stdout)
    namespace = {}
    exec(NOJIT_SCRIPT, namespace)
    compiled = namespace["trees"]()
    for name, arrays in compiled.items():
        for a, b in zip(interpreted[name], arrays):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "n_node_samples",
               "impurity", "value", "weighted_n_node_samples")


@pytest.mark.parametrize("kind", ["mixed", "duplicates", "tiny", "explicit_zeros"])
@pytest.mark.parametrize("case", ["extra_classifier", "extra_regressor", "multi_classifier",
                                  "multi_regressor", "extra_multi_classifier", "ae_regressor",
                                  "extra_ae_regressor"])
@pytest.mark.parametrize("weighted", [False, True])
def test_random_and_multioutput_estimators_equal_dense(kind, case, weighted):
    """find_splits_sparse_generic (random thresholds, several outputs) and the sparse absolute
    error scan grow the dense trees."""
    import fasttree

    X, dense = make_sparse(kind, seed=3)
    rng = np.random.default_rng(4)
    n = dense.shape[0]
    y = rng.integers(0, 3, n)
    if case.startswith("multi") or case == "extra_multi_classifier":
        y = np.c_[y, rng.integers(0, 2, n)]
    if case.endswith("regressor"):
        y = y + rng.normal(size=y.shape)
    Estimator = {
        "extra_classifier": fasttree.ExtraTreeClassifier,
        "extra_regressor": fasttree.ExtraTreeRegressor,
        "multi_classifier": fasttree.DecisionTreeClassifier,
        "multi_regressor": fasttree.DecisionTreeRegressor,
        "extra_multi_classifier": fasttree.ExtraTreeClassifier,
        "ae_regressor": fasttree.DecisionTreeRegressor,
        "extra_ae_regressor": fasttree.ExtraTreeRegressor,
    }[case]
    params = {"random_state": 0, "max_features": None}
    if "ae" in case.split("_"):
        params["criterion"] = "absolute_error"
    w = rng.uniform(0.2, 2.0, n) if weighted else None
    d = Estimator(**params).fit(dense, y, sample_weight=w)
    s = Estimator(**params).fit(X, y, sample_weight=w)
    for name in TREE_ARRAYS:
        np.testing.assert_allclose(getattr(s.tree_, name), getattr(d.tree_, name), rtol=1e-12,
                                   err_msg=name)
    np.testing.assert_array_equal(s.predict(X.tocsr()), d.predict(dense))


SPARSE_FORMATS = ("csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array",
                  "coo_array")


@pytest.mark.parametrize("fmt", SPARSE_FORMATS)
@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_reduced_error_pruning_on_sparse_x_equals_dense(fmt, task):
    """The hold-out split of pruning="reduced_error" takes the rows of a sparse X (it called
    np.ascontiguousarray on the matrix: IndexError); same held-out rows, so the same tree."""
    import fasttree

    X, dense = make_sparse("mixed", n_samples=160, seed=5)
    if task == "classifier":
        y = make_target(dense, 3, seed=5)
        Estimator = fasttree.DecisionTreeClassifier
    else:
        y = make_target(dense, None, seed=5)
        Estimator = fasttree.DecisionTreeRegressor
    w = np.random.default_rng(6).uniform(0.5, 2.0, dense.shape[0])
    est = Estimator(pruning="reduced_error", random_state=0)
    d = est.fit(dense, y, sample_weight=w)
    s = Estimator(**est.get_params()).fit(getattr(sp, fmt)(X), y, sample_weight=w)
    assert d.get_n_leaves() < Estimator().fit(dense, y, sample_weight=w).get_n_leaves()
    for name in TREE_ARRAYS:
        np.testing.assert_allclose(getattr(s.tree_, name), getattr(d.tree_, name), rtol=1e-12,
                                   err_msg=name)
    # the pruner itself on a sparse validation set: the same tree as on its dense twin
    from fasttree import pruning

    full = Estimator().fit(dense[:100], y[:100])
    np.testing.assert_array_equal(
        pruning.reduced_error(full, getattr(sp, fmt)(X[100:]), y[100:]).tree_.children_left,
        pruning.reduced_error(full, dense[100:], y[100:]).tree_.children_left)


@pytest.mark.parametrize("rule", ["error_based", "minimum_error", "pessimistic"])
def test_training_count_pruners_on_sparse_x_equal_dense(rule):
    """The rules that read only the tree's training counts take a sparse X as well."""
    import fasttree

    X, dense = make_sparse("mixed", n_samples=160, seed=7)
    y = make_target(dense, 2, seed=7)
    d = fasttree.DecisionTreeClassifier(pruning=rule).fit(dense, y)
    s = fasttree.DecisionTreeClassifier(pruning=rule).fit(X, y)
    for name in TREE_ARRAYS:
        np.testing.assert_allclose(getattr(s.tree_, name), getattr(d.tree_, name), rtol=1e-12,
                                   err_msg=name)
