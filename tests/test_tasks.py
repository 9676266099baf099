"""The parallel tasks of fasttree._tasks: each task runs once on the data it is given, for any
number of tasks and threads, and the data's arrays come back with the references they had."""

import sys

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError
from numba.typed import List

from fasttree._jit import njit, with_globals
from fasttree._tasks import load_pointer, run_tasks, task_address


def _write_task(pointer, t):
    (values, (out, counts), scale) = load_pointer(pointer)
    out[t] = values[t] * scale + t
    counts[t] += 1


_task = njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
    with_globals(_write_task))


@pytest.mark.parametrize("n_tasks", [0, 1, 2, 7, 1000])
def test_every_task_runs_once_on_its_data(n_tasks):
    values = np.arange(n_tasks, dtype=np.float64) * 0.5
    out = np.full(n_tasks, np.nan)
    counts = np.zeros(n_tasks, dtype=np.int64)
    data = (values, (out, counts), 3.0)
    run_tasks(task_address(_task, data), data, n_tasks)
    np.testing.assert_array_equal(out, values * 3.0 + np.arange(n_tasks))
    np.testing.assert_array_equal(counts, np.ones(n_tasks, dtype=np.int64))


def _flag_task(pointer, t):
    out, (flag, other), scale = load_pointer(pointer)
    out[t] = (1.0 if flag else 2.0) * scale + (10.0 if other else 0.0)


_flags = njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
    with_globals(_flag_task))


@pytest.mark.parametrize("flag", [False, True])
def test_booleans_in_the_data_read_as_they_were_given(flag):
    # a boolean is a byte in memory and a bit in a value: the data is copied and read as data
    out = np.zeros(3)
    data = (out, (np.bool_(flag), not flag), 0.5)
    run_tasks(task_address(_flags, data), data, 3)
    np.testing.assert_array_equal(out, np.full(3, (1.0 if flag else 2.0) * 0.5
                                              + (0.0 if flag else 10.0)))


def test_data_of_other_types_gets_its_own_compiled_task():
    values = np.arange(5, dtype=np.float32)
    out = np.zeros(5)
    counts = np.zeros(5, dtype=np.int64)
    data = (values, (out, counts), 2)
    first = task_address(_task, data)
    run_tasks(first, data, 5)
    np.testing.assert_array_equal(out, values * 2.0 + np.arange(5))
    float64_data = (values.astype(np.float64), (out, counts), 2.0)
    assert task_address(_task, float64_data) != first
    assert task_address(_task, data) == first  # kept per kind of data


def test_the_arrays_keep_their_reference_counts():
    values = np.ones(50)
    out = np.zeros(50)
    counts = np.zeros(50, dtype=np.int64)
    data = (values, (out, counts), 1.0)
    before = [sys.getrefcount(a) for a in (values, out, counts)]
    for _ in range(3):
        run_tasks(task_address(_task, data), data, 50)
    assert [sys.getrefcount(a) for a in (values, out, counts)] == before
    np.testing.assert_array_equal(counts, np.full(50, 3))


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="types are checked when numba compiles")
def test_data_that_counts_references_other_than_arrays_is_refused():
    # load_pointer takes away the counts of arrays only: any other counted value (a typed list
    # here) would be released once too often, so compiling such a task fails with a clear error
    items = List([1.0, 2.0])
    data = (np.zeros(2), (np.zeros(2), np.zeros(2, dtype=np.int64)), items)
    with pytest.raises(TypingError, match="only arrays, scalars and tuples"):
        task_address(_task, data)
