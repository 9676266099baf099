"""Compiling ahead: a process's first fit of a kind whose kernels numba's cache lacks starts a
helper process that compiles the same kernels in the opposite order, so the two meet halfway.

A first fit compiles its kernels one after another on one core (numba compiles a function on the
thread that first calls it, under a process-wide lock).  The kernels a kind of fit calls from
Python, and the argument types of each call, are known in advance: :func:`record_plan` lists them in
the order a tiny fit of that kind (:data:`fasttree._warmup.KINDS`) first calls them, and the package
ships every kind's list (``data/compile_plans.pkl``, written by ``python -c "from
fasttree._compile_ahead import write_plans; write_plans()"``; ``tests/test_compile_ahead.py`` checks
it against the code).  At the first fit of a kind in a process, :func:`start` looks up its list in
numba's cache; when at least two of them are missing and the process may run on a second CPU, it
starts a helper process (:func:`compile_backwards`), which compiles the list's costliest kernel,
then the rest from its end (:func:`helper_order`), while the fit compiles it from its start.
Each compiled kernel is saved to the cache, where the other process's next call finds it (numba
reads a function's cache index again at each new signature;
:class:`fasttree._jit._KeyedCacheFile` keeps two processes' saves apart); a kernel the other has
already saved is skipped.  Where they meet, neither compiles a kernel the other is compiling:
each takes an entry by creating its claim file in a folder of the fit's (the fit at its call of
the kernel, :func:`_meet`), and the fit, finding an entry taken, waits for the helper's "done"
file and loads the kernel from the cache.  Without claims, a fit that reached the helper's
kernel compiled it too: after three seconds of the classifier's compiles were saved elsewhere,
its first fit caught up with the helper on its costliest kernel and took 10.9 s instead of 8.

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
        plan = plans().get(kind)
        if not plan or n_missing(plan) < MIN_MISSING:
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
        _meet(plan, folder, helper)
    except Exception:  # an optimisation only: whatever fails, the fit compiles as before
        return None
    return helper


def _meet(plan, folder, helper):
    """Make the fit take each entry of ``plan`` the cache lacks, when it first calls it, by
    creating the entry's claim file in ``folder`` before compiling it.  An entry the helper has
    taken it waits for (its "done" file, while the helper runs, at most :data:`MAX_WAIT`
    seconds), compiling meanwhile the next entries nobody has taken (the ones the helper would
    have come to), then loads it from the cache.  Each kernel's dispatcher gets its own
    ``_compile_for_args``, which numba calls for arguments of types it has not compiled."""
    entries = {}
    for i, (reference, args) in enumerate(plan):
        dispatcher = dispatcher_of(reference)
        if not is_cached(dispatcher, args):
            entries.setdefault(dispatcher, {})[tuple(args)] = i
    for dispatcher, indices in entries.items():
        dispatcher._compile_for_args = functools.partial(
            _claim_then_compile, dispatcher, dispatcher._compile_for_args, indices, plan,
            folder, helper)


def _claim_then_compile(dispatcher, compile_for_args, indices, plan, folder, helper, *args,
                        **kws):
    """A dispatcher's ``_compile_for_args`` once :func:`_meet` has seen it."""
    i = indices.get(tuple(dispatcher.typeof_pyval(a) for a in args))
    if i is not None and not _take(folder, i):
        deadline = time.monotonic() + MAX_WAIT
        done = os.path.join(folder, f"done-{i}")
        ahead = i + 1
        while (not os.path.exists(done) and helper.poll() is None
               and time.monotonic() < deadline):
            while ahead < len(plan) and not _take(folder, ahead):
                ahead += 1
            if ahead < len(plan):  # one the helper would have come to, compiled here
                reference, types = plan[ahead]
                with contextlib.suppress(Exception):
                    dispatcher_of(reference).compile(tuple(types))
            else:
                time.sleep(0.005)
    return compile_for_args(*args, **kws)


