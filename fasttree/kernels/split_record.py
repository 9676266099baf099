"""The split record every search kernel fills, and the functions that read it.

A search kernel evaluates, for each (feature, node) pair it is given, that feature's best split of
that node, and writes it into the pair's slot of a :class:`SplitRecord` (a struct of arrays of
shape ``(n_features, n_segments)``).  Kernels for different kinds of features (numeric thresholds,
categorical subsets, multiway) fill different feature rows of the same record;
:func:`select_best_splits` then picks one feature per node by an explicit rule, and
:func:`take_best_splits` reads the chosen fields out.

Kernels take the record as one argument.  Inside a parallel loop they write a pair's split with
:func:`write_split`, a function called, not inlined: numba loses writes to an array read from a
named tuple's field in the body of a ``prange`` loop, also once an inlined function does it
(numba issues #5872, #7135 and #10338, open on 0.68), while writes in a called function, or
through a field read before the loop, are kept (``tests/test_split_record.py`` checks both rules
on this numba).  The ``_store_*`` functions that compute a split's fields are inlined: called,
with the node's slices and tables as arguments, they cost about 60 ns a pair (95 of the 180 ms
of one search of B11 multiway's level of 1.6M small pairs, on one thread); the call of
:func:`write_split` with the record and scalars costs a few.
"""

from typing import NamedTuple

import numpy as np
from .._jit import njit

from .._dtypes import SELECT_GAIN_RATIO, SPLIT_THRESHOLD


class SplitRecord(NamedTuple):
    """Best split of every (feature, node) pair; each field has shape (n_features, n_segments).

    Attributes
    ----------
    children_impurity : float64
        ``sum_i w_i * I(child_i)`` of the best split; ``+inf`` where the pair has no valid split.
    gain : float64
        Impurity decrease per unit weight, ``I(node) - children_impurity / w``.
    split_info : float64
        Split information of the branch weights (C4.5), for the gain ratio.
    threshold : float64
        Numeric splits: rows with ``x <= threshold`` go left (``inf``: every known value left,
        the missing ones right).  Categorical subset splits: the number of categories, in the
        order of :func:`fasttree.kernels.categorical.subset_order`, that go left.
    n_left : int64
        Rows of the first branch.  For a numeric split whose missing rows go right (or that has
        none), the first ``n_left`` positions of the node in the feature's sorted row.
    n_branches : int32
        Children of the split (2 for binary splits); 0 where there is no valid split.
    missing_branch : int8
        Branch that rows missing the feature take (0 = left).  Where no row of the node misses the
        feature, the branch with more rows (scikit-learn's rule; right on a tie).
    n_missing : int64
        Rows of the node that miss the feature.
    n_candidates : int64
        Valid candidate thresholds evaluated (C4.5 charges ``log2`` of it to a numeric split).
    subset_class : int32
        Categorical subset splits: the class whose share orders the categories, or -1 when the
        order is by the binary/regression target mean.
    """

    children_impurity: np.ndarray
    gain: np.ndarray
    split_info: np.ndarray
    threshold: np.ndarray
    n_left: np.ndarray
    n_branches: np.ndarray
    missing_branch: np.ndarray
    n_missing: np.ndarray
    n_candidates: np.ndarray
    subset_class: np.ndarray


#: each field's dtype, as :func:`new_split_record` makes it (the kernels are compiled for these)
FIELD_DTYPES = {"children_impurity": np.float64, "gain": np.float64, "split_info": np.float64,
                "threshold": np.float64, "n_left": np.int64, "n_branches": np.int32,
                "missing_branch": np.int8, "n_missing": np.int64, "n_candidates": np.int64,
                "subset_class": np.int32}


@njit(cache=True, no_cpython_wrapper=True)
def write_split(record, f, s, children_impurity, gain, split_info, threshold, n_left,
                missing_branch, n_missing, n_candidates):
    """Write pair ``(f, s)``'s binary split (two branches) to ``record``, field by field as
    the :class:`SplitRecord` documents them.  Called, not inlined, from a parallel loop (see the
    module docstring)."""
    record.children_impurity[f, s] = children_impurity
    record.gain[f, s] = gain
    record.split_info[f, s] = split_info
    record.threshold[f, s] = threshold
    record.n_left[f, s] = n_left
    record.n_branches[f, s] = 2
    record.missing_branch[f, s] = missing_branch
    record.n_missing[f, s] = n_missing
    record.n_candidates[f, s] = n_candidates


@njit(cache=True, inline="always")
def missing_side(n_miss, missing_left, rows_left, n_node):
    """The branch (0 left, 1 right) of a binary split's missing rows: the side they were tried
    on where the node has some, else the branch with more rows (scikit-learn's rule)."""
    if n_miss > 0:
        return 0 if missing_left else 1
    return 0 if rows_left > n_node - rows_left else 1


