"""Decision-tree estimators with scikit-learn's API."""

import dataclasses
import inspect
import math
import numbers
import warnings

import numpy as np

from . import _compile_ahead as compile_ahead
from . import depth_first
from ._base import BaseEstimator, numba_threads
from ._dtypes import CLASS_DTYPE, MAX_CLASSES
from ._encoding import encode, fit_categories, resolve_categorical
from ._frames import as_frame
from ._validation import (
    check_feature_names,
    check_sample_weight,
    check_sparse_X,
    check_X,
    check_y,
    is_dataframe,
    is_sparse,
)
from .grower import (
    BINNINGS,
    CATEGORICAL_SPLITS,
    CLASSIFICATION_CRITERIA,
    MISSING_MODES,
    REGRESSION_CRITERIA,
    SPLITTERS,
    GrowerParams,
    TreeGrower,
)
from .hist_splitter import HistSplitter
from .sparse_splitter import SparseSplitter
from .splitter import ExactSplitter
from .splitter_contract import NEEDS, refused_needs

_NO_DEPTH_LIMIT = np.iinfo(np.int32).max


def _encode_labels(column):
    """``np.unique(column, return_inverse=True)`` with int32 codes; integer labels spanning
    fewer than 2**16 values are counted instead of sorted, two neighbouring values taken as
    they are (O(n): the same classes and codes)."""
    if column.dtype.kind in "iu" and column.dtype != np.uint64 and column.size:
        low, high = int(column.min()), int(column.max())
        if high - low < 2**16:
            # one pass each (bincount takes int64 values from 0): no copy when they are that
            shifted = column if low == 0 and column.dtype == np.intp else np.subtract(
                column, low, dtype=np.intp)
            if high - low <= 1:  # the lowest and highest label are all the values there are
                return np.arange(low, high + 1).astype(column.dtype), shifted.astype(CLASS_DTYPE)
            present = np.flatnonzero(np.bincount(shifted, minlength=high - low + 1))
            classes = (present + low).astype(column.dtype)
            if present.size == high - low + 1:  # every value in between occurs: codes = shifted
                return classes, shifted.astype(CLASS_DTYPE)
            code_of = np.zeros(high - low + 1, dtype=CLASS_DTYPE)
            code_of[present] = np.arange(present.size, dtype=CLASS_DTYPE)
            return classes, code_of[shifted]
    try:
        classes, codes = np.unique(column, return_inverse=True)
    except TypeError:
        raise TypeError("y mixes label types that cannot be compared (e.g. str and "
                        "int).") from None
    return classes, codes.astype(CLASS_DTYPE)  # drops np.unique's int64 copy


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_random_state(random_state):
    """A numpy Generator from None, an int seed, a RandomState or a Generator."""
    if random_state is None or _is_int(random_state):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator; "
        f"got {random_state!r}.")


def _holdout(n_samples, y_codes, fraction, rng):
    """Row indices (train, validation), validation about ``fraction`` of the rows.

    Stratified when ``y_codes`` (encoded classes) is given: each class contributes the same share,
    rounded, and never all of its rows.
    """
    groups = [np.arange(n_samples)] if y_codes is None else [
        np.flatnonzero(y_codes == k) for k in range(int(y_codes.max()) + 1)]
    validation = []
    for rows in groups:
        n_val = min(int(round(fraction * rows.size)), rows.size - 1)
        validation.append(rng.permutation(rows)[:max(n_val, 0)])
    validation = np.sort(np.concatenate(validation))
    train = np.setdiff1d(np.arange(n_samples), validation, assume_unique=True)
    if validation.size == 0:
        raise ValueError(
            f"validation_fraction={fraction} of n_samples={n_samples} rows leaves no validation "
            "rows for reduced-error pruning.")
    return train, validation


def _power_of_two_scale(weight):
    """The power of two that brings the largest weight into [1, 2) (1 if all are 0)."""
    largest = float(weight.max()) if weight.size else 0.0
    if largest <= 0.0:
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(largest)[1]) - 1))


def accuracy(y, y_pred, sample_weight=None):
    """Mean (weighted) accuracy of ``y_pred``; with several outputs a row counts as correct when
    every output is (subset accuracy)."""
    if y_pred.ndim == 2:
        correct = np.all(y.reshape(y_pred.shape) == y_pred, axis=1).astype(np.float64)
    else:
        correct = (y.ravel() == y_pred).astype(np.float64)
    return float(np.average(correct, weights=sample_weight))


def r2(y, y_pred, sample_weight=None):
    """Coefficient of determination R² of ``y_pred`` averaged over outputs (1 for a perfect
    prediction of a constant target, else 0 there, as scikit-learn's ``r2_score``)."""
    y_pred = y_pred.reshape(y_pred.shape[0], -1)
    y = y.reshape(y_pred.shape)
    w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
    scores = []
    for k in range(y.shape[1]):
        residual = np.sum(w * (y[:, k] - y_pred[:, k]) ** 2)
        total = np.sum(w * (y[:, k] - np.average(y[:, k], weights=w)) ** 2)
        if total == 0.0:
            scores.append(1.0 if residual == 0.0 else 0.0)
        else:
            scores.append(1.0 - residual / total)
    return float(np.mean(scores))


def check_poisson_target(y, positive):
    """Poisson regression's checks of ``y`` (float64), in scikit-learn's words: its trees say
    the sum is not "positive", its forests not "strictly positive"."""
    if np.any(y < 0):
        raise ValueError("Some value(s) of y are negative which is not allowed for Poisson "
                         "regression.")
    if np.sum(y) <= 0:
        raise ValueError(f"Sum of y is not {positive} which is necessary for Poisson "
                         "regression.")


def without_friedman_mse(criterion):
    """``criterion``, with "friedman_mse" read as "squared_error" and a FutureWarning (as
    scikit-learn 1.9 does: the two always chose the same splits)."""
    if isinstance(criterion, str) and criterion == "friedman_mse":
        warnings.warn('Value `"friedman_mse"` for `criterion` is deprecated; it maps to '
                      '`"squared_error"` as both were always equivalent. Use '
                      '`criterion="squared_error"` to remove this warning.', FutureWarning,
                      stacklevel=3)
        return "squared_error"
    return criterion


def _as_table(X):
    """A DataFrame or anything with a shape as it is (its dtypes decide what is categorical);
    other array-likes (lists, objects with ``__array__``) as a NumPy array."""
    return X if is_dataframe(X) or hasattr(X, "shape") else np.asarray(X)


