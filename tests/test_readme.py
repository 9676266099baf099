"""The examples of README.md and the documentation run as written: every Python block in order
(one namespace per document), the output shown after a block equals what it prints, and every
``fasttree ...`` / ``python -m fasttree ...`` command line exits with 0 (run through
``fasttree.cli.main`` in one scratch folder per document, in order, so that ``predict`` finds
the model ``fit --save`` wrote)."""

import ast
import contextlib
import io
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
# each document with the least (Python blocks, shown outputs, command lines) it holds, so that a
# parser gone blind to a document's blocks fails rather than passes
DOCUMENTS = {"README.md": (3, 2, 2), "docs/quickstart.rst": (3, 2, 2), "docs/api.rst": (1, 0, 0),
             "docs/model_files.rst": (1, 0, 0), "docs/kernels.rst": (2, 0, 0),
             "docs/dask.rst": (1, 0, 0), "docs/interop.rst": (1, 0, 0),
             "docs/pruning.md": (1, 0, 0)}


def blocks(path):
    """The document's code blocks in order, as (kind, text): kind ``python``, ``bash`` or
    ``output``."""
    text = (ROOT / path).read_text()
    if path.endswith(".md"):
        found = []
        for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            found.append(({"python": "python", "bash": "bash"}.get(lang, "output"), body))
        return found
    found = []
    # an rst block: a line ending in "::" (or a code-block directive), a blank line, then the
    # indented lines
    for head, body in re.findall(r"(::|code-block:: \w+)\n\n((?:(?: {3,}.*)?\n)+)", text):
        lines = body.rstrip().splitlines()
        indent = min(len(x) - len(x.lstrip()) for x in lines if x.strip())
        body = "\n".join(x[indent:] for x in lines) + "\n"
        found.append((_kind(head, body), body))
    return found


def _kind(head, body):
    if head.startswith("code-block"):
        return head.split()[-1]
    try:
        ast.parse(body)
        return "python"
    except SyntaxError:
        pass
    commands = [x for x in body.splitlines() if x.strip()]
    if all(x.split()[0] in ("pip", "fasttree", "python") for x in commands):
        return "bash"
    return "output"


def commands(body):
    """The ``fasttree`` command lines of a bash block, as argument lists of ``fasttree.cli.main``
    (pip installs and other programs are not run), with what a pipe feeds."""
    for line in body.splitlines():
        first, *piped = line.split(" | ")
        words = shlex.split(first, comments=True)
        if words[:1] == ["fasttree"]:
            yield words[1:], piped
        elif words[:3] == ["python", "-m", "fasttree"]:
            yield words[3:], piped


@pytest.mark.parametrize("document", DOCUMENTS)
def test_examples_run_as_written(document, tmp_path, monkeypatch):
    from fasttree.cli import main

    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    printed = None
    n_python = n_outputs = n_commands = 0
    try:
        for kind, body in blocks(document):
            if kind == "python":
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(body, f"{document} block", "exec"), namespace)
                printed = out.getvalue()
                n_python += 1
            elif kind == "output" and printed is not None and body.startswith("|---"):
                # print(export_text(...)) adds a blank line the document leaves out
                assert printed.rstrip("\n") == body.rstrip("\n"), (document, body)
                n_outputs += 1
                printed = None
            elif kind == "bash":
                for args, piped in commands(body):
                    out = io.StringIO()
                    with contextlib.redirect_stdout(out):
                        assert main(args) == 0, (document, args)
                    n_commands += 1
                    programs = [shlex.split(p)[0] for p in piped]
                    if piped and all(shutil.which(p) for p in programs):
                        subprocess.run(" | ".join(piped), shell=True, check=True,
                                       input=out.getvalue(), text=True)
                printed = None
    finally:
        client = namespace.get("client")
        if client is not None:  # the Dask example's cluster
            cluster = client.cluster
            client.close()
            cluster.close()
    counts = (n_python, n_outputs, n_commands)
    assert all(n >= least for n, least in zip(counts, DOCUMENTS[document])), counts


def test_readme_starts_with_the_two_set_up_commands():
    text = (ROOT / "README.md").read_text()
    assert text.startswith("# fasttree\n\n```bash\npip install . && python -m fasttree\n"
                           "pip install \".[test]\" && pytest\n```\n")


@pytest.mark.parametrize("name", ["heart_disease", "housing", "ionosphere", "titanic", "weather",
                                  "weather_numeric"])
def test_bundled_tables(name):
    import pandas as pd

    from fasttree.datasets import load_dataset

    shape = {"heart_disease": (303, 13), "housing": (506, 13), "ionosphere": (351, 32),
             "titanic": (2201, 3), "weather": (14, 4), "weather_numeric": (14, 4)}[name]
    data = load_dataset(name)
    assert data.X.shape == shape and data.y.shape == (shape[0],)
    frame = load_dataset(name, as_frame=True)
    assert isinstance(frame.X, pd.DataFrame) and frame.X.shape == shape
    assert frame.feature_names == data.feature_names and frame.target_name == data.target_name
    np.testing.assert_array_equal(frame.categorical, data.categorical)
    X, y = load_dataset(name, return_X_y=True)
    assert X.shape == shape and (y == data.y).all()


def test_loaders_by_name_and_their_errors(monkeypatch):
    import sys

    from fasttree import datasets

    assert datasets.load_weather(numeric=True).X[0, 1] == 85.0
    assert datasets.load_weather().X[0, 1] == "hot"
    assert datasets.load_heart_disease().target_name == "diameter narrowing"
    assert datasets.load_titanic().target_name == "survived"
    assert datasets.load_housing().target_name == "MEDV"
    with pytest.raises(ValueError, match="no bundled table named 'iris'; the bundled tables "
                                         "are: heart_disease, housing"):
        datasets.load_dataset("iris")
    monkeypatch.setitem(sys.modules, "pandas", None)  # pandas not installed
    with pytest.raises(ImportError, match=r"as_frame=True needs pandas"):
        datasets.load_titanic(as_frame=True)
    assert datasets.load_titanic().X.shape == (2201, 3)


def test_import_fasttree_does_not_import_pandas():
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys, fasttree, fasttree.datasets; "
                          "fasttree.datasets.load_weather(); print('pandas' in sys.modules)"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_several_outputs_with_a_categorical_feature_are_refused_as_documented():
    """README and the quick start say that several outputs need numeric features; fit says so
    in a ValueError."""
    from fasttree import DecisionTreeClassifier, DecisionTreeRegressor

    X = np.array([["a", 1.0], ["b", 2.0], ["a", 3.0], ["b", 4.0]], dtype=object)
    Y = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    for Estimator in (DecisionTreeClassifier, DecisionTreeRegressor):
        with pytest.raises(ValueError, match="categorical features cannot be combined with "
                                             r"several outputs \(y of shape"):
            Estimator(categorical_features=[0]).fit(X, Y)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "several outputs with categorical features" in readme
    quickstart = " ".join((ROOT / "docs/quickstart.rst").read_text().split())
    assert "categorical features cannot be combined with several outputs" in quickstart
