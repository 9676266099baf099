"""Compiling ahead: a process's first fit of a kind whose kernels numba's cache lacks starts a
helper process that compiles the same kernels in the opposite order, so the two meet halfway.

A first fit compiles its kernels one after another on one core (numba compiles a function on the
thread that first calls it, under a process-wide lock).  The kernels a kind of fit compiles, and
the argument types of each, are known in advance: :func:`record_plan` lists them in the order a
tiny fit of that kind (:data:`fasttree._warmup.KINDS`) starts compiling them, the kernels it
calls from Python and the callees compiled on the way that a module names (a large kernel's
scans, sorts and called helpers), each with its caller; the package ships every kind's list
(``data/compile_plans.pkl``, written by ``python -c "from fasttree._compile_ahead import
write_plans; write_plans()"``; ``tests/test_compile_ahead.py`` checks it against the code).  At
the first fit of a kind in a process, :func:`start` looks up its list in numba's cache; when at
least two of them are missing and the process may run on a second CPU, it starts a helper
process (:func:`compile_backwards`), which compiles the list's costliest kernel (or, when that
one has listed callees, those callees from the last), then the rest from its end
(:func:`helper_order`), while the fit compiles it from its start.  Each compiled kernel is
saved to the cache, where the other process finds it (numba reads a function's cache index
again at each new signature, a callee's included; :class:`fasttree._jit._KeyedCacheFile` keeps
two processes' saves apart); a kernel the other has already saved is skipped.  Where they
meet, neither compiles a kernel the other is compiling: each takes an entry by creating its
claim file in a folder of the fit's when numba asks for it (:class:`_Claims`), and a process
finding an entry taken waits for the other's "done" file and loads the kernel from the cache.
Without claims, a fit that reached the helper's kernel compiled it too: after three seconds of
the classifier's compiles were saved elsewhere, its first fit caught up with the helper on its
costliest kernel and took 10.9 s instead of 8.  With callees listed, the two share a large
kernel: the small kind's tree kernel (13.8 s of compile with its callees, all of it the
helper's while the fit waited) is now compiled a callee each.

Nothing the fit computes depends on it: the cache holds the same machine code whoever compiled it.
``FASTTREE_COMPILE_AHEAD=0`` turns it off.  A list that no longer matches the code (another numba,
another platform) only costs the helper's work: the fit compiles what it needs as before.
"""

import atexit
import contextlib
import functools
import importlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: the kinds' kernel lists, shipped with the package
PLANS_FILE = Path(__file__).with_name("data") / "compile_plans.pkl"
#: environment variable; "0" turns compiling ahead off (it is on otherwise)
ENV = "FASTTREE_COMPILE_AHEAD"
#: seconds a fit waits at most for a kernel the helper is compiling (then compiles it itself)
MAX_WAIT = 120.0
#: a helper starts only when at least this many of its kind's kernels are missing from the cache
#: (one for the fit to compile while the helper compiles another)
MIN_MISSING = 2

_asked = set()  # kinds whose first fit in this process has been seen
_helpers = []  # the helpers this process started
_folders = []  # claims folders to remove


def enabled():
    """Whether compiling ahead may start helpers in this process (``FASTTREE_COMPILE_AHEAD``
    unset or not "0", and at least two CPUs to run on)."""
    from ._warmup import default_jobs

    return os.environ.get(ENV, "1") != "0" and default_jobs() >= 2


def start(kind):
    """At the first fit of ``kind`` in this process, start a helper compiling its kernels from
    the end of its list, if the cache lacks at least :data:`MIN_MISSING` of them (a count, not a
    share: after another kind's fit the few kernels left may be the costly ones).

    Parameters
    ----------
    kind : str or None
        A kind of :data:`fasttree._warmup.KIND_NAMES`; None: nothing to do.

    Returns
    -------
    subprocess.Popen or None
        The helper, or None when none was started (a later fit of the kind, turned off, one CPU,
        no list for the kind, the cache warm, or the process could not start).
    """
    if kind is None or kind in _asked:
        return None
    _asked.add(kind)
    if not enabled():
        return None
    try:
        plan = plans().get(kind) or []
        missing = lacking(plan)
        if len(missing) < MIN_MISSING:
            return None
        folder = tempfile.mkdtemp(prefix="fasttree-claims-")
        if not _folders:  # the claims go with the process (a helper still running then
            atexit.register(_remove_folders)  # takes every kernel it comes to)
        _folders.append(folder)
        helper = subprocess.Popen(
            [sys.executable, "-c", "from fasttree._compile_ahead import compile_backwards; "
             f"compile_backwards({kind!r}, {folder!r})"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, ENV: "0"})
        _helpers.append(helper)
        _meet(plan, folder, helper, missing)
    except Exception:  # an optimisation only: whatever fails, the fit compiles as before
        return None
    return helper


