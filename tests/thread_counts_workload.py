"""Every estimator path, fitted and used, dumped to an ``.npz`` for ``test_thread_counts.py``.

Run as ``python thread_counts_workload.py OUT.npz`` in a process started with
``NUMBA_NUM_THREADS`` set: numba fixes its thread count per process, so the test runs this once
per thread count and compares the files.  The data are small, so the one-thread rules for small
work (:data:`fasttree.grower.SMALL_LEVEL_WORK` per level, :data:`fasttree._base.
SMALL_PREDICTION_ROWS` per prediction) are set to 0 here: every level, presort and prediction
runs on all of the process's threads, as a large fit's would; and the sizes above which a search
or a move cuts a node into row chunks are lowered, so that the chunked paths run too.

Each case saves every array of its ``tree_`` (children, feature, threshold, value, impurity,
node counts and weights, depth, split kinds, missing branches, category maps), and on a test set
with unseen rows ``predict``, ``predict_proba``, ``apply`` and ``decision_path``; a forest, every
tree's arrays, its out-of-bag estimates and its predictions.
"""

import sys

import numba
import numpy as np
import scipy.sparse as sp

import fasttree
import fasttree._base
import fasttree.grower
import fasttree.kernels.depth_first
import fasttree.kernels.partition
import fasttree.kernels.presort
import fasttree.kernels.work_items
import fasttree.packed_forest
from fasttree import pruning
from fasttree.hist_splitter import HistSplitter
from fasttree.packed_forest import PackedForest
from fasttree.preprocessing import EntropyDiscretizer
from fasttree.sparse_splitter import SparseSplitter
from fasttree.splitter import ExactSplitter
from fasttree.tree import Tree

N_TRAIN, N_TEST = 1600, 400


def _data():
    """Arrays shared by the cases, from one seeded generator (the same in every process)."""
    rng = np.random.default_rng(25)
    n = N_TRAIN + N_TEST
    X = rng.normal(size=(n, 8))
    X[:, 1] = np.round(X[:, 1], 1)  # many ties
    X[:, 2] = rng.integers(0, 6, size=n)  # few distinct values
    signal = X[:, 0] + 0.7 * X[:, 1] - 0.4 * X[:, 3] + 0.5 * rng.normal(size=n)
    d = {"X": X}
    d["y3"] = np.digitize(signal, [-0.6, 0.6])  # three classes
    d["y2"] = (signal > 0.2).astype(np.int64)
    d["yr"] = signal + 0.1 * X[:, 4] ** 2
    d["ypois"] = rng.poisson(np.exp(0.4 * np.clip(signal, -3, 3)))
    d["ymo_c"] = np.column_stack([d["y3"], (X[:, 5] > 0).astype(np.int64)])
    d["ymo_r"] = np.column_stack([d["yr"], X[:, 5] - X[:, 6]])
    d["w"] = rng.integers(1, 4, size=n) * rng.random(n)
    X_nan = X.copy()
    X_nan[rng.random(X.shape) < 0.12] = np.nan
    d["X_nan"] = X_nan
    X_cat = X.copy()
    X_cat[:, 0] = rng.integers(0, 7, size=n)  # categorical columns 0 and 2
    d["y3_cat"] = np.digitize(signal + 0.6 * (X_cat[:, 0] % 3) - 0.6, [-0.6, 0.6])
    d["yr_cat"] = d["yr"] + 0.8 * (X_cat[:, 0] % 3)
    d["X_cat"] = X_cat
    X_cat_nan = X_cat.copy()
    X_cat_nan[rng.random(X.shape) < 0.08] = np.nan
    d["X_cat_nan"] = X_cat_nan
    X_sparse = np.where(rng.random(X.shape) < 0.6, 0.0, X)
    d["X_sparse"] = X_sparse
    return d


