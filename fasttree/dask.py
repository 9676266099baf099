"""Train on a Dask cluster: one exact tree feature-parallel, or a forest tree-parallel; the
single-machine estimator's trees, bit for bit.

``fasttree.dask.DecisionTreeClassifier`` and ``DecisionTreeRegressor`` take the parameters of
:class:`fasttree.DecisionTreeClassifier` and :class:`fasttree.DecisionTreeRegressor` plus

* ``client``: the :class:`distributed.Client` to train on (None: the default client);
* ``partition``: ``"features"`` (each worker holds a block of columns for every row);
* ``timeout``: seconds a level's round trip may take before the fit is abandoned with a
  ``RuntimeError`` naming the worker (one that died, left or hangs); set-up steps (ingest,
  presort, kernels loaded or compiled on a fresh worker) may take ``SETUP_TIMEOUTS`` times as
  long while their workers live, and end within ``timeout`` when one leaves;
* ``workers``: addresses of the workers to train on (None: every worker of the client).

``X`` may be a dask Array or DataFrame with any chunking, or a NumPy array; it is rechunked once
into one block of columns per worker and held there by a Dask actor
(:class:`~fasttree.sharded_splitter.ColumnShard`) for the fit.  ``y`` and ``sample_weight`` are
brought to the driver (they are small next to ``X``) and sent to every worker once.  The driver
runs the unchanged :class:`~fasttree.grower.TreeGrower` over a
:class:`~fasttree.sharded_splitter.ShardedSplitter`: see that module for the protocol, and
``docs/dask.rst`` for the design and measured figures.

What a sharded fit does not do raises a ``ValueError`` naming the parameter: categorical
features, ``missing="fractional"``, ``splitter="hist"`` or ``"random"``, criteria other than gini,
entropy/log_loss, squared_error and poisson, monotonicity constraints, several outputs, sparse
``X``, and pruning other than cost-complexity at a given ``ccp_alpha`` (choosing it by
cross-validation, ``pruning="cost_complexity"`` alone, would need ``X`` in memory).

``fasttree.dask.RandomForestClassifier``, ``RandomForestRegressor``, ``ExtraTreesClassifier`` and
``ExtraTreesRegressor`` take the parameters of the single-machine forests of the same names plus
``client``, ``workers``, ``partition="trees"`` (each worker holds all of ``X`` and grows a share
of the trees) and ``timeout`` (seconds between the driver's checks that the workers growing trees
are alive).  The driver validates and encodes ``X``, ``y`` and ``sample_weight`` and draws the
trees' seeds as the single-machine forest does (dask collections are computed on the driver
first: ``X`` must fit in the driver's and each worker's memory); ``X`` is sent once to every
worker that grows trees; worker ``j`` grows a contiguous block of the seeds with the
single-machine forest's own growth (:meth:`fasttree.forest._BaseForest._grow`) on ``n_jobs``
numba threads (None: the worker's Dask threads); the driver gathers the trees in the seeds'
order and finishes as the single-machine fit does (out-of-bag score, attributes).  A tree depends
only on its seed and the data, so the forest is the single-machine forest, tree for tree, for any
number of workers, threads or ``warm_start`` steps.  A forest with ``X``'s columns spread over
the workers (``partition="features"``, for ``X`` too large for a worker) is not offered:
``docs/dask.rst`` says what it would need.

This module imports Dask; ``import fasttree`` does not import it.
"""

import asyncio
import inspect
import numbers
import time

import numpy as np

from distributed import default_client, wait
from distributed.protocol import to_serialize

from . import estimators as _local
from . import forest as _forest
from ._base import numba_threads, resolve_n_jobs
from ._dtypes import label_dtype
from ._frames import display_name
from ._validation import is_dataframe, is_sparse
from .sharded_splitter import ColumnShard, ShardedSplitter, ShardLost

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier",
           "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor"]

_SUPPORTED_CRITERIA = ("gini", "entropy", "log_loss", "squared_error", "poisson")
_DASK_PARAMS = ("client", "partition", "timeout", "workers")


def _held(block):
    """A block of columns, as a task pinned to the worker that will hold it."""
    return block


#: set-up steps (ingest, presort, kernels loaded or compiled on a fresh worker) may take this
#: many timeouts while their workers live; a worker that leaves is noticed within one timeout
SETUP_TIMEOUTS = 10


