"""Per-node target statistics, computed from a node's contiguous rows."""

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def segment_class_weights(row_ids, labels, sample_weight, seg_start, seg_end, n_classes):
    """Weighted class counts of each segment.

    Parameters
    ----------
    row_ids : ndarray of shape (n_samples,), int32 (IN)
        Any one row of the working layout, e.g. ``sorted_idx[0]``: every feature row holds the same
        set of rows inside a segment.
    labels : ndarray of shape (n_samples,), uint8 or uint16 (IN)
        The matching row of the label layout, e.g. ``sorted_y[0]`` (``labels[p]`` is the class of
        row ``row_ids[p]``).
    sample_weight : ndarray of shape (n_samples,), float64 (IN)
        Indexed by row id.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
    n_classes : int

    Returns
    -------
    class_weight : ndarray of shape (n_segments, n_classes), float64
    """
    n_segments = seg_start.shape[0]
    out = np.zeros((n_segments, n_classes))
    for s in prange(n_segments):
        for p in range(seg_start[s], seg_end[s]):
            out[s, labels[p]] += sample_weight[row_ids[p]]
    return out


@njit(parallel=True, cache=True)
def segment_target_sums(row_ids, targets, sample_weight, seg_start, seg_end):
    """Weighted count, sum and sum of squares of a regression target per segment.

    Parameters
    ----------
    row_ids : ndarray of shape (n_samples,), int32 (IN)
        Any one row of the working layout, e.g. ``sorted_idx[0]``.
    targets : ndarray of shape (n_samples,), float64 (IN)
        The matching row of the target layout, e.g. ``sorted_y[0]``.
    sample_weight : ndarray of shape (n_samples,), float64 (IN)
        Indexed by row id.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)

    Returns
    -------
    sums : ndarray of shape (n_segments, 3), float64
        ``[sum w, sum w*y, sum w*y**2]`` per segment.
    """
    n_segments = seg_start.shape[0]
    out = np.zeros((n_segments, 3))
    for s in prange(n_segments):
        w_sum = 0.0
        wy_sum = 0.0
        wyy_sum = 0.0
        for p in range(seg_start[s], seg_end[s]):
            w = sample_weight[row_ids[p]]
            y = targets[p]
            w_sum += w
            wy_sum += w * y
            wyy_sum += w * y * y
        out[s, 0] = w_sum
        out[s, 1] = wy_sum
        out[s, 2] = wyy_sum
    return out
