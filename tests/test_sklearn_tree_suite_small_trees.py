"""scikit-learn's tree suite a second time, with the routing users get: a tree of fewer rows x
features than ``fasttree.depth_first.SMALL_TREE_WORK`` (most of the suite's) grows depth first.
``tests/test_sklearn_tree_suite.py`` runs it with every tree grown level-wise, as
``tests/conftest.py`` has most tests grow them; the exclusions are that module's."""

import pytest

sklearn_tree_tests = pytest.importorskip("sklearn.tree.tests")

from sklearn_suite import load_suite, suite_tests  # noqa: E402
from test_sklearn_tree_suite import ANCHOR, EXCLUDED, global_random_seed  # noqa: E402, F401

SMALL_TREES_DEPTH_FIRST = True  # tests/conftest.py: the routing users get

_namespace = load_suite(sklearn_tree_tests, "test_tree.py", ANCHOR, __name__)
globals().update(suite_tests(_namespace, EXCLUDED))
