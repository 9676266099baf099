"""DataFrames in and out: pandas, polars and pyarrow tables give the same trees as NumPy or the
equivalent pandas frame; feature names are kept and checked as scikit-learn does; the
discretizers' pandas/polars output keeps the input's index and column names."""

import datetime
import io
import re
import warnings

import numpy as np
import pytest

import fasttree
from fasttree.preprocessing import EntropyDiscretizer, EqualFrequencyDiscretizer

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

N = 80
TREE_FIELDS = ("children_left", "children_right", "feature", "threshold", "value",
               "impurity", "n_node_samples", "weighted_n_node_samples", "missing_go_to_left")


def _raw(seed=0):
    """Columns as plain Python lists (None for missing), the one source every table is built
    from independently."""
    rng = np.random.default_rng(seed)
    num = np.round(rng.normal(size=N), 3)
    count = rng.integers(0, 6, N)
    size = rng.choice(["lo", "mid", "hi"], N)
    grade = rng.choice(["b", "a", "c"], N)
    flag = rng.random(N) > 0.5
    target = ((num > 0.2) ^ (size == "hi") ^ (grade == "c")).astype(int)

    def holes(values, step, start):
        return [None if i % step == start else v for i, v in enumerate(values)]

    return {
        "num": holes(num.tolist(), 7, 1),
        "count": holes(count.tolist(), 9, 2),
        "size": holes(size.tolist(), 6, 3),   # strings
        "grade": holes(grade.tolist(), 8, 0),  # categories in the declared order b < a < c
        "flag": holes(flag.tolist(), 10, 4),
    }, target, (num + count).astype(np.float64)


GRADES = ["b", "a", "c"]


def _pandas(raw):
    return pd.DataFrame({
        "num": pd.array(raw["num"], dtype="Float64"),
        "count": pd.array(raw["count"], dtype="Int64"),
        "size": pd.Series(raw["size"], dtype=object),
        "grade": pd.Categorical(raw["grade"], categories=GRADES),
        "flag": pd.array(raw["flag"], dtype="boolean"),
    })


def _polars(raw):
    return pl.DataFrame({
        "num": pl.Series(raw["num"], dtype=pl.Float64),
        "count": pl.Series(raw["count"], dtype=pl.Int64),
        "size": pl.Series(raw["size"], dtype=pl.String),
        "grade": pl.Series(raw["grade"], dtype=pl.Enum(GRADES)),
        "flag": pl.Series(raw["flag"], dtype=pl.Boolean),
    })


def _arrow(raw, chunks=1):
    codes = [None if v is None else GRADES.index(v) for v in raw["grade"]]
    grade = pa.DictionaryArray.from_arrays(pa.array(codes, type=pa.int8()), pa.array(GRADES))
    table = pa.table({"num": pa.array(raw["num"], pa.float64()),
                      "count": pa.array(raw["count"], pa.int64()),
                      "size": pa.array(raw["size"], pa.string()),
                      "grade": grade,
                      "flag": pa.array(raw["flag"], pa.bool_())})
    if chunks == 1:
        return table
    cut = N // 3  # several record batches: one dictionary each, unified on conversion
    return pa.Table.from_batches(table.to_batches(max_chunksize=cut))


def _assert_same_tree(a, b):
    for field in TREE_FIELDS:
        np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field),
                                      err_msg=field)
    np.testing.assert_array_equal(a.is_categorical_, b.is_categorical_)
    for ca, cb in zip(a.categories_, b.categories_):
        assert (ca is None and cb is None) or list(ca) == list(cb)
    np.testing.assert_array_equal(a.feature_names_in_, b.feature_names_in_)