def _meet(plan, folder, helper, missing):
    """Make the fit take each entry of ``plan`` the cache lacks (``missing``, see
    :func:`lacking`) when numba first asks for it (a call from Python, or a callee met while
    compiling another kernel), by creating the entry's claim file in ``folder`` before compiling
    it.  An entry the helper has taken it waits for (its "done" file, while the helper runs, at
    most :data:`MAX_WAIT` seconds), compiling meanwhile, when the wait is not inside another
    compile, the next entries nobody has taken (the ones the helper would have come to last),
    then loads it from the cache."""
    claims = _Claims(plan, folder, lambda folder, i: helper.poll() is None, missing)
    claims.install(missing)
    return claims


class _Claims:
    """One process's side of a claims folder that processes compiling one list share: which
    entries it took, and how it compiles a listed kernel numba asks for.

    Each listed dispatcher's ``compile`` (what numba calls for a call from Python and for a
    callee met while typing another kernel) is wrapped: an entry nobody has taken is claimed,
    compiled and marked done; one another process has taken is waited for, then loaded from the
    cache.  No two processes wait on each other: what a process waits for is a callee of every
    kernel it is compiling, and what the other is compiling, a callee of what it waits for (the
    kernels call each other without cycles).

    Parameters
    ----------
    plan : list of (reference, args)
        The shared list; an entry is known by its index.
    folder : str
        The claims folder.
    other_alive : callable
        Whether the process whose claims may be waited for still runs, given the folder and an
        entry it has taken.
    order : list of int
        The entries this process compiles when it has nothing else to do, in its order.
    """

    def __init__(self, plan, folder, other_alive, order):
        self.plan = plan
        self.folder = folder
        self.other_alive = other_alive
        self.order = list(order)
        self.mine = set()
        self.depth = 0  # compiles of this process in progress (a wait inside one compiles nothing)
        self.dispatchers = {}  # entry -> its dispatcher, for the entries installed
        self._index = {}  # id(dispatcher) -> {args: entry}

    def install(self, entries):
        """Wrap the ``compile`` of the dispatchers of ``entries`` (a mapping of entry to its
        dispatcher, see :func:`resolve`)."""
        self.dispatchers.update(entries)
        for i, dispatcher in entries.items():
            known = self._index.get(id(dispatcher))
            if known is None:
                known = self._index[id(dispatcher)] = {}
                dispatcher.compile = functools.partial(self._compile, dispatcher.compile, known)
            known.setdefault(tuple(self.plan[i][1]), i)

    def _compile(self, compile, known, sig):
        # numba asks with a tuple of argument types; anything else is compiled as asked
        i = known.get(sig) if isinstance(sig, tuple) else None
        if i is not None and i not in self.mine:
            if take_claim(self.folder, i):
                return self._own(i, compile, sig)
            self._wait(i)
        return self._run(compile, sig)

    def _own(self, i, compile, sig):
        self.mine.add(i)
        try:
            return self._run(compile, sig)
        finally:
            with contextlib.suppress(OSError):
                os.close(os.open(os.path.join(self.folder, f"done-{i}"), os.O_CREAT))

    def _run(self, compile, sig):
        self.depth += 1
        try:
            return compile(sig)
        finally:
            self.depth -= 1

    def _wait(self, i):
        deadline = time.monotonic() + MAX_WAIT
        done = os.path.join(self.folder, f"done-{i}")
        while (not os.path.exists(done) and self.other_alive(self.folder, i)
               and time.monotonic() < deadline):
            if self.depth > 0 or not self.compile_next():
                time.sleep(0.005)

    def compile_next(self):
        """Compile the first entry of this process's order that nobody has taken and the cache
        lacks; False when none is left."""
        while self.order:
            i = self.order.pop(0)
            dispatcher, args = self.dispatchers.get(i), tuple(self.plan[i][1])
            if (dispatcher is None or is_cached(dispatcher, args)
                    or not take_claim(self.folder, i)):
                continue
            with contextlib.suppress(Exception):  # the fit compiles it again if it needs it
                self._own(i, dispatcher.compile, args)
            return True
        return False


