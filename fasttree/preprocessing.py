"""Discretization of numeric columns into intervals, with scikit-learn's transformer API.

Three transformers, importable without scikit-learn (they work in its ``Pipeline``,
``ColumnTransformer`` and ``clone`` all the same):

* :class:`EntropyDiscretizer`: supervised, recursive entropy cuts stopped by Fayyad and Irani's
  MDL criterion (Orange's ``EntropyMDL``), computed for every column at once by the numba kernel
  :func:`fasttree.kernels.entropy_cut_level`;
* :class:`EqualFrequencyDiscretizer`: intervals holding about as many rows each (Orange's
  ``EqualFreq``);
* :class:`EqualWidthDiscretizer`: intervals of equal width between the column's minimum and
  maximum (Orange's ``EqualWidth``).

Each learns ``cut_points_[j]``, the increasing cut points of column ``j``, and ``transform``
returns bin indices as float64: bin ``i`` holds the values ``x`` with
``cut_points_[j][i - 1] <= x < cut_points_[j][i]`` (bin 0 is everything below the first cut,
the last bin everything from the last cut up), which is Orange's side convention (numpy's
``digitize``).  A missing value (NaN) stays NaN.  Like fasttree's trees, the transformers work on
the values rounded to float32.

With ``set_output(transform="pandas")`` the output is a DataFrame whose discretized columns are
ordered pandas ``Categorical`` with Orange's interval labels: ``'< 5.45'``, ``'5.45 - 6.15'``,
``'≥ 6.15'`` (``labels_`` holds them; a column without any cut has the single label
``'single_value'``, as in Orange); with ``set_output(transform="polars")``, a polars DataFrame
whose discretized columns are ``Enum`` of the same labels.  polars and pyarrow tables are
accepted as input (converted once; see the quick start's "DataFrames" section).
"""

import heapq
import numbers
import sys

import numpy as np

from ._base import BaseEstimator, numba_threads
from ._dtypes import MAX_CLASSES, X_DTYPE, label_dtype
from ._frames import as_frame, display_name
from ._validation import (
    check_feature_names,
    check_sample_weight,
    check_X,
    check_y,
    feature_names_of,
    is_dataframe,
    is_sparse,
)
from .kernels.criteria import xlog2x_table
from .kernels.discretize import entropy_cut_level, equal_frequency_cuts
from .kernels.presort import presort_features
from .kernels.split_search import gather_targets

#: What ``transform`` can return (``set_output``; scikit-learn's names).
_OUTPUTS = ("default", "pandas", "polars")

__all__ = [
    "EntropyDiscretizer",
    "EqualFrequencyDiscretizer",
    "EqualWidthDiscretizer",
    "entropy_cut_points",
    "interval_labels",
]


# -- interval labels (Orange's format) -----------------------------------------------------------

def _strip_zeros(text):
    # Orange strips the trailing zeros of unsigned decimals only ("^\d+\.\d+"), kept as is;
    # but not those of an exponent ("1.5e+10" stays, where Orange prints "1.5e+1")
    head, dot, tail = text.partition(".")
    if head.isdigit() and tail[:1].isdigit() and "e" not in text:
        return text.rstrip("0").rstrip(".")
    return text


def _interval_label(low, high, fmt):
    lows = None if low is None else _strip_zeros(fmt(low))
    highs = None if high is None else _strip_zeros(fmt(high))
    if lows is not None and lows == highs:
        raise ValueError("identical formatted thresholds")
    if lows is None:
        return f"< {highs}"
    if highs is None:
        return f"≥ {lows}"
    return f"{lows} - {highs}"


def _labels_with(points, fmt):
    bounds = [None, *points, None]
    return [_interval_label(bounds[i], bounds[i + 1], fmt) for i in range(len(points) + 1)]


