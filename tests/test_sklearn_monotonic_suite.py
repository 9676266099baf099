"""scikit-learn's monotonicity-constraint tests (``sklearn/tree/tests/test_monotonic_tree.py``),
run against fasttree's four tree estimators (see :mod:`sklearn_suite`).

The module also parametrizes scikit-learn's forests (``RandomForest*``, ``ExtraTrees*``), which
are scikit-learn's own estimators whatever the trees: those parametrizations are deselected.
"""

import inspect

import pytest

sklearn_tree_tests = pytest.importorskip("sklearn.tree.tests")

from sklearn_suite import load_suite, suite_tests  # noqa: E402

ANCHOR = "TREE_CLASSIFIER_CLASSES = [DecisionTreeClassifier, ExtraTreeClassifier]"


def deselect_reason(name, parametrization, params):
    """Why a collected test is deselected, or None (used by tests/conftest.py)."""
    for value in params.values():
        if inspect.isclass(value) and value.__module__.startswith("sklearn.ensemble"):
            return f"{value.__name__} is scikit-learn's forest, not a fasttree estimator"
    return None


@pytest.fixture
def global_random_seed():
    """scikit-learn's default global seed (its conftest parametrizes it from the environment)."""
    return 42


_namespace = load_suite(sklearn_tree_tests, "test_monotonic_tree.py", ANCHOR, __name__)
globals().update(suite_tests(_namespace))


def test_the_suite_runs_fasttree_estimators():
    """The rebinding took: the estimator tables hold fasttree's classes."""
    import fasttree

    assert _namespace["TREE_CLASSIFIER_CLASSES"] == [fasttree.DecisionTreeClassifier,
                                                     fasttree.ExtraTreeClassifier]
    assert _namespace["TREE_REGRESSOR_CLASSES"] == [fasttree.DecisionTreeRegressor,
                                                    fasttree.ExtraTreeRegressor]
