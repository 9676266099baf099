"""The kinds of first fit, each of which compiles its own set of kernels, and the filling of
numba's on-disk cache with them (``fasttree compile``).

numba compiles a kernel the first time a process calls it with a new kind of input and caches
the machine code on disk.  Which kernels a fit needs depends on its kind of data and options
(numeric or categorical features, missing values, sparse input, bins, C4.5's fractional rows,
monotonic constraints, the criterion, several outputs, weights, the number of classes, the
random splitter, pruning): :data:`KINDS` lists one tiny fit and predict per kind, on data made
with numpy (the ``table`` kind reads a bundled CSV).  The first ten are those issue 25 measures;
the next four are what a fit of another common kind still compiled after them, and
``forest`` what a random forest (its trees grown depth first on bootstrap counts) compiles,
``extra_trees`` what a forest of extra trees (grown depth first) compiles, and ``small`` what a
single tree of few rows (grown depth first, :data:`fasttree.depth_first.SMALL_TREE_WORK`)
compiles.  ``asv_bench/compile_times.py`` times each in a fresh process with an empty cache;
:func:`fill_cache` runs them all, in several processes at once when asked, so that later
processes only load the cache.
"""

import contextlib
import os
import subprocess
import sys
import time
import warnings
from collections import namedtuple

import numpy as np

#: one kind of first fit: ``data()`` builds its inputs (outside any timing), ``fit(*data)`` fits
#: and predicts with them
Kind = namedtuple("Kind", "name description data fit")


