"""Cold start: seconds to import fasttree, fit a first tree and predict in a fresh process with an
empty numba cache, and each kernel's share of the compilation.

Run ``python asv_bench/compile_times.py [--regression] [--top 15]``; it starts itself again in a
child process whose ``NUMBA_CACHE_DIR`` is a new empty folder, so nothing is read from a cache.
Compile times are CPU seconds spent inside numba's compiler per function, exclusive of the
functions it compiled on the way (a kernel's callees are listed on their own lines).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def measure(regression, top):
    from numba.core import event

    records, stack = [], []

    class CompileTimer(event.Listener):
        def on_start(self, ev):
            stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            started, in_callees = stack.pop()
            spent = time.process_time() - started
            if stack:
                stack[-1][1] += spent
            name = ev.data["dispatcher"].py_func.__qualname__.split(".<locals>")[0]
            records.append((name, spent - in_callees))

    event.register("numba:compile", CompileTimer())
    t0 = time.perf_counter()
    import numpy as np

    import fasttree

    t_import = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 10)).astype(np.float32)
    signal = X[:, 0] + X[:, 1] + rng.normal(size=2000)
    if regression:
        est = fasttree.DecisionTreeRegressor(max_depth=6).fit(X, signal)
    else:
        est = fasttree.DecisionTreeClassifier(max_depth=6).fit(X, signal > 0)
    est.predict(X)
    total = time.perf_counter() - t0
    per_kernel = {}
    for name, seconds in records:
        per_kernel[name] = per_kernel.get(name, 0.0) + seconds
    kind = "regressor" if regression else "classifier"
    print(f"import {t_import:.1f} s; import + first {kind} fit + predict {total:.1f} s "
          f"(compiling {sum(per_kernel.values()):.1f} s CPU)")
    for name, seconds in sorted(per_kernel.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:6.2f} s  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regression", action="store_true", help="fit a regressor")
    parser.add_argument("--top", type=int, default=15, help="kernels listed")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure(args.regression, args.top)
        return
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        child = [sys.executable, os.path.abspath(__file__), "--child", "--top", str(args.top)]
        subprocess.run(child + (["--regression"] if args.regression else []), env=env,
                       check=True)


if __name__ == "__main__":
    main()