ESTIMATORS = {
    "tree": lambda: fasttree.DecisionTreeClassifier(random_state=0),
    "extra": lambda: fasttree.ExtraTreeClassifier(random_state=0, max_features=None),
    "id3": lambda: fasttree.ID3Classifier(),
    "c45": lambda: fasttree.C45Classifier(min_samples_leaf=1),
    "c45-named": lambda: fasttree.C45Classifier(categorical_features=["size", "grade", "flag"]),
    "regressor": lambda: fasttree.DecisionTreeRegressor(random_state=0),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_same_tree_from_pandas_polars_and_arrow(name):
    raw, target, values = _raw()
    y = values if name == "regressor" else target
    reference = ESTIMATORS[name]().fit(_pandas(raw), y)
    assert reference.is_categorical_.tolist() == [False, False, True, True, True]
    assert list(reference.categories_[3]) == GRADES  # the declared order is kept
    for table in (_polars(raw), _arrow(raw), _arrow(raw, chunks=3)):
        est = ESTIMATORS[name]().fit(table, y)
        _assert_same_tree(reference, est)
        expected = reference.predict(_pandas(raw))
        np.testing.assert_array_equal(est.predict(table), expected)
        np.testing.assert_array_equal(est.apply(table), reference.apply(_pandas(raw)))
        if name != "regressor":
            np.testing.assert_array_equal(est.predict_proba(table),
                                          reference.predict_proba(_pandas(raw)))
        # a model fitted on one library predicts from another
        np.testing.assert_array_equal(reference.predict(table), expected)


def test_arrow_and_polars_agree_with_their_own_pandas_conversion():
    # pyarrow's and polars' own to_pandas are an independent route to the same frame
    raw, y, _ = _raw(1)
    for table in (_arrow(raw), _polars(raw)):
        est = fasttree.DecisionTreeClassifier(random_state=0).fit(table, y)
        _assert_same_tree(fasttree.DecisionTreeClassifier(random_state=0).fit(
            table.to_pandas(), y), est)


def test_polars_categorical_takes_its_sorted_values():
    # since polars 2.0 a Categorical has no category list: its values, sorted, as for strings
    raw, y, _ = _raw(2)
    strings = pl.DataFrame({"size": pl.Series(raw["size"], dtype=pl.String)})
    cats = strings.with_columns(pl.col("size").cast(pl.Categorical))
    a = fasttree.ID3Classifier().fit(strings, y)
    b = fasttree.ID3Classifier().fit(cats, y)
    assert list(b.categories_[0]) == ["hi", "lo", "mid"]
    _assert_same_tree(a, b)


def test_numeric_tables_give_the_numpy_tree():
    raw, y, _ = _raw(3)
    X = np.array([[np.nan if v is None else v for v in raw[c]] for c in ("num", "count")]).T
    reference = fasttree.DecisionTreeClassifier(random_state=0).fit(X, y)
    pieces = {"num": raw["num"], "count": raw["count"]}
    for table in (pd.DataFrame(X, columns=["num", "count"]), pl.DataFrame(pieces),
                  pa.table(pieces)):
        est = fasttree.DecisionTreeClassifier(random_state=0).fit(table, y)
        for field in TREE_FIELDS:
            np.testing.assert_array_equal(getattr(est.tree_, field),
                                          getattr(reference.tree_, field))
        np.testing.assert_array_equal(est.feature_names_in_, ["num", "count"])
        np.testing.assert_array_equal(est.predict(table), reference.predict(X))


def test_nullable_boolean_with_na_is_a_category_with_missing_values():
    # a pandas "boolean" column holding NA failed with "boolean value of NA is ambiguous"
    raw, y, _ = _raw(4)
    obj = pd.DataFrame({"flag": pd.Series(raw["flag"], dtype=object), "num": raw["num"]})
    nullable = obj.assign(flag=pd.array(raw["flag"], dtype="boolean"))
    for make in (lambda: fasttree.DecisionTreeClassifier(), fasttree.C45Classifier):
        a, b = make().fit(obj, y), make().fit(nullable, y)
        assert b.is_categorical_.tolist() == [True, False]
        for field in TREE_FIELDS:
            np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field))
        np.testing.assert_array_equal(a.predict(obj), b.predict(nullable))


@pytest.mark.parametrize("make_y", [
    lambda v: pl.Series(v), lambda v: pl.Series(v, dtype=pl.Categorical),
    lambda v: pl.Series(v, dtype=pl.Enum(["yes", "no"])),
    lambda v: pa.chunked_array([v[:30], v[30:]]),
    lambda v: pa.array(v).dictionary_encode(),
    lambda v: pd.Series(pd.Categorical(v)), lambda v: pd.Series(v, dtype="string"),
])
def test_targets_from_series_and_arrays(make_y):
    raw, target, _ = _raw(5)
    labels = np.where(target == 1, "yes", "no")
    X = pd.DataFrame({"num": raw["num"], "count": raw["count"]}, dtype=float)
    reference = fasttree.DecisionTreeClassifier(random_state=0).fit(X, labels)
    est = fasttree.DecisionTreeClassifier(random_state=0).fit(X, make_y(labels.tolist()))
    assert est.classes_.tolist() == ["no", "yes"]
    np.testing.assert_array_equal(est.tree_.value, reference.tree_.value)
    np.testing.assert_array_equal(est.predict(X), reference.predict(X))


