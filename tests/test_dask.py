"""fasttree.dask: the single-machine tree, bit for bit, from columns spread over Dask workers."""

import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import dask
import dask.array as da
import dask.dataframe as dd
import pandas as pd
import scipy.sparse
from distributed import Client, LocalCluster

import fasttree
import fasttree.dask as fdask
from fasttree.grower import report_progress



def _workers(client, n):
    return sorted(client.nthreads())[:n]


def _data(n=500, seed=0):
    """Rounded values (ties inside a feature), missing values, and feature 4 a copy of feature 1
    (ties between features held by different workers when there are 2 or 3 of them)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 7)), 1).astype(np.float32)
    X[:, 4] = X[:, 1]
    X[rng.random(n) < 0.08, 2] = np.nan
    X[rng.random(n) < 0.08, 6] = np.nan
    signal_ = X[:, 1] + 0.5 * np.nan_to_num(X[:, 2]) - X[:, 5] + rng.normal(0, 0.7, n)
    y_class = np.digitize(signal_, [-0.5, 0.7])  # three classes
    weight = rng.integers(1, 4, n).astype(np.float64)
    weight[:5] = 0.0  # zero-weight rows are dropped before growing, as on one machine
    return X, y_class, signal_, weight


def assert_same_tree(a, b):
    """Every array of the two trees equal (and their scalar attributes)."""
    fields = vars(a.tree_)
    assert fields.keys() == vars(b.tree_).keys()
    for name, value in fields.items():
        other = getattr(b.tree_, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other, err_msg=name, strict=True)
        else:
            assert value == other, name


def _pair(criterion, **params):
    """The single-machine estimator and its Dask twin for ``criterion``."""
    regression = criterion in ("squared_error", "poisson")
    local = (fasttree.DecisionTreeRegressor if regression else fasttree.DecisionTreeClassifier)
    sharded = fdask.DecisionTreeRegressor if regression else fdask.DecisionTreeClassifier
    return local(criterion=criterion, **params), sharded(criterion=criterion, **params)


@pytest.mark.parametrize("n_workers", [1, 2, 3])
@pytest.mark.parametrize("criterion", ["entropy", "gini", "squared_error"])
@pytest.mark.parametrize("weighted", [False, True])
def test_same_tree_as_one_machine(client, n_workers, criterion, weighted):
    X, y_class, y_real, weight = _data()
    y = y_real if criterion == "squared_error" else y_class
    w = weight if weighted else None
    local, sharded = _pair(criterion, max_depth=12)
    sharded.set_params(client=client, workers=_workers(client, n_workers))
    sharded.fit(da.from_array(X, chunks=(128, 7)), y, sample_weight=w)
    assert_same_tree(sharded, local.fit(X, y, sample_weight=w))
    assert len(sharded.fit_report_["workers"]) == n_workers
    assert sharded.tree_.max_depth > 5  # a real tree, missing values and ties on its way


def test_same_tree_on_five_workers():
    """Five workers for seven columns: blocks of one and two columns, ties across workers."""
    X, y_class, y_real, weight = _data(seed=2)
    with LocalCluster(n_workers=5, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        c.wait_for_workers(5)
        for criterion, y, w in (("entropy", y_class, None), ("gini", y_class, weight),
                                ("squared_error", y_real, weight)):
            local, sharded = _pair(criterion, max_depth=12)
            sharded.set_params(client=c)
            sharded.fit(X, y, sample_weight=w)
            assert_same_tree(sharded, local.fit(X, y, sample_weight=w))
            assert len(sharded.fit_report_["workers"]) == 5


@pytest.mark.parametrize("n_workers", [2, 3])
@pytest.mark.parametrize("criterion", ["entropy", "squared_error"])
def test_same_tree_with_max_features(client, n_workers, criterion):
    """The driver draws the features (one generator, one place): the same draws as one machine."""
    X, y_class, y_real, weight = _data(seed=1)
    y = y_real if criterion == "squared_error" else y_class
    params = {"max_features": 3, "random_state": 7, "max_depth": 8}
    local, sharded = _pair(criterion, **params)
    sharded.set_params(client=client, workers=_workers(client, n_workers))
    assert_same_tree(sharded.fit(X, y, sample_weight=weight), local.fit(X, y, sample_weight=weight))


@pytest.mark.parametrize("params", [
    {"criterion": "poisson", "min_samples_leaf": 5},
    {"criterion": "log_loss", "max_leaf_nodes": 12},  # best-first growth, one node per split
    {"criterion": "gini", "class_weight": "balanced", "ccp_alpha": 0.01},
    {"criterion": "squared_error", "min_impurity_decrease": 0.01, "min_samples_split": 10},
])
def test_same_tree_other_parameters(client, params):
    X, y_class, y_real, _ = _data(seed=2)
    y = np.exp(y_real / 2) if params["criterion"] == "poisson" else (
        y_real if params["criterion"] == "squared_error" else y_class)
    local, sharded = _pair(**params)
    assert_same_tree(sharded.set_params(client=client).fit(X, y), local.fit(X, y))


@pytest.mark.parametrize("layout", ["rows", "columns", "uneven", "dataframe"])
def test_input_layouts(client, layout):
    X, y, _, weight = _data(n=400, seed=3)
    if layout == "rows":
        X_dask = da.from_array(X, chunks=(50, 7))
    elif layout == "columns":
        X_dask = da.from_array(X, chunks=(400, 2))
    elif layout == "uneven":
        X_dask = da.from_array(X, chunks=((250, 30, 120), (3, 1, 3)))
    else:
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(7)])
        X_dask = dd.from_pandas(frame, npartitions=3)
        X = frame
    y_dask = da.from_array(y, chunks=100)
    w_dask = da.from_array(weight, chunks=150)
    sharded = fdask.DecisionTreeClassifier(client=client, max_depth=7)
    sharded.fit(X_dask, y_dask, sample_weight=w_dask)
    local = fasttree.DecisionTreeClassifier(max_depth=7).fit(X, y, sample_weight=weight)
    assert_same_tree(sharded, local)
    if layout == "dataframe":
        np.testing.assert_array_equal(sharded.feature_names_in_, local.feature_names_in_)
    # prediction on dask input, block by block, equals the plain estimator's
    np.testing.assert_array_equal(sharded.predict(X_dask).compute(), local.predict(X))
    np.testing.assert_array_equal(sharded.predict_proba(X_dask).compute(),
                                  local.predict_proba(X))


def test_more_workers_than_columns(client):
    X, y, _, _ = _data(n=300, seed=4)
    X = X[:, [1, 5]]
    sharded = fdask.DecisionTreeClassifier(client=client).fit(da.from_array(X), y)
    assert len(sharded.fit_report_["workers"]) == 2  # the third worker has no column to hold
    assert_same_tree(sharded, fasttree.DecisionTreeClassifier().fit(X, y))


def test_to_local_and_predict(client):
    X, _, y, _ = _data(n=300, seed=5)
    sharded = fdask.DecisionTreeRegressor(client=client, max_depth=5).fit(X, y)
    local = sharded.to_local()
    assert type(local) is fasttree.DecisionTreeRegressor
    assert "client" not in local.get_params() and local.max_depth == 5
    np.testing.assert_array_equal(local.predict(X), sharded.predict(X))
    predicted = sharded.predict(da.from_array(X, chunks=(64, 3)))
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), local.predict(X))


def test_parameters_and_clone():
    """The Dask parameters are estimator parameters; clone works with the default client."""
    from sklearn.base import clone

    est = fdask.DecisionTreeRegressor(max_depth=3, timeout=5, workers=["tcp://a:1"])
    params = clone(est).get_params()
    assert params["max_depth"] == 3 and params["timeout"] == 5
    assert params["workers"] == ["tcp://a:1"] and params["partition"] == "features"
    assert set(params) == set(fasttree.DecisionTreeRegressor().get_params()) | {
        "client", "partition", "timeout", "workers"}


@pytest.mark.parametrize("Estimator", [fdask.DecisionTreeClassifier,
                                       fdask.DecisionTreeRegressor])
def test_tags_say_a_sharded_fit_takes_neither_sparse_x_nor_several_outputs(Estimator):
    """The tags the single-machine estimators set from their refusals hold for the sharded
    ones too, whose fit refuses both under every setting (no cluster needed to see it)."""
    tags = Estimator().__sklearn_tags__()
    assert not tags.input_tags.sparse and not tags.target_tags.multi_output
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sparse"):
        Estimator().fit(scipy.sparse.csr_matrix(X), y)
    with pytest.raises(ValueError, match="several outputs"):
        Estimator().fit(X, np.c_[y, y])


def test_worker_threads_set_explicitly(client):
    """Dask's nanny sets OMP_NUM_THREADS=1; the shards set numba's count to the workers'."""
    X, y, _, _ = _data(n=200)
    sharded = fdask.DecisionTreeClassifier(client=client, max_depth=2).fit(X, y)
    expected = client.nthreads()
    for address, (n_threads, layer) in zip(sharded.fit_report_["workers"],
                                           sharded.fit_report_["threads"]):
        assert n_threads == expected[address]
        assert layer in ("tbb", "omp", "workqueue")
    assert len(sharded.fit_report_["worker_setup_seconds"]) == len(expected)