class _TableInput:
    """Input handling shared by the trees and the forests: ``fit``'s encoding of a table
    (categorical features learned from it) and prediction's validation against it.  Reads the
    ``categorical_features`` parameter; sets ``is_categorical_``, ``categories_``."""

    def _compile_ahead(self, X, n_outputs=1, n_classes=2, weighted=False, n_values=None):
        """At this process's first fit of its kind, start compiling the kind's kernels in a
        helper process if numba's cache lacks them (:mod:`fasttree._compile_ahead`).  A table
        with categorical columns takes the ``table`` kind's kernels, sparse input the
        ``sparse`` kind's; a plain tree's kind follows its targets (several outputs, weighted
        rows, more than two classes) when the caller knows them, and a plain two-class tree of
        fewer ``n_values`` (rows x features) than a tree grown depth first has takes the
        ``small`` kind's."""
        kind = self._first_fit_kind
        if is_sparse(X):
            kind = "sparse"
        elif kind in ("classifier", "regressor"):
            if self._has_categories(X):
                kind = "table"
            elif n_outputs > 1:
                kind = "several_outputs"
            elif kind == "classifier" and weighted:
                kind = "class_weight"
            elif kind == "classifier" and n_classes > 2:
                kind = "multiclass"
            elif (kind == "classifier" and n_values is not None
                  and depth_first.small_tree(n_values)):
                kind = "small"
        compile_ahead.start(kind)

    def _has_categories(self, X):
        """Whether ``X`` will have categorical features (named, or columns that are not
        numbers), from its dtypes alone."""
        named = self.categorical_features
        if named is not None and not (isinstance(named, str) and named == "from_dtype"):
            return True  # a list or mask (even an empty one: left to the encoding to check)
        dtypes = getattr(X, "dtypes", None)
        if dtypes is None:
            dtypes = [getattr(X, "dtype", np.dtype(float))]
        try:
            return any(np.dtype(dtype).kind not in "biufc" for dtype in dtypes)
        except TypeError:  # a dtype numpy does not know (pandas' category, string): a table
            return True

    def _encode_fit(self, X):
        """Validate ``X`` for fit, learn its categorical features and return the kernels' matrix
        (a float32 CSC matrix for sparse input)."""
        if is_sparse(X):
            if self.categorical_features not in (None, "from_dtype"):
                raise ValueError("Sparse X has no categorical features; pass "
                                 "categorical_features=None (or 'from_dtype').")
            X = check_sparse_X(X, fmt="csc")
            self.is_categorical_ = np.zeros(X.shape[1], dtype=bool)
            self.categories_ = [None] * X.shape[1]
            return X
        X = _as_table(as_frame(X))  # a polars or pyarrow table: converted once, here
        shape = X.shape
        if len(shape) != 2 or self.categorical_features is None:
            self.is_categorical_ = np.zeros(shape[1] if len(shape) == 2 else 0, dtype=bool)
            self.categories_ = [None] * self.is_categorical_.shape[0]
            return check_X(X, order="C")
        self.is_categorical_ = resolve_categorical(X, self.categorical_features, shape[1])
        if not self.is_categorical_.any():
            self.categories_ = [None] * shape[1]
            return check_X(X, order="C")
        if shape[0] == 0:
            return check_X(X, order="C")  # the usual message for empty input
        self.categories_ = fit_categories(X, self.is_categorical_)
        return encode(X, self.is_categorical_, self.categories_,
                      lambda part: check_X(part, order="C"))

    def _n_categories(self):
        return np.array([0 if c is None else max(len(c), 1) for c in self.categories_],
                        dtype=np.int64)

    def _set_feature_names(self, X):
        check_feature_names(self, X, reset=True)

    def _validate_X_predict(self, X):
        self._check_is_fitted()
        if is_sparse(X):  # the tree's CSR kernels take it as it is
            X = check_sparse_X(X, fmt="csr")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input.")
            return X
        check_feature_names(self, X, reset=False)
        X = _as_table(as_frame(X))
        shape = X.shape
        if len(shape) == 2 and shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input.")
        is_categorical = getattr(self, "is_categorical_", None)
        if len(shape) == 2 and shape[0] > 0 and is_categorical is not None and \
                is_categorical.any():
            return encode(X, self.is_categorical_, self.categories_,
                          lambda part: self._check_X_predict(part))
        X = self._check_X_predict(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input.")
        return X

    def _check_X_predict(self, X):
        """``check_X`` of the features that were numeric in fit (its messages say so)."""
        return check_X(X, order="C", fitted=True, categorical_features=self.categorical_features)


class _BaseDecisionTree(_TableInput, BaseEstimator):
    """Shared fit/validation logic of the classifier and the regressor."""

    _criteria = ()
    _min_branch_fraction = 0.0  # C4.5's minimum branch weight rule for thresholds: off

    @property
    def _first_fit_kind(self):
        """The kind of first fit (:data:`fasttree._warmup.KIND_NAMES`) nearest this estimator's
        on a numeric array: the kernels :mod:`fasttree._compile_ahead` may compile ahead."""
        splitter = getattr(self, "splitter", "best")
        if splitter in ("hist", "random"):
            return "hist" if splitter == "hist" else "extra_tree"
        if self._min_branch_fraction > 0 or self.missing == "fractional":
            return "c45"
        if self.monotonic_cst is not None:
            return "monotonic"
        if self.criterion in ("poisson", "absolute_error"):
            return self.criterion
        return "classifier" if isinstance(self, DecisionTreeClassifier) else "regressor"

    def _needs(self, categorical=False):
        """What the parameters (and ``categorical`` features of the data) need of a splitter,
        beyond numeric features and the basic criteria (names of
        :data:`fasttree.splitter_contract.NEEDS`)."""
        needs = ["categorical"] if categorical else []
        if self.criterion == "gain_ratio":
            needs.append("gain_ratio")
        if self.missing == "fractional" or self._min_branch_fraction > 0:
            needs.append("c45_rules")
        if self.criterion in ("poisson", "absolute_error"):
            needs.append(self.criterion)
        if self.monotonic_cst is not None:
            needs.append("monotonic_cst")
        return needs

    def _splitter_class(self, sparse):
        """The class of the splitter a fit grows through (:mod:`fasttree.splitter_contract`)."""
        if getattr(self, "splitter", None) == "hist":
            return HistSplitter
        return SparseSplitter if sparse else ExactSplitter

    def _refusals(self, capability, categorical=False):
        """What, among the parameters, keeps ``fit`` from taking ``capability``: ``"sparse"``
        (a scipy.sparse X) or ``"multi_output"`` (a y of several columns).

        The one rule behind ``fit``'s refusals and ``__sklearn_tags__`` (scikit-learn's checks
        read the tags to decide what to feed ``fit``): the capabilities of the splitter the fit
        would use, and the pruners, which read one output.

        ``categorical``: the data has categorical features (known once ``fit`` encoded them).

        Returns
        -------
        list of str
            One description per reason (empty: ``fit`` takes it).
        """
        if capability not in ("sparse", "multi_output"):
            raise ValueError(f"unknown capability {capability!r}")
        several_outputs = capability == "multi_output"
        splitter = self._splitter_class(sparse=not several_outputs)
        asked = "several_outputs" if several_outputs else "sparse"
        refused = [splitter.choice if need == asked else NEEDS[need]
                   for need in refused_needs(splitter, [asked] + self._needs(categorical),
                                             several_outputs=several_outputs)]
        if several_outputs and self.pruning not in (None, "cost_complexity"):
            # the training-count pruners and reduced-error pruning read one output
            refused.append(f"pruning={self.pruning!r}")
        return refused

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._refusals("sparse")
        tags.target_tags.multi_output = not self._refusals("multi_output")
        return tags

    def _check_y(self, y, n_samples, **kwargs):
        """``check_y`` taking several outputs exactly where ``fit`` grows them."""
        try:  # .shape, or __array__ (np.shape would call __array_function__)
            shape = y.shape if hasattr(y, "shape") else np.asarray(y).shape
        except (TypeError, ValueError):
            shape = ()  # check_y says what is wrong with it
        if len(shape) == 2 and shape[1] > 1:
            self._check_multi_output()
        return check_y(y, n_samples, estimator_name=type(self).__name__,
                       multi_output=not self._refusals("multi_output"), **kwargs)

    # -- hyperparameters -----------------------------------------------------------------------
    def _resolve_params(self, n_samples, n_features, total_weight, has_sample_weight):
        if self.criterion not in self._criteria:
            raise self._param_error("criterion", f"a str among {sorted(self._criteria)}")
        if self.splitter not in SPLITTERS:
            raise self._param_error("splitter", f"a str among {sorted(SPLITTERS)}")
        if self.max_depth is None:
            max_depth = _NO_DEPTH_LIMIT
        elif _is_int(self.max_depth) and self.max_depth >= 1:
            max_depth = int(self.max_depth)
        else:
            raise self._param_error("max_depth", "an int in the range [1, inf) or None")

        mss = self.min_samples_split
        if _is_int(mss) and mss >= 2:
            min_samples_split = int(mss)
        elif _is_real(mss) and not _is_int(mss) and 0.0 < mss <= 1.0:
            min_samples_split = max(2, math.ceil(mss * n_samples))
        else:
            raise self._param_error(
                "min_samples_split",
                "an int in the range [2, inf) or a float in the range (0.0, 1.0]")

        msl = self.min_samples_leaf
        if _is_int(msl) and msl >= 1:
            min_samples_leaf = int(msl)
        elif _is_real(msl) and not _is_int(msl) and 0.0 < msl < 1.0:
            min_samples_leaf = max(1, math.ceil(msl * n_samples))
        else:
            raise self._param_error(
                "min_samples_leaf",
                "an int in the range [1, inf) or a float in the range (0.0, 1.0)")

        mwf = self.min_weight_fraction_leaf
        if not (_is_real(mwf) and 0.0 <= mwf <= 0.5):
            raise self._param_error("min_weight_fraction_leaf",
                                    "a float in the range [0.0, 0.5]")
        min_weight_leaf = mwf * (total_weight if has_sample_weight else n_samples)

        mid = self.min_impurity_decrease
        if not (_is_real(mid) and mid >= 0.0):
            raise self._param_error("min_impurity_decrease", "a float in the range [0.0, inf)")

        mln = self.max_leaf_nodes
        if mln is not None and not (_is_int(mln) and mln >= 2):
            raise self._param_error("max_leaf_nodes", "an int in the range [2, inf) or None")
        if mln is not None and self.missing == "fractional":
            raise ValueError("max_leaf_nodes (best-first growth) cannot be combined with "
                             "missing='fractional'; grow level-wise (max_leaf_nodes=None).")

        mf = self.max_features
        if mf is None:
            max_features = n_features
        elif mf == "sqrt":
            max_features = max(1, int(math.sqrt(n_features)))
        elif mf == "log2":
            max_features = max(1, int(math.log2(n_features)))
        elif _is_int(mf) and 1 <= mf <= n_features:
            max_features = int(mf)
        elif _is_real(mf) and not _is_int(mf) and 0.0 < mf <= 1.0:
            max_features = max(1, int(mf * n_features))
        else:
            raise ValueError(
                f"The 'max_features' parameter of {type(self).__name__} must be None, 'sqrt', "
                f"'log2', an int in the range [1, n_features={n_features}] or a float in the "
                f"range (0.0, 1.0]. Got {mf!r} instead.")

        if self.missing not in MISSING_MODES:
            raise ValueError(f"missing must be one of {list(MISSING_MODES)}; got "
                             f"{self.missing!r}.")
        if self.categorical_split not in CATEGORICAL_SPLITS:
            raise ValueError(f"categorical_split must be one of {list(CATEGORICAL_SPLITS)}; got "
                             f"{self.categorical_split!r}.")

        max_bins, binning = self._check_binning()
        return GrowerParams(
            max_bins=max_bins,
            binning=binning,
            min_branch_fraction=self._min_branch_fraction,
            categorical_split=self.categorical_split,
            missing=self.missing,
            criterion=self.criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_leaf=float(min_weight_leaf),
            min_impurity_decrease=float(mid),
            max_leaf_nodes=None if mln is None else int(mln),
            max_features=max_features,
            splitter=self.splitter,
        )

    # -- fit ---------------------------------------------------------------------------------
    def _fit(self, X, y, sample_weight, *, n_classes, class_weights=None, offsets=None):
        """Grow (and prune) the tree.  ``y`` is 1-D, or (n_samples, n_outputs) float64 with the
        statistics ``offsets`` of several outputs (:mod:`fasttree.kernels.multi_output`)."""
        # the rows as given, for the folds that choose ccp_alpha (pruning="cost_complexity")
        cv_rows = (X, y, sample_weight, class_weights) if self._alpha_by_cv() else None
        n_samples, n_features = X.shape
        n_outputs = 1 if y.ndim == 1 else y.shape[1]
        self._check_splitter(is_sparse(X), n_outputs > 1)
        has_sample_weight = sample_weight is not None
        # every weight 1: nothing to scale or check (passes over the rows a large fit would
        # otherwise spend serially before the grower)
        unit_weight = sample_weight is None and class_weights is None
        # (not even a row of ones: 32 MB written at 4M rows, before the grower drops it)
        weight = None if unit_weight else check_sample_weight(sample_weight, n_samples)
        # Weights scaled by a power of two (exact) so that the largest is in [1, 2): the tree
        # is the same for any multiple 2**k of the weights, and squared weighted counts cannot
        # overflow.  C4.5's minimum branch weight (at most 25) is absolute: kept unscaled there.
        weight_scale = 1.0
        if not unit_weight:
            if self._min_branch_fraction == 0.0:
                weight_scale = _power_of_two_scale(weight)
            weight = weight / weight_scale
        if class_weights is not None:
            weight = weight * class_weights
            if not np.isfinite(weight).all():
                raise ValueError("sample_weight times class_weight overflows float64.")
        pruning = self._check_pruning()
        seed = self.random_state is None or _is_int(self.random_state)
        # a generator from a seed costs tens of microseconds: made only for a fit that draws
        rng = None if seed and pruning != "reduced_error" else _check_random_state(
            self.random_state)
        validation = None
        if pruning == "reduced_error":
            if weight is None:
                weight = np.ones(n_samples)
            train, held_out = _holdout(n_samples, y if n_classes else None,
                                       self.validation_fraction, rng)
            validation = (self._take_rows(X, held_out), y[held_out],
                          weight[held_out] * weight_scale)
            X, y, weight = self._take_rows(X, train), y[train], weight[train]
            n_samples = X.shape[0]
        params = self._resolve_params(n_samples, n_features,
                                      float(n_samples) if weight is None else weight.sum(),
                                      has_sample_weight)
        if rng is None and (params.max_features < n_features or params.splitter == "random"):
            rng = _check_random_state(self.random_state)
        if not unit_weight:
            positive = weight > 0.0
            if not positive.any():
                raise ValueError("The sample weights (times the class weights) of every row are "
                                 "zero; at least one must be positive.")
            if not positive.all():
                # scikit-learn's splitter never sees zero-weight rows: they count for nothing,
                # not even for min_samples_leaf or n_node_samples
                X = self._take_rows(X, positive)
                y, weight = y[positive], weight[positive]
            del positive  # a byte per row, not held through the fit
        if weight is not None and np.all(weight == 1.0):
            weight = None  # the grower's unit-weight fast path: integer counts, no weight reads
        multi_output = None if n_outputs == 1 else (np.ascontiguousarray(y, np.float64), offsets)
        monotonic_cst = self._check_monotonic_cst(n_features, n_classes)
        grower = TreeGrower(X, y, weight, params, n_classes=n_classes, rng=rng,
                            n_categories=self._n_categories(), multi_output=multi_output,
                            monotonic_cst=monotonic_cst,
                            splitter=self._make_splitter(X, y, weight, params, n_classes))
        with numba_threads(self.n_jobs):
            self.tree_ = grower.grow()
        self.tree_.weighted_n_node_samples *= weight_scale  # the user's scale
        self.fit_timings_ = dict(grower.timings)
        self.missing_in_fit_ = grower.missing_features
        self.n_features_in_ = n_features
        self.max_features_ = params.max_features
        self.n_outputs_ = n_outputs
        # subtree raising re-routes the training rows, weighted as the grower weighted them
        training = (X, y, weight * weight_scale if weight is not None else None)
        self.ccp_alpha_ = float(self.ccp_alpha) if cv_rows is None else self._cv_alpha(
            *cv_rows, n_classes=n_classes, offsets=offsets)
        self._prune(pruning, validation, training)
        return self

    def _take_rows(self, X, rows):
        """The rows of ``X`` selected by ``rows`` (a boolean mask, or row indices where ``X`` is
        in memory), as the grower takes them."""
        return X[rows] if is_sparse(X) else np.ascontiguousarray(X[rows])

    def _make_splitter(self, X, y, sample_weight, params, n_classes):
        """The grower's splitter, or None for the one it builds from ``X``: the hook of
        estimators whose ``X`` lives elsewhere (:mod:`fasttree.dask`)."""
        return None

    def _check_binning(self):
        """``max_bins`` and ``binning`` (read by ``splitter="hist"`` only, checked always)."""
        max_bins = getattr(self, "max_bins", 255)
        binning = getattr(self, "binning", "quantile")
        if not (_is_int(max_bins) and 2 <= max_bins <= 255):
            raise self._param_error("max_bins", "an int in the range [2, 255]")
        allowed = BINNINGS if self._estimator_type == "classifier" else ("quantile",)
        if binning not in allowed:
            raise self._param_error("binning", f"a str among {list(allowed)}")
        return int(max_bins), binning

    def _check_splitter(self, sparse, several_outputs):
        """Refuse what the fit's splitter does not take, naming the parameter."""
        splitter = self._splitter_class(sparse)
        needs = ["sparse"] * sparse + self._needs(bool(self.is_categorical_.any()))
        for need in refused_needs(splitter, needs, several_outputs=several_outputs):
            raise ValueError(f"{splitter.choice} does not take {NEEDS[need]}; "
                             f"{splitter.remedy}.")
        if self.criterion == "absolute_error" and (self.is_categorical_.any()
                                                   or self.missing == "fractional"):
            raise ValueError("criterion='absolute_error' takes numeric features and "
                             "missing='learn'.")

    def _check_monotonic_cst(self, n_features, n_classes):
        """The kernels' constraints (int8, on the fraction of class 0 for a classifier) from
        ``monotonic_cst``, or None; scikit-learn's checks and messages."""
        if self.monotonic_cst is None:
            return None
        cst = np.asarray(self.monotonic_cst)
        if cst.ndim != 1 or cst.shape[0] != n_features:
            raise ValueError(f"monotonic_cst has shape {cst.shape[0] if cst.ndim else cst.shape} "
                             f"but the input data X has {n_features} features.")
        if not np.all(np.isin(cst, (-1, 0, 1))):
            raise ValueError("monotonic_cst must be None or an array-like of -1, 0 or 1, but "
                             f"got {np.unique(cst)}")
        cst = cst.astype(np.int8)
        if n_classes is not None and n_classes > 2:
            raise ValueError("Monotonicity constraints are not supported with multiclass "
                             "classification")
        categorical = np.flatnonzero((cst != 0) & self.is_categorical_)
        if categorical.size:
            raise ValueError(f"monotonic_cst constrains the categorical feature(s) "
                             f"{categorical.tolist()}; constraints apply to numeric features.")
        if self.missing == "fractional":
            raise ValueError("monotonic_cst cannot be combined with missing='fractional'.")
        # constraints on the positive class's probability are constraints on class 0's, reversed
        return -cst if n_classes is not None else cst

    def _check_multi_output(self):
        """Several outputs are grown by the numeric kernels of one criterion: refuse the rest
        (:meth:`_refusals`, with the data's categorical features)."""
        for what in self._refusals("multi_output", bool(self.is_categorical_.any())):
            if what == "monotonic_cst":  # scikit-learn's wording, which its tests match
                raise ValueError("Monotonicity constraints are not supported with multiple "
                                 "outputs.")
            raise ValueError(f"y must be 1-D (n_samples,): {what} cannot be combined with "
                             "several outputs (y of shape (n_samples, n_outputs)).")

    def _check_pruning(self):
        rules = self._pruning_rules
        if self.pruning not in rules:
            raise ValueError(f"pruning must be one of {list(rules)}; got {self.pruning!r}.")
        if not (_is_real(self.ccp_alpha) and self.ccp_alpha >= 0.0):
            raise ValueError(f"ccp_alpha must be a float >= 0; got {self.ccp_alpha!r}.")
        vf = self.validation_fraction
        if self.pruning == "reduced_error" and not (_is_real(vf) and 0.0 < vf < 1.0):
            raise ValueError(f"validation_fraction must be a float in (0, 1); got {vf!r}.")
        if self._alpha_by_cv() and not (_is_int(self.ccp_folds) and self.ccp_folds >= 2):
            raise ValueError(f"ccp_folds must be an int >= 2; got {self.ccp_folds!r}.")
        return self.pruning

    def _alpha_by_cv(self):
        """Whether ``fit`` chooses ``ccp_alpha`` by cross-validation: ``pruning="cost_complexity"``
        with no ``ccp_alpha`` given (CART's way)."""
        return (self.pruning == "cost_complexity" and _is_real(self.ccp_alpha)
                and self.ccp_alpha == 0.0)

    def _cv_alpha(self, X, y, sample_weight, class_weights, *, n_classes, offsets):
        """The alpha :func:`fasttree.pruning.cross_validated_alpha` chooses for the full tree
        just grown from these rows (as ``_fit`` received them), on folds from ``random_state``."""
        from . import pruning as rules  # the pruning module imports this one

        return rules.cross_validated_alpha(
            self, X, y, sample_weight, class_weights, offsets, n_classes=n_classes,
            n_folds=int(self.ccp_folds), rng=_check_random_state(self.random_state)).alpha

    def _prune(self, pruning, validation, training):
        """Apply ccp_alpha, then the chosen post-pruning rule, to the freshly grown tree
        (``training``: the rows it was grown from, encoded, with their weights or None)."""
        from . import pruning as rules  # the pruning module imports this one

        if self.ccp_alpha_ > 0.0:
            self.tree_ = rules.cost_complexity_tree(self.tree_, self.ccp_alpha_)
        if pruning == "reduced_error":
            X_val, y_val, w_val = validation
            if self._estimator_type == "classifier":
                y_val = self.classes_[y_val]  # reduced_error takes labels, not codes
            self.tree_ = rules.reduced_error_tree(self, X_val, y_val, w_val)
        elif pruning == "error_based":
            rules._check_confidence(self.pruning_confidence)
            raising = getattr(self, "subtree_raising", False)  # C45Classifier's parameter
            if not isinstance(raising, (bool, np.bool_)):
                raise ValueError(f"subtree_raising must be a bool; got {raising!r}.")
            if raising:
                X, y, weight = training
                weight = np.ones(X.shape[0]) if weight is None else weight
                self.tree_ = rules.subtree_raising_tree(self, X, y, weight,
                                                        self.pruning_confidence)
            else:
                self.tree_ = rules.error_based_tree(self.tree_, self.pruning_confidence)
        elif pruning == "minimum_error":
            self.tree_ = rules.minimum_error(self).tree_
        elif pruning == "pessimistic":
            self.tree_ = rules.pessimistic(self).tree_

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """The minimal cost-complexity pruning path of the unpruned tree grown on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        path : fasttree.pruning.PruningPath
            ``ccp_alphas`` and ``impurities`` (also readable as ``path["ccp_alphas"]``), as
            scikit-learn's ``cost_complexity_pruning_path`` returns them.
        """
        from .pruning import cost_complexity_path

        unpruned = type(self)(**{**self.get_params(), "ccp_alpha": 0.0, "pruning": None})
        unpruned.fit(X, y, sample_weight)
        return cost_complexity_path(unpruned.tree_)

    # -- prediction ----------------------------------------------------------------------------
    def apply(self, X):
        """Index of the leaf each sample ends in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_leaves : ndarray of shape (n_samples,), int64
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            return self.tree_.apply(X).astype(np.int64)

    def decision_path(self, X):
        """Node indicator matrix: entry (i, j) is 1 when sample i passes through node j.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, node_count)
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            return self.tree_.decision_path(X)

    def get_depth(self):
        """Depth of the tree (a single leaf has depth 0)."""
        self._check_is_fitted()
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves of the tree."""
        self._check_is_fitted()
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Normalized total impurity decrease brought by each feature (Gini importance)."""
        self._check_is_fitted()
        return self.tree_.compute_feature_importances()

    def save(self, path):
        """Write the fitted estimator to a model file that :func:`fasttree.load` reads back.

        The file holds the tree's node arrays and JSON metadata (parameters, classes, feature
        names, categories; see ``docs/model_files.rst``); loading it executes nothing.

        Parameters
        ----------
        path : str, os.PathLike or writable binary file object
        """
        from .model_io import save

        save(self, path)

    def to_sklearn(self):
        """The same fitted tree as a scikit-learn ``DecisionTreeClassifier``/``Regressor``.

        See :func:`fasttree.interop.to_sklearn` (scikit-learn is imported only there).

        Returns
        -------
        sklearn_estimator : sklearn.tree.DecisionTreeClassifier or DecisionTreeRegressor
        """
        from .interop import to_sklearn

        return to_sklearn(self)


