"""Side-by-side comparison of fasttree with scikit-learn, XGBoost exact and LightGBM.

Runs the performance cases of the project (B1-B19, E1, H1-H4, LB, F1-F2), each library on the
same data in this one process (peak memory and first-call time in fresh processes), best of
``--repeats`` runs after a warm-up.  The libraries of a case are fitted in turn, round after
round, so that a shared machine's changes of speed during the run affect them alike; each ratio
is given best against best and as the median of the rounds' paired ratios.  Prints a markdown
table of times and ratios and writes a PNG chart.

    pip install ".[bench]"
    python asv_bench/compare.py --repeats 3 --chart docs/_static/performance.png

Use ``--quick`` for a smaller, faster smoke run (sizes divided by 10, one repeat).
"""

import argparse
import json
import platform
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import load_balance  # noqa: E402
from benchmarks.common import (  # noqa: E402
    BARE_NUMBA,
    FIRST_CALL,
    CARDINALITIES,
    classification_data,
    fresh_process_seconds,
    make_estimator,
    missing_data,
    mixed_data,
    regression_data,
    sparse_text_data,
    warm_up,
)


def best_time(fit, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t0)
    return min(times)


def fit_case(library, task, X, y, *, max_depth, criterion, n_jobs, repeats, splitter="best",
             tree_params=None):
    est = make_estimator(library, task, max_depth=max_depth, criterion=criterion, n_jobs=n_jobs,
                         splitter=splitter, tree_params=tree_params)
    est.fit(X[:2000], y[:2000])  # warm-up: compile / load caches, spin up thread pools
    seconds = best_time(lambda: est.fit(X, y), repeats)
    return seconds, est


def interleaved_fits(task, X, y, libraries, *, repeats, max_depth, criterion, **params):
    """Fit each library's estimator once per round, the libraries one after the other, for
    ``repeats`` rounds, so that a change in the machine's speed during the run (a shared VM's)
    affects every library alike.

    ``libraries`` maps a label to ``(library, n_jobs, tree_params)``.  Returns the best time of
    each label, every round's times (for paired ratios) and the fitted estimators."""
    estimators = {}
    for label, (library, n_jobs, tree_params) in libraries.items():
        estimators[label] = make_estimator(library, task, max_depth=max_depth,
                                           criterion=criterion, n_jobs=n_jobs,
                                           tree_params=tree_params, **params)
        estimators[label].fit(X[:2000], y[:2000])  # warm-up: compile, load caches, thread pools
    rounds = timed_rounds({label: (lambda est=est: est.fit(X, y))
                           for label, est in estimators.items()}, repeats)
    return {label: min(times) for label, times in rounds.items()}, rounds, estimators


def timed_rounds(calls, repeats):
    """Seconds of each call (a label to a function of no argument) in each of ``repeats`` rounds,
    the calls made in turn within a round."""
    rounds = {label: [] for label in calls}
    for _ in range(repeats):
        for label, call in calls.items():
            rounds[label].append(best_time(call, 1))
    return rounds


def paired_median(rounds, a, b):
    """Median over the rounds of ``a``'s time divided by ``b``'s in the same round."""
    return float(np.median(np.array(rounds[a]) / np.array(rounds[b])))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


PEAK_MEMORY = """
import json, sys
import numpy as np, fasttree
X = np.load(sys.argv[1]); y = np.load(sys.argv[2])
params = json.loads(sys.argv[3])
Estimator = getattr(fasttree, sys.argv[4])
Estimator(**dict(params, max_depth=3)).fit(X[:2000], y[:2000])
def status(field):  # VmRSS now, VmHWM peak of this process image (ru_maxrss would include the
    with open("/proc/self/status") as f:  # parent's peak, inherited across fork + exec)
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
before = status("VmRSS:")
Estimator(**params).fit(X, y)
print(json.dumps({"before": before, "peak": status("VmHWM:"), "x_nbytes": X.nbytes}))
"""


B1_PARAMS = {"criterion": "entropy", "max_depth": 10, "n_jobs": 2}


