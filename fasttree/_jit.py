"""numba's ``njit`` for fasttree's kernels: cached on disk when there is a place for it, and
run on one thread in a child forked from a process that ran numba's GNU OpenMP layer.

numba caches compiled kernels in the package's ``__pycache__`` folders, or when those are
read-only in its user-wide cache (``$NUMBA_CACHE_DIR``, else ``~/.cache`` or the platform's
equivalent).  When no location is writable (a read-only container running as a user without a
home), ``numba.njit(cache=True)`` refuses to define the function; fasttree then compiles in
memory instead, every process again, and says so once with a :class:`RuntimeWarning`.

numba's cache files are not safe for processes compiling the same function at once (dask
workers, ``fasttree compile --jobs 2``, pytest-xdist): it numbers a function's data files
1, 2, ... from the index each process read, so two processes adding different overloads (the
variants of one factory's kernel, or one kernel's dtypes) can both write ``.1.nbc``, and the
index of one then points at the other's code, which a later process loads and runs.  fasttree's
kernels therefore name each data file after a digest of its key and keep the key in the file;
an entry whose file holds another key is a miss, compiled again (:class:`_KeyedCacheFile`).
And a factory's kernels are named after the values they close over, so that the machine code
of two variants compiled in different processes never goes by one name
(:func:`_name_after_closure`).

GNU OpenMP cannot run in a process forked from one that already used it: numba's ``omp``
layer then terminates the child at its first parallel loop, whatever the thread count.  So in
such a child (``multiprocessing``'s default ``fork`` start method after a fit or predict),
fasttree swaps every parallel kernel, in every fasttree module, for a single-thread twin
compiled from the same source (and cached like it); :func:`forked_from_openmp` tells the
estimators to say so.  The ``tbb`` and ``workqueue`` layers survive a fork and need nothing.
numba's own configuration is never changed; one option is added to its CPU target, ``noalias``
(:func:`_noalias_option`), which only the kernels passing it use.
"""

import hashlib
import os
import pickle
import sys
import types
import warnings

import numba

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy 1
    from numpy import byte_bounds

try:  # numba's own cache file class, a private API: see _KeyedCacheFile
    from numba.core.caching import IndexDataCacheFile
except ImportError:  # a numba without it: its own cache files are kept
    IndexDataCacheFile = object

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
#: inlined helpers compiled on their own, by helper (see :func:`called_copy`)
_CALLED = {}
#: holds True once njit's noalias option is registered (see :func:`_noalias_option`)
_NOALIAS = []


def njit(*, cache=False, **options):
    """``numba.njit(cache=cache, **options)``, falling back to ``cache=False`` (with one warning
    per process) when numba has no writable cache location.

    Kernels get no C-callable wrapper (``no_cfunc_wrapper``): it serves only functions used as
    first-class function values, which fasttree's are not, and it was 7% of the LLVM IR a first
    fit compiles.  Pass ``no_cpython_wrapper=True`` for a function called only from other
    kernels: its Python-callable wrapper, code that unboxes every argument, is then not built.

    Division follows NumPy's rules (``error_model="numpy"``): a float divided by zero gives an
    infinity or NaN instead of raising ``ZeroDivisionError``.  Python's rule puts a test and a
    branch before every division, which also keeps the compiler from vectorizing a loop that
    divides: the scans score every candidate with two divisions (a counted two-class scan took
    4.3-7.2 ns a row with the tests, 3.6-4.9 without).  Where a divisor can be zero the kernels
    test it themselves (a child without weight is no candidate), as the raise was no answer
    either: an exception out of a parallel kernel.

    ``noalias=True`` declares that the kernel's array arguments do not overlap where one is
    written (see :func:`_noalias_option`), as numba assumes of a parallel loop's body.
    """
    if options.get("parallel") is True:
        options["parallel"] = dict(_PRANGE_ONLY)
    if options.pop("noalias", False) and _noalias_option():
        options["noalias"] = True  # a numba without the option: slower code, the same results
    options.setdefault("no_cfunc_wrapper", True)
    options.setdefault("error_model", "numpy")

    def decorate(func):
        dispatcher = _compile(func, cache, options)
        if options.get("parallel"):
            _PARALLEL_KERNELS.append((dispatcher, cache, options))
        return dispatcher

    return decorate


def _noalias_option():
    """Whether ``njit`` takes ``noalias=True``: every array argument's memory reached through
    that argument only (LLVM's ``noalias``), so that the compiler may keep values in registers
    and reorder loads and stores across the function's writes.

    numba sets that flag (``Flags.noalias``) on a parallel loop's body when its arrays do not
    overlap, but offers it to no other function.  A forest's tree function, called from threads
    (:mod:`fasttree._threads`), grew its trees 4-5 % slower without it than as a parallel loop's
    body.  So the option is registered with numba's CPU target once (a private API, like
    :class:`_KeyedCacheFile`; where it is missing the option is dropped).  A kernel compiled
    with it must be called with arrays that do not overlap where one is written: its Python
    caller checks that (:func:`check_apart`).
    """
    if not _NOALIAS:
        try:
            from numba.core.compiler import Flags
            from numba.core.cpu import CPUTargetOptions
            from numba.core.options import TargetOptions
        except ImportError:
            return False
        if not hasattr(Flags, "noalias"):
            return False
        if not isinstance(CPUTargetOptions.__dict__.get("noalias"), TargetOptions.Mapping):
            CPUTargetOptions.noalias = TargetOptions.Mapping("noalias")
        _NOALIAS.append(True)
    return True