def interval_labels(points):
    """Orange's labels of the intervals that the increasing cut points ``points`` delimit.

    ``'< a'``, ``'a - b'``, ..., ``'≥ z'`` with the points printed by ``'%g'``; when that makes
    two labels equal, the points are printed with the fewest fixed decimals (trailing zeros
    stripped) that tell them apart.  No point: ``['single_value']``.

    Parameters
    ----------
    points : sequence of float
        Increasing, distinct cut points.

    Returns
    -------
    labels : list of str, of length ``len(points) + 1``
    """
    points = [float(p) for p in points]
    if not points:
        return ["single_value"]
    try:
        labels = _labels_with(points, lambda v: "%g" % v)
    except ValueError:
        labels = None
    if labels is not None and len(set(labels)) == len(labels):
        return labels
    diffs = np.diff(points)
    min_diff = float(diffs.min()) if len(diffs) else 1.0
    digits = max(0, int(-np.log10(min_diff)))
    while digits < np.finfo(np.float64).precision + 2 and \
            len({round(p, digits) for p in points}) < len(points):
        digits += 1
    rounded = [round(p, digits) for p in points]
    return _labels_with(rounded, lambda v: f"{v:.{digits}f}")


# -- shared transformer machinery ----------------------------------------------------------------

def _check_n_bins(n_bins, name="n_bins", allow_none=False):
    if allow_none and n_bins is None:
        return None
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 2{' or None' * allow_none}; got "
                        f"{n_bins!r}.")
    if n_bins < 2:
        raise ValueError(f"{name} must be >= 2; got {n_bins}.")
    return int(n_bins)