def _wait_alive(client, addresses, wait_for, timeout, step):
    """``wait_for(seconds)`` called in slices of ``timeout`` while the workers are alive.

    Raises
    ------
    RuntimeError
        A worker left (or its connection broke), or ``SETUP_TIMEOUTS * timeout`` seconds passed.
    """
    for _ in range(SETUP_TIMEOUTS):
        try:
            return wait_for(timeout)
        except TimeoutError:  # first: a subclass of OSError, and a slow step, not a lost worker
            gone = sorted(set(addresses) - set(client.nthreads()))
            if gone:
                raise RuntimeError(f"worker {gone[0]} left while {step} (timeout="
                                   f"{timeout:g} s).") from None
        except OSError as exc:
            raise RuntimeError(f"{step} failed: a worker of {addresses} is gone "
                               f"({type(exc).__name__}: {exc}).") from exc
    raise RuntimeError(f"{step} on {addresses} took more than {SETUP_TIMEOUTS} x timeout="
                       f"{timeout:g} s.")


class _ActorCalls:
    """The ``call_shards`` transport of :class:`~fasttree.sharded_splitter.ShardedSplitter` over
    the workers' :class:`~fasttree.sharded_splitter.ColumnShard` actors.

    A round trip sends every call at once over the client's connections to the workers (the
    workers' ``actor_execute`` handler, which runs the method in the actor's thread, as an actor
    handle does) and waits for all the answers in one hop to the client's event loop.  An actor
    handle's future costs two hops per call: about 4 ms per round trip to two local workers where
    this takes about 2.5 (``docs/dask.rst``).
    """

    def __init__(self, client, addresses, keys):
        self.client = client
        self.rpcs = [client.rpc(address) for address in addresses]
        self.keys = list(keys)

    def __call__(self, method, calls, timeout):
        return self.client.sync(self._round_trip, method, calls, timeout)

    async def _call(self, j, method, args):
        reply = await self.rpcs[j].actor_execute(
            actor=self.keys[j], function=method, args=[to_serialize(a) for a in args], kwargs={})
        if reply["status"] != "OK":
            raise reply["exception"]  # raised by the method on the worker
        return reply["result"]

    async def _round_trip(self, method, calls, timeout):
        tasks = [asyncio.ensure_future(self._call(j, method, args)) for j, args in calls]
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        for (j, _), task in zip(calls, tasks):
            if task in pending:
                raise ShardLost(j, f"no answer after {timeout:g} s")
            exc = task.exception()
            if isinstance(exc, OSError):
                raise ShardLost(j, f"{type(exc).__name__}: {exc}") from exc
            if exc is not None:
                raise exc
        return [task.result() for task in tasks]


class _ShardedInput:
    """``X`` of a sharded fit as the estimators' ``_fit`` sees it: a shape, and the rows kept."""

    def __init__(self, data, rows=None):
        self.data, self.rows = data, rows
        n = data.shape[0] if rows is None else int(rows.sum())
        self.shape = (n, data.shape[1])

    def take_rows(self, rows):
        if self.rows is None:
            return _ShardedInput(self.data, rows)
        kept = self.rows.copy()
        kept[np.flatnonzero(self.rows)[~rows]] = False
        return _ShardedInput(self.data, kept)


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


def _to_numpy(values):
    """``y`` or ``sample_weight`` on the driver (dask collections computed)."""
    if values is None:
        return None
    if _is_dask(values):
        values = values.compute()
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    return np.asarray(values)


def _as_matrix(X):
    """``X`` as a 2-D dask or NumPy array of numbers; DataFrame columns checked first."""
    if is_sparse(X) or type(getattr(X, "_meta", None)).__module__.startswith("scipy.sparse"):
        raise ValueError("X is sparse; a sharded fit takes dense X (partition='features').")
    if is_dataframe(X):
        for column, dtype in zip(X.columns, X.dtypes):
            if getattr(dtype, "kind", "O") not in "biuf":
                raise ValueError(
                    f"X column {display_name(column)} has dtype {dtype}: a sharded fit takes "
                    "numeric features only (categorical_features is not supported).")
        X = X.to_dask_array(lengths=True) if _is_dask(X) else X.to_numpy()
    elif not _is_dask(X):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim} dimension(s).")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric; got dtype {X.dtype}.")
    if any(np.isnan(c) for c in X.shape):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X has shape {X.shape}; at least one sample and one feature are "
                         "required.")
    return X


