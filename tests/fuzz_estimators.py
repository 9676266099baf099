"""Hypothesis drives the estimators with hostile input (run by tests/test_reliability.py in a
subprocess, so that a crash fails the test instead of ending the test run).

Every call either raises ``ValueError``/``TypeError`` or returns a tree whose invariants hold:
the children's row counts add up to their parent's, ``apply`` lands on leaves, probabilities
are finite and sum to 1, predictions are finite.
"""

import sys
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttree

# NaN, signed zeros, float32's extremes and denormals, values that collide in float32
SPECIAL = [np.nan, -0.0, 0.0, 1e38, -1e38, 3.4e38, 1e-45, 5e-324, 1.0, 1.0 + 2**-30,
           16777217.0, 16777216.0]

values = st.one_of(st.sampled_from(SPECIAL), st.floats(-1e6, 1e6, width=32),
                   st.integers(-3, 3).map(float))


@st.composite
def problems(draw):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 4))
    X = np.array(draw(st.lists(values, min_size=n * m, max_size=n * m)), dtype=np.float64)
    X = X.reshape(n, m).astype(draw(st.sampled_from([np.float64, np.float32])))
    if draw(st.integers(0, 7)) == 0:  # sometimes an infinity, which fit must refuse
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, m - 1))] = draw(
            st.sampled_from([np.inf, -np.inf]))
    task = draw(st.sampled_from(["classification", "regression"]))
    if task == "classification":
        y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    else:
        y = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n)))
    weight = draw(st.one_of(
        st.none(),
        st.lists(st.sampled_from([0.0, 1.0, 0.5, 1e-300, 1e300, 3.0, 5e-324]),
                 min_size=n, max_size=n).map(np.array)))
    params = dict(
        max_depth=draw(st.sampled_from([None, 1, 3])),
        min_samples_leaf=draw(st.sampled_from([1, 2, 5])),
        min_weight_fraction_leaf=draw(st.sampled_from([0.0, 0.1])),
        splitter=draw(st.sampled_from(["best", "random"])),
        max_features=draw(st.sampled_from([None, 1])),
        random_state=0,
    )
    if task == "classification":
        params["criterion"] = draw(st.sampled_from(["gini", "entropy"]))
    else:
        params["criterion"] = draw(st.sampled_from(["squared_error", "absolute_error"]))
    return task, X, y, weight, params


def check_invariants(est, X, task):
    tree = est.tree_
    internal = np.flatnonzero(tree.children_left != -1)
    for node in internal:
        children = range(tree.children_left[node], tree.children_right[node] + 1)
        assert sum(tree.n_node_samples[c] for c in children) == tree.n_node_samples[node]
    leaves = est.apply(X)
    assert np.all(tree.children_left[leaves] == -1)
    if task == "classification":
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
    else:
        assert np.all(np.isfinite(est.predict(X)))


@settings(max_examples=int(sys.argv[1]) if len(sys.argv) > 1 else 200, deadline=None,
          suppress_health_check=list(HealthCheck), derandomize=True)
@given(problems())
def fuzz(problem):
    task, X, y, weight, params = problem
    Estimator = (fasttree.DecisionTreeClassifier if task == "classification"
                 else fasttree.DecisionTreeRegressor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est = Estimator(**params).fit(X, y, sample_weight=weight)
        except (ValueError, TypeError):
            return
        X_finite = np.where(np.isfinite(X), X, np.nan)  # inf is refused at predict
        check_invariants(est, X_finite, task)


if __name__ == "__main__":
    fuzz()
    print("ok")