def _take(folder, i):
    """Create entry ``i``'s claim file in ``folder``; False when another process has."""
    try:
        os.close(os.open(os.path.join(folder, f"claim-{i}"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    except OSError:  # the folder is gone (the helpers waited for): nobody else compiles
        pass
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


def helper_order(n_entries, seconds=None):
    """The order in which a helper takes a list's entries: the costliest after the first (the
    fit takes the first at once), then the others from the end.

    The fit needs its kernels in list order, so the helper's share is the kernels it needs
    last; starting with the costliest keeps that one from being where the two meet, with the
    fit waiting for all of it (the classifier's search kernel, 3.6 of its 13 s of compile:
    8.5 -> 7.3 s cold start).  ``seconds``: the entries' compile times, or None (the list
    from its end)."""
    order = list(reversed(range(n_entries)))
    if seconds is not None and len(seconds) == n_entries and n_entries > 2:
        costliest = max(range(1, n_entries), key=lambda i: seconds[i])
        order.remove(costliest)
        order.insert(0, costliest)
    return order


def dispatcher_of(reference):
    """The kernel a plan entry names: ``("function", module, qualname)``, or ``("specialized",
    module, factory qualname, key)`` for a kernel a factory makes (:func:`fasttree._jit.
    specialized`)."""
    module = importlib.import_module(reference[1])
    target = module
    for part in reference[2].split("."):
        target = getattr(target, part)
    if reference[0] == "specialized":
        from ._jit import specialized

        return specialized(target, *reference[3])
    return target


def is_cached(dispatcher, args):
    """Whether numba's on-disk cache holds ``dispatcher`` compiled for ``args`` (numba's private
    cache API: False whenever it cannot tell)."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(tuple(args), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:
        return False


def n_missing(plan):
    """How many of a plan's entries the cache lacks; 0 when the kernels are not cached on disk
    (no writable cache location, or ``NUMBA_DISABLE_JIT``): a helper could not share its work."""
    missing = 0
    for reference, args in plan:
        dispatcher = dispatcher_of(reference)
        if not hasattr(getattr(dispatcher, "_cache", None), "_cache_file"):
            return 0
        missing += not is_cached(dispatcher, args)
    return missing


def compile_backwards(kind, folder=None):
    """The helper's work: compile ``kind``'s kernels in :func:`helper_order` (the costliest,
    then from the last to the first), skipping those already in the cache (the fit's, once the
    two have met) and, given the fit's claims ``folder``, those it has taken; each one compiled
    is marked done there."""
    plan = plans().get(kind, ())
    for i in helper_order(len(plan), plan_seconds().get(kind)):
        reference, args = plan[i]
        if folder is not None and not _take(folder, i):
            continue
        _compile_entry(reference, args)
        if folder is not None:
            with contextlib.suppress(OSError):
                os.close(os.open(os.path.join(folder, f"done-{i}"), os.O_CREAT))


def compile_claimed(kinds, folder):
    """Compile the kernels of every kind's list (each once, in the kinds' order), taking each
    one by creating its claim file in ``folder`` first: processes given the same kinds and folder
    (``fasttree compile --jobs N``) share the lists without compiling a kernel twice."""
    entries = []
    for kind in kinds:
        for entry in plans().get(kind, ()):
            if entry not in entries:
                entries.append(entry)
    for i, (reference, args) in enumerate(entries):
        if _take(folder, i):  # else another process took it
            _compile_entry(reference, args)


def _compile_entry(reference, args):
    """Compile one plan entry unless the cache holds it; an entry that no longer matches the
    code is skipped (the fits compile what they need)."""
    try:
        dispatcher = dispatcher_of(reference)
        if not is_cached(dispatcher, args):
            dispatcher.compile(tuple(args))
    except Exception:
        pass


def record_plan(kind):
    """The kernels a tiny fit of ``kind`` calls from Python, with their argument types, in the
    order of their first call, when numba's cache is empty (run it with a new
    ``NUMBA_CACHE_DIR``); and the CPU seconds each took to compile, with what it compiled on
    the way."""
    from numba.core import event

    from . import _jit, _warmup

    fit = _warmup.get_kind(kind)
    data = fit.data()
    calls, seconds, depth = [], [], [0]

    class TopLevel(event.Listener):
        def on_start(self, ev):
            if depth[0] == 0:
                calls.append((ev.data["dispatcher"], tuple(ev.data["args"])))
                seconds.append(time.process_time())
            depth[0] += 1

        def on_end(self, ev):
            depth[0] -= 1
            if depth[0] == 0:
                seconds[-1] = time.process_time() - seconds[-1]

    listener = TopLevel()
    event.register("numba:compile", listener)
    try:
        fit.fit(*data)
    finally:
        event.unregister("numba:compile", listener)
    made = {id(kernel): (factory, key) for (factory, key), kernel in _jit._SPECIALIZED.items()}
    plan = []
    for dispatcher, args in calls:
        if id(dispatcher) in made:
            factory, key = made[id(dispatcher)]
            reference = ("specialized", factory.__module__, factory.__qualname__, key)
        else:
            func = dispatcher.py_func
            reference = ("function", func.__module__, func.__qualname__)
        plan.append((reference, args))
    return plan, seconds


def write_plans(kinds=None, path=PLANS_FILE):
    """Record the plans of ``kinds`` (default: every kind), each in a new process with an empty
    cache, into ``path`` (the other kinds' plans already there are kept)."""
    from ._warmup import KIND_NAMES

    shipped = {"plans": {}, "seconds": {}}
    if kinds is not None and os.path.exists(path):
        with open(path, "rb") as handle:
            shipped = pickle.load(handle)
    for kind in kinds or KIND_NAMES:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            result = os.path.join(out, "plan.pkl")
            code = ("from fasttree._compile_ahead import _main; "
                    f"_main(['--record', {kind!r}, {result!r}])")
            subprocess.run([sys.executable, "-c", code], check=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": cache, ENV: "0"})
            with open(result, "rb") as handle:
                shipped["plans"][kind], shipped["seconds"][kind] = pickle.load(handle)
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