def _choose_workers(client, workers, timeout):
    """The addresses to train on (``workers``, or every worker of the client, waiting up to
    ``timeout`` seconds for one) and the client's ``nthreads``.

    Raises
    ------
    ValueError
        ``workers`` names an address the client does not have, or is empty.
    RuntimeError
        The client has no worker after ``timeout`` seconds.
    """
    nthreads = client.nthreads()
    addresses = sorted(nthreads) if workers is None else list(workers)
    unknown = [a for a in addresses if a not in nthreads]
    if unknown:
        raise ValueError(f"workers names addresses the client does not have: {unknown}.")
    if not addresses:
        if workers is not None:
            raise ValueError("workers is empty; give at least one worker address.")
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise RuntimeError(f"the Dask client has no worker (waited timeout={timeout:g} "
                               "s).") from None
        nthreads = client.nthreads()
        addresses = sorted(nthreads)
    return addresses, nthreads


def _check_timeout(timeout):
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}.")


class _DaskEstimator:
    """What the Dask trees and forests share: pickled without their client, :meth:`to_local`,
    and predictions mapped over the blocks of rows of a dask ``X``."""

    _local_class = None  # the single-machine estimator
    _local_state = ()  # private fitted attributes to_local copies (besides those ending in "_")

    def __getstate__(self):
        state = super().__getstate__()
        state["client"] = None  # a client belongs to its process
        return state

    def _client(self):
        return default_client() if self.client is None else self.client

    def to_local(self):
        """The fitted estimator as a plain single-machine one (no Dask needed to use it).

        Returns
        -------
        estimator : the fasttree estimator of the same name
            ``fasttree.DecisionTreeClassifier`` for ``fasttree.dask.DecisionTreeClassifier``,
            ``fasttree.RandomForestClassifier`` for ``fasttree.dask.RandomForestClassifier``...
        """
        self._check_is_fitted()
        params = {k: v for k, v in self.get_params().items() if k not in _DASK_PARAMS}
        local = self._local_class(**params)
        local.__dict__.update({k: v for k, v in self.__dict__.items()
                               if (k.endswith("_") and k != "fit_report_")
                               or k in self._local_state})
        return local

    def _map_rows(self, X, method, n_columns, dtype):
        """``method`` of :meth:`to_local` (a name, or a function of the local estimator and a
        block) applied to every block of rows of a dask ``X``."""
        local = self.to_local()
        names = getattr(self, "feature_names_in_", None)

        def predict_block(block):
            if names is not None and not is_dataframe(block):
                import pandas as pd  # the names were checked at fit: a pandas block keeps them

                block = pd.DataFrame(block, columns=names)
            if callable(method):
                return method(local, block)
            return getattr(local, method)(block)

        if is_dataframe(X) and np.any(getattr(self, "is_categorical_", False)):
            # categorical columns: each partition predicted as the DataFrame it is
            import dask.array as da
            from dask import delayed

            lengths = X.map_partitions(len).compute()
            shape = () if n_columns is None else (n_columns,)
            return da.concatenate([
                da.from_delayed(delayed(predict_block)(part), shape=(int(n),) + shape,
                                dtype=dtype)
                for part, n in zip(X.to_delayed(), lengths)])
        if is_dataframe(X):
            X = X.to_dask_array(lengths=True)
        X = X.rechunk({1: -1})
        if n_columns is None:
            return X.map_blocks(predict_block, drop_axis=1, dtype=dtype)
        return X.map_blocks(predict_block, chunks=(X.chunks[0], (n_columns,)), dtype=dtype)


