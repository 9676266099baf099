"""Where a row goes at a split node: one rule for growing, predicting and pruning.

A split is described the same way in the grower's per-level arrays and in a fitted tree:

* ``kind``: ``SPLIT_THRESHOLD`` (``x <= threshold`` goes to branch 0, else branch 1),
  ``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY`` (branch ``category_branch[category_offset + code]`` for
  the category code ``x``);
* ``missing_branch``: the branch of a row whose value is missing (NaN);
* categorical splits map every category code ``0 .. n_categories - 1`` and one more slot, for a
  code the tree has never seen, to a branch: ``b`` for a category that reached the node in
  training, ``-1 - b`` for one that did not (it is sent to branch ``b``, the heaviest; the sign
  only keeps that fact for readers such as ``export_text``).
"""

import numpy as np

from .._jit import njit
from .._tasks import load_pointer, run_tasks, task_address
from .work_items import row_chunks

from .._dtypes import SPLIT_MULTIWAY, SPLIT_SUBSET, SPLIT_THRESHOLD


@njit(cache=True, inline="always")
def branch_of(x, kind, threshold, missing_branch, category_offset, n_codes, category_branch):
    """Branch (child rank, 0 = left) that a value ``x`` takes at a split.

    A categorical value that is not a known code (negative, fractional, or ``>= n_codes - 1``)
    takes the branch of the last slot, the "unseen category" one.
    """
    if x != x:
        return np.int64(missing_branch)
    if kind == SPLIT_THRESHOLD:
        return np.int64(x > threshold)
    code = n_codes - 1
    if x >= 0.0 and x < n_codes - 1 and x == np.floor(x):
        code = np.int64(x)
    b = np.int64(category_branch[category_offset + code])
    return b if b >= 0 else -1 - b


@njit(cache=True)
def check_tree(n_features, children_left, children_right, feature, threshold, split_kind,
               missing_branch, category_offset, category_n_codes, category_branch):
    """Check, in O(nodes), everything a walk down the tree indexes; raise ``ValueError``.

    The contract of :class:`fasttree.tree.Tree`: equal lengths, at least the root; a split node's
    children ``children_left[i] .. children_right[i]`` are consecutive ids after ``i`` (two for
    a threshold; so no walk can loop), its feature is below ``n_features`` (``-1``: not checked),
    its kind is known, its missing branch and every branch of its category map name one of its
    children, and its map lies inside ``category_branch``.  Every public kernel that walks a
    tree calls this first, so arrays from anywhere cannot crash the process.

    Returns
    -------
    depth : int
        The tree's depth: edges on its longest root-to-leaf walk (an upper bound on any walk,
        also when arrays from elsewhere give a node more than one parent).
    """
    n = children_left.shape[0]
    if n == 0:
        raise ValueError("the tree has no node")
    if (children_right.shape[0] != n or feature.shape[0] != n or threshold.shape[0] != n
            or split_kind.shape[0] != n or missing_branch.shape[0] != n
            or category_offset.shape[0] != n or category_n_codes.shape[0] != n):
        raise ValueError("the tree's node arrays differ in length")
    n_map = category_branch.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    max_depth = 0
    for node in range(n):
        left = children_left[node]
        right = children_right[node]
        if left == -1:
            if right != -1:
                raise ValueError("a leaf (children_left -1) has a right child")
            continue
        if not (node < left <= right < n):
            raise ValueError("a split node's children must be consecutive ids after it and "
                             "below node_count (the tree is numbered parents first)")
        if feature[node] < 0 or (n_features >= 0 and feature[node] >= n_features):
            raise ValueError("a split node's feature is out of range for the input")
        n_branches = right - left + 1
        kind = split_kind[node]
        if kind == SPLIT_THRESHOLD:
            if n_branches != 2:
                raise ValueError("a threshold split needs exactly two children")
        elif kind == SPLIT_SUBSET or kind == SPLIT_MULTIWAY:
            start = category_offset[node]
            length = category_n_codes[node]
            if start < 0 or length < 1 or start + length > n_map:
                raise ValueError("a categorical split's map is outside category_branch")
            for j in range(start, start + length):
                b = category_branch[j]
                b = b if b >= 0 else -1 - b
                if b >= n_branches:
                    raise ValueError("a categorical split's map names a missing child")
        else:
            raise ValueError("unknown split_kind")
        if missing_branch[node] < 0 or missing_branch[node] >= n_branches:
            raise ValueError("a split node's missing_branch names a missing child")
        # the longest walk into each child: a child may be claimed by more than one node, and
        # every parent has a lower id, so ``depth[node]`` is final here
        for c in range(left, right + 1):
            depth[c] = max(depth[c], depth[node] + 1)
        max_depth = max(max_depth, depth[node] + 1)
    return max_depth