class _Discretizer(BaseEstimator):
    """Validation, ``transform``, labels, feature names and ``set_output`` of the discretizers.

    Subclasses implement ``_fit_columns(X, columns, y, sample_weight)`` returning the cut points
    of the given columns of the float32 ``X``.
    """

    _supervised = False
    _fitted_attribute = "cut_points_"

    # -- tags ----------------------------------------------------------------------------------
    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=self._supervised),
            transformer_tags=TransformerTags(preserves_dtype=["float64"]),
            input_tags=InputTags(allow_nan=True),
        )

    # -- validation ----------------------------------------------------------------------------
    def _validate_X(self, X):
        """``X`` as float32 (C order) after the checks; DataFrames must be all numeric."""
        if is_sparse(X):
            raise TypeError(f"{type(self).__name__} takes dense data; got a sparse matrix. "
                            "Convert it with X.toarray().")
        if is_dataframe(X):
            for column, dtype in zip(X.columns, X.dtypes):
                if getattr(dtype, "kind", "O") not in "biuf":
                    raise TypeError(
                        f"{type(self).__name__} takes numeric columns; column "
                        f"{display_name(column)} has dtype {dtype}.")
        return check_X(X, order="C")

    def _categorical_mask(self, n_features, names):
        spec = self.categorical_features
        mask = np.zeros(n_features, dtype=bool)
        if spec is None:
            return mask
        if isinstance(spec, (str, bytes)):
            spec = [spec]
        arr = np.asarray(spec)
        if arr.ndim != 1:
            raise ValueError("categorical_features must be None, a 1-D array of column indices, "
                             "column names or a boolean mask.")
        if arr.size == 0:
            return mask
        if arr.dtype == bool:
            if arr.shape[0] != n_features:
                raise ValueError(f"categorical_features is a boolean mask of length "
                                 f"{arr.shape[0]}; X has {n_features} features.")
            return arr.copy()
        if arr.dtype.kind in "iu":
            if (arr < -n_features).any() or (arr >= n_features).any():
                raise ValueError(f"categorical_features has an index out of range for "
                                 f"{n_features} features: {arr.tolist()}.")
            mask[arr] = True
            return mask
        if arr.dtype.kind in "UO" and all(isinstance(v, str) for v in arr):
            if names is None:
                raise ValueError("categorical_features names columns, but X has no column "
                                 "names (fit on a DataFrame to name columns).")
            position = {name: i for i, name in enumerate(names)}
            unknown = [v for v in arr if v not in position]
            if unknown:
                raise ValueError(f"categorical_features names unknown columns: {unknown}.")
            mask[[position[v] for v in arr]] = True
            return mask
        raise TypeError("categorical_features must be None, column indices, column names or a "
                        f"boolean mask; got {spec!r}.")

    def _validate_params(self):
        """Check the parameters (each subclass adds its own)."""

    # -- fit / transform -----------------------------------------------------------------------
    def _fit(self, X, y, sample_weight):
        """Validate, then learn the cut points of every column not in ``categorical_features``."""
        self._validate_params()
        X = as_frame(X)  # a polars or pyarrow table: converted once, here
        names = feature_names_of(X)
        X32 = self._validate_X(X)
        n_samples, n_features = X32.shape
        mask = self._categorical_mask(n_features, names)
        columns = np.flatnonzero(~mask)
        with numba_threads(None):  # the kernels' thread safety on every numba layer
            cuts = self._fit_columns(X32, columns, y, sample_weight)
        cut_points = [None] * n_features
        for j, c in zip(columns, cuts):
            cut_points[j] = np.asarray(c, dtype=np.float64)
        self.n_features_in_ = n_features
        check_feature_names(self, X, reset=True)
        self.is_categorical_ = mask
        self.cut_points_ = cut_points
        self.n_bins_ = np.array([0 if c is None else len(c) + 1 for c in cut_points],
                                dtype=np.int64)
        self.labels_ = [None if c is None else interval_labels(c) for c in cut_points]
        return self

    def bin_labels(self, j):
        """Labels of column ``j``'s bins (``labels_[j]``; None for a passed-through column)."""
        self._check_is_fitted()
        return self.labels_[j]

    def _check_transform_input(self, X):
        self._check_is_fitted()
        check_feature_names(self, X, reset=False)
        X32 = self._validate_X(X)
        if X32.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X32.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        return X32

    def _bin_codes(self, X32):
        """Bin index of every value (float64; NaN stays NaN; passed-through columns NaN)."""
        out = np.full(X32.shape, np.nan)
        for j, cuts in enumerate(self.cut_points_):
            if cuts is None:
                continue
            col = X32[:, j]
            known = ~np.isnan(col)
            out[known, j] = np.searchsorted(cuts, col[known].astype(np.float64), side="right")
        return out

    def transform(self, X):
        """Replace each value by the index of its bin.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_binned : ndarray of shape (n_samples, n_features), float64, or a DataFrame
            Bin ``i`` of column ``j`` holds ``cut_points_[j][i - 1] <= x < cut_points_[j][i]``;
            NaN stays NaN; columns of ``categorical_features`` are passed through as float64.
            A DataFrame of ordered ``Categorical`` columns labelled by ``labels_`` after
            ``set_output(transform="pandas")`` (the input's index when it is a pandas
            DataFrame), a polars DataFrame of ``Enum`` columns after
            ``set_output(transform="polars")``.
        """
        X = as_frame(X)  # a polars or pyarrow table: converted once, here
        X32 = self._check_transform_input(X)
        codes = self._bin_codes(X32)
        passthrough = np.flatnonzero(self.is_categorical_)
        if passthrough.size:
            codes[:, passthrough] = _float64_columns(X, passthrough)
        kind = self._output_kind()
        if kind == "pandas":
            return self._to_pandas(codes, X)
        if kind == "polars":
            return self._to_polars(codes)
        return codes

    def fit_transform(self, X, y=None, **fit_params):
        """``fit(X, y, **fit_params)`` then ``transform(X)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Class labels (:class:`EntropyDiscretizer`); ignored by the others.
        **fit_params
            ``sample_weight`` for :class:`EntropyDiscretizer`.

        Returns
        -------
        X_binned : ndarray of shape (n_samples, n_features), float64, or a DataFrame
        """
        return self.fit(X, y, **fit_params).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: the input's (discretization keeps every column).

        Parameters
        ----------
        input_features : array-like of str, optional
            Must match ``feature_names_in_`` when it is set; default: ``feature_names_in_``, else
            ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        self._check_is_fitted()
        fitted = getattr(self, "feature_names_in_", None)
        if input_features is None:
            if fitted is not None:
                return np.asarray(fitted, dtype=object)
            return np.asarray([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        input_features = np.asarray(input_features, dtype=object)
        if len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features should have length equal to number of features "
                             f"({self.n_features_in_}), got {len(input_features)}")
        if fitted is not None and not np.array_equal(input_features, fitted):
            raise ValueError("input_features is not equal to feature_names_in_")
        return input_features

    # -- DataFrame output ----------------------------------------------------------------------
    def set_output(self, *, transform=None):
        """Choose what ``transform`` returns: ``"default"`` (a float64 array), ``"pandas"`` or
        ``"polars"``.

        ``"pandas"`` returns a DataFrame (the input's index when it is one) whose discretized
        columns are ordered ``Categorical`` with the labels of :attr:`labels_`; ``"polars"`` a
        polars DataFrame whose discretized columns are ``Enum`` of the same labels.  Columns
        passed through stay float64.  None leaves the choice unchanged.  Without a choice,
        scikit-learn's global ``transform_output`` applies when scikit-learn is loaded.

        Returns
        -------
        self
        """
        if transform is None:
            return self
        if transform not in _OUTPUTS:
            raise ValueError("transform must be 'default', 'pandas', 'polars' or None; got "
                             f"{transform!r}.")
        self._sklearn_output_config = {**getattr(self, "_sklearn_output_config", {}),
                                       "transform": transform}
        return self

    def _output_kind(self):
        kind = getattr(self, "_sklearn_output_config", {}).get("transform")
        if kind is None:
            sklearn = sys.modules.get("sklearn")
            kind = sklearn.get_config().get("transform_output", "default") if sklearn else \
                "default"
        if kind not in _OUTPUTS:
            raise ValueError(f"{type(self).__name__} can output 'default', 'pandas' or "
                             f"'polars'; {kind!r} was asked for.")
        return kind

    def _to_pandas(self, codes, X):
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is in the test extra
            raise ImportError("set_output(transform='pandas') needs pandas installed.") from None
        columns = {}
        for j, name in enumerate(self.get_feature_names_out()):
            labels = self.labels_[j]
            if labels is None:
                columns[name] = codes[:, j]
                continue
            col = codes[:, j]
            int_codes = np.where(np.isnan(col), -1, col).astype(np.int64)
            columns[name] = pd.Categorical.from_codes(int_codes, categories=labels,
                                                      ordered=True)
        index = X.index if is_dataframe(X) else None
        return pd.DataFrame(columns, index=index)

    def _to_polars(self, codes):
        try:
            import polars as pl
        except ImportError:
            raise ImportError("set_output(transform='polars') needs polars installed "
                              "(pip install polars).") from None
        columns = []
        for j, name in enumerate(self.get_feature_names_out()):
            labels = self.labels_[j]
            if labels is None:
                columns.append(pl.Series(name, codes[:, j], dtype=pl.Float64))
                continue
            categories = pl.Series(name, list(labels), dtype=pl.Enum(list(labels)))
            positions = pl.Series(codes[:, j]).fill_nan(None).cast(pl.UInt32)
            columns.append(categories.gather(positions))  # a null position gives a null
        return pl.DataFrame(columns)


def _float64_columns(X, columns):
    """The given columns of the caller's ``X`` as float64 (passed-through columns)."""
    if is_dataframe(X):
        return X.iloc[:, columns].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X)[:, columns].astype(np.float64)