def test_regression_target_with_nulls_is_refused():
    X = np.arange(10.0).reshape(-1, 1)
    for y in (pl.Series([1.0, None] * 5), pa.chunked_array([[1.0, None] * 5])):
        with pytest.raises(ValueError, match="y contains NaN"):
            fasttree.DecisionTreeRegressor().fit(X, y)


def _penguins():
    """A small table like the penguins data: numbers, a string column, missing cells."""
    return pd.DataFrame({
        "bill": [39.1, 39.5, 40.3, np.nan, 36.7, 39.3, 38.9, 39.2],
        "flipper": [181.0, 186.0, 195.0, 193.0, 190.0, 181.0, 195.0, 182.0],
        "Island": ["Torgersen", "Biscoe", None, "Dream", "Biscoe", "Dream", "Torgersen",
                   "Biscoe"],
    })


SPECIES = ["Adelie", "Gentoo", None, "Adelie", "Gentoo", "Adelie", "Gentoo", "Adelie"]


@pytest.mark.parametrize("make_y, marker", [
    (lambda v: pd.Series(v, dtype=object), "None"),
    (lambda v: pd.Series([np.nan if s is None else s for s in v], dtype=object), "NaN"),
    (lambda v: pd.Series(v, dtype="string[python]"), "pd.NA"),
    (lambda v: pd.Series(v, dtype="string[pyarrow]"), "pd.NA"),
    (lambda v: pd.Series(v, dtype="str"), "NaN"),  # pandas 3's default for strings
    (lambda v: pd.Series(v, dtype="category"), "NaN"),
    (lambda v: pd.read_csv(io.StringIO("species\n" + "\n".join(s or "" for s in v)),
                           skip_blank_lines=False)["species"], "NaN"),
    (lambda v: np.array(v, dtype=object), "None"),
    (lambda v: np.array([np.nan if s is None else s for s in v], dtype=object), "NaN"),
    (lambda v: np.array([pd.NA if s is None else s for s in v], dtype=object), "pd.NA"),
    (lambda v: pd.Series([1.0, 2.0, None, 1.0, 2.0, 1.0, 2.0, 1.0], dtype="Float64"), "NaN"),
], ids=["object-None", "object-NaN", "string-python", "string-pyarrow", "str", "category",
        "read_csv", "numpy-None", "numpy-NaN", "numpy-NA", "Float64"])
def test_label_target_with_missing_values_is_refused_clearly(make_y, marker):
    X = _penguins()
    message = f"y contains {re.escape(marker)} in 1 of 8 rows; drop the rows with a missing target"
    for est in (fasttree.DecisionTreeClassifier(), fasttree.DecisionTreeRegressor()):
        with pytest.raises(ValueError, match=message):
            est.fit(X, make_y(SPECIES))
    classifier = fasttree.DecisionTreeClassifier().fit(X, [s or "Adelie" for s in SPECIES])
    with pytest.raises(ValueError, match=message):
        classifier.score(X, make_y(SPECIES))
    regressor = fasttree.DecisionTreeRegressor().fit(X, np.arange(8.0))
    with pytest.raises(ValueError, match="y contains NaN in 1 of 8 rows"):
        regressor.score(X, pd.Series([1.0, np.nan, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], dtype=object))


def test_string_in_a_column_numeric_at_fit():
    X = _penguins()
    y = ["Adelie", "Gentoo"] * 4
    bad = X.assign(bill=X["bill"].astype(object))
    bad.loc[0, "bill"] = "n/a"
    est = fasttree.DecisionTreeClassifier().fit(X, y)  # already on the default 'from_dtype'
    with pytest.raises(TypeError, match="column 'bill' has dtype object, but it was numeric when "
                       "the estimator was fitted; a column must have the same dtype") as info:
        est.predict(bad)
    assert "pass categorical_features='from_dtype'" not in str(info.value)
    for setting, shown in ((None, "None"), (["Island"], r"\['Island'\]")):
        est = fasttree.DecisionTreeClassifier(categorical_features=setting)
        est.fit(X if setting else X[["bill", "flipper"]], y)
        with pytest.raises(TypeError, match=f"column 'bill' has dtype object, but it was numeric "
                           rf"when the estimator was fitted \(categorical_features={shown} does "
                           "not declare it\\); to use it as a category, fit with "
                           "categorical_features='from_dtype'"):
            est.predict(bad if setting else bad[["bill", "flipper"]])


