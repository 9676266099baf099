"""numba's ``njit`` for fasttree's kernels: cached on disk when there is a place for it, and
run on one thread in a child forked from a process that ran numba's GNU OpenMP layer.

numba caches compiled kernels in the package's ``__pycache__`` folders, or when those are
read-only in its user-wide cache (``$NUMBA_CACHE_DIR``, else ``~/.cache`` or the platform's
equivalent).  When no location is writable (a read-only container running as a user without a
home), ``numba.njit(cache=True)`` refuses to define the function; fasttree then compiles in
memory instead, every process again, and says so once with a :class:`RuntimeWarning`.

GNU OpenMP cannot run in a process forked from one that already used it: numba's ``omp``
layer then terminates the child at its first parallel loop, whatever the thread count.  So in
such a child (``multiprocessing``'s default ``fork`` start method after a fit or predict),
fasttree swaps every parallel kernel, in every fasttree module, for a single-thread twin
compiled from the same source (and cached like it); :func:`forked_from_openmp` tells the
estimators to say so.  The ``tbb`` and ``workqueue`` layers survive a fork and need nothing.
numba's own configuration is never changed.
"""

import hashlib
import os
import sys
import types
import warnings

import numba

_warned = []
#: (dispatcher, cache, options) of every kernel compiled with ``parallel=True``
_PARALLEL_KERNELS = []
_forked_from_openmp = []
#: numba's automatic parallelization limited to explicit ``prange`` loops: every parallel loop of
#: the kernels is written as one, and the other conversions (array expressions and NumPy calls
#: turned into parallel loops, loop fusion) would only add parallel loops for numba to compile
_PRANGE_ONLY = {"comprehension": False, "reduction": False, "inplace_binop": False,
                "setitem": False, "numpy": False, "stencil": False, "fusion": False,
                "prange": True}
#: kernels made by a factory, one per (factory, key) (see :func:`specialized`)
_SPECIALIZED = {}


def njit(*, cache=False, **options):
    """``numba.njit(cache=cache, **options)``, falling back to ``cache=False`` (with one warning
    per process) when numba has no writable cache location.

    Kernels get no C-callable wrapper (``no_cfunc_wrapper``): it serves only functions used as
    first-class function values, which fasttree's are not, and it was 7% of the LLVM IR a first
    fit compiles.  Pass ``no_cpython_wrapper=True`` for a function called only from other
    kernels: its Python-callable wrapper, code that unboxes every argument, is then not built.
    """
    if options.get("parallel") is True:
        options["parallel"] = dict(_PRANGE_ONLY)
    options.setdefault("no_cfunc_wrapper", True)
    def decorate(func):
        dispatcher = _compile(func, cache, options)
        if options.get("parallel"):
            _PARALLEL_KERNELS.append((dispatcher, cache, options))
        return dispatcher

    return decorate


def _compile(func, cache, options):
    if cache:
        try:
            return numba.njit(cache=True, **options)(func)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
            _warn_once(exc)
    return numba.njit(**options)(func)


def _warn_once(exc):
    if _warned:
        return
    _warned.append(True)
    warnings.warn(
        "fasttree: numba has no writable cache location, so the kernels are compiled in memory "
        "in every new process (tens of seconds on first use); set NUMBA_CACHE_DIR to a writable "
        f"folder to cache them ({exc})", RuntimeWarning, stacklevel=5)


def specialized(factory, *key):
    """The kernel ``factory(*key)`` returns, made once per process.

    A factory closes its kernel over ``key``, flags that numba reads as compile-time constants
    (it prunes the branches they rule out), so a call compiles only the code its kind of input
    needs; numba caches each closure on disk by the values it closes over.  In a child forked
    from an ``omp`` parent this returns the single-thread twin.
    """
    kernel = _SPECIALIZED.get((factory, key))
    if kernel is None:
        kernel = _SPECIALIZED[factory, key] = factory(*key)
        if _forked_from_openmp:  # made after the fork: swap it like the others were
            kernel = _SPECIALIZED[factory, key] = _twin_of(kernel)
    return kernel


def with_globals(func, **names):
    """``func`` seeing ``names`` as globals besides its module's: how a kernel factory hands
    its kernel other compiled functions chosen per kind.

    Not as variables the kernel closes over: numba's cache keys a closure by the pickled values
    of its cells, and a dispatcher pickles with a random id, so a kernel closing over one would
    be compiled again in every process.  Globals are not part of that key either, so the copy
    is named after what it is given (:func:`cache_identity` of each name's value): two kernels
    given different functions get different cache files, and one never loads the other's code.
    """
    scope = dict(func.__globals__)
    scope.update(names)
    made = types.FunctionType(func.__code__, scope, func.__name__, func.__defaults__,
                              func.__closure__)
    given = repr(sorted((name, cache_identity(value)) for name, value in names.items()))
    made.__qualname__ = f"{func.__qualname__}_{hashlib.sha256(given.encode()).hexdigest()[:12]}"
    made.__doc__ = func.__doc__
    return made


def cache_identity(value):
    """What numba's disk cache tells a compiled function by (its module, qualified name, first
    line and the values it closes over), or ``repr(value)`` for anything else; the same in
    every process."""
    func = getattr(value, "py_func", None)
    if func is None:
        return repr(value)
    cells = tuple(cache_identity(cell.cell_contents) for cell in func.__closure__ or ())
    return (func.__module__, func.__qualname__, func.__code__.co_firstlineno, cells)


def _twin_of(kernel):
    for dispatcher, cache, options in _PARALLEL_KERNELS:
        if dispatcher is kernel:
            return _single_thread_twin(dispatcher, cache, options)
    return kernel


def forked_from_openmp():
    """True in a process forked from one that ran numba's ``omp`` layer, where fasttree's
    kernels run on one thread."""
    return bool(_forked_from_openmp)


def _single_thread_twin(dispatcher, cache, options):
    """The kernel compiled from the same source without ``parallel``; its own qualified name
    gives it its own cache files (numba keys cached code by name and signature, not flags)."""
    func = dispatcher.py_func
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__,
                              func.__defaults__, func.__closure__)
    twin.__qualname__ = f"{func.__qualname__}_one_thread"
    twin.__module__ = func.__module__
    twin.__doc__ = func.__doc__
    return _compile(twin, cache, {**options, "parallel": False})


def _after_fork_in_child():
    try:
        layer = numba.threading_layer()
    except ValueError:  # the parent never ran a parallel kernel: nothing to work around
        return
    if layer != "omp" or _forked_from_openmp:
        return
    _forked_from_openmp.append(True)
    twins = {id(d): _single_thread_twin(d, cache, options)
             for d, cache, options in _PARALLEL_KERNELS}
    # rebind every fasttree module's names before any twin compiles: a twin calling another
    # kernel then compiles against that kernel's twin, read from the module's globals
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "fasttree" or name.startswith("fasttree.")):
            continue
        for attr, value in list(vars(module).items()):
            twin = twins.get(id(value))
            if twin is not None:
                setattr(module, attr, twin)
    for key, kernel in _SPECIALIZED.items():
        _SPECIALIZED[key] = twins.get(id(kernel), kernel)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