def test_communication_budget_per_level(client):
    """Per level and worker: two bitmaps of n/8 bytes, and per node a few dozen bytes (the
    nodes' ranges and statistics out, one 24-byte record back; for split nodes the route request
    and the children's statistics), at most 2 round trips; nothing grows with the features."""
    n = 3000
    rng = np.random.default_rng(6)
    X = rng.normal(size=(n, 12)).astype(np.float32)
    y = (X[:, 0] + X[:, 7] + rng.normal(0, 0.5, n) > 0).astype(int)
    sharded = fdask.DecisionTreeClassifier(client=client, max_depth=8).fit(X, y)
    tree = sharded.tree_
    n_stats = 2  # class weights of two classes
    split = tree.children_left >= 0
    levels = sharded.fit_report_["levels"]
    assert len(levels) == tree.max_depth + 1
    for depth, level in enumerate(levels):
        assert level["round_trips"] <= 2
        k_search = int(np.sum(tree.depth == depth))  # nodes of the level (searched or not)
        k_split = int(np.sum(split & (tree.depth == depth - 1)))
        per_node = (24 + 16 + 8 * n_stats) * k_search + (49 + 24 + 16 * n_stats) * k_split
        budget = 2 * math.ceil(n / 8) + per_node + 2048
        for sent, received in zip(level["bytes_out"], level["bytes_in"]):
            assert sent + received <= budget, (depth, sent, received, budget)
        assert level["compute_seconds"] >= 0 and level["communication_seconds"] >= 0