@njit(cache=True, inline="always")
def leaf_minimums_met(n_left, n_right, w_left, w_right, min_samples_leaf, min_weight_leaf):
    """Whether both children of a candidate keep the leaf minimums (rows and weight) and some
    weight (a zero-weight child has no impurity)."""
    return (n_left >= min_samples_leaf and n_right >= min_samples_leaf
            and w_left >= min_weight_leaf and w_right >= min_weight_leaf
            and w_left > 0.0 and w_right > 0.0)


@njit(cache=True, inline="always")
def side_allowed(missing_left, coin_left, random, n_miss, last, n_left, n_right, w_left,
                 w_right, min_samples_leaf, min_weight_leaf):
    """The two-sided missing rule: whether a candidate with the node's missing rows left (if
    ``missing_left``) or right is tried.  Without draws both sides are, with a random threshold
    the coin's side only; the missing rows go left only if there are some and a known row stays
    right (the candidate is not the ``last`` known row); both children keep the leaf minimums
    (``n_*`` and ``w_*``: the children's rows and weights, the missing rows counted)."""
    if missing_left:
        tried = n_miss > 0 and not last and (coin_left or not random)
    else:
        tried = not coin_left
    return tried and leaf_minimums_met(n_left, n_right, w_left, w_right, min_samples_leaf,
                                       min_weight_leaf)


#: a two-sided scan's best on one side before any candidate: value, position, weight left
NO_CANDIDATE = (np.inf, -1, 0.0)


@njit(cache=True, inline="always")
def better_side(best_a, best_a_p, best_a_w, best_b, best_b_p, best_b_w):
    """The best of a two-sided scan: side a (the missing rows right), or side b (left) when
    strictly better.  Returns its value, position and weight left, and whether the missing rows
    go left."""
    if best_b < best_a:
        return best_b, best_b_p, best_b_w, True
    return best_a, best_a_p, best_a_w, False


#: the record's fields by dtype: each dtype's one block (:func:`new_split_record`) and its
#: fields' positions; and the fields' dtypes in order (:func:`check_split_record`): worked out
#: once, not per level
_BLOCKS = [(np.dtype(dtype), [i for i, name in enumerate(SplitRecord._fields)
                              if FIELD_DTYPES[name] is dtype])
           for dtype in dict.fromkeys(FIELD_DTYPES.values())]
_FIELD_DTYPES = tuple(np.dtype(FIELD_DTYPES[name]) for name in SplitRecord._fields)


def new_split_record(n_features, n_segments):
    """An empty :class:`SplitRecord`: no pair has a split until a kernel writes one."""
    # one block per dtype, each field a contiguous slice of it: four allocations, not ten
    shape = (n_features, n_segments)
    fields = [None] * len(SplitRecord._fields)
    for dtype, positions in _BLOCKS:
        block = np.zeros((len(positions),) + shape, dtype=dtype)
        for i, position in enumerate(positions):
            fields[position] = block[i]
    record = SplitRecord._make(fields)
    record.children_impurity.fill(np.inf)
    record.subset_class.fill(-1)
    return record


def check_split_record(record, n_features, n_segments):
    """Refuse a record the search kernels cannot fill: a :class:`SplitRecord` whose fields are
    C-contiguous arrays of shape ``(n_features, n_segments)`` and of :data:`FIELD_DTYPES`.

    Raises
    ------
    TypeError
        ``record`` is not a :class:`SplitRecord`.
    ValueError
        A field of another shape, dtype or memory layout.
    """
    if not isinstance(record, SplitRecord):
        raise TypeError("record must be a SplitRecord (new_split_record(n_features, n_segments)), "
                        f"got {type(record).__name__}")
    shape = (n_features, n_segments)
    for name, field, dtype in zip(SplitRecord._fields, record, _FIELD_DTYPES):
        if not isinstance(field, np.ndarray) or field.shape != shape:
            raise ValueError(f"record.{name} must have shape ({n_features}, {n_segments}), got "
                             f"{getattr(field, 'shape', type(field).__name__)}")
        if field.dtype != dtype:
            raise ValueError(f"record.{name} must be {dtype.name}, got {field.dtype}")
        if not field.flags.c_contiguous:
            raise ValueError(f"record.{name} must be C-contiguous")


#: C4.5's tolerance when comparing a gain with the average gain, and its least split information.
GAIN_RATIO_EPSILON = 1e-3