def check_apart(written, read=()):
    """Raise ``ValueError`` when an array of ``written`` (name to array) shares memory with
    another of ``written`` or of ``read``: a ``noalias`` kernel (:func:`_noalias_option`) may not
    be given such arrays.  Compares the arrays' byte ranges, a few microseconds for twenty."""
    spans = sorted((*_byte_range(array), name, name in written)
                   for name, array in [*written.items(), *dict(read).items()] if array.size)
    open_spans = []
    for low, high, name, is_written in spans:
        open_spans = [span for span in open_spans if span[1] > low]
        for other in open_spans:
            if is_written or other[3]:
                raise ValueError(f"{other[2]} and {name} must not share memory (the kernel "
                                 f"writes {name if is_written else other[2]})")
        open_spans.append((low, high, name, is_written))


def _byte_range(array):
    """First and past-the-last byte of ``array``'s memory (a contiguous array's without NumPy's
    stride walk: it is the common case, and ten times faster)."""
    if array.flags.contiguous:
        low = array.__array_interface__["data"][0]
        return low, low + array.nbytes
    return byte_bounds(array)


def _compile(func, cache, options):
    _name_after_closure(func)
    if cache:
        try:
            dispatcher = numba.njit(cache=True, **options)(func)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
            _warn_once(exc)
        else:
            cache_files = getattr(dispatcher, "_cache", None)
            if (IndexDataCacheFile is not object
                    and isinstance(getattr(cache_files, "_cache_file", None), IndexDataCacheFile)):
                cache_files._cache_file = _KeyedCacheFile.like(cache_files._cache_file)
            return dispatcher
    return numba.njit(**options)(func)


def _name_after_closure(func):
    """Give a factory's kernel a qualified name of its own, from the values it closes over.

    numba names a compiled function's machine code after its qualified name, argument types and
    a number counting the functions compiled so far in the process, and a kernel loaded from the
    cache brings the functions it calls with it under those names.  Two kinds' variants of one
    factory's scan, compiled in different processes (``fasttree compile``, dask workers, tests
    run in subprocesses), can get the same number and so the same name; loaded into one process,
    both kinds' kernels then call whichever copy was loaded first: wrong trees, no error.
    """
    if func.__closure__:
        func.__qualname__ = _named_after(
            func.__qualname__, tuple(cache_identity(cell.cell_contents)
                                     for cell in func.__closure__))


def _named_after(qualname, identity):
    """``qualname`` with a digest of ``identity`` (a value whose repr is the same in every
    process): how :func:`with_globals` and :func:`_name_after_closure` tell copies apart."""
    return f"{qualname}_{hashlib.sha256(repr(identity).encode()).hexdigest()[:12]}"


class _KeyedCacheFile(IndexDataCacheFile):
    """numba's index and data files of one function, safe for processes writing them at once.

    numba names a new overload's data file by the first number its process's copy of the index
    does not use, so concurrent processes give different overloads the same file and the index
    can end up pointing at another overload's code.  Here a data file's name is a digest of its
    key (the signature, the machine and the hashes of the bytecode and closure), and the file
    holds the key beside the code: two processes never write different code to one file, and a
    file holding another key (or an entry the other process's index write dropped) is a cache
    miss, compiled again, never wrong code.  The index keeps numba's role of discarding every
    entry when the source file changes.
    """

    @classmethod
    def like(cls, cache_file):
        """The keyed twin of numba's ``cache_file`` (same folder, names and source stamp)."""
        keyed = cls.__new__(cls)
        keyed.__dict__.update(vars(cache_file))
        return keyed

    def _keyed_name(self, key):
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:20]
        return self._index_name[:-len(".nbi")] + f".{digest}.nbc"

    def save(self, key, data):
        name = self._keyed_name(key)
        self._save_data(name, (repr(key), data))
        overloads = self._load_index()
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)

    def load(self, key):
        name = self._load_index().get(key)
        if name != self._keyed_name(key):  # absent, or written by numba's own numbering
            return None
        try:
            stored_key, data = self._load_data(name)
        except (OSError, EOFError, pickle.UnpicklingError, TypeError, ValueError):
            return None
        return data if stored_key == repr(key) else None


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
    made.__qualname__ = _named_after(
        func.__qualname__, sorted((name, cache_identity(value)) for name, value in names.items()))
    made.__doc__ = func.__doc__
    return made


def called_copy(dispatcher):
    """An ``inline="always"`` helper compiled as a function of its own (named
    ``<qualname>_called``, so with its own cache files), made once per process: for a kernel
    whose compile time matters more than its calls' cost, and which two processes can then
    compile a part each of (:mod:`fasttree._compile_ahead` lists the copy)."""
    copy = _CALLED.get(dispatcher)
    if copy is None:
        func = getattr(dispatcher, "py_func", dispatcher)  # a function under NUMBA_DISABLE_JIT
        made = types.FunctionType(func.__code__, func.__globals__, func.__name__,
                                  func.__defaults__, func.__closure__)
        made.__qualname__ = f"{func.__qualname__}_called"
        made.__module__ = func.__module__
        made.__doc__ = func.__doc__
        copy = _CALLED[dispatcher] = njit(cache=True)(made)
    return copy


def original_of_copy(dispatcher):
    """The helper ``dispatcher`` is the :func:`called_copy` of, or None."""
    for original, copy in _CALLED.items():
        if copy is dispatcher:
            return original
    return None


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
