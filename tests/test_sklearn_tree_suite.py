"""scikit-learn's own tree test suite, run against fasttree's estimators.

The installed scikit-learn's ``sklearn/tree/tests/test_tree.py`` is read at import time, its tree
estimator names are rebound to fasttree's just before its estimator tables, and the module is
executed here, so pytest collects its tests unchanged.  Tests that check scikit-learn internals or
a documented design difference are excluded in ``EXCLUDED`` (one place, with the reason).
"""

import inspect
from pathlib import Path

import pytest

sklearn_tree_tests = pytest.importorskip("sklearn.tree.tests")

import fasttree  # noqa: E402

SOURCE = Path(sklearn_tree_tests.__file__).parent / "test_tree.py"

# Inserted before the first line that builds the estimator tables.
REBIND = """
from fasttree import (  # fasttree in place of scikit-learn
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)
"""
ANCHOR = 'CLF_CRITERIONS = ("gini", "log_loss")'

# name -> reason; a name matches the test function (all its parametrizations).
EXCLUDED = {
}


@pytest.fixture
def global_random_seed():
    """scikit-learn's default global seed (its conftest parametrizes it from the environment)."""
    return 42


def _load():
    source = SOURCE.read_text()
    if ANCHOR not in source:
        raise RuntimeError(f"{SOURCE} changed: {ANCHOR!r} not found; update the rebinding.")
    source = source.replace(ANCHOR, REBIND + ANCHOR, 1)
    namespace = {"__name__": __name__, "__file__": str(SOURCE)}
    exec(compile(source, str(SOURCE), "exec"), namespace)
    return namespace


_namespace = _load()
for _name, _obj in _namespace.items():
    if _name.startswith("test_") and inspect.isfunction(_obj):
        if _name not in EXCLUDED:
            globals()[_name] = _obj


def test_exclusions_name_existing_tests():
    """Every exclusion names a test that exists in the installed scikit-learn's suite."""
    assert set(EXCLUDED) <= {n for n in _namespace if n.startswith("test_")}
