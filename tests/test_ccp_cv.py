"""pruning="cost_complexity" without ccp_alpha: CART's alpha by k-fold cross-validation and the
one-standard-error rule (Breiman et al. 1984), checked against fits made fold by fold."""

import numpy as np
import pytest

from fasttree import DecisionTreeClassifier, DecisionTreeRegressor, pruning
from fasttree.pruning import cv_folds


def breiman_candidates(path_alphas):
    """Breiman's alpha'_k = sqrt(alpha_k alpha_{k+1}) over the distinct subtrees; the last
    (the root alone) is any alpha past the last path alpha."""
    bounds = np.unique(np.maximum.accumulate(path_alphas))
    return bounds, np.append(np.sqrt(bounds[:-1] * bounds[1:]), np.inf)


def one_se_choice(losses, weight, candidates, bounds):
    """The 1-SE rule by hand from every row's held-out loss at every candidate
    (``losses``: n_candidates x n_rows)."""
    total = weight.sum()
    errors = losses @ weight / total
    se = np.array([np.sqrt(np.sum(weight ** 2 * (row - r) ** 2)) / total
                   for row, r in zip(losses, errors)])
    best = np.argmin(errors)
    chosen = np.flatnonzero(errors <= (errors[best] + se[best]) * (1 + 1e-12))[-1]
    alpha = bounds[-1] if chosen == len(candidates) - 1 else candidates[chosen]
    return alpha, chosen, errors, se


def sklearn_reference(Sk, X, y, fold, weight=None):
    """The chosen alpha with scikit-learn's trees: its pruning path on all rows, and a tree per
    fold and candidate (fit with that ccp_alpha on the other folds)."""
    from sklearn.base import is_classifier

    w = np.ones(len(y)) if weight is None else weight
    path = Sk().cost_complexity_pruning_path(X, y, sample_weight=weight)
    bounds, candidates = breiman_candidates(path.ccp_alphas)
    losses = np.zeros((len(candidates), len(y)))
    for k in np.unique(fold):
        train, test = fold != k, fold == k
        for j, alpha in enumerate(candidates):
            tree = Sk(ccp_alpha=min(alpha, np.finfo(float).max)).fit(
                X[train], y[train], sample_weight=None if weight is None else w[train])
            pred = tree.predict(X[test])
            losses[j, test] = (pred != y[test]) if is_classifier(Sk()) else (
                (pred - y[test]) ** 2)
    return one_se_choice(losses, w, candidates, bounds)


def noisy_classes(n=300, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.8, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("task", ["classifier", "regressor", "weighted_classifier"])
def test_chosen_alpha_and_tree_equal_scikit_learns_fold_by_fold(task):
    """Same folds, scikit-learn's path and per-fold trees pruned at each candidate, the 1-SE
    rule by hand (continuous features: no tied splits, so the trees are scikit-learn's)."""
    from sklearn import tree as sk

    X, y = noisy_classes(240, seed=1)
    weight = None
    if task == "regressor":
        y = X[:, 0] + np.sin(2 * X[:, 1]) + np.random.default_rng(2).normal(scale=0.7,
                                                                             size=len(y))
        Ours, Sk = DecisionTreeRegressor, sk.DecisionTreeRegressor
    else:
        Ours, Sk = DecisionTreeClassifier, sk.DecisionTreeClassifier
        if task == "weighted_classifier":
            weight = np.random.default_rng(3).integers(1, 4, size=len(y)).astype(float)
    n_folds, seed = 5, 7
    fold = cv_folds(len(y), y if Ours is DecisionTreeClassifier else None, n_folds,
                    np.random.default_rng(seed))
    alpha, chosen, errors, _ = sklearn_reference(Sk, X, y, fold, weight)
    assert 0 < chosen < len(errors) - 1  # a choice inside the path, not an end of it
    ours = Ours(pruning="cost_complexity", ccp_folds=n_folds, random_state=seed).fit(
        X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.ccp_alpha_, alpha, rtol=1e-9)
    theirs = Sk(ccp_alpha=alpha).fit(X, y, sample_weight=weight)
    assert ours.get_n_leaves() == theirs.get_n_leaves()
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X))


