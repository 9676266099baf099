"""H4: entropy (MDL) discretization of 1M x 20 float32, fasttree against Orange's ``EntropyMDL``.

Data: ``make_classification(n_samples=1_000_000, n_features=20, n_informative=10,
random_state=0)`` rounded to float32; both tools see the same float32 values.

fasttree: ``EntropyDiscretizer().fit(X, y)`` (validation, presort, one kernel call per recursion
level), after a warm-up fit on small data that compiles (or loads) the kernels.

Orange: ``EntropyMDL()`` called on every column of an ``Orange.data.Table`` built beforehand
(the table's construction is not timed), in this interpreter if Orange imports here, else in
the interpreter given by ``--orange-python`` (Orange pins older numpy/pandas, so it usually
lives in its own environment).  Without Orange, the baseline is a straightforward NumPy
implementation of the same recursion (per column: sort, then at each interval cumulative class
counts, entropies of every candidate, argmin, MDL test), and the output says so.

Each timing is the best of ``--repeat`` runs (default 2).  Run::

    python asv_bench/discretize_bench.py --orange-python /path/to/orange-env/bin/python

``--n-samples`` makes the data smaller for a quick try.  The output also says whether the two
sets of cut points agree.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

N_FEATURES = 20


def make_data(n_samples):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n_samples, n_features=N_FEATURES, n_informative=10,
                               random_state=0)
    return X.astype(np.float32), y


def best_of(repeat, func):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), times, result


# -- fasttree ------------------------------------------------------------------------------------

def time_fasttree(X, y, repeat):
    from fasttree.preprocessing import EntropyDiscretizer

    warm = np.random.default_rng(0)
    EntropyDiscretizer().fit(warm.normal(size=(500, 3)).astype(np.float32),
                             warm.integers(0, 2, 500))  # compile / load the kernels
    return best_of(repeat, lambda: EntropyDiscretizer().fit(X, y).cut_points_)


# -- Orange, in this or another interpreter ------------------------------------------------------

ORANGE_CHILD = r"""
import json, sys, time
import numpy as np
from Orange.data import ContinuousVariable, DiscreteVariable, Domain, Table
from Orange.preprocess.discretize import EntropyMDL
import Orange

data = np.load(sys.argv[1])
X, y, repeat = data["X"].astype(np.float64), data["y"], int(sys.argv[2])
domain = Domain([ContinuousVariable(f"x{j}") for j in range(X.shape[1])],
                DiscreteVariable("y", values=[str(k) for k in range(int(y.max()) + 1)]))
table = Table.from_numpy(domain, X, y.astype(np.float64))
times = []
for _ in range(repeat):
    start = time.perf_counter()
    method = EntropyMDL()
    cuts = [list(map(float, method(table, table.domain[j]).compute_value.points))
            for j in range(X.shape[1])]
    times.append(time.perf_counter() - start)
print(json.dumps({"times": times, "cuts": cuts, "version": Orange.version.version}))
"""


def time_orange(X, y, repeat, python):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, X=X, y=y)
        script = os.path.join(tmp, "orange_child.py")
        with open(script, "w") as f:
            f.write(ORANGE_CHILD)
        out = subprocess.run([python, script, path, str(repeat)], capture_output=True, text=True,
                             check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return min(result["times"]), result["times"], result["cuts"], result["version"]


def orange_python(requested):
    if requested:
        return requested
    try:
        import Orange.preprocess.discretize  # noqa: F401
    except ImportError:
        return None
    return sys.executable


# -- NumPy baseline (no Orange) ------------------------------------------------------------------

def _entropy_rows(counts):
    total = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    logp = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logp).sum(axis=-1)


def numpy_mdl_cuts(values, onehot):
    """The MDL recursion on one sorted column: ``values`` increasing, ``onehot`` (n, K)."""
    cuts = []

    def recurse(lo, hi):
        x = values[lo:hi]
        candidates = np.flatnonzero(x[1:] > x[:-1])  # cut after position p
        if candidates.size == 0:
            return
        cum = np.cumsum(onehot[lo:hi], axis=0)
        total = cum[-1]
        left = cum[candidates]
        right = total - left
        n_left = left.sum(axis=1)
        n = total.sum()
        e = (n_left * _entropy_rows(left) + (n - n_left) * _entropy_rows(right)) / n
        best = int(np.argmin(e))
        p = candidates[best]
        ent = _entropy_rows(total)
        gain = ent - e[best]
        k, k1, k2 = (np.count_nonzero(c) for c in (total, left[best], right[best]))
        delta = np.log2(3.0 ** k - 2) - (k * ent - k1 * _entropy_rows(left[best])
                                         - k2 * _entropy_rows(right[best]))
        if n > 1 and gain > np.log2(n - 1) / n + delta / n:
            cuts.append((float(x[p]) + float(x[p + 1])) / 2)
            if k1 > 1:
                recurse(lo, lo + p + 1)
            if k2 > 1:
                recurse(lo + p + 1, hi)

    recurse(0, len(values))
    return sorted(cuts)


def time_numpy(X, y, repeat):
    n_classes = int(y.max()) + 1

    def run():
        cuts = []
        for j in range(X.shape[1]):
            order = np.argsort(X[:, j], kind="stable")
            onehot = np.eye(n_classes)[y[order]]
            cuts.append(numpy_mdl_cuts(X[order, j].astype(np.float64), onehot))
        return cuts

    return best_of(repeat, run)


# -- main ----------------------------------------------------------------------------------------

def agreement(ours, theirs):
    same = sum(len(a) == len(b) and np.allclose(a, b, rtol=1e-12, atol=0)
               for a, b in zip(ours, theirs))
    return f"{same}/{len(ours)} columns with the same cut points"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--orange-python", default=None,
                        help="a Python interpreter that has Orange (orange3) installed")
    args = parser.parse_args()

    X, y = make_data(args.n_samples)
    print(f"data: make_classification {X.shape[0]} x {X.shape[1]} float32, 2 classes")
    t_ft, runs_ft, cuts_ft = time_fasttree(X, y, args.repeat)
    print(f"fasttree EntropyDiscretizer (MDL): best {t_ft:.3f} s of "
          f"{', '.join(f'{t:.3f}' for t in runs_ft)}; "
          f"{sum(len(c) for c in cuts_ft)} cut points")

    python = orange_python(args.orange_python)
    if python is not None:
        t_ref, runs_ref, cuts_ref, version = time_orange(X, y, args.repeat, python)
        name = f"Orange {version} EntropyMDL"
    else:
        t_ref, runs_ref, cuts_ref = time_numpy(X, y, args.repeat)
        name = "NumPy reference recursion (Orange not importable; not Orange itself)"
    print(f"{name}: best {t_ref:.3f} s of {', '.join(f'{t:.3f}' for t in runs_ref)}; "
          f"{sum(len(c) for c in cuts_ref)} cut points")
    print(f"agreement: {agreement(cuts_ft, cuts_ref)}")
    print(f"speed-up: {t_ref / t_ft:.1f}x (H4 target: >= 10x)")


if __name__ == "__main__":
    main()
