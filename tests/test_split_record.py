"""The split record as one kernel argument: the numba rules the kernels rely on, and the check the
Python entry points make of a record before any kernel sees it."""

import numpy as np
import pytest
from numba import njit, prange

from fasttree.kernels import (
    CRITERION_GINI,
    SplitRecord,
    find_best_splits_classification,
    new_split_record,
    unconstrained,
)
from fasttree.kernels.split_record import check_split_record, write_split


@njit(no_cpython_wrapper=True)
def _store(record, f, s, value):
    record.gain[f, s] = value
    record.n_left[f, s] = f + s


@njit(parallel=True)
def _write_in_called_function(values, record):
    n_features, n_segments = values.shape
    for t in prange(n_features * n_segments):
        _store(record, t // n_segments, t % n_segments, values[t // n_segments, t % n_segments])


@njit(parallel=True)
def _write_through_field_read_before_loop(values, record):
    n_features, n_segments = values.shape
    gain = record.gain
    for t in prange(n_features * n_segments):
        gain[t // n_segments, t % n_segments] = values[t // n_segments, t % n_segments]


@njit(parallel=True)
def _write_split_in_loop(values, record):
    n_features, n_segments = values.shape
    for t in prange(n_features * n_segments):
        f, s = t // n_segments, t % n_segments
        write_split(record, f, s, 0.0, values[f, s], 0.0, 0.0, f + s, 0, 0, 0)


@pytest.mark.parametrize("kernel", [_write_in_called_function,
                                    _write_through_field_read_before_loop,
                                    _write_split_in_loop])
def test_parallel_loops_write_through_the_record(kernel):
    """The ways the kernels write a record from a parallel loop keep every write (numba loses
    writes to a named tuple's field read by name inside the loop body, numba issue #7135)."""
    values = np.arange(3 * 700, dtype=np.float64).reshape(3, 700) + 0.5
    record = new_split_record(3, 700)
    kernel(values, record)
    np.testing.assert_array_equal(record.gain, values)
    if kernel is not _write_through_field_read_before_loop:
        np.testing.assert_array_equal(record.n_left, np.add.outer(np.arange(3), np.arange(700)))


def _search(record, n_features=2, n_segments=1):
    """One classification search of two features and one node of four rows."""
    sorted_x = np.array([[0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 1.0, 1.0]], np.float32)[:n_features]
    sorted_idx = np.tile(np.arange(4, dtype=np.int32), (n_features, 1))
    sorted_y = np.tile(np.array([0, 0, 1, 1], np.uint8), (n_features, 1))
    find_best_splits_classification(
        sorted_x, sorted_idx, sorted_y, np.empty(0), np.array([0]), np.array([4]),
        np.array([[2.0, 2.0]]), np.ones((n_features, n_segments), np.uint8), CRITERION_GINI, 1,
        0.0, np.empty(0), 0.0, False, *unconstrained(), record)


def test_a_search_fills_the_record_it_is_given():
    record = new_split_record(2, 1)
    _search(record)
    np.testing.assert_array_equal(record.children_impurity, [[0.0], [0.0]])
    np.testing.assert_array_equal(record.threshold, [[1.5], [0.5]])
    np.testing.assert_array_equal(record.n_left, [[2], [2]])


def test_a_record_of_the_wrong_kind_or_shape_is_refused():
    record = new_split_record(2, 1)
    with pytest.raises(TypeError, match="SplitRecord"):
        _search(tuple(record))
    with pytest.raises(ValueError, match=r"shape \(2, 1\)"):
        _search(new_split_record(2, 3))
    fields = record._asdict()
    fields["gain"] = fields["gain"].astype(np.float32)
    with pytest.raises(ValueError, match="gain.*float64"):
        check_split_record(SplitRecord(**fields), 2, 1)
    fields = record._asdict()
    fields["threshold"] = np.zeros((2, 2))[:, :1]
    with pytest.raises(ValueError, match="threshold.*C-contiguous"):
        check_split_record(SplitRecord(**fields), 2, 1)
