"""Random forests and extra-trees ensembles with scikit-learn's API.

Each tree draws its bootstrap sample as small integer counts.  Extra trees and random forests
(numeric features, one output, no constraints) grow depth first, one tree per thread, on
their samples' row ids (:mod:`fasttree.depth_first`); the other forests' samples are presorted
into one layout (:meth:`fasttree.splitter.ExactSplitter.from_samples`) and one
:class:`~fasttree.grower.TreeGrower` grows every tree of that layout level by level, each
kernel call serving the open nodes of all of them.  Either way a large table's trees grow a few
at a time (a batch bounded by :data:`LAYOUT_BUDGET`), a small table's all at once.

Draws follow scikit-learn's: the same ``random_state`` gives each tree the same seed, the same
bootstrap rows (``estimators_samples_``) and out-of-bag rows as scikit-learn's forest.  Tree
``k`` is the :class:`~fasttree.DecisionTreeClassifier` (or regressor) with
``random_state=estimators_[k].random_state`` fitted on all rows with the bootstrap counts as
sample weights (with entropy, up to exact ties between candidate splits, which the counts' table
and the weights' formula may round apart: ``docs/forests.rst``).
"""

import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from . import depth_first
from ._base import BaseEstimator, numba_threads
from ._validation import check_sample_weight, check_y, is_sparse
from .estimators import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    _is_int,
    _is_real,
    _power_of_two_scale,
    _TableInput,
    _with_defaults,
    accuracy,
    check_poisson_target,
    r2,
    without_friedman_mse,
)
from .grower import TreeGrower
from .packed_forest import PackedForest, packs
from .splitter import ExactSplitter

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier",
           "ExtraTreesRegressor", "RandomTreesEmbedding"]

MAX_INT = np.iinfo(np.int32).max  # the range of the trees' seeds (scikit-learn's)
# Bytes of presorted layout (values, row ids and labels) the trees growing together may hold,
# at least: X's own size if larger.  A table of 800,000 x 20 grows one tree at a time (a peak
# of about 2 X.nbytes above X), 20,000 x 20 about thirty (a level's fixed costs shared).
LAYOUT_BUDGET = 64 * 2**20
# each forest's trees packed for prediction, with the trees they were packed from: beside the
# forest, not in it (predicting leaves the estimator's __dict__ as it was, and pickles hold none)
_PACKED = weakref.WeakKeyDictionary()
# what every tree shares with the forest's fit (encodings, classes, shapes)
_SHARED_FITTED = ("classes_", "n_classes_", "n_outputs_", "n_features_in_", "feature_names_in_",
                  "is_categorical_", "categories_", "max_features_", "missing_in_fit_")
# the forest's parameters each tree takes as they are
_TREE_PARAMS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                "min_impurity_decrease", "ccp_alpha", "monotonic_cst", "categorical_features",
                "categorical_split", "missing", "n_jobs")


def _seed_source(random_state):
    """scikit-learn's ``check_random_state`` (the global RandomState for None), also taking a
    numpy Generator (one draw seeds a RandomState)."""
    if random_state is None:
        return np.random.mtrand._rand
    if _is_int(random_state):
        return np.random.RandomState(random_state)
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(random_state.integers(MAX_INT))
    raise ValueError(f"random_state must be None, an int, a numpy RandomState or Generator; "
                     f"got {random_state!r}.")


def sample_indices(seed, n_samples, n_draws, weight=None):
    """The rows a tree of seed ``seed`` draws with replacement: scikit-learn's bootstrap draws
    (``weight``, if given, makes a row's chance proportional to it).

    Returns
    -------
    ndarray of shape (n_draws,), int32
    """
    draws = np.random.RandomState(seed)
    if weight is None:
        return draws.randint(0, n_samples, n_draws, dtype=np.int32)  # scikit-learn's draws
    return draws.choice(n_samples, n_draws, replace=True, p=weight / weight.sum()).astype(
        np.int32)


def _drawn_ahead(seeds, draw):
    """``(seed, draw(seed))`` for each seed in order, drawn by as many threads as numba uses
    (NumPy's draws and counts release the GIL), a thread's worth of seeds ahead at most."""
    n_threads = numba.get_num_threads()
    if n_threads == 1 or len(seeds) == 1:
        for seed in seeds:
            yield seed, draw(seed)
        return
    with ThreadPoolExecutor(n_threads) as pool:
        for start in range(0, len(seeds), n_threads):
            chunk = seeds[start:start + n_threads]
            yield from zip(chunk, pool.map(draw, chunk))


def _balanced_subsample(codes, drawn):
    """``class_weight="balanced_subsample"``: each row's class weight from its classes'
    frequencies among the ``drawn`` rows (repeats counted; 0 for a class not drawn), the product
    over outputs."""
    weight = None
    for codes_k in codes:
        n_drawn = np.bincount(codes_k[drawn], minlength=int(codes_k.max()) + 1)
        present = n_drawn > 0
        per_class = np.zeros(n_drawn.shape[0])
        per_class[present] = drawn.shape[0] / (present.sum() * n_drawn[present])
        weight = per_class[codes_k] if weight is None else weight * per_class[codes_k]
    return weight


