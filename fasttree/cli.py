"""Command line: ``python -m fasttree`` (bundled data), and the loop ``fasttree fit FILE.csv
--target COL --save model.ft``, ``fasttree predict model.ft new.csv``, ``fasttree show model.ft``;
``fasttree compile`` fills numba's cache with the kernels of every kind of fit.
"""

import argparse
import csv
import gc
import inspect
import io
import os
import sys
import time
import warnings

import numpy as np

from . import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    export_text,
)
from ._warmup import KIND_NAMES, KINDS, compile_share, default_jobs, fill_cache
from .datasets import BUNDLED, DatasetError, bundled_csv, read_csv, read_rows
from .evaluation import cross_val_score
from .grower import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA, report_progress
from .model_io import load


MODELS = {"cart": (DecisionTreeClassifier, DecisionTreeRegressor), "id3": (ID3Classifier,),
          "c45": (C45Classifier,)}
#: the command line's estimator options: parameter name -> option
OPTIONS = {name: "--" + name.replace("_", "-") for name in (
    "criterion", "splitter", "max_depth", "min_samples_split", "min_samples_leaf",
    "max_leaf_nodes", "random_state", "pruning", "ccp_alpha", "n_jobs")}


def _defaults(name):
    """The estimators' own default of a parameter, for the help text: ``gini``, or ``1 (c45:
    2)`` when the models differ (read from their signatures, not repeated here)."""
    found = {}
    for model, classes in MODELS.items():
        params = inspect.signature(classes[0]).parameters
        if name in params:
            found[model] = params[name].default
    first = found.pop("cart", None)
    others = [f"{m}: {v}" for m, v in found.items() if v != first]
    return f"{first}" + (f" ({', '.join(others)})" if others else "")


