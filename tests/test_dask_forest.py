"""fasttree.dask's forests: the single-machine forest, tree for tree, its trees grown on Dask
workers (each a contiguous block of the seeds)."""

import os
import pickle
import signal
import threading
import time

import numpy as np
import pytest

import dask.array as da
import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster

import fasttree
import fasttree.dask as fdask

N_TREES = 8


def _data(n=300, seed=0):
    """Rounded values (ties), missing values, three classes, a positive real target, whole and
    fractional weights (zero for a few rows)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 6)), 1).astype(np.float32)
    X[rng.random(n) < 0.1, 2] = np.nan
    signal = X[:, 0] + 0.5 * np.nan_to_num(X[:, 2]) - X[:, 4] + rng.normal(0, 0.7, n)
    y_class = np.digitize(signal, [-0.7, 0.5])
    y_real = np.exp(signal / 2)
    weight = rng.integers(1, 4, n) * rng.choice([1.0, 0.75], n)
    weight[:4] = 0.0
    return X, y_class, y_real, weight


def assert_same_forest(a, b, same_params=True):
    """Every tree's seed and every array of its ``tree_`` (and its scalars) equal, in order;
    the trees' parameters too (``same_params``)."""
    assert len(a.estimators_) == len(b.estimators_)
    for k, (s, t) in enumerate(zip(a.estimators_, b.estimators_)):
        assert type(s) is type(t) and s.random_state == t.random_state, k
        assert not same_params or s.get_params() == t.get_params(), k
        fields = vars(s.tree_)
        assert fields.keys() == vars(t.tree_).keys()
        for name, value in fields.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(value, getattr(t.tree_, name), strict=True,
                                              err_msg=f"tree {k}: {name}")
            else:
                assert value == getattr(t.tree_, name), (k, name)


FORESTS = {"rfc": (fdask.RandomForestClassifier, fasttree.RandomForestClassifier),
           "rfr": (fdask.RandomForestRegressor, fasttree.RandomForestRegressor),
           "etc": (fdask.ExtraTreesClassifier, fasttree.ExtraTreesClassifier),
           "etr": (fdask.ExtraTreesRegressor, fasttree.ExtraTreesRegressor)}


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("kind, params, weighted", [
    ("rfc", {"oob_score": True}, False),
    ("rfc", {"max_samples": 0.6, "oob_score": True, "criterion": "entropy"}, True),
    ("rfc", {"class_weight": "balanced_subsample", "oob_score": True}, False),
    ("rfc", {"class_weight": "balanced", "max_depth": 5}, True),
    ("rfc", {"bootstrap": False, "max_features": 3, "min_samples_leaf": 3}, True),
    ("rfr", {"oob_score": True}, True),
    ("rfr", {"max_samples": 120, "criterion": "poisson", "max_features": 0.5}, False),
    ("etc", {}, True),
    ("etr", {"bootstrap": True, "oob_score": True}, False),
])
def test_same_forest_as_one_machine(client, kind, params, weighted):
    X, y_class, y_real, weight = _data()
    y = y_class if kind.endswith("c") else y_real
    w = weight if weighted else None
    Dask, Local = FORESTS[kind]
    params = {"n_estimators": N_TREES, "random_state": 11, **params}
    sharded = Dask(client=client, **params).fit(X, y, sample_weight=w)
    local = Local(**params).fit(X, y, sample_weight=w)
    assert_same_forest(sharded, local)
    report = sharded.fit_report_
    assert len(report["workers"]) == len(client.nthreads()) and sum(report["trees"]) == N_TREES
    assert report["trees"] == [2, 3, 3]  # contiguous blocks of the seeds
    for name in ("oob_score_", "oob_decision_function_", "oob_prediction_", "classes_",
                 "n_classes_", "max_features_", "missing_in_fit_", "n_features_in_"):
        if hasattr(local, name):
            np.testing.assert_array_equal(getattr(sharded, name), getattr(local, name),
                                          err_msg=name)
    for a, b in zip(sharded.estimators_samples_, local.estimators_samples_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sharded.feature_importances_, local.feature_importances_)
    np.testing.assert_array_equal(sharded.predict(X), local.predict(X))