def _cases(d):
    """(name, estimator, X, y, sample_weight) for every path."""
    C, R = fasttree.DecisionTreeClassifier, fasttree.DecisionTreeRegressor
    X, Xn, Xc, Xcn, Xs = d["X"], d["X_nan"], d["X_cat"], d["X_cat_nan"], d["X_sparse"]
    y3, y2, yr, w = d["y3"], d["y2"], d["yr"], d["w"]
    cat = [0, 2]
    cases = []
    for criterion in ("gini", "entropy", "log_loss", "gain_ratio"):
        cases.append((f"clf_{criterion}", C(criterion=criterion), X, y3, None))
    for criterion in ("squared_error", "poisson", "absolute_error"):
        y = d["ypois"] if criterion == "poisson" else yr
        cases.append((f"reg_{criterion}", R(criterion=criterion, max_depth=9), X, y, None))
    cases += [
        ("clf_sample_weight", C(criterion="entropy"), X, y3, w),
        ("clf_class_weight", C(class_weight="balanced"), X, y3, None),
        ("clf_class_weight_dict", C(class_weight={0: 1.0, 1: 3.0, 2: 0.5}), X, y3, w),
        ("reg_sample_weight", R(max_depth=9), X, yr, w),
        ("reg_absolute_error_weight", R(criterion="absolute_error", max_depth=7), X, yr, w),
        ("clf_max_features", C(max_features=3, random_state=3), X, y3, None),
        ("reg_max_features", R(max_features="sqrt", random_state=4, max_depth=10), X, yr, None),
        ("extra_clf", fasttree.ExtraTreeClassifier(random_state=5), X, y3, None),
        ("extra_reg", fasttree.ExtraTreeRegressor(random_state=6, max_depth=10), X, yr, None),
        ("extra_clf_nan", fasttree.ExtraTreeClassifier(random_state=7, max_features=None), Xn,
         y3, w),
        ("hist_quantile", C(splitter="hist", max_bins=32), X, y3, None),
        ("hist_entropy", C(splitter="hist", binning="entropy"), X, y3, w),
        ("hist_reg", R(splitter="hist", max_depth=10), X, yr, None),
        ("hist_nan", C(splitter="hist", max_bins=16), Xn, y3, None),
        ("hist_categorical", C(splitter="hist", categorical_features=cat), Xcn, d["y3_cat"], None),
        ("hist_max_leaf_nodes", R(splitter="hist", max_leaf_nodes=40), X, yr, w),
        ("cat_binary_clf", C(categorical_features=cat), Xc, d["y3_cat"], None),
        ("cat_binary_reg", R(categorical_features=cat, max_depth=9), Xc, d["yr_cat"], w),
        ("cat_multiway_clf", C(categorical_features=cat, categorical_split="multiway",
                               criterion="entropy"), Xc, d["y3_cat"], None),
        ("cat_multiway_reg", R(categorical_features=cat, categorical_split="multiway",
                               max_depth=8), Xc, d["yr_cat"], None),
        ("cat_missing", C(categorical_features=cat), Xcn, d["y3_cat"], w),
        ("missing_learn_clf", C(), Xn, y3, None),
        ("missing_learn_reg", R(max_depth=9), Xn, yr, w),
        ("missing_fractional_clf", C(missing="fractional", max_depth=8), Xn, y3, None),
        ("missing_fractional_reg", R(missing="fractional", max_depth=7), Xn, yr, w),
        ("missing_fractional_multiway", C(missing="fractional", categorical_features=cat,
                                          categorical_split="multiway", max_depth=6),
         Xcn, d["y3_cat"], None),
        ("monotonic_clf", C(monotonic_cst=[1, 1, 0, -1, 0, 0, 0, 0]), X, y2, None),
        ("monotonic_reg", R(monotonic_cst=[1, 0, 0, -1, 0, 0, 0, 0], max_depth=9), X, yr, w),
        ("monotonic_missing", R(monotonic_cst=[1, 0, 0, -1, 0, 0, 0, 0], max_depth=8), Xn, yr,
         None),
        ("max_leaf_nodes_clf", C(max_leaf_nodes=50), X, y3, None),
        ("max_leaf_nodes_reg", R(max_leaf_nodes=60, criterion="absolute_error"), X, yr, None),
        ("max_leaf_nodes_nan", C(max_leaf_nodes=30, max_features=4, random_state=1), Xn, y3,
         w),
        ("multi_output_clf", C(), X, d["ymo_c"], None),
        ("multi_output_reg", R(max_depth=9), X, d["ymo_r"], w),
        ("multi_output_abs", R(criterion="absolute_error", max_depth=6), X, d["ymo_r"], None),
        ("sparse_clf", C(), sp.csc_matrix(Xs), y3, None),
        ("sparse_clf_csr", C(criterion="entropy", max_features=5, random_state=2),
         sp.csr_matrix(Xs), y3, w),
        ("sparse_reg", R(max_depth=9), sp.csc_matrix(Xs), yr, None),
        ("sparse_abs", R(criterion="absolute_error", max_depth=6), sp.csc_matrix(Xs), yr, w),
        ("sparse_poisson", R(criterion="poisson", max_depth=6), sp.csc_matrix(Xs), d["ypois"],
         None),
        ("sparse_extra", fasttree.ExtraTreeClassifier(random_state=8), sp.csc_matrix(Xs), y3,
         None),
        ("sparse_multi_output", R(max_depth=7), sp.csc_matrix(Xs), d["ymo_r"], None),
        ("sparse_max_leaf_nodes", C(max_leaf_nodes=40), sp.csc_matrix(Xs), y3, None),
        ("id3", fasttree.ID3Classifier(categorical_features=cat, max_depth=8), Xc, d["y3_cat"],
         None),
        ("c45", fasttree.C45Classifier(categorical_features=cat), Xcn, d["y3_cat"], None),
        ("c45_weights", fasttree.C45Classifier(categorical_features=cat, pruning_confidence=0.1),
         Xcn, d["y3_cat"], w),
        ("c45_no_raising", fasttree.C45Classifier(categorical_features=cat,
                                                  subtree_raising=False), Xcn, d["y3_cat"], w),
        ("ccp_alpha_clf", C(ccp_alpha=0.004), X, y3, None),
        ("ccp_alpha_reg", R(ccp_alpha=0.01), X, yr, w),
        ("ccp_cv", C(pruning="cost_complexity", ccp_folds=4, random_state=0, max_depth=8), X,
         y3, None),
        ("reduced_error_clf", C(pruning="reduced_error", random_state=0), Xn, y3, None),
        ("reduced_error_reg", R(pruning="reduced_error", random_state=0), X, yr, w),
        ("error_based", C(pruning="error_based", pruning_confidence=0.1), X, y3, None),
        ("minimum_error", C(pruning="minimum_error"), X, y3, w),
        ("pessimistic", C(pruning="pessimistic"), Xn, y3, None),
        ("forest_clf", fasttree.RandomForestClassifier(n_estimators=4, max_depth=8, oob_score=True,
                                                       random_state=3), Xn, y3, w),
        ("forest_balanced", fasttree.RandomForestClassifier(
            n_estimators=3, class_weight="balanced_subsample", random_state=5), X, y3, None),
        ("forest_binary", fasttree.RandomForestClassifier(n_estimators=4, random_state=7),
         X, d["y2"], None),
        ("forest_reg", fasttree.RandomForestRegressor(n_estimators=3, max_depth=8,
                                                      random_state=6), Xn, yr, w),
        ("extra_trees_reg", fasttree.ExtraTreesRegressor(n_estimators=3, max_depth=8,
                                                         bootstrap=True, random_state=4),
         Xn, yr, None),
    ]
    return cases


