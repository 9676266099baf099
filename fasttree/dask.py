"""Train one exact tree on a Dask cluster, feature-parallel: the single-machine tree, bit for bit.

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
from ._dtypes import label_dtype
from ._frames import display_name
from ._validation import is_dataframe, is_sparse
from .sharded_splitter import ColumnShard, ShardedSplitter, ShardLost

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]

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


class _DaskTree:
    """The sharded fit and dask-aware prediction shared by the classifier and the regressor."""

    _local_class = None

    def __getstate__(self):
        state = super().__getstate__()
        state["client"] = None  # a client belongs to its process
        return state

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
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}.")

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
        client = default_client() if self.client is None else self.client
        timeout = float(self.timeout)
        t0 = time.perf_counter()
        nthreads = client.nthreads()
        addresses = sorted(nthreads) if self.workers is None else list(self.workers)
        unknown = [a for a in addresses if a not in nthreads]
        if unknown:
            raise ValueError(f"workers names addresses the client does not have: {unknown}.")
        if not addresses:
            if self.workers is not None:
                raise ValueError("workers is empty; give at least one worker address.")
            try:
                client.wait_for_workers(1, timeout=timeout)
            except TimeoutError:
                raise RuntimeError(f"the Dask client has no worker (waited timeout={timeout:g} "
                                   "s).") from None
            nthreads = client.nthreads()
            addresses = sorted(nthreads)
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

    # -- prediction ----------------------------------------------------------------------------
    def to_local(self):
        """The fitted tree as a plain single-machine estimator (no Dask needed to use it).

        Returns
        -------
        estimator : fasttree.DecisionTreeClassifier or fasttree.DecisionTreeRegressor
        """
        self._check_is_fitted()
        params = {k: v for k, v in self.get_params().items() if k not in _DASK_PARAMS}
        local = self._local_class(**params)
        local.__dict__.update({k: v for k, v in self.__dict__.items()
                               if k.endswith("_") and k != "fit_report_"})
        return local

    def _map_rows(self, X, method, n_columns, dtype):
        """``method`` of :meth:`to_local` applied to every block of rows of a dask ``X``."""
        local = self.to_local()
        names = getattr(self, "feature_names_in_", None)
        if is_dataframe(X):
            X = X.to_dask_array(lengths=True)
        X = X.rechunk({1: -1})

        def predict_block(block):
            if names is not None:  # the names were checked at fit: a pandas block keeps them
                import pandas as pd

                block = pd.DataFrame(block, columns=names)
            return getattr(local, method)(block)

        if n_columns is None:
            return X.map_blocks(predict_block, drop_axis=1, dtype=dtype)
        return X.map_blocks(predict_block, chunks=(X.chunks[0], (n_columns,)), dtype=dtype)


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


def _with_dask_params(cls):
    """Give ``cls`` the single-machine ``__init__`` plus the Dask parameters, keeping the
    explicit signature ``get_params`` reads."""
    base = cls._local_class
    signature = inspect.signature(base.__init__)
    extra = [inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
             inspect.Parameter("partition", inspect.Parameter.KEYWORD_ONLY, default="features"),
             inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=60),
             inspect.Parameter("workers", inspect.Parameter.KEYWORD_ONLY, default=None)]

    def __init__(self, *, client=None, partition="features", timeout=60, workers=None,
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
