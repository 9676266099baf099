"""scikit-learn's own tree test suite, run against fasttree's estimators.

The installed scikit-learn's ``sklearn/tree/tests/test_tree.py`` is read at import time, its tree
estimator names are rebound to fasttree's just before its estimator tables, and the module is
executed here (:mod:`sklearn_suite`), so pytest collects its tests unchanged.  Tests that check
scikit-learn internals or a documented design difference are excluded in ``EXCLUDED`` (one place,
with the reason).
"""

import pytest

sklearn_tree_tests = pytest.importorskip("sklearn.tree.tests")

from sklearn_suite import load_suite, suite_tests  # noqa: E402

ANCHOR = 'CLF_CRITERIONS = ("gini", "log_loss")'

# Tests of scikit-learn internals or of a documented design difference: name -> reason (a name
# covers every parametrization of the test function).
EXCLUDED = {
    "test_build_pruned_tree_py":
        "calls sklearn.tree._tree._build_pruned_tree_py, which takes only scikit-learn's Cython "
        "Tree (fasttree's pruning is fasttree.pruning.build_pruned_tree, tested in "
        "test_pruning.py)",
    "test_build_pruned_tree_infinite_loop":
        "same internal function as test_build_pruned_tree_py",
    "test_huge_allocations":
        "expects scikit-learn's preallocation of max_leaf_nodes nodes to fail (OverflowError, "
        "MemoryError); fasttree allocates per level and grows such a tree normally",
}

@pytest.fixture
def global_random_seed():
    """scikit-learn's default global seed (its conftest parametrizes it from the environment)."""
    return 42


_namespace = load_suite(sklearn_tree_tests, "test_tree.py", ANCHOR, __name__)
globals().update(suite_tests(_namespace, EXCLUDED))


def test_exclusions_name_existing_tests():
    """Every exclusion names a test of the installed scikit-learn's suite."""
    names = {n for n in _namespace if n.startswith("test_")}
    assert set(EXCLUDED) <= names