class DecisionTreeClassifier(_BaseDecisionTree):
    """An exact decision-tree classifier grown level by level with parallel numba kernels.

    Parameters follow :class:`sklearn.tree.DecisionTreeClassifier`; ``n_jobs`` is added.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "gain_ratio"}, default="gini"
        Impurity to minimise; "entropy" and "log_loss" are both Shannon entropy (bits).
        "gain_ratio" is C4.5's rule: information gain divided by split information, among the
        features whose gain reaches the average gain at the node; a numeric feature's gain is
        first charged ``log2(candidate thresholds) / node weight`` (C4.5's correction).
    splitter : {"best", "random", "hist"}, default="best"
        "best": every midpoint between two consecutive distinct values (more than 1e-7 apart)
        is a candidate.  "random": one threshold per feature and node, drawn uniformly between
        the node's smallest and largest value (extremely randomized trees); the draws come from
        ``random_state`` and do not depend on ``n_jobs``.  Categorical features are always
        searched exactly.  "hist": every column is first cut into at most ``max_bins`` bins
        and the candidates are the bin boundaries (LightGBM's and XGBoost's ``hist``; see
        ``max_bins`` and ``binning``); a column with at most ``max_bins`` distinct values gets
        one bin per value, so on such data the candidates are those of "best" and, when sums
        are exact (unit or integer weights, integer regression targets), so is the tree
        (otherwise rounding may break an exact tie between two candidates differently).
        Thresholds are in the original units.  It takes numeric features (with missing values,
        scikit-learn's rules), categorical features of at most 255 categories (their bins are
        the categories), one output, the gini, entropy, log_loss, gain_ratio and squared_error
        criteria.
    max_depth : int or None, default=None
        Maximum depth; None grows until the other rules stop it.
    min_samples_split : int or float, default=2
        Minimum rows to split a node (a float is a fraction of the rows, rounded up).
    min_samples_leaf : int or float, default=1
        Minimum rows in each child (a float is a fraction of the rows, rounded up).
    min_weight_fraction_leaf : float, default=0.0
        Minimum fraction of the total sample weight in each child.
    max_features : int, float, "sqrt", "log2" or None, default=None
        Features drawn at random for each node (non-constant ones, as scikit-learn does).
    random_state : int, numpy Generator or RandomState, or None, default=None
        Seeds the feature draws of ``max_features``.
    max_leaf_nodes : int or None, default=None
        Grow best-first (largest impurity improvement first) up to this many leaves.
    min_impurity_decrease : float, default=0.0
        A node is split only if ``N_t / N * (impurity - weighted children impurity)`` reaches this.
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied into the sample weights.
    n_jobs : int or None, default=None
        Threads for fit and predict; None or -1 means all cores.  The tree does not depend on it.
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning after growth (scikit-learn's meaning); 0 prunes nothing,
        except with ``pruning="cost_complexity"``, which then chooses it by cross-validation.
    ccp_folds : int, default=10
        Folds of that cross-validation (CART's 10; at least 2).
    pruning : {None, "cost_complexity", "reduced_error", "error_based", "minimum_error", \
"pessimistic"}, default=None
        Post-pruning rule applied in ``fit`` (see :mod:`fasttree.pruning`).  "cost_complexity"
        prunes at ``ccp_alpha``, or, when it is 0, at the alpha CART chooses (Breiman et al.
        1984): ``ccp_folds``-fold cross-validation (stratified for a classifier, folds drawn
        with ``random_state``) of the subtrees of the full tree's pruning path, each at
        ``sqrt(alpha_k alpha_{k+1})``, and the smallest subtree whose cross-validated error is
        within one standard error of the least (misclassification rate; squared, absolute
        error or half Poisson deviance for a regressor, by its criterion).  It grows
        ``ccp_folds`` more trees.  "reduced_error" grows on a stratified random
        ``1 - validation_fraction`` of the rows and prunes on the rest; the last three are
        C4.5-family rules on the training counts.
    validation_fraction : float, default=0.25
        Share of the rows held out (stratified, drawn with ``random_state``) for
        ``pruning="reduced_error"``.
    pruning_confidence : float, default=0.25
        C4.5's confidence factor ``CF`` for ``pruning="error_based"``.
    categorical_features : "from_dtype", None, or array-like of int, str or bool, \
default="from_dtype"
        Which features are categorical.  "from_dtype": the DataFrame columns of pandas
        ``category``, object, string and bool dtypes (and the columns of an object array that
        hold non-numbers); otherwise the indices, names or a boolean mask of the categorical
        features (for NumPy input, any values: integer codes, strings).  The categories are the
        distinct training values; predict accepts the same dtypes and categories never seen.
    categorical_split : {"binary", "multiway"}, default="binary"
        "binary" (CART): the best subset of categories goes left; exact for two classes and
        regression (categories ordered by class share or mean, Breiman's shortcut), with more
        classes the best of the orders by each class's share.  "multiway" (ID3/C4.5): one
        child per category present at the node, valid when at least two children hold
        ``min_samples_leaf`` rows; the feature is not split on again below.  A category that
        never reached a node in training goes to the child with the most training weight.
    missing : {"learn", "fractional"}, default="learn"
        Missing values (NaN, None, pandas NA).  "learn" (scikit-learn's semantics): every
        candidate split is tried with the missing rows on each side and the better side is
        stored; where no missing value reached a node in training, missing rows go to the
        child with more rows.  "fractional" (C4.5): a split is chosen on the rows with a known
        value, its gain scaled by their weighted share; a row missing the split value goes down
        every branch with weight proportional to the branch's known weight, and predictions mix
        the leaves it reaches with the same weights.
    monotonic_cst : array-like of int of shape (n_features,), default=None
        Monotonicity constraint of each feature, as in scikit-learn: 1 increasing, -1
        decreasing, 0 none (None: no constraints).  A split on a constrained feature is kept only
        if its children's values are ordered accordingly and inside the range left by the
        splits above; every node's value is clipped to its range
        (:mod:`fasttree.kernels.monotonic`).  The value is the predicted probability of the
        positive class (binary classification only), the mean, or the median
        (``absolute_error``).  Not with several outputs, on categorical features, or with
        ``missing='fractional'``.
    max_bins : int, default=255
        ``splitter="hist"``: value bins per feature, 2 to 255 (missing values get a bin of
        their own).  Bins are chosen from 200,000 sampled rows (every row when there are fewer,
        and for every column with at most ``max_bins`` distinct values).
    binning : {"quantile", "entropy"}, default="quantile"
        ``splitter="hist"``: "quantile" cuts each column at the quantiles of its values (one bin
        per distinct value when there are at most ``max_bins``); "entropy" (classification)
        cuts it where the class entropy drops most, recursively, until Fayyad and Irani's MDL
        criterion stops (:class:`fasttree.preprocessing.EntropyDiscretizer`), at most
        ``max_bins`` bins.

    Attributes
    ----------
    tree_ : fasttree.tree.Tree
        The fitted tree's node arrays.
    classes_ : ndarray of shape (n_classes,), or a list of them (one per output)
    n_classes_ : int, or ndarray of int (one per output)
    n_outputs_ : int
        1, or the number of columns of a 2-D ``y`` (several outputs share one tree; a node's
        impurity is the mean of its outputs' impurities, as in scikit-learn).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape ``(n_features_in_,)``
        Only when ``X`` was a DataFrame with string column names.
    max_features_ : int
    fit_timings_ : dict
        Seconds per phase of the last fit (``presort``, ``search``, ``partition``, ...; a
        tree of fewer rows x features than :data:`fasttree.depth_first.SMALL_TREE_WORK`, grown
        depth first: ``layout``, ``grow``, ``build``) and ``total``; not pickled, so that
        identical fits serialize to identical bytes.
    is_categorical_ : ndarray of shape ``(n_features_in_,)``, bool
    categories_ : list of ndarray or None
        The categories of each categorical feature (code ``i`` is ``categories_[f][i]``).
    missing_in_fit_ : ndarray of shape ``(n_features_in_,)``, bool
        Features that had missing values in the training data.
    ccp_alpha_ : float
        The alpha the tree was pruned at: ``ccp_alpha``, or the one chosen by cross-validation
        (``pruning="cost_complexity"`` with ``ccp_alpha=0``).

    Notes
    -----
    Ties between candidate splits go to the lowest feature index, then the lowest threshold;
    scikit-learn breaks them by a random feature order.  Every midpoint between distinct float32
    values is a candidate (scikit-learn ignores gaps below 1e-7).
    """

    _estimator_type = "classifier"
    _criteria = tuple(CLASSIFICATION_CRITERIA)
    _pruning_rules = (None, "cost_complexity", "reduced_error", "error_based", "minimum_error",
                      "pessimistic")

    def __init__(
        self,
        *,
        criterion="gini",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        class_weight=None,
        n_jobs=None,
        ccp_alpha=0.0,
        ccp_folds=10,
        pruning=None,
        validation_fraction=0.25,
        pruning_confidence=0.25,
        categorical_features="from_dtype",
        categorical_split="binary",
        missing="learn",
        monotonic_cst=None,
        max_bins=255,
        binning="quantile",
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.ccp_alpha = ccp_alpha
        self.ccp_folds = ccp_folds
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.pruning_confidence = pruning_confidence
        self.categorical_features = categorical_features
        self.categorical_split = categorical_split
        self.missing = missing
        self.monotonic_cst = monotonic_cst
        self.max_bins = max_bins
        self.binning = binning

    def fit(self, X, y, sample_weight=None):
        """Grow the tree from training data.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features, converted to float32.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels (numbers or strings); one column per output for several outputs.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; None gives every row weight 1.

        Returns
        -------
        self
        """
        X_checked = self._encode_fit(X)
        targets, n_classes, offsets, codes = self._encode_targets(y, X_checked.shape[0])
        weights = self._class_weight_rows(self.class_weight, codes)
        # after the targets' encoding (no kernel): their outputs, classes and weights name the
        # kernels a first fit will compile
        self._compile_ahead(X, len(codes), n_classes,
                            weights is not None or sample_weight is not None,
                            X_checked.shape[0] * X_checked.shape[1])
        self._set_feature_names(X)
        return self._fit(X_checked, targets, sample_weight, n_classes=n_classes,
                         class_weights=weights, offsets=offsets)

    def _encode_targets(self, y, n_samples):
        """Check ``y`` and encode its labels; sets ``classes_`` and ``n_classes_``.

        Returns
        -------
        targets : ndarray
            int32 codes (one output), or (n_samples, n_outputs) float64 codes.
        n_classes : int
            The kernels' number of classes (the largest of the outputs').
        offsets : ndarray of int64 or None
            Each output's first column in the node statistics (several outputs).
        codes : list of ndarray
            Each output's int32 codes.
        """
        y = self._check_y(y, n_samples, regression=False)
        columns = [y] if y.ndim == 1 else [y[:, k] for k in range(y.shape[1])]
        class_weight = self.class_weight
        if y.ndim == 2 and class_weight not in (None, "balanced", "balanced_subsample") and (
                not isinstance(class_weight, list) or len(class_weight) != y.shape[1]):
            raise ValueError("number of elements in class_weight should match number of outputs.")
        classes, codes = [], []
        for column in columns:
            if column.dtype.kind == "f" and not np.all(np.mod(column, 1) == 0):
                raise ValueError(
                    "Unknown label type: continuous values in y. Use a regressor for a "
                    "continuous target.")
            classes_k, codes_k = _encode_labels(column)
            if classes_k.shape[0] > MAX_CLASSES:
                raise ValueError(f"y has {classes_k.shape[0]} classes; fasttree supports at most "
                                 f"{MAX_CLASSES}.")
            classes.append(classes_k)
            codes.append(codes_k)
        n_classes = np.array([c.shape[0] for c in classes], dtype=np.intp)
        if y.ndim == 1:
            self.classes_ = classes[0]
            self.n_classes_ = int(n_classes[0])
            return codes[0], self.n_classes_, None, codes
        self.classes_ = classes
        self.n_classes_ = n_classes
        offsets = np.concatenate([[0], np.cumsum(n_classes)]).astype(np.int64)
        return (np.stack(codes, axis=1).astype(np.float64), int(n_classes.max()), offsets,
                codes)

    def _class_weight_rows(self, class_weight, codes, sample_weight=None):
        """Each row's weight from ``class_weight`` (the product over outputs), or None.

        ``sample_weight`` weighs the class frequencies behind ``"balanced"`` (the forests').
        """
        classes = self.classes_ if isinstance(self.classes_, list) else [self.classes_]
        weights = None
        for k, codes_k in enumerate(codes):
            cw = class_weight[k] if isinstance(class_weight, list) else class_weight
            w_k = self._expand_class_weight(cw, classes[k], codes_k, sample_weight)
            if w_k is not None:
                weights = w_k if weights is None else weights * w_k
        return weights

    @staticmethod
    def _expand_class_weight(cw, classes, y_encoded, sample_weight=None):
        """Per-row weights of one output's ``class_weight`` (None: no weighting)."""
        if cw is None:
            return None
        if cw == "balanced":
            counts = np.bincount(y_encoded, weights=sample_weight, minlength=classes.shape[0])
            per_class = counts.sum() / (classes.shape[0] * counts)
            return per_class[y_encoded]
        if isinstance(cw, dict):
            unknown = [c for c in cw if c not in set(classes.tolist())]
            if unknown:
                raise ValueError(f"class_weight names classes not in y: {unknown}.")
            per_class = np.array([float(cw.get(c, 1.0)) for c in classes.tolist()])
            if (per_class < 0).any() or not np.isfinite(per_class).all():
                raise ValueError("class_weight values must be finite and non-negative.")
            return per_class[y_encoded]
        raise ValueError(f"class_weight must be None, 'balanced' or a dict; got {cw!r}.")

    def predict_proba(self, X):
        """Class probabilities: the weighted class fractions of each sample's leaf.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), float64, or a list of them
            One array per output when the tree has several outputs (scikit-learn's layout).
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            return self._proba(X)

    def _proba(self, X):
        """:meth:`predict_proba` of validated ``X``, on the threads already set."""
        if self.n_outputs_ == 1:
            return self.tree_.predict_value(X)
        proba = self.tree_.value[self.tree_.apply(X)]
        return [proba[:, k, :n] for k, n in enumerate(self.n_classes_)]

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for a zero probability)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            if isinstance(proba, list):
                return [np.log(p) for p in proba]
            return np.log(proba)

    def predict(self, X):
        """Most probable class of each sample (ties to the first class in ``classes_``).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), or (n_samples, n_outputs) for several outputs
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            if self.tree_.fractional_missing:
                return self.classes_[np.argmax(self.tree_.predict_value(X), axis=1)]
            leaves = self.tree_.apply(X)
        if self.n_outputs_ == 1:
            # one argmax per node instead of one per row
            node_class = np.argmax(self.tree_.value[:, 0, :], axis=1)
            return self.classes_[node_class[leaves]]
        y_pred = np.empty((leaves.shape[0], self.n_outputs_), dtype=self.classes_[0].dtype)
        for k in range(self.n_outputs_):
            node_class = np.argmax(self.tree_.value[:, k, :self.n_classes_[k]], axis=1)
            y_pred[:, k] = self.classes_[k][node_class[leaves]]
        return y_pred

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on the given data (weighted if ``sample_weight`` is given); with several
        outputs a row counts as correct when every output is (subset accuracy)."""
        y_pred = self.predict(X)
        return accuracy(check_y(y, y_pred.shape[0], regression=False, multi_output=True), y_pred,
                        sample_weight)


class DecisionTreeRegressor(_BaseDecisionTree):
    """An exact decision-tree regressor grown level by level with parallel numba kernels.

    Parameters follow :class:`sklearn.tree.DecisionTreeRegressor`; ``n_jobs`` is added.  See
    :class:`DecisionTreeClassifier` for the meaning of the shared parameters.

    Parameters
    ----------
    criterion : {"squared_error", "absolute_error", "poisson"}, default="squared_error"
        "squared_error": variance reduction, leaves predict the weighted mean.
        "absolute_error": total absolute deviation from the median, leaves predict the weighted
        median.  "poisson": half the Poisson deviance (y must be non-negative with a positive
        sum; no child may have a zero target sum).  "friedman_mse" is accepted with a
        FutureWarning and means "squared_error" (as in scikit-learn 1.9).
    splitter : {"best", "random", "hist"}, default="best"
        As in :class:`DecisionTreeClassifier`.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_features,
    random_state, max_leaf_nodes, min_impurity_decrease, n_jobs, ccp_alpha, ccp_folds,
    validation_fraction, categorical_features, categorical_split, missing, monotonic_cst, max_bins
        As in :class:`DecisionTreeClassifier`.
    binning : {"quantile"}, default="quantile"
        As in :class:`DecisionTreeClassifier` (entropy binning needs classes).
    pruning : {None, "cost_complexity", "reduced_error"}, default=None
        Post-pruning rule applied in ``fit``; "cost_complexity" without ``ccp_alpha`` chooses it
        by cross-validation as in :class:`DecisionTreeClassifier`, judged by the criterion's
        loss (squared error, absolute error, half Poisson deviance); reduced-error pruning uses
        squared error on a random ``validation_fraction`` of the rows.

    Attributes
    ----------
    ccp_alpha_ : float
        As in :class:`DecisionTreeClassifier`; the other fitted attributes too.
    """

    _estimator_type = "regressor"
    _criteria = REGRESSION_CRITERIA
    _pruning_rules = (None, "cost_complexity", "reduced_error")

    def __init__(
        self,
        *,
        criterion="squared_error",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        n_jobs=None,
        ccp_alpha=0.0,
        ccp_folds=10,
        pruning=None,
        validation_fraction=0.25,
        categorical_features="from_dtype",
        categorical_split="binary",
        missing="learn",
        monotonic_cst=None,
        max_bins=255,
        binning="quantile",
    ):
        self.criterion = without_friedman_mse(criterion)
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.n_jobs = n_jobs
        self.ccp_alpha = ccp_alpha
        self.ccp_folds = ccp_folds
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.categorical_features = categorical_features
        self.categorical_split = categorical_split
        self.missing = missing
        self.monotonic_cst = monotonic_cst
        self.max_bins = max_bins
        self.binning = binning

    def fit(self, X, y, sample_weight=None):
        """Grow the tree from training data.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features (NaN or None for a missing value) and categorical ones.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Finite numeric target(s).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        X_checked = self._encode_fit(X)
        y, _, offsets, _ = self._encode_targets(y, X_checked.shape[0])
        self._compile_ahead(X, 1 if y.ndim == 1 else y.shape[1])
        self._set_feature_names(X)
        return self._fit(X_checked, y, sample_weight, n_classes=None, offsets=offsets)

    def _encode_targets(self, y, n_samples):
        """Check ``y``; returns it (float64) with the kernels' ``n_classes`` (None), the
        statistics offsets of several outputs (or None) and no codes."""
        y = self._check_y(y, n_samples, regression=True, check_length=self.criterion != "poisson")
        if self.criterion == "poisson":  # before the length check, as scikit-learn does
            check_poisson_target(y, "positive")
            y = self._check_y(y, n_samples, regression=True)
        # statistics per output: [w, sum w*y, c], or 4 columns for absolute error
        width = 4 if self.criterion == "absolute_error" else 3
        offsets = None if y.ndim == 1 else width * np.arange(y.shape[1] + 1, dtype=np.int64)
        return y, None, offsets, None

    def predict(self, X):
        """Weighted mean target of each sample's leaf.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), float64
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            return self._predict_values(X)

    def _predict_values(self, X):
        """:meth:`predict` of validated ``X``, on the threads already set."""
        if self.n_outputs_ == 1:
            return self.tree_.predict_value(X)[:, 0]
        return self.tree_.value[self.tree_.apply(X), :, 0]

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R² of the prediction (averaged over outputs)."""
        y_pred = self.predict(X).reshape(len(X) if not hasattr(X, "shape") else X.shape[0], -1)
        return r2(check_y(y, y_pred.shape[0], regression=True, multi_output=True), y_pred,
                  sample_weight)