def test_empty_frame_says_zero_samples_as_scikit_learn_does():
    from sklearn import tree as sk_tree

    X = _penguins()
    y = ["Adelie", "Gentoo"] * 4
    numeric = X[["bill", "flipper"]].fillna(0.0)
    with pytest.raises(ValueError) as theirs:
        sk_tree.DecisionTreeClassifier().fit(numeric.iloc[:0], [])
    expected = str(theirs.value).replace(" by DecisionTreeClassifier", "")
    assert expected == ("Found array with 0 sample(s) (shape=(0, 2)) while a minimum of 1 is "
                        "required.")
    message = re.escape(expected.replace("(0, 2)", "(0, 3)"))
    for est in (fasttree.DecisionTreeClassifier(), fasttree.DecisionTreeRegressor()):
        with pytest.raises(ValueError, match=message):
            est.fit(X.iloc[:0], [])
    fitted = fasttree.DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match=message):
        fitted.predict(X.iloc[:0])
    with pytest.raises(ValueError, match=message):
        fasttree.DecisionTreeClassifier(categorical_features=None).fit(X.iloc[:0], [])


def test_one_row_as_a_series_gets_scikit_learns_2d_hint():
    from sklearn import tree as sk_tree

    X = _penguins()
    y = ["Adelie", "Gentoo"] * 4
    numeric = X[["bill", "flipper"]].fillna(0.0)
    with pytest.raises(ValueError) as theirs:
        sk_tree.DecisionTreeClassifier().fit(numeric, y).predict(numeric.iloc[0])
    assert str(theirs.value).startswith("Expected a 2-dimensional container")
    est = fasttree.DecisionTreeClassifier().fit(X, y)
    for method in ("predict", "predict_proba", "apply", "decision_path"):
        with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
            getattr(est, method)(X.iloc[0])
    with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
        est.score(X.iloc[0], ["Adelie"])
    regressor = fasttree.DecisionTreeRegressor().fit(X, np.arange(8.0))
    with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
        regressor.score(X.iloc[0], [1.0])


def test_column_names_print_as_plain_strings():
    X = _penguins()
    X.columns = pd.Index([np.str_(c) for c in X.columns], dtype=object)  # kept as np.str_
    assert type(X.columns[2]) is np.str_
    y = ["Adelie", "Gentoo"] * 4
    with pytest.raises(TypeError, match="X column 'Island' has dtype"):
        fasttree.DecisionTreeClassifier(categorical_features=None).fit(X, y)
    with pytest.raises(ValueError, match=r"categorical_features names 'Sex', which is not a "
                       r"column of X; columns are \['bill', 'flipper', 'Island'\]"):
        fasttree.DecisionTreeClassifier(categorical_features=np.array(["Island", "Sex"])).fit(X, y)
    dated = X.assign(when=pd.to_datetime(["2020-01-01"] * 8))
    dated.columns = pd.Index([np.str_(c) for c in dated.columns], dtype=object)
    with pytest.raises(TypeError, match="X column 'when' has type"):
        fasttree.DecisionTreeClassifier().fit(dated, y)
    est = fasttree.DecisionTreeClassifier().fit(X, y)
    bad = X.assign(bill=X["bill"].astype(object).where(X.index > 0, "n/a"))
    bad.columns = X.columns
    with pytest.raises(TypeError, match="X column 'bill' has dtype object"):
        est.predict(bad)


# -- feature names: scikit-learn's rules and messages --------------------------------------------