def _train_test(X, y, w):
    n = N_TRAIN
    w = None if w is None else w[:n]
    if sp.issparse(X):  # rows sliced as CSR, the training part given in X's own format
        rows = X.tocsr()
        return rows[:n].asformat(X.format), y[:n], w, rows[n:]
    return X[:n], y[:n], w, X[n:]


def _save_estimator(out, name, est, X_test):
    if hasattr(est, "estimators_"):  # a forest: every tree, then the forest's own outputs
        for k, tree in enumerate(est.estimators_):
            for attr, value in vars(tree.tree_).items():
                if isinstance(value, np.ndarray):
                    out[f"{name}.tree{k}.{attr}"] = value
        for attr in ("oob_score_", "oob_decision_function_", "oob_prediction_"):
            if hasattr(est, attr):
                out[f"{name}.{attr}"] = np.asarray(getattr(est, attr))
        out[f"{name}.predict"] = np.asarray(est.predict(X_test))
        out[f"{name}.apply"] = est.apply(X_test)
        out[f"{name}.importances"] = est.feature_importances_
        return
    for attr, value in vars(est.tree_).items():
        if isinstance(value, np.ndarray):
            out[f"{name}.tree.{attr}"] = value
    out[f"{name}.predict"] = np.asarray(est.predict(X_test))
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X_test)
        for k, p in enumerate(proba if isinstance(proba, list) else [proba]):
            out[f"{name}.proba{k}"] = p
    out[f"{name}.apply"] = est.apply(X_test)
    out[f"{name}.decision_path"] = est.decision_path(X_test).toarray()
    out[f"{name}.importances"] = est.feature_importances_


