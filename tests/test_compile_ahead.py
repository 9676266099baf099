"""Compiling ahead (fasttree._compile_ahead): the shipped kernel lists match the code, a helper
fills the cache with its kind's kernels, fits start helpers only when and as documented, and a fit
and its helper never compile one kernel both.

The test session turns compiling ahead off (conftest.py); these tests turn it on where they need it.
"""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import fasttree
from fasttree import _compile_ahead as compile_ahead
from fasttree._warmup import KIND_NAMES

pd = pytest.importorskip("pandas")


def _run(code, cache, **env):
    """Run ``code`` in a new process whose numba cache is ``cache``; returns its stdout."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "NUMBA_CACHE_DIR": str(cache), **env},
                            timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_every_kind_has_a_plan_of_kernels_that_exist():
    plans = compile_ahead.plans()
    assert sorted(plans) == sorted(KIND_NAMES)
    for kind, plan in plans.items():
        assert plan, kind
        for reference, args in plan:
            dispatcher = compile_ahead.dispatcher_of(reference)
            assert hasattr(dispatcher, "compile"), (kind, reference)
            assert isinstance(args, tuple)


def test_no_kind_compiles_a_kernel_twice_for_one_call():
    """No kind's list holds a kernel twice for argument types that differ only where numba met
    a constant (``Literal[int](0)`` against ``int64``: typing resolves a call as soon as a
    variable's first value is known, before a loop widens it) or a parallel loop's unsigned
    index (``uint64`` against ``int64``): each is a whole compile more of that kernel.  Pass
    ``np.int64(...)`` at the call, or give the variable a typed first value
    (``docs/design.rst``)."""
    from numba.core import types

    def widened(t):
        t = types.unliteral(t)
        return types.int64 if t == types.uint64 else t

    twice = []
    for kind, plan in compile_ahead.plans().items():
        seen = {}
        for reference, args in plan:
            call = (reference, tuple(widened(t) for t in args))
            if call in seen:
                where = [(i, str(a), str(b)) for i, (a, b) in enumerate(zip(seen[call], args))
                         if a != b]
                twice.append((kind, reference[2], where))
            seen[call] = args
    assert not twice, "\n".join(map(str, twice))


def test_the_classifier_plan_is_what_its_first_fit_compiles(tmp_path):
    """Recorded again from the code in an empty cache, the classifier kind's list is the shipped
    one (after a kernel's signature changes: ``python -m fasttree._compile_ahead
    --write-plans``)."""
    out = tmp_path / "plan.pkl"
    _run(f"from fasttree._compile_ahead import _main; _main(['--record', 'classifier', "
         f"{str(out)!r}])", tmp_path / "cache", FASTTREE_COMPILE_AHEAD="0")
    import pickle

    with open(out, "rb") as handle:
        recorded, seconds, callers = pickle.load(handle)
    assert recorded == compile_ahead.plans()["classifier"]
    assert len(seconds) == len(recorded) and min(seconds) > 0
    assert callers == compile_ahead.plan_callers("classifier")


def test_a_plan_lists_the_callees_two_processes_can_share():
    """The small kind's list holds its tree kernel's callees (the helpers it calls rather than
    inlines, the scans, the sorts), each after its caller; a kernel called from Python has no
    caller."""
    plan = compile_ahead.plans()["small"]
    callers = compile_ahead.plan_callers("small")
    assert len(callers) == len(plan)
    assert all(-1 <= caller < i for i, caller in enumerate(callers))
    tree = next(i for i, (reference, _) in enumerate(plan) if reference[2] == "_best_tree")
    assert callers[tree] == -1
    below = {i for i, caller in enumerate(callers) if caller == tree}
    names = {plan[i][0][2] for i in below}
    assert {"_split_node", "_gather", "_make_class_scan"} <= names
    assert {plan[i][0][0] for i in below if plan[i][0][2] == "_split_node"} == {"called"}


def test_a_helper_leaves_nothing_for_the_fit_to_compile(tmp_path):
    """After the helper's work for the classifier kind, that kind's first fit in a new process
    loads every kernel from the cache."""
    cache = tmp_path / "cache"
    _run("from fasttree._compile_ahead import compile_backwards; "
         "compile_backwards('classifier')", cache, FASTTREE_COMPILE_AHEAD="0")
    printed = _run(
        "from fasttree import _warmup\n"
        "kind = _warmup.get_kind('classifier')\n"
        "data = kind.data()\n"
        "with _warmup.compile_events() as records:\n"
        "    kind.fit(*data)\n"
        "print(len(records))\n", cache, FASTTREE_COMPILE_AHEAD="0")
    assert int(printed) == 0


class _FakePopen:
    started = []

    def __init__(self, command, **kwargs):
        self.started.append((command, kwargs["env"]))


def _all_lacking(plan):
    return dict.fromkeys(range(len(plan)))


@pytest.fixture
def helpers(monkeypatch, tmp_path):
    """Helpers that would start, recorded instead: (command, environment) of each."""
    monkeypatch.setenv(compile_ahead.ENV, "1")
    monkeypatch.setattr(compile_ahead, "_asked", set())
    monkeypatch.setattr(compile_ahead, "enabled", lambda: os.environ[compile_ahead.ENV] != "0")
    monkeypatch.setattr(compile_ahead.subprocess, "Popen", _FakePopen)
    monkeypatch.setattr(compile_ahead, "_meet", lambda plan, folder, helper, missing: None)
    monkeypatch.setattr(compile_ahead, "_helpers", [])
    monkeypatch.setattr(compile_ahead, "_folders", [])
    monkeypatch.setattr(compile_ahead.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    _FakePopen.started = []
    return _FakePopen.started


def test_a_cold_kind_starts_one_helper_per_process(helpers, monkeypatch):
    monkeypatch.setattr(compile_ahead, "lacking", _all_lacking)
    assert compile_ahead.start("classifier") is not None
    assert compile_ahead.start("classifier") is None  # its first fit only
    (command, env), = helpers
    assert command[0] == sys.executable and "compile_backwards('classifier', '" in command[-1]
    assert env[compile_ahead.ENV] == "0"  # the helper's own fits start no helper


@pytest.mark.parametrize("missing, started", [(0, False), (1, False), (2, True)])
def test_a_helper_starts_only_when_two_kernels_are_missing(helpers, monkeypatch, missing,
                                                           started):
    monkeypatch.setattr(compile_ahead, "lacking", lambda plan: dict.fromkeys(range(missing)))
    assert (compile_ahead.start("regressor") is not None) == started


def test_the_environment_variable_turns_it_off(helpers, monkeypatch):
    monkeypatch.setattr(compile_ahead, "lacking", _all_lacking)
    monkeypatch.setenv(compile_ahead.ENV, "0")
    assert compile_ahead.start("classifier") is None
    assert compile_ahead.start(None) is None
    assert compile_ahead.start("no such kind") is None
    assert not helpers


def test_the_cache_tells_which_kernels_are_missing(tmp_path):
    """An empty cache misses every kernel of a list; after the classifier kind's fit, none of
    the classifier's and only the table's own of the table's."""
    check = ("from fasttree import _compile_ahead as c\n"
             "plans = c.plans()\n"
             "print(len(c.lacking(plans['classifier'])), len(c.lacking(plans['table'])))")
    cache = tmp_path / "cache"
    plans = compile_ahead.plans()
    assert _run(check, cache).split() == [str(len(plans["classifier"])), str(len(plans["table"]))]
    _run("from fasttree import _warmup\n"
         "kind = _warmup.get_kind('classifier')\n"
         "kind.fit(*kind.data())", cache, FASTTREE_COMPILE_AHEAD="0")
    shared = sum(entry in plans["classifier"] for entry in plans["table"])
    assert _run(check, cache).split() == ["0", str(len(plans["table"]) - shared)]


@pytest.mark.parametrize("make, X_kind, kind", [
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "array", "classifier"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "table", "table"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "sparse", "sparse"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2, splitter="hist"), "array", "hist"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2, monotonic_cst=[1, 0]), "array",
     "monotonic"),
    (lambda: fasttree.C45Classifier(), "array", "c45"),
    (lambda: fasttree.ExtraTreeClassifier(max_depth=2), "array", "extra_tree"),
    (lambda: fasttree.DecisionTreeRegressor(max_depth=2), "array", "regressor"),
    (lambda: fasttree.DecisionTreeRegressor(max_depth=2), "table", "table"),
    (lambda: fasttree.DecisionTreeRegressor(criterion="poisson", max_depth=2), "array",
     "poisson"),
    (lambda: fasttree.DecisionTreeRegressor(criterion="absolute_error", max_depth=2), "array",
     "absolute_error"),
    (lambda: fasttree.RandomForestClassifier(n_estimators=2, max_depth=2), "array", "forest"),
    (lambda: fasttree.ExtraTreesRegressor(n_estimators=2, max_depth=2), "array", "extra_trees"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "two outputs", "several_outputs"),
    (lambda: fasttree.DecisionTreeRegressor(max_depth=2), "two outputs", "several_outputs"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2, class_weight="balanced"), "array",
     "class_weight"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "weighted", "class_weight"),
    (lambda: fasttree.DecisionTreeClassifier(max_depth=2), "three classes", "multiclass"),
])
def test_each_fit_asks_for_the_nearest_kind(monkeypatch, make, X_kind, kind):
    asked = []
    monkeypatch.setattr(compile_ahead, "start", asked.append)
    rng = np.random.default_rng(0)
    X = rng.random((40, 2))
    y = (X[:, 0] > 0.5).astype(int) + 1
    fit_params = {}
    if X_kind == "two outputs":
        y = np.column_stack([y, 3 - y])
    elif X_kind == "weighted":
        fit_params["sample_weight"] = rng.random(40)
    elif X_kind == "three classes":
        y = np.digitize(X[:, 0], [0.3, 0.6])
    elif X_kind == "table":
        X = pd.DataFrame({"a": X[:, 0], "b": np.where(X[:, 1] > 0.5, "yes", "no")})
    elif X_kind == "sparse":
        import scipy.sparse

        X = scipy.sparse.csr_matrix(X)
    make().fit(X, y, **fit_params)
    assert asked == [kind]
    assert kind in KIND_NAMES


