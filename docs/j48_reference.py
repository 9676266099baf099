"""Reference figures from Weka's J48 (the reference C4.5 implementation) for comparing
fasttree's C45Classifier against.

For each dataset in DATASETS this script reads ``<data>/<name>.csv`` (header row, target in the
last column, an empty cell is a missing value) and ``<data>/columns.json`` (whether each column
is ``numeric`` or ``categorical``), writes it as an ARFF file in a temporary directory (numeric
columns as NUMERIC, categorical columns and the target as nominal with the sorted set of values
seen, missing cells as ``?``), runs

    java -cp /usr/share/java/weka.jar weka.classifiers.trees.J48 \
        -C 0.25 -M 2 -t NAME.arff -x 10 -s 1

(J48's default pruning options, 10-fold stratified cross-validation with seed 1) and parses
from Weka's output the cross-validated accuracy ("Correctly Classified Instances" in the
"Stratified cross-validation" section) and the number of leaves and size of the tree trained
on the full data.  The results go to a JSON file: per dataset the number of rows, accuracy
(a fraction), n_leaves, tree_size, the exact command line (run from inside the temporary
directory) and the weka package version.

Needs Java and Weka:

    apt-get install weka          # Debian; puts the jar at /usr/share/java/weka.jar

Run from the repository root:

    python docs/j48_reference.py --data ../shared/data --out docs/j48_reference.json

Standard library only (no numpy or pandas needed).
"""

import argparse
import csv
import json
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

DATASETS = ["heart_disease", "breast_cancer_wisconsin", "ionosphere", "titanic", "zoo"]
WEKA_JAR = "/usr/share/java/weka.jar"
J48_OPTIONS = ["-C", "0.25", "-M", "2"]
CV_OPTIONS = ["-x", "10", "-s", "1"]


def arff_quote(text):
    """Single-quote a name or nominal value for ARFF, backslash-escaping what Weka's
    ArffLoader/StreamTokenizer would otherwise misread (backslash, quotes, control chars)."""
    escapes = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "'" + "".join(escapes.get(ch, ch) for ch in text) + "'"


def _value_key(value):
    """Sort nominal values numerically when they all look like numbers, else as text."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def read_dataset(data_dir, name):
    """Return (header, kinds, rows) with rows whose target is missing dropped."""
    with open(Path(data_dir) / f"{name}.csv", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [row for row in reader if row]
    info = json.loads((Path(data_dir) / "columns.json").read_text())[name]
    kinds = info["kinds"]
    if len(kinds) != len(header):
        raise ValueError(f"{name}: columns.json lists {len(kinds)} kinds for {len(header)} columns")
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"{name}: row with {len(row)} cells, expected {len(header)}: {row}")
    kept = [row for row in rows if row[-1] != ""]
    if len(kept) != len(rows):
        print(f"{name}: dropped {len(rows) - len(kept)} rows with a missing target")
    return header, kinds, kept


def write_arff(path, relation, header, kinds, rows):
    """Write rows as ARFF; the last column (the target) is always nominal."""
    lines = [f"@relation {arff_quote(relation)}", ""]
    for j, (name, kind) in enumerate(zip(header, kinds)):
        if kind == "numeric" and j < len(header) - 1:
            for row in rows:
                if row[j] != "":
                    float(row[j])  # fail loudly on a non-numeric cell
            lines.append(f"@attribute {arff_quote(name)} numeric")
        elif kind in ("categorical", "numeric"):
            values = sorted({row[j] for row in rows if row[j] != ""}, key=_value_key)
            lines.append(f"@attribute {arff_quote(name)} "
                         "{" + ",".join(arff_quote(v) for v in values) + "}")
        else:
            raise ValueError(f"{relation}: unknown column kind {kind!r} for {name!r}")
    lines += ["", "@data"]
    for row in rows:
        cells = []
        for j, (cell, kind) in enumerate(zip(row, kinds)):
            if cell == "":
                cells.append("?")
            elif kind == "numeric" and j < len(header) - 1:
                cells.append(cell)
            else:
                cells.append(arff_quote(cell))
        lines.append(",".join(cells))
    Path(path).write_text("\n".join(lines) + "\n")


def weka_version():
    out = subprocess.run(["dpkg-query", "-W", "weka"], capture_output=True, text=True, check=True)
    return out.stdout.split()[1]


def parse_j48_output(text):
    """Pull the full-data tree size and the cross-validated accuracy out of J48's output."""
    leaves = re.search(r"Number of Leaves\s*:\s*(\d+)", text)
    size = re.search(r"Size of the tree\s*:\s*(\d+)", text)
    if not (leaves and size):
        raise ValueError("no 'Number of Leaves' / 'Size of the tree' in Weka output")
    cv_start = text.find("=== Stratified cross-validation ===")
    if cv_start < 0:
        raise ValueError("no 'Stratified cross-validation' section in Weka output")
    cv = text[cv_start:]
    correct = re.search(r"Correctly Classified Instances\s+([\d.]+)\s+([\d.]+)\s*%", cv)
    total = re.search(r"Total Number of Instances\s+([\d.]+)", cv)
    if not (correct and total):
        raise ValueError("cannot parse accuracy in the cross-validation section")
    return {
        "accuracy": round(float(correct.group(1)) / float(total.group(1)), 6),
        "accuracy_percent_printed": float(correct.group(2)),
        "cv_correct": float(correct.group(1)),
        "cv_instances": float(total.group(1)),
        "n_leaves": int(leaves.group(1)),
        "tree_size": int(size.group(1)),
    }


def run_j48(workdir, arff_name, java="java", jar=WEKA_JAR):
    command = [java, "-cp", jar, "weka.classifiers.trees.J48", *J48_OPTIONS,
               "-t", arff_name, *CV_OPTIONS]
    out = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if out.returncode != 0 or "Number of Leaves" not in out.stdout:
        raise RuntimeError(f"J48 failed on {arff_name}:\n{out.stdout}\n{out.stderr}")
    return command, out.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="directory with the CSVs")
    parser.add_argument("--out", default="docs/j48_reference.json", help="JSON file to write")
    parser.add_argument("--jar", default=WEKA_JAR, help="path to weka.jar")
    parser.add_argument("--keep-output", metavar="DIR",
                        help="also save each ARFF file and Weka's full output here")
    args = parser.parse_args()

    version = weka_version()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in DATASETS:
            header, kinds, rows = read_dataset(args.data, name)
            arff = f"{name}.arff"
            write_arff(Path(tmp) / arff, name, header, kinds, rows)
            command, output = run_j48(tmp, arff, jar=args.jar)
            if args.keep_output:
                keep = Path(args.keep_output)
                keep.mkdir(parents=True, exist_ok=True)
                (keep / arff).write_text((Path(tmp) / arff).read_text())
                (keep / f"{name}.j48.txt").write_text(output)
            figures = parse_j48_output(output)
            results[name] = {
                "rows": len(rows),
                "n_numeric": sum(k == "numeric" for k in kinds[:-1]),
                "n_categorical": sum(k == "categorical" for k in kinds[:-1]),
                **figures,
                "command": shlex.join(command),
                "weka_version": version,
            }
            print(f"{name:25s} rows={len(rows):5d} accuracy={figures['accuracy']:.4f} "
                  f"leaves={figures['n_leaves']:3d} size={figures['tree_size']:3d}")

    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