def _copy_fitted(source, target):
    """Give ``target`` the fitted attributes of :data:`_SHARED_FITTED` that ``source`` has."""
    for name in _SHARED_FITTED:
        if hasattr(source, name):
            setattr(target, name, getattr(source, name))


def _store_params(estimator, params):
    """Set each ``__init__`` argument (``locals()`` there) as the attribute of its name, as
    scikit-learn's estimators do."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _BaseForest(_TableInput, BaseEstimator):
    """Parameter checks, growth and prediction shared by the four forests."""

    _fitted_attribute = "estimators_"
    _multi_output = True
    _accepts_sparse = True  # densified: the trees are grown from the presorted dense columns
    _tree_class = None  # the trees' estimator class

    @property
    def _first_fit_kind(self):
        """The kind of first fit whose kernels :mod:`fasttree._compile_ahead` may compile ahead
        (:data:`fasttree._warmup.KIND_NAMES`)."""
        extra = issubclass(self._tree_class, (ExtraTreeClassifier, ExtraTreeRegressor))
        return "extra_trees" if extra else "forest"

    def __len__(self):
        """The number of fitted trees."""
        return len(self.estimators_)

    def __getitem__(self, index):
        """The fitted tree(s) at ``index``."""
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)

    @property
    def estimator(self):
        """The kind of tree the forest grows (scikit-learn's forests' ``estimator``)."""
        return self._tree_class()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        return tags

    def _make_tree(self, random_state=None):
        params = {name: getattr(self, name) for name in _TREE_PARAMS if hasattr(self, name)}
        return self._tree_class(**params, random_state=random_state)

    def _check_forest_params(self):
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise self._param_error("n_estimators", "an int in the range [1, inf)")
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise self._param_error("bootstrap", "an instance of 'bool'")
        if not (isinstance(self.oob_score, (bool, np.bool_)) or callable(self.oob_score)):
            raise self._param_error("oob_score", "an instance of 'bool' or a callable")
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise self._param_error("warm_start", "an instance of 'bool'")
        if not (_is_int(self.verbose) or isinstance(self.verbose, (bool, np.bool_))) or \
                self.verbose < 0:
            raise self._param_error("verbose", "an int in the range [0, inf)")
        ms = self.max_samples
        if not (ms is None or (_is_int(ms) and ms >= 1)
                or (_is_real(ms) and not _is_int(ms) and ms > 0.0)):
            raise self._param_error("max_samples", "None, a float in the range (0.0, inf) or an "
                                    "int in the range [1, inf)")
        if not self.bootstrap and ms is not None:
            raise ValueError("`max_sample` cannot be set if `bootstrap=False`. Either switch to "
                             "`bootstrap=True` or set `max_sample=None`.")
        if not self.bootstrap and self.oob_score:
            raise ValueError("Out of bag estimation only available if bootstrap=True")

    def _n_draws(self, n_samples, weight):
        """Rows each tree draws (scikit-learn's ``max_samples``: a fraction of the total weight)."""
        ms = self.max_samples
        if ms is None:
            return n_samples
        if _is_int(ms):
            return int(ms)
        total = n_samples if weight is None else float(weight.sum())
        n_draws = max(int(ms * total), 1)
        if n_draws < max(10, n_samples ** (1 / 3)):
            warnings.warn(f"Using the fractional value max_samples={ms} when the total weight is "
                          f"{total} results in a low number ({n_draws}) of bootstrap samples. "
                          "We recommend passing `max_samples` as an integer instead.",
                          UserWarning, stacklevel=3)
        return n_draws

    # -- fit ---------------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Grow the forest from training data.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features (NaN for a missing value) and categorical ones; dense.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels (classifiers) or numeric targets (regressors).
        sample_weight : array-like of shape (n_samples,), default=None
            With ``bootstrap=True`` a row's chance of being drawn is proportional to its weight
            (times its class weight), as in scikit-learn; without, the trees weigh the rows.

        Returns
        -------
        self
        """
        self._compile_ahead(X)
        self._check_forest_params()
        if is_sparse(y):
            raise ValueError("sparse multilabel-indicator for y is not supported.")
        template = self._make_tree()
        X_checked = template._encode_fit(X)
        if is_sparse(X_checked):  # the exact layout presorts dense columns: zeros made explicit
            X_checked = np.ascontiguousarray(X_checked.toarray())
        n_samples, n_features = X_checked.shape
        self._check_targets(y)
        targets, n_classes, offsets, codes = template._encode_targets(y, n_samples)
        template._set_feature_names(X)
        n_outputs = 1 if targets.ndim == 1 else targets.shape[1]
        template._check_splitter(False, n_outputs > 1)
        template._check_pruning()  # ccp_alpha
        template.n_outputs_ = n_outputs
        template.n_features_in_ = n_features
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, n_samples)
        weight = self._row_weights(template, codes, sample_weight)
        self._n_samples = n_samples
        self._sample_weight = weight  # scikit-learn's name: what the bootstrap draws by
        self._n_samples_bootstrap = self._n_draws(n_samples, weight) if self.bootstrap else None

        if not self.warm_start or not hasattr(self, "estimators_"):
            self.estimators_ = []
        n_more = self.n_estimators - len(self.estimators_)
        if n_more < 0:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={len(self.estimators_)} when warm_start==True")
        if n_more == 0:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit new "
                          "trees.", UserWarning, stacklevel=2)
        else:
            self._grow_seeds(template, X_checked, targets, n_classes, offsets, codes, weight,
                             self._new_seeds(n_more))
            # the training data's missing values, whichever trees drew them (a batch's growth
            # sees its own trees' rows only)
            template.missing_in_fit_ = (np.isnan(X_checked).any(axis=0)
                                        if np.isnan(X_checked.min())  # no NaN mask if none
                                        else np.zeros(n_features, dtype=bool))
            for estimator in self.estimators_:
                estimator.missing_in_fit_ = template.missing_in_fit_
        _copy_fitted(template, self)
        self.estimator_ = self._make_tree()
        if self.oob_score and (n_more > 0 or not hasattr(self, "oob_score_")):
            y_oob = (np.stack(codes, axis=1) if codes is not None
                     else targets.reshape(n_samples, -1))
            self._set_oob_score_and_attributes(
                X_checked, y_oob, None if self.oob_score is True else self.oob_score)
        return self

    def _new_seeds(self, n_more):
        """The seeds of the next ``n_more`` trees: drawn from ``random_state`` after the seeds a
        cold fit gave the trees already fitted (warm start), so tree ``k`` has the same seed
        however the forest was grown."""
        source = _seed_source(self.random_state)
        if self.warm_start and self.estimators_:  # the seeds a cold fit gave the first trees
            source.randint(MAX_INT, size=len(self.estimators_))
        return [source.randint(MAX_INT) for _ in range(n_more)]

    def _grow_seeds(self, template, X, targets, n_classes, offsets, codes, weight, seeds):
        """Grow one tree per seed and append them to ``estimators_`` in the seeds' order: here
        with :meth:`_grow` on ``n_jobs`` threads; :mod:`fasttree.dask`'s forests send blocks of
        the seeds to :meth:`_grow` on their workers.  A tree depends on its seed and the data
        only, so any split of the seeds grows the same trees."""
        with numba_threads(self.n_jobs):
            self._grow(template, X, targets, n_classes, offsets, codes, weight, seeds)

    def _check_targets(self, y):
        """Checks of ``y`` a forest makes before the trees' (none but the regressors')."""

    def _row_weights(self, template, codes, sample_weight):
        """``sample_weight`` times the class weights (classifiers), or None."""
        return sample_weight

    def _grow(self, template, X, targets, n_classes, offsets, codes, weight, seeds):
        """Grow one tree per seed, as many together as the layout budget allows; append them
        to ``estimators_``.  Besides the parameters it reads ``_n_samples_bootstrap`` and
        ``_sample_weight`` (set by :meth:`fit`), and sets ``fit_timings_`` and the template's
        ``max_features_`` and ``missing_in_fit_``."""
        n_samples, n_features = X.shape
        subsample = getattr(self, "class_weight", None) == "balanced_subsample" and self.bootstrap
        # trees weigh their counts (bootstrap), or the rows' weights scaled by a power of two
        # as a tree's fit scales them (exact; weighted_n_node_samples gets the scale back)
        scale = 1.0
        if weight is not None and not self.bootstrap:
            scale = _power_of_two_scale(weight)
            weight = weight / scale
            in_fit = (weight > 0.0).astype(np.uint8)  # zero-weight rows are not grown on
        multi_output = None if offsets is None else (np.ascontiguousarray(targets, np.float64),
                                                     offsets)
        monotonic_cst = template._check_monotonic_cst(n_features, n_classes)
        params = template._resolve_params(n_samples, n_features, float(n_samples), False)
        grows_depth_first = depth_first.serves(
            params, bool(template._n_categories().any()), offsets is not None,
            monotonic_cst is not None and bool(np.any(monotonic_cst)), bool(n_classes), True)
        columns = None
        if grows_depth_first:  # read by every batch
            # the trees' weights: bootstrap counts, or the rows' (scaled) weights, or each
            # tree's counts times its class weights
            whole = not subsample and (self.bootstrap or depth_first.whole_weights(weight))
            columns = depth_first.fit_columns(X, params, n_classes, whole)
            bytes_per_row = depth_first.bytes_per_row(bool(n_classes), params.splitter)
            # each tree on one thread: a batch holds a multiple of the threads, each thread
            # then grows as many trees
            batch_multiple = numba.get_num_threads()
        else:
            bytes_per_row = ExactSplitter.bytes_per_row(n_features, bool(n_classes))
            batch_multiple = 1
        # rows of all the trees of a batch
        per_batch = max(1, max(LAYOUT_BUDGET, X.nbytes) // bytes_per_row)
        timings = {}
        batch = []  # (seed, counts, tree weights or None)
        rows = 0  # the batch's

        def draw(seed):
            """A tree's counts of each row and its weights (None: its counts')."""
            if not self.bootstrap:
                return (np.ones(n_samples, dtype=np.uint8) if weight is None
                        else in_fit), weight
            drawn = sample_indices(seed, n_samples, self._n_samples_bootstrap,
                                   self._sample_weight)
            counts = np.bincount(drawn, minlength=n_samples)
            # kept small until the batch grows: int64 counts are 8 bytes a row per tree
            counts = counts.astype(np.uint8 if counts.max() <= 255 else np.int32, copy=False)
            return counts, (_balanced_subsample(codes, drawn) if subsample else None)

        for i, (seed, (counts, tree_weight)) in enumerate(_drawn_ahead(seeds, draw)):
            batch.append((seed, counts, tree_weight))
            rows += int(np.count_nonzero(counts))
            full = rows >= per_batch and len(batch) % batch_multiple == 0
            if full or i == len(seeds) - 1:
                if self.verbose > 1:
                    print(f"building trees {i + 2 - len(batch)} to {i + 1} of {len(seeds)}")
                self._grow_batch(template, X, targets, n_classes, multi_output, monotonic_cst,
                                 batch, scale, subsample, timings, columns)
                batch = []
                rows = 0
        self.fit_timings_ = timings

    def _grow_batch(self, template, X, targets, n_classes, multi_output, monotonic_cst, batch,
                    scale, subsample, timings, columns=None):
        seeds = [seed for seed, _, _ in batch]
        counts = np.stack([c for _, c, _ in batch])
        counts = counts.astype(np.uint8 if counts.max() <= 255 else np.int32, copy=False)
        if subsample:  # each tree its own weights: counts times its class weights
            weight = np.stack([w for _, _, w in batch])
            scale = _power_of_two_scale(weight)
            weight = weight / scale
        else:
            weight = batch[0][2]  # None, or every tree's weights (no bootstrap)
        # min_weight_fraction_leaf is a fraction of a tree's total weight: of its counts (times
        # its class weights), or of the rows' weights
        totals = (counts.sum(axis=1) if weight is None
                  else np.full(len(batch), weight.sum()) if weight.ndim == 1
                  else (weight * counts).sum(axis=1)).astype(np.float64)
        has_weight = self.bootstrap or weight is not None
        params = template._resolve_params(X.shape[0], X.shape[1], float(totals[0]), has_weight)
        if params.min_weight_leaf > 0.0 and len(batch) > 1:
            if not np.all(totals == totals[0]):  # each tree its own minimum: one at a time
                for one in batch:
                    self._grow_batch(template, X, targets, n_classes, multi_output,
                                     monotonic_cst, [one], scale, subsample, timings,
                                     columns)
                return
        grower = TreeGrower(X, targets, weight, params, n_classes=n_classes,
                            rng=[np.random.default_rng(seed) for seed in seeds],
                            n_categories=template._n_categories(), multi_output=multi_output,
                            monotonic_cst=monotonic_cst, counts=counts, columns=columns)
        trees = grower.grow_trees()
        for phase, seconds in grower.timings.items():
            timings[phase] = timings.get(phase, 0.0) + seconds
        template.max_features_ = params.max_features
        template.missing_in_fit_ = grower.missing_features
        for seed, tree in zip(seeds, trees):
            tree.weighted_n_node_samples *= scale
            estimator = self._make_tree(random_state=seed)
            _copy_fitted(template, estimator)
            estimator.tree_ = tree
            estimator.ccp_alpha_ = float(self.ccp_alpha)
            estimator._prune(None, None, None)
            self.estimators_.append(estimator)

    # -- out-of-bag estimates ----------------------------------------------------------------
    def _oob_sums(self, X, predict, width):
        """Sum of the trees' predictions of each row that is out of their bag, and how many
        trees predicted it (scikit-learn's rule for a row no tree left out: a warning and 0)."""
        n_samples = X.shape[0]
        total = np.zeros((n_samples,) + width)
        n_trees = np.zeros(n_samples, dtype=np.int64)
        with numba_threads(self.n_jobs):
            for estimator in self.estimators_:
                drawn = sample_indices(estimator.random_state, n_samples,
                                       self._n_samples_bootstrap, self._sample_weight)
                rows = np.flatnonzero(np.bincount(drawn, minlength=n_samples) == 0)
                total[rows] += predict(estimator, X[rows])
                n_trees[rows] += 1
        if (n_trees == 0).any():
            warnings.warn("Some inputs do not have OOB scores. This probably means too few trees "
                          "were used to compute any reliable OOB estimates.", UserWarning,
                          stacklevel=3)
            n_trees[n_trees == 0] = 1
        return total / n_trees.reshape((-1,) + (1,) * len(width))

    # -- prediction --------------------------------------------------------------------------
    def _packed_forest(self, X):
        """The trees packed for prediction (:class:`~fasttree.packed_forest.PackedForest`), or
        None where the trees walk one by one: sparse ``X``, categorical splits, C4.5's fractional
        missing values.  Packed once for the trees of ``estimators_``."""
        if is_sparse(X):
            return None
        trees = [e.tree_ for e in self.estimators_]
        cached = _PACKED.get(self)
        if cached is None or len(cached[0]) != len(trees) or any(
                a is not b for a, b in zip(cached[0], trees)):
            cached = (trees, PackedForest.from_trees(trees, self.n_features_in_)
                      if packs(trees) else None)
            _PACKED[self] = cached
        return cached[1]

    def _tree_sum(self, X):
        """Sum over the trees of each row's leaf values (``value`` flattened: outputs, then
        classes), float64, or None where the trees walk one by one (:meth:`_packed_forest`)."""
        packed = self._packed_forest(X)
        return None if packed is None else packed.values(X)

    def apply(self, X):
        """Index of the leaf each sample ends in, in each tree.

        Returns
        -------
        X_leaves : ndarray of shape (n_samples, n_estimators), int64
        """
        X = self._validate_X_predict(X)
        packed = self._packed_forest(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            if packed is not None:
                return packed.apply(X)
            return np.stack([e.tree_.apply(X) for e in self.estimators_], axis=1).astype(
                np.int64)

    def decision_path(self, X):
        """The nodes each sample passes through, in every tree (needs scipy).

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            Entry (i, j) is 1 when sample i passes through node j of the trees' nodes side by
            side.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Tree ``k``'s nodes are the columns ``n_nodes_ptr[k]:n_nodes_ptr[k + 1]``.
        """
        from scipy.sparse import hstack

        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            paths = [e.tree_.decision_path(X) for e in self.estimators_]
        n_nodes_ptr = np.cumsum([0] + [p.shape[1] for p in paths])
        return hstack(paths).tocsr(), n_nodes_ptr

    @property
    def feature_importances_(self):
        """Impurity-based importances: the trees' mean (trees with a split only), normalized;
        zeros when no tree splits."""
        self._check_is_fitted()
        importances = [e.tree_.compute_feature_importances() for e in self.estimators_
                       if e.tree_.node_count > 1]
        if not importances:
            return np.zeros(self.n_features_in_)
        mean = np.mean(importances, axis=0, dtype=np.float64)
        return mean / mean.sum()

    def save(self, path):
        """Write the fitted forest to a model file that :func:`fasttree.load` reads back.

        The file holds what prediction needs: the trees packed (float32 thresholds, which split
        every input as the fitted ones do, int32 children, leaf values only), each tree's
        feature importances and JSON metadata; not the trees' node statistics (impurity, sample
        counts, internal nodes' values: NaN once loaded), out-of-bag predictions or sample
        weights.  Trees with categorical splits cannot be saved (pickle them).  See
        ``docs/model_files.rst``; loading executes nothing.

        Parameters
        ----------
        path : str, os.PathLike or writable binary file object
        """
        from .model_io import save

        save(self, path)

    def to_sklearn(self):
        """The same fitted forest as scikit-learn's forest of the same name (for SHAP, ONNX,
        treelite); see :func:`fasttree.interop.forest_to_sklearn` (scikit-learn is imported
        only there).

        Returns
        -------
        sklearn_forest : sklearn.ensemble.RandomForestClassifier, ... (the same name)
        """
        from .interop import forest_to_sklearn

        return forest_to_sklearn(self)

    @property
    def estimators_samples_(self):
        """The rows each tree drew (with repeats; all rows without bootstrap), regenerated
        from the trees' seeds at each call.

        Returns
        -------
        list of ndarray of int32
        """
        self._check_is_fitted()
        if self._n_samples is None:
            raise AttributeError("estimators_samples_ of a forest fitted with sample or class "
                                 "weights is not stored in its model file (refit it).")
        if not self.bootstrap:
            return [np.arange(self._n_samples, dtype=np.int32) for _ in self.estimators_]
        return [sample_indices(e.random_state, self._n_samples, self._n_samples_bootstrap,
                               self._sample_weight) for e in self.estimators_]


class _ForestClassifier(_BaseForest):
    _estimator_type = "classifier"

    def _row_weights(self, template, codes, sample_weight):
        cw = self.class_weight
        if cw is None:
            return sample_weight
        if isinstance(cw, list) and len(cw) != len(codes):
            raise ValueError("number of elements in class_weight should match number of outputs.")
        if isinstance(cw, str) and cw not in ("balanced", "balanced_subsample"):
            raise ValueError(f'Valid presets for class_weight include "balanced" and '
                             f'"balanced_subsample".Given "{cw}".')
        if cw == "balanced_subsample" and self.bootstrap:
            return sample_weight  # weighed per tree, on its sample
        if isinstance(cw, str):
            if self.warm_start:
                warnings.warn('class_weight presets "balanced" or "balanced_subsample" are not '
                              "recommended for warm_start if the fitted data differs from the "
                              "full dataset.", UserWarning, stacklevel=3)
            cw = "balanced"
        rows = template._class_weight_rows(cw, codes, sample_weight)
        weight = rows if sample_weight is None else sample_weight * rows
        if not np.isfinite(weight).all() or weight.sum() <= 0.0:
            raise ValueError("sample_weight times class_weight must be finite with a positive "
                             "sum.")
        return weight

    def _set_oob_score_and_attributes(self, X, y, scoring_function=None):
        """``oob_decision_function_`` and ``oob_score_`` (``scoring_function(y, predicted)``
        of the class codes ``y``, shape (n_samples, n_outputs); accuracy by default)."""
        if self.n_outputs_ > 1 and max(self.n_classes_) > 2:
            raise ValueError("The type of target cannot be used to compute OOB estimates. Got "
                             "multiclass-multioutput while only the following are supported: "
                             "continuous, continuous-multioutput, binary, multiclass, "
                             "multilabel-indicator.")
        width = int(np.max(self.n_classes_))

        def predict(estimator, rows):
            proba = estimator._proba(rows)
            if self.n_outputs_ == 1:
                return proba[:, :, None]
            out = np.zeros((rows.shape[0], width, self.n_outputs_))
            for k, p in enumerate(proba):
                out[:, :p.shape[1], k] = p
            return out

        decision = self._oob_sums(X, predict, (width, self.n_outputs_))
        predicted = np.argmax(decision, axis=1)
        if self.n_outputs_ == 1:
            decision, predicted = decision[:, :, 0], predicted[:, 0]
        self.oob_decision_function_ = decision
        self.oob_score_ = (scoring_function or accuracy)(y, predicted)

    def predict_proba(self, X):
        """Class probabilities: the mean of the trees' probabilities.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), or a list of them (one per output)
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            total = self._tree_sum(X)
            if total is not None:  # every row through every tree in one kernel call
                total /= len(self.estimators_)
                if self.n_outputs_ == 1:
                    return total
                total = total.reshape(X.shape[0], self.n_outputs_, -1)
                return [total[:, k, :n] for k, n in enumerate(self.n_classes_)]
            # each tree's probabilities, one array per output, summed in turn (one tree's held
            # at a time)
            per_output = ([p] if self.n_outputs_ == 1 else p
                          for p in (e._proba(X) for e in self.estimators_))
            total = [np.array(p, dtype=np.float64) for p in next(per_output)]
            for proba in per_output:
                for t, p in zip(total, proba):
                    t += p
        for t in total:
            t /= len(self.estimators_)
        return total[0] if self.n_outputs_ == 1 else total

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for a zero probability)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in proba] if isinstance(proba, list) else np.log(proba)

    def predict(self, X):
        """The class of highest mean probability (ties to the first in ``classes_``).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        proba = self.predict_proba(X)
        if self.n_outputs_ == 1:
            return self.classes_.take(np.argmax(proba, axis=1))
        return np.stack([c.take(np.argmax(p, axis=1)) for c, p in zip(self.classes_, proba)],
                        axis=1)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on the given data (subset accuracy with several outputs)."""
        y_pred = self.predict(X)
        return accuracy(check_y(y, y_pred.shape[0], regression=False, multi_output=True),
                        y_pred, sample_weight)


class _ForestRegressor(_BaseForest):
    _estimator_type = "regressor"

    def _check_targets(self, y):
        if self.criterion == "poisson":  # scikit-learn's forests' wording
            try:
                y = np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError):
                return  # the trees' check of y says what is wrong
            check_poisson_target(y, "strictly positive")

    def _set_oob_score_and_attributes(self, X, y, scoring_function=None):
        """``oob_prediction_`` and ``oob_score_`` (``scoring_function(y, prediction)`` of the
        targets ``y``, shape (n_samples, n_outputs); R² by default)."""
        def predict(estimator, rows):
            return estimator._predict_values(rows).reshape(rows.shape[0], -1)

        prediction = self._oob_sums(X, predict, (self.n_outputs_,))
        self.oob_prediction_ = prediction[:, 0] if self.n_outputs_ == 1 else prediction
        self.oob_score_ = (scoring_function or r2)(y, self.oob_prediction_)

    def predict(self, X):
        """The mean of the trees' predictions.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs), float64
        """
        X = self._validate_X_predict(X)
        with numba_threads(self.n_jobs, n_rows=X.shape[0]):
            total = self._tree_sum(X)
            if total is not None:  # every row through every tree in one kernel call
                total /= len(self.estimators_)
                return total[:, 0] if self.n_outputs_ == 1 else total
            for estimator in self.estimators_:
                values = estimator._predict_values(X)
                total = np.array(values, dtype=np.float64) if total is None else total + values
        return total / len(self.estimators_)

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R² of the prediction (averaged over outputs)."""
        y_pred = self.predict(X)
        return r2(check_y(y, y_pred.shape[0], regression=True, multi_output=True), y_pred,
                  sample_weight)


_SHARED_DOC = """
    n_estimators : int, default=100
        Number of trees.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_leaf_nodes,
    min_impurity_decrease, ccp_alpha, monotonic_cst
        As for each tree (:class:`~fasttree.DecisionTreeClassifier`); the minimums count a
        tree's distinct drawn rows and weigh its counts, as in scikit-learn's forests.
    max_features : {"sqrt", "log2"}, int, float or None
        Features drawn at each node.
    bootstrap : bool
        Whether each tree draws its rows with replacement (else every tree sees every row).
    oob_score : bool or callable, default=False
        Score the forest on each row's out-of-bag trees (``bootstrap=True`` only); a callable
        ``score(y, y_pred)`` replaces the default score.
    n_jobs : int or None, default=None
        Threads of the kernels (None: numba's default, -1: all cores).  The forest is the same
        for any value.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the trees as scikit-learn's forest does: the same seeds, bootstrap rows and
        out-of-bag rows.
    verbose : int, default=0
        Above 1, prints each group of trees it grows.
    warm_start : bool, default=False
        Keep the fitted trees and add ``n_estimators - len(estimators_)`` new ones.
    max_samples : int, float or None, default=None
        Rows each tree draws: all of them (None), that many (int), or that fraction of the
        total weight (float).
    categorical_features, categorical_split, missing
        fasttree's, as for each tree (``missing="fractional"`` is not taken by forests).
"""

_ATTRIBUTES_DOC = """
    Attributes
    ----------
    estimators_ : list of fasttree trees
        The fitted trees; ``estimators_[k].random_state`` is tree ``k``'s seed.
    estimator_ : the unfitted tree the trees were made from
    estimators_samples_ : list of ndarray
        Each tree's drawn rows.
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_, feature_names_in_, n_outputs_
    oob_score_ : float
    fit_timings_ : dict
        Seconds spent in each phase of the growth, summed over the trees.
"""


class RandomForestClassifier(_ForestClassifier):
    __doc__ = f"""A random forest classifier: bootstrapped exact trees.

    Parameters follow :class:`sklearn.ensemble.RandomForestClassifier`.

    Parameters
    ----------
    criterion : {{"gini", "entropy", "log_loss"}}, default="gini"
    class_weight : {{"balanced", "balanced_subsample"}}, dict, list of dicts or None
        "balanced_subsample" weighs each tree's classes by their frequency in its sample.
    {_SHARED_DOC}
    {_ATTRIBUTES_DOC}
    classes_, n_classes_
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
    """
    _tree_class = DecisionTreeClassifier

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None,
                 monotonic_cst=None, categorical_features="from_dtype",
                 categorical_split="binary", missing="learn"):
        _store_params(self, locals())


class ExtraTreesClassifier(RandomForestClassifier):
    __doc__ = f"""An extra-trees classifier: trees of random thresholds.

    Parameters follow :class:`sklearn.ensemble.ExtraTreesClassifier` (``bootstrap=False`` by
    default); each node draws one threshold per drawn feature, uniformly between its smallest
    and largest value there.

    Parameters
    ----------
    criterion : {{"gini", "entropy", "log_loss"}}, default="gini"
    class_weight : {{"balanced", "balanced_subsample"}}, dict, list of dicts or None
    {_SHARED_DOC}
    {_ATTRIBUTES_DOC}
    """
    _tree_class = ExtraTreeClassifier

    __init__ = _with_defaults(RandomForestClassifier, bootstrap=False)


class RandomForestRegressor(_ForestRegressor):
    __doc__ = f"""A random forest regressor: bootstrapped exact trees.

    Parameters follow :class:`sklearn.ensemble.RandomForestRegressor`.

    Parameters
    ----------
    criterion : {{"squared_error", "absolute_error", "poisson", "friedman_mse"}}
    {_SHARED_DOC}
    {_ATTRIBUTES_DOC}
    oob_prediction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    """
    _tree_class = DecisionTreeRegressor

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, ccp_alpha=0.0, max_samples=None, monotonic_cst=None,
                 categorical_features="from_dtype", categorical_split="binary", missing="learn"):
        _store_params(self, locals())
        self.criterion = without_friedman_mse(criterion)