def _outcome(function, *args):
    """(exception type and message, or None; warning messages) of ``function(*args)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            function(*args)
            error = None
        except (TypeError, ValueError) as exc:
            error = (type(exc), str(exc))
    return error, [(w.category, str(w.message)) for w in caught
                   if "feature names" in str(w.message)]


@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow"])
def test_feature_name_checks_match_scikit_learn(library):
    from sklearn import tree as sk_tree

    rng = np.random.default_rng(6)
    data = {f"f{j}": rng.normal(size=40) for j in range(8)}
    y = (data["f0"] > 0).astype(int)
    make = {"pandas": pd.DataFrame, "polars": pl.DataFrame, "pyarrow": pa.table}[library]
    X = make(data)
    numpy_X = np.column_stack(list(data.values()))
    reordered = make({k: data[k] for k in reversed(data)})
    renamed = make({("g" + k if k in ("f0", "f1", "f2", "f3", "f4", "f5") else k): v
                    for k, v in data.items()})  # more than five: the lists are cut at five
    mixed = pd.DataFrame(numpy_X).set_axis(["a", 1, "c", "d", "e", "f", "g", "h"], axis=1)
    pairs = [(fasttree.DecisionTreeClassifier, sk_tree.DecisionTreeClassifier),
             (fasttree.ExtraTreeRegressor, sk_tree.ExtraTreeRegressor)]
    for ours_cls, theirs_cls in pairs:
        ours, theirs = ours_cls(random_state=0).fit(X, y), theirs_cls(random_state=0).fit(X, y)
        np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
        for Z in (X, numpy_X, reordered, renamed):
            for method in ("predict", "apply"):
                mine = _outcome(getattr(ours, method), Z)
                assert mine == _outcome(getattr(theirs, method), Z), (method, mine)
        plain = [cls(random_state=0).fit(numpy_X, y) for cls in (ours_cls, theirs_cls)]
        assert _outcome(plain[0].predict, X) == _outcome(plain[1].predict, X)
        assert not hasattr(plain[0], "feature_names_in_")
        mine = _outcome(ours_cls().fit, mixed, y)
        assert mine[0][0] is TypeError
        assert mine == _outcome(theirs_cls().fit, mixed, y)


@pytest.mark.parametrize("est", [
    fasttree.DecisionTreeClassifier(), fasttree.ExtraTreeRegressor(), fasttree.C45Classifier(),
    EqualFrequencyDiscretizer(), EntropyDiscretizer()], ids=lambda e: type(e).__name__)
def test_scikit_learns_column_names_check(est):
    # not in check_estimator's default list for these estimators; it checks every fitted
    # method for scikit-learn's warnings and errors about feature names
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    check_dataframe_column_names_consistency(type(est).__name__, est)


def test_refit_without_names_forgets_them():
    X = pd.DataFrame({"a": np.arange(10.0)})
    est = fasttree.DecisionTreeClassifier().fit(X, np.arange(10) % 2)
    est.fit(pl.DataFrame({"a": np.arange(10.0)}).to_numpy(), np.arange(10) % 2)
    assert not hasattr(est, "feature_names_in_")


# -- transformers' output ------------------------------------------------------------------------

def test_pandas_output_keeps_index_and_names_as_kbins_does():
    from sklearn.preprocessing import KBinsDiscretizer

    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)},
                     index=pd.Index(rng.permutation(1000)[:50], name="row"))
    y = (X["a"] > 0).astype(int)
    theirs = KBinsDiscretizer(n_bins=3, encode="ordinal", quantile_method="averaged_inverted_cdf")
    theirs_out = theirs.set_output(transform="pandas").fit(X).transform(X)
    for est in (EqualFrequencyDiscretizer(), EntropyDiscretizer()):
        out = est.set_output(transform="pandas").fit(X, y).transform(X)
        assert out.index.equals(theirs_out.index) and out.index.name == "row"
        assert list(out.columns) == list(theirs_out.columns) == ["a", "b"]
        assert isinstance(out["a"].dtype, pd.CategoricalDtype)
        # a polars table has no index: a fresh RangeIndex, as for NumPy input
        assert est.transform(pl.from_pandas(X, include_index=False)).index.equals(
            pd.RangeIndex(50))
        codes = est.set_output(transform="default").transform(X)
        np.testing.assert_array_equal(out["a"].cat.codes, codes[:, 0])


def test_polars_output_and_global_config():
    import sklearn

    rng = np.random.default_rng(8)
    values = rng.normal(size=(60, 2))
    values[::7, 1] = np.nan
    y = (values[:, 0] > 0).astype(int)
    X = pl.DataFrame({"a": values[:, 0], "b": values[:, 1]})
    est = EntropyDiscretizer(force=True).fit(X, y)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        codes = est.transform(values)
    np.testing.assert_array_equal(est.transform(X), codes)  # polars in, default out
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b"])
    for out in (est.set_output(transform="polars").transform(X),
                _global(sklearn, "polars", EntropyDiscretizer(force=True).fit(X, y), X)):
        assert isinstance(out, pl.DataFrame) and out.columns == ["a", "b"]
        for j, name in enumerate(out.columns):
            assert out[name].dtype == pl.Enum(est.labels_[j])
            physical = out[name].to_physical().to_numpy().astype(float)
            np.testing.assert_array_equal(physical, codes[:, j])  # null ↔ NaN
    pandas_out = _global(sklearn, "pandas", EntropyDiscretizer(force=True).fit(X, y), X)
    assert isinstance(pandas_out, pd.DataFrame)
    np.testing.assert_array_equal(pandas_out["b"].cat.codes.replace(-1, np.nan), codes[:, 1])


def _global(sklearn, kind, est, X):
    with sklearn.config_context(transform_output=kind):
        return est.transform(X)


def test_passed_through_columns_in_polars_output():
    X = pd.DataFrame({"a": np.arange(20.0), "code": np.arange(20.0) % 3})
    est = EqualFrequencyDiscretizer(n_bins=2, categorical_features=["code"])
    out = est.set_output(transform="polars").fit(X).transform(X)
    assert out["code"].dtype == pl.Float64
    np.testing.assert_array_equal(out["code"].to_numpy(), X["code"].to_numpy())


def test_unknown_output_is_refused():
    with pytest.raises(ValueError, match="'default', 'pandas', 'polars'"):
        EqualFrequencyDiscretizer().set_output(transform="arrow")


# -- unsupported columns -------------------------------------------------------------------------

DATES = [datetime.date(2020, 1, d) for d in range(1, 11)]


@pytest.mark.parametrize("table", [
    lambda: pd.DataFrame({"x": np.arange(10.0), "when": pd.to_datetime(DATES)}),
    lambda: pd.DataFrame({"x": np.arange(10.0), "when": pd.to_timedelta(np.arange(10), "s")}),
    lambda: pl.DataFrame({"x": np.arange(10.0), "when": DATES}),
    lambda: pl.DataFrame({"x": np.arange(10.0), "when": [[1, 2]] * 10}),
    lambda: pl.DataFrame({"x": np.arange(10.0), "when": [{"a": 1}] * 10}),
    lambda: pa.table({"x": np.arange(10.0), "when": DATES}),
    lambda: pa.table({"x": np.arange(10.0), "when": [[1, 2]] * 10}),
])
def test_unsupported_columns_are_named(table):
    X = table()
    y = np.arange(10) % 2
    for est in (fasttree.DecisionTreeClassifier(), fasttree.C45Classifier(),
                EqualFrequencyDiscretizer()):
        with pytest.raises(TypeError, match="column 'when'"):
            est.fit(X, y)
    fitted = fasttree.DecisionTreeClassifier().fit(pd.DataFrame(np.zeros((10, 2)),
                                                                columns=["x", "when"]), y)
    with pytest.raises(TypeError, match="column 'when'"):
        fitted.predict(X)


def test_lazy_frame_is_refused():
    with pytest.raises(TypeError, match="LazyFrame; call .collect"):
        fasttree.DecisionTreeClassifier().fit(pl.DataFrame({"a": [1.0, 2.0]}).lazy(), [0, 1])


# -- conversion details --------------------------------------------------------------------------

def test_frames_become_float32_in_blocks_of_columns(monkeypatch):
    from fasttree import _validation

    rng = np.random.default_rng(9)
    values = rng.normal(size=(50, 7))
    values[::4, 2] = np.nan
    frame = pd.DataFrame(values).astype({3: "float32", 4: "Float64"})
    frame[5] = pd.array(np.arange(50) % 3, dtype="Int64")
    frame.loc[::5, 5] = pd.NA
    monkeypatch.setattr(_validation, "_BLOCK_BYTES", 8 * 50 * 3)  # three columns a block
    expected = frame.to_numpy(dtype=np.float64, na_value=np.nan).astype(np.float32)
    for order in ("C", "F"):
        out = _validation.check_X(frame, order=order)
        np.testing.assert_array_equal(out, expected)
        assert out.flags[f"{order}_CONTIGUOUS"]
    frame[6] = 1e39  # too large for float32, in the last block
    with pytest.raises(ValueError, match="too large for float32"):
        _validation.check_X(frame, order="C")


def test_polars_and_arrow_need_pandas(monkeypatch):
    import sys

    tables = ((pl.DataFrame({"a": [1.0, 2.0]}), "polars DataFrames"),
              (pa.table({"a": [1.0, 2.0]}), "pyarrow Tables"))
    monkeypatch.setitem(sys.modules, "pandas", None)  # "import pandas" raises ImportError
    for table, what in tables:
        with pytest.raises(ImportError, match=f"reads {what} through pandas; install pandas"):
            fasttree.DecisionTreeClassifier().fit(table, [0, 1])