# -- entropy / MDL --------------------------------------------------------------------------------

class EntropyDiscretizer(_Discretizer):
    r"""Supervised discretization by recursive entropy cuts (Fayyad and Irani's MDL method).

    Each column is cut at the point of greatest information gain about the class ``y``: the
    candidates are the midpoints between consecutive distinct values (as in the trees' split
    search; values closer than 1e-7 are one value), the lowest wins a tie.  The cut splits the
    column's interval in two, and each part is cut again, until the stopping rule refuses.
    With ``stop="mdl"`` (the default), Fayyad and Irani's (1993) minimum description length
    criterion accepts a cut of the rows ``S`` (total weight :math:`N`) into :math:`S_1` and
    :math:`S_2` iff

    .. math::

        \mathrm{Gain} > \frac{\log_2(N - 1)}{N} + \frac{\Delta}{N},\qquad
        \Delta = \log_2(3^k - 2) - \left[k\,\mathrm{Ent}(S) - k_1\,\mathrm{Ent}(S_1)
                 - k_2\,\mathrm{Ent}(S_2)\right]

    where :math:`\mathrm{Gain} = \mathrm{Ent}(S) - \frac{N_1}{N}\mathrm{Ent}(S_1) -
    \frac{N_2}{N}\mathrm{Ent}(S_2)`, entropies are class entropies in bits and :math:`k`,
    :math:`k_1`, :math:`k_2` the numbers of classes present in :math:`S`, :math:`S_1`,
    :math:`S_2`.  This is Orange's ``EntropyMDL``.

    Every column is discretized at once: the numba kernel
    :func:`fasttree.kernels.entropy_cut_level` processes one recursion level of all columns per
    call, in parallel.

    Parameters
    ----------
    stop : {"mdl", "gain"}, default="mdl"
        ``"mdl"``: the criterion above; ``"gain"``: cut while the gain exceeds ``min_gain``.
    min_gain : float, default=0.0
        A cut must gain more than this many bits (with either ``stop``).
    max_bins : int or None, default=None
        At most this many bins per column (>= 2).  The accepted cuts are taken best first:
        starting from the column's first cut, the next is always the accepted cut, among those
        whose parent interval's cut is already taken, that reduces the column's total entropy
        ``N * Gain`` the most (like a tree grown best first up to ``max_bins`` leaves).
    force : bool, default=False
        Keep a column's best first cut even when the stopping rule refuses it (its parts are not
        cut further), as Orange's ``EntropyMDL(force=True)``: every column with at least two
        distinct values gets two bins or more.
    categorical_features : None, array of int or str, or boolean mask, default=None
        Columns passed through unchanged (not discretized).

    Attributes
    ----------
    cut_points_ : list of ndarray of float64, one per column
        Increasing cut points of each column; None for a passed-through column.
    n_bins_ : ndarray of shape ``(n_features_in_,)``, int64
        Bins per column (0 for a passed-through column).
    labels_ : list of list of str
        Interval labels per column (see :func:`interval_labels`); None for a passed-through
        column.
    classes_ : ndarray
        The class labels seen in ``fit``.
    is_categorical_ : ndarray of shape ``(n_features_in_,)``, bool
        The passed-through columns.
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects
        Set when ``X`` is a DataFrame whose column names are all strings.

    Notes
    -----
    Missing values are left out of the cut search and stay NaN.  Sample weights weight the
    class counts (``N`` is then a total weight); rows of weight 0 are left out.  Differences
    from Orange: values are rounded to float32 first and values closer than 1e-7 count as one
    (both as in fasttree's trees); a cut must have a gain above ``min_gain`` (0 by default) even
    when the MDL bound is negative; Orange rounds the cut points themselves when their labels
    would coincide, fasttree only the labels.

    References
    ----------
    U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued attributes
    for classification learning", IJCAI 1993, pp. 1022-1027.

    Examples
    --------
    >>> import numpy as np
    >>> from fasttree.preprocessing import EntropyDiscretizer
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]])
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> EntropyDiscretizer().fit(X, y).cut_points_
    [array([4.5])]
    """

    _supervised = True

    def __init__(self, stop="mdl", min_gain=0.0, max_bins=None, force=False,
                 categorical_features=None):
        self.stop = stop
        self.min_gain = min_gain
        self.max_bins = max_bins
        self.force = force
        self.categorical_features = categorical_features

    def _validate_params(self):
        if self.stop not in ("mdl", "gain"):
            raise ValueError(f"stop must be 'mdl' or 'gain'; got {self.stop!r}.")
        if isinstance(self.min_gain, bool) or not isinstance(self.min_gain, numbers.Real):
            raise TypeError(f"min_gain must be a number; got {self.min_gain!r}.")
        if not np.isfinite(self.min_gain) or self.min_gain < 0:
            raise ValueError(f"min_gain must be finite and >= 0; got {self.min_gain!r}.")
        _check_n_bins(self.max_bins, "max_bins", allow_none=True)
        if not isinstance(self.force, (bool, np.bool_)):
            raise TypeError(f"force must be True or False; got {self.force!r}.")

    def fit(self, X, y=None, sample_weight=None):
        """Learn each column's cut points from the class labels ``y``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric data; NaN marks a missing value (left out of the cut search).
        y : array-like of shape (n_samples,)
            Class labels (required).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights; rows of weight 0 are left out.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def _fit_columns(self, X, columns, y, sample_weight):
        n_samples = X.shape[0]
        y = check_y(y, n_samples, regression=False, estimator_name=type(self).__name__)
        if y.dtype.kind == "f" and (y != np.round(y)).any():
            raise ValueError("EntropyDiscretizer needs class labels; y holds continuous values "
                             "(Unknown label type: continuous).")
        if y.dtype.kind == "c":
            raise ValueError("Complex data not supported for y.")
        try:
            classes, codes = np.unique(y, return_inverse=True)
        except TypeError:
            raise TypeError("y holds labels that cannot be compared (mixed types).") from None
        if len(classes) > MAX_CLASSES:
            raise ValueError(f"y has {len(classes)} classes; at most {MAX_CLASSES} are "
                             "supported.")
        self.classes_ = classes
        weights = None
        if sample_weight is not None:
            weights = check_sample_weight(sample_weight, n_samples)
            if (weights == 1.0).all():
                weights = None
        all_columns = columns.size == X.shape[1]  # (columns is increasing)
        Xc = X if all_columns else np.ascontiguousarray(X[:, columns])
        if weights is not None and (weights == 0.0).any():
            Xc = Xc.copy() if Xc is X else Xc
            Xc[weights == 0.0] = np.nan  # weightless rows take no part in the cut search
        return entropy_cut_points(
            Xc, codes.ravel(), len(classes), weights, stop=self.stop, min_gain=self.min_gain,
            max_bins=self.max_bins, force=bool(self.force))


def entropy_cut_points(X, y_codes, n_classes, sample_weight=None, *, stop="mdl", min_gain=0.0,
                       max_bins=None, force=False):
    """Entropy (MDL) cut points of every column of ``X``: the recursion of
    :class:`EntropyDiscretizer`, one :func:`~fasttree.kernels.entropy_cut_level` call per level.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32, C-contiguous
        NaN marks a missing value.
    y_codes : ndarray of shape (n_samples,), int
        Class codes ``0 .. n_classes - 1``.
    n_classes : int
    sample_weight : ndarray of shape (n_samples,), float64, or None
        None: every weight 1.
    stop, min_gain, max_bins, force
        As in :class:`EntropyDiscretizer`.

    Returns
    -------
    cut_points : list of ndarray of float64, one per column, increasing
    """
    n_samples, n_features = X.shape
    if n_features == 0:
        return []
    n_classes = max(int(n_classes), 1)
    labels = np.ascontiguousarray(y_codes, dtype=label_dtype(n_classes))
    sorted_x, sorted_idx = presort_features(np.ascontiguousarray(X, dtype=X_DTYPE))
    sorted_y = gather_targets(sorted_idx, labels)
    if sample_weight is None:
        sorted_w = np.empty((0, 0))
        table = xlog2x_table(n_samples)
        row_w = np.ones(n_samples)
    else:
        row_w = np.ascontiguousarray(sample_weight, dtype=np.float64)
        sorted_w = gather_targets(sorted_idx, row_w)
        table = np.empty(0)
    n_known = (~np.isnan(X)).sum(axis=0).astype(np.int64)
    all_counts = np.bincount(labels, weights=row_w, minlength=n_classes).astype(np.float64)
    root_counts = np.empty((n_features, n_classes))
    for f in range(n_features):
        missing = sorted_y[f, n_known[f]:]
        missing_w = None if sample_weight is None else sorted_w[f, n_known[f]:]
        root_counts[f] = all_counts - np.bincount(missing, weights=missing_w,
                                                  minlength=n_classes)
    root_counts = np.maximum(root_counts, 0.0)

    max_depth = None if max_bins is None else max_bins - 2  # deepest cut still usable
    # cuts: feature, threshold, score (N * gain: the column's entropy decrease), parent cut id
    cut_feature, cut_threshold, cut_score, cut_parent = [], [], [], []
    seg_feature = np.arange(n_features, dtype=np.int64)
    seg_start = np.zeros(n_features, dtype=np.int64)
    seg_end = n_known
    seg_counts = root_counts
    seg_parent = np.full(n_features, -1, dtype=np.int64)
    depth = 0
    while seg_feature.shape[0]:
        cut_pos, threshold, gain, mdl_threshold, left_counts, right_counts = entropy_cut_level(
            sorted_x, sorted_y, sorted_w, seg_feature, seg_start, seg_end,
            np.ascontiguousarray(seg_counts), table)
        valid = cut_pos >= 0
        accept = valid & (gain > min_gain)
        if stop == "mdl":
            accept &= gain > mdl_threshold
        taken = accept | (valid & force) if depth == 0 else accept
        ids = np.full(seg_feature.shape[0], -1, dtype=np.int64)
        n_taken = int(taken.sum())
        ids[taken] = np.arange(len(cut_feature), len(cut_feature) + n_taken)
        weight = seg_counts.sum(axis=1)
        cut_feature.extend(seg_feature[taken].tolist())
        cut_threshold.extend(threshold[taken].tolist())
        cut_score.extend((gain[taken] * weight[taken]).tolist())
        cut_parent.extend(seg_parent[taken].tolist())
        if max_depth is not None and depth + 1 > max_depth:
            break
        # the parts of the accepted cuts are cut again (forced cuts are not recursed into)
        grow = np.flatnonzero(accept)
        feature = np.concatenate([seg_feature[grow], seg_feature[grow]])
        start = np.concatenate([seg_start[grow], cut_pos[grow] + 1])
        end = np.concatenate([cut_pos[grow] + 1, seg_end[grow]])
        counts = np.concatenate([left_counts[grow], right_counts[grow]])
        parent = np.concatenate([ids[grow], ids[grow]])
        # a part with a single class or a single row cannot gain anything
        keep = ((counts > 0.0).sum(axis=1) > 1) & (end - start > 1)
        seg_feature, seg_start, seg_end = feature[keep], start[keep], end[keep]
        seg_counts, seg_parent = counts[keep], parent[keep]
        depth += 1

    cut_feature = np.asarray(cut_feature, dtype=np.int64)
    cut_threshold = np.asarray(cut_threshold, dtype=np.float64)
    if max_bins is not None:
        chosen = _best_first(cut_feature, cut_score, cut_parent, max_bins - 1)
        cut_feature, cut_threshold = cut_feature[chosen], cut_threshold[chosen]
    return [np.sort(cut_threshold[cut_feature == f]) for f in range(n_features)]


def _best_first(cut_feature, cut_score, cut_parent, max_cuts):
    """Ids of the cuts kept by a best-first expansion, at most ``max_cuts`` per column: the next
    cut is the best scoring one whose parent is already kept (roots have parent -1)."""
    children = {}
    for i, p in enumerate(cut_parent):
        children.setdefault(p if p >= 0 else ("root", int(cut_feature[i])), []).append(i)
    chosen = []
    for f in np.unique(cut_feature):
        heap = [(-cut_score[i], i) for i in children.get(("root", int(f)), [])]
        heapq.heapify(heap)
        n = 0
        while heap and n < max_cuts:
            _, i = heapq.heappop(heap)
            chosen.append(i)
            n += 1
            for c in children.get(i, []):
                heapq.heappush(heap, (-cut_score[c], c))
    return np.asarray(sorted(chosen), dtype=np.int64)


# -- unsupervised ---------------------------------------------------------------------------------

class _UnsupervisedDiscretizer(_Discretizer):
    def _validate_params(self):
        _check_n_bins(self.n_bins)

    def fit(self, X, y=None):
        """Learn each column's cut points (``y`` is ignored).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric data; NaN marks a missing value (ignored when computing cuts).
        y : ignored

        Returns
        -------
        self
        """
        return self._fit(X, y, None)

    def _fit_columns(self, X, columns, y, sample_weight):
        return [self._column_cuts(X[:, j]) for j in columns]


class EqualFrequencyDiscretizer(_UnsupervisedDiscretizer):
    """Discretization into intervals holding about the same number of rows (Orange's
    ``EqualFreq``).

    Walking a column's distinct values in increasing order, an interval closes once it holds
    ``remaining rows / remaining intervals`` rows; the cut goes just after the value that
    reached that quota if it exceeds it by less than half that value's rows, else just before
    it.  Cuts are midpoints between consecutive distinct values.  A column with at most
    ``n_bins`` distinct values gets a cut between every two of them; with many ties it may get
    fewer than ``n_bins`` bins.

    Parameters
    ----------
    n_bins : int, default=3
        Bins wanted per column (>= 2).  (Orange's default is 4.)
    categorical_features : None, array of int or str, or boolean mask, default=None
        Columns passed through unchanged.

    Attributes
    ----------
    cut_points_ : list of ndarray of float64, one per column
        Increasing cut points; None for a passed-through column.
    n_bins_ : ndarray of shape ``(n_features_in_,)``, int64
        Bins per column (0 for a passed-through column).
    labels_ : list of list of str
        Interval labels per column (None for a passed-through column).
    is_categorical_ : ndarray of shape ``(n_features_in_,)``, bool
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects

    Notes
    -----
    Missing values are left out and stay NaN.  Difference from Orange: the values are rounded to
    float32 first (Orange works in float64); Orange rounds the cut points themselves when their
    labels would coincide, fasttree only the labels.  Bin ``i`` holds
    ``cut_points_[j][i - 1] <= x < cut_points_[j][i]``.

    Examples
    --------
    >>> import numpy as np
    >>> from fasttree.preprocessing import EqualFrequencyDiscretizer
    >>> X = np.arange(1.0, 7.0).reshape(-1, 1)
    >>> EqualFrequencyDiscretizer(n_bins=3).fit(X).cut_points_
    [array([2.5, 4.5])]
    """

    def __init__(self, n_bins=3, categorical_features=None):
        self.n_bins = n_bins
        self.categorical_features = categorical_features

    def _column_cuts(self, col):
        col = col[~np.isnan(col)]
        values, counts = np.unique(col, return_counts=True)
        return equal_frequency_cuts(values.astype(np.float64), counts.astype(np.float64),
                                    self.n_bins)


class EqualWidthDiscretizer(_UnsupervisedDiscretizer):
    """Discretization into intervals of equal width (Orange's ``EqualWidth``).

    The cut points of a column are ``min + i * (max - min) / n_bins`` for ``i = 1 .. n_bins-1``
    (float64, from the column's minimum and maximum); a constant or all-missing column gets no
    cut (one bin).  Values outside the fitted range fall in the first or the last bin.

    Parameters
    ----------
    n_bins : int, default=4
        Bins per column (>= 2).
    categorical_features : None, array of int or str, or boolean mask, default=None
        Columns passed through unchanged.

    Attributes
    ----------
    cut_points_ : list of ndarray of float64, one per column
        Increasing cut points; None for a passed-through column.
    n_bins_ : ndarray of shape ``(n_features_in_,)``, int64
        Bins per column (0 for a passed-through column).
    labels_ : list of list of str
        Interval labels per column (None for a passed-through column).
    is_categorical_ : ndarray of shape ``(n_features_in_,)``, bool
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects

    Notes
    -----
    Missing values are left out and stay NaN.  A value equal to a cut point goes to the upper
    bin (bin ``i`` holds ``cut_points_[j][i - 1] <= x < cut_points_[j][i]``, as in Orange).
    Difference from Orange: the values are rounded to float32 first (Orange works in float64);
    Orange rounds the cut points themselves when their labels would coincide, fasttree only the
    labels.

    Examples
    --------
    >>> import numpy as np
    >>> from fasttree.preprocessing import EqualWidthDiscretizer
    >>> X = np.array([[0.0], [1.0], [8.0]])
    >>> EqualWidthDiscretizer(n_bins=4).fit(X).cut_points_
    [array([2., 4., 6.])]
    """

    def __init__(self, n_bins=4, categorical_features=None):
        self.n_bins = n_bins
        self.categorical_features = categorical_features

    def _column_cuts(self, col):
        col = col[~np.isnan(col)]
        if col.size == 0:
            return np.empty(0)
        low = float(col.min())
        high = float(col.max())
        if low == high:
            return np.empty(0)
        width = (high - low) / self.n_bins
        return np.array([low + i * width for i in range(1, self.n_bins)])
