"""scikit-learn's monotonicity-constraint tests (``sklearn/tree/tests/test_monotonic_tree.py``),
run against fasttree's four tree estimators and four forests (see :mod:`sklearn_suite`).
"""

import pytest

sklearn_tree_tests = pytest.importorskip("sklearn.tree.tests")

from sklearn_suite import REBIND, load_suite, suite_tests  # noqa: E402

FORESTS = """
from fasttree import (  # fasttree's forests in place of scikit-learn's
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
"""

ANCHOR = "TREE_CLASSIFIER_CLASSES = [DecisionTreeClassifier, ExtraTreeClassifier]"


@pytest.fixture
def global_random_seed():
    """scikit-learn's default global seed (its conftest parametrizes it from the environment)."""
    return 42


_namespace = load_suite(sklearn_tree_tests, "test_monotonic_tree.py", ANCHOR, __name__,
                        REBIND + FORESTS)
globals().update(suite_tests(_namespace))


def test_the_suite_runs_fasttree_estimators():
    """The rebinding took: the estimator tables hold fasttree's classes."""
    import fasttree

    assert _namespace["TREE_CLASSIFIER_CLASSES"] == [fasttree.DecisionTreeClassifier,
                                                     fasttree.ExtraTreeClassifier]
    assert _namespace["TREE_REGRESSOR_CLASSES"] == [fasttree.DecisionTreeRegressor,
                                                    fasttree.ExtraTreeRegressor]
    assert _namespace["TREE_BASED_CLASSIFIER_CLASSES"][2:] == [
        fasttree.RandomForestClassifier, fasttree.ExtraTreesClassifier]
    assert _namespace["TREE_BASED_REGRESSOR_CLASSES"][2:] == [
        fasttree.RandomForestRegressor, fasttree.ExtraTreesRegressor]
