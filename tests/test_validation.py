"""Bad input gets a clear ValueError or TypeError naming the problem."""

import re

import numpy as np
import pytest

import fasttree
from fasttree import DecisionTreeClassifier, DecisionTreeRegressor, NotFittedError

X = np.random.default_rng(0).normal(size=(30, 3))
y = (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "bad_X, error, match",
    [
        (np.where(np.arange(90).reshape(30, 3) == 4, np.inf, X), ValueError, "infinity"),
        (np.full((30, 3), 1e300), ValueError, "too large for float32"),
        (X[:, 0], ValueError, "Expected 2D array, got 1D array instead"),
        (X[None], ValueError, "dim 3; X must be 2-D"),
        (X.astype(complex), ValueError, "Complex data not supported"),
    ],
    ids=["inf", "overflow", "1d", "3d", "complex"],
)
def test_bad_X_in_fit(bad_X, error, match):
    with pytest.raises(error, match=match):
        DecisionTreeClassifier().fit(bad_X, y)


def test_empty_X():
    with pytest.raises(ValueError, match="0 sample"):
        DecisionTreeClassifier().fit(np.empty((0, 3)), [])
    with pytest.raises(ValueError, match="0 feature"):
        DecisionTreeClassifier().fit(np.empty((5, 0)), np.arange(5))


def test_1d_X_gets_scikit_learns_reshape_hint():
    from sklearn.tree import DecisionTreeClassifier as SkClassifier

    row = np.array([0.5, 1.0, -2.0])  # the same text in float32 (scikit-learn's) and float64
    with pytest.raises(ValueError) as theirs:
        SkClassifier().fit(X, y).predict(row)
    expected = "^" + re.escape(str(theirs.value)) + "$"
    assert "Reshape your data either using array.reshape(-1, 1)" in str(theirs.value)
    classifier = DecisionTreeClassifier().fit(X, y)
    for method in ("predict", "predict_proba", "apply", "decision_path"):
        with pytest.raises(ValueError, match=expected):
            getattr(classifier, method)(row)
    with pytest.raises(ValueError, match=expected):
        classifier.score(row, [1])
    with pytest.raises(ValueError, match=expected):
        DecisionTreeRegressor().fit(X, X[:, 0]).score(row, [1.0])
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        DecisionTreeClassifier().fit(X[:, 0], y)


def test_empty_sparse_X_says_zero_samples():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match=re.escape("Found array with 0 sample(s) (shape=(0, 3)) "
                                                   "while a minimum of 1 is required.")):
        DecisionTreeClassifier().fit(sparse.csr_matrix((0, 3)), [])


def test_length_mismatch_and_bad_y():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DecisionTreeClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="NaN"):
        DecisionTreeRegressor().fit(X, np.where(y == 1, np.nan, 1.0))
    with pytest.raises(ValueError, match="continuous"):
        DecisionTreeClassifier().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="1-D"):  # C4.5's rules take one output
        fasttree.C45Classifier().fit(X, np.c_[y, y])
    with pytest.raises(ValueError, match="several outputs"):
        DecisionTreeClassifier(missing="fractional").fit(X, np.c_[y, y])
    with pytest.raises(ValueError, match="requires y"):
        DecisionTreeRegressor().fit(X, None)
    with pytest.raises(ValueError, match="infinity"):
        DecisionTreeClassifier().fit(X, np.where(y == 1, np.inf, 0.0))


def test_sparse_and_dataframe_columns():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match="categorical"):
        DecisionTreeClassifier(categorical_features=[0]).fit(sparse.csr_matrix(X), y)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="contains NaN"):
        DecisionTreeClassifier().fit(sparse.csr_matrix(X_nan), y)
    with pytest.raises(ValueError, match="gain_ratio"):
        DecisionTreeClassifier(criterion="gain_ratio").fit(sparse.csr_matrix(X), y)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": X[:, 0], "colour": ["red"] * 30})
    with pytest.raises(TypeError, match="'colour'"):
        DecisionTreeClassifier(categorical_features=None).fit(df, y)
    assert DecisionTreeClassifier().fit(df, y).is_categorical_.tolist() == [False, True]


@pytest.mark.parametrize(
    "weight, match",
    [(-np.ones(30), "negative"), (np.ones(29), "shape"), (np.zeros(30), "sums to zero"),
     (np.full(30, np.nan), "NaN")],
)
def test_bad_sample_weight(weight, match):
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier().fit(X, y, sample_weight=weight)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"min_samples_leaf": True}, "min_samples_leaf"),
        ({"min_samples_split": 1}, "min_samples_split"),
        ({"criterion": "mse"}, "criterion"),
        ({"max_features": 4}, "max_features"),
        ({"max_features": "auto"}, "max_features"),
        ({"max_leaf_nodes": 1}, "max_leaf_nodes"),
        ({"min_impurity_decrease": -1.0}, "min_impurity_decrease"),
        ({"min_weight_fraction_leaf": 0.6}, "min_weight_fraction_leaf"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"class_weight": "even"}, "class_weight"),
        ({"class_weight": {7: 1.0}}, "not in y"),
        ({"random_state": "seed"}, "random_state"),
    ],
    ids=str,
)
def test_bad_hyperparameters(params, match):
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier(**params).fit(X, y)


def test_regressor_rejects_classification_criterion():
    with pytest.raises(ValueError, match="criterion"):
        DecisionTreeRegressor(criterion="gini").fit(X, X[:, 0])


def test_predict_before_fit_and_wrong_width():
    for method in ("predict", "apply", "decision_path"):
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(DecisionTreeClassifier(), method)(X)
    with pytest.raises(NotFittedError):
        _ = DecisionTreeClassifier().feature_importances_
    est = DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but .* is expecting 3"):
        est.predict(X[:, :2])
    # missing values are routed, not refused
    assert est.predict(np.full((2, 3), np.nan)).shape == (2,)


def test_strings_need_categorical_features():
    strings = np.array([["a", "b", "c"]] * 30)
    with pytest.raises(TypeError, match="numeric"):
        DecisionTreeClassifier(categorical_features=None).fit(strings, y)
    with pytest.raises(ValueError, match="categorical_features"):
        DecisionTreeClassifier(categorical_features="all").fit(strings, y)
    with pytest.raises(ValueError, match="out of range"):
        DecisionTreeClassifier(categorical_features=[5]).fit(X, y)
    with pytest.raises(ValueError, match="no column names"):
        DecisionTreeClassifier(categorical_features=["a"]).fit(X, y)
    with pytest.raises(ValueError, match="categorical_split"):
        DecisionTreeClassifier(categorical_split="ternary").fit(X, y)
