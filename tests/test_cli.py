"""The command line: the bundled main job, user CSV files and one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "fasttree", *args], capture_output=True,
                          text=True, timeout=600)


def test_main_job_on_bundled_data():
    out = run_cli("--cv", "5")
    assert out.returncode == 0, out.stderr
    assert "351 rows x 32 features" in out.stdout
    accuracy = float(out.stdout.split("5-fold cross-validated accuracy: ")[1].split()[0])
    assert 0.8 < accuracy < 1.0
    assert "fit time:" in out.stdout and "|--- " in out.stdout


def write(tmp_path, text):
    path = tmp_path / "data.csv"
    path.write_text(text)
    return str(path)


def test_fit_numeric_csv(tmp_path):
    rows = "\n".join(f"{i},{(i * 7) % 10},{'hi' if i > 20 else 'lo'}" for i in range(40))
    path = write(tmp_path, "a,b,label\n" + rows + "\n")
    out = run_cli("fit", path, "--target", "label", "--max-depth", "3", "--cv", "4")
    assert out.returncode == 0, out.stderr
    assert "40 rows x 2 features, target 'label'" in out.stdout
    assert "4-fold cross-validated accuracy: 0.9" in out.stdout  # one boundary row per fold
    assert "|--- a <= 20.50\n|   |--- class: lo\n" in out.stdout
    reg = run_cli("fit", path, "--target", "label", "--criterion", "squared_error", "--cv", "3")
    assert reg.returncode == 2 and "'label' is not numeric" in reg.stderr
    # the string column is a categorical feature when another column is the target
    reg = run_cli("fit", path, "--target", "b", "--criterion", "squared_error", "--cv", "3")
    assert reg.returncode == 0, reg.stderr
    assert "label in {" in reg.stdout or "a <= " in reg.stdout
    pruned = run_cli("fit", path, "--target", "label", "--pruning", "error_based", "--cv", "4")
    assert pruned.returncode == 0, pruned.stderr
    assert "2 leaves, depth 1" in pruned.stdout


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not beside the checkout")
def test_fit_shared_housing_regression():
    out = run_cli("fit", str(SHARED_DATA / "housing.csv"), "--target", "MEDV",
                  "--criterion", "squared_error", "--max-depth", "4", "--cv", "5")
    assert out.returncode == 0, out.stderr
    assert "506 rows x 13 features" in out.stdout and "R^2" in out.stdout


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not beside the checkout")
@pytest.mark.parametrize("model", ["cart", "id3", "c45"])
def test_fit_csv_with_categories_and_missing_cells(model):
    out = run_cli("fit", str(SHARED_DATA / "heart_disease.csv"), "--model", model, "--cv", "5")
    assert out.returncode == 0, out.stderr
    assert "303 rows x 13 features" in out.stdout
    accuracy = float(out.stdout.split("5-fold cross-validated accuracy: ")[1].split()[0])
    assert accuracy > 0.65
    assert "chest pain" in out.stdout
    weather = run_cli("fit", str(SHARED_DATA / "weather.csv"), "--model", model, "--cv", "2",
                      "--min-samples-leaf", "1")
    assert weather.returncode == 0, weather.stderr
    if model == "id3":
        assert "|--- outlook = overcast\n|   |--- class: yes" in weather.stdout


@pytest.mark.parametrize(
    "content, args, message",
    [
        (None, ["fit", "missing.csv"], "no such file"),
        ("a,b\n1,2\n3,4\n", ["--target", "zzz"], "no column named 'zzz'"),
        ("a,b,y\n1,x,0\n2,,\n3,y,1\n", ["--target", "y"],
         "target column 'y' has 1 empty cells"),
        ("a,y\n1,0\n2,1\n", ["--target", "y", "--model", "id3", "--criterion",
                              "squared_error"], "--model id3 is a classifier"),
    ],
    ids=["missing-file", "unknown-target", "missing-target", "id3-regression"],
)
def test_one_line_errors(tmp_path, content, args, message):
    if content is None:
        out = run_cli(*args)
    else:
        out = run_cli("fit", write(tmp_path, content), *args)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_directory_is_a_one_line_error(tmp_path):
    out = run_cli("fit", str(tmp_path))
    assert out.returncode == 2
    assert "is a directory" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_byte_order_mark_and_semicolons_are_read(tmp_path):
    rows = "\n".join(f"{i};{(i * 7) % 10};{'hi' if i > 20 else 'lo'}" for i in range(40))
    path = tmp_path / "excel.csv"
    path.write_bytes(("a;b;label\n" + rows + "\n").encode("utf-8-sig"))  # as Excel saves it
    out = run_cli("fit", str(path), "--target", "label", "--cv", "4")
    assert out.returncode == 0, out.stderr
    assert "40 rows x 2 features, target 'label'" in out.stdout
    assert "|--- a <= 20.50" in out.stdout


def test_line_numbers_count_blank_lines(tmp_path):
    from fasttree.datasets import DatasetError, read_csv

    path = write(tmp_path, "a,b,y\n1,2,0\n\n\n3,4,1\n5,6\n")
    with pytest.raises(DatasetError, match="line 6 has 2 fields"):
        read_csv(path)
    out = run_cli("fit", path)
    assert out.returncode == 2 and "line 6 has 2 fields" in out.stderr


def test_a_problem_with_the_data_is_reported_for_the_whole_data(tmp_path):
    path = write(tmp_path, "y\n" + "\n".join(str(i % 2) for i in range(30)) + "\n")
    out = run_cli("fit", path, "--cv", "3")
    assert out.returncode == 2
    assert "30" in out.stderr and "20" not in out.stderr  # not a fold's 20 rows


# -- the fit / save / predict / show loop, in process through fasttree.cli.main ----------------
def main(capsys, *args):
    from fasttree.cli import main as cli_main

    code = cli_main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


LOOP_CSV = "size,color,count,label\n" + "\n".join(
    f"{'' if i % 11 == 0 else round((i * 37 % 23) / 7, 2)},"
    f"{['red', 'green', 'blue'][i % 3]},{i % 5},"
    f"{'yes' if (i * 37 % 23) / 7 + (i % 3 == 0) > 1.8 else 'no'}"
    for i in range(60)) + "\n"


@pytest.fixture
def loop_files(tmp_path):
    data = tmp_path / "train.csv"
    data.write_text(LOOP_CSV)
    return data, tmp_path / "model.ft"


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_fit_save_predict_show_loop(capsys, loop_files, tmp_path):
    import numpy as np

    import fasttree
    from fasttree.datasets import read_csv

    data, model = loop_files
    code, out, err = main(capsys, "fit", data, "--target", "label", "--max-depth", "4",
                          "--cv", "3", "--save", model)
    assert code == 0, err
    assert "60 rows x 3 features, target 'label'" in out and "3-fold cross-validated" in out
    assert f"saved the model to {model}" in out
    # the saved model is the tree fit printed, with the CSV's names
    est = fasttree.load(model)
    assert est.feature_names_in_.tolist() == ["size", "color", "count"]
    assert est.target_name_ == "label" and est.is_categorical_.tolist() == [False, True, False]
    assert fasttree.export_text(est) in out

    # predict: columns found by name (reordered, the target dropped, an extra column ignored)
    table = read_csv(str(data), "label")
    new = tmp_path / "new.csv"
    new.write_text("extra,count,color,size\n" + "\n".join(
        f"x,{int(c)},{k},{'' if s != s else s}" for s, k, c in table.X.tolist()) + "\n")
    code, out, err = main(capsys, "predict", model, new)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "label" and len(lines) == 61
    assert lines[1:] == [str(v) for v in est.predict(table.X)]
    code, out, err = main(capsys, "predict", model, data, "--proba", "-o", tmp_path / "p.csv")
    assert code == 0 and out == "", err
    proba = (tmp_path / "p.csv").read_text().splitlines()
    assert proba[0] == "no,yes"
    np.testing.assert_array_equal(
        np.array([[float(v) for v in line.split(",")] for line in proba[1:]]),
        est.predict_proba(table.X))

    code, out, err = main(capsys, "show", model)
    assert code == 0, err
    assert "estimator: DecisionTreeClassifier(" in out and "target: label" in out
    assert "features: 3 (size, color, count); categorical: color" in out
    assert "classes: no, yes" in out
    assert f"depth: {est.get_depth()}, leaves: {est.get_n_leaves()}" in out
    assert out.endswith(fasttree.export_text(est))
    code, out, err = main(capsys, "show", model, "--dot")
    assert code == 0, err
    assert out == fasttree.export_graphviz(est, feature_names=["size", "color", "count"])
    assert out.startswith("digraph Tree {")


def test_regression_model_and_no_cv(capsys, loop_files, tmp_path):
    import fasttree

    data, model = loop_files
    code, out, err = main(capsys, "fit", data, "--target", "count", "--criterion",
                          "squared_error", "--no-cv", "--max-depth", "2", "--save", model)
    assert code == 0, err
    assert "cross-validated" not in out and "fit time:" in out
    est = fasttree.load(model)
    code, out, err = main(capsys, "predict", model, data)  # the target column is there too
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "count" and len(lines) == 61
    assert {float(v) for v in lines[1:]} <= set(est.tree_.value[:, 0, 0].tolist())
    code, out, err = main(capsys, "predict", model, data, "--proba")
    assert code == 2 and "--proba needs a classifier" in err


def test_verbose_prints_each_level(capsys, loop_files):
    data, _ = loop_files
    code, out, err = main(capsys, "fit", data, "--no-cv", "--max-depth", "3", "--verbose")
    assert code == 0
    lines = err.splitlines()
    assert [line.split(":")[1] for line in lines] == [" level 0", " level 1", " level 2"][
        :len(lines)] and lines
    assert lines[0].startswith("fasttree: level 0: 1 open nodes, 60 rows, ")
    assert lines[0].endswith(" s")


def test_python_fitted_model_without_names(capsys, tmp_path):
    import numpy as np

    from fasttree import DecisionTreeRegressor

    X = np.arange(40, dtype=float).reshape(20, 2)
    est = DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0] * 2)
    est.save(tmp_path / "m.ft")
    (tmp_path / "new.csv").write_text("feature_1,feature_0\n3,4\n,38\n")
    code, out, err = main(capsys, "predict", tmp_path / "m.ft", tmp_path / "new.csv")
    assert code == 0, err
    assert out.splitlines() == ["prediction"] + [
        repr(v) for v in est.predict(np.array([[4.0, 3.0], [38.0, np.nan]])).tolist()]


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """The training CSV and the model ``fit --save`` writes from it (fitted once)."""
    import contextlib
    import io

    from fasttree.cli import main as cli_main

    folder = tmp_path_factory.mktemp("saved")
    data, model = folder / "train.csv", folder / "model.ft"
    data.write_text(LOOP_CSV)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["fit", str(data), "--no-cv", "--max-depth", "3", "--save",
                         str(model)]) == 0
    return data, model


@pytest.mark.parametrize("case, message", [
    ("missing model", "no such file: "),
    ("directory model", "is a directory; pass a model file"),
    ("csv as model", "not a fasttree model file"),
    ("truncated model", "model file"),
    ("tampered model", "feature is out of range"),
    ("missing csv", "no such file: "),
    ("missing column", "no column named 'color'"),
    ("not a number", "column 'size' holds 'big', which is not a number"),
    ("ragged csv", "line 3 has 2 fields"),
    ("empty csv", "the file is empty"),
    ("header only", "no data rows"),
])
def test_predict_and_show_one_line_errors(capsys, saved_model, tmp_path, case, message):
    import io
    import zipfile

    import numpy as np

    data, model = saved_model
    csv_path = tmp_path / "new.csv"
    model_path = model
    if case == "missing model":
        model_path = tmp_path / "absent.ft"
    elif case == "directory model":
        model_path = tmp_path
    elif case == "csv as model":
        model_path = data
    elif case == "truncated model":
        model_path = tmp_path / "cut.ft"
        model_path.write_bytes(model.read_bytes()[:700])
    elif case == "tampered model":
        with zipfile.ZipFile(model) as archive:
            members = {n: archive.read(n) for n in archive.namelist()}
        feature = np.load(io.BytesIO(members["feature.npy"]))
        feature[0] = 99
        buffer = io.BytesIO()
        np.save(buffer, feature)
        members["feature.npy"] = buffer.getvalue()
        model_path = tmp_path / "tampered.ft"
        with zipfile.ZipFile(model_path, "w") as archive:
            for name, member in members.items():
                archive.writestr(name, member)
    csv_text = {"missing column": "size,count\n1,2\n", "not a number": "size,color,count\n"
                "big,red,1\n", "ragged csv": "size,color,count\n1,red,2\n3,blue\n",
                "empty csv": "", "header only": "size,color,count\n"}.get(
        case, "size,color,count\n1.5,red,2\n")
    if case != "missing csv":
        csv_path.write_text(csv_text)
    commands = [["predict", model_path, csv_path]]
    if case.endswith("model"):  # show reads the model only
        commands.append(["show", model_path])
    for command in commands:
        code, out, err = main(capsys, *command)
        assert code == 2 and out == "", (case, command, out, err)
        assert err.startswith("fasttree: error: ") and message in err, err
        assert len(err.strip().splitlines()) == 1, err


def test_installed_entry_point(tmp_path):
    """The ``fasttree`` console script (pyproject's [project.scripts]) runs the loop.

    The script imports the checkout's fasttree, like every other test (the installed copy holds
    the same files, and a second copy would compile the kernels a second time)."""
    import shutil

    script = shutil.which("fasttree", path=str(Path(sys.executable).parent))
    assert script is not None, "install the package (pip install -e .) to get the script"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    data = tmp_path / "train.csv"
    data.write_text(LOOP_CSV)
    model = tmp_path / "m.ft"
    fit = subprocess.run([script, "fit", str(data), "--no-cv", "--save", str(model)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert fit.returncode == 0, fit.stderr
    predict = subprocess.run([script, "predict", str(model), str(data)], capture_output=True,
                             text=True, timeout=600, env=env)
    assert predict.returncode == 0, predict.stderr
    assert predict.stdout.splitlines()[0] == "label"
    bad = subprocess.run([script, "show", str(data)], capture_output=True, text=True,
                         timeout=600, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("fasttree: error: ")


def test_output_closed_early_by_its_reader():
    """``fasttree predict ... | head -1``: exit code 1 and no traceback, neither from the write
    nor from Python's flush of stdout at exit.  (This sandbox's pipes accept writes after their
    reader has gone, so the closed pipe is simulated: the command raises BrokenPipeError with
    output still buffered.)"""
    proc = subprocess.run([sys.executable, "-c", """if 1:
        import sys
        import fasttree.cli as cli
        def run(args):
            sys.stdout.write("pending output")  # still buffered when the pipe breaks
            raise BrokenPipeError(32, "Broken pipe")
        cli.run = run
        sys.exit(cli.main(["show", "model.ft"]))
    """], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""


# -- bundled tables, the estimators' defaults and options, the timed fit -----------------------
def test_bundled_table_by_name(capsys, tmp_path):
    code, out, err = main(capsys, "fit", "weather", "--model", "id3", "--min-samples-leaf", "1",
                          "--cv", "2", "--save", tmp_path / "w.ft")
    assert code == 0, err
    assert "data: weather (bundled with fasttree): 14 rows x 4 features, target 'play'" in out
    assert "|--- outlook = overcast\n|   |--- class: yes" in out
    code, out, err = main(capsys, "predict", tmp_path / "w.ft", "weather")
    assert code == 0, err and out.splitlines()[0] == "play" and len(out.splitlines()) == 15
    code, out, err = main(capsys, "fit", "iris")
    assert code == 2 and err.strip() == (
        "fasttree: error: no such file: iris (nor a bundled table: heart_disease, housing, "
        "ionosphere, titanic, weather, weather_numeric)")


def test_defaults_are_the_estimators(capsys, tmp_path):
    import inspect

    import fasttree

    for args, Estimator in ([[], fasttree.DecisionTreeClassifier],
                            [["--model", "c45"], fasttree.C45Classifier],
                            [["--criterion", "squared_error"], fasttree.DecisionTreeRegressor]):
        code, out, err = main(capsys, "fit", "heart_disease", "--no-cv", *args, "--save",
                              tmp_path / "m.ft")
        assert code == 0, err
        params = fasttree.load(tmp_path / "m.ft").get_params()
        for name, p in inspect.signature(Estimator).parameters.items():
            if name not in ("categorical_features", "criterion"):
                assert params[name] == p.default, (Estimator, name)
        if not args:
            assert params["criterion"] == "gini"


def test_estimator_options(capsys, tmp_path):
    import fasttree

    code, out, err = main(capsys, "fit", "titanic", "--no-cv", "--splitter", "random",
                          "--random-state", "3", "--max-leaf-nodes", "4", "--min-samples-split",
                          "0.2", "--min-samples-leaf", "5", "--save", tmp_path / "m.ft")
    assert code == 0, err
    est = fasttree.load(tmp_path / "m.ft")
    assert (est.splitter, est.random_state, est.max_leaf_nodes, est.min_samples_split,
            est.min_samples_leaf) == ("random", 3, 4, 0.2, 5)
    assert est.get_n_leaves() <= 4
    for args, message in [
        (["--splitter", "nope"], "The 'splitter' parameter of DecisionTreeClassifier must be"),
        (["--min-samples-leaf", "0"], "min_samples_leaf"),
        (["--model", "c45", "--splitter", "random"],
         "--model c45 does not take --splitter (C45Classifier has no splitter)"),
        (["--model", "id3", "--criterion", "gini"], "--model id3 does not take --criterion"),
    ]:
        code, out, err = main(capsys, "fit", "titanic", "--no-cv", *args)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_timed_fit_compiles_nothing_and_skips_the_compilers_objects(capsys, monkeypatch):
    """The printed fit time is a warm fit: no kernel compiles or loads from the cache inside it,
    and the garbage collector neither collects compilation's garbage nor walks the objects alive
    before it (frozen), which made a cold first run's time several times the warm one's."""
    import gc

    import numba.core.event as event

    import fasttree

    calls = []
    fit = fasttree.DecisionTreeClassifier.fit

    class Compiles(event.Listener):
        def on_start(self, e):
            calls[-1]["compiles"] += 1

        def on_end(self, e):
            pass

    def recording_fit(self, X, y, **kwargs):
        calls.append({"frozen": gc.get_freeze_count(), "compiles": 0})
        with event.install_listener("numba:compile", Compiles()):
            return fit(self, X, y, **kwargs)

    monkeypatch.setattr(fasttree.DecisionTreeClassifier, "fit", recording_fit)
    code, out, err = main(capsys, "fit", "heart_disease", "--cv", "2")
    assert code == 0, err
    assert len(calls) == 4  # warm-up, two folds, the timed fit
    assert calls[-1]["compiles"] == 0 and calls[-1]["frozen"] > 0
    assert gc.get_freeze_count() == 0  # unfrozen afterwards