def take_claim(folder, i):
    """Create entry ``i``'s claim file in ``folder``, holding this process's id; False when
    another process has."""
    try:
        handle = os.open(os.path.join(folder, f"claim-{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    except OSError:  # the folder is gone (the helpers waited for): nobody else compiles
        return True
    try:
        os.write(handle, str(os.getpid()).encode())
    finally:
        os.close(handle)
    return True


def claimer_running(folder, i):
    """Whether the process that took entry ``i`` in ``folder`` still runs (True when it cannot
    tell: a claim still being written, or no way to ask the system without harm)."""
    try:
        with open(os.path.join(folder, f"claim-{i}")) as handle:
            pid = int(handle.read())
    except (OSError, ValueError):
        return True
    if os.name != "posix":  # os.kill(pid, 0) ends the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    try:  # a zombie (ended, not yet waited for by its parent) runs no more
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def wait():
    """Wait until every helper this process started has finished (benchmarks, and a build step
    that fills the cache this way before it ends); returns how many there were."""
    n = len(_helpers)
    while _helpers:
        _helpers.pop().wait()
    _remove_folders()
    return n


def _remove_folders():
    while _folders:
        shutil.rmtree(_folders.pop(), ignore_errors=True)


@contextlib.contextmanager
def turned_off():
    """Start no helper inside the block, nor in processes started from it (``fasttree compile``
    fills the cache with every kind itself)."""
    before = os.environ.get(ENV)
    os.environ[ENV] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before


@functools.lru_cache(maxsize=1)
def _shipped():
    try:
        with open(PLANS_FILE, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # missing, or pickled by a numba whose types this one cannot read
        return {}


def plans():
    """Every kind's list of ``(dispatcher reference, argument types)``, in first-call order; {}
    when the shipped file cannot be read."""
    return _shipped().get("plans", {})


def plan_seconds():
    """Every kind's seconds of compile per entry of its list, as :func:`write_plans` measured
    them (they order the helper's work, :func:`helper_order`); {} when unknown."""
    return _shipped().get("seconds", {})


def plan_callers(kind):
    """Each entry's caller in ``kind``'s list (the entry whose compile it was part of), -1 for
    a kernel called from Python; None when unknown."""
    return _shipped().get("callers", {}).get(kind)


def helper_order(n_entries, seconds=None, callers=None):
    """The order in which a helper takes a list's entries: the costliest after the first (the
    fit takes the first at once), or that one's listed callees from the last when it has any,
    then the others from the end.

    The fit needs its kernels in list order, so the helper's share is the kernels it needs
    last; starting with the costliest keeps that one from being where the two meet, with the
    fit waiting for all of it (the classifier's search kernel, 3.6 of its 13 s of compile:
    8.5 -> 7.3 s cold start); a kernel's cost counts its listed callees' (absolute error's
    search: 2.6 s of its own, 6 s of scans, came after a 3 s kernel without callees, and the
    fit compiled all of it alone: 9.4 -> 13 s cold start).  A kernel compiles its own part after
    its callees (it types its calls by compiling them), so where its listed callees take longer
    than its own part (the small kind's tree kernel: 9.6 against 4.0 s) the helper takes those
    callees, from the one the fit will reach last, and the two share them; where they do not
    (the several-outputs search: 0.8 against 28 s), the whole kernel.  ``seconds``: the
    entries' compile times (each without its listed callees), or None (the list from its end);
    ``callers``: see :func:`plan_callers`."""
    order = list(reversed(range(n_entries)))
    if seconds is None or len(seconds) != n_entries or n_entries <= 2:
        return order
    if callers is None or len(callers) != n_entries:
        callers = [-1] * n_entries
    callees = [_listed_callees(i, callers) for i in range(n_entries)]
    # costliest with its listed callees: a kernel whose own part is small but whose callees are
    # large (a search calling its scans) is one block of the fit's time all the same
    costliest = max(range(1, n_entries),
                    key=lambda i: seconds[i] + sum(seconds[j] for j in callees[i]))
    first = [costliest]
    if sum(seconds[i] for i in callees[costliest]) > seconds[costliest]:
        first = sorted(callees[costliest], reverse=True)
    return first + [i for i in order if i not in first]


def _listed_callees(entry, callers):
    """The entries compiled within ``entry``'s compile: listed after it, called by it or by
    one of them (a callee's compile starts after its caller's)."""
    below = {entry}
    for i in range(entry + 1, len(callers)):
        if callers[i] in below:
            below.add(i)
    return below - {entry}


def dispatcher_of(reference):
    """The kernel a plan entry names: ``("function", module, qualname)``, ``("specialized",
    module, factory qualname, key)`` for a kernel a factory makes (:func:`fasttree._jit.
    specialized`), or ``("called", module, qualname)`` for an inlined helper's copy compiled on
    its own (:func:`fasttree._jit.called_copy`)."""
    module = importlib.import_module(reference[1])
    target = module
    for part in reference[2].split("."):
        target = getattr(target, part)
    if reference[0] == "specialized":
        from ._jit import specialized

        return specialized(target, *reference[3])
    if reference[0] == "called":
        from ._jit import called_copy

        return called_copy(target)
    return target


def reference_of(dispatcher, made=None):
    """The plan reference that names ``dispatcher`` (see :func:`dispatcher_of`), or None for a
    function no module names (numba's own overloads, closures).  ``made``: :func:`_factories`'
    map, when already built."""
    from . import _jit

    if made is None:
        made = _factories()
    if id(dispatcher) in made:
        factory, key = made[id(dispatcher)]
        reference = ("specialized", factory.__module__, factory.__qualname__, key)
    else:
        original = _jit.original_of_copy(dispatcher)
        func = (original or dispatcher).py_func
        reference = ("called" if original else "function", func.__module__, func.__qualname__)
    try:
        return reference if dispatcher_of(reference) is dispatcher else None
    except Exception:
        return None


def _factories():
    """The factory and key of every kernel a factory has made, by the kernel's id."""
    from ._jit import _SPECIALIZED

    return {id(kernel): (factory, key) for (factory, key), kernel in _SPECIALIZED.items()}


def is_cached(dispatcher, args):
    """Whether numba's on-disk cache holds ``dispatcher`` compiled for ``args`` (numba's private
    cache API: False whenever it cannot tell)."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(tuple(args), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:
        return False


def resolve(plan):
    """Each entry of ``plan`` that names a kernel the code still has, with its dispatcher (an
    entry older than the code is left out: the fits compile what they need)."""
    entries = {}
    for i, (reference, _) in enumerate(plan):
        with contextlib.suppress(Exception):
            entries[i] = dispatcher_of(reference)
    return entries


def lacking(plan):
    """The entries of ``plan`` that numba's cache lacks, with their dispatchers (see
    :func:`resolve`); none when the kernels are not cached on disk (no writable cache location,
    or ``NUMBA_DISABLE_JIT``): a helper could not share its work."""
    entries = resolve(plan)
    if not all(hasattr(getattr(d, "_cache", None), "_cache_file") for d in entries.values()):
        return {}
    return {i: d for i, d in entries.items() if not is_cached(d, plan[i][1])}


def compile_backwards(kind, folder=None):
    """The helper's work: compile ``kind``'s kernels in :func:`helper_order` (the costliest,
    then from the last to the first), skipping those already in the cache (the fit's, once the
    two have met) and, given the fit's claims ``folder``, those it has taken; a callee the fit
    has taken is waited for while the fit runs; each one compiled is marked done there."""
    plan = plans().get(kind, ())
    order = helper_order(len(plan), plan_seconds().get(kind), plan_callers(kind))
    if folder is None:  # alone: claims nobody else reads
        with tempfile.TemporaryDirectory() as alone:
            _share(plan, alone, lambda folder, i: False, order)
        return
    parent = os.getppid()
    _share(plan, folder, lambda folder, i: os.getppid() == parent, order)


def compile_claimed(kinds, folder):
    """Compile the kernels of every kind's list (each once, in the kinds' order), taking each
    one by creating its claim file in ``folder`` first: processes given the same kinds and folder
    (``fasttree compile --jobs N``) share the lists without compiling a kernel twice."""
    entries = []
    for kind in kinds:
        for entry in plans().get(kind, ()):
            if entry not in entries:
                entries.append(entry)
    _share(entries, folder, claimer_running, range(len(entries)))


def _share(plan, folder, other_alive, order):
    """Compile every entry of ``plan`` nobody else takes, in ``order``, through claims."""
    claims = _Claims(plan, folder, other_alive, order)
    claims.install(resolve(plan))
    while claims.compile_next():
        pass


def record_plan(kind):
    """The kernels a tiny fit of ``kind`` compiles, with their argument types, in the order
    their compiles start, when numba's cache is empty (run it with a new ``NUMBA_CACHE_DIR``):
    those it calls from Python and the callees compiled on the way that a module names (so
    that two processes can share a large kernel's callees); and the CPU seconds each took to
    compile, without its listed callees."""
    from numba.core import event

    from . import _warmup

    fit = _warmup.get_kind(kind)
    data = fit.data()
    calls, parents, seconds, open_calls = [], [], [], []

    class Compiles(event.Listener):
        def on_start(self, ev):
            parents.append(open_calls[-1][0] if open_calls else -1)
            calls.append((ev.data["dispatcher"], tuple(ev.data["args"])))
            seconds.append(0.0)
            open_calls.append([len(calls) - 1, time.process_time(), 0.0])

        def on_end(self, ev):
            i, start, inner = open_calls.pop()
            spent = time.process_time() - start
            seconds[i] = spent - inner
            if open_calls:
                open_calls[-1][2] += spent

    listener = Compiles()
    event.register("numba:compile", listener)
    try:
        fit.fit(*data)
    finally:
        event.unregister("numba:compile", listener)
    made = _factories()
    references = [reference_of(dispatcher, made) for dispatcher, _ in calls]
    for i in reversed(range(len(calls))):  # an unnamed callee's seconds go to its caller's
        if references[i] is None and parents[i] >= 0:
            seconds[parents[i]] += seconds[i]
    kept = [i for i in range(len(calls)) if references[i] is not None]
    position = {i: k for k, i in enumerate(kept)}
    callers = []
    for i in kept:  # the nearest listed caller
        caller = parents[i]
        while caller >= 0 and caller not in position:
            caller = parents[caller]
        callers.append(position.get(caller, -1))
    return ([(references[i], calls[i][1]) for i in kept], [seconds[i] for i in kept], callers)


def write_plans(kinds=None, path=PLANS_FILE):
    """Record the plans of ``kinds`` (default: every kind), each in a new process with an empty
    cache, into ``path`` (the other kinds' plans already there are kept)."""
    from ._warmup import KIND_NAMES

    shipped = {"plans": {}, "seconds": {}, "callers": {}}
    if kinds is not None and os.path.exists(path):
        with open(path, "rb") as handle:
            shipped = {**shipped, **pickle.load(handle)}
    for kind in kinds or KIND_NAMES:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            result = os.path.join(out, "plan.pkl")
            code = ("from fasttree._compile_ahead import _main; "
                    f"_main(['--record', {kind!r}, {result!r}])")
            subprocess.run([sys.executable, "-c", code], check=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": cache, ENV: "0"})
            with open(result, "rb") as handle:
                (shipped["plans"][kind], shipped["seconds"][kind],
                 shipped["callers"][kind]) = pickle.load(handle)
        print(f"{kind}: {len(shipped['plans'][kind])} kernels, "
              f"{sum(shipped['seconds'][kind]):.1f} s", flush=True)
    with open(path, "wb") as handle:
        pickle.dump(shipped, handle, protocol=4)
    _shipped.cache_clear()


def _main(argv):
    """``["--record", kind, path]``: :func:`record_plan` pickled to ``path`` (a child of
    :func:`write_plans`)."""
    if argv[:1] == ["--record"]:
        with open(argv[2], "wb") as handle:
            pickle.dump(record_plan(argv[1]), handle, protocol=4)
