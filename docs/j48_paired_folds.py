"""J48 and fasttree's C45Classifier on the same folds: the README's paired comparison.

``docs/j48_reference.py`` gives J48's own 10-fold cross-validation (its folds), which fasttree's
test cannot reproduce; this script hands J48 each fold's rows instead, as ARFF training and test
files, so that both learners see the same rows.  For each dataset and each of ``--seeds``
shuffled stratified 10-fold splits it prints the mean test accuracy of J48 (``-C 0.25 -M 2``),
of C45Classifier (subtree raising, the default), of J48 ``-S`` and of
``C45Classifier(subtree_raising=False)``, then on how many folds the two learners' trees have
the same number of leaves, with raising and without.

Needs Java, Weka (``apt-get install weka``), pandas and scikit-learn.  Run from the repository
root::

    python docs/j48_paired_folds.py --seeds 2 ionosphere breast_cancer_wisconsin
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "docs"), str(ROOT / "tests")]

import j48_reference  # noqa: E402  (beside this script)
from datasets import SHARED_DATA, load_shared  # noqa: E402  (the tests' loader)


def j48(train, test, options, jar):
    """Leaves of J48's tree on ``train`` and its accuracy on ``test`` (ARFF paths)."""
    out = subprocess.run(["java", "-cp", jar, "weka.classifiers.trees.J48", "-C", "0.25",
                          "-M", "2", *options, "-t", str(train), "-T", str(test)],
                         capture_output=True, text=True, check=True).stdout
    leaves = int(re.search(r"Number of Leaves\s*:\s*(\d+)", out).group(1))
    on_test = out[out.find("=== Error on test data ==="):]
    correct = float(re.search(r"Correctly Classified Instances\s+([\d.]+)", on_test).group(1))
    total = float(re.search(r"Total Number of Instances\s+([\d.]+)", on_test).group(1))
    return leaves, correct / total


def main():
    from sklearn.model_selection import StratifiedKFold

    from fasttree import C45Classifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=j48_reference.DATASETS)
    parser.add_argument("--seeds", type=int, default=2, help="shuffled 10-fold splits")
    parser.add_argument("--jar", default=j48_reference.WEKA_JAR)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    print("| data | J48 | fasttree | J48 -S | subtree_raising=False | same leaves | same "
          "leaves (-S) |\n|---|---|---|---|---|---|---|")
    for name in args.names:
        header, kinds, rows = j48_reference.read_dataset(SHARED_DATA, name)
        j48_reference.write_arff(folder / "full.arff", name, header, kinds, rows)
        head, data = (folder / "full.arff").read_text().split("@data\n")
        lines = data.strip("\n").split("\n")
        X, y = load_shared(name)
        y = np.asarray(y)
        assert len(lines) == len(y), "the ARFF rows and the loader's rows must be the same"
        results = {key: [] for key in ("j48", "ft", "j48S", "ftS")}
        for seed in range(args.seeds):
            folds = StratifiedKFold(10, shuffle=True, random_state=seed).split(X, y)
            for train, test in folds:
                for part, rows_of in (("train", train), ("test", test)):
                    (folder / f"{part}.arff").write_text(
                        head + "@data\n" + "\n".join(lines[i] for i in rows_of) + "\n")
                for key, options in (("j48", []), ("j48S", ["-S"])):
                    results[key].append(j48(folder / "train.arff", folder / "test.arff",
                                            options, args.jar))
                for key, raising in (("ft", True), ("ftS", False)):
                    model = C45Classifier(subtree_raising=raising).fit(X.iloc[train], y[train])
                    results[key].append((model.get_n_leaves(),
                                         np.mean(model.predict(X.iloc[test]) == y[test])))
        table = {key: np.array(value) for key, value in results.items()}
        n = len(table["ft"])
        same = {k: int(np.sum(table[a][:, 0] == table[b][:, 0]))
                for k, (a, b) in {"raising": ("j48", "ft"), "replacement": ("j48S", "ftS")}.items()}
        print(f"| {name} | {table['j48'][:, 1].mean():.3f} | {table['ft'][:, 1].mean():.3f} "
              f"| {table['j48S'][:, 1].mean():.3f} | {table['ftS'][:, 1].mean():.3f} "
              f"| {same['raising']}/{n} | {same['replacement']}/{n} |", flush=True)


if __name__ == "__main__":
    main()