class ID3Classifier(DecisionTreeClassifier):
    """Quinlan's ID3: information gain, one branch per category, no pruning.

    A :class:`DecisionTreeClassifier` with ``criterion="entropy"`` and
    ``categorical_split="multiway"``: a categorical feature splits a node into one child per
    category present there (and is not used again below); a numeric feature splits on the best
    threshold.  Categorical features are found from the dtypes of a DataFrame by default.

    Parameters
    ----------
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
        For a multiway split: at least two branches must hold this many rows (C4.5's rule).
    categorical_features : "from_dtype", None, or indices, names or a boolean mask
        See :class:`DecisionTreeClassifier`.
    missing : {"learn", "fractional"}, default="learn"
        Treatment of missing values (see :class:`DecisionTreeClassifier`).
    n_jobs : int or None, default=None
    """

    def __init__(self, *, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 categorical_features="from_dtype", missing="learn", n_jobs=None):
        super().__init__(criterion="entropy", max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         categorical_features=categorical_features, categorical_split="multiway",
                         missing=missing, n_jobs=n_jobs)


class C45Classifier(DecisionTreeClassifier):
    """Quinlan's C4.5: gain ratio, one branch per category, fractional missing values, pruning.

    A :class:`DecisionTreeClassifier` with ``criterion="gain_ratio"`` (C4.5's average-gain
    filter, and ``log2(candidate thresholds) / N`` charged to numeric splits),
    ``categorical_split="multiway"``, ``missing="fractional"`` (a row missing a split value goes
    down every branch with a share of its weight, in training and prediction) and C4.5's
    error-based pruning (``pruning="error_based"``, with J48's subtree raising by default).  As
    in C4.5, each side of a threshold must weigh at least ``min(25, 0.1 * w / n_classes)``
    (``w``: the node's weight with a known value), and ``min_samples_leaf``.

    Parameters
    ----------
    pruning_confidence : float, default=0.25
        C4.5's confidence factor ``CF``; smaller prunes more.
    subtree_raising : bool, default=True
        Prune as J48 does by default (and Quinlan's C4.5): collapse subtrees that do not lower
        the training errors, then at each node also try raising its largest branch in its place
        (:func:`fasttree.pruning.error_based`).  False: subtree replacement alone, J48's ``-S``.
    min_samples_leaf : int or float, default=2
        C4.5's ``MINOBJS``: the weight each side of a threshold must hold (a float: that share of
        the training weight); at least two branches of a multiway split must hold it, and a node
        weighing less than twice it is a leaf.  Weight, not rows, as in Quinlan's C4.5 and J48's
        ``minNumObj``: a row of weight 3 counts as three rows.
    max_depth : int or None, default=None
    categorical_features : "from_dtype", None, or indices, names or a boolean mask
        See :class:`DecisionTreeClassifier`.
    n_jobs : int or None, default=None
    """

    _min_branch_fraction = 0.1  # each side of a threshold: min(25, 0.1 * known weight / classes)

    def __init__(self, *, pruning_confidence=0.25, subtree_raising=True, min_samples_leaf=2,
                 max_depth=None, categorical_features="from_dtype", n_jobs=None):
        super().__init__(criterion="gain_ratio", max_depth=max_depth,
                         min_samples_leaf=min_samples_leaf, pruning="error_based",
                         pruning_confidence=pruning_confidence,
                         categorical_features=categorical_features, categorical_split="multiway",
                         missing="fractional", n_jobs=n_jobs)
        self.subtree_raising = subtree_raising

    def _resolve_params(self, n_samples, n_features, total_weight, has_sample_weight):
        params = super()._resolve_params(n_samples, n_features, total_weight, has_sample_weight)
        # MINOBJS is a minimum weight: with unit weights the kernels turn it into the same row
        # minimum, with weights a row of weight 3 counts as three copies of it
        msl = self.min_samples_leaf
        min_weight = float(msl) if _is_int(msl) else msl * total_weight
        return dataclasses.replace(params, min_samples_leaf=1,
                                   min_weight_leaf=max(params.min_weight_leaf, min_weight))