class ExtraTreesRegressor(RandomForestRegressor):
    __doc__ = f"""An extra-trees regressor: trees of random thresholds.

    Parameters follow :class:`sklearn.ensemble.ExtraTreesRegressor` (``bootstrap=False`` by
    default).

    Parameters
    ----------
    criterion : {{"squared_error", "absolute_error", "poisson", "friedman_mse"}}
    {_SHARED_DOC}
    {_ATTRIBUTES_DOC}
    """
    _tree_class = ExtraTreeRegressor

    __init__ = _with_defaults(RandomForestRegressor, bootstrap=False)


class RandomTreesEmbedding(_BaseForest):
    """Totally random trees as an unsupervised embedding: each row becomes the one-hot code of
    the leaf it reaches in every tree.

    Parameters follow :class:`sklearn.ensemble.RandomTreesEmbedding`: extra trees
    (``max_features=1``, one random threshold per node) fitted to a uniformly random target
    drawn from ``random_state``, every row in every tree (no bootstrap).

    Parameters
    ----------
    n_estimators : int, default=100
    max_depth : int or None, default=5
    min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_leaf_nodes,
    min_impurity_decrease
        As for each tree.
    sparse_output : bool, default=True
        A scipy.sparse CSR matrix (needs scipy), else a dense array.
    n_jobs, random_state, verbose, warm_start
        As for :class:`RandomForestRegressor`.

    Attributes
    ----------
    estimators_ : list of fasttree.ExtraTreeRegressor
    n_features_in_, feature_names_in_
    """

    _estimator_type = "transformer"
    _tree_class = ExtraTreeRegressor
    # fixed, as in scikit-learn (class attributes, not parameters)
    criterion = "squared_error"
    max_features = 1
    bootstrap = False
    oob_score = False
    max_samples = None
    ccp_alpha = 0.0
    monotonic_cst = None
    categorical_features = None
    categorical_split = "binary"
    missing = "learn"

    def __init__(self, n_estimators=100, *, max_depth=5, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 sparse_output=True, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False):
        _store_params(self, locals())

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = None
        tags.target_tags.required = False
        tags.transformer_tags = TransformerTags()
        tags.regressor_tags = None
        return tags

    def _set_oob_score_and_attributes(self, X, y, scoring_function=None):
        # scikit-learn's answer for an embedding (no target, no out-of-bag score; its
        # test_forest.py checks this error); fit never calls it, oob_score being fixed False
        raise NotImplementedError("OOB score not supported by tree embedding")

    def fit(self, X, y=None, sample_weight=None):
        """Grow the trees on ``X`` (``y`` is ignored).

        Returns
        -------
        self
        """
        self.fit_transform(X, y, sample_weight=sample_weight)
        return self

    def fit_transform(self, X, y=None, sample_weight=None):
        """Grow the trees on ``X`` and return its embedding.

        Returns
        -------
        X_transformed : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_leaves)
        """
        n_samples = (X.shape if hasattr(X, "shape") else np.shape(np.asarray(X)))[0]
        target = _seed_source(self.random_state).uniform(size=n_samples)
        _BaseForest.fit(self, X, target, sample_weight)
        leaves = self.apply(X)
        self._leaf_ids = [np.unique(leaves[:, t]) for t in range(leaves.shape[1])]
        self._n_features_out = sum(ids.size for ids in self._leaf_ids)
        return self._one_hot(leaves)

    def transform(self, X):
        """The one-hot code of each row's leaf in every tree, tree after tree.

        Returns
        -------
        X_transformed : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_leaves)
        """
        self._check_is_fitted()
        return self._one_hot(self.apply(X))

    def get_feature_names_out(self, input_features=None):
        """``randomtreesembedding_{tree}_{leaf}`` for each output column.

        Returns
        -------
        ndarray of str objects
        """
        self._check_is_fitted()
        names_in = getattr(self, "feature_names_in_", None)
        if input_features is not None and (
                len(input_features) != self.n_features_in_
                or (names_in is not None and list(input_features) != list(names_in))):
            raise ValueError("input_features is not equal to feature_names_in_")
        return np.asarray([f"randomtreesembedding_{t}_{leaf}"
                           for t, ids in enumerate(self._leaf_ids) for leaf in ids], dtype=object)

    def _one_hot(self, leaves):
        n_samples, n_trees = leaves.shape
        offsets = np.concatenate([[0], np.cumsum([ids.size for ids in self._leaf_ids])])
        columns = np.empty_like(leaves)
        for t, ids in enumerate(self._leaf_ids):
            position = np.minimum(np.searchsorted(ids, leaves[:, t]), ids.size - 1)
            if np.any(ids[position] != leaves[:, t]):
                raise ValueError(f"Found unknown categories: a leaf of tree {t} no training "
                                 "row reached")
            columns[:, t] = offsets[t] + position
        if not self.sparse_output:
            out = np.zeros((n_samples, offsets[-1]))
            out[np.arange(n_samples)[:, None], columns] = 1.0
            return out
        from scipy.sparse import csr_matrix

        return csr_matrix((np.ones(n_samples * n_trees), columns.ravel(),
                           np.arange(0, n_samples * n_trees + 1, n_trees)),
                          shape=(n_samples, int(offsets[-1])))