def numeric_split_arrays(missing_branch):
    """The split-kind and category arrays of a tree whose every split is a numeric threshold.

    A learner that grows thresholds only (with :func:`~fasttree.kernels.partition_segments`)
    walks its tree with :func:`~fasttree.kernels.apply_tree` as
    ``apply_tree(X, children_left, children_right, feature, threshold,
    *numeric_split_arrays(missing_branch))``.

    Parameters
    ----------
    missing_branch : array-like of shape (node_count,), int
        Branch (0 = left, 1 = right) of a row whose split value is missing, for instance the
        split record's ``missing_branch`` of each chosen split; 0 at leaves.

    Returns
    -------
    split_kind : ndarray of shape (node_count,), uint8
        ``SPLIT_THRESHOLD`` everywhere.
    missing_branch : ndarray of shape (node_count,), int32
    category_offset : ndarray of shape (node_count,), int64
        -1 everywhere (no category map).
    category_n_codes : ndarray of shape (node_count,), int64
        0 everywhere.
    category_branch : ndarray of shape (0,), int32
    """
    missing_branch = np.ascontiguousarray(missing_branch, dtype=np.int32)
    if missing_branch.ndim != 1:
        raise ValueError(f"missing_branch must be 1-D, got shape {missing_branch.shape}")
    n = missing_branch.shape[0]
    return (np.full(n, SPLIT_THRESHOLD, dtype=np.uint8), missing_branch,
            np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.zeros(0, dtype=np.int32))


#: rows of a chunk of a node routed by one thread (a node's chunks' sums are added in chunk
#: order, so the weights per branch do not depend on the thread count)
ROUTE_CHUNK_ROWS = 1 << 16