def _numeric(n_rows=3000, n_features=6, seed=0):
    """Rows x features beyond :data:`fasttree.depth_first.SMALL_TREE_WORK` (a single tree of
    fewer grows depth first, another kernel: the ``small`` kind)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    signal = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n_rows)
    return X, signal


def _numeric_classification():
    X, signal = _numeric()
    return X, (signal > 0).astype(np.int64)


def _small_classification():
    X, signal = _numeric(n_rows=600)
    return X, (signal > 0).astype(np.int64)


def _numeric_regression():
    return _numeric()


def _three_classes():
    X, signal = _numeric()
    return X, np.digitize(signal, [-0.5, 0.5])


def _counts():
    X, signal = _numeric()
    return X, np.exp(signal / 2)


def _with_nan():
    X, signal = _numeric()
    X[::7, 0] = np.nan
    X[3::11, 2] = np.nan
    return X, (signal > 0).astype(np.int64)


def _several_outputs():
    X, signal = _numeric()
    Y_class = np.column_stack([signal > 0, X[:, 2] > 0.5]).astype(np.int64)
    Y_reg = np.column_stack([signal, X[:, 3] - X[:, 4]])
    return X, Y_class, Y_reg


def _sparse():
    import scipy.sparse  # only here: a kind scipy is needed for

    X, signal = _numeric()
    X[np.abs(X) < 0.8] = 0.0
    return scipy.sparse.csr_matrix(X), (signal > 0).astype(np.int64)


def _heart_disease():
    from .datasets import load_heart_disease

    try:
        import pandas  # noqa: F401  (the table as pandas reads it, as a user's first fit does)
    except ImportError:
        return load_heart_disease(return_X_y=True)  # the same columns as an object array
    return load_heart_disease(as_frame=True, return_X_y=True)


def _fit_predict(make, X, y):
    est = make().fit(X, y)
    est.predict(X)
    if hasattr(est, "predict_proba"):
        est.predict_proba(X)
    return est


def _classifier(**params):
    def fit(X, y):
        from . import DecisionTreeClassifier

        return _fit_predict(lambda: DecisionTreeClassifier(max_depth=6, **params), X, y)

    return fit


def _regressor(**params):
    def fit(X, y):
        from . import DecisionTreeRegressor

        return _fit_predict(lambda: DecisionTreeRegressor(max_depth=6, **params), X, y)

    return fit


def _extra_tree(X, y):
    from . import ExtraTreeClassifier

    return _fit_predict(lambda: ExtraTreeClassifier(max_depth=6, random_state=0), X, y)


def _forest(X, y):
    from . import RandomForestClassifier

    with warnings.catch_warnings():  # three trees leave some rows without an OOB score
        warnings.simplefilter("ignore", UserWarning)
        return _fit_predict(lambda: RandomForestClassifier(n_estimators=3, max_depth=6,
                                                           oob_score=True, random_state=0), X, y)


def _extra_trees(X, y):
    from . import ExtraTreesClassifier

    return _fit_predict(lambda: ExtraTreesClassifier(n_estimators=3, max_depth=6,
                                                     random_state=0), X, y)


def _c45(X, y):
    from . import C45Classifier

    return _fit_predict(C45Classifier, X, y)


def _fit_several_outputs(X, Y_class, Y_reg):
    _classifier()(X, Y_class)
    _regressor()(X, Y_reg)


KINDS = (
    Kind("classifier", "a numeric array, two classes", _numeric_classification, _classifier()),
    Kind("regressor", "a numeric array, squared error", _numeric_regression, _regressor()),
    Kind("table", "the bundled heart_disease table read by pandas: string columns and NaN",
         _heart_disease, _classifier()),
    Kind("sparse", "a scipy.sparse CSR matrix, two classes", _sparse, _classifier()),
    Kind("hist", "splitter='hist' on a numeric array, two classes", _numeric_classification,
         _classifier(splitter="hist")),
    Kind("c45", "C45Classifier (gain ratio, fractional missing values, error-based pruning) "
                "on a numeric array with NaN", _with_nan, _c45),
    Kind("monotonic", "monotonic_cst on a numeric array, two classes", _numeric_classification,
         _classifier(monotonic_cst=[1, 0, 0, 0, 0, -1])),
    Kind("absolute_error", "a regressor with criterion='absolute_error'", _numeric_regression,
         _regressor(criterion="absolute_error")),
    Kind("several_outputs", "two classification outputs, then two regression outputs",
         _several_outputs, _fit_several_outputs),
    Kind("class_weight", "class_weight='balanced', two classes", _numeric_classification,
         _classifier(class_weight="balanced")),
    Kind("multiclass", "a numeric array, three classes", _three_classes, _classifier()),
    Kind("poisson", "a regressor with criterion='poisson'", _counts,
         _regressor(criterion="poisson")),
    Kind("extra_tree", "ExtraTreeClassifier (splitter='random'), two classes",
         _numeric_classification, _extra_tree),
    Kind("ccp_alpha", "cost-complexity pruning (ccp_alpha > 0), two classes",
         _numeric_classification, _classifier(ccp_alpha=0.005)),
    Kind("forest", "RandomForestClassifier: three trees on bootstrap counts grown depth first, "
                   "out-of-bag score, two classes", _numeric_classification, _forest),
    Kind("extra_trees", "ExtraTreesClassifier: three trees grown depth first, two classes",
         _numeric_classification, _extra_trees),
    Kind("small", "a numeric array of 600 x 6, two classes: one tree grown depth first",
         _small_classification, _classifier()),
)
KIND_NAMES = tuple(kind.name for kind in KINDS)
_BY_NAME = {kind.name: kind for kind in KINDS}


def get_kind(name):
    """The :class:`Kind` of that name; ValueError naming the kinds for an unknown one."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown kind {name!r}; the kinds are: "
                         f"{', '.join(KIND_NAMES)}") from None


@contextlib.contextmanager
def compile_events():
    """Record what numba compiles inside the block: a list of ``(name, seconds)``, one per
    compiled function, CPU seconds exclusive of the functions it compiled on the way (a
    kernel's callees get their own entries).  Loads from the cache are not compilations."""
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

    listener = CompileTimer()
    event.register("numba:compile", listener)
    try:
        yield records
    finally:
        event.unregister("numba:compile", listener)


def run_kinds(names, out=None, large_data=True):
    """Fit and predict each named kind in this process, compiling what the cache lacks.

    Parameters
    ----------
    names : sequence of str
        Kinds from :data:`KIND_NAMES`.
    out : file-like, optional
        Where to print one line per kind (seconds and functions compiled); None: quiet.
    large_data : bool, default=True
        Whether to run :func:`_large_data_kernels` first.

    Returns
    -------
    int
        The number of functions numba compiled (0 when the cache held them all).
    """
    from ._compile_ahead import turned_off

    kinds = [get_kind(name) for name in names]
    with turned_off():  # this process (or its siblings) compiles every kind itself
        compiled = 0
        if large_data:
            with compile_events() as records:
                _large_data_kernels()
            compiled = len(records)
        return compiled + _run_each(kinds, out)