class _DaskTree(_DaskEstimator):
    """The sharded fit and dask-aware prediction shared by the classifier and the regressor."""

    def _splitter_class(self, sparse):
        """Always the sharded splitter, which takes neither sparse X nor several outputs
        (``__sklearn_tags__`` reads its capabilities, as for the single-machine estimators)."""
        return ShardedSplitter

    def _check_dask_params(self):
        unsupported = [
            ("partition", self.partition != "features", "'features'"),
            ("criterion", self.criterion not in _SUPPORTED_CRITERIA,
             f"one of {list(_SUPPORTED_CRITERIA)}"),
            ("splitter", self.splitter != "best", "'best'"),
            ("missing", self.missing != "learn", "'learn'"),
            ("categorical_features", self.categorical_features not in (None, "from_dtype"),
             "None or 'from_dtype' (numeric features only)"),
            ("monotonic_cst", self.monotonic_cst is not None, "None"),
            ("pruning", self.pruning not in (None, "cost_complexity"),
             "None or 'cost_complexity'"),
        ]
        for name, refused, allowed in unsupported:
            if refused:
                raise ValueError(f"{type(self).__name__} (fasttree.dask) takes {name}="
                                 f"{allowed}; got {getattr(self, name)!r}.")
        if self._alpha_by_cv():
            raise ValueError(
                f"{type(self).__name__} (fasttree.dask) does not choose ccp_alpha by "
                "cross-validation (pruning='cost_complexity' without ccp_alpha): its folds' "
                "trees and held-out rows would need X in memory.  Give ccp_alpha > 0, or choose "
                "it with fasttree's single-machine estimator on a sample.")
        _check_timeout(self.timeout)

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on the cluster; the tree is the one the single-machine estimator grows.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)
            Numeric features, any chunking.
        y : dask Array or Series, or array-like, of shape (n_samples,)
        sample_weight : dask Array or array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._check_dask_params()
        y = _to_numpy(y)
        if np.ndim(y) == 2 and y.shape[1] > 1:
            raise ValueError("y has several outputs; a sharded fit takes one output.")
        self._futures = []
        try:
            return super().fit(X, y, _to_numpy(sample_weight))
        finally:
            for future in self.__dict__.pop("_futures"):
                future.release()

    def _encode_fit(self, X):
        X = _as_matrix(X)
        self.is_categorical_ = np.zeros(X.shape[1], dtype=bool)
        self.categories_ = [None] * X.shape[1]
        return _ShardedInput(X)

    def _take_rows(self, X, rows):
        return X.take_rows(rows)

    def _make_splitter(self, X, y, sample_weight, params, n_classes):
        client = self._client()
        timeout = float(self.timeout)
        t0 = time.perf_counter()
        addresses, nthreads = _choose_workers(client, self.workers, timeout)
        n_features = X.shape[1]
        n_shards = min(len(addresses), n_features)  # a worker without columns has no part
        addresses = addresses[:n_shards]
        blocks = np.array([j * n_features // n_shards for j in range(n_shards + 1)])
        parts = self._place_columns(client, X.data, blocks, addresses)
        # the ingest, timed apart from the presort
        _wait_alive(client, addresses, lambda t: wait(parts, timeout=t), timeout,
                    "placing the columns")
        target = y if n_classes is None else y.astype(label_dtype(n_classes))
        # keys of their own, as the columns' (sample_weight None alone was one key for all fits)
        shared = client.scatter([target, sample_weight, X.rows], workers=addresses,
                                broadcast=True, hash=False)
        self._futures += shared
        settings = {"n_classes": n_classes, "criterion_code": params.criterion_code,
                    "min_samples_leaf": params.min_samples_leaf,
                    "min_weight_leaf": params.min_weight_leaf}
        t_ingest = time.perf_counter()
        futures = [client.submit(ColumnShard, part, *shared, blocks[j], settings,
                                 nthreads[addresses[j]], actor=True, workers=[addresses[j]],
                                 allow_other_workers=False, pure=False)
                   for j, part in enumerate(parts)]
        self._futures += futures
        for address, future in zip(addresses, futures):
            _wait_alive(client, [address], future.result, timeout, "setting up its columns")
        splitter = ShardedSplitter(_ActorCalls(client, addresses, [f.key for f in futures]),
                                   addresses, blocks, X.shape[0], sample_weight,
                                   n_classes, params.criterion_code, timeout)
        self.fit_report_ = {
            "workers": addresses, "feature_blocks": blocks,
            "threads": splitter.shard_threads,
            "ingest_seconds": t_ingest - t0,
            "setup_seconds": time.perf_counter() - t_ingest,
            "worker_setup_seconds": splitter.shard_setup_seconds,
            "levels": splitter.levels,
        }
        return splitter

    def _place_columns(self, client, data, blocks, addresses):
        """Futures of the column blocks (all rows each), the ``j``-th meant for worker ``j``."""
        if not _is_dask(data):
            # keys of their own (hash=False): a key named after the content is shared by every
            # fit of the same data, and one fit releasing it loses it under another
            parts = [client.scatter(np.ascontiguousarray(data[:, lo:hi]), workers=[address],
                                    hash=False)
                     for lo, hi, address in zip(blocks[:-1], blocks[1:], addresses)]
        else:
            widths = tuple(int(w) for w in np.diff(blocks))
            blocked = data.rechunk({0: -1, 1: widths})
            computed = client.compute(list(blocked.to_delayed().ravel()))
            self._futures += computed
            # each block copied to its worker now, so that the ingest holds the transfer
            parts = [client.submit(_held, part, workers=[address], allow_other_workers=False,
                                   pure=False) for part, address in zip(computed, addresses)]
        self._futures += parts
        return parts


class DecisionTreeClassifier(_DaskTree, _local.DecisionTreeClassifier):
    """:class:`fasttree.DecisionTreeClassifier` trained on a Dask cluster, feature-parallel.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The client to train on; None takes the default client.
    partition : {"features"}, default="features"
        Each worker holds a block of columns for every row.
    timeout : float, default=60
        Seconds a level's round trip may take; then ``fit`` raises a ``RuntimeError`` naming
        the worker (one that died, left, or is stuck).  Set-up steps may take
        ``SETUP_TIMEOUTS`` (10) times as long while their workers live.
    workers : list of str or None, default=None
        Addresses of the workers to train on; None: every worker of the client.
    **params
        The parameters of :class:`fasttree.DecisionTreeClassifier` (numeric features,
        ``splitter="best"``, ``missing="learn"``, criteria gini, entropy and log_loss).

    Attributes
    ----------
    tree_ : fasttree.tree.Tree
        Equal, array for array, to the single-machine estimator's ``tree_``.
    fit_report_ : dict
        ``workers``, ``feature_blocks`` (worker ``j`` holds features ``feature_blocks[j] ..
        feature_blocks[j + 1] - 1``), ``threads`` (numba threads and threading layer per worker),
        ``ingest_seconds`` (the rechunk into column blocks, each moved to its worker),
        ``setup_seconds`` (the actors started, each block checked and presorted: wall time on
        the driver), ``worker_setup_seconds`` (the check and presort on each worker), and
        ``levels``: per level ``round_trips``, ``bytes_out`` and ``bytes_in`` per worker,
        ``compute_seconds``, ``communication_seconds`` and ``wait_seconds``
        (:class:`~fasttree.sharded_splitter.ShardedSplitter`).
    """

    _local_class = _local.DecisionTreeClassifier

    def predict(self, X):
        """Most probable class of each row; a dask array for a dask ``X`` (``map_blocks``).

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        y_pred : dask Array or ndarray of shape (n_samples,)
        """
        if _is_dask(X):
            self._check_is_fitted()
            return self._map_rows(X, "predict", None, self.classes_.dtype)
        return super().predict(X)

    def predict_proba(self, X):
        """Class probabilities of each row; a dask array for a dask ``X`` (``map_blocks``).

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        proba : dask Array or ndarray of shape (n_samples, n_classes)
        """
        if _is_dask(X):
            self._check_is_fitted()
            return self._map_rows(X, "predict_proba", self.n_classes_, np.float64)
        return super().predict_proba(X)


class DecisionTreeRegressor(_DaskTree, _local.DecisionTreeRegressor):
    """:class:`fasttree.DecisionTreeRegressor` trained on a Dask cluster, feature-parallel.

    Parameters
    ----------
    client, partition, timeout, workers
        As in :class:`DecisionTreeClassifier`.
    **params
        The parameters of :class:`fasttree.DecisionTreeRegressor` (numeric features,
        ``splitter="best"``, ``missing="learn"``, criteria squared_error and poisson).

    Attributes
    ----------
    tree_ : fasttree.tree.Tree
        Equal, array for array, to the single-machine estimator's ``tree_``.
    fit_report_ : dict
        As in :class:`DecisionTreeClassifier`.
    """

    _local_class = _local.DecisionTreeRegressor

    def predict(self, X):
        """Weighted mean target of each row's leaf; a dask array for a dask ``X``.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        y_pred : dask Array or ndarray of shape (n_samples,)
        """
        if _is_dask(X):
            self._check_is_fitted()
            return self._map_rows(X, "predict", None, np.float64)
        return super().predict(X)


def _with_dask_params(cls, partition="features"):
    """Give ``cls`` the single-machine ``__init__`` plus the Dask parameters (``partition``
    defaulting to ``partition``), keeping the explicit signature ``get_params`` reads."""
    base = cls._local_class
    signature = inspect.signature(base.__init__)
    extra = [inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
             inspect.Parameter("partition", inspect.Parameter.KEYWORD_ONLY, default=partition),
             inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=60),
             inspect.Parameter("workers", inspect.Parameter.KEYWORD_ONLY, default=None)]
    default_partition = partition

    def __init__(self, *, client=None, partition=default_partition, timeout=60, workers=None,
                 **params):
        base.__init__(self, **params)
        self.client, self.partition, self.timeout, self.workers = (client, partition, timeout,
                                                                   workers)

    __init__.__signature__ = signature.replace(
        parameters=[*signature.parameters.values(), *extra])
    cls.__init__ = __init__
    return cls


_with_dask_params(DecisionTreeClassifier)
_with_dask_params(DecisionTreeRegressor)


# -- forests -----------------------------------------------------------------------------------
def _shares(n_trees, threads):
    """Boundaries of contiguous blocks of ``n_trees`` seeds, one block per worker, in proportion
    to its threads: worker ``j`` grows seeds ``bounds[j]:bounds[j + 1]`` (maybe none)."""
    cumulative = np.concatenate([[0], np.cumsum(threads)])
    return [int(n_trees * c // cumulative[-1]) for c in cumulative]


def _grow_share(forest, template, X, targets, codes, weight, n_classes, offsets, seeds,
                n_threads):
    """Run on a worker: the trees of ``seeds``, grown by the single-machine forest's
    :meth:`~fasttree.forest._BaseForest._grow` on ``n_threads`` numba threads (the kernels'
    count is per calling thread, and Dask's nanny sets ``OMP_NUM_THREADS=1``).

    Returns
    -------
    trees : list of fitted fasttree trees, in the order of ``seeds``
    timings : dict
        ``fit_timings_`` of the growth.
    max_features :
        What the growth set on ``template`` (``missing_in_fit_`` the driver sets from ``X``).
    seconds : float
        Wall time of the growth on the worker.
    """
    t0 = time.perf_counter()
    forest._sample_weight = weight  # what the bootstrap draws by: the fit's row weights
    forest.estimators_ = []
    with numba_threads(n_threads):
        forest._grow(template, X, targets, n_classes, offsets, codes, weight, seeds)
    return (forest.estimators_, forest.fit_timings_, template.max_features_,
            time.perf_counter() - t0)


def _tree_bytes(trees):
    """Bytes of the fitted trees' node arrays."""
    return sum(value.nbytes for tree in trees for value in vars(tree.tree_).values()
               if isinstance(value, np.ndarray))


class _DaskForest(_DaskEstimator):
    """The tree-parallel fit and dask-aware prediction shared by the forests."""

    # what the out-of-bag rows, estimators_samples_ and a warm start read
    _local_state = ("_n_samples", "_sample_weight", "_n_samples_bootstrap")

    def _check_dask_params(self):
        if self.partition == "features":
            raise ValueError(
                f"{type(self).__name__} (fasttree.dask) takes partition='trees' (each worker "
                "holds all of X and grows a share of the trees); a forest grown with X's "
                "columns spread over the workers (partition='features') is not offered: see "
                "docs/dask.rst, 'Forests'.")
        if self.partition != "trees":
            raise ValueError(f"{type(self).__name__} (fasttree.dask) takes partition='trees'; "
                             f"got {self.partition!r}.")
        _check_timeout(self.timeout)
        resolve_n_jobs(self.n_jobs)  # refused here rather than on every worker

    def fit(self, X, y, sample_weight=None):
        """Grow the forest on the cluster: the forest the single-machine estimator grows from
        the same data, parameters and ``random_state``, tree for tree.

        ``X``, ``y`` and ``sample_weight`` are validated and encoded on the driver (dask
        collections computed there first), ``X`` is sent once to every worker that grows
        trees, each grows a contiguous block of the trees' seeds, and the driver gathers the
        trees in the seeds' order and computes the out-of-bag score.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like or DataFrame, of shape (n_samples, n_features)
            As the single-machine forest takes it (categorical columns, missing values, sparse
            input densified); it must fit in the driver's and in each worker's memory.
        y : dask Array or Series, or array-like, of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : dask Array or array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._check_dask_params()
        client = self._client()
        X, y, sample_weight = (_computed(client, v) for v in (X, y, sample_weight))
        self._fit_client = client
        try:
            return super().fit(X, y, sample_weight)
        finally:
            del self._fit_client

    def _grow_seeds(self, template, X, targets, n_classes, offsets, codes, weight, seeds):
        """Grow the trees of ``seeds`` on the workers, a contiguous block of the seeds each
        (in proportion to their threads), and append them to ``estimators_`` in the seeds'
        order."""
        client = self._fit_client
        timeout = float(self.timeout)
        t0 = time.perf_counter()
        addresses, nthreads = _choose_workers(client, self.workers, timeout)
        threads = [nthreads[a] for a in addresses]
        bounds = _shares(len(seeds), threads)
        busy = [j for j in range(len(addresses)) if bounds[j + 1] > bounds[j]]
        used = [addresses[j] for j in busy]
        # a forest of the same parameters (n_jobs too: the trees keep the forest's), without
        # the Dask ones, holding what _grow reads besides its arguments
        forest = self._local_class(**{k: v for k, v in self.get_params().items()
                                      if k not in _DASK_PARAMS})
        forest._n_samples_bootstrap = self._n_samples_bootstrap
        futures = []
        try:
            # X (and the targets, the weights) sent once to one worker, then copied worker to
            # worker (a tree of copies: Dask's replicate); keys of their own (hash=False), as
            # the sharded tree's
            shared = client.scatter([X, targets, codes, weight], workers=used, broadcast=True,
                                    hash=False, direct=True)
            futures += shared
            t_scatter = time.perf_counter()
            for j in busy:
                n_threads = threads[j] if self.n_jobs is None else self.n_jobs
                futures.append(client.submit(
                    _grow_share, forest, template, *shared, n_classes, offsets,
                    seeds[bounds[j]:bounds[j + 1]], n_threads, workers=[addresses[j]],
                    allow_other_workers=False, pure=False))
            results = _gather_trees(client, futures[len(shared):], used, timeout)
        finally:
            for future in futures:
                future.release()
        timings = {}
        for trees, worker_timings, max_features, _ in results:
            self.estimators_.extend(trees)
            for phase, seconds in worker_timings.items():
                timings[phase] = timings.get(phase, 0.0) + seconds
        self.fit_timings_ = timings
        template.max_features_ = max_features
        self.fit_report_ = {
            "workers": used,
            "trees": [bounds[j + 1] - bounds[j] for j in busy],
            "threads": [threads[j] if self.n_jobs is None else self.n_jobs for j in busy],
            "bytes_sent": int(sum(getattr(v, "nbytes", 0) for v in (X, targets, weight))
                              + sum(c.nbytes for c in codes or ())),
            "scatter_seconds": t_scatter - t0,
            "grow_seconds": [r[3] for r in results],
            "tree_bytes": [_tree_bytes(r[0]) for r in results],
            "seconds": time.perf_counter() - t0,
        }

    def apply(self, X):
        """Index of the leaf each row ends in, in each tree; a dask array for a dask ``X``.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        X_leaves : dask Array or ndarray of shape (n_samples, n_estimators), int64
        """
        if _is_dask(X):
            self._check_is_fitted()
            return self._map_rows(X, "apply", len(self.estimators_), np.int64)
        return super().apply(X)


def _computed(client, values):
    """A dask collection computed on ``client`` (a DataFrame stays a pandas DataFrame, keeping
    its column names and categorical columns); anything else as it is."""
    if values is None or not _is_dask(values):
        return values
    return client.compute(values).result()


def _gather_trees(client, futures, addresses, timeout):
    """The results of ``futures`` (``futures[j]`` run by ``addresses[j]``), checking every
    ``timeout`` seconds that the workers whose results have not come yet are alive.

    Raises
    ------
    RuntimeError
        A worker left (died, or lost its connection) before its result came: one that finished
        and then left holds a result the driver can no longer fetch.
    """
    results = []
    for j, future in enumerate(futures):
        while True:
            try:
                results.append(future.result(timeout=timeout))
                break
            except TimeoutError:  # first: a subclass of OSError, and a slow share, not a loss
                gone = sorted(set(addresses[j:]) - set(client.nthreads()))
                if gone:
                    raise RuntimeError(f"worker {gone[0]} left while growing its trees "
                                       f"(checked every timeout={timeout:g} s).") from None
            except OSError as exc:
                raise RuntimeError(f"growing the trees failed: a worker of {addresses[j:]} is "
                                   f"gone ({type(exc).__name__}: {exc}).") from exc
    return results


class _DaskForestClassifier(_DaskForest):
    def _n_proba_columns(self):
        return self.n_classes_ if self.n_outputs_ == 1 else None

    def predict(self, X):
        """The class of highest mean probability; a dask array for a dask ``X``.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        y_pred : dask Array or ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        if _is_dask(X):
            self._check_is_fitted()
            if self.n_outputs_ == 1:
                return self._map_rows(X, "predict", None, self.classes_.dtype)
            dtype = np.result_type(*(c.dtype for c in self.classes_))
            return self._map_rows(X, "predict", self.n_outputs_, dtype)
        return super().predict(X)

    def predict_proba(self, X):
        """Class probabilities, the trees' mean; dask arrays for a dask ``X``.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        proba : dask Array or ndarray of shape (n_samples, n_classes), or a list of them (one
            per output)
        """
        if _is_dask(X):
            return self._map_proba(X, "predict_proba")
        return super().predict_proba(X)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`; dask arrays for a dask ``X``."""
        if _is_dask(X):
            return self._map_proba(X, "predict_log_proba")
        return super().predict_log_proba(X)

    def _map_proba(self, X, method):
        self._check_is_fitted()
        if self.n_outputs_ == 1:
            return self._map_rows(X, method, int(self.n_classes_), np.float64)
        return [self._map_rows(X, lambda local, block, k=k: getattr(local, method)(block)[k],
                               int(n), np.float64) for k, n in enumerate(self.n_classes_)]


class _DaskForestRegressor(_DaskForest):
    def predict(self, X):
        """The mean of the trees' predictions; a dask array for a dask ``X``.

        Parameters
        ----------
        X : dask Array or DataFrame, or array-like, of shape (n_samples, n_features)

        Returns
        -------
        y_pred : dask Array or ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        if _is_dask(X):
            self._check_is_fitted()
            n_columns = None if self.n_outputs_ == 1 else self.n_outputs_
            return self._map_rows(X, "predict", n_columns, np.float64)
        return super().predict(X)


_FOREST_DOC = """
    Parameters
    ----------
    client : distributed.Client or None, default=None
        The client to train on; None takes the default client.
    partition : {{"trees"}}, default="trees"
        Each worker holds all of ``X`` and grows a share of the trees.
    timeout : float, default=60
        Seconds between the driver's checks that the workers growing trees are alive: a worker
        that dies or leaves ends the fit with a ``RuntimeError`` naming it within about that
        long.  The growth itself takes as long as it needs.
    workers : list of str or None, default=None
        Addresses of the workers to grow trees on; None: every worker of the client.  Each
        grows a contiguous block of the trees (in proportion to its threads); a worker left
        without a tree (more workers than trees) is sent nothing.
    n_jobs : int or None, default=None
        numba threads per worker: None, the worker's Dask threads (``nthreads``); else this
        many on every worker (-1: all its cores).  The driver's out-of-bag score and
        predictions use it as the single-machine forest does.  The trees are the same for any
        value.
    **params
        The parameters of :class:`fasttree.{name}`.

    Attributes
    ----------
    estimators_ : list of fasttree trees
        Tree for tree (every array of ``tree_``) the single-machine forest's, in the seeds'
        order.
    fit_report_ : dict
        ``workers`` (those that grew trees), ``trees`` and ``threads`` per worker,
        ``bytes_sent`` (``X``, the targets and weights: what each worker receives),
        ``scatter_seconds`` (the data sent to the workers), ``grow_seconds`` per worker,
        ``tree_bytes`` per worker (the node arrays sent back), ``seconds`` (scatter, growth and
        gathering: wall time on the driver).
    Other attributes
        As :class:`fasttree.{name}`'s.
"""


class RandomForestClassifier(_DaskForestClassifier, _forest.RandomForestClassifier):
    __doc__ = (""":class:`fasttree.RandomForestClassifier` grown on a Dask cluster, each worker
    growing a share of the trees: the single-machine forest, tree for tree.
""" + _FOREST_DOC.format(name="RandomForestClassifier"))
    _local_class = _forest.RandomForestClassifier


class RandomForestRegressor(_DaskForestRegressor, _forest.RandomForestRegressor):
    __doc__ = (""":class:`fasttree.RandomForestRegressor` grown on a Dask cluster, each worker
    growing a share of the trees: the single-machine forest, tree for tree.
""" + _FOREST_DOC.format(name="RandomForestRegressor"))
    _local_class = _forest.RandomForestRegressor


class ExtraTreesClassifier(_DaskForestClassifier, _forest.ExtraTreesClassifier):
    __doc__ = (""":class:`fasttree.ExtraTreesClassifier` grown on a Dask cluster, each worker
    growing a share of the trees: the single-machine forest, tree for tree.
""" + _FOREST_DOC.format(name="ExtraTreesClassifier"))
    _local_class = _forest.ExtraTreesClassifier


class ExtraTreesRegressor(_DaskForestRegressor, _forest.ExtraTreesRegressor):
    __doc__ = (""":class:`fasttree.ExtraTreesRegressor` grown on a Dask cluster, each worker
    growing a share of the trees: the single-machine forest, tree for tree.
""" + _FOREST_DOC.format(name="ExtraTreesRegressor"))
    _local_class = _forest.ExtraTreesRegressor


for _cls in (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
             ExtraTreesRegressor):
    _with_dask_params(_cls, partition="trees")
del _cls
