"""Compare fasttree's five post-pruners on real data with 10-fold cross-validation.

    pip install ".[docs]"
    python docs/pruning_comparison.py --data ../shared/data --chart docs/_static/pruning.png

Prints a markdown table (accuracy or R^2, and number of leaves, per pruner and dataset) and
writes a chart.  Cost-complexity pruning picks its alpha on each training fold by an inner
5-fold grid search over that fold's pruning path, as CART does.
"""

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from fasttree import DecisionTreeClassifier, DecisionTreeRegressor

CLASSIFICATION = ["heart_disease", "breast_cancer_wisconsin", "ionosphere"]
REGRESSION = ["housing"]
CLASSIFIER_RULES = [None, "cost_complexity", "reduced_error", "error_based", "minimum_error",
                    "pessimistic"]
REGRESSOR_RULES = [None, "cost_complexity", "reduced_error"]


def load(data_dir, name):
    """Numeric columns only (categorical support has not landed), rows with a missing cell
    dropped; the target is the last column."""
    frame = pd.read_csv(Path(data_dir) / f"{name}.csv")
    kinds = json.loads((Path(data_dir) / "columns.json").read_text())[name]["kinds"]
    target = frame.columns[-1]
    numeric = [c for c, kind in zip(frame.columns[:-1], kinds[:-1]) if kind == "numeric"]
    frame = frame[numeric + [target]].dropna()
    return frame[numeric].to_numpy(float), frame[target].to_numpy(), len(numeric)


def fit_with_rule(make, rule, X, y, seed):
    if rule != "cost_complexity":
        return make(pruning=rule, random_state=seed).fit(X, y)
    # CART's way: choose alpha on the training rows by an inner cross-validation
    alphas = make(random_state=seed).cost_complexity_pruning_path(X, y).ccp_alphas
    candidates = np.unique(np.quantile(alphas[:-1], np.linspace(0, 1, 20)))
    search = GridSearchCV(make(random_state=seed), {"ccp_alpha": candidates}, cv=5)
    return search.fit(X, y).best_estimator_


def evaluate(data_dir, name, regression, seed=0):
    X, y, n_numeric = load(data_dir, name)
    make = DecisionTreeRegressor if regression else DecisionTreeClassifier
    rules = REGRESSOR_RULES if regression else CLASSIFIER_RULES
    folds = (KFold(10, shuffle=True, random_state=seed) if regression
             else StratifiedKFold(10, shuffle=True, random_state=seed))

    def factory(**params):
        if regression:
            return make(**params)
        return make(criterion="entropy", **params)

    results = {}
    for rule in rules:
        correct, scores, leaves = 0, [], []
        for train, test in folds.split(X, y):
            est = fit_with_rule(factory, rule, X[train], y[train], seed)
            leaves.append(est.get_n_leaves())
            if regression:
                scores.append(est.score(X[test], y[test]))
            else:
                correct += int(np.sum(est.predict(X[test]) == y[test]))
        score = float(np.mean(scores)) if regression else correct / X.shape[0]
        results[rule or "none"] = (score, float(np.mean(leaves)), float(np.std(leaves)))
    return X.shape, n_numeric, results


def chart(all_results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(all_results), figsize=(4 * len(all_results), 6.5),
                             squeeze=False)
    for col, (name, (_, _, results)) in enumerate(all_results.items()):
        rules = list(results)
        scores = [results[r][0] for r in rules]
        leaves = [results[r][1] for r in rules]
        axes[0, col].bar(rules, scores, color="#1f77b4")
        axes[0, col].set_ylim(min(scores) - 0.05, max(scores) + 0.02)
        axes[0, col].set_title(name)
        axes[0, col].set_ylabel("R^2" if name in REGRESSION else "accuracy")
        axes[1, col].bar(rules, leaves, color="#ff7f0e")
        axes[1, col].set_ylabel("leaves (mean over folds)")
        for ax in axes[:, col]:
            ax.tick_params(axis="x", rotation=60, labelsize=8)
    fig.suptitle("fasttree's pruners, 10-fold cross-validation")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared"
                                              / "data"))
    parser.add_argument("--chart", default="pruning.png")
    args = parser.parse_args()
    all_results = {}
    for name in CLASSIFICATION + REGRESSION:
        all_results[name] = evaluate(args.data, name, name in REGRESSION)
    for name, (shape, n_numeric, results) in all_results.items():
        metric = "R^2" if name in REGRESSION else "accuracy"
        print(f"\n**{name}** ({shape[0]} rows, {n_numeric} numeric features; {metric})\n")
        print(f"| pruner | {metric} | leaves (mean ± sd over folds) |")
        print("|---|---|---|")
        for rule, (score, mean_leaves, sd_leaves) in results.items():
            print(f"| {rule} | {score:.3f} | {mean_leaves:.1f} ± {sd_leaves:.1f} |")
    chart(all_results, args.chart)


if __name__ == "__main__":
    main()