def _count_or_fraction(text):
    """An int (a number of rows) or a float (a fraction of them), as the estimators take."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _parser():
    parser = argparse.ArgumentParser(
        prog="fasttree",
        description="Train an exact decision tree on every core. Without a command, trains on "
                    "the bundled ionosphere data.")
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="train on a CSV file (header row; numeric and categorical "
                                     "columns, empty cells for missing values)")
    fit.add_argument("file", help="CSV file with a header row, or the name of a table bundled "
                                  f"with fasttree ({', '.join(BUNDLED)})")
    fit.add_argument("--target", help="target column (default: the last column)")
    for p in (parser, fit):
        p.add_argument("--model", default="cart", choices=["cart", "id3", "c45"],
                       help="cart: binary splits (default); id3: information gain, a branch per "
                            "category; c45: gain ratio, fractional missing values, C4.5 pruning")
        # an option left out is not passed: the estimator's own default applies (one source)
        p.add_argument("--criterion", default=None,
                       choices=[*CLASSIFICATION_CRITERIA, *REGRESSION_CRITERIA],
                       help="split criterion; a regression one (squared_error, ...) trains a "
                            f"regressor (default: {_defaults('criterion')})")
        p.add_argument("--splitter", help=f"best, random or hist (default: "
                                          f"{_defaults('splitter')})")
        p.add_argument("--max-depth", type=int, help="maximum tree depth (default: "
                                                     f"{_defaults('max_depth')})")
        p.add_argument("--min-samples-split", type=_count_or_fraction,
                       help="minimum rows (or fraction of rows) to split a node (default: "
                            f"{_defaults('min_samples_split')})")
        p.add_argument("--min-samples-leaf", type=_count_or_fraction,
                       help="minimum rows (or fraction of rows) per leaf (default: "
                            f"{_defaults('min_samples_leaf')})")
        p.add_argument("--max-leaf-nodes", type=int, help="grow best-first up to this many "
                                                          "leaves (default: no limit)")
        p.add_argument("--random-state", type=int,
                       help="seed of the random splitter, of reduced_error's hold-out and of "
                            "cost_complexity's folds "
                            f"(default: {_defaults('random_state')})")
        p.add_argument("--pruning", default=None,
                       choices=["cost_complexity", "reduced_error", "error_based",
                                "minimum_error", "pessimistic"],
                       help="post-pruning rule (the last three: classification only)")
        p.add_argument("--ccp-alpha", type=float,
                       help="cost-complexity pruning parameter (default: "
                            f"{_defaults('ccp_alpha')}, no pruning; with --pruning "
                            "cost_complexity, chosen by cross-validation as CART does)")
        p.add_argument("--cv", type=int, default=10, help="number of cross-validation folds")
        p.add_argument("--n-jobs", type=int, help="threads (default: all cores)")
    fit.add_argument("--no-cv", action="store_true",
                     help="skip cross-validation (it fits --cv more trees: slow on big files)")
    fit.add_argument("--save", metavar="MODEL", help="write the fitted tree to this model file "
                                                     "(read by predict and show)")
    fit.add_argument("--verbose", action="store_true",
                     help="print each level of the final fit on stderr: depth, nodes split, "
                          "their rows, seconds")
    predict = sub.add_parser("predict", help="predict the rows of a CSV file with a model file")
    predict.add_argument("model", help="model file written by fit --save")
    predict.add_argument("file", help="CSV file with a header row naming the model's features "
                                      "(other columns, such as the target, are ignored), or "
                                      "a bundled table's name")
    predict.add_argument("--proba", action="store_true",
                         help="class probabilities, one column per class (classifiers)")
    predict.add_argument("-o", "--output", help="write the CSV here (default: stdout)")
    show = sub.add_parser("show", help="print a model file's summary and tree")
    show.add_argument("model", help="model file written by fit --save")
    show.add_argument("--dot", action="store_true", help="print the tree as Graphviz DOT instead")
    comp = sub.add_parser("compile", help="compile the kernels of every kind of fit into numba's "
                                          "on-disk cache (for container images and CI)")
    comp.add_argument("--kind", action="append", choices=KIND_NAMES, metavar="KIND",
                      help="compile only this kind (repeat for several; default: every kind, "
                           "see --list)")
    comp.add_argument("--jobs", type=_positive_int, default=default_jobs(),
                      help="processes compiling at once, each given some of the kinds "
                           "(default: the number of CPUs)")
    comp.add_argument("--list", action="store_true", help="list the kinds and exit")
    comp.add_argument("--lock", help=argparse.SUPPRESS)  # set by the parent for its children
    return parser


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args):
    """Run one command; returns the process exit code."""
    if args.command == "predict":
        return _predict(args)
    if args.command == "show":
        return _show(args)
    if args.command == "compile":
        return _compile(args)
    return _fit(args)


def _compile(args):
    """Fill numba's cache with every kind's kernels (or list the kinds)."""
    if args.list:
        width = max(len(kind.name) for kind in KINDS)
        for kind in KINDS:
            print(f"{kind.name:<{width}}  {kind.description}")
        return 0
    names = args.kind or KIND_NAMES
    if args.lock:  # a child of fill_cache: compile its share, saving to the cache under the lock
        compile_share(names, args.lock)
        return 0
    try:
        fill_cache(names, args.jobs, sys.stdout)
    except RuntimeError as exc:  # a compiling process failed (its output is printed above)
        return _fail(str(exc))
    return 0


def _fit(args):
    """Train, cross-validate, print and optionally save."""
    if args.command == "fit":
        try:
            data = read_csv(_table(args.file), args.target)
        except (OSError, DatasetError, UnicodeDecodeError) as exc:
            return _fail(_file_error(args.file, exc, "a CSV file"))
        source = args.file + (" (bundled with fasttree)" if args.file in BUNDLED
                              and not os.path.exists(args.file) else "")
    else:
        data = read_csv(bundled_csv("ionosphere"))
        source = "ionosphere (bundled with fasttree)"
    run_cv = not getattr(args, "no_cv", False)

    regression = args.criterion in REGRESSION_CRITERIA
    if regression and data.y.dtype.kind not in "if":
        return _fail(f"target {data.target_name!r} is not numeric; {args.criterion} needs a "
                     "number")
    if args.model != "cart" and regression:
        return _fail(f"--model {args.model} is a classifier; use --model cart for regression")
    Estimator = MODELS[args.model][1 if regression else 0]
    accepted = inspect.signature(Estimator).parameters
    given = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
    for name in given:
        if name not in accepted:
            return _fail(f"--model {args.model} does not take {OPTIONS[name]} "
                         f"({Estimator.__name__} has no {name})")
    params = dict(given, categorical_features=data.categorical)

    def make():
        return Estimator(**params)

    try:
        # the whole data first: a problem with it is reported as such, not as one fold's (this
        # fit also compiles or loads the kernels, which the timed fit below leaves out)
        make().fit(data.X, data.y)
        if run_cv:
            score = cross_val_score(make, data.X, data.y, n_splits=args.cv)
        with report_progress(_print_level if getattr(args, "verbose", False) else None):
            est, fit_seconds = _timed_fit(make, data.X, data.y)
    except (ValueError, TypeError) as exc:
        return _fail(str(exc))

    n, m = data.X.shape
    print(f"data: {source}: {n} rows x {m} features, target {data.target_name!r}")
    print(f"fit time: {fit_seconds * 1000:.1f} ms ({est.get_n_leaves()} leaves, depth "
          f"{est.get_depth()})")
    if run_cv:
        metric = "R^2" if regression else "accuracy"
        print(f"{args.cv}-fold cross-validated {metric}: {score:.4f}")
    print()
    print(export_text(est, feature_names=data.feature_names), end="")
    if getattr(args, "save", None):
        # the CSV's column names travel with the model: predict matches new files by name
        est.feature_names_in_ = np.array(data.feature_names, dtype=object)
        est.target_name_ = data.target_name
        try:
            est.save(args.save)
        except OSError as exc:
            return _fail(f"cannot write {args.save}: {exc.strerror or exc}")
        print(f"\nsaved the model to {args.save}")
    return 0


def _timed_fit(make, X, y):
    """Fit once more, timed, after the warm-up fit: the garbage that compiling the kernels and
    the earlier fits left is collected first and the objects alive now (numba's compiler state
    among them) frozen, so that no collection over them lands in the timed fit."""
    gc.collect()
    gc.freeze()
    try:
        start = time.perf_counter()
        est = make().fit(X, y)
        return est, time.perf_counter() - start
    finally:
        gc.unfreeze()


def _table(name):
    """A CSV path as given, or, when no such file exists, the bundled table of that name."""
    return bundled_csv(name) if name in BUNDLED and not os.path.exists(name) else name


def _print_level(depth, n_nodes, n_rows, seconds):
    print(f"fasttree: level {depth}: {n_nodes} open nodes, {n_rows} rows, {seconds:.3f} s",
          file=sys.stderr)


def _load_model(path):
    """The estimator in a model file, or the one-line error message."""
    try:
        return load(path), None
    except (OSError, ValueError) as exc:
        return None, _file_error(path, exc, "a model file")


def _feature_names(est):
    names = getattr(est, "feature_names_in_", None)
    if names is None:  # fitted in Python on an unnamed array: export_text's names
        return [f"feature_{j}" for j in range(est.n_features_in_)]
    return [str(name) for name in names]


def _predict(args):
    est, error = _load_model(args.model)
    if error:
        return _fail(error)
    if args.proba and not hasattr(est, "classes_"):
        return _fail(f"--proba needs a classifier; {args.model} holds a "
                     f"{type(est).__name__}")
    if args.proba and est.n_outputs_ > 1:
        return _fail("--proba takes a model of one output")
    try:
        X = _read_features(_table(args.file), est)
    except (OSError, DatasetError, UnicodeDecodeError) as exc:
        return _fail(_file_error(args.file, exc, "a CSV file"))
    try:
        with warnings.catch_warnings():  # X is matched by name above; it is a plain array here
            warnings.simplefilter("ignore", UserWarning)
            result = est.predict_proba(X) if args.proba else est.predict(X)
    except (ValueError, TypeError) as exc:
        return _fail(f"{args.file}: {exc}")
    target = getattr(est, "target_name_", None) or "prediction"
    if args.proba:
        header = [str(c) for c in est.classes_]
    elif est.n_outputs_ > 1:
        header = [f"{target}_{k}" for k in range(est.n_outputs_)]
    else:
        header = [target]
    rows = result.reshape(result.shape[0], -1)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows.tolist())
    if args.output is None:
        sys.stdout.write(out.getvalue())
        return 0
    try:
        with open(args.output, "w", newline="", encoding="utf-8") as handle:
            handle.write(out.getvalue())
    except OSError as exc:
        return _fail(f"cannot write {args.output}: {exc.strerror or exc}")
    return 0


def _cell(value):
    return repr(value) if isinstance(value, float) else str(value)


def _read_features(path, est):
    """The model's feature columns of a CSV file, matched by name, as an object matrix:
    numeric features as floats (NaN for an empty cell), categorical ones as strings (None for
    an empty cell), as :func:`~fasttree.datasets.read_csv` reads a training file.

    The file needs no target column (it is read with :func:`~fasttree.datasets.read_rows`, the
    reader under ``read_csv``); the model, not the new file's cells, decides which columns are
    categorical.
    """
    header, rows = read_rows(path)
    names = _feature_names(est)
    absent = [name for name in names if name not in header]
    if absent:
        raise DatasetError(f"no column named {absent[0]!r} (the model's features are: "
                           f"{', '.join(names)})")
    X = np.empty((len(rows), len(names)), dtype=object)
    for j, name in enumerate(names):
        column = header.index(name)
        values = [row[column] for row in rows]
        categories = est.categories_[j]
        if categories is not None and all(isinstance(c, str) for c in categories.tolist()):
            X[:, j] = [None if v == "" else v for v in values]
            continue
        try:  # numeric features, and categories that are numbers
            X[:, j] = [np.nan if v == "" else float(v) for v in values]
        except ValueError:
            bad = next(v for v in values if not _is_number(v))
            raise DatasetError(f"column {name!r} holds {bad!r}, which is not a number "
                               "(the model's feature is numeric)") from None
    return X


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return text == ""
    return True


def _show(args):
    est, error = _load_model(args.model)
    if error:
        return _fail(error)
    names = _feature_names(est)
    if args.dot:
        from .export import export_graphviz

        print(export_graphviz(est, feature_names=names), end="")
        return 0
    print(f"model: {args.model}")
    print(f"estimator: {est!r}")
    categorical = [name for name, is_cat in zip(names, est.is_categorical_) if is_cat]
    print(f"features: {est.n_features_in_} ({', '.join(names)})"
          + (f"; categorical: {', '.join(categorical)}" if categorical else ""))
    target = getattr(est, "target_name_", None)
    if target is not None:
        print(f"target: {target}")
    if hasattr(est, "classes_"):
        per_output = [est.classes_] if est.n_outputs_ == 1 else est.classes_
        for k, classes in enumerate(per_output):
            label = "classes" if est.n_outputs_ == 1 else f"classes of output {k}"
            print(f"{label}: {', '.join(str(c) for c in classes)}")
    print(f"depth: {est.get_depth()}, leaves: {est.get_n_leaves()}, nodes: "
          f"{est.tree_.node_count}")
    print()
    print(export_text(est, feature_names=names), end="")
    return 0


def _file_error(path, exc, expected):
    """The one-line message for a file that cannot be read (``expected``: what it should be)."""
    if isinstance(exc, FileNotFoundError):
        return f"no such file: {path} (nor a bundled table: {', '.join(BUNDLED)})"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory; pass {expected}"
    if isinstance(exc, OSError):
        return f"{path}: {exc.strerror or exc}"
    return f"{path}: {exc}"


def _fail(message):
    print(f"fasttree: error: {message}", file=sys.stderr)
    return 2


def main(argv=None):
    """Entry point of ``fasttree`` and ``python -m fasttree``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0, or 2 after a one-line ``fasttree: error: ...`` on stderr, or 1 when
        the reader of the output closed it early (``fasttree predict ... | head``).
    """
    try:
        return run(_parser().parse_args(argv))
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit: point stdout at
        # /dev/null first (the recipe of the signal module's documentation)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
