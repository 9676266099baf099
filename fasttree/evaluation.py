"""k-fold cross-validation without scikit-learn (used by the command line)."""

import numpy as np


def kfold_indices(n_samples, n_splits, random_state=0):
    """Shuffled k-fold split: a list of ``(train_idx, test_idx)`` pairs, folds of similar size.

    Raises
    ------
    ValueError
        If ``n_splits`` is not an int in [2, n_samples].
    """
    if not isinstance(n_splits, int) or not 2 <= n_splits <= n_samples:
        raise ValueError(
            f"the number of folds must be an int in [2, n_samples={n_samples}]; got {n_splits!r}")
    order = np.random.default_rng(random_state).permutation(n_samples)
    folds = np.array_split(order, n_splits)
    return [(np.concatenate(folds[:i] + folds[i + 1:]), folds[i]) for i in range(n_splits)]


def cross_val_score(make_estimator, X, y, n_splits=10, random_state=0):
    """Cross-validated score of a fresh estimator per fold.

    Accuracy for a classifier is the total of correct predictions over all folds divided by the
    number of rows; R² for a regressor is averaged over folds.

    Parameters
    ----------
    make_estimator : callable returning an unfitted estimator
    X, y : arrays
    n_splits : int, default=10
    random_state : int, default=0

    Returns
    -------
    score : float
    """
    folds = kfold_indices(X.shape[0], n_splits, random_state)
    correct = 0
    r2 = []
    for train, test in folds:
        est = make_estimator().fit(X[train], y[train])
        if est._estimator_type == "classifier":
            correct += int(np.sum(est.predict(X[test]) == y[test]))
        else:
            r2.append(est.score(X[test], y[test]))
    if r2:
        return float(np.mean(r2))
    return correct / X.shape[0]
