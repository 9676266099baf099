"""scikit-learn's metadata routing (``set_fit_request``, ``set_score_request``,
``get_metadata_routing``) on fasttree's estimators, against scikit-learn's own trees."""

import inspect
import pickle
import subprocess
import sys

import numpy as np
import pytest

import fasttree
from fasttree.preprocessing import (EntropyDiscretizer, EqualFrequencyDiscretizer,
                                    EqualWidthDiscretizer)

sklearn = pytest.importorskip("sklearn")
import sklearn.tree  # noqa: E402
from sklearn.base import BaseEstimator, clone  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.model_selection import (GridSearchCV, KFold, StratifiedKFold,  # noqa: E402
                                     cross_val_score)
from sklearn.pipeline import make_pipeline  # noqa: E402

@pytest.fixture(autouse=True)
def routing_enabled():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


#: every public estimator and the scikit-learn tree whose routing it has
TREES = [
    (fasttree.DecisionTreeClassifier, sklearn.tree.DecisionTreeClassifier),
    (fasttree.DecisionTreeRegressor, sklearn.tree.DecisionTreeRegressor),
    (fasttree.ExtraTreeClassifier, sklearn.tree.ExtraTreeClassifier),
    (fasttree.ExtraTreeRegressor, sklearn.tree.ExtraTreeRegressor),
    (fasttree.ID3Classifier, sklearn.tree.DecisionTreeClassifier),
    (fasttree.C45Classifier, sklearn.tree.DecisionTreeClassifier),
]
DISCRETIZERS = [EntropyDiscretizer, EqualFrequencyDiscretizer, EqualWidthDiscretizer]
METHODS = ["fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
           "decision_function", "score", "split", "transform", "inverse_transform"]


def _dask_classes():
    pytest.importorskip("distributed")
    import fasttree.dask as fdask

    return [(fdask.DecisionTreeClassifier, fasttree.DecisionTreeClassifier),
            (fdask.DecisionTreeRegressor, fasttree.DecisionTreeRegressor)]


def _request_methods(est):
    return sorted(f"set_{m}_request" for m in METHODS if hasattr(est, f"set_{m}_request"))


def _sklearn_twin(cls):
    """A scikit-learn estimator with ``cls``'s methods: what scikit-learn's own machinery makes
    of their signatures."""
    methods = {m: getattr(cls, m) for m in METHODS if hasattr(cls, m)}
    return type(cls.__name__, (BaseEstimator,), methods)


def _weighted_data(kind):
    if kind == "classifier":
        X, y = make_classification(n_samples=150, n_features=6, n_informative=3,
                                   random_state=0)
    else:
        X, y = make_regression(n_samples=150, n_features=6, noise=10.0, random_state=0)
    w = np.random.default_rng(0).integers(0, 4, size=len(y)).astype(float)
    return X, y, w


def _manual_scores(est, X, y, w, cv, *, fit_weight, score_weight):
    scores = []
    for train, test in cv.split(X, y):
        fitted = clone(est).fit(X[train], y[train],
                                sample_weight=w[train] if fit_weight else None)
        scores.append(fitted.score(X[test], y[test],
                                   sample_weight=w[test] if score_weight else None))
    return np.array(scores)


# -- what is requestable, against scikit-learn -----------------------------------------------
@pytest.mark.parametrize("ours, theirs", TREES, ids=lambda c: c.__name__)
def test_trees_route_as_sklearn_trees(ours, theirs):
    est, ref = ours(), theirs()
    assert _request_methods(est) == _request_methods(ref) == ["set_fit_request",
                                                             "set_score_request"]
    # and what scikit-learn makes of every method fasttree's class defines
    assert _request_methods(est) == _request_methods(_sklearn_twin(ours)())
    for name in _request_methods(ref):
        mine, sk = inspect.signature(getattr(est, name)), inspect.signature(getattr(ref, name))
        assert list(mine.parameters) == list(sk.parameters)
        assert [p.default for p in mine.parameters.values()] == [
            p.default for p in sk.parameters.values()]
        assert mine.return_annotation is ours
        assert getattr(est, name).__doc__ == getattr(ref, name).__doc__
    assert str(est.get_metadata_routing()) == str(ref.get_metadata_routing())
    # after the same requests, the same routing
    est.set_fit_request(sample_weight=True).set_score_request(sample_weight="w_test")
    ref.set_fit_request(sample_weight=True).set_score_request(sample_weight="w_test")
    assert str(est.get_metadata_routing()) == str(ref.get_metadata_routing())
    assert type(est.get_metadata_routing()) is type(ref.get_metadata_routing())


