import os

import numpy as np
import pytest

# fits in the test processes start no compiling helper (fasttree._compile_ahead): the suite's two
# workers already keep both cores busy; tests/test_compile_ahead.py turns it on where it tests it
os.environ["FASTTREE_COMPILE_AHEAD"] = "0"


@pytest.fixture(autouse=True)
def _small_trees_level_wise(request, monkeypatch):
    """A single tree of fewer rows x features than ``fasttree.depth_first.SMALL_TREE_WORK``
    grows depth first.  Most tests' data are that small, and they test the level-wise growth
    that larger fits take: they get it.  A module that sets ``SMALL_TREES_DEPTH_FIRST = True``
    (tests/test_small_trees.py, scikit-learn's tree suite run a second time) gets the routing
    users get."""
    if not getattr(request.module, "SMALL_TREES_DEPTH_FIRST", False):
        from fasttree import depth_first

        monkeypatch.setattr(depth_first, "SMALL_TREE_WORK", 0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def client():
    """A Dask client on a local cluster of three one-thread worker processes, one per test
    module (distributed imported here: only the Dask tests need it)."""
    from distributed import Client, LocalCluster

    n_workers = 3
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        c.wait_for_workers(n_workers)
        yield c


def pytest_collection_modifyitems(config, items):
    """Deselect the tests of scikit-learn's suites that a module's ``deselect_reason`` names
    (the lists and the reasons live in tests/test_sklearn_*_suite.py)."""
    kept, deselected = [], []
    for item in items:
        reason_of = getattr(item.module, "deselect_reason", None)
        name = getattr(item, "originalname", item.name)
        parametrization = item.name[len(name):]
        params = getattr(getattr(item, "callspec", None), "params", {})
        if reason_of is not None and reason_of(name, parametrization, params):
            deselected.append(item)
        else:
            kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
