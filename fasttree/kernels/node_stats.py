"""Per-node target statistics, computed from a node's contiguous rows."""

import numpy as np
from numba import prange

from .._jit import njit

from .._dtypes import CRITERION_GRADIENT
from .criteria import regression_target_term
from .work_items import WorkItems, add_chunks, item_span


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

    Notes
    -----
    Parallel over work items balanced by rows (:mod:`fasttree.kernels.work_items`): a large
    segment is counted in row chunks whose counts are added in chunk order, so the sums are the
    same for any thread count.
    """
    return _segment_class_weights(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                                  *_segment_items(seg_start, seg_end, seg_feature).arrays(),
                                  n_classes)


def _segment_items(seg_start, seg_end, seg_feature):
    """Work items over the segments' rows, each read from its own feature row."""
    n_segments = seg_start.shape[0]
    return WorkItems(np.asarray(seg_feature, dtype=np.int64), np.arange(n_segments),
                     np.maximum(seg_end - seg_start, 0), np.ones(n_segments, np.bool_))


@njit(parallel=True, cache=True)
def _segment_class_weights(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                           pair_feature, pair_segment, item_first, item_stop, item_lo, item_hi,
                           pair_chunk, pair_n_chunks, n_classes):
    n_items = item_first.shape[0]
    unit_weight = sample_weight.shape[0] == 0
    out = np.zeros((seg_start.shape[0], n_classes))
    chunk_out = np.zeros((n_items, n_classes))
    for i in prange(n_items):
        counts = np.zeros(n_classes, dtype=np.int64)  # integers: no float add waits on the last
        for q in range(item_first[i], item_stop[i]):
            first, stop = item_span(i, q, seg_start, seg_end, pair_segment, item_lo, item_hi)
            labels = sorted_y[pair_feature[q], first:stop]
            row_ids = sorted_idx[pair_feature[q], first:stop]
            dest = chunk_out[i] if item_hi[i] > 0 else out[pair_segment[q]]
            if unit_weight and n_classes == 2:  # a sum the compiler vectorizes
                n_1 = 0
                for p in range(labels.shape[0]):
                    n_1 += np.int64(labels[p])
                dest[0] = labels.shape[0] - n_1
                dest[1] = n_1
            elif unit_weight:
                counts[:] = 0
                for p in range(labels.shape[0]):
                    counts[labels[p]] += 1
                for k in range(n_classes):
                    dest[k] = counts[k]
            else:
                for p in range(labels.shape[0]):
                    dest[labels[p]] += sample_weight[np.uint64(row_ids[p])]
    add_chunks(out, chunk_out, pair_segment, pair_chunk, pair_n_chunks)
    return out


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

    Notes
    -----
    Over work items balanced by rows, as :func:`segment_class_weights`: a large segment's chunk
    sums are added in chunk order, the same for any thread count.
    """
    return _segment_target_sums(sorted_idx, sorted_y, sample_weight, seg_start, seg_end,
                                *_segment_items(seg_start, seg_end, seg_feature).arrays(),
                                criterion)


@njit(parallel=True, cache=True)
def _segment_target_sums(sorted_idx, sorted_y, sample_weight, seg_start, seg_end, pair_feature,
                         pair_segment, item_first, item_stop, item_lo, item_hi, pair_chunk,
                         pair_n_chunks, criterion):
    unit_weight = sample_weight.shape[0] == 0
    presummed = criterion == CRITERION_GRADIENT  # a gradient is a sum's term as it is
    out = np.zeros((seg_start.shape[0], 3))
    chunk_out = np.zeros((item_first.shape[0], 3))
    for i in prange(item_first.shape[0]):
        for q in range(item_first[i], item_stop[i]):
            first, stop = item_span(i, q, seg_start, seg_end, pair_segment, item_lo, item_hi)
            row_ids = sorted_idx[pair_feature[q], first:stop]
            targets = sorted_y[pair_feature[q], first:stop]
            w_sum = 0.0
            wy_sum = 0.0
            wyy_sum = 0.0
            for p in range(targets.shape[0]):
                w = 1.0 if unit_weight else sample_weight[np.uint64(row_ids[p])]
                y = targets[p]
                w_sum += w
                wy_sum += y if presummed else w * y
                wyy_sum += w * regression_target_term(y, criterion)
            dest = chunk_out[i] if item_hi[i] > 0 else out[pair_segment[q]]
            dest[0] = w_sum
            dest[1] = wy_sum
            dest[2] = wyy_sum
    add_chunks(out, chunk_out, pair_segment, pair_chunk, pair_n_chunks)
    return out