def _record_threads(cls, method, seen):
    """Wrap ``cls.method`` to add numba's thread count at each call to the set ``seen``."""
    original = getattr(cls, method)

    def recording(self, *args, **kwargs):
        seen.add(numba.get_num_threads())
        return original(self, *args, **kwargs)

    setattr(cls, method, recording)


def _save_gradient_search(out, d):
    """The gradient kind's search (boosting, through the public kernels) over the root of the
    NaN data: every field of its record."""
    from fasttree import kernels as K

    X = np.ascontiguousarray(d["X_nan"][:N_TRAIN], np.float32)
    sorted_x, sorted_idx = K.presort_features(X)
    grad = d["yr"][:N_TRAIN] - d["yr"][:N_TRAIN].mean()
    hess = d["w"][:N_TRAIN] + 0.1
    sorted_g = K.gather_targets(sorted_idx, grad)
    start, end, rows_of = np.array([0]), np.array([N_TRAIN]), np.zeros(1, np.int64)
    sums = K.segment_target_sums(sorted_idx, sorted_g, hess, start, end, rows_of,
                                 K.CRITERION_GRADIENT)
    record = K.new_split_record(X.shape[1], 1)
    K.find_best_splits_gradient(sorted_x, sorted_idx, sorted_g, hess, start, end, sums,
                                np.ones((X.shape[1], 1), np.uint8), 1.0, 5, 0.5,
                                *K.unconstrained(), record)
    out["gradient_search.sums"] = sums
    for field, values in record._asdict().items():
        out[f"gradient_search.{field}"] = values


def _save_frontier(out, d):
    """Several trees grown in one frontier (the grower's ``counts``: bootstrap samples), with
    per-node feature draws and random thresholds: every array of every tree."""
    from fasttree.grower import GrowerParams, TreeGrower

    X = np.ascontiguousarray(d["X_nan"][:N_TRAIN], np.float32)
    counts = np.random.default_rng(26).poisson(1.0, size=(4, N_TRAIN))
    for splitter, y, n_classes, criterion in [("best", d["y3"], 3, "gini"),
                                              ("random", d["yr"], None, "squared_error")]:
        params = GrowerParams(criterion=criterion, max_depth=9, min_samples_split=2,
                              min_samples_leaf=1, min_weight_leaf=0.0, min_impurity_decrease=0.0,
                              max_leaf_nodes=None, max_features=3, splitter=splitter)
        y = y[:N_TRAIN].astype(np.int32 if n_classes else np.float64)
        trees = TreeGrower(X, y, None, params, n_classes=n_classes, counts=counts,
                           rng=[np.random.default_rng(k) for k in range(4)]).grow_trees()
        for k, tree in enumerate(trees):
            for attr, value in vars(tree).items():
                if isinstance(value, np.ndarray):
                    out[f"frontier_{splitter}{k}.tree.{attr}"] = value