@pytest.mark.parametrize("cls", DISCRETIZERS, ids=lambda c: c.__name__)
def test_discretizers_route_as_sklearn_would(cls):
    twin = _sklearn_twin(cls)()
    assert _request_methods(cls()) == _request_methods(twin)
    assert str(cls().get_metadata_routing()) == str(twin.get_metadata_routing())
    # the supervised one weighs rows in fit; the others take no metadata at all
    expected = ["set_fit_request"] if cls is EntropyDiscretizer else []
    assert _request_methods(cls()) == expected


def test_dask_estimators_route_as_the_local_ones():
    for dask_cls, local_cls in _dask_classes():
        est = dask_cls()
        assert _request_methods(est) == _request_methods(local_cls())
        assert str(est.get_metadata_routing()) == str(local_cls().get_metadata_routing())
        assert est.set_fit_request(sample_weight=True) is est
        assert clone(est).get_metadata_routing().fit.requests == {"sample_weight": True}


# -- cross-validation and search with routed weights -----------------------------------------
@pytest.mark.parametrize("cls, cv", [(fasttree.DecisionTreeClassifier, StratifiedKFold(5)),
                                     (fasttree.DecisionTreeRegressor, KFold(5))],
                         ids=["classifier", "regressor"])
def test_cross_val_score_routes_weights(cls, cv):
    X, y, w = _weighted_data(cls._estimator_type)
    base = cls(max_depth=4, random_state=0)
    both = clone(base).set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
    scores = cross_val_score(both, X, y, cv=cv, params={"sample_weight": w})
    expected = _manual_scores(base, X, y, w, cv, fit_weight=True, score_weight=True)
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    # the weights matter here: unweighted fits and scores differ
    unweighted = _manual_scores(base, X, y, w, cv, fit_weight=False, score_weight=False)
    assert not np.allclose(scores, unweighted)

    # weights requested by fit only: the score is unweighted
    fit_only = clone(base).set_fit_request(sample_weight=True).set_score_request(
        sample_weight=False)
    scores = cross_val_score(fit_only, X, y, cv=cv, params={"sample_weight": w})
    np.testing.assert_allclose(
        scores, _manual_scores(base, X, y, w, cv, fit_weight=True, score_weight=False),
        rtol=1e-12)
    # by score only, under another name
    score_only = clone(base).set_fit_request(sample_weight=False).set_score_request(
        sample_weight="test_weight")
    scores = cross_val_score(score_only, X, y, cv=cv, params={"test_weight": w})
    np.testing.assert_allclose(
        scores, _manual_scores(base, X, y, w, cv, fit_weight=False, score_weight=True),
        rtol=1e-12)


def test_unrequested_weight_raises_as_sklearn():
    X, y, w = _weighted_data("classifier")
    with pytest.raises(Exception) as theirs:
        cross_val_score(sklearn.tree.DecisionTreeClassifier(), X, y,
                        params={"sample_weight": w})
    with pytest.raises(type(theirs.value), match="DecisionTreeClassifier") as ours:
        cross_val_score(fasttree.DecisionTreeClassifier(), X, y, params={"sample_weight": w})
    assert str(ours.value) == str(theirs.value)
    # fit's request set, score's not: score's turn to raise, as scikit-learn's does
    with pytest.raises(Exception) as theirs:
        cross_val_score(sklearn.tree.DecisionTreeClassifier().set_fit_request(
            sample_weight=True), X, y, params={"sample_weight": w})
    with pytest.raises(type(theirs.value), match="score") as ours:
        cross_val_score(fasttree.DecisionTreeClassifier().set_fit_request(sample_weight=True),
                        X, y, params={"sample_weight": w})
    assert str(ours.value) == str(theirs.value)


def test_grid_search_routes_weights():
    X, y, w = _weighted_data("classifier")
    est = fasttree.DecisionTreeClassifier(random_state=0).set_fit_request(
        sample_weight=True).set_score_request(sample_weight=True)
    grid = {"max_depth": [1, 3, None]}
    cv = StratifiedKFold(3)
    search = GridSearchCV(est, grid, cv=cv).fit(X, y, sample_weight=w)
    for i, depth in enumerate(grid["max_depth"]):
        expected = _manual_scores(fasttree.DecisionTreeClassifier(max_depth=depth,
                                                                  random_state=0),
                                  X, y, w, cv, fit_weight=True, score_weight=True)
        np.testing.assert_allclose(search.cv_results_["mean_test_score"][i], expected.mean(),
                                   rtol=1e-12)
    # the refit is weighted too, and keeps the requests
    refit = fasttree.DecisionTreeClassifier(
        max_depth=search.best_params_["max_depth"], random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_.tree_.value, refit.tree_.value)
    assert search.best_estimator_.get_metadata_routing().fit.requests == {"sample_weight": True}


