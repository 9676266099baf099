"""The command line: the bundled main job, user CSV files and one-line errors."""

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