def route_rows(sorted_x, sorted_idx, sample_weight, seg_start, seg_end, split_feature,
               split_kind, split_threshold, split_missing_branch, category_offset,
               category_n_codes, category_branch, branch_offset, row_branch,
               chunk_rows=ROUTE_CHUNK_ROWS):
    """Branch of every row of the split nodes, and the rows and weight per branch.

    Parameters
    ----------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous (IN)
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
        The working layout (see :mod:`fasttree.kernels.split_search`).
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        Indexed by row id; empty means every weight is 1.
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Segments of the nodes to split; ranges must not overlap.
    split_feature, split_kind : ndarray of shape (n_segments,), int64 (IN)
    split_threshold : ndarray of shape (n_segments,), float64 (IN)
    split_missing_branch : ndarray of shape (n_segments,), int64 (IN)
        Branch of a missing value; ``-1`` sends missing rows down every branch (C4.5's
        fractional rows, see :func:`~fasttree.kernels.partition_segments_fractional`).
    category_offset, category_n_codes : ndarray of shape (n_segments,), int64 (IN)
        Where each categorical split's map starts in ``category_branch`` and its length
        (categories + 1 unseen slot); ignored for thresholds.
    category_branch : ndarray of shape (n_map,), int32 (IN)
    branch_offset : ndarray of shape (n_segments + 1,), int64 (IN)
        Node ``s``'s branches are ``branch_offset[s] .. branch_offset[s + 1] - 1`` of the output.
    row_branch : ndarray of shape (n_samples,), int32 (OUT)
        Branch of every row of these segments (indexed by row id), ``-1`` for every branch.
    chunk_rows : int, default ROUTE_CHUNK_ROWS
        Every node is routed in chunks of this many rows (at least 1), in parallel; a node's
        weight per branch is the sum of its chunks' sums in chunk order, so it depends on this
        size (not on the thread count).

    Returns
    -------
    branch_rows : ndarray of shape (branch_offset[-1],), int64
        Rows per branch (rows sent down every branch not included).
    branch_weight : ndarray of shape (branch_offset[-1],), float64
        Their weight.
    seg_all_branches : ndarray of shape (n_segments,), int64
        Rows of each node sent down every branch.
    """
    # every segment cut into chunks of chunk_rows rows (at least one), each with its own
    # counters: a node of most rows is routed by every thread
    seg_chunk, chunk_segment = row_chunks(seg_end - seg_start, chunk_rows)
    chunk_branch = np.zeros(chunk_segment.shape[0] + 1, dtype=np.int64)  # its first counter
    np.cumsum(np.diff(branch_offset)[chunk_segment], out=chunk_branch[1:])
    n_chunks = chunk_segment.shape[0]
    chunk_counts = np.zeros(chunk_branch[-1], dtype=np.int64)
    chunk_weight = np.zeros(chunk_branch[-1])
    chunk_all_branches = np.zeros(n_chunks, dtype=np.int64)
    data = (sorted_x, sorted_idx, sample_weight, seg_start, seg_end, split_feature, split_kind,
            split_threshold, split_missing_branch, category_offset, category_n_codes,
            category_branch, row_branch, seg_chunk, chunk_segment, chunk_branch,
            np.int64(chunk_rows), chunk_counts, chunk_weight, chunk_all_branches)
    run_tasks(task_address(_route_chunk, data), data, n_chunks)
    # the chunks' counters added in chunk order (bincount adds in index order): the same sums
    # for any thread count
    n_branches = branch_offset[-1]
    branch_of_counter = np.arange(chunk_branch[-1]) + np.repeat(
        branch_offset[chunk_segment] - chunk_branch[:-1], np.diff(chunk_branch))
    branch_rows = np.bincount(branch_of_counter, chunk_counts, n_branches).astype(np.int64)
    branch_weight = np.bincount(branch_of_counter, chunk_weight, n_branches)
    seg_all_branches = np.bincount(chunk_segment, chunk_all_branches,
                                   seg_start.shape[0]).astype(np.int64)
    return branch_rows, branch_weight, seg_all_branches


@njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)
def _route_chunk(pointer, c):
    """Chunk ``c`` of :func:`route_rows` (:func:`~fasttree.kernels.work_items.row_chunks`), a
    task function (:mod:`fasttree._tasks`): its rows' branches, and its own counters from
    ``chunk_branch[c]`` on."""
    (sorted_x, sorted_idx, sample_weight, seg_start, seg_end, split_feature, split_kind,
     split_threshold, split_missing_branch, category_offset, category_n_codes, category_branch,
     row_branch, seg_chunk, chunk_segment, chunk_branch, chunk_rows, chunk_counts, chunk_weight,
     chunk_all_branches) = load_pointer(pointer)
    unit_weight = sample_weight.shape[0] == 0
    s = chunk_segment[c]
    lo = seg_start[s] + (c - seg_chunk[s]) * chunk_rows
    hi = min(lo + chunk_rows, seg_end[s])
    xs = sorted_x[split_feature[s], lo:hi]
    idx = sorted_idx[split_feature[s], lo:hi]
    first = chunk_branch[c]
    for p in range(xs.shape[0]):
        b = branch_of(xs[p], split_kind[s], split_threshold[s], split_missing_branch[s],
                      category_offset[s], category_n_codes[s], category_branch)
        row_branch[idx[p]] = b
        if b < 0:
            chunk_all_branches[c] += 1
        else:
            chunk_counts[first + b] += 1
            chunk_weight[first + b] += 1.0 if unit_weight else sample_weight[idx[p]]