def test_same_entropy_forest_on_larger_data(client):
    """2,000 rows, entropy: where exact ties between mirrored splits are common, the trees are
    still the single-machine forest's (both run the forest's own growth)."""
    X, y, _, _ = _data(n=2000, seed=9)
    params = {"n_estimators": 6, "random_state": 3, "criterion": "entropy"}
    sharded = fdask.RandomForestClassifier(client=client, **params).fit(X, y)
    assert_same_forest(sharded, fasttree.RandomForestClassifier(**params).fit(X, y))


@pytest.mark.parametrize("n_workers", [1, 2])
def test_any_number_of_workers_grows_the_same_forest(client, n_workers):
    X, y, _, weight = _data(seed=1)
    params = {"n_estimators": 5, "random_state": 2, "max_samples": 0.8}
    workers = sorted(client.nthreads())[:n_workers]
    sharded = fdask.RandomForestClassifier(client=client, workers=workers, **params)
    sharded.fit(X, y, sample_weight=weight)
    assert sharded.fit_report_["workers"] == workers
    assert_same_forest(sharded, fasttree.RandomForestClassifier(**params).fit(X, y, weight))


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_more_workers_than_trees(client):
    """Two trees on three workers: one worker is sent nothing."""
    X, _, y, _ = _data(seed=2)
    sharded = fdask.RandomForestRegressor(n_estimators=2, random_state=0, oob_score=True,
                                          client=client).fit(X, y)
    assert len(sharded.fit_report_["workers"]) == 2 and sharded.fit_report_["trees"] == [1, 1]
    local = fasttree.RandomForestRegressor(n_estimators=2, random_state=0, oob_score=True)
    with pytest.warns(UserWarning, match="OOB"):  # rows neither tree left out, as on one machine
        local.fit(X, y)
    assert_same_forest(sharded, local)
    np.testing.assert_array_equal(sharded.oob_prediction_, local.oob_prediction_)


def test_worker_threads_and_n_jobs(client):
    """n_jobs: numba threads on each worker (None: the worker's Dask threads); same trees."""
    X, y, _, _ = _data(seed=3)
    default = fdask.RandomForestClassifier(n_estimators=4, random_state=1, client=client)
    two = fdask.RandomForestClassifier(n_estimators=4, random_state=1, client=client, n_jobs=2)
    assert default.fit(X, y).fit_report_["threads"] == [1, 1, 1]
    assert two.fit(X, y).fit_report_["threads"] == [2, 2, 2]
    assert_same_forest(default, two, same_params=False)
    assert two.estimators_[0].n_jobs == 2  # the trees keep the forest's parameters
    report = two.fit_report_
    assert report["bytes_sent"] > X.nbytes  # X, the targets and class codes
    assert all(b > 0 for b in report["tree_bytes"]) and report["seconds"] > 0


def test_warm_start_adds_the_trees_a_cold_fit_grows(client):
    X, y, _, _ = _data(seed=4)
    cold = fasttree.RandomForestClassifier(n_estimators=7, random_state=5).fit(X, y)
    warm = fdask.RandomForestClassifier(n_estimators=3, random_state=5, warm_start=True,
                                        client=client).fit(X, y)
    first = warm.estimators_[0]
    warm.set_params(n_estimators=7).fit(X, y)
    assert warm.estimators_[0] is first and warm.fit_report_["trees"] == [1, 1, 2]
    assert_same_forest(warm, cold)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        warm.fit(X, y)
    with pytest.raises(ValueError, match="must be larger or equal"):
        warm.set_params(n_estimators=2).fit(X, y)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_dask_inputs_and_predictions(client):
    """A dask DataFrame with a categorical column (computed on the driver: names and categories
    kept) and dask y and weights; predictions on dask input are dask arrays, block by block."""
    X, y, _, weight = _data(seed=5)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    frame["colour"] = pd.Categorical(np.array(["red", "green", "blue"])[y * 7 % 3])
    X_dask = dd.from_pandas(frame, npartitions=3)
    params = {"n_estimators": 6, "random_state": 4, "oob_score": True}
    sharded = fdask.RandomForestClassifier(client=client, **params).fit(
        X_dask, da.from_array(y, chunks=100), sample_weight=da.from_array(weight, chunks=70))
    local = fasttree.RandomForestClassifier(**params).fit(frame, y, sample_weight=weight)
    assert_same_forest(sharded, local)
    assert sharded.is_categorical_[-1] and list(sharded.feature_names_in_) == list(frame.columns)
    assert sharded.oob_score_ == local.oob_score_
    for method in ("predict", "predict_proba", "predict_log_proba", "apply"):
        predicted = getattr(sharded, method)(X_dask)
        assert isinstance(predicted, da.Array), method
        np.testing.assert_array_equal(predicted.compute(), getattr(local, method)(frame),
                                      err_msg=method)
        np.testing.assert_array_equal(getattr(sharded, method)(frame),
                                      getattr(local, method)(frame), err_msg=method)