def _live_worker_pid(c):
    """The address and pid of the second of two live workers (waiting while the nanny replaces
    the last victim: a worker being removed refuses the call)."""
    for _ in range(100):
        # a new worker process imports numpy, numba and dask first: on a loaded 2-core machine
        # that took over 60 s once (what is tested is the fit's timeout, not the nanny's speed)
        c.wait_for_workers(2, timeout=300)
        victim = sorted(c.nthreads())[1]
        try:
            return victim, c.run(os.getpid, workers=[victim])[victim]
        except OSError:
            time.sleep(0.1)
    raise AssertionError("no two live workers")


@pytest.mark.parametrize("round_", range(4))
def test_worker_killed_mid_fit_raises_within_timeout(round_):
    """A worker killed during a level: a RuntimeError naming it, within the timeout; no hang.
    Twenty times in all, as the issue asks: five kills per cluster, the nanny starting a new
    worker after each.

    LocalCluster closes a worker's nanny for good when, ``lost-worker-timeout`` (15 s) after a
    removal, no worker of that name is registered; it does not cancel that timer when the nanny's
    restart registers, so a later kill of the same worker that falls on the timer left the
    cluster one worker short (``Only 1/2 workers arrived``).  The timer is made longer than the
    test: the nanny's restarts are what this test relies on, not what it tests."""
    X, y, _, _ = _data(n=2000, seed=8)
    timeout = 10
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as cluster, Client(cluster) as c:
        for _ in range(5):
            victim, pid = _live_worker_pid(c)
            killed = []

            def kill_at_level_two(depth, n_nodes, n_rows, seconds, pid=pid, killed=killed):
                if depth == 2:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(time.perf_counter())

            sharded = fdask.DecisionTreeClassifier(client=c, timeout=timeout)
            with report_progress(kill_at_level_two), pytest.raises(RuntimeError,
                                                                   match=victim):
                sharded.fit(X, y)
            assert killed and time.perf_counter() - killed[0] < timeout + 5
            while victim in c.nthreads():  # the nanny starts a new worker (new address)
                time.sleep(0.1)


class _Probe:
    """A stand-in shard for the transport's tests."""

    def answer(self, x):
        return x, 0.0

    def fail(self):
        raise ValueError("raised on the worker")

    def stall(self):
        time.sleep(1.5)  # holds the worker's actor thread: keep it short
        return None, 0.0


def test_actor_transport_answers_raises_and_times_out(client):
    from fasttree.dask import _ActorCalls
    from fasttree.sharded_splitter import ShardLost

    addresses = _workers(client, 2)
    futures = [client.submit(_Probe, actor=True, workers=[a], pure=False) for a in addresses]
    for f in futures:
        f.result()
    calls = _ActorCalls(client, addresses, [f.key for f in futures])
    bitmap = np.arange(1000, dtype=np.uint8)
    answers = calls("answer", [(1, (bitmap,)), (0, (7,))], 5)  # answers in the calls' order
    np.testing.assert_array_equal(answers[0][0], bitmap)
    assert answers[1] == (7, 0.0)
    with pytest.raises(ValueError, match="raised on the worker"):
        calls("fail", [(0, ())], 5)
    t0 = time.perf_counter()
    with pytest.raises(ShardLost) as lost:
        calls("stall", [(1, ())], 0.3)
    assert lost.value.shard == 1 and time.perf_counter() - t0 < 1.2
    for f in futures:
        f.release()