def peak_memory(X, y, params=B1_PARAMS, estimator="DecisionTreeClassifier"):
    """Peak RSS of a classifier's fit (B1's by default) above the process before it, in a fresh
    process (Linux).

    VmHWM is the process's peak since it started, so anything before the fit that peaked higher
    would be counted too: the figure is an upper bound.
    """
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        x_path, y_path = os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
        np.save(x_path, X)
        np.save(y_path, y)
        out = subprocess.run([sys.executable, "-c", PEAK_MEMORY, x_path, y_path,
                              json.dumps(params), estimator], capture_output=True, text=True,
                             check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def memory_bandwidth():
    """Streaming bandwidth of this machine with all threads: (read GB/s, copy GB/s counted as
    bytes read + written), best of 5 over 512 MiB arrays."""
    from numba import njit, prange

    @njit(parallel=True)
    def read_all(a):
        # one block per chunk, 4 independent sums: bound by memory, not by the add latency
        n_chunks = 64
        size = a.shape[0] // n_chunks
        partial = np.zeros(n_chunks)
        for c in prange(n_chunks):
            s0 = s1 = s2 = s3 = np.float32(0.0)
            for i in range(c * size, (c + 1) * size, 4):
                s0 += a[i]
                s1 += a[i + 1]
                s2 += a[i + 2]
                s3 += a[i + 3]
            partial[c] = s0 + s1 + s2 + s3
        return partial.sum()

    @njit(parallel=True)
    def copy_all(a, b):
        for i in prange(a.shape[0]):
            b[i] = a[i]

    a = np.ones(2**27, dtype=np.float32)
    b = np.empty_like(a)
    read_all(a[:1000])
    copy_all(a[:1000], b[:1000])
    read = best_time(lambda: read_all(a), 5)
    copy = best_time(lambda: copy_all(a, b), 5)
    return a.nbytes / read / 1e9, 2 * a.nbytes / copy / 1e9


def interleaved_scaling(case, est1, est2, X, y, rounds):
    """Fit ``est1`` (one thread) and ``est2`` (two) one after the other, ``rounds`` times, each
    round also timing the machine's ceiling (:func:`ceiling_timer`) on 1 and 2 threads, so that a
    change in the machine's speed during the run (a shared VM's) affects both alike.

    Prints the per-phase medians of the paired ratios; returns the best times and the
    ``(result, target, met)`` of the case (>= 1.7x, identical trees)."""
    ceiling = ceiling_timer()
    times, ceiling_times, phase_times = {1: [], 2: []}, {1: [], 2: []}, {1: [], 2: []}
    for _ in range(rounds):
        for n_jobs, est in ((1, est1), (2, est2)):
            ceiling_times[n_jobs].append(ceiling(n_jobs))
            times[n_jobs].append(best_time(lambda est=est: est.fit(X, y), 1))
            phase_times[n_jobs].append(dict(est.fit_timings_))
    print(f"{case} per phase, median of the paired 1-thread / 2-thread ratios: " + ", ".join(
        f"{k} {np.median([a[k] / b[k] for a, b in zip(*phase_times.values())]):.2f}x"
        for k in phase_times[1][0]), flush=True)
    t1, t2 = min(times[1]), min(times[2])
    speedup = t1 / t2
    identical = same_tree(est1, est2)
    result = (f"{speedup:.2f}x speed-up (median of paired ratios "
              f"{np.median(np.array(times[1]) / np.array(times[2])):.2f}x; the machine's ceiling "
              f"in the same rounds {min(ceiling_times[1]) / min(ceiling_times[2]):.2f}x, median "
              f"{np.median(np.array(ceiling_times[1]) / np.array(ceiling_times[2])):.2f}x), "
              f"identical trees: {identical}")
    return {"n_jobs=1": t1, "n_jobs=2": t2}, (result, ">= 1.7x, identical",
                                             speedup >= 1.7 and identical)


def ceiling_timer():
    """A timer of this machine's thread ceiling: ``seconds(n_threads)`` times one run, on 1 or 2
    threads, of work that touches no memory, eight independent xorshift chains per thread (enough
    to keep a core's integer units busy, so two vCPUs sharing one core show it).

    The thread-scaling cases (B7, H3) are read against it: no program scales beyond it on this
    machine in this run (a busy host or vCPUs sharing a core lower it)."""
    import numba
    from numba import njit, prange

    @njit(parallel=True)
    def chains(n):
        out = np.zeros(2, dtype=np.uint64)
        for c in prange(2):
            x = np.arange(1, 9).astype(np.uint64) + np.uint64(c)
            a, b, d, e, f, g, h, k = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
            for _ in range(n):
                a ^= a << np.uint64(13)
                b ^= b << np.uint64(13)
                d ^= d << np.uint64(13)
                e ^= e << np.uint64(13)
                f ^= f << np.uint64(13)
                g ^= g << np.uint64(13)
                h ^= h << np.uint64(13)
                k ^= k << np.uint64(13)
                a ^= a >> np.uint64(7)
                b ^= b >> np.uint64(7)
                d ^= d >> np.uint64(7)
                e ^= e >> np.uint64(7)
                f ^= f >> np.uint64(7)
                g ^= g >> np.uint64(7)
                h ^= h >> np.uint64(7)
                k ^= k >> np.uint64(7)
            out[c] = a ^ b ^ d ^ e ^ f ^ g ^ h ^ k
        return out

    chains(10)

    def seconds(n_threads):
        before = numba.get_num_threads()
        numba.set_num_threads(n_threads)
        try:
            return best_time(lambda: chains(100_000_000), 1)
        finally:
            numba.set_num_threads(before)

    return seconds


def thread_ceiling(rounds=5):
    """:func:`ceiling_timer`'s 1 -> 2 thread speed-up, best of ``rounds`` interleaved runs."""
    seconds = ceiling_timer()
    times = {1: [], 2: []}
    for _ in range(rounds):
        for n_threads in (1, 2):
            times[n_threads].append(seconds(n_threads))
    return min(times[1]) / min(times[2])


def same_tree(a, b):
    return all(np.array_equal(getattr(a.tree_, name), getattr(b.tree_, name))
               for name in ("children_left", "children_right", "feature", "threshold", "value"))


def run(args):
    scale = 10 if args.quick else 1
    repeats = 1 if args.quick else args.repeats
    n_big, n_mid, n_wide = 1_000_000 // scale, 300_000 // scale, 50_000 // scale
    warm_up()
    rows = []  # (case, description, {library: seconds}, ratio text, target text, met)
    phases = {}

    def want(*cases):
        return args.cases is None or any(c in args.cases for c in cases)

    def add(case, description, times, ratio, target, met):
        rows.append((case, description, times, ratio, target, met))
        print(f"{case}: {description}: " + ", ".join(f"{k} {v:.3f}s" for k, v in times.items())
              + f" -> {ratio} (target {target})", flush=True)

    if want("B1", "E1", "B7", "B9"):
        # B1, E1 and B7: 1M x 20, entropy, depth 10
        X, y = classification_data(n_big, 20)
        t, rounds, fitted = interleaved_fits(
            "classification", X, y, {"fasttree": ("fasttree", 2, None),
                                     "xgboost": ("xgboost", 2, None),
                                     "lightgbm": ("lightgbm", 2, None)},
            repeats=repeats, max_depth=10, criterion="entropy")
        est2 = fitted["fasttree"]
        phases["B1 (1M x 20, entropy, depth 10, 2 threads)"] = dict(est2.fit_timings_)
        if args.sklearn_1m:
            t["sklearn"], _ = fit_case("sklearn", "classification", X, y, max_depth=10,
                                       criterion="entropy", n_jobs=1, repeats=1)
        ratio = t["fasttree"] / t["xgboost"]
        add("B1", f"{n_big:,} x 20, entropy, depth 10 (fasttree / XGBoost exact)", t,
            f"{ratio:.2f}x XGBoost's time (median of paired ratios "
            f"{paired_median(rounds, 'fasttree', 'xgboost'):.2f}x)", "<= 0.5x", ratio <= 0.5)
        ratio = t["fasttree"] / t["lightgbm"]
        paired = paired_median(rounds, "fasttree", "lightgbm")
        add("E1", "B1 against LightGBM (fasttree exact / LightGBM), same rounds",
            {k: t[k] for k in ("fasttree", "lightgbm")},
            f"{ratio:.2f}x LightGBM's time (median of paired ratios {paired:.2f}x)",
            "<= 0.8x, best/best and paired median", ratio <= 0.8 and paired <= 0.8)
        est1 = make_estimator("fasttree", "classification", max_depth=10, criterion="entropy",
                              n_jobs=1)
        est1.fit(X[:2000], y[:2000])
        times, result = interleaved_scaling("B7", est1, est2, X, y, max(repeats, 5))
        add("B7", "B1 with n_jobs=1 vs n_jobs=2, interleaved", times, *result)
        mem = peak_memory(X, y)
        extra = (mem["peak"] - mem["before"]) / mem["x_nbytes"]
        add("B9", "peak memory of the B1 fit above the process before it", {},
            f"{extra:.2f} x X.nbytes ({(mem['peak'] - mem['before']) / 2**20:.0f} MiB)",
            "<= 3 x X.nbytes", extra <= 3.0)
        del X, y

    for case, n_rows, n_features in (("B18", 4 * n_big, 1), ("B19", 2 * n_big, 3)):
        if not want(case):
            continue
        # narrow data (issue 25): work items balanced by rows, not features, keep both cores busy
        X, y = classification_data(n_rows, 4)
        X = np.ascontiguousarray(X[:, :n_features])
        ests = [make_estimator("fasttree", "classification", max_depth=10, criterion="entropy",
                               n_jobs=n_jobs) for n_jobs in (1, 2)]
        for est in ests:
            est.fit(X[:2000], y[:2000])
        times, result = interleaved_scaling(case, *ests, X, y, max(repeats, 5))
        add(case, f"{n_rows:,} x {n_features}, entropy, depth 10, n_jobs=1 vs n_jobs=2, "
            "interleaved", times, *result)
        del X, y

    if want("LB"):
        # issue 25: load balance on P threads, a model from the fit's own work items
        for name, (n_rows, n_features) in load_balance.CASES.items():
            n_rows //= scale
            X, y = classification_data(n_rows, max(n_features, 4))
            X = np.ascontiguousarray(X[:, :n_features])
            threads = (16, 64)
            levels, presort = load_balance.fit_balance(X, y, threads, max_depth=10,
                                                       criterion="entropy")
            print(load_balance.table(f"{name}: {n_rows:,} x {n_features}", levels, presort,
                                     threads), flush=True)
            fit = {phase: [load_balance.weighted(levels, f"{phase}@{p}", f"{phase}_rows")
                           for p in threads] for phase in ("search", "partition")}
            fit["presort"] = [presort[f"presort@{p}"] for p in threads]
            text = "; ".join(f"{phase} " + " / ".join(f"{b:.2f}" for b in values)
                             for phase, values in fit.items())
            met = all(b >= 0.9 for values in fit.values() for b in values if b == b)
            add("LB", f"{name} ({n_rows:,} x {n_features}, entropy, depth 10): load balance "
                "at P = 16 / 64 (model, levels weighted by rows)", {}, text,
                ">= 0.9 at P = 16 and 64", met)
            del X, y

    if want("B17"):
        # B17: linear scale (issue 11): 10M rows against ten 1M fits, fitted in turn round after
        # round (best of each), per-phase timings of each size's best fit, memory
        data, calls, phase_log = {}, {}, {}
        for n_rows in (n_big, 10 * n_big):
            X, y = data[n_rows] = classification_data(n_rows, 20)
            est = make_estimator("fasttree", "classification", max_depth=10,
                                 criterion="entropy", n_jobs=2)
            est.fit(X[:2000], y[:2000])  # warm-up: compile, load caches
            log = phase_log[n_rows] = []

            def call(est=est, X=X, y=y, log=log):
                est.fit(X, y)
                log.append(dict(est.fit_timings_))
            calls[f"fasttree {n_rows:,} rows"] = call
        rounds = timed_rounds(calls, repeats)
        t = {label: min(times) for label, times in rounds.items()}
        for (n_rows, log), times in zip(phase_log.items(), rounds.values()):
            phases[f"B17 ({n_rows:,} x 20, entropy, depth 10)"] = log[int(np.argmin(times))]
        X, y = data.pop(10 * n_big)
        del data
        mem = peak_memory(X, y)
        del X, y
        small, large = t.values()
        ratio = large / (10 * small)
        extra = (mem["peak"] - mem["before"]) / mem["x_nbytes"]
        add("B17", f"{10 * n_big:,} x 20 vs ten {n_big:,}-row fits (entropy, depth 10; fitted "
            f"in turn, best of {repeats}); peak memory of the large fit", t,
            f"{ratio:.2f}x ten small fits' time, {extra:.2f} x X.nbytes "
            f"({(mem['peak'] - mem['before']) / 2**20:.0f} MiB)",
            "<= 1.5x, <= 2.5 x X.nbytes", ratio <= 1.5 and extra <= 2.5)

    def vs_sklearn(case, description, task, X, y, *, max_depth, criterion, target, anchors=(),
                   splitter="best", tree_params=None):
        if not want(case):
            return
        libraries = {"fasttree": ("fasttree", 2, tree_params),
                     "sklearn": ("sklearn", 1, tree_params)}
        libraries.update({library: (library, 2, None) for library in anchors})
        t, rounds, fitted = interleaved_fits(task, X, y, libraries, repeats=repeats,
                                             max_depth=max_depth, criterion=criterion,
                                             splitter=splitter)
        phases[f"{case} ({description})"] = dict(fitted["fasttree"].fit_timings_)
        ratio = t["sklearn"] / t["fasttree"]
        add(case, description, t, f"{ratio:.1f}x faster than scikit-learn (median of paired "
            f"ratios {paired_median(rounds, 'sklearn', 'fasttree'):.1f}x)", f">= {target}x",
            ratio >= target)

    X, y = classification_data(n_mid, 20)
    vs_sklearn("B2", f"{n_mid:,} x 20, entropy, depth 10", "classification", X, y, max_depth=10,
               criterion="entropy", target=25, anchors=("xgboost", "lightgbm"))
    vs_sklearn("B3", f"{n_mid:,} x 20, gini, full depth", "classification", X, y, max_depth=None,
               criterion="gini", target=20)
    Xr, yr = regression_data(n_mid, 20)
    vs_sklearn("B4", f"{n_mid:,} x 20, squared_error, depth 10", "regression", Xr, yr,
               max_depth=10, criterion="squared_error", target=20,
               anchors=("xgboost", "lightgbm"))
    Xw, yw = classification_data(n_wide, 200)
    vs_sklearn("B5", f"{n_wide:,} x 200, entropy, depth 10", "classification", Xw, yw,
               max_depth=10, criterion="entropy", target=15, anchors=("xgboost", "lightgbm"))

    # B10: 10 % missing values; scikit-learn's tree handles NaN with the same semantics
    Xm, ym = missing_data(n_mid, 20)
    vs_sklearn("B10", f"{n_mid:,} x 20, 10 % NaN, entropy, depth 10", "classification", Xm, ym,
               max_depth=10, criterion="entropy", target=20)
    del Xm, ym

    # B12-B14: scikit-learn's remaining tree features (issue 10): report the ratios
    vs_sklearn("B12", f"{n_mid:,} x 20, absolute_error, depth 10", "regression", Xr, yr,
               max_depth=10, criterion="absolute_error", target=20)
    X5, y5 = regression_data(n_mid, 20, n_targets=5)
    vs_sklearn("B13", f"{n_mid:,} x 20, 5 targets, squared_error, depth 10", "regression", X5,
               y5, max_depth=10, criterion="squared_error", target=1)
    del X5, y5
    vs_sklearn("B14", f"{n_mid:,} x 20, ExtraTreeRegressor, full depth", "regression", Xr, yr,
               max_depth=None, criterion="squared_error", target=1, splitter="random")
    vs_sklearn("B16", f"{n_mid:,} x 20, squared_error, depth 10, monotonic_cst on 10 features",
               "regression", Xr, yr, max_depth=10, criterion="squared_error", target=1,
               tree_params={"monotonic_cst": [1, -1] * 5 + [0] * 10})

    # B15: sparse text-like input, both libraries on the same CSC matrix
    Xs, ys = sparse_text_data(100_000 // scale, 10_000 // scale)
    vs_sklearn("B15", f"sparse {Xs.shape[0]:,} x {Xs.shape[1]:,} at 1 % density, gini, depth 10",
               "classification", Xs, ys, max_depth=10, criterion="gini", target=1)
    del Xs, ys

    # B11: categorical columns (report only): fasttree binary / multiway, LightGBM's categorical
    # splits (one tree), scikit-learn on one-hot columns
    if not args.skip_categorical and want("B11"):
        t = categorical_case(n_big, repeats, phases)
        add("B11", f"{n_big:,} rows: 5 categorical ({'/'.join(map(str, CARDINALITIES))} "
            "categories) + 15 numeric, entropy, depth 10", t,
            ", ".join(f"{k} {v:.2f} s" for k, v in t.items()), "report", True)

    hist_cases(args, want, add, phases, n_big, repeats)
    frontier_cases(want, add, phases, n_big, repeats)
    forest_cases(want, add, phases, n_big, repeats)
    forest_model_cases(want, add, n_big, repeats)

    if want("B6"):
        # B6: predict 1M rows with a depth-12 tree (both trees fitted on the same 300k rows)
        X_test, _ = classification_data(n_big, 20, seed=1)
        predictors = {}
        for library in ("fasttree", "sklearn"):
            predictors[library] = make_estimator(library, "classification", max_depth=12,
                                                 criterion="gini", n_jobs=2).fit(X, y)
            predictors[library].predict(X_test[:1000])
        rounds = timed_rounds({library: (lambda est=est: est.predict(X_test))
                               for library, est in predictors.items()}, repeats)
        t = {library: min(times) for library, times in rounds.items()}
        ratio = t["sklearn"] / t["fasttree"]
        add("B6", f"predict {n_big:,} rows, depth-12 tree", t, f"{ratio:.1f}x faster than "
            f"scikit-learn (median of paired ratios "
            f"{paired_median(rounds, 'sklearn', 'fasttree'):.1f}x)", ">= 2x", ratio >= 2)

    bandwidth = memory_bandwidth()
    print(f"memory bandwidth: read {bandwidth[0]:.1f} GB/s, copy {bandwidth[1]:.1f} GB/s")
    phases["_bandwidth"] = {"read_GBps": bandwidth[0], "copy_GBps": bandwidth[1]}
    ceiling = thread_ceiling()
    print(f"thread ceiling: a compute-bound loop runs {ceiling:.2f}x faster on 2 threads than on 1")
    phases["_threads"] = {"ceiling": ceiling}

    if want("B8"):
        # B8: fresh process, numba's cache warm
        fresh_process_seconds(FIRST_CALL)  # fills numba's on-disk cache
        first = min(fresh_process_seconds(FIRST_CALL) for _ in range(repeats))
        bare = min(fresh_process_seconds(BARE_NUMBA) for _ in range(repeats))
        add("B8", "fresh process: import, fit + predict 1000 x 10 (cache warm) minus bare numba "
            "import", {"fasttree": first, "import numba": bare}, f"{first - bare:.2f} s more",
            "<= 1.5 s", first - bare <= 1.5)

    return rows, phases


HIST = {"splitter": "hist"}


def hist_cases(args, want, add, phases, n_big, repeats):
    """H1-H4 (issue 8): the binned splitter against LightGBM (binning included in both), its
    thread scaling and peak memory, and entropy discretization against Orange's."""
    if want("H1", "H3"):
        X, y = classification_data(n_big, 20)
        t, rounds, fitted = interleaved_fits(
            "classification", X, y, {"fasttree hist": ("fasttree", 2, HIST),
                                     "lightgbm": ("lightgbm", 2, None),
                                     "fasttree exact": ("fasttree", 2, None)},
            repeats=repeats, max_depth=10, criterion="entropy")
        est2 = fitted["fasttree hist"]
        phases["H1 (1M x 20, entropy, depth 10, splitter='hist', 2 threads)"] = dict(
            est2.fit_timings_)
        ratio = t["fasttree hist"] / t["lightgbm"]
        add("H1", f"{n_big:,} x 20, entropy, depth 10, splitter='hist' (fasttree / LightGBM)", t,
            f"{ratio:.2f}x LightGBM's time (median of paired ratios "
            f"{paired_median(rounds, 'fasttree hist', 'lightgbm'):.2f}x)", "<= 0.5x",
            ratio <= 0.5)
        # H3: one and two threads interleaved, fit after fit, so that a change in the machine's
        # speed during the run (a shared VM's) affects both alike; best of each
        est1 = make_estimator("fasttree", "classification", max_depth=10, criterion="entropy",
                              n_jobs=1, tree_params=HIST)
        est1.fit(X[:2000], y[:2000])
        times, result = interleaved_scaling("H3", est1, est2, X, y, max(repeats, 5))
        phases["H3 (H1 with 1 thread)"] = dict(est1.fit_timings_)
        add("H3", "H1 with n_jobs=1 vs n_jobs=2, interleaved", times, *result)
        del X, y
    if want("H2"):
        n_huge = 10 * n_big
        X, y = classification_data(n_huge, 20)
        t = {}
        t["fasttree hist"], est = fit_case("fasttree", "classification", X, y, max_depth=10,
                                           criterion="entropy", n_jobs=2, repeats=1,
                                           tree_params=HIST)
        phases["H2 (10M x 20, splitter='hist')"] = dict(est.fit_timings_)
        t["lightgbm"], _ = fit_case("lightgbm", "classification", X, y, max_depth=10,
                                    criterion="entropy", n_jobs=2, repeats=1)
        ratio = t["fasttree hist"] / t["lightgbm"]
        mem = peak_memory(X, y, dict(B1_PARAMS, **HIST))
        extra = (mem["peak"] - mem["before"]) / mem["x_nbytes"]
        add("H2", f"{n_huge:,} x 20, same settings: time and peak memory above the process "
            "before the fit", t, f"{ratio:.2f}x LightGBM's time, {extra:.2f} x X.nbytes "
            f"({(mem['peak'] - mem['before']) / 2**20:.0f} MiB)",
            "<= 0.5x, <= 1.5 x X.nbytes", ratio <= 0.5 and extra <= 1.5)
        del X, y
    if want("H4"):
        from discretize_bench import make_data, orange_python, time_fasttree, time_numpy, \
            time_orange

        X, y = make_data(n_big)
        t = {"fasttree": time_fasttree(X, y, repeats)[0]}
        python = orange_python(args.orange_python)
        if python is not None:
            t["Orange EntropyMDL"] = time_orange(X, y, min(repeats, 2), python)[0]
        else:  # stated as such in the table
            t["NumPy recursion (no Orange)"] = time_numpy(X, y, 1)[0]
        anchor = [v for k, v in t.items() if k != "fasttree"][0]
        ratio = anchor / t["fasttree"]
        add("H4", f"entropy (MDL) discretization of {n_big:,} x 20", t,
            f"{ratio:.1f}x faster than {list(t)[1]}", ">= 10x", ratio >= 10)


def frontier_cases(want, add, phases, n_big, repeats):
    """F1, F2 (issues 25 and 26): bootstrap trees grown in one frontier (the grower's
    ``counts``) against the same trees grown one by one and against scikit-learn's forest
    (``max_features="sqrt"``, two threads each; seconds per tree).  F1: B1's data, 80 % to train,
    four trees of depth 10; F2: 25,000 rows, sixteen full-depth trees (where a level's fixed
    costs are what a forest of small trees pays)."""
    from sklearn.ensemble import RandomForestClassifier

    from fasttree._base import numba_threads
    from fasttree.grower import GrowerParams, TreeGrower

    for case, n_rows, n_trees, depth in (("F1", n_big, 4, 10), ("F2", 25_000, 16, None)):
        if not want(case):
            continue
        X, y = classification_data(n_rows, 20)
        n_train = int(0.8 * n_rows)
        X_train, y_train = np.ascontiguousarray(X[:n_train], np.float32), y[:n_train]
        draws = np.random.default_rng(0).integers(0, n_train, size=(n_trees, n_train))
        counts = np.stack([np.bincount(d, minlength=n_train) for d in draws])
        params = GrowerParams(criterion="gini", max_depth=depth or 2**31 - 1,
                              min_samples_split=2, min_samples_leaf=1, min_weight_leaf=0.0,
                              min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=4)
        labels = y_train.astype(np.int32)

        log = []

        def frontier():
            grower = TreeGrower(X_train, labels, None, params, n_classes=2, counts=counts,
                                rng=[np.random.default_rng(k) for k in range(n_trees)])
            grower.grow_trees()
            log.append(dict(grower.timings))

        def one_by_one():
            for k in range(n_trees):
                rows = np.flatnonzero(counts[k])
                TreeGrower(np.ascontiguousarray(X_train[rows]), labels[rows],
                           counts[k, rows].astype(np.float64), params, n_classes=2,
                           rng=np.random.default_rng(k)).grow()

        forest = RandomForestClassifier(n_trees, max_depth=depth, max_features="sqrt",
                                        n_jobs=2, random_state=0)
        calls = {"fasttree frontier": frontier, "fasttree one by one": one_by_one,
                 "sklearn forest": lambda: forest.fit(X_train, y_train)}
        with numba_threads(2):
            frontier()  # warm-up: compile, load caches
            one_by_one()
            del log[:]
            rounds = timed_rounds(calls, repeats)
        phases[f"{case} ({n_trees} trees in one frontier)"] = log[int(np.argmin(
            rounds["fasttree frontier"]))]
        t = {label: min(times) / n_trees for label, times in rounds.items()}
        ratio = t["fasttree frontier"] / t["fasttree one by one"]
        add(case, f"{n_trees} bootstrap trees of {n_train:,} x 20, gini, "
            f"{'depth ' + str(depth) if depth else 'full depth'}, max_features 4: seconds per "
            "tree", t, f"frontier {ratio:.2f}x one by one, "
            f"{t['sklearn forest'] / t['fasttree frontier']:.1f}x faster than scikit-learn",
            "frontier <= one by one", ratio <= 1.0)
        del X, y


def forest_libraries(n_trees, depth, extra=False):
    """The forests R1-R3 compare, by label: fasttree's and scikit-learn's (and where installed
    scikit-learn-intelex's and, at a depth limit, LightGBM's ``boosting="rf"``), each with
    ``max_features="sqrt"`` and two threads."""
    import fasttree
    from sklearn import ensemble

    kind = "ExtraTreesClassifier" if extra else "RandomForestClassifier"
    params = dict(n_estimators=n_trees, max_depth=depth, max_features="sqrt", n_jobs=2,
                  random_state=0)
    forests = {"fasttree": getattr(fasttree, kind)(**params),
               "sklearn": getattr(ensemble, kind)(**params)}
    try:
        import sklearnex.ensemble

        forests["sklearnex"] = getattr(sklearnex.ensemble, kind)(**params)
    except ImportError:
        pass
    if depth is not None and not extra:
        import lightgbm

        # LightGBM's random forest: bagging 0.632 of the rows without replacement, 4 of 20
        # features per node, binned (255 bins)
        forests["lightgbm rf"] = lightgbm.LGBMClassifier(
            boosting_type="rf", n_estimators=n_trees, max_depth=depth, num_leaves=2**depth,
            bagging_fraction=0.632, bagging_freq=1, feature_fraction_bynode=0.2,
            min_child_samples=1, min_child_weight=0.0, n_jobs=2, random_state=0, verbose=-1)
    return forests


def forest_cases(want, add, phases, n_big, repeats):
    """R1, R2, R3 (issue 26): forests of ten trees on B1's data (80 % to train, the rest to
    score), ``max_features="sqrt"``, two threads; seconds per tree.  R1: random forests of depth
    10; R2: full depth; R3: extra trees, full depth."""
    X, y = classification_data(n_big, 20)
    n_train = int(0.8 * n_big)
    X_train, y_train = np.ascontiguousarray(X[:n_train], np.float32), y[:n_train]
    X_test, y_test = X[n_train:], y[n_train:]
    n_trees = 10
    for case, depth, extra in (("R1", 10, False), ("R2", None, False), ("R3", None, True)):
        if not want(case):
            continue
        forests = forest_libraries(n_trees, depth, extra)
        forests["fasttree"].fit(X_train[:2000], y_train[:2000])  # compile, load caches
        calls = {label: (lambda f=f: f.fit(X_train, y_train)) for label, f in forests.items()}
        rounds = timed_rounds(calls, repeats)
        t = {label: min(times) / n_trees for label, times in rounds.items()}
        accuracy = {label: float(np.mean(f.predict(X_test) == y_test))
                    for label, f in forests.items()}
        phases[f"{case} ({n_trees} trees)"] = dict(forests["fasttree"].fit_timings_)
        if case == "R1":
            mem = peak_memory(X_train, y_train, dict(n_estimators=n_trees, max_depth=depth,
                                                     n_jobs=2, random_state=0),
                              "RandomForestClassifier")
            above = (mem["peak"] - mem["before"]) / mem["x_nbytes"]
            add("RM", "peak memory of R1's fasttree fit above the process before it", {},
                f"{above:.2f} x X.nbytes ({(mem['peak'] - mem['before']) / 2**20:.0f} MiB)",
                "<= 3 x X.nbytes plus the model", above <= 3.0)
        binned = [t[k] for k in ("sklearnex", "lightgbm rf") if k in t]
        anchor = min(binned) if binned else float("nan")
        target = (">= 5x faster than scikit-learn" if extra else
                  f"<= 0.8x the fastest binned forest, >= {12 if depth else 8}x scikit-learn")
        met = (t["sklearn"] / t["fasttree"] >= 5 if extra else
               t["fasttree"] <= 0.8 * anchor and t["sklearn"] / t["fasttree"] >= (
                   12 if depth else 8))
        add(case, f"{'extra trees' if extra else 'random forest'} of {n_trees} trees, "
            f"{n_train:,} x 20, {'depth ' + str(depth) if depth else 'full depth'}, "
            "max_features sqrt: seconds per tree (test accuracy "
            + ", ".join(f"{k} {v:.4f}" for k, v in accuracy.items()) + ")", t,
            f"{t['sklearn'] / t['fasttree']:.1f}x faster than scikit-learn"
            + (f", {t['fasttree'] / anchor:.2f}x the fastest binned forest" if binned else ""),
            target, met)
        del forests
    del X, y


def forest_model_cases(want, add, n_big, repeats):
    """RP (issue 26): predict B1's 1M rows with 100 full-depth random-forest trees fitted on its
    first 100,000 rows (``max_features="sqrt"``, two threads), each library its own forest; RS:
    those forests' model sizes."""
    if not want("RP", "RS"):
        return
    X, y = classification_data(n_big, 20)
    X = np.ascontiguousarray(X, np.float32)
    n_fit, n_trees = n_big // 10, 100
    forests = {label: f for label, f in forest_libraries(n_trees, None).items()
               if label in ("fasttree", "sklearn", "sklearnex")}
    for forest in forests.values():
        forest.fit(X[:n_fit], y[:n_fit])
        forest.predict(X[:1000])  # compile, load caches, pack
    rounds = timed_rounds({label: (lambda f=f: f.predict(X)) for label, f in forests.items()},
                          repeats)
    t = {label: min(times) for label, times in rounds.items()}
    nodes = sum(e.tree_.node_count for e in forests["fasttree"].estimators_) / n_trees
    met = t["sklearn"] / t["fasttree"] >= 2 and t["fasttree"] <= t.get("sklearnex", np.inf)
    add("RP", f"predict {n_big:,} rows, {n_trees} full-depth trees fitted on {n_fit:,} rows "
        f"({nodes:,.0f} nodes a tree), seconds", t,
        f"{t['sklearn'] / t['fasttree']:.1f}x faster than scikit-learn"
        + (f", {t['fasttree'] / t['sklearnex']:.2f}x sklearn-intelex" if "sklearnex" in t
           else ""), ">= 2x scikit-learn, <= sklearn-intelex", met)
    if want("RS"):
        import io
        import pickle

        buffer = io.BytesIO()
        forests["fasttree"].save(buffer)
        size = {"fasttree": len(buffer.getvalue()) / 2**20}
        size.update({label: len(pickle.dumps(f)) / 2**20 for label, f in forests.items()
                     if label != "fasttree"})
        ratio = size["sklearn"] / size["fasttree"]
        # the table prints sizes in its seconds column: MiB here
        add("RS", f"model size of RP's forests, MiB (fasttree's model file, the others' pickles; "
            f"fasttree's own pickle {len(pickle.dumps(forests['fasttree'])) / 2**20:.1f})",
            size, f"{ratio:.1f}x smaller than scikit-learn's pickle",
            ">= 4x smaller than scikit-learn's pickle", ratio >= 4)
    del forests, X, y


def categorical_case(n_samples, repeats, phases):
    """Seconds of each library on :func:`mixed_data` (B11)."""
    import fasttree

    X, y, categorical = mixed_data(n_samples)
    t = {}
    for split in ("binary", "multiway"):
        est = fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=10, n_jobs=2,
                                              categorical_features=categorical,
                                              categorical_split=split)
        est.fit(X[:2000], y[:2000])
        t[f"fasttree {split}"] = best_time(lambda est=est: est.fit(X, y), repeats)
        phases[f"B11 ({split})"] = dict(est.fit_timings_)
    lgbm = make_estimator("lightgbm", "classification", max_depth=10, criterion="entropy",
                          n_jobs=2)
    lgbm.fit(X[:2000], y[:2000], categorical_feature=list(categorical))
    t["lightgbm"] = best_time(lambda: lgbm.fit(X, y, categorical_feature=list(categorical)),
                              repeats)
    # scikit-learn has no categorical splits: one-hot columns (sparse CSC), one run
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    one_hot = ColumnTransformer([("cat", OneHotEncoder(), list(categorical))],
                                remainder="passthrough", sparse_threshold=1.0)
    X_hot = one_hot.fit_transform(X).tocsc()
    sk = make_estimator("sklearn", "classification", max_depth=10, criterion="entropy", n_jobs=1)
    t["sklearn one-hot"] = best_time(lambda: sk.fit(X_hot, y), 1)
    return t


def markdown(rows, phases):
    libraries = ["fasttree", "sklearn", "xgboost", "lightgbm"]
    lines = [
        f"Machine: {cpu_model()}, {__import__('os').cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}.",
        "",
        "| case | what | fasttree | scikit-learn | XGBoost exact | LightGBM | result | target "
        "| met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case, description, times, ratio, target, met in rows:
        cells = [f"{times[k]:.3f} s" if k in times else "" for k in libraries]
        if case in ("B7", "B8", "B11", "B17", "H1", "H2", "H3", "H4", "F1", "F2"):
            cells = [" / ".join(f"{k}: {v:.3f} s" for k, v in times.items()), "", "", ""]
        lines.append(f"| {case} | {description} | " + " | ".join(cells)
                     + f" | {ratio} | {target} | {'yes' if met else '**no**'} |")
    lines += ["", "Per-phase breakdown of fasttree's fits (seconds, from `fit_timings_`):", "",
              "| case | presort, binning or layout | histograms | search | partition | "
              "node_stats | grown depth first | total |",
              "|---|---|---|---|---|---|---|---|"]
    for case, timings in phases.items():
        if case.startswith("_"):
            continue
        first = timings.get("presort", timings.get("binning", timings.get("layout", 0.0)))
        lines.append(f"| {case} | {first:.3f} | " + " | ".join(
            f"{timings.get(k, 0.0):.3f}" for k in ("histograms", "search", "partition",
                                                  "node_stats", "grow", "total")) + " |")
    read, copy = phases["_bandwidth"].values()
    lines += ["", f"Measured streaming bandwidth (all threads): read {read:.1f} GB/s, "
              f"copy {copy:.1f} GB/s (bytes read + written).",
              "", f"Thread ceiling: two independent arithmetic chains run "
              f"{phases['_threads']['ceiling']:.2f}x faster on 2 threads than on 1 (the most any "
              "thread-scaling case, B7 or H3, can show on this machine in this run)."]
    return "\n".join(lines)


def chart(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [r for r in rows if r[0] in ("B1", "B2", "B3", "B4", "B5", "B6")]
    libraries = ["fasttree", "sklearn", "xgboost", "lightgbm"]
    colors = {"fasttree": "#1f77b4", "sklearn": "#ff7f0e", "xgboost": "#2ca02c",
              "lightgbm": "#9467bd"}
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.2
    for i, library in enumerate(libraries):
        xs = [j + (i - 1.5) * width for j, r in enumerate(cases) if library in r[2]]
        ys = [r[2][library] for r in cases if library in r[2]]
        ax.bar(xs, ys, width, label=library, color=colors[library])
    ax.set_xticks(range(len(cases)))
    short = {"B1": "1M x 20\nentropy, depth 10", "B2": "300k x 20\nentropy, depth 10",
             "B3": "300k x 20\ngini, full depth", "B4": "300k x 20\nsquared error, depth 10",
             "B5": "50k x 200\nentropy, depth 10", "B6": "predict 1M rows\ndepth-12 tree"}
    ax.set_xticklabels([f"{r[0]}: {short[r[0]]}" for r in cases], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (log scale, lower is better)")
    ax.set_title("One exact tree: fit (B1-B5) and predict (B6) time, best of runs")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="sizes / 10, one repeat")
    parser.add_argument("--sklearn-1m", action="store_true",
                        help="also time scikit-learn on the 1M-row case (about a minute)")
    parser.add_argument("--skip-categorical", action="store_true",
                        help="leave out B11 (1M mixed rows, scikit-learn on one-hot columns)")
    parser.add_argument("--cases", type=lambda v: v.split(","),
                        help="run only these cases, e.g. B12,B13,B14,B15")
    parser.add_argument("--orange-python",
                        help="H4: a Python interpreter that imports Orange (Orange pins older "
                        "numpy and pandas, so it usually has an environment of its own)")
    parser.add_argument("--chart", default="performance.png", help="PNG file to write")
    parser.add_argument("--json", help="also write the raw results to this JSON file")
    args = parser.parse_args()
    rows, phases = run(args)
    table = markdown(rows, phases)
    print()
    print(table)
    chart(rows, args.chart)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "phases": phases}, f, indent=1)


if __name__ == "__main__":
    main()
