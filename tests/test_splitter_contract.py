"""The splitter contract (:mod:`fasttree.splitter_contract`): every splitter implements it, and
the estimators' refusals and scikit-learn tags follow from the splitters' capabilities."""

import inspect

import numpy as np
import pytest

import fasttree
from fasttree.hist_splitter import HistSplitter
from fasttree.sharded_splitter import ShardedSplitter
from fasttree.sparse_splitter import SparseSplitter
from fasttree.splitter import ExactSplitter
from fasttree.splitter_contract import NEEDS, Splitter, refused_needs

SPLITTERS = [ExactSplitter, HistSplitter, SparseSplitter, ShardedSplitter]
METHODS = [name for name, value in vars(Splitter).items()
           if inspect.isfunction(value) and not name.startswith("_")]
CLASS_ATTRIBUTES = ["capabilities", "one_output_only", "choice", "remedy"]


@pytest.mark.parametrize("splitter", SPLITTERS, ids=lambda c: c.__name__)
def test_every_splitter_has_the_contracts_methods_and_capabilities(splitter):
    assert len(METHODS) == 7
    for name in METHODS:
        if splitter in (SparseSplitter, ShardedSplitter) and name == "describe_categorical":
            # numeric splits only: the grower never calls it, the method takes anything
            assert callable(getattr(splitter, name))
            continue
        expected = list(inspect.signature(getattr(Splitter, name)).parameters)
        got = list(inspect.signature(getattr(splitter, name)).parameters)
        assert got == expected, (splitter.__name__, name)
    for name in CLASS_ATTRIBUTES:
        assert hasattr(splitter, name), (splitter.__name__, name)
    assert splitter.capabilities <= NEEDS.keys()
    assert splitter.one_output_only <= splitter.capabilities
    assert isinstance(splitter.choice, str) and isinstance(splitter.remedy, str)


def test_a_built_splitter_satisfies_the_protocol():
    X = np.random.default_rng(0).normal(size=(30, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int32)
    splitter = ExactSplitter.from_data(
        X, y, None, n_classes=2, n_categories=np.zeros(3, np.int64), criterion_code=0,
        min_samples_leaf=1, min_weight_leaf=0.0, categorical_kind=0)
    assert isinstance(splitter, Splitter)


def test_refused_needs():
    assert refused_needs(HistSplitter, ["gain_ratio", "poisson", "sparse"]) == ["poisson",
                                                                                "sparse"]
    assert refused_needs(ExactSplitter, ["monotonic_cst"]) == []
    assert refused_needs(ExactSplitter, ["monotonic_cst"], several_outputs=True) == [
        "monotonic_cst"]
    with pytest.raises(ValueError, match="unknown needs"):
        refused_needs(ExactSplitter, ["forest"])


ESTIMATORS = [
    fasttree.DecisionTreeClassifier(),
    fasttree.DecisionTreeClassifier(criterion="gain_ratio"),
    fasttree.DecisionTreeClassifier(splitter="hist"),
    fasttree.DecisionTreeClassifier(missing="fractional"),
    fasttree.C45Classifier(),
    fasttree.DecisionTreeClassifier(monotonic_cst=[1, 0, 0]),
    fasttree.DecisionTreeClassifier(pruning="pessimistic"),
    fasttree.DecisionTreeRegressor(),
    fasttree.DecisionTreeRegressor(splitter="hist"),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_tags_say_what_fit_takes(estimator):
    """Sparse X and several outputs are taken exactly where the tags say so; otherwise the
    error names what refuses them."""
    sparse = pytest.importorskip("scipy.sparse")
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    tags = estimator.__sklearn_tags__()
    for takes, X_fit, y_fit in [(tags.input_tags.sparse, sparse.csr_matrix(X), y),
                                (tags.target_tags.multi_output, X, np.c_[y, 1 - y])]:
        if takes:
            estimator.fit(X_fit, y_fit)
            continue
        with pytest.raises(ValueError) as caught:
            estimator.fit(X_fit, y_fit)
        message = str(caught.value)
        assert "sparse" in message or "1-D" in message or "multiple outputs" in message, message