def test_cluster_without_workers_raises_within_timeout():
    X, y, _, _ = _data(n=100)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as c:
        t0 = time.perf_counter()
        with pytest.raises(RuntimeError, match="no worker"):
            fdask.DecisionTreeClassifier(client=c, timeout=1).fit(X, y)
        assert time.perf_counter() - t0 < 10


def test_unknown_or_missing_workers(client):
    X, y, _, _ = _data(n=100)
    with pytest.raises(ValueError, match="tcp://127.0.0.1:1"):
        fdask.DecisionTreeClassifier(client=client, workers=["tcp://127.0.0.1:1"]).fit(X, y)
    with pytest.raises(ValueError, match="workers is empty"):
        fdask.DecisionTreeClassifier(client=client, workers=[]).fit(X, y)


@pytest.mark.parametrize("params, name", [
    ({"criterion": "gain_ratio"}, "criterion"),
    ({"splitter": "hist"}, "splitter"),
    ({"splitter": "random"}, "splitter"),
    ({"missing": "fractional"}, "missing"),
    ({"categorical_features": [0]}, "categorical_features"),
    ({"monotonic_cst": [1, 0, 0, 0, 0, 0, 0]}, "monotonic_cst"),
    ({"pruning": "reduced_error"}, "pruning"),
    ({"partition": "rows"}, "partition"),
    ({"timeout": 0}, "timeout"),
])
def test_unsupported_parameters_are_refused(client, params, name):
    X, y, _, _ = _data(n=100)
    with pytest.raises(ValueError, match=name):
        fdask.DecisionTreeClassifier(client=client, **params).fit(X, y)


def test_unsupported_inputs_are_refused(client):
    X, y, y_real, _ = _data(n=100)
    frame = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(np.where(X[:, 1] > 0, "u", "v"))})
    with pytest.raises(ValueError, match="categorical_features"):
        fdask.DecisionTreeClassifier(client=client).fit(dd.from_pandas(frame, npartitions=2), y)
    with pytest.raises(ValueError, match="several outputs"):
        fdask.DecisionTreeRegressor(client=client).fit(X, np.c_[y_real, y_real])
    with pytest.raises(ValueError, match="absolute_error"):
        fdask.DecisionTreeRegressor(client=client, criterion="absolute_error").fit(X, y_real)
    with pytest.raises(ValueError, match="sparse"):
        fdask.DecisionTreeClassifier(client=client).fit(scipy.sparse.csr_matrix(X), y)


def test_concurrent_fits_on_one_client(client):
    """Two fits at once on the same workers (each with its own actors) give their own trees."""
    from concurrent.futures import ThreadPoolExecutor

    X, y_class, y_real, _ = _data(seed=9)
    fits = [(fdask.DecisionTreeClassifier(client=client, max_depth=6), y_class),
            (fdask.DecisionTreeRegressor(client=client, max_depth=6), y_real)]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda pair: pair[0].fit(X, pair[1]), fits))
    assert_same_tree(done[0], fasttree.DecisionTreeClassifier(max_depth=6).fit(X, y_class))
    assert_same_tree(done[1], fasttree.DecisionTreeRegressor(max_depth=6).fit(X, y_real))


def test_import_fasttree_does_not_import_dask():
    code = ("import sys, fasttree; "
            "assert not {'dask', 'distributed'} & set(sys.modules), 'dask imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.getcwd())


def test_slow_set_up_step_waits_instead_of_calling_its_workers_gone():
    """A step slower than ``timeout`` (kernels compiling on a busy worker) is waited for again
    while its workers live: TimeoutError is a subclass of OSError, which means a lost worker."""
    answers = iter([TimeoutError("timed out after 60 s"), TimeoutError("again"), "done"])

    def wait_for(seconds):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    class Alive:
        def nthreads(self):
            return {"tcp://a:1": 1}

    assert fdask._wait_alive(Alive(), ["tcp://a:1"], wait_for, 60, "presorting") == "done"

    class Gone:
        def nthreads(self):
            return {}

    with pytest.raises(RuntimeError, match="left while presorting"):
        fdask._wait_alive(Gone(), ["tcp://a:1"], lambda s: (_ for _ in ()).throw(TimeoutError()),
                          60, "presorting")
