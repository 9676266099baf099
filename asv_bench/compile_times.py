"""Cold start: seconds to import fasttree, fit a first tree and predict in a fresh process with an
empty numba cache, for every kind of first fit, and each kernel's share of the compilation; and
the seconds ``python -m fasttree compile`` takes to fill an empty cache.

Run ``python asv_bench/compile_times.py [--kind KIND ...] [--top 15]``: each kind (the list of
``python -m fasttree compile --list``, defined in ``fasttree/_warmup.py``) runs in its own child
process whose ``NUMBA_CACHE_DIR`` is a new empty folder, so nothing is read from a cache.  The
fit's inputs are built before the clock starts (the ``table`` kind: the bundled heart_disease
CSV read by pandas).  Compile times are CPU seconds spent inside numba's compiler per function,
exclusive of the functions it compiled on the way (a kernel's callees are listed on their own
lines); ``--top N`` lists the N largest per kind.  The first fit starts a helper process that
compiles the kind's kernels from the other end (``fasttree._compile_ahead``; the table's last
column says so) unless ``--no-ahead`` is given; its compile seconds are not in the table, and the
child waits for it before it ends, so that the next kind starts on idle cores.

``--fill-cache --jobs N`` instead times ``python -m fasttree compile --jobs N`` with an empty
cache, then runs every kind in a new process from that cache and reports what it still had to
compile (nothing, when the command filled the cache).

To compare with an older commit, run that commit's copy of this script from its worktree with
``PYTHONPATH`` set to it (``cd ../before && PYTHONPATH=$PWD python asv_bench/compile_times.py``):
the helpers start in other folders, where an editable install of another tree would otherwise
be the ``fasttree`` they import, and they would compile that tree's kernels, not the child's
(the child then compiles about 30 more functions itself).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def measure(name, top):
    t0 = time.perf_counter()
    import fasttree
    from fasttree._warmup import compile_events, get_kind

    t_import = time.perf_counter() - t0
    kind = get_kind(name)
    data = kind.data()
    t1 = time.perf_counter()
    with compile_events() as records:
        kind.fit(*data)
    t_fit = time.perf_counter() - t1
    cpu = time.process_time()  # the whole process's, from its start: less swayed by a busy host
    from fasttree import _compile_ahead

    helpers = _compile_ahead.wait()
    per_kernel = {}
    for kernel, seconds in records:
        per_kernel[kernel] = per_kernel.get(kernel, 0.0) + seconds
    for kernel, seconds in sorted(per_kernel.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:6.2f} s  {kernel}")
    print(json.dumps({"kind": name, "import": t_import, "fit": t_fit, "cpu": cpu,
                      "compile_cpu": sum(per_kernel.values()), "functions": len(records),
                      "helpers": helpers, "version": fasttree.__version__}))


def cold(name, top, ahead=True):
    """One kind in a child process with an empty cache; the child's JSON result."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache,
               "FASTTREE_COMPILE_AHEAD": "1" if ahead else "0"}
        child = [sys.executable, os.path.abspath(__file__), "--child", name, "--top", str(top)]
        out = subprocess.run(child, env=env, check=True, capture_output=True, text=True).stdout
    lines = out.rstrip("\n").splitlines()
    return json.loads(lines[-1]), lines[:-1]


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fill_cache(jobs):
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        start, cpu = time.perf_counter(), _children_cpu()
        subprocess.run([sys.executable, "-m", "fasttree", "compile", "--jobs", str(jobs)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        filled, cpu = time.perf_counter() - start, _children_cpu() - cpu
        check = ("import time, sys; t = time.perf_counter(); "
                 "from fasttree._warmup import KIND_NAMES, run_kinds; "
                 "n = run_kinds(KIND_NAMES); print(n, time.perf_counter() - t)")
        out = subprocess.run([sys.executable, "-c", check], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
    print(f"python -m fasttree compile --jobs {jobs}: {filled:.1f} s from an empty cache "
          f"({cpu:.1f} s CPU in all its processes); then "
          f"every kind in a new process: {float(out[1]):.1f} s, {out[0]} functions compiled")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", action="append", help="this kind only (repeatable; default: "
                                                        "every kind)")
    parser.add_argument("--top", type=int, default=0, help="kernels listed per kind")
    parser.add_argument("--fill-cache", action="store_true",
                        help="time python -m fasttree compile instead")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(),
                        help="--jobs of python -m fasttree compile (with --fill-cache)")
    parser.add_argument("--no-ahead", action="store_true",
                        help="no helper compiling ahead (FASTTREE_COMPILE_AHEAD=0)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure(args.child, args.top)
        return
    if args.fill_cache:
        fill_cache(args.jobs)
        return
    from fasttree._warmup import KIND_NAMES, get_kind

    names = args.kind or KIND_NAMES
    for name in names:
        get_kind(name)  # an unknown name fails before any child runs
    print("| kind | import + first fit + predict | import | process CPU | compiling (CPU) "
          "| functions compiled | helper |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        result, breakdown = cold(name, args.top, not args.no_ahead)
        total = result["import"] + result["fit"]
        print(f"| {name} | {total:.1f} s | {result['import']:.1f} s | {result['cpu']:.1f} s | "
              f"{result['compile_cpu']:.1f} s | {result['functions']} | "
              f"{'yes' if result['helpers'] else 'no'} |", flush=True)
        for line in breakdown:
            print(line)


if __name__ == "__main__":
    main()
