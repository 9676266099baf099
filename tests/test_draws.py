"""A node's random draws are a function of the node: its key (a hash chain from the root's),
then the feature; so a tree's draws do not depend on the order in which it is grown."""

import numpy as np
import pytest
from scipy import stats

import fasttree
from fasttree.kernels import child_keys, node_draws, root_key

MASK = (1 << 64) - 1


def _mix(z):
    """splitmix64's output function, in Python integers (the naive twin)."""
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _reference_draws(key, n_features):
    order = [(_mix(key ^ _mix(3 * f)) >> 11) / 2**53 for f in range(n_features)]
    uniform = [(_mix(key ^ _mix(3 * f + 1)) >> 11) / 2**53 for f in range(n_features)]
    coin = [_mix(key ^ _mix(3 * f + 2)) >> 63 for f in range(n_features)]
    return order, uniform, coin


def test_draws_match_the_python_twin():
    keys = np.array([0, 1, 2**63, MASK, 0x0123456789ABCDEF], dtype=np.uint64)
    order, uniform, coin = node_draws(keys, 7, True, True)
    for s, key in enumerate(keys.tolist()):
        want = _reference_draws(key, 7)
        assert order[:, s].tolist() == want[0]
        assert uniform[:, s].tolist() == want[1]
        assert coin[:, s].tolist() == want[2]
    branch = np.array([0, 1, 2, 0, 5])
    got = child_keys(keys, branch)
    assert got.tolist() == [_mix(k ^ _mix((1 << 62) + int(b)))
                            for k, b in zip(keys.tolist(), branch)]


def test_a_node_draws_the_same_alone_or_among_others():
    keys = child_keys(np.arange(50, dtype=np.uint64), np.zeros(50, dtype=np.int64))
    together = node_draws(keys, 5, True, True)
    for s in (0, 17, 49):
        alone = node_draws(keys[s:s + 1], 5, True, True)
        for a, b in zip(alone, together):
            np.testing.assert_array_equal(a[:, 0], b[:, s])


def test_only_the_asked_draws_are_made():
    keys = np.arange(3, dtype=np.uint64)
    order, uniform, coin = node_draws(keys, 4, False, True)
    assert order.shape == (0, 0) and uniform.shape == coin.shape == (4, 3)
    order, uniform, coin = node_draws(keys, 4, True, False)
    assert order.shape == (4, 3) and uniform.shape == coin.shape == (0, 0)


def test_draws_are_uniform_and_keys_distinct():
    """The keys of a complete binary tree of 2**16 leaves are distinct, and their draws look
    uniform (fixed keys: the statistics are fixed numbers, not a flaky test)."""
    level = np.array([root_key(np.random.default_rng(0))])
    seen = [level]
    for _ in range(16):
        parents = np.repeat(level, 2)
        level = child_keys(parents, np.tile([0, 1], level.size))
        seen.append(level)
    keys = np.concatenate(seen)
    assert np.unique(keys).size == keys.size
    order, uniform, coin = node_draws(level, 3, True, True)
    for draws in (order, uniform):
        assert draws.min() >= 0.0 and draws.max() < 1.0
        for row in draws:
            assert stats.kstest(row, "uniform").pvalue > 1e-3
    assert abs(coin.mean() - 0.5) < 0.01


def test_root_key_comes_from_the_generator():
    assert root_key(np.random.default_rng(3)) == root_key(np.random.default_rng(3))
    assert root_key(np.random.default_rng(3)) != root_key(np.random.default_rng(4))
    assert root_key(None) == 0


@pytest.mark.parametrize("cls, params", [
    (fasttree.ExtraTreeClassifier, {}),
    (fasttree.ExtraTreeClassifier, {"max_features": 2}),
    (fasttree.DecisionTreeClassifier, {"max_features": 3, "criterion": "entropy"}),
    (fasttree.ExtraTreeRegressor, {"max_features": 1.0}),
])
def test_best_first_growth_draws_what_level_wise_growth_draws(cls, params):
    """Grown best first until no leaf can split, a tree makes the splits it makes level by
    level (its nodes are numbered in another order): draws follow the node, not the order."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    # whole-number targets: level-wise growth grows extra trees depth first, adding a node's
    # rows in another order than best-first growth on the presorted layout; exact either way
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int) if cls._estimator_type == "classifier" \
        else np.round(3 * np.nan_to_num(X[:, 1]) + rng.normal(size=400))
    level = cls(random_state=5, **params).fit(X, y)
    best = cls(random_state=5, max_leaf_nodes=10_000, **params).fit(X, y)
    assert level.tree_.node_count == best.tree_.node_count
    splits = lambda t: sorted(zip(t.depth, t.feature, t.threshold))  # noqa: E731
    assert splits(level.tree_) == splits(best.tree_)
    np.testing.assert_array_equal(level.predict(X), best.predict(X))
