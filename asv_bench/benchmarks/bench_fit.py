"""Fit and predict time and peak memory: fasttree and its anchors, same cases, same run."""

from .common import (
    N_FEATURES,
    N_SAMPLES,
    classification_data,
    make_estimator,
    missing_data,
    mixed_data,
    regression_data,
    sparse_text_data,
    warm_up,
)

LIBRARIES = ["fasttree", "sklearn", "xgboost", "lightgbm"]


class ClassifierFit:
    params = (LIBRARIES, N_SAMPLES, N_FEATURES, [10], ["entropy", "gini"], [1, 2])
    param_names = ["library", "n_samples", "n_features", "max_depth", "criterion", "n_jobs"]
    timeout = 300

    def setup(self, library, n_samples, n_features, max_depth, criterion, n_jobs):
        if library in ("xgboost", "lightgbm") and criterion != "entropy":
            raise NotImplementedError  # asv's way to skip: boosters have one (log-loss) objective
        if library == "sklearn" and n_jobs != 1:
            raise NotImplementedError  # scikit-learn's single tree is single-threaded
        warm_up()
        self.X, self.y = classification_data(n_samples, n_features)
        self.est = make_estimator(library, "classification", max_depth=max_depth,
                                  criterion=criterion, n_jobs=n_jobs)

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)

    def peakmem_fit(self, *args):
        self.est.fit(self.X, self.y)


class RegressorFit:
    params = (LIBRARIES, N_SAMPLES, N_FEATURES, [10])
    param_names = ["library", "n_samples", "n_features", "max_depth"]
    timeout = 300

    def setup(self, library, n_samples, n_features, max_depth):
        warm_up()
        self.X, self.y = regression_data(n_samples, n_features)
        self.est = make_estimator(library, "regression", max_depth=max_depth,
                                  criterion="squared_error", n_jobs=2)

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)

    def peakmem_fit(self, *args):
        self.est.fit(self.X, self.y)


class ClassifierPredict:
    params = (["fasttree", "sklearn"], [1_000_000], [12])
    param_names = ["library", "n_samples", "max_depth"]
    timeout = 300

    def setup(self, library, n_samples, max_depth):
        warm_up()
        X, y = classification_data(100_000, 20)
        self.est = make_estimator(library, "classification", max_depth=max_depth,
                                  criterion="gini", n_jobs=2).fit(X, y)
        self.X_test, _ = classification_data(n_samples, 20, seed=1)

    def time_predict(self, *args):
        self.est.predict(self.X_test)


class MissingValuesFit:
    """10 % of the cells NaN; scikit-learn's tree supports them too (same semantics)."""

    params = (["fasttree", "sklearn"], [300_000])
    param_names = ["library", "n_samples"]
    timeout = 300

    def setup(self, library, n_samples):
        warm_up()
        self.X, self.y = missing_data(n_samples, 20)
        self.est = make_estimator(library, "classification", max_depth=10, criterion="entropy",
                                  n_jobs=2 if library == "fasttree" else 1)

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)


class CategoricalFit:
    """5 categorical columns (3 to 1000 categories) and 15 numeric, entropy, depth 10."""

    params = (["fasttree-binary", "fasttree-multiway", "lightgbm"], [100_000, 1_000_000])
    param_names = ["library", "n_samples"]
    timeout = 600

    def setup(self, library, n_samples):
        warm_up()
        self.X, self.y, categorical = mixed_data(n_samples)
        if library == "lightgbm":
            self.est = make_estimator("lightgbm", "classification", max_depth=10,
                                      criterion="entropy", n_jobs=2)
            self.fit_params = {"categorical_feature": list(categorical)}
        else:
            import fasttree

            self.est = fasttree.DecisionTreeClassifier(
                criterion="entropy", max_depth=10, n_jobs=2, categorical_features=categorical,
                categorical_split=library.split("-")[1])
            self.fit_params = {}

    def time_fit(self, *args):
        self.est.fit(self.X, self.y, **self.fit_params)


class SklearnFeaturesFit:
    """scikit-learn's remaining tree features (compare.py's B12-B14): absolute error, five
    regression targets, an extremely randomized tree."""

    params = (["fasttree", "sklearn"], ["absolute_error", "five_targets", "extra_tree"],
              [300_000])
    param_names = ["library", "case", "n_samples"]
    timeout = 600

    def setup(self, library, case, n_samples):
        warm_up()
        n_targets = 5 if case == "five_targets" else 1
        self.X, self.y = regression_data(n_samples, 20, n_targets=n_targets)
        self.est = make_estimator(
            library, "regression", max_depth=None if case == "extra_tree" else 10,
            criterion="absolute_error" if case == "absolute_error" else "squared_error",
            n_jobs=2, splitter="random" if case == "extra_tree" else "best")

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)


class SparseFit:
    """compare.py's B15: a text-like 100k x 10k CSC matrix at 1 % density."""

    params = (["fasttree", "sklearn"], [100_000])
    param_names = ["library", "n_samples"]
    timeout = 600

    def setup(self, library, n_samples):
        warm_up()
        self.X, self.y = sparse_text_data(n_samples, 10_000)
        self.est = make_estimator(library, "classification", max_depth=10, criterion="gini",
                                  n_jobs=2)

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)


class HistFit:
    """H1-H3: the binned splitter (binning included) against LightGBM's one tree, same depth."""

    params = (["fasttree-hist", "fasttree-exact", "lightgbm"], [1_000_000], [1, 2])
    param_names = ["library", "n_samples", "n_jobs"]
    timeout = 300

    def setup(self, library, n_samples, n_jobs):
        warm_up()
        self.X, self.y = classification_data(n_samples, 20)
        tree_params = {"splitter": "hist"} if library == "fasttree-hist" else None
        self.est = make_estimator(library.split("-")[0], "classification", max_depth=10,
                                  criterion="entropy", n_jobs=n_jobs, tree_params=tree_params)
        self.est.fit(self.X[:2000], self.y[:2000])

    def time_fit(self, *args):
        self.est.fit(self.X, self.y)

    def peakmem_fit(self, *args):
        self.est.fit(self.X, self.y)


class EntropyDiscretization:
    """H4: entropy (MDL) discretization of every column (Orange is compared in
    ``asv_bench/compare.py``, from its own environment)."""

    params = ([1_000_000],)
    param_names = ["n_samples"]
    timeout = 300

    def setup(self, n_samples):
        from fasttree.preprocessing import EntropyDiscretizer

        self.X, self.y = classification_data(n_samples, 20)
        self.disc = EntropyDiscretizer()
        self.disc.fit(self.X[:2000], self.y[:2000])

    def time_fit(self, *args):
        self.disc.fit(self.X, self.y)
