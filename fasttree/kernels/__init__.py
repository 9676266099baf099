"""fasttree's public numba kernels: arrays in, arrays out, no hidden state.

Import them into your own learners.  Every kernel is compiled once for the dtypes declared in
:mod:`fasttree._dtypes` (float32 features, int32 row ids, float64 statistics); pass exactly those,
C-contiguous, as each docstring states.  A typical level of a tree::

    sorted_x, sorted_idx = presort_features(np.ascontiguousarray(X, np.float32))  # NaN last
    sorted_y = gather_targets(sorted_idx, y.astype(np.uint8))   # classes 0 .. K-1
    w = np.empty(0)                                              # every weight 1 (or real weights)
    start, end, row = np.array([0]), np.array([len(y)]), np.array([0])   # one node: the root
    counts = segment_class_weights(sorted_idx, sorted_y, w, start, end, row, n_classes)
    record = new_split_record(n_features, 1)                     # filled by the search kernels
    find_best_splits_classification(
        sorted_x, sorted_idx, sorted_y, w, start, end, counts, np.ones((n_features, 1), np.uint8),
        CRITERION_ENTROPY, 1, 0.0, xlog2x_table(len(y)), 0.0, False,
        *unconstrained(), record)                                # no monotonicity constraints
    best = select_best_splits(record.children_impurity, record.gain, record.split_info,
                              record.n_branches, SELECT_IMPURITY)  # feature per node
    partition_segments(sorted_x, sorted_idx, sorted_y, start, end, best,
                       record.n_left[best, np.arange(len(best))], len(y))  # [0, k), [k, n)
    # ... level after level; then walk the node arrays (thresholds only) with
    leaf = apply_tree(X, children_left, children_right, feature, threshold,
                      *numeric_split_arrays(missing_branch))    # from record.missing_branch

Splits that are not a prefix of the split feature's row (categorical subsets, multiway splits,
missing rows going left) are moved with :func:`route_rows` then :func:`partition_segments_kway`;
:func:`partition_segments_bits` moves rows whose directions are known as one bit per row (e.g.
decided on another machine); :func:`relabel_rows` renumbers the rows so that every node holds the
ids of its own segment (the moves' lookups then stay in cache, for tens of millions of rows);
:class:`fasttree.splitter.ExactSplitter` shows every phase together.

``tests/test_kernels.py::test_public_kernels_grow_one_level_like_the_estimator`` runs this recipe;
``examples/plot_random_forest_kernels.py`` grows a whole random forest with it.
"""

from .._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
    SELECT_GAIN_RATIO,
    SELECT_IMPURITY,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
)
from .absolute_error import find_splits_absolute_error, node_target_ranks
from .apply import apply_tree, decision_paths, predict_fractional
from .categorical import categorical_split_maps, find_best_splits_categorical
from .criteria import (
    node_impurity,
    node_values,
    reciprocal_table,
    split_information,
    xlog2x_table,
)
from .discretize import entropy_cut_level
from .draws import child_keys, node_draws, root_key
from .forest_predict import forest_leaves, forest_values
from .monotonic import unconstrained
from .multi_output import find_splits_multioutput, segment_multi_stats
from .node_stats import segment_class_weights, segment_target_sums
from .partition import (
    left_rows_bits,
    partition_segments,
    partition_segments_bits,
    partition_segments_fractional,
    partition_segments_kway,
    relabel_rows,
)
from .presort import presort_features, presort_samples
from .random_split import find_random_splits_classification, find_random_splits_regression
from .routing import branch_of, check_tree, numeric_split_arrays, route_rows
from .split_record import SplitRecord, new_split_record, select_best_splits
from .split_search import (
    find_best_splits_classification,
    find_best_splits_gradient,
    find_best_splits_regression,
    gather_targets,
)

__all__ = [
    "CRITERION_ENTROPY",
    "CRITERION_GINI",
    "CRITERION_GRADIENT",
    "CRITERION_POISSON",
    "CRITERION_SQUARED_ERROR",
    "SELECT_GAIN_RATIO",
    "SELECT_IMPURITY",
    "SPLIT_MULTIWAY",
    "SPLIT_SUBSET",
    "SPLIT_THRESHOLD",
    "SplitRecord",
    "apply_tree",
    "branch_of",
    "categorical_split_maps",
    "check_tree",
    "child_keys",
    "decision_paths",
    "entropy_cut_level",
    "find_best_splits_categorical",
    "forest_leaves",
    "forest_values",
    "find_splits_absolute_error",
    "find_best_splits_classification",
    "find_best_splits_gradient",
    "find_best_splits_regression",
    "find_random_splits_classification",
    "find_random_splits_regression",
    "find_splits_multioutput",
    "node_draws",
    "root_key",
    "gather_targets",
    "left_rows_bits",
    "new_split_record",
    "node_impurity",
    "node_values",
    "node_target_ranks",
    "numeric_split_arrays",
    "partition_segments",
    "partition_segments_bits",
    "partition_segments_fractional",
    "partition_segments_kway",
    "predict_fractional",
    "presort_features",
    "presort_samples",
    "reciprocal_table",
    "relabel_rows",
    "route_rows",
    "segment_class_weights",
    "segment_multi_stats",
    "segment_target_sums",
    "select_best_splits",
    "split_information",
    "unconstrained",
    "xlog2x_table",
]

# Sparse (CSC) split search and CSR prediction: see fasttree.kernels.sparse and
# fasttree.sparse_splitter.SparseSplitter.
from .sparse import (  # noqa: E402
    apply_tree_csr,
    build_sparse_layout,
    decision_paths_csr,
    find_best_splits_sparse_classification,
    find_best_splits_sparse_regression,
    partition_sparse_segments,
    route_node_rows,
    sparse_node_stats,
    sparse_non_constant,
)

__all__ += [
    "apply_tree_csr",
    "build_sparse_layout",
    "decision_paths_csr",
    "find_best_splits_sparse_classification",
    "find_best_splits_sparse_regression",
    "partition_sparse_segments",
    "route_node_rows",
    "sparse_node_stats",
    "sparse_non_constant",
]

from .sparse import find_segments, segment_entries  # noqa: E402

__all__ += ["find_segments", "segment_entries"]

# The binned splitter's kernels (splitter="hist"): see fasttree.kernels.histogram and
# fasttree.hist_splitter.HistSplitter.
from .histogram import (  # noqa: E402
    bin_bounds,
    bin_codes,
    build_histograms,
    combine_histograms,
    find_best_splits_hist,
    partition_hist_segments,
    routed_child_stats,
)

__all__ += [
    "bin_bounds",
    "bin_codes",
    "build_histograms",
    "combine_histograms",
    "find_best_splits_hist",
    "partition_hist_segments",
    "routed_child_stats",
]
