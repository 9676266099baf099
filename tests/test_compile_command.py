"""``fasttree compile``: its arguments, its list of kinds, and runs on the warm cache (nothing here
compiles from an empty cache: that takes minutes; asv_bench/compile_times.py measures it)."""

import os
import subprocess
import sys
import textwrap

import pytest

from fasttree import _warmup
from fasttree.cli import main as cli_main

#: the kinds of first fit issue 25 asks to measure and fill the cache for
REQUIRED_KINDS = {"classifier", "regressor", "table", "sparse", "hist", "c45", "monotonic",
                  "absolute_error", "several_outputs", "class_weight"}
#: kinds that still compiled kernels of their own after those (measured with a filled cache)
MORE_KINDS = {"multiclass", "poisson", "extra_tree", "ccp_alpha", "forest", "extra_trees",
              "small"}


def run_main(capsys, *args):
    code = cli_main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_names_every_kind_once(capsys):
    code, out, err = run_main(capsys, "compile", "--list")
    assert code == 0 and err == ""
    listed = [line.split()[0] for line in out.splitlines()]
    assert sorted(listed) == sorted(REQUIRED_KINDS | MORE_KINDS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in out.splitlines())  # a description


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "argument --jobs: must be at least 1, got 0"),
    (["--jobs", "two"], "argument --jobs: not an integer: 'two'"),
    (["--kind", "boosting"], "argument --kind: invalid choice: 'boosting'"),
])
def test_bad_arguments_exit_2(capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["compile", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_get_kind_and_fill_cache_refuse_unknown_names():
    with pytest.raises(ValueError, match="unknown kind 'boosting'; the kinds are: classifier"):
        _warmup.get_kind("boosting")
    with pytest.raises(ValueError, match="unknown kind"):
        _warmup.fill_cache(["boosting"], out=None)
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        _warmup.fill_cache(["classifier"], jobs=0, out=None)


@pytest.mark.parametrize("jobs", [1, 2, 3, 10, 20])
def test_partition_gives_each_kind_to_one_process(jobs):
    groups = _warmup.partition(_warmup.KIND_NAMES, jobs)
    assert len(groups) == min(jobs, len(_warmup.KIND_NAMES))
    assert all(groups)
    assert sorted(n for g in groups for n in g) == sorted(_warmup.KIND_NAMES)
    order = list(_warmup.KIND_NAMES)
    assert all(g == sorted(g, key=order.index) for g in groups)


def test_partition_balances_costs():
    """No process gets more than the costliest kind beyond the cheapest process's share."""
    cost = _warmup._COST
    assert sorted(cost) == sorted(_warmup.KIND_NAMES)
    for jobs in (2, 3, 4):
        loads = [sum(cost[n] for n in g) for g in _warmup.partition(_warmup.KIND_NAMES, jobs)]
        assert max(loads) - min(loads) <= max(cost.values())


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "fasttree", *args], capture_output=True,
                          text=True, timeout=600)


def test_one_kind_runs_on_the_warm_cache():
    out = run_cli("compile", "--kind", "classifier", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert "  classifier: " in out.stdout
    assert "filled numba's cache for 1 kind in " in out.stdout


def test_two_processes_then_the_check_pass():
    out = run_cli("compile", "--kind", "classifier", "--kind", "regressor", "--jobs", "2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "process 1: classifier" in lines or "process 1: regressor" in lines
    assert any(line.startswith("process 2: ") for line in lines)
    check = lines.index("check: every kind from the cache")
    # each kind ran in its child and once more in the check pass, which found it in the cache
    assert sum(line.startswith("  classifier: ") for line in lines[:check]) == 1
    assert [line.split(",")[1] for line in lines[check + 1:check + 3]] == [
        " 0 functions compiled"] * 2


@pytest.mark.parametrize("decorator", ["numba.njit", "fasttree._jit.njit"])
def test_locked_saves_write_a_cache_another_process_reads(tmp_path, decorator):
    """numba's cache saves under fasttree's lock, for numba's own cache files and fasttree's
    keyed ones: the entry is written and a new process loads it instead of compiling."""
    (tmp_path / "tiny_kernel.py").write_text(textwrap.dedent(f"""
        import numba
        import fasttree._jit

        @{decorator}(cache=True)
        def double(x):
            return 2 * x
    """))
    script = textwrap.dedent(f"""
        import sys
        from fasttree._warmup import compile_events, lock_cache_saves
        lock_cache_saves({str(tmp_path / "lock")!r})
        sys.path.insert(0, {str(tmp_path)!r})
        import tiny_kernel
        with compile_events() as records:
            assert tiny_kernel.double(21) == 42
        print(len(records))
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    assert [r.stdout.strip() for r in runs] == ["1", "0"]
    assert (tmp_path / "lock").exists()


def test_a_kind_fills_the_cache_for_its_large_fits_too(tmp_path):
    """After the classifier kind, from an empty cache, a fit whose nodes are large enough to be
    moved in row chunks on two threads compiles nothing more (the kinds' data are too small to
    be chunked: the warm-up chunks them on purpose), nor one of a single feature, presorted by
    buckets on two threads."""
    script = textwrap.dedent("""
        import numpy as np
        from fasttree import DecisionTreeClassifier, _warmup
        from fasttree.kernels import partition

        _warmup.run_kinds(["classifier"])
        calls = []
        make = partition._move_chunks
        partition._move_chunks = lambda k_way: calls.append(k_way) or make(k_way)
        rng = np.random.default_rng(0)
        X = rng.normal(size=(80_000, 2))  # levels on two threads (grower.SMALL_LEVEL_WORK)
        y = (X[:, 0] + X[:, 1] > 0).astype(int)
        with _warmup.compile_events() as records:
            DecisionTreeClassifier(max_depth=3, n_jobs=2).fit(X, y)
            # one feature on two threads: presorted by buckets (kernels.presort.by_buckets)
            X1 = rng.normal(size=(200_000, 1))
            DecisionTreeClassifier(max_depth=3, n_jobs=2).fit(X1, X1[:, 0] > 0)
        print(len(calls), len(records))
    """)
    env = {**os.environ, "NUMBA_NUM_THREADS": "2", "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert int(out[0]) > 0  # the large fit moved a node in chunks
    assert out[1] == "0", f"the large fit compiled {out[1]} functions"
