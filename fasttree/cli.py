"""Command line: ``python -m fasttree`` (bundled data), ``fasttree fit FILE.csv --target COL``."""

import argparse
import sys
import time

from . import (
    C45Classifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    export_text,
)
from .datasets import DatasetError, load_ionosphere, read_csv
from .evaluation import cross_val_score
from .grower import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA


def _parser():
    parser = argparse.ArgumentParser(
        prog="fasttree",
        description="Train an exact decision tree on every core. Without a command, trains on "
                    "the bundled ionosphere data.")
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="train on a CSV file (header row; numeric and categorical "
                                     "columns, empty cells for missing values)")
    fit.add_argument("file", help="CSV file with a header row")
    fit.add_argument("--target", help="target column (default: the last column)")
    for p in (parser, fit):
        p.add_argument("--model", default="cart", choices=["cart", "id3", "c45"],
                       help="cart: binary splits (default); id3: information gain, a branch per "
                            "category; c45: gain ratio, fractional missing values, C4.5 pruning")
        p.add_argument("--criterion", default="entropy",
                       choices=[*CLASSIFICATION_CRITERIA, *REGRESSION_CRITERIA],
                       help="split criterion; squared_error trains a regressor (default: entropy)")
        p.add_argument("--max-depth", type=int, default=None, help="maximum tree depth")
        p.add_argument("--min-samples-leaf", type=int, default=None,
                       help="minimum rows per leaf (default: 1, or 2 for c45)")
        p.add_argument("--pruning", default=None,
                       choices=["cost_complexity", "reduced_error", "error_based",
                                "minimum_error", "pessimistic"],
                       help="post-pruning rule (the last three: classification only)")
        p.add_argument("--ccp-alpha", type=float, default=0.0,
                       help="cost-complexity pruning parameter (default: 0, no pruning)")
        p.add_argument("--cv", type=int, default=10, help="number of cross-validation folds")
        p.add_argument("--n-jobs", type=int, default=None, help="threads (default: all cores)")
    return parser


def run(args):
    """Train, cross-validate and print; returns the process exit code."""
    if args.command == "fit":
        try:
            data = read_csv(args.file, args.target)
        except FileNotFoundError:
            return _fail(f"no such file: {args.file}")
        except IsADirectoryError:
            return _fail(f"{args.file} is a directory; pass a CSV file")
        except OSError as exc:
            return _fail(f"{args.file}: {exc.strerror or exc}")
        except (DatasetError, UnicodeDecodeError) as exc:
            return _fail(f"{args.file}: {exc}")
        source = args.file
    else:
        data = load_ionosphere()
        source = "ionosphere (bundled with fasttree)"

    regression = args.criterion in REGRESSION_CRITERIA
    if regression and data.y.dtype.kind not in "if":
        return _fail(f"target {data.target_name!r} is not numeric; squared_error needs a number")
    if args.model != "cart" and regression:
        return _fail(f"--model {args.model} is a classifier; use --model cart for regression")
    if args.model != "cart" and (args.pruning or args.ccp_alpha):
        return _fail(f"--model {args.model} fixes its own pruning; --pruning and --ccp-alpha "
                     "go with --model cart")
    common = dict(max_depth=args.max_depth, n_jobs=args.n_jobs,
                  categorical_features=data.categorical)
    if args.min_samples_leaf is not None:
        common["min_samples_leaf"] = args.min_samples_leaf

    def make():
        if args.model == "id3":
            return ID3Classifier(**common)
        if args.model == "c45":
            return C45Classifier(**common)
        Estimator = DecisionTreeRegressor if regression else DecisionTreeClassifier
        return Estimator(criterion=args.criterion, pruning=args.pruning,
                         ccp_alpha=args.ccp_alpha, random_state=0, **common)

    try:
        # the whole data first: a problem with it is reported as such, not as one fold's (this
        # fit also compiles or loads the kernels, which the timed fit below leaves out)
        make().fit(data.X, data.y)
        score = cross_val_score(make, data.X, data.y, n_splits=args.cv)
        start = time.perf_counter()
        est = make().fit(data.X, data.y)
        fit_seconds = time.perf_counter() - start
    except (ValueError, TypeError) as exc:
        return _fail(str(exc))

    n, m = data.X.shape
    print(f"data: {source}: {n} rows x {m} features, target {data.target_name!r}")
    print(f"fit time: {fit_seconds * 1000:.1f} ms ({est.get_n_leaves()} leaves, depth "
          f"{est.get_depth()})")
    metric = "R^2" if regression else "accuracy"
    print(f"{args.cv}-fold cross-validated {metric}: {score:.4f}")
    print()
    print(export_text(est, feature_names=data.feature_names), end="")
    return 0


def _fail(message):
    print(f"fasttree: error: {message}", file=sys.stderr)
    return 2


def main(argv=None):
    """Entry point of ``fasttree`` and ``python -m fasttree``."""
    return run(_parser().parse_args(argv))
