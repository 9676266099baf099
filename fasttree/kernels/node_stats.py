"""Per-node target statistics, computed from a node's contiguous rows."""

import numpy as np
from numba import prange

from .._jit import njit
from .._tasks import load_pointer, run_tasks, task_address

from .._dtypes import CRITERION_GRADIENT
from .criteria import regression_target_term


@njit(parallel=True, cache=True)
def segment_class_weights(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                          n_classes):
    """Weighted class counts of each segment.

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
    sorted_y : ndarray of shape (n_features, n_samples), uint8 or uint16, C-contiguous (IN)
        The working layout (see :mod:`fasttree.kernels.split_search`).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Indexed by row id; empty means every weight is 1.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    seg_feature : ndarray of shape (n_segments,), int64 (IN)
        Feature row that holds exactly segment ``s``'s rows in ``[seg_start[s], seg_end[s])``: any
        row once the segment is partitioned; before that, the split feature of its parent (whose
        row already has the left child first).  This lets the grower learn the children's
        statistics before deciding which nodes need partitioning at all.
    n_classes : int

    Returns
    -------
    class_weight : ndarray of shape (n_segments, n_classes), float64
    """
    out = np.zeros((seg_start.shape[0], n_classes))
    for s in prange(seg_start.shape[0]):
        _segment_class_weight(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                              seg_feature, out, s)
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _segment_class_weight(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                          out, s):
    """Row ``s`` of :func:`segment_class_weights`' ``out`` (zeros before)."""
    row_ids = sorted_idx[seg_feature[s]]
    labels = sorted_y[seg_feature[s], seg_start[s]:seg_end[s]]
    unit_weight = sample_weight.shape[0] == 0
    if unit_weight and out.shape[1] == 2:  # a sum the compiler vectorizes, 20x faster
        n_1 = 0
        for p in range(labels.shape[0]):
            n_1 += np.int64(labels[p])
        out[s, 0] = labels.shape[0] - n_1
        out[s, 1] = n_1
        return
    for p in range(seg_start[s], seg_end[s]):
        out[s, labels[p - seg_start[s]]] += 1.0 if unit_weight else sample_weight[row_ids[p]]


@njit(parallel=True, cache=True)
def segment_target_sums(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                        criterion):
    """Weighted count, sum and the criterion's third statistic of a regression target per segment.

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
    sorted_y : ndarray of shape (n_features, n_samples), float64, C-contiguous (IN)
        The working layout.
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Indexed by row id; empty means every weight is 1.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    seg_feature : ndarray of shape (n_segments,), int64 (IN)
        Feature row holding each segment's rows, as in :func:`segment_class_weights`.
    criterion : int
        ``CRITERION_SQUARED_ERROR`` (third statistic ``sum w*y**2``), ``CRITERION_POISSON``
        (``sum w*y*log(y)``) or ``CRITERION_GRADIENT`` (``sorted_y`` holds gradients and
        ``sample_weight`` hessians, already weighted: ``[sum h, sum g, 0]``).

    Returns
    -------
    sums : ndarray of shape (n_segments, 3), float64
        ``[sum w, sum w*y, c]`` per segment.
    """
    out = np.zeros((seg_start.shape[0], 3))
    for s in prange(seg_start.shape[0]):
        _segment_target_sum(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                            criterion, out, s)
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _segment_target_sum(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                        criterion, out, s):
    """Row ``s`` of :func:`segment_target_sums`' ``out``."""
    unit_weight = sample_weight.shape[0] == 0
    presummed = criterion == CRITERION_GRADIENT  # a gradient is a sum's term as it is
    row_ids = sorted_idx[seg_feature[s]]
    targets = sorted_y[seg_feature[s]]
    w_sum = 0.0
    wy_sum = 0.0
    wyy_sum = 0.0
    for p in range(seg_start[s], seg_end[s]):
        w = 1.0 if unit_weight else sample_weight[row_ids[p]]
        y = targets[p]
        w_sum += w
        wy_sum += y if presummed else w * y
        wyy_sum += w * regression_target_term(y, criterion)
    out[s, 0] = w_sum
    out[s, 1] = wy_sum
    out[s, 2] = wyy_sum


@njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)
def _class_weights_task(pointer, s):
    sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature, out = load_pointer(
        pointer)
    _segment_class_weight(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                          out, s)


@njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)
def _target_sums_task(pointer, s):
    (sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature, criterion,
     out) = load_pointer(pointer)
    _segment_target_sum(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
                        criterion, out, s)


def run_segment_class_weights(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                              seg_feature, n_classes):
    """:func:`segment_class_weights`, each segment a task function (:mod:`fasttree._tasks`):
    what the growers call, so that a first fit compiles no parallel loop of its own for it
    (the kernel took 1.2 s of a first classifier fit's compile)."""
    out = np.zeros((seg_start.shape[0], n_classes))
    data = (sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature, out)
    run_tasks(task_address(_class_weights_task, data), data, seg_start.shape[0])
    return out


def run_segment_target_sums(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                            seg_feature, criterion):
    """:func:`segment_target_sums`, each segment a task function, as
    :func:`run_segment_class_weights`."""
    out = np.zeros((seg_start.shape[0], 3))
    data = (sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_feature,
            np.int64(criterion), out)
    run_tasks(task_address(_target_sums_task, data), data, seg_start.shape[0])
    return out