def fasttree_reference(est, X, y, weight=None):
    """The chosen alpha from fasttree's own fits: one unpruned tree per fold, pruned with
    pruning.cost_complexity at every candidate, losses from predict."""
    params = {**est.get_params(), "pruning": None, "ccp_alpha": 0.0}
    w = np.ones(len(y)) if weight is None else weight
    stratify = est._estimator_type == "classifier" and np.ndim(y) == 1
    positive = w > 0  # rows of no weight are in no fold (fit drops them from every tree)
    codes = np.unique(y, return_inverse=True)[1][positive] if stratify else None
    fold = np.full(len(y), -1)
    fold[positive] = cv_folds(positive.sum(), codes, est.ccp_folds,
                              np.random.default_rng(est.random_state))
    full = type(est)(**params).fit(X, y, sample_weight=weight)
    bounds, candidates = breiman_candidates(pruning.cost_complexity_path(full).ccp_alphas)
    losses = np.zeros((len(candidates), len(y)))
    for k in range(est.ccp_folds):
        train, test = fold != k, fold == k
        grown = type(est)(**params).fit(X[train], y[train],
                                        sample_weight=None if weight is None else w[train])
        for j, alpha in enumerate(candidates):
            pred = pruning.cost_complexity(grown, alpha).predict(X[test])
            truth = y[test]
            if est._estimator_type == "classifier":
                loss = pred != truth
            elif est.criterion == "absolute_error":
                loss = np.abs(pred - truth)
            elif est.criterion == "poisson":
                with np.errstate(divide="ignore", invalid="ignore"):
                    loss = np.where(truth > 0, truth * np.log(truth / pred), 0.0) - truth + pred
            else:
                loss = (pred - truth) ** 2
            losses[j, test] = loss.reshape(len(truth), -1).mean(axis=1)
    return one_se_choice(losses, w, candidates, bounds)


def _csr(X):
    return pytest.importorskip("scipy.sparse").csr_matrix(X)