def _run_each(kinds, out):
    compiled = 0
    for kind in kinds:
        try:
            data = kind.data()
        except ImportError as exc:  # sparse without scipy: nothing of it can be compiled
            if out is not None:
                print(f"  {kind.name}: skipped ({exc})", file=out, flush=True)
            continue
        start = time.perf_counter()
        with compile_events() as records, _large_node_paths():
            kind.fit(*data)
        compiled += len(records)
        if out is not None:
            print(f"  {kind.name}: {time.perf_counter() - start:.1f} s, {len(records)} "
                  "functions compiled", file=out, flush=True)
    return compiled


@contextlib.contextmanager
def _large_node_paths():
    """Grow the kinds' levels on every thread and move their nodes in row chunks, as a fit of
    tens of thousands of rows does (:func:`fasttree.kernels.partition._move_plan`; the kinds'
    data have hundreds, whose levels run on one thread): the cache then also holds the chunk
    movers of their large fits and the pair listing of layouts too large for one task a level.
    The trees are the same (a stable partition has one result)."""
    from . import grower
    from .kernels import partition, split_search

    settings = [(partition, "MOVE_CHUNK_ROWS", 8), (partition, "MIN_MOVE_CHUNK_ROWS", 8),
                (partition, "CHUNKED_MOVE_COST", 0.0), (grower, "SMALL_LEVEL_WORK", 0),
                (split_search, "ONE_TASK_LAYOUT", 0)]
    saved = [getattr(module, name) for module, name, _ in settings]
    for module, name, value in settings:
        setattr(module, name, value)
    try:
        yield
    finally:
        for (module, name, _), value in zip(settings, saved):
            setattr(module, name, value)


def _large_data_kernels():
    """Compile the kernels of large data that no kind's fit calls, whatever its kind: the
    presorts of :func:`_presort_by_buckets`, and the prefix the searches' row chunks start from
    (``work_items.chunk_class_prefix`` and ``chunk_sum_prefix``, one kernel of one signature;
    the kinds' levels have no chunk)."""
    from .kernels import work_items

    _presort_by_buckets()
    one = np.ones(1, dtype=np.int64)
    work_items._block_prefix(np.zeros((1, 1)), np.zeros(2, dtype=np.int64), -one, one)


def _presort_by_buckets():
    """Compile the presorts of large data: a few features on more threads than they share out
    to (one feature on two threads: :func:`fasttree.kernels.presort.by_buckets`), and features
    of more rows than ``_SMALL_RADIX``, which no kind's small data may take."""
    from .kernels import presort

    n = 64
    # three quarters of the values in one leading-digit bucket, which two tasks cut again by its
    # next digit (``_split_buckets``: one feature of 200,000 normal values on two threads does)
    X = np.concatenate([np.linspace(-1, 1, 16), 0.5 + np.linspace(0, 1e-6, 48)])
    X = X.astype(np.float32)[:, None]
    sorted_x, sorted_idx = np.empty((1, n), np.float32), np.empty((1, n), np.int32)
    presort.sort_by_buckets(X, sorted_x, sorted_idx, 2, 16)
    presort._sort_blocks("large", np.array([0, n], dtype=np.int64), sorted_x, sorted_idx,
                         np.empty((1, n), np.uint32), np.empty((1, n), np.int32))


#: seconds each kind compiled after the kinds before it in KINDS, in one process from an empty
#: cache (:func:`run_kinds` of every kind, as ``fasttree compile --jobs 1`` runs them, on the
#: idle 2-core VM, 2026-12-05), to balance the processes of :func:`fill_cache`; each process
#: also compiles again the kernels its first kind shares with the others (about 10 s).  A single
#: extra tree grows level-wise; ``extra_trees`` compiles the depth-first growth of a forest's.
#: ``small`` (added 2026-12-06) compiled 11.9 s after the others where ``classifier`` took 38.7
#: s on a slower day: scaled to the table's, 6.
_COST = {"classifier": 19.0, "regressor": 6.5, "table": 18.4, "sparse": 12.4, "hist": 13.9,
         "c45": 9.3, "monotonic": 2.6, "absolute_error": 6.8, "several_outputs": 9.9,
         "class_weight": 2.1, "multiclass": 2.1, "poisson": 3.4, "extra_tree": 3.1,
         "ccp_alpha": 0.6, "forest": 26.8, "extra_trees": 16.3, "small": 6.0}