def _with_defaults(base, **defaults):
    """``base.__init__`` with other defaults, keeping the explicit signature ``get_params``
    reads (scikit-learn's estimators may not take ``**kwargs``)."""
    signature = inspect.signature(base.__init__)
    params = [p.replace(default=defaults.get(p.name, p.default))
              for p in signature.parameters.values()]

    def __init__(self, *args, **kwargs):
        for name, value in defaults.items():
            kwargs.setdefault(name, value)
        base.__init__(self, *args, **kwargs)

    __init__.__signature__ = signature.replace(parameters=params)
    return __init__


class ExtraTreeClassifier(DecisionTreeClassifier):
    """An extremely randomized tree classifier (scikit-learn's ``ExtraTreeClassifier``).

    A :class:`DecisionTreeClassifier` with ``splitter="random"`` and ``max_features="sqrt"`` by
    default: at each node, every drawn feature gets one threshold drawn uniformly between its
    smallest and largest value in the node, and the best of those splits is kept.  The draws
    come from ``random_state`` and do not depend on ``n_jobs``.  Meant as a building block of
    ensembles; alone it overfits less than it underfits.  Parameters as in
    :class:`DecisionTreeClassifier`.
    """

    __init__ = _with_defaults(DecisionTreeClassifier, splitter="random", max_features="sqrt")


class ExtraTreeRegressor(DecisionTreeRegressor):
    """An extremely randomized tree regressor (scikit-learn's ``ExtraTreeRegressor``).

    A :class:`DecisionTreeRegressor` with ``splitter="random"`` (and, like scikit-learn's,
    ``max_features=1.0``).  Parameters as in :class:`DecisionTreeRegressor`.
    """

    __init__ = _with_defaults(DecisionTreeRegressor, splitter="random", max_features=1.0)