def workload():
    """Fit every case; return ``{key: ndarray}``.  The keys ``threads.search`` and
    ``threads.predict`` hold the thread counts that split searches and tree walks ran on."""
    fasttree.grower.SMALL_LEVEL_WORK = 0  # every level on all threads
    # large nodes' paths on small data: searches cut into row chunks (their prefix statistics
    # and reduction), and on several threads pairs moved in row chunks (on one thread the plan
    # moves every pair whole: a stable partition has one result either way)
    fasttree.kernels.work_items.MIN_TASK_ROWS = 16
    fasttree.kernels.work_items.SUM_BLOCK_ROWS = 8  # float sums of a node in many blocks
    fasttree.kernels.partition.MOVE_CHUNK_ROWS = 8
    fasttree.kernels.partition.MIN_MOVE_CHUNK_ROWS = 8
    fasttree.kernels.partition.CHUNKED_MOVE_COST = 0.0
    fasttree.kernels.presort._SORT_CHUNK = 64  # 8 features on 16 threads: sorted by buckets
    fasttree._base.SMALL_PREDICTION_ROWS = 0  # every prediction on all threads
    # forests walk small test sets in many blocks of rows
    fasttree.packed_forest.MIN_ROWS_PER_BLOCK = 8
    fasttree.packed_forest.MAX_ROWS_PER_BLOCK = 8
    # two-class forests search nodes of 64 rows or more by bounds (their bins of the fit)
    fasttree.kernels.depth_first.BOUNDED_ROWS = 64
    search_threads, predict_threads = set(), set()
    for cls in (ExactSplitter, HistSplitter, SparseSplitter):
        _record_threads(cls, "find_splits", search_threads)
    for method in ("apply", "predict_value"):
        _record_threads(Tree, method, predict_threads)
    for method in ("apply", "values"):
        _record_threads(PackedForest, method, predict_threads)
    d = _data()
    out = {}
    fitted = {}
    for name, est, X, y, w in _cases(d):
        X_train, y_train, w_train, X_test = _train_test(X, y, w)
        est.fit(X_train, y_train, sample_weight=w_train)
        fitted[name] = (est, X_train, y_train, X_test)
        _save_estimator(out, name, est, X_test)
    # the pruning module's functions on fitted trees
    est, X_train, y_train, X_test = fitted["missing_learn_clf"]
    half = N_TRAIN // 2
    grown = fasttree.DecisionTreeClassifier().fit(X_train[:half], y_train[:half])
    for name, pruned in [
        ("fn_reduced_error", pruning.reduced_error(grown, X_train[half:], y_train[half:])),
        ("fn_error_based", pruning.error_based(grown, 0.2)),
        ("fn_error_based_raising", pruning.error_based(grown, subtree_raising=True,
                                                       X=X_train[:half], y=y_train[:half])),
        ("fn_minimum_error", pruning.minimum_error(grown)),
        ("fn_pessimistic", pruning.pessimistic(grown)),
        ("fn_cost_complexity", pruning.cost_complexity(grown, 0.003)),
    ]:
        _save_estimator(out, name, pruned, X_test)
    for name in ("clf_gini", "reg_absolute_error", "sparse_reg", "missing_learn_reg"):
        est, X_train, y_train, _ = fitted[name]
        path = pruning.cost_complexity_path(est)
        out[f"{name}.ccp_path.alphas"] = path.ccp_alphas
        out[f"{name}.ccp_path.impurities"] = path.impurities
        path = est.cost_complexity_pruning_path(X_train, y_train)
        out[f"{name}.ccp_pruning_path"] = path["ccp_alphas"]
    X, y3 = d["X_nan"][:N_TRAIN], d["y3"][:N_TRAIN]
    cuts = EntropyDiscretizer().fit(X, y3).cut_points_
    for f, c in enumerate(cuts):
        out[f"entropy_discretizer.cuts{f}"] = np.asarray(c)
    _save_gradient_search(out, d)
    _save_frontier(out, d)
    out["threads.search"] = np.array(sorted(search_threads))
    out["threads.predict"] = np.array(sorted(predict_threads))
    return out


if __name__ == "__main__":
    np.savez(sys.argv[1], **workload())