def test_pipeline_routes_weights_to_discretizer_and_tree():
    X, y, w = _weighted_data("classifier")
    pipe = make_pipeline(EntropyDiscretizer().set_fit_request(sample_weight=True),
                         fasttree.DecisionTreeClassifier().set_fit_request(sample_weight=True))
    pipe.fit(X, y, sample_weight=w)
    Xt = EntropyDiscretizer().fit(X, y, sample_weight=w).transform(X)
    tree = fasttree.DecisionTreeClassifier().fit(Xt, y, sample_weight=w)
    np.testing.assert_array_equal(pipe[-1].tree_.value, tree.tree_.value)


# -- the request's life: clone, pickle, parameters -------------------------------------------
def test_request_survives_clone_pickle_and_set_params():
    est = fasttree.DecisionTreeClassifier(max_depth=3)
    assert est.set_fit_request(sample_weight=True) is est
    assert est.set_score_request(sample_weight=False) is est
    expected = str(est.get_metadata_routing())
    params, text = est.get_params(), repr(est)
    assert params == fasttree.DecisionTreeClassifier(max_depth=3).get_params()
    assert text == "DecisionTreeClassifier(max_depth=3)"
    for copy in (clone(est), pickle.loads(pickle.dumps(est)),
                 pickle.loads(pickle.dumps(est.fit(*_weighted_data("classifier")[:2])))):
        assert str(copy.get_metadata_routing()) == expected
    assert str(clone(est).set_params(max_depth=5).get_metadata_routing()) == expected
    # the clone's request is its own
    cloned = clone(est).set_fit_request(sample_weight=False)
    assert est.get_metadata_routing().fit.requests == {"sample_weight": True}
    assert cloned.get_metadata_routing().fit.requests == {"sample_weight": False}
    # scikit-learn's unbound form works too
    fasttree.DecisionTreeClassifier.set_fit_request(cloned, sample_weight="w")
    assert cloned.get_metadata_routing().fit.requests == {"sample_weight": "w"}


def test_bad_requests_raise_as_sklearn():
    ours, theirs = fasttree.DecisionTreeClassifier(), sklearn.tree.DecisionTreeClassifier()
    for call in (lambda e: e.set_fit_request(check_input=True),
                 lambda e: e.set_fit_request(True),
                 lambda e: e.set_score_request(sample_weight=True, weights=True)):
        with pytest.raises(TypeError) as expected:
            call(theirs)
        with pytest.raises(TypeError) as got:
            call(ours)
        assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError) as expected:
        theirs.set_fit_request(sample_weight=3)
    with pytest.raises(type(expected.value)) as got:
        ours.set_fit_request(sample_weight=3)
    assert str(got.value) == str(expected.value)


def test_routing_disabled_raises_as_sklearn():
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(RuntimeError) as expected:
            sklearn.tree.DecisionTreeClassifier().set_fit_request(sample_weight=True)
        for cls, _ in TREES:
            for name in ("set_fit_request", "set_score_request"):
                with pytest.raises(RuntimeError) as got:
                    getattr(cls(), name)(sample_weight=True)
                assert str(got.value) == str(expected.value)
        with pytest.raises(RuntimeError):
            EntropyDiscretizer().set_fit_request(sample_weight=True)
        # reading the routing needs no flag, as for scikit-learn's estimators
        assert str(fasttree.DecisionTreeRegressor().get_metadata_routing()) == str(
            sklearn.tree.DecisionTreeRegressor().get_metadata_routing())


def test_without_sklearn_the_methods_are_absent():
    """``import fasttree`` and fits need no scikit-learn; the routing methods say they do."""
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import inspect, numpy as np, fasttree\n"
        "est = fasttree.DecisionTreeClassifier()\n"
        "assert not hasattr(est, 'set_fit_request') and not hasattr(est, 'set_score_request')\n"
        "inspect.getmembers(est)\n"
        "est.fit(np.arange(8.0).reshape(4, 2), [0, 0, 1, 1], sample_weight=np.ones(4))\n"
        "try:\n"
        "    est.get_metadata_routing()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "needs scikit-learn" in out.stdout