def test_no_helper_without_an_on_disk_cache(tmp_path):
    """Kernels compiled without a disk cache (here: NUMBA_DISABLE_JIT) leave a helper nothing to
    share."""
    printed = _run("from fasttree import _compile_ahead as c\n"
                   "print(len(c.lacking(c.plans()['classifier'])))", tmp_path / "cache",
                   NUMBA_DISABLE_JIT="1")
    assert int(printed) == 0


def test_processes_sharing_a_folder_compile_each_kernel_once(monkeypatch, tmp_path):
    """compile_claimed (fasttree compile --jobs N): every entry of the kinds' lists, once over
    the processes given one folder, an entry two kinds share once, a claimed one by nobody else."""
    compiled = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def compile(self, args):
            compiled.append((self.name, args))

    monkeypatch.setattr(compile_ahead, "plans", lambda: {
        "a": [(("function", "m", "x"), (1,)), (("function", "m", "y"), (2,))],
        "b": [(("function", "m", "y"), (2,)), (("function", "m", "z"), (3,))]})
    monkeypatch.setattr(compile_ahead, "dispatcher_of", lambda reference: Kernel(reference[2]))
    monkeypatch.setattr(compile_ahead, "is_cached", lambda dispatcher, args: False)
    (tmp_path / "claim-2").touch()  # z: taken by another process
    compile_ahead.compile_claimed(["a", "b"], tmp_path)
    compile_ahead.compile_claimed(["a", "b"], tmp_path)  # a second process, later
    assert compiled == [("x", (1,)), ("y", (2,))]


