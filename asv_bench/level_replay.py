"""One level's numeric search, captured from a fit of a fit_times.py case and replayed alone: a
before/after comparison of the search kernels finer than whole fits (whose times on a shared VM
vary by more than the 5 % in question).

    python asv_bench/level_replay.py capture B5 --min-nodes 16 --out levels/
    git worktree add ../fasttree-before <commit>
    for i in 1 2; do
        python asv_bench/level_replay.py replay levels/B5-164.pkl --fasttree ../fasttree-before
        python asv_bench/level_replay.py replay levels/B5-164.pkl --fasttree .
    done

``capture`` fits the case once and pickles the arguments of every level's call of the public
``find_best_splits_classification`` (or ``_regression``) with at least ``--min-nodes`` nodes, one
file per level named by the case and its node count.  ``replay`` imports fasttree from
``--fasttree`` (a worktree), calls the kernel on those arguments with a fresh split record (or
its ten fields, for versions before the record argument) and prints the best of ``--calls``
calls in milliseconds, on ``--threads`` threads.  Timings, not tests.
"""

import argparse
import os
import pickle
import sys
import time

SEARCHES = ("find_best_splits_classification", "find_best_splits_regression")


def capture(case, min_nodes, out):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fit_times
    from fasttree import splitter

    data, estimator, _ = fit_times.CASES[case]
    X, y = data()
    os.makedirs(out, exist_ok=True)

    def recording(name, kernel):
        def search(*args):
            n_nodes = args[4].shape[0]
            if n_nodes >= min_nodes:
                path = os.path.join(out, f"{case.replace(' ', '_')}-{n_nodes}.pkl")
                with open(path, "wb") as f:
                    pickle.dump((name, args[:-1]), f)  # all but the record it fills
                print(path)
            return kernel(*args)
        return search

    for name in SEARCHES:  # the names the splitter calls
        setattr(splitter, name, recording(name, getattr(splitter, name)))
    estimator().fit(X, y)


def replay(path, calls, threads):
    import numba

    import fasttree.kernels as kernels

    with open(path, "rb") as f:
        name, args = pickle.load(f)
    kernel = getattr(kernels, name)
    numba.set_num_threads(threads)
    shape = args[7].shape  # feature_mask: (n_features, n_segments)
    try:
        kernel(*args, kernels.new_split_record(*shape))  # compiles, or loads from the cache
        search = kernel
    except TypeError:  # a version from before the SplitRecord argument: its ten fields
        def search(*given):
            return kernel(*given[:-1], *given[-1])
    best = float("inf")
    for _ in range(calls):
        record = kernels.new_split_record(*shape)
        start = time.perf_counter()
        search(*args, record)
        best = min(best, time.perf_counter() - start)
    print(f"{kernels.__file__.rsplit('/fasttree/', 1)[0]} {os.path.basename(path)} "
          f"{best * 1e3:.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cap = commands.add_parser("capture", help="pickle a case's levels")
    cap.add_argument("case", help="a case of fit_times.py (B3, B5, ...)")
    cap.add_argument("--min-nodes", type=int, default=16)
    cap.add_argument("--out", default="levels")
    rep = commands.add_parser("replay", help="time one captured level")
    rep.add_argument("path")
    rep.add_argument("--fasttree", help="a folder to import fasttree from (a worktree)")
    rep.add_argument("--calls", type=int, default=40)
    rep.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.command == "capture":
        capture(args.case, args.min_nodes, args.out)
    else:
        if args.fasttree:
            sys.path.insert(0, os.path.abspath(args.fasttree))
        replay(args.path, args.calls, args.threads)


if __name__ == "__main__":
    main()