CASES = {
    "fractional_missing": lambda X, y, r: (
        DecisionTreeClassifier(missing="fractional", criterion="entropy"),
        np.where(r.random(X.shape) < 0.15, np.nan, X), y, None),
    "missing_learn_weighted": lambda X, y, r: (
        DecisionTreeClassifier(), np.where(r.random(X.shape) < 0.1, np.nan, X), y,
        r.random(len(y)) * 3),
    "multi_output": lambda X, y, r: (
        DecisionTreeClassifier(), X, np.c_[y, (X[:, 2] + r.normal(size=len(y)) > 0)], None),
    "absolute_error": lambda X, y, r: (
        DecisionTreeRegressor(criterion="absolute_error"), X, X[:, 0] + r.normal(size=len(y)),
        None),
    "poisson": lambda X, y, r: (
        DecisionTreeRegressor(criterion="poisson"), X,
        r.poisson(np.exp(0.7 * X[:, 0])).astype(float), None),
    "sparse": lambda X, y, r: (
        DecisionTreeClassifier(), _csr(np.where(r.random(X.shape) < 0.5, 0.0, X)), y, None),
    "categorical": lambda X, y, r: (
        DecisionTreeClassifier(categorical_features=[3]),
        np.c_[X[:, :3], r.integers(0, 5, len(y))], (y + (r.random(len(y)) < 0.1)) % 2, None),
    "regressor_zero_weights": lambda X, y, r: (
        DecisionTreeRegressor(min_samples_leaf=3), X, X[:, 1] + r.normal(size=len(y)),
        np.where(r.random(len(y)) < 0.2, 0.0, 1.0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_chosen_alpha_equals_pruning_each_fold_tree_at_each_candidate(case):
    """The per-node computation (and the per-subtree one for C4.5's fractional rows) against
    pruning every fold's tree at every candidate and predicting."""
    X, y = noisy_classes(160, seed=4, n_classes=2)
    rng = np.random.default_rng(5)
    est, X, y, weight = CASES[case](X, y, rng)
    est.set_params(pruning="cost_complexity", ccp_folds=4, random_state=11)
    alpha, chosen, _, _ = fasttree_reference(est, X, y, weight)
    est.fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(est.ccp_alpha_, alpha, rtol=1e-9)
    full = type(est)(**{**est.get_params(), "pruning": None}).fit(X, y, sample_weight=weight)
    assert est.get_n_leaves() == pruning.cost_complexity(full, alpha).get_n_leaves()


def test_pruned_tree_is_the_unpruned_tree_at_the_chosen_alpha_and_deterministic():
    X, y = noisy_classes(300)
    est = DecisionTreeClassifier(pruning="cost_complexity", random_state=3).fit(X, y)
    full = DecisionTreeClassifier(random_state=3).fit(X, y)
    assert 0.0 < est.ccp_alpha_
    assert est.get_n_leaves() < full.get_n_leaves()
    expected = pruning.cost_complexity(full, est.ccp_alpha_)
    np.testing.assert_array_equal(est.tree_.children_left, expected.tree_.children_left)
    np.testing.assert_array_equal(est.tree_.threshold, expected.tree_.threshold)
    again = DecisionTreeClassifier(pruning="cost_complexity", random_state=3).fit(X, y)
    assert again.ccp_alpha_ == est.ccp_alpha_
    np.testing.assert_array_equal(again.tree_.value, est.tree_.value)
    # a Generator gives the same choice from the same state
    by_generator = [DecisionTreeClassifier(pruning="cost_complexity",
                                           random_state=np.random.default_rng(8)).fit(X, y)
                    for _ in range(2)]
    assert by_generator[0].ccp_alpha_ == by_generator[1].ccp_alpha_


def test_given_ccp_alpha_prunes_at_exactly_that_alpha():
    X, y = noisy_classes(200)
    full = DecisionTreeClassifier().fit(X, y)
    alpha = float(pruning.cost_complexity_path(full).ccp_alphas[-4])
    for params in ({"pruning": "cost_complexity"}, {}):
        est = DecisionTreeClassifier(ccp_alpha=alpha, **params).fit(X, y)
        assert est.ccp_alpha_ == alpha
        assert est.get_n_leaves() == pruning.cost_complexity(full, alpha).get_n_leaves()
    assert DecisionTreeClassifier().fit(X, y).ccp_alpha_ == 0.0
    assert full.get_n_leaves() > pruning.cost_complexity(full, alpha).get_n_leaves()


def test_grid_search_over_pruning_scores_cost_complexity_apart_from_none():
    """The issue: a grid over pruning scored "cost_complexity" (no ccp_alpha) like None."""
    from sklearn.model_selection import GridSearchCV

    X, y = noisy_classes(300, seed=6, n_classes=2)
    search = GridSearchCV(DecisionTreeClassifier(random_state=0),
                          {"pruning": [None, "cost_complexity"]}, cv=3).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] != scores[0]
    assert search.best_params_ == {"pruning": "cost_complexity"}  # the noise is pruned away
    pruned = DecisionTreeClassifier(pruning="cost_complexity", random_state=0).fit(X, y)
    assert pruned.get_n_leaves() < DecisionTreeClassifier(random_state=0).fit(X, y).get_n_leaves()


def test_cost_complexity_function_keeps_a_chosen_alpha():
    """pruning.cost_complexity at a smaller alpha than the one chosen keeps the chosen one
    (the trees are nested), so clone() refits the same tree."""
    from sklearn.base import clone

    X, y = noisy_classes(300)
    est = DecisionTreeClassifier(pruning="cost_complexity", random_state=3).fit(X, y)
    again = pruning.cost_complexity(est, est.ccp_alpha_ / 10)
    assert again.ccp_alpha == again.ccp_alpha_ == est.ccp_alpha_
    assert clone(again).fit(X, y).get_n_leaves() == est.get_n_leaves()


def test_small_and_degenerate_fits():
    # fewer rows than folds: one row per fold; a root-only tree: nothing to choose
    X = np.arange(6, dtype=float).reshape(-1, 1)
    est = DecisionTreeClassifier(pruning="cost_complexity").fit(X, [0, 0, 0, 1, 1, 1])
    assert est.ccp_alpha_ >= 0.0
    root = DecisionTreeClassifier(pruning="cost_complexity").fit(X, np.zeros(6))
    assert root.ccp_alpha_ == 0.0 and root.get_n_leaves() == 1


@pytest.mark.parametrize("folds", [1, 2.5, "10", None])
def test_ccp_folds_is_checked(folds):
    X, y = noisy_classes(50)
    with pytest.raises(ValueError, match="ccp_folds must be an int >= 2"):
        DecisionTreeClassifier(pruning="cost_complexity", ccp_folds=folds).fit(X, y)
    # not read when ccp_alpha is given
    DecisionTreeClassifier(pruning="cost_complexity", ccp_alpha=0.01, ccp_folds=folds).fit(X, y)


def test_model_file_keeps_the_chosen_alpha(tmp_path):
    import fasttree

    X, y = noisy_classes(200)
    est = DecisionTreeClassifier(pruning="cost_complexity", ccp_folds=5, random_state=3).fit(X, y)
    est.save(tmp_path / "m.ftree")
    loaded = fasttree.load(tmp_path / "m.ftree")
    assert loaded.ccp_alpha_ == est.ccp_alpha_ > 0.0
    assert loaded.ccp_folds == 5
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_dask_estimators_refuse_to_choose_alpha_without_the_rows_in_memory():
    fasttree_dask = pytest.importorskip("fasttree.dask")
    X, y = noisy_classes(50)
    for Est in (fasttree_dask.DecisionTreeClassifier, fasttree_dask.DecisionTreeRegressor):
        with pytest.raises(ValueError, match="ccp_alpha"):
            Est(pruning="cost_complexity").fit(X, y.astype(float))


def test_to_sklearn_carries_the_chosen_alpha():
    pytest.importorskip("sklearn")
    X, y = noisy_classes(200)
    est = DecisionTreeClassifier(pruning="cost_complexity", ccp_folds=5, random_state=3).fit(X, y)
    converted = est.to_sklearn()
    assert converted.ccp_alpha == est.ccp_alpha_ > 0.0
    # refit, scikit-learn prunes its own full tree at that alpha: the same tree here (no ties)
    assert converted.fit(X, y).get_n_leaves() == est.get_n_leaves()
