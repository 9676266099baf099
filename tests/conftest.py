import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_collection_modifyitems(config, items):
    """Deselect the scikit-learn suite's tests of features not built yet (the list and the
    reasons live in tests/test_sklearn_tree_suite.py)."""
    kept, deselected = [], []
    for item in items:
        reason_of = getattr(item.module, "pending_reason", None)
        name = getattr(item, "originalname", item.name)
        parametrization = item.name[len(name):]
        if reason_of is not None and reason_of(name, parametrization):
            deselected.append(item)
        else:
            kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