class _Helper:
    """A helper process as _meet sees it: running until ``finished``."""

    def __init__(self):
        self.finished = False

    def poll(self):
        return 0 if self.finished else None


def _fake_kernels(monkeypatch, names):
    """A plan of kernels named ``names`` whose compiles are recorded (the list returned) and
    never cached."""
    compiled = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def compile(self, args):
            compiled.append(self.name)

    monkeypatch.setattr(compile_ahead, "plans", lambda: {"k": [
        (("function", "m", name), (i,)) for i, name in enumerate(names)]})
    monkeypatch.setattr(compile_ahead, "dispatcher_of", lambda reference: Kernel(reference[2]))
    monkeypatch.setattr(compile_ahead, "is_cached", lambda dispatcher, args: False)
    return compiled


def test_the_helper_skips_what_the_fit_took_and_marks_what_it_compiled(monkeypatch, tmp_path):
    compiled = _fake_kernels(monkeypatch, "abc")
    (tmp_path / "claim-1").touch()  # the fit's
    compile_ahead.compile_backwards("k", str(tmp_path))
    assert compiled == ["c", "a"]
    assert sorted(p.name for p in tmp_path.glob("done-*")) == ["done-0", "done-2"]


def test_the_helper_starts_with_the_costliest_kernel_after_the_first():
    assert compile_ahead.helper_order(5) == [4, 3, 2, 1, 0]
    assert compile_ahead.helper_order(5, [9.0, 1.0, 5.0, 2.0, 3.0]) == [2, 4, 3, 1, 0]
    assert compile_ahead.helper_order(3, [1.0, 2.0]) == [2, 1, 0]  # seconds of another list
    assert sorted(compile_ahead.helper_order(19, list(range(19)))) == list(range(19))
    # the costliest (2) calls 3 and 4, and 5 through 4: those, from the last, then the rest
    # from the end, where they take longer than its own part; else the costliest first
    seconds = [9.0, 1.0, 5.0, 2.0, 2.0, 2.0, 3.0]
    callers = [-1, -1, -1, 2, 2, 4, -1]
    assert compile_ahead.helper_order(7, seconds, callers) == [5, 4, 3, 6, 2, 1, 0]
    assert compile_ahead.helper_order(7, seconds, [-1] * 7) == [2, 6, 5, 4, 3, 1, 0]
    # a kernel's cost counts its listed callees': 2 (1 s, callees 3 and 4: 6 s) outweighs 1
    # (4 s), and its callees are taken first
    assert compile_ahead.helper_order(5, [9.0, 4.0, 1.0, 3.0, 3.0], [-1, -1, -1, 2, 2]) == [
        4, 3, 2, 1, 0]
    seconds[2] = 6.0
    assert compile_ahead.helper_order(7, seconds, callers) == [2, 6, 5, 4, 3, 1, 0]


