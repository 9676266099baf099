"""A dependency-free base giving fasttree's estimators scikit-learn's estimator protocol.

``get_params``/``set_params`` read the ``__init__`` signature (so ``clone``, ``Pipeline`` and
``GridSearchCV`` work); ``__sklearn_tags__`` and the metadata routing methods (from
:mod:`fasttree._routing`) import scikit-learn lazily because only scikit-learn needs them,
which keeps ``import fasttree`` free of scikit-learn.
"""

import inspect
import numbers
import threading
import warnings
from contextlib import contextmanager, nullcontext

import numba

from ._jit import forked_from_openmp
from ._routing import MetadataRequester
from .exceptions import not_fitted_error


class BaseEstimator(MetadataRequester):
    """Parameter handling, fitted-state checks and scikit-learn's metadata routing
    (``set_fit_request``, ...) shared by every fasttree estimator."""

    _estimator_type = None  # "classifier" or "regressor"; read by older scikit-learn versions
    _multi_output = False  # accepts y of shape (n_samples, n_outputs)
    _accepts_sparse = False  # accepts scipy.sparse X
    _fitted_attribute = "tree_"  # set by fit: its presence means fitted

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in signature.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    def get_params(self, deep=True):
        """Get the estimator's parameters (``deep`` is accepted for compatibility)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters; unknown names raise ``ValueError``. Returns ``self``."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid}.")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{name}={value!r}" for name, value in self.get_params().items()
            if not (value is defaults.get(name) or _safe_equal(value, defaults.get(name)))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __getstate__(self):
        # wall-clock timings are not part of the model: two identical fits pickle to identical
        # bytes (scikit-learn's test_deterministic_pickle)
        state = self.__dict__.copy()
        state.pop("fit_timings_", None)
        return state

    def _param_error(self, name, constraint):
        """A bad parameter in scikit-learn's wording, so that code matching its messages keeps
        working."""
        return ValueError(f"The '{name}' parameter of {type(self).__name__} must be "
                          f"{constraint}. Got {getattr(self, name)!r} instead.")

    def __sklearn_is_fitted__(self):
        return hasattr(self, self._fitted_attribute)

    def _check_is_fitted(self):
        if not self.__sklearn_is_fitted__():
            raise not_fitted_error(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator.")

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        is_classifier = self._estimator_type == "classifier"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=True, multi_output=self._multi_output),
            classifier_tags=ClassifierTags() if is_classifier else None,
            regressor_tags=None if is_classifier else RegressorTags(),
            input_tags=InputTags(allow_nan=True, sparse=self._accepts_sparse),
        )


def _safe_equal(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def resolve_n_jobs(n_jobs):
    """Number of threads for ``n_jobs`` (None or -1: all of numba's threads; -2: all but one)."""
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return available
    # any integer type: grids are often built with np.arange
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer; got {n_jobs!r}.")
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return min(n_jobs, available)


#: held around fasttree's kernels on numba's ``workqueue`` layer, which aborts the process when
#: two threads run parallel code at once; reentrant because a fit may prune, which predicts
_WORKQUEUE_LOCK = threading.RLock()
_warned_one_thread = []


#: predictions for fewer rows than this walk the tree on one thread: the walk takes less time than
#: waking the other threads (and much less than waiting for them on a busy machine)
SMALL_PREDICTION_ROWS = 4096


@contextmanager
def numba_threads(n_jobs, n_rows=None):
    """Run the body with numba's thread count set for ``n_jobs``; always restore it.

    ``n_rows``, the rows a prediction walks: fewer than ``SMALL_PREDICTION_ROWS`` run on one
    thread (the result is the same on any number of threads).

    Every call into fasttree's kernels runs inside this: on numba's ``workqueue`` layer it also
    holds a process-wide lock, so fits on concurrent Python threads take turns instead of
    aborting the interpreter; in a child forked after the parent used the ``omp`` layer the
    kernels run on one thread (see :mod:`fasttree._jit`), which is said once with a warning.
    """
    n_threads = resolve_n_jobs(n_jobs)
    if n_rows is not None and n_rows < SMALL_PREDICTION_ROWS:
        n_threads = 1
    previous = numba.get_num_threads()
    numba.set_num_threads(n_threads)  # also starts numba's threading layer, so it is known below
    if forked_from_openmp():
        _warn_one_thread()
    lock = _WORKQUEUE_LOCK if numba.threading_layer() == "workqueue" else nullcontext()
    try:
        with lock:
            yield n_threads
    finally:
        numba.set_num_threads(previous)


def _warn_one_thread():
    if _warned_one_thread:
        return
    _warned_one_thread.append(True)
    warnings.warn(
        "fasttree: this process was forked from one that had run numba's OpenMP threading layer, "
        "which cannot run in a forked child; fasttree's kernels run on one thread here (compiled "
        "for it on first use). To keep every core, start processes with the 'spawn' or "
        "'forkserver' method, or use numba's TBB layer (see 'Threads and processes' in "
        "docs/design.rst).", RuntimeWarning, stacklevel=5)
