import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


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