def test_the_helper_compiles_in_its_order(monkeypatch, tmp_path):
    compiled = _fake_kernels(monkeypatch, "abcd")
    monkeypatch.setattr(compile_ahead, "plan_seconds", lambda: {"k": [5.0, 3.0, 1.0, 2.0]})
    (tmp_path / "claim-0").touch()  # the fit's
    compile_ahead.compile_backwards("k", str(tmp_path))
    assert compiled == ["b", "d", "c"]


class _Kernel:
    """A dispatcher as the claims see it: its compiles recorded in ``events``."""

    def __init__(self, name, events, on_compile=None):
        self.name = name
        self.events = events
        self.on_compile = on_compile

    def compile(self, args):
        self.events.append(("compile", self.name))
        if self.on_compile is not None:
            self.on_compile()


def _claims(monkeypatch, tmp_path, names, helper, order=()):
    """A fit's claims over a list of ``names`` (kernels never cached), returning the kernels."""
    events = []
    kernels = {name: _Kernel(name, events) for name in names}
    plan = [(("function", "m", name), (i,)) for i, name in enumerate(names)]
    monkeypatch.setattr(compile_ahead, "dispatcher_of", lambda reference: kernels[reference[2]])
    monkeypatch.setattr(compile_ahead, "is_cached", lambda dispatcher, args: False)
    claims = compile_ahead._Claims(plan, str(tmp_path), lambda folder, i: helper.poll() is None,
                                   order)
    claims.install(compile_ahead.resolve(plan))
    return kernels, events


def test_a_fit_waits_for_the_helper_s_kernel_and_compiles_the_untaken(monkeypatch, tmp_path):
    """At a kernel the helper has taken the fit compiles the entries nobody has taken, then
    waits for the helper's "done" file and loads it; a kernel nobody has taken it claims,
    compiles and marks done."""
    kernels, events = _claims(monkeypatch, tmp_path, "abcd", _Helper(), order=[0, 1, 2, 3])
    kernels["c"].on_compile = lambda: (tmp_path / "done-1").touch()  # meanwhile, b is done
    (tmp_path / "claim-1").touch()  # the helper's, being compiled
    (tmp_path / "claim-3").touch()  # the helper's, done
    (tmp_path / "done-3").touch()
    kernels["a"].compile((0,))
    kernels["b"].compile((1,))
    assert events == [("compile", "a"), ("compile", "c"), ("compile", "b")]
    assert {p.name for p in tmp_path.glob("done-*")} == {"done-0", "done-1", "done-2", "done-3"}
    kernels["d"].compile((3,))  # done by the helper: loaded at once
    assert events[-1] == ("compile", "d")


