"""Calls of a compiled function shared out to Python threads.

Some of the kernels' parallel work is a loop of long, independent calls of one compiled
function: a tree of a forest, a run of row blocks to predict or to bin.  Written as a numba
parallel loop (``prange``) around the function, it compiles the function's code twice more:
numba links a callee's machine code into its caller's and optimizes the whole again, once for
the loop's parallel body and once for the kernel around it (the forest's loop over trees took
6.8 s of a first fit's compile, its tree function 7 s).  The function compiled with
``nogil=True`` (it releases Python's lock while it runs) and called from Python threads runs
as much in parallel, and compiles once.  numba compiles a parallel loop's body as if its arrays
did not overlap (LLVM's ``noalias``), which a plain function is not: the forest's tree function
grew its trees 4-5 % slower without it, so it is compiled with fasttree's ``noalias`` option
(:func:`fasttree._jit.njit`).  Not every loop gains as much from a parallel loop's body that
way: coding a forest's bins stayed a parallel loop (1.7 times faster there, ``noalias`` or not).

A loop of the fit's levels is another matter.  numba's default threading layer on Linux, GNU
OpenMP, keeps its threads spinning for a while after every parallel loop, and Python threads
started then compete with them for the cores: the split search on threads, right after the
partition's parallel loops, took B3's search from 0.22 to 0.40 s on two threads (0.29 s with
``OMP_WAIT_POLICY=PASSIVE``, which fasttree cannot set for its users).  So threads serve work
that runs apart from the levels' parallel loops (a forest's trees, prediction, the presort at a
fit's start) and the categorical search, a small part of a level (measured as fast); the levels'
search, partition and statistics stay parallel loops.

Each call writes only its own part of the outputs, so the results do not depend on the number
of threads or on which thread made which call.
"""

import itertools
from concurrent.futures import ThreadPoolExecutor

import numba


def each_in_threads(task, n_tasks):
    """Call ``task(i)`` for every ``i`` in ``range(n_tasks)``, on as many threads as numba's
    thread count (:func:`numba.get_num_threads`, at most one per task), each taking the next
    ``i`` when its call returns.

    Parameters
    ----------
    task : callable
        Called with one int; it should spend its time in a ``nogil`` compiled function.
    n_tasks : int

    Raises
    ------
    Exception
        The first exception a call raised (the other threads finish their calls first).
    """
    n_threads = min(numba.get_num_threads(), n_tasks)
    if n_threads <= 1:
        for i in range(n_tasks):
            task(i)
        return
    next_task = itertools.count()  # next() on it is atomic under the GIL

    def run():
        i = next(next_task)
        while i < n_tasks:
            task(i)
            i = next(next_task)

    with ThreadPoolExecutor(n_threads) as pool:
        for done in [pool.submit(run) for _ in range(n_threads)]:
            done.result()


#: ranges a thread gets from :func:`each_range_in_threads`: uneven ranges even out among them
RANGES_PER_THREAD = 4


def each_range_in_threads(task, n_items):
    """Call ``task(start, stop)`` on consecutive ranges that together cover ``range(n_items)``:
    one range when numba's thread count is 1, else :data:`RANGES_PER_THREAD` ranges a thread
    shared out by :func:`each_in_threads` (a call per item would pay Python's cost of a call
    per item).

    Parameters
    ----------
    task : callable
        Called with two ints; it should spend its time in a ``nogil`` compiled function and
        write only the outputs of its own items, so that results do not depend on the ranges.
    n_items : int
    """
    n_threads = numba.get_num_threads()
    n_ranges = min(n_items, 1 if n_threads <= 1 else RANGES_PER_THREAD * n_threads)
    if n_ranges == 0:
        return
    bounds = [n_items * i // n_ranges for i in range(n_ranges + 1)]
    each_in_threads(lambda i: task(bounds[i], bounds[i + 1]), n_ranges)