def default_jobs():
    """The CPUs this process may run on (its affinity where the OS tells it, else the count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def partition(names, jobs):
    """Split kinds into at most ``jobs`` groups of about equal cost (the largest first, each
    to the cheapest group so far); a group keeps :data:`KINDS`' order."""
    groups = [[] for _ in range(max(1, min(jobs, len(names))))]
    load = [0.0] * len(groups)
    for name in sorted(names, key=lambda n: -_COST[n]):
        i = load.index(min(load))
        groups[i].append(name)
        load[i] += _COST[name]
    order = {name: i for i, name in enumerate(KIND_NAMES)}
    return [sorted(group, key=order.__getitem__) for group in groups if group]


def fill_cache(names=KIND_NAMES, jobs=1, out=sys.stdout):
    """Compile the kernels of the named kinds into numba's on-disk cache.

    With ``jobs > 1`` the kinds are split among that many child processes (``python -m
    fasttree compile --kind ...``) that compile at once and share the cache through its files;
    their saves to the cache are serialized by a lock file, since two processes adding entries
    to one function's cache index at the same moment could otherwise lose one or mismatch an
    entry with another's data.  A final pass in this process then loads every kind from the
    cache and compiles whatever is still missing.

    Parameters
    ----------
    names : sequence of str, default=KIND_NAMES
        The kinds to compile.
    jobs : int, default=1
        Processes compiling at once.
    out : file-like or None, default=sys.stdout
        Where progress goes.

    Returns
    -------
    int
        The number of functions the final pass (or the only process, ``jobs=1``) compiled.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    names = [get_kind(name).name for name in names]
    start = time.perf_counter()
    groups = partition(names, jobs) if _can_lock() else [names]
    if len(groups) > 1:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            lock = os.path.join(folder, "cache.lock")
            open(lock, "w").close()
            with open(os.path.join(folder, KINDS_FILE), "w") as handle:
                handle.write("\n".join(names))
            children = []
            for group in groups:
                command = [sys.executable, "-m", "fasttree", "compile", "--jobs", "1",
                           "--lock", lock]
                for name in group:
                    command += ["--kind", name]
                if out is not None:
                    print(f"process {len(children) + 1}: {', '.join(group)}", file=out,
                          flush=True)
                children.append(subprocess.Popen(command, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT, text=True))
            failed = []
            for child in children:
                text, _ = child.communicate()
                if out is not None:
                    out.write(text)
                if child.returncode != 0:
                    failed.append(child.returncode)
            if failed:
                raise RuntimeError(f"{len(failed)} compiling process(es) failed (exit codes "
                                   f"{failed})")
        if out is not None:
            print("check: every kind from the cache", file=out, flush=True)
    compiled = run_kinds(names, out)
    if out is not None:
        print(f"filled numba's cache for {len(names)} kind{'s' * (len(names) > 1)} in "
              f"{time.perf_counter() - start:.1f} s ({len(groups)} "
              f"process{'es' * (len(groups) > 1)})", file=out, flush=True)
    return compiled


#: the file in which :func:`fill_cache` tells its processes every kind they compile together
KINDS_FILE = "kinds.txt"


def compile_share(names, lock):
    """The work of one process of :func:`fill_cache`: the kernels of every kind's list, each
    taken by one process (:func:`fasttree._compile_ahead.compile_claimed`), then its own kinds
    ``names``, which compile only what the lists left out (the large fits' chunk paths), after
    :func:`_large_data_kernels` when no other process has taken them (each process compiled
    them too: 4.4 s of CPU in each)."""
    from ._compile_ahead import compile_claimed, take_claim

    folder = os.path.dirname(lock)
    lock_cache_saves(lock)
    with open(os.path.join(folder, KINDS_FILE)) as handle:
        compile_claimed(handle.read().split(), folder)
    return run_kinds(names, sys.stdout, large_data=take_claim(folder, "large-data"))


def _can_lock():
    try:
        import fcntl  # noqa: F401  (POSIX; elsewhere the kinds compile in one process)
    except ImportError:
        return False
    return True


def lock_cache_saves(path):
    """In this process, hold an exclusive lock on the file ``path`` while numba writes a cache
    entry (index and data), so that processes given the same path never interleave saves."""
    import fcntl

    from numba.core import caching

    from ._jit import _KeyedCacheFile

    def locked(save):
        def locked_save(self, key, data):
            with open(path, "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    save(self, key, data)
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)

        return locked_save

    # numba's own class, and fasttree's (which overrides save, so the first alone would not lock
    # fasttree's kernels)
    for files in {caching.IndexDataCacheFile, _KeyedCacheFile}:
        files.save = locked(files.save)