def test_a_wait_inside_a_compile_compiles_nothing_else(monkeypatch, tmp_path):
    """A callee the other process has taken, met while compiling a kernel, is waited for without
    compiling other entries meanwhile (the kernel being compiled may be one of their callers)."""
    kernels, events = _claims(monkeypatch, tmp_path, "abc", _Helper(), order=[2])
    time_out = []

    def callee_done():
        time_out.append(True)
        (tmp_path / "done-1").touch()

    monkeypatch.setattr(compile_ahead.time, "sleep", lambda seconds: callee_done())
    kernels["a"].on_compile = lambda: kernels["b"].compile((1,))  # a calls b
    (tmp_path / "claim-1").touch()  # b: the helper's
    kernels["a"].compile((0,))
    assert events == [("compile", "a"), ("compile", "b")]  # c untouched
    assert time_out and not (tmp_path / "claim-2").exists()


def test_a_fit_stops_waiting_when_the_helper_is_gone(monkeypatch, tmp_path):
    helper = _Helper()
    kernels, events = _claims(monkeypatch, tmp_path, "a", helper)
    (tmp_path / "claim-0").touch()  # taken by a helper that then died
    helper.finished = True
    kernels["a"].compile((7,))
    assert events == [("compile", "a")]


def test_a_list_older_than_the_code_only_loses_its_stale_entries(monkeypatch, tmp_path):
    """An entry naming a kernel the code no longer has is left out; the others are claimed."""
    events = []
    kernel = _Kernel("a", events)

    def dispatcher_of(reference):
        if reference[2] == "gone":
            raise AttributeError(reference[2])
        return kernel

    monkeypatch.setattr(compile_ahead, "dispatcher_of", dispatcher_of)
    monkeypatch.setattr(compile_ahead, "is_cached", lambda dispatcher, args: False)
    plan = [(("function", "m", "gone"), (0,)), (("function", "m", "a"), (1,))]
    claims = compile_ahead._meet(plan, str(tmp_path), _Helper(), compile_ahead.resolve(plan))
    assert claims.order == [1]
    kernel.compile((1,))
    assert events == [("compile", "a")]
    assert (tmp_path / "claim-1").exists() and (tmp_path / "done-1").exists()


def test_a_claim_tells_whether_its_process_still_runs(tmp_path):
    """compile_claimed (fasttree compile --jobs N) waits for a sibling's claim only while the
    sibling runs: the claim holds its process id."""
    assert compile_ahead.take_claim(str(tmp_path), 0)
    assert (tmp_path / "claim-0").read_text() == str(os.getpid())
    assert compile_ahead.claimer_running(str(tmp_path), 0)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / "claim-1").write_text(str(ended.pid))
    assert not compile_ahead.claimer_running(str(tmp_path), 1)
    if os.path.exists("/proc/self/stat"):
        zombie = subprocess.Popen([sys.executable, "-c", "pass"])
        while _state(zombie.pid) != "Z":  # ended, not yet waited for
            time.sleep(0.01)
        (tmp_path / "claim-2").write_text(str(zombie.pid))
        assert not compile_ahead.claimer_running(str(tmp_path), 2)
        zombie.wait()
    (tmp_path / "claim-3").touch()  # being written
    assert compile_ahead.claimer_running(str(tmp_path), 3)


def _state(pid):
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rpartition(")")[2].split()[0]


def test_processes_sharing_a_folder_do_not_wait_for_one_that_ended(monkeypatch, tmp_path):
    """A callee another process of compile_claimed took before it ended is compiled at once."""
    events = []
    kernels = {name: _Kernel(name, events) for name in "ab"}
    monkeypatch.setattr(compile_ahead, "plans", lambda: {
        "k": [(("function", "m", name), (i,)) for i, name in enumerate("ab")]})
    monkeypatch.setattr(compile_ahead, "dispatcher_of", lambda reference: kernels[reference[2]])
    monkeypatch.setattr(compile_ahead, "is_cached", lambda dispatcher, args: False)
    monkeypatch.setattr(compile_ahead.time, "sleep", _no_wait)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / "claim-1").write_text(str(ended.pid))  # b: taken by a process now gone
    kernels["a"].on_compile = lambda: kernels["b"].compile((1,))  # a calls b
    compile_ahead.compile_claimed(["k"], str(tmp_path))
    assert events == [("compile", "a"), ("compile", "b")]


def _no_wait(seconds):
    raise AssertionError("waited for a process that ended")