def test_several_outputs(client):
    X, y_class, y_real, _ = _data(seed=6)
    Y = np.c_[y_class, (y_real > 1).astype(int)]
    params = {"n_estimators": 4, "random_state": 3}
    sharded = fdask.RandomForestClassifier(client=client, **params).fit(X, Y)
    local = fasttree.RandomForestClassifier(**params).fit(X, Y)
    assert_same_forest(sharded, local)
    X_dask = da.from_array(X, chunks=(128, 6))
    np.testing.assert_array_equal(sharded.predict(X_dask).compute(), local.predict(X))
    for p, q in zip(sharded.predict_proba(X_dask), local.predict_proba(X)):
        np.testing.assert_array_equal(p.compute(), q)
    regressor = fdask.RandomForestRegressor(client=client, **params).fit(X, np.c_[y_real, X[:, 1]])
    np.testing.assert_array_equal(
        regressor.predict(X_dask).compute(),
        fasttree.RandomForestRegressor(**params).fit(X, np.c_[y_real, X[:, 1]]).predict(X))


def test_to_local_pickle_and_parameters(client):
    from sklearn.base import clone

    X, y, _, _ = _data(seed=7)
    sharded = fdask.ExtraTreesClassifier(n_estimators=3, random_state=0, max_depth=4,
                                         client=client).fit(X, y)
    local = sharded.to_local()
    assert type(local) is fasttree.ExtraTreesClassifier and not local.bootstrap
    assert "client" not in local.get_params() and local.max_depth == 4
    np.testing.assert_array_equal(local.predict_proba(X), sharded.predict_proba(X))
    assert len(local.estimators_samples_) == 3  # its private fitted state came along
    restored = pickle.loads(pickle.dumps(sharded))  # without the client
    assert restored.client is None
    np.testing.assert_array_equal(restored.predict(X), sharded.predict(X))
    params = clone(fdask.RandomForestRegressor(n_estimators=5, timeout=9)).get_params()
    assert params["partition"] == "trees" and params["timeout"] == 9
    assert set(params) == set(fasttree.RandomForestRegressor().get_params()) | {
        "client", "partition", "timeout", "workers"}
    assert not fdask.ExtraTreesRegressor().bootstrap  # the extra trees' default kept


@pytest.mark.parametrize("params, message", [
    ({"partition": "features"}, "partition='features'.*not offered"),
    ({"partition": "rows"}, "partition='trees'"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": True}, "timeout"),
    ({"workers": ["tcp://127.0.0.1:1"]}, "tcp://127.0.0.1:1"),
    ({"workers": []}, "workers is empty"),
    ({"n_estimators": 0}, "n_estimators"),
    ({"n_jobs": 0}, "n_jobs"),
])
def test_bad_parameters_are_refused(client, params, message):
    X, y, _, _ = _data(n=60)
    with pytest.raises(ValueError, match=message):
        fdask.RandomForestClassifier(client=client, **params).fit(X, y)


def test_worker_killed_while_growing_raises_within_timeout():
    """A worker killed while it grows its share: a RuntimeError naming it, within the timeout
    (its task is pinned to it; a result it computed dies with it)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60_000, 8)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=60_000) > 0).astype(int)
    timeout = 3
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        c.wait_for_workers(2)
        victim = sorted(c.nthreads())[1]
        pid = c.run(os.getpid, workers=[victim])[victim]
        forest = fdask.RandomForestClassifier(n_estimators=16, random_state=0, client=c,
                                              timeout=timeout)
        # each share takes over a second (kernels loaded, eight trees of 60,000 rows)
        killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
        t0 = time.perf_counter()
        killer.start()
        with pytest.raises(RuntimeError, match=victim):
            forest.fit(X, y)
        assert time.perf_counter() - t0 < timeout + 10