@njit(cache=True)
def select_best_splits(children_impurity, gain, split_info, n_branches, rule):
    """Reduce per-(feature, node) results to one feature per node, deterministically.

    Parameters
    ----------
    children_impurity, gain, split_info : ndarray of shape (n_features, n_segments), float64 (IN)
    n_branches : ndarray of shape (n_features, n_segments), int32 (IN)
        Fields of a :class:`SplitRecord` (``gain`` may carry C4.5's threshold penalty).
    rule : int
        ``SELECT_IMPURITY``: the lowest children impurity.  ``SELECT_GAIN_RATIO`` (C4.5): among
        the valid splits whose gain is positive and at least the average gain of the valid splits
        minus ``GAIN_RATIO_EPSILON``, the highest ``gain / split_info``.

    Returns
    -------
    best_feature : ndarray of shape (n_segments,), int64
        ``-1`` where no feature qualifies.  Ties go to the lowest feature index (serial scan,
        strict comparison).
    """
    n_features, n_segments = children_impurity.shape
    best_feature = np.full(n_segments, -1, dtype=np.int64)
    for s in range(n_segments):
        if rule == SELECT_GAIN_RATIO:
            total = 0.0
            n_valid = 0
            for f in range(n_features):
                if n_branches[f, s] > 0:
                    total += gain[f, s]
                    n_valid += 1
            if n_valid == 0:
                continue
            floor = total / n_valid - GAIN_RATIO_EPSILON
            best = -np.inf
            for f in range(n_features):
                if (n_branches[f, s] > 0 and gain[f, s] > 0.0 and gain[f, s] >= floor
                        and split_info[f, s] > GAIN_RATIO_EPSILON):
                    ratio = gain[f, s] / split_info[f, s]
                    if ratio > best:
                        best = ratio
                        best_feature[s] = f
        else:
            best = np.inf
            for f in range(n_features):
                if children_impurity[f, s] < best:
                    best = children_impurity[f, s]
                    best_feature[s] = f
    return best_feature


@njit(cache=True)
def take_best_splits(best, nodes, n_nodes, children_impurity, threshold, n_left, n_branches,
                     missing_branch, n_missing, subset_class, is_categorical, categorical_kind,
                     weight, impurity, root_weight):
    """Each node's chosen split, read out of a :class:`SplitRecord` into per-node arrays.

    Parameters
    ----------
    best : ndarray of shape (n_searched,), int64 (IN)
        The chosen feature of each searched node (:func:`select_best_splits`; -1: none).
    nodes : ndarray of shape (n_searched,), int64 (IN)
        Position of each searched node (record column ``j``) among the ``n_nodes`` nodes.
    n_nodes : int
    children_impurity, threshold, n_left, n_branches, missing_branch, n_missing, subset_class :
        ndarray of shape (n_features, n_searched) (IN)
        Fields of the record.
    is_categorical : ndarray of shape (n_features,), bool (IN)
    categorical_kind : int
        Split kind of a categorical feature (``SPLIT_SUBSET`` or ``SPLIT_MULTIWAY``); numeric
        features split by ``SPLIT_THRESHOLD``.
    weight, impurity : ndarray of shape (n_nodes,), float64 (IN)
    root_weight : float

    Returns
    -------
    feature, kind, threshold, missing_branch, n_branches, n_left, n_missing, subset_class :
        ndarray of shape (n_nodes,), int64 (float64 ``threshold``)
        ``feature`` is -1, the others 0 (``subset_class`` -1), at nodes with no split.
    improvement : ndarray of shape (n_nodes,), float64
        scikit-learn's improvement, the weighted impurity decrease relative to the root's
        weight: ``(weight * impurity - children_impurity) / root_weight``; 0 with no split.
    """
    out_feature = np.full(n_nodes, -1, dtype=np.int64)
    out_kind = np.zeros(n_nodes, dtype=np.int64)
    out_threshold = np.zeros(n_nodes)
    out_missing_branch = np.zeros(n_nodes, dtype=np.int64)
    out_n_branches = np.zeros(n_nodes, dtype=np.int64)
    out_n_left = np.zeros(n_nodes, dtype=np.int64)
    out_n_missing = np.zeros(n_nodes, dtype=np.int64)
    out_subset_class = np.full(n_nodes, -1, dtype=np.int64)
    out_improvement = np.zeros(n_nodes)
    for j in range(best.shape[0]):
        f = best[j]
        if f < 0:
            continue
        s = nodes[j]
        out_feature[s] = f
        out_kind[s] = categorical_kind if is_categorical[f] else SPLIT_THRESHOLD
        out_threshold[s] = threshold[f, j]
        out_missing_branch[s] = missing_branch[f, j]
        out_n_branches[s] = n_branches[f, j]
        out_n_left[s] = n_left[f, j]
        out_n_missing[s] = n_missing[f, j]
        out_subset_class[s] = subset_class[f, j]
        out_improvement[s] = (weight[s] * impurity[s] - children_impurity[f, j]) / root_weight
    return (out_feature, out_kind, out_threshold, out_missing_branch, out_n_branches, out_n_left,
            out_n_missing, out_subset_class, out_improvement)
