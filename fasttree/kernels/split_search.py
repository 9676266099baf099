"""Exact split search on numeric features: every node of a level, every feature, every midpoint.

Layout shared by the kernels here and in :mod:`fasttree.kernels.partition` (one row per feature)::

    sorted_x[f]   | node a: sorted by x_f, NaN last | node b: ...      | ... | finished leaves |
                   ^seg_start[0]                      ^seg_start[1]
    sorted_idx[f] | the row ids of those values, same positions                              |
    sorted_y[f]   | their targets (class labels or regression values), same positions        |

A node ("segment") owns the positions ``seg_start[s] <= p < seg_end[s]`` in *every* feature row, so
its rows are contiguous and already in sorted order for each feature: one forward scan with
cumulative statistics evaluates all its candidate thresholds.  Missing values (NaN) sort after
every number, so a node's missing rows are the tail of its segment.  Carrying the targets along in
``sorted_y`` makes an unweighted scan purely sequential (no gather through row ids).

Both kernels write, per (feature, node), the best split into a :class:`~fasttree.kernels.
split_record.SplitRecord` (one argument, ``record``): its children impurity
``w_left * I(left) + w_right * I(right)`` (lower is better, ``+inf``: no valid split), gain, split
information, threshold, rows going left and where missing rows go.

Two sorted values at most ``FEATURE_THRESHOLD`` (1e-7) apart count as one, as in scikit-learn.

The scans index tables and weights with unsigned integers (``table[np.uint64(n_right)]``,
``sample_weight[np.uint64(idx[p])]``): for a signed index numba wraps negative values around as
Python does, a test and a select at every access whose index LLVM cannot prove non-negative (a
difference of counts, a row id read from memory); counts and row ids never are negative.

Missing values follow scikit-learn (>= 1.3): with missing rows at a node, every candidate is tried
with them on the left and on the right, and "every known value left, missing right" (threshold
``inf``) is a candidate too; on a tie, missing-right wins, then the lowest threshold.
"""

import numba
import numpy as np

from .._jit import njit, specialized, with_globals
from .._tasks import load_pointer, run_tasks, task_address
from .._threads import each_range_in_threads

from .._dtypes import (
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)
from .criteria import (
    regression_target_term,
    sums_node_impurity,
    sums_proxy,
    sums_value,
    two_children_class_impurity,
    weighted_class_impurity,
    weighted_node_impurities,
    weighted_regression_impurity,
    xlog2x,
)
from .monotonic import constraint_of, monotonic_ok
from .presort import check_row_ids
from .split_record import (NO_CANDIDATE, better_side, check_split_record, missing_side,
                           new_split_record, write_split)
from . import work_items
from .work_items import (MIN_TASK_ROWS, SUM_BLOCK_ROWS, WorkItems, chunk_class_prefix,
                         chunk_sum_prefix, exact_tasks, grid_tasks, tasks_per_level)


#: scikit-learn's ``FEATURE_THRESHOLD`` (float32, like the values): two sorted values closer than
#: this are one value (no threshold between them), and a feature spanning no more is constant.
FEATURE_THRESHOLD = np.float32(1e-7)


@njit(cache=True, inline="always")
def _same_value(a, b):
    """Whether the sorted values ``a <= b`` are too close for a threshold between them (float32
    arithmetic, as scikit-learn's; False when ``b`` is NaN)."""
    return b <= a + FEATURE_THRESHOLD


@njit(cache=True, inline="always")
def _midpoint(a, b):
    """Float64 midpoint of two consecutive distinct float32 values, never equal to ``b``.

    ``a/2 + b/2`` cannot overflow; if rounding lands on ``b`` (values one ulp apart in float64),
    fall back to ``a`` so that ``x <= threshold`` still separates them (scikit-learn does the same).
    """
    t = np.float64(a) / 2.0 + np.float64(b) / 2.0
    if t == np.float64(b):
        t = np.float64(a)
    return t


@njit(cache=True, inline="always")
def count_missing(xs):
    """Rows at the end of a node's sorted slice whose value is missing (NaN sorts last)."""
    n = xs.shape[0]
    n_missing = 0
    while n_missing < n and xs[n - 1 - n_missing] != xs[n - 1 - n_missing]:
        n_missing += 1
    return n_missing


@njit(cache=True, inline="always")
def _binary_split_info(w_left, w_right, w_missing, table):
    """Split information of two branches (and a third, of missing rows, when C4.5's fractional
    rows keep them apart).  It runs once per (feature, node) pair, so no array, and with integer
    weights ``c log2 c`` comes from ``table`` when one is given."""
    total = w_left + w_right + w_missing
    if total <= 0.0:
        return 0.0
    if table.shape[0] > 0:
        s = (table[np.int64(total)] - table[np.int64(w_left)] - table[np.int64(w_right)]
             - table[np.int64(w_missing)])
    else:
        s = xlog2x(total) - xlog2x(w_left) - xlog2x(w_right) - xlog2x(w_missing)
    return max(s / total, 0.0)


@njit(cache=True, inline="always")
def _unit_counts_impurity(n_left, n_right, left, total, sq_left, sq_right, criterion, table):
    """Children impurity of a unit-weight split from integer class counts (``left`` and the
    node's ``total``) and, for Gini, the sums of their squares on each side."""
    if criterion == CRITERION_GINI:
        return (n_left - sq_left / n_left) + (n_right - sq_right / n_right)
    value = table[np.uint64(n_left)] + table[np.uint64(n_right)]
    for k in range(left.shape[0]):  # int64 first: the histogram splitter's counts are floats
        value -= (table[np.uint64(np.int64(left[k]))]
                  + table[np.uint64(np.int64(total[k] - left[k]))])
    return value


@njit(cache=True, inline="always")
def _children_by_side(left, total, w_left, w_right, criterion, table):
    """Children impurity of a binary split, each side's ``w * I`` computed first, then added:
    the form of the scans of nodes with missing rows (sorted rows and bins alike, so that both
    splitters agree bit for bit).  ``left`` and ``total`` are class counts (floats or integers;
    the right side is ``total - left``); entropy reads ``c log2 c`` from ``table`` when it is
    given (integer counts), else computes it.  A pure side is exactly 0 when its weight equals
    its class's count, which the form adding both sides' terms at once does not guarantee."""
    if criterion == CRITERION_GINI:
        sq_left = 0.0
        sq_right = 0.0
        for k in range(left.shape[0]):
            c_left = left[k]
            c_right = total[k] - c_left
            sq_left += c_left * c_left
            sq_right += c_right * c_right
        return (w_left - sq_left / w_left) + (w_right - sq_right / w_right)
    if table.shape[0] > 0:  # integer-valued counts: int64 first, a plain conversion on any CPU
        s_left = table[np.uint64(np.int64(w_left))]
        s_right = table[np.uint64(np.int64(w_right))]
        for k in range(left.shape[0]):
            s_left -= table[np.uint64(np.int64(left[k]))]
            s_right -= table[np.uint64(np.int64(total[k] - left[k]))]
        return s_left + s_right
    s_left = xlog2x(w_left)
    s_right = xlog2x(w_right)
    for k in range(left.shape[0]):
        s_left -= xlog2x(left[k])
        s_right -= xlog2x(total[k] - left[k])
    return s_left + s_right


@njit(cache=True, inline="always")
def _binary_counts_impurity(n_left, left_1, n_right, right_1, criterion, table):
    """Children impurity of two sides given as (rows, rows of class 1), unit weights."""
    left_0 = n_left - left_1
    right_0 = n_right - right_1
    if criterion == CRITERION_GINI:
        return (n_left - (left_0 * left_0 + left_1 * left_1) / n_left) + (
            n_right - (right_0 * right_0 + right_1 * right_1) / n_right)
    return (table[np.uint64(n_left)] + table[np.uint64(n_right)]
            - (table[np.uint64(left_0)] + table[np.uint64(left_1)])
            - (table[np.uint64(right_0)] + table[np.uint64(right_1)]))


@njit(cache=True, no_cpython_wrapper=True)
def _classes_constraint_ok(cst, lower, upper, left_0, w_left, right_0, w_right):
    """:func:`~fasttree.kernels.monotonic.monotonic_ok` on the fraction of class 0 of two
    children.  A call rather than inlined, as :func:`_sums_constraint_ok`: only constrained
    pairs reach it."""
    return monotonic_ok(cst, lower, upper, left_0 / w_left, right_0 / w_right)


def _make_class_scan(unit_weight, binary, two_sided, constrained, counted):
    """Scan one (feature, node) pair with class statistics: any weights, two or more classes,
    missing rows, a monotonicity constraint; the one such scan of sorted rows.

    Minimises the children's weighted impurity over the candidates between consecutive distinct
    values.  With missing rows (the last ``n_missing``) every candidate is tried with them right
    (A) and left (B), and "all known rows left, missing right" is candidate A at the last known
    row; a threshold counts as a candidate if either side may take the missing rows.  Each child
    needs ``min_rows_leaf`` rows and, with weights, ``min_weight_leaf`` weight and a positive
    weight (with unit weights a child's weight is its row count, so the caller folds the weight
    minimum into ``min_rows_leaf``).  A constraint ``cst != 0`` is checked on the children's
    fractions of class 0 (:mod:`fasttree.kernels.monotonic`).  Within the pair a tie goes to the
    lowest threshold (strict ``<``).

    ``total`` holds the node's class counts and ``left`` those of the rows before ``p0`` (zeros
    for a whole node; a chunk's prefix, :mod:`fasttree.kernels.work_items`, for a pair without
    missing rows or constraint); both int64 with unit weights (integer counts: the values are
    exact, so ties between features are too), float64 otherwise, and ``left`` is updated in
    place.  ``scratch`` is a (2, n_classes) (or larger) array of the same dtype.  Only the
    candidates after positions ``p0 .. p1 - 1`` are scanned.  The arrays are the pair's slices
    of the layout (positions from 0, so that no index can be negative and numba emits no
    wrap-around checks).

    The factory's five flags are constants of the scan it makes, one compiled function per kind
    (numba prunes the branches a flag rules out as it reads the scan, so a kind compiles its own
    code only; flags passed as arguments to an inlined scan cost every copy the translation of
    the whole scan, 2-3 s each, measured).  A call, not inlined into the parallel kernels: one
    call per (feature, node) pair, and the kernel and the scan compile faster apart (measured
    with ``asv_bench/compile_times.py``).  The flags: every weight 1; two classes with integer
    weights (one integer counter per row; the values of :func:`_binary_counts_impurity`);
    missing rows possible (``n_missing`` may be > 0); a constraint possible (``cst`` may be
    != 0); ``counted``: the weights are small integer counts (uint8, a bootstrap's), so that the
    class counts are integers as with unit weights (exact, the same formulas and tables, a
    side's weight its count, not its rows).  With integer weights and more classes, Gini keeps
    the sums of squared counts up to date in O(1) per row and entropy reads ``c log2 c`` from
    ``table``.

    The scan made takes ``(xs, idx, labels, sample_weight, total, left, n_missing, scratch,
    criterion, min_rows_leaf, min_weight_leaf, table, cst, lower, upper, p0, p1)`` and returns
    (best value, best position ``i``: known rows ``0..i`` go left, or -1 if there is no
    valid split, missing go left, weight going left, candidates).
    """

    integer = unit_weight or counted  # integer class counts: exact, read from tables

    @njit(cache=True, no_cpython_wrapper=True)
    def scan(xs, idx, labels, sample_weight, total, left, n_missing, scratch, criterion,
             min_rows_leaf, min_weight_leaf, table, cst, lower, upper, p0, p1):
        n_classes = total.shape[0]
        n_node = xs.shape[0]
        n_known = n_node - n_missing
        missing = scratch[0]
        left_b = scratch[1]
        w_total = 0.0
        w_left = 0.0
        for k in range(n_classes):
            w_total += total[k]
            w_left += left[k]
        # integer weights: the node's and the left side's (rows with unit weights, else counts)
        iw_total = np.int64(w_total)
        iw_left = np.int64(w_left)
        total_1 = 0
        left_1 = 0
        if binary:
            total_1 = total[1]
            left_1 = left[1]
        sq_left = 0
        sq_right = 0
        if integer and not binary:
            for k in range(n_classes):
                sq_left += left[k] * left[k]
                sq_right += (total[k] - left[k]) * (total[k] - left[k])
        w_missing = 0.0
        iw_missing = 0
        missing_1 = 0
        if two_sided:
            missing[:] = 0
            for p in range(n_known, n_node):
                if unit_weight:
                    missing[labels[p]] += 1
                elif counted:
                    m = np.int64(sample_weight[np.uint64(idx[p])])
                    missing[labels[p]] += m
                    iw_missing += m
                else:
                    w = sample_weight[np.uint64(idx[p])]
                    missing[labels[p]] += w
                    w_missing += w
            if unit_weight:
                iw_missing = n_missing
            if integer:
                w_missing = np.float64(iw_missing)
            if binary:
                missing_1 = missing[1]
        best_a, best_a_p, best_a_w = NO_CANDIDATE
        best_b, best_b_p, best_b_w = NO_CANDIDATE
        n_candidates = 0
        # without missing rows, no candidate past this leaves the right child its minimum of rows
        stop = n_known if two_sided and n_missing > 0 else n_node - min_rows_leaf
        xs_from = xs[p0:]  # positions from p0: no negative index (see above)
        idx_from = idx[p0:]
        labels_from = labels[p0:]
        for j in range(min(p1, stop) - p0):
            c = labels_from[j]
            m = 1
            if counted:
                m = np.int64(sample_weight[np.uint64(idx_from[j])])
                iw_left += m
            if binary:
                left_1 += c * m if counted else c
            elif counted:
                c_left = left[c]
                c_right = total[c] - c_left
                sq_left += (2 * c_left + m) * m
                sq_right -= (2 * c_right - m) * m
                left[c] = c_left + m
            elif unit_weight:
                c_left = left[c]
                c_right = total[c] - c_left
                sq_left += 2 * c_left + 1
                sq_right -= 2 * c_right - 1
                left[c] = c_left + 1
            else:
                w = sample_weight[np.uint64(idx_from[j])]
                left[c] += w
                w_left += w
            p = p0 + j
            last = two_sided and p + 1 == n_known
            if not last and _same_value(xs_from[j], xs_from[j + 1]):
                continue
            n_left = p + 1
            if unit_weight:
                iw_left = n_left
            if integer:
                w_left = np.float64(iw_left)
            valid = False
            # A: missing rows right (the right child's rows are enough when none are missing)
            w_right = w_total - w_left
            ok = n_left >= min_rows_leaf and (not two_sided or n_node - n_left >= min_rows_leaf)
            if not unit_weight:
                ok = (ok and w_left >= min_weight_leaf and w_right >= min_weight_leaf
                      and w_left > 0.0 and w_right > 0.0)  # a zero-weight child has no impurity
            if constrained and ok and cst != 0:
                left_0 = iw_left - left_1 if binary else left[0]
                ok = _classes_constraint_ok(cst, lower, upper, left_0, w_left, total[0] - left_0,
                                            w_right)
            if ok:
                valid = True
                if binary:
                    value = _binary_counts_impurity(iw_left, left_1, iw_total - iw_left,
                                                    total_1 - left_1, criterion, table)
                elif two_sided and n_missing > 0:
                    value = _children_by_side(left, total, w_left, w_right, criterion, table)
                elif integer:
                    value = _unit_counts_impurity(iw_left, iw_total - iw_left, left, total,
                                                  sq_left, sq_right, criterion, table)
                else:
                    value = two_children_class_impurity(left, total, w_left, w_right, criterion)
                if value < best_a:
                    best_a = value
                    best_a_p = p
                    if not unit_weight:
                        best_a_w = w_left
            if last:
                n_candidates += valid
                continue  # missing-left with every known row left is no split
            if two_sided and n_missing > 0:  # B: missing rows left
                n_left_b = n_left + n_missing
                iw_left_b = iw_left + iw_missing
                w_left_b = w_left + w_missing
                w_right_b = w_total - w_left_b
                ok = n_left_b >= min_rows_leaf and n_known - n_left >= min_rows_leaf
                if not unit_weight:
                    ok = (ok and w_left_b >= min_weight_leaf and w_right_b >= min_weight_leaf
                          and w_left_b > 0.0 and w_right_b > 0.0)
                if not binary:
                    for k in range(n_classes):
                        left_b[k] = left[k] + missing[k]
                if constrained and ok and cst != 0:
                    left_0 = iw_left_b - left_1 - missing_1 if binary else left_b[0]
                    ok = _classes_constraint_ok(cst, lower, upper, left_0, w_left_b,
                                                total[0] - left_0, w_right_b)
                if ok:
                    valid = True
                    if binary:
                        value = _binary_counts_impurity(iw_left_b, left_1 + missing_1,
                                                        iw_total - iw_left_b,
                                                        total_1 - missing_1 - left_1, criterion,
                                                        table)
                    else:
                        value = _children_by_side(left_b, total, w_left_b, w_right_b, criterion,
                                                  table)
                    if value < best_b:
                        best_b = value
                        best_b_p = p
                        if not unit_weight:
                            best_b_w = w_left_b
            n_candidates += valid
        if unit_weight:  # a side's weight is its rows: not carried through the loop (12-16 %
            # of B3's and B5's scans, measured)
            best_a_w = best_a_p + 1.0
            best_b_w = best_b_p + 1.0 + n_missing
        best, best_p, w_best, missing_left = better_side(best_a, best_a_p, best_a_w, best_b,
                                                          best_b_p, best_b_w)
        return best, best_p, missing_left, w_best, n_candidates

    return scan


#: The scan of weighted rows without missing ones or constraint (C4.5's known rows, MDL cuts).
def _class_scan(unit_weight, binary, two_sided, constrained, counted=False):
    """The scan :func:`_make_class_scan` makes for these flags, made once per process
    (:func:`fasttree._jit.specialized`)."""
    return specialized(_make_class_scan, unit_weight, binary, two_sided, constrained, counted)


_scan_weighted_classes = _class_scan(False, False, False, False)


def find_best_splits_classification(
    sorted_x,
    sorted_idx,
    sorted_y,
    sample_weight,
    seg_start,
    seg_end,
    seg_class_weight,
    feature_mask,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    xlog2x,
    min_branch_fraction,
    missing_fractional,
    monotonic_cst,
    node_bounds,
    record,
):
    """Best threshold of every numeric feature for every segment (node) of a level, classification.

    Parameters
    ----------
    sorted_x : ndarray of shape (n_features, n_samples), float32, C-contiguous (IN)
        Feature values, each node's rows contiguous and sorted, NaN last (see the module
        docstring).
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
        Row ids matching ``sorted_x`` (read only for a weighted fit).
    sorted_y : ndarray of shape (n_features, n_samples), uint8 or uint16, C-contiguous (IN)
        Encoded classes ``0 .. n_classes - 1`` of the rows at the same positions (from
        :func:`gather_targets`); uint8 up to 256 classes.
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 or uint8 (IN)
        Non-negative weights indexed by row id; an empty array means every weight is 1, and the
        kernel then counts in integers and reads neither weights nor ``sorted_idx``: the scan
        touches contiguous memory only.  uint8 weights are counts (a bootstrap's, each row
        drawn 1 to 255 times): the class counts are integers as with unit weights, exact and
        scored by the same formulas and tables, and ``min_samples_leaf`` counts rows, not
        draws (scikit-learn's rule).
    seg_start, seg_end : ndarray of shape (n_segments,), int64 (IN)
        Position range ``[seg_start[s], seg_end[s])`` of each node; ranges must not overlap.
    seg_class_weight : ndarray of shape (n_segments, n_classes), float64 (IN)
        Weighted class counts of each node (from :func:`segment_class_weights`, which takes the
        same weights).
    feature_mask : ndarray of shape (n_features, n_segments), uint8 (IN)
        0 skips the (feature, node) pair (other kinds of features, ``max_features``).
    criterion : int
        ``CRITERION_GINI`` (0) or ``CRITERION_ENTROPY`` (1, entropy in bits).
    min_samples_leaf : int
        Minimum number of rows (unweighted) in each child.
    min_weight_leaf : float
        Minimum weighted count in each child.
    xlog2x : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``c log2 c`` for integer counts (:func:`xlog2x_table`): required for entropy with unit
        weights, which then reads it instead of computing logarithms (with unit weights and any
        criterion it also gives the split information); with uint8 counts required for any
        criterion, longer than each node's count; ignored with float weights.
    min_branch_fraction : float
        C4.5's minimum branch weight for a threshold: each side must weigh at least
        ``min(25, min_branch_fraction * w_known / n_classes)`` (``w_known``: the node's weight
        with a known value); C4.5 uses 0.1.  0 disables the rule.
    missing_fractional : bool
        C4.5's treatment of missing rows: the threshold is chosen on the rows with a known value,
        the gain is scaled by their weighted share and the split information counts the missing
        rows as one more branch (``missing_branch`` is then the heavier branch, for rows that must
        take one).  Needs explicit ``sample_weight``.  False: scikit-learn's learned direction.
    monotonic_cst : ndarray of shape (n_features,) or (0,), int8 (IN)
        Monotonicity constraint of each feature (-1, 0, 1; :mod:`fasttree.kernels.monotonic`),
        on the fraction of class 0 (two classes); empty: none.  Not with ``missing_fractional``.
    node_bounds : ndarray of shape (n_segments, 2) or (0, 2), float64 (IN)
        ``[lower, upper]`` range of each node's value; read only with constraints.
    record : SplitRecord (OUT)
        From :func:`~fasttree.kernels.new_split_record`; only the unmasked pairs are written.

    Notes
    -----
    Parallel over work items balanced by rows (:mod:`fasttree.kernels.work_items`): a (feature,
    node) pair is scanned sequentially, or, when large, in row chunks from the class counts of
    the rows before each chunk, whose best candidates are then reduced in order; each pair writes
    only its own record slot.  With float weights chunk sizes depend on the level's rows only,
    so results do not depend on the number of threads (a chunked pair adds its weights in
    another order than one scan would); integer counts add up alike for any cut, so their
    tasks are one a thread (:func:`~fasttree.kernels.work_items.exact_tasks`).  Within
    a feature a tie goes to the lowest threshold (strict ``<``).

    A Python function choosing, per kind of call (weighted or not, two classes or more, missing
    values, C4.5's rules, constraints), a task function compiled for that kind only (see
    :func:`fasttree._jit.specialized`, :mod:`fasttree._tasks`): the first call of a kind
    compiles just the scans it uses.
    """
    check_split_record(record, *feature_mask.shape)
    unit_weight = sample_weight.shape[0] == 0
    counted = sample_weight.dtype == np.uint8
    if sample_weight.dtype not in (np.float64, np.uint8):
        raise TypeError(f"sample_weight must be float64 or uint8 counts, got {sample_weight.dtype}")
    if unit_weight and criterion == CRITERION_ENTROPY and xlog2x.shape[0] <= sorted_x.shape[1]:
        raise ValueError("entropy with unit weights needs xlog2x of length n_samples + 1 "
                         f"(xlog2x_table(n_samples)), got {xlog2x.shape[0]}")
    if counted and xlog2x.shape[0] <= seg_class_weight.sum(axis=1).max(initial=0.0):
        raise ValueError("uint8 counts need xlog2x longer than each node's count "
                         f"(xlog2x_table(total count)), got {xlog2x.shape[0]}")
    if (unit_weight or counted) and missing_fractional:
        raise ValueError("missing_fractional needs explicit float64 sample_weight (fractional "
                         "rows carry fractional weights)")
    integer = unit_weight or counted
    items, missing = numeric_scan_items(sorted_x, seg_start, seg_end, feature_mask,
                                        min_samples_leaf, monotonic_cst, exact=integer)
    kind = ("classes", unit_weight, integer and seg_class_weight.shape[1] == 2, missing,
            bool(missing_fractional), monotonic_cst.shape[0] > 0, counted and not unit_weight)
    # per node, once (not once per feature): weight and weighted impurity; computed here, not in
    # the kernel, so that its module does not optimize this function's code once more
    seg_weight, seg_weighted_impurity = weighted_node_impurities(seg_class_weight, criterion)
    chunk_left = chunk_class_prefix(sorted_idx, sorted_y, sample_weight, seg_start,
                                    *items.arrays(), seg_class_weight.shape[1])
    _run_on_items(kind, (sorted_x, sorted_idx, sorted_y, seg_start, seg_end),
                  (sample_weight, seg_class_weight, seg_weight, seg_weighted_impurity, criterion,
                   min_samples_leaf, min_weight_leaf, xlog2x, min_branch_fraction, monotonic_cst,
                   node_bounds), items, chunk_left, record)


#: the items' scores and record of a level without chunks (nothing writes to them: one for all
#: such levels)
_NO_CHUNK_SCORE = np.empty(0)
_NO_CHUNK_RECORD = new_split_record(0, 0)


def _run_on_items(kind, layout, args, items, chunk_stats, record):
    """Run the search of ``kind`` (``(name, *flags)``, see :data:`_ITEM_KINDS`) over ``items``
    into ``record``: ``layout`` is ``(sorted_x, sorted_idx, sorted_y, seg_start, seg_end)``,
    ``args`` the kind's arguments and ``chunk_stats`` each item's statistics of the rows before
    it (:func:`~fasttree.kernels.work_items.chunk_class_prefix`, ``chunk_sum_prefix``).

    A chunk writes the best split of its rows to its own column ``i`` (its item) of a record of
    the items, and its score (lowest best) to ``chunk_score``; each chunked pair then takes its
    chunks' best, the first chunk on a tie (each kept its lowest threshold, so the lowest wins as
    in one scan), and their candidates in all.  The items' record is as wide as the items, not
    the level (a record as wide as segments and items, copied in and out, took 66 ms a fit on
    B11 multiway's levels of thousands of nodes).  NumPy: nothing more for the kernels to
    compile."""
    chunk_score, chunk_record = _NO_CHUNK_SCORE, _NO_CHUNK_RECORD  # nothing writes to them
    if items.n_chunked:
        chunk_score = np.full(items.item_first.shape[0], np.inf)
        chunk_record = new_split_record(record.gain.shape[0], chunk_score.shape[0])
    data = (layout, (items.task_item,) + items.arrays(), args, chunk_stats, chunk_score,
            chunk_record, record)
    run_tasks(task_address(specialized(_make_item_search, *kind), data), data,
              items.task_item.shape[0] - 1)
    if items.n_chunked == 0:
        return
    chunked = np.flatnonzero(items.pair_chunk >= 0)
    k = items.pair_n_chunks[chunked]
    offsets = np.cumsum(k) - k
    chunk = np.repeat(items.pair_chunk[chunked] - offsets, k) + np.arange(k.sum())
    score = chunk_score[chunk]
    lowest = np.minimum.reduceat(score, offsets)
    first_lowest = np.flatnonzero(score == np.repeat(lowest, k))
    pair_rank, at = np.unique(np.repeat(np.arange(chunked.size), k)[first_lowest],
                              return_index=True)
    best = chunk[first_lowest[at]]
    found = np.isfinite(lowest[pair_rank])
    pair = chunked[pair_rank][found]
    f, s, column = items.pair_feature[pair], items.pair_segment[pair], best[found]
    for field, given in zip(chunk_record, record):
        given[f, s] = field[f, column]
    n_candidates = np.add.reduceat(chunk_record.n_candidates[items.pair_feature[chunked[
        np.repeat(np.arange(chunked.size), k)]], chunk], offsets)
    record.n_candidates[items.pair_feature[chunked], items.pair_segment[chunked]] = n_candidates


def grid_pair_search(pair_scan, task_scratch):
    """The task function of a kind's search that scans a level's (feature, node) pairs whole,
    one at a time (several outputs, absolute error), run by :func:`run_grid_search`: tasks of
    about equal rows cut from the grid (:func:`~fasttree.kernels.work_items.grid_tasks`: every
    core works whatever the number of features or nodes), each task's scratch
    ``task_scratch(args)``, and each pair of an unmasked feature, of at least ``2 *
    min_samples_leaf`` rows and not all one value scanned by ``pair_scan(f, s, start, end,
    scratch, args, record)`` (node ``s``'s positions ``start .. end - 1``), which writes only
    the pair's own slots of ``record``.  ``args`` is the kind's own tuple.

    A kernel factory: a kind makes its search once per process through its own factory keyed by
    flags (``specialized(kind_factory, *flags)``), which compiling ahead can make again in
    another process (a key holding compiled functions could not be).

    Returns
    -------
    task : numba dispatcher
        A task function of :mod:`fasttree._tasks`.
    """
    # the two functions reach the task as globals (with_globals): no local here may be named
    # scan_pair or new_scratch, or the task would close over them

    def grid_task(pointer, task):
        (sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf, args, record,
         first) = load_pointer(pointer)
        n_segments = seg_start.shape[0]
        width = max(n_segments, 1)  # pairs per feature (no division by 0 on an empty level)
        scratch = new_scratch(args)
        q0 = first[task]
        q1 = first[task + 1]
        # the task's pairs feature by feature, each feature's nodes in an inner loop
        for f in range(q0 // width, (q1 + width - 1) // width):
            for s in range(max(q0 - f * n_segments, 0), min(q1 - f * n_segments, n_segments)):
                start = seg_start[s]
                end = seg_end[s]
                if (feature_mask[f, s] == 0 or end - start < 2 * min_samples_leaf
                        or _same_value(sorted_x[f, start], sorted_x[f, end - 1])):
                    continue
                scan_pair(f, s, start, end, scratch, args, record)

    return njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
        with_globals(grid_task, scan_pair=pair_scan, new_scratch=task_scratch))


def run_grid_search(task, sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf, args,
                    record):
    """Run a search made by :func:`grid_pair_search` (``task``) on a level, in parallel."""
    first = grid_tasks(seg_start, seg_end, sorted_x.shape[0])
    data = (sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf, args, record, first)
    run_tasks(task_address(task, data), data, first.shape[0] - 1)


def numeric_scan_items(sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf,
                       monotonic_cst, chunk=True, exact=False, granule=1):
    """The (feature, node) pairs a numeric search scans, as work items balanced by rows
    (:class:`~fasttree.kernels.work_items.WorkItems`), and whether any of them has missing rows.

    A pair is scanned when unmasked, of at least ``2 * min_samples_leaf`` rows and not constant;
    it may be cut into row chunks (if ``chunk``) unless it has missing values or a monotonicity
    constraint (those scans look at the missing rows, or at the node's bounds, at every
    candidate; Poisson's scan counts the node's positive targets, so it passes False).
    ``exact``: no cut changes the statistics, so the tasks follow the thread count
    (:func:`~fasttree.kernels.work_items.exact_tasks`); ``granule``: chunks start at multiples
    of it (sums added in blocks).
    """
    if feature_mask.shape[0] * sorted_x.shape[1] < ONE_TASK_LAYOUT:
        # a layout this small makes one task of any level: its pairs listed in one serial
        # call, no plan to work out (three calls and 15 us of a small level's 40, measured)
        pair_feature, pair_segment, _, _, missing = _listed_pairs(
            _SMALL_LAYOUT, sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf,
            monotonic_cst, False)
        return WorkItems.one_task(pair_feature, pair_segment), missing
    status = _pair_status(sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf)
    pair_feature, pair_segment, pair_rows, chunkable, missing = _listed_pairs(
        status, sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf, monotonic_cst,
        chunk)
    total_rows = pair_rows.sum()
    n_tasks = tasks_per_level(total_rows)
    if exact and n_tasks > 1:  # (numba's thread count is a call of its own: not for one task)
        n_tasks = exact_tasks(total_rows, search_threads())
    return WorkItems(pair_feature, pair_segment, pair_rows, chunkable, n_tasks, granule), missing


#: a layout of fewer values (features x rows) makes one task of any level (each task has
#: ``MIN_TASK_ROWS`` rows at least: :func:`~fasttree.kernels.work_items.tasks_per_level`)
ONE_TASK_LAYOUT = MIN_TASK_ROWS


def search_threads():
    """The threads a search's tasks are cut for (:func:`numeric_scan_items` with ``exact``)."""
    return numba.get_num_threads()


#: :func:`_pair_status` of a pair not scanned, scanned, scanned with missing rows
PAIR_SKIPPED, PAIR_SCANNED, PAIR_MISSING = 0, 1, 2


@njit(cache=True, inline="always")
def _status_of(sorted_x, seg_start, seg_end, feature_mask, min_rows, f, s):
    """Pair (``f``, node ``s``)'s ``PAIR_*`` status (:func:`_pair_status`)."""
    start = seg_start[s]
    end = seg_end[s]
    if feature_mask[f, s] == 0 or end - start < min_rows:
        return PAIR_SKIPPED
    last = sorted_x[f, end - 1]
    if _same_value(sorted_x[f, start], last):
        return PAIR_SKIPPED
    return PAIR_MISSING if np.isnan(last) else PAIR_SCANNED


def _pair_status(sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf):
    """Each (feature, node) pair's ``PAIR_*`` status: scanned when unmasked, of at least
    ``2 * min_samples_leaf`` rows and not constant, with missing rows when its last value is NaN
    (NaN sorts last).  A task a feature (:mod:`fasttree._tasks`): a look at two values a pair,
    mostly cache misses on deep levels (serially, 0.6-2.2 ms of a 10 ms level of B5's,
    measured)."""
    status = np.empty(feature_mask.shape, dtype=np.uint8)
    data = (sorted_x, seg_start, seg_end, feature_mask, np.int64(max(2 * min_samples_leaf, 2)),
            status)
    run_tasks(task_address(_pair_status_task, data), data, feature_mask.shape[0])
    return status


@njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)
def _pair_status_task(pointer, f):
    """Feature ``f``'s row of :func:`_pair_status`."""
    sorted_x, seg_start, seg_end, feature_mask, min_rows, status = load_pointer(pointer)
    for s in range(feature_mask.shape[1]):
        status[f, s] = _status_of(sorted_x, seg_start, seg_end, feature_mask, min_rows, f, s)


#: :func:`_listed_pairs`'s ``status`` for a small layout (its pairs' status found there)
_SMALL_LAYOUT = np.zeros((0, 0), dtype=np.uint8)


@njit(cache=True)
def _listed_pairs(status, sorted_x, seg_start, seg_end, feature_mask, min_samples_leaf,
                  monotonic_cst, chunk):
    """The pairs a search scans, feature-major: their features, nodes and rows, whether each
    may be cut into chunks (``chunk``, and neither missing rows nor a monotonicity constraint),
    and whether any has missing rows.  ``status``: the pairs' :func:`_pair_status`, or
    ``_SMALL_LAYOUT`` to find it here, serially.  One serial walk (in NumPy a dozen calls, 10 us
    of a small level's 50, measured)."""
    n_features, n_segments = feature_mask.shape
    if status.shape[0] == 0:
        min_rows = max(2 * min_samples_leaf, 2)
        status = np.empty((n_features, n_segments), dtype=np.uint8)
        for f in range(n_features):
            for s in range(n_segments):
                status[f, s] = _status_of(sorted_x, seg_start, seg_end, feature_mask, min_rows,
                                          f, s)
    n_pairs = 0
    for f in range(n_features):
        for s in range(n_segments):
            n_pairs += status[f, s] != PAIR_SKIPPED
    pair_feature = np.empty(n_pairs, dtype=np.int64)
    pair_segment = np.empty(n_pairs, dtype=np.int64)
    pair_rows = np.empty(n_pairs, dtype=np.int64)
    chunkable = np.empty(n_pairs, dtype=np.bool_)
    any_missing = False
    q = 0
    for f in range(n_features):
        constrained = monotonic_cst.shape[0] > 0 and monotonic_cst[f] != 0
        for s in range(n_segments):
            if status[f, s] == PAIR_SKIPPED:
                continue
            missing = status[f, s] == PAIR_MISSING
            any_missing |= missing
            pair_feature[q] = f
            pair_segment[q] = s
            pair_rows[q] = seg_end[s] - seg_start[s]
            chunkable[q] = chunk and not (missing or constrained)
            q += 1
    return pair_feature, pair_segment, pair_rows, chunkable, any_missing


@njit(cache=True, inline="always")
def _item_pairs(items, i):
    """Work item ``i``'s pairs ``first .. stop - 1`` and whether it is a chunk of one pair
    (``items``: ``task_item`` and :meth:`WorkItems.arrays`, as :func:`_run_on_items` passes
    them)."""
    _, _, _, item_first, item_stop, _, item_hi, _, _ = items
    return item_first[i], item_stop[i], item_hi[i] > 0


@njit(cache=True, inline="always")
def _item_pair(layout, items, i, q):
    """Pair ``q`` of work item ``i``: its feature, its node, the node's slices of the layout
    (positions from 0, so that numba emits no wrap-around checks) and the positions ``p0 ..
    p1 - 1`` whose candidates it scans (a chunk's, or the whole node's)."""
    sorted_x, sorted_idx, sorted_y, seg_start, seg_end = layout
    _, pair_feature, pair_segment, _, _, item_lo, item_hi, _, _ = items
    f = pair_feature[q]
    s = pair_segment[q]
    start = seg_start[s]
    end = seg_end[s]
    chunked = item_hi[i] > 0
    p0 = item_lo[i] if chunked else np.int64(0)  # one type: one compiled scan
    p1 = item_hi[i] if chunked else end - start
    return f, s, sorted_x[f, start:end], sorted_idx[f, start:end], sorted_y[f, start:end], p0, p1


def _classes_kind(unit_weight, binary, may_miss, fractional, constrained, counted):
    """The class-count kind's hooks (:func:`_make_item_search`) for one kind of call.

    Every argument is a flag the hooks close over, so numba prunes the branches it rules out
    and each scan of :func:`_class_scan` inlined for one kind: ``unit_weight`` (no
    weights: integer counts), ``binary`` (integer weights and two classes), ``may_miss``
    (missing values in some segment), ``fractional`` (C4.5's missing rows), ``constrained``
    (monotonicity constraints), ``counted`` (uint8 counts as weights: integer counts).  A pair
    without missing rows or constraint takes the one-sided copy of the scan even in a kernel
    that has the others.  Arguments: ``(sample_weight, seg_class_weight, seg_weight,
    seg_weighted_impurity, criterion, min_samples_leaf, min_weight_leaf, xlog2x,
    min_branch_fraction, monotonic_cst, node_bounds)``.
    """
    fractional = may_miss and fractional
    integer = unit_weight or counted
    count = np.int64 if integer else np.float64  # class counts: integers with integer weights

    @njit(cache=True, no_cpython_wrapper=True)
    def prepare(args):
        criterion, min_samples_leaf, min_weight_leaf, xlog2x = args[4], args[5], args[6], args[7]
        # with unit weights a child of n rows weighs n, so both minimums are one row count
        min_rows_leaf = max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf)))
        table = xlog2x if integer and criterion == CRITERION_ENTROPY else np.empty(0)
        count_table = xlog2x if integer else np.empty(0)  # split information of counts
        return min_rows_leaf, table, count_table

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(args, level):
        n_classes = args[1].shape[1]
        # total, left, and 2 rows for the scan, 1 for C4.5
        return (np.empty(n_classes, dtype=count), np.empty(n_classes, dtype=count),
                np.empty((3, n_classes), dtype=count))

    def scan_item(args, level, work, layout, items, i, chunk_left, chunk_score, chunk_record,
                  record):
        (sample_weight, seg_class_weight, seg_weight, seg_weighted_impurity, criterion,
         min_samples_leaf, min_weight_leaf, _, min_branch_fraction, monotonic_cst,
         node_bounds) = args
        min_rows_leaf, table, count_table = level
        total, left, scratch = work
        n_classes = total.shape[0]
        first, stop, chunked = _item_pairs(items, i)
        for q in range(first, stop):
            f, s, xs_node, idx_node, labels_node, p0, p1 = _item_pair(layout, items, i, q)
            # a chunk: its rows' candidates, from the counts of the rows before it (zeros for a
            # whole pair)
            cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
            counts = seg_class_weight[s]
            w_node = seg_weight[s]
            for k in range(n_classes):
                total[k] = count(counts[k])
                left[k] = count(chunk_left[i, k])
            n_miss = count_missing(xs_node) if may_miss else 0  # chunked pairs miss none
            seg_min_weight = min_weight_leaf
            seg_min_rows = min_rows_leaf
            if min_branch_fraction > 0.0:
                seg_min_weight, seg_min_rows = _c45_min_branch(
                    xs_node, idx_node, sample_weight, n_miss, w_node, n_classes,
                    min_branch_fraction, min_weight_leaf, min_rows_leaf)
            min_rows = seg_min_rows if unit_weight else min_samples_leaf
            # each test starts with a constant flag: numba drops the branches it rules out
            if constrained and cst != 0:
                best, best_p, missing_left, w_left, n_cand = scan_constrained(
                    xs_node, idx_node, labels_node, sample_weight, total, left, n_miss, scratch,
                    criterion, min_rows, seg_min_weight, table, cst, lower, upper, p0, p1)
            elif fractional and n_miss > 0:
                _fractional_split(
                    f, s, xs_node, idx_node, labels_node, sample_weight, counts, n_miss, w_node,
                    seg_weighted_impurity[s], scratch, left, criterion, min_samples_leaf,
                    seg_min_weight, record)
                continue
            elif may_miss and not fractional and n_miss > 0:  # either side
                best, best_p, missing_left, w_left, n_cand = scan_two_sided(
                    xs_node, idx_node, labels_node, sample_weight, total, left, n_miss, scratch,
                    criterion, min_rows, seg_min_weight, table, 0, lower, upper, p0, p1)
            else:
                best, best_p, missing_left, w_left, n_cand = scan_one_sided(
                    xs_node, idx_node, labels_node, sample_weight, total, left, 0, scratch,
                    criterion, min_rows, seg_min_weight, table, 0, lower, upper, p0, p1)
            if chunked:  # its split at its item's column (_run_on_items)
                chunk_score[i] = best
            if best_p >= 0:
                _store_binary_split(
                    f, i if chunked else s, best, seg_weighted_impurity[s], w_node, w_left, xs_node,
                    best_p, n_miss, missing_left, n_cand, count_table,
                    chunk_record if chunked else record)

    # the kind's scans as the hook's globals (see with_globals), named by the calls above
    return prepare, new_scratch, with_globals(
        scan_item, scan_constrained=_class_scan(unit_weight, binary, may_miss, True, counted),
        scan_two_sided=_class_scan(unit_weight, binary, True, False, counted),
        scan_one_sided=_class_scan(unit_weight, binary, False, False, counted))


@njit(cache=True, no_cpython_wrapper=True)
def _fractional_split(f, s, xs, idx, labels, sample_weight, counts, n_miss, w_node,
                      node_weighted_impurity, scratch, left, criterion, min_samples_leaf,
                      min_weight, record):
    """C4.5's split of one node with missing rows: the threshold chosen on the known rows (the
    tail of the node's segment), written by :func:`_store_fractional_split`.  ``scratch`` is a
    (3, n_classes) float array."""
    n_known = xs.shape[0] - n_miss
    known = scratch[2]
    for k in range(counts.shape[0]):
        known[k] = counts[k]
    for p in range(n_known, xs.shape[0]):
        known[labels[p]] -= sample_weight[np.uint64(idx[p])]
    w_known = 0.0
    for k in range(counts.shape[0]):
        known[k] = max(known[k], 0.0)
        w_known += known[k]
    left[:] = 0.0
    best, best_p, _, w_left, n_cand = _scan_weighted_classes(
        xs[:n_known], idx[:n_known], labels[:n_known], sample_weight, known, left, 0, scratch,
        criterion, min_samples_leaf, min_weight, np.empty(0), 0, -np.inf, np.inf,
        np.int64(0), n_known)  # p0 int64, as the item scan's: one compiled scan for both
    if best_p >= 0:
        _store_fractional_split(
            f, s, best, weighted_class_impurity(known, criterion), node_weighted_impurity, w_node,
            w_known, w_left, xs, best_p, n_miss, n_cand, record)


#: C4.5's cap on its minimum branch weight for thresholds.
C45_MAX_MIN_BRANCH = 25.0


@njit(cache=True, inline="always")
def _c45_min_branch(xs, idx, sample_weight, n_miss, w_node, n_classes, fraction, min_weight_leaf,
                    min_rows_leaf):
    """C4.5's minimum weight (and, for unit weights, rows) on each side of a threshold:
    ``min(25, fraction * w_known / n_classes)``, never below the estimator's own minimums."""
    w_known = w_node
    n = xs.shape[0]
    for p in range(n - n_miss, n):
        w_known -= 1.0 if sample_weight.shape[0] == 0 else sample_weight[np.uint64(idx[p])]
    floor = min(C45_MAX_MIN_BRANCH, fraction * w_known / n_classes)
    min_weight = max(min_weight_leaf, floor)
    return min_weight, max(min_rows_leaf, np.int64(np.ceil(min_weight)))


@njit(cache=True, no_cpython_wrapper=True)
def _store_fractional_split(f, s, best, known_weighted_impurity, node_weighted_impurity, w_node,
                            w_known, w_left, xs, best_p, n_miss, n_cand, record):
    """Write one C4.5 split chosen on the known rows: gain scaled by their share, missing rows a
    branch of their own in the split information, "equivalent" children impurity; the missing
    rows' branch (for rows that must take one) is the heavier."""
    gain_value = (known_weighted_impurity - best) / w_node  # = (K / N) * gain on the known rows
    w_right = w_known - w_left
    write_split(record, f, s, node_weighted_impurity - w_node * gain_value, gain_value,
                _binary_split_info(w_left, w_right, w_node - w_known, np.empty(0)),
                _midpoint(xs[best_p], xs[best_p + 1]), best_p + 1,
                np.int64(0 if w_left >= w_right else 1), n_miss, np.int64(n_cand))


@njit(cache=True, inline="always")
def _store_binary_split(f, s, best, node_weighted_impurity, w_node, w_left, xs, best_p, n_miss,
                        missing_left, n_cand, table, record):
    """Write one numeric binary split (rows ``0..best_p`` of the known ones go left) to a record."""
    if best_p + 1 == xs.shape[0] - n_miss:
        threshold = np.inf  # every known value left, the missing ones right
    else:
        threshold = _midpoint(xs[best_p], xs[best_p + 1])
    rows_left = best_p + 1 + (n_miss if missing_left else 0)
    write_split(record, np.int64(f), s, best, (node_weighted_impurity - best) / w_node,
                _binary_split_info(w_left, w_node - w_left, 0.0, table), threshold, rows_left,
                missing_side(n_miss, missing_left, rows_left, xs.shape[0]), n_miss,
                np.int64(n_cand))


def gather_targets(sorted_idx, y):
    """Targets in layout order: ``sorted_y[f, p] = y[sorted_idx[f, p]]``, in parallel over
    features and row chunks (``GATHER_CHUNK_ROWS``: one feature keeps every thread busy), ranges
    of them on threads (:func:`fasttree._threads.each_range_in_threads`: it follows the presort,
    which runs on threads too).

    Parameters
    ----------
    sorted_idx : ndarray of shape (n_features, n_samples), int32, C-contiguous (IN)
    y : ndarray of shape (n_ids,), uint8 or uint16 (classes) or float64 (regression) (IN)
        Targets by row id: every id in ``sorted_idx`` must be in ``[0, n_ids)``.

    Returns
    -------
    sorted_y : ndarray of shape (n_features, n_samples), same dtype as ``y``

    Raises
    ------
    ValueError
        ``sorted_idx`` is not a C-contiguous 2-D int32 array, ``y`` is not 1-D, or a row id of
        the first feature row is outside ``[0, n_ids)``.  Every feature row must hold the same
        ids; an id outside ``y`` in another row gets a wrong target, never a read out of
        bounds.
    """
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        raise ValueError("y must be a 1-D array of targets by row id")
    check_row_ids(sorted_idx, y.shape[0], "the length of y")
    sorted_y = np.empty(sorted_idx.shape, dtype=y.dtype)  # numpy's: huge pages (see presort)
    n_features, n_samples = sorted_idx.shape
    chunk_rows = np.int64(GATHER_CHUNK_ROWS)
    n_chunks = -(-n_samples // chunk_rows)
    each_range_in_threads(lambda first, last: _gather_targets(sorted_idx, y, sorted_y, chunk_rows,
                                                              first, last), n_features * n_chunks)
    return sorted_y


#: rows of a task of :func:`gather_targets` (an argument of its kernel, so tests may change it)
GATHER_CHUNK_ROWS = 1 << 16


@njit(cache=True, nogil=True, noalias=True)
def _gather_targets(sorted_idx, y, sorted_y, chunk_rows, first_task, last_task):
    """Tasks ``first_task .. last_task - 1`` of :func:`gather_targets` (``noalias``:
    ``sorted_y`` is its new array)."""
    # an id outside y (a feature row not holding the first one's ids) is clamped: a wrong
    # target, never a read out of bounds
    n_samples = sorted_idx.shape[1]
    last = np.uint64(y.shape[0] - 1)
    n_chunks = (n_samples + chunk_rows - 1) // chunk_rows
    for task in range(first_task, last_task):
        f = task // n_chunks
        start = (task - f * n_chunks) * chunk_rows
        for p in range(start, min(start + chunk_rows, n_samples)):
            sorted_y[f, p] = y[min(np.uint64(sorted_idx[f, p]), last)]


@njit(cache=True, no_cpython_wrapper=True)
def _sums_constraint_ok(cst, lower, upper, w_left, sum_left, w_right, sum_right, criterion,
                        reg_lambda):
    """:func:`~fasttree.kernels.monotonic.monotonic_ok` on two children's values from their sum
    statistics.  A call rather than inlined: only constrained nodes reach it, and inlining it
    into every copy of the scan cost each kernel's compilation more than the call costs them."""
    return monotonic_ok(cst, lower, upper, sums_value(w_left, sum_left, criterion, reg_lambda),
                        sums_value(w_right, sum_right, criterion, reg_lambda))


def _make_sum_scan(unit_weight, by_reciprocal, two_sided, constrained, positive, presummed):
    """Scan one (feature, node) pair with sum statistics: every regression criterion and the
    gradient kind, any weights, missing rows, monotonicity constraints; the one such scan.

    Maximises :func:`~fasttree.kernels.criteria.sums_proxy`.  With missing rows (the last
    ``n_missing``) every candidate is tried with them right (A) and left (B), and "all known rows
    left, missing right" is candidate A at the last known row (the class scan's rules).
    A row adds its weight (hessian) ``w`` and ``w * y`` to the sums, or ``y`` itself for gradient
    statistics.  Each child needs ``min_rows_leaf`` rows, ``min_weight_leaf`` weight and a
    positive weight (plus ``reg_lambda`` for gradients); with unit weights a child's weight is its
    row count, so the caller folds the weight minimum into ``min_rows_leaf`` and only rows are
    counted.  A constraint ``cst != 0`` is checked on the children's values
    (:func:`~fasttree.kernels.criteria.sums_value`); Poisson refuses a child without a positive
    target.

    Only the candidates after positions ``p0 .. p1 - 1`` are scanned, from the sums of the rows
    before ``p0`` (``w_before``, ``sum_before``: 0 for a whole node; a chunk's prefix,
    :mod:`fasttree.kernels.work_items`, for a node without missing rows, constraint or Poisson).
    The rows are added in blocks of ``block_rows`` rows of the node, each block from zero and
    then onto the sums before it, so that a chunk starting at a block boundary (``p0`` a
    multiple of ``block_rows``) from its prefix
    (:func:`~fasttree.kernels.work_items.chunk_sum_prefix`) has every sum one scan would have.

    The factory's six flags are constants of the scan it makes, one compiled function per kind
    called once per pair or chunk (as :func:`_class_scan`, whose docstring says why): every
    weight 1; the proxy as ``S**2 * (1 / n)`` read from
    ``reciprocal`` (unit-weight squared error without missing rows or constraint: a
    multiplication instead of a division per candidate); missing rows possible (``n_missing``
    may be > 0); a constraint possible (``cst`` may be != 0); Poisson; gradients.

    The scan made takes ``(xs, ys, idx, row_weight, w_total, sum_total, n_missing,
    min_rows_leaf, min_weight_leaf, criterion, reg_lambda, cst, lower, upper, reciprocal, p0, p1,
    w_before, sum_before, block_rows)`` and returns (best proxy, best position, missing go left,
    weight going left, candidates).
    """

    @njit(cache=True, no_cpython_wrapper=True)
    def scan(xs, ys, idx, row_weight, w_total, sum_total, n_missing, min_rows_leaf,
             min_weight_leaf, criterion, reg_lambda, cst, lower, upper, reciprocal, p0, p1,
             w_before, sum_before, block_rows):
        n_node = xs.shape[0]
        n_known = n_node - n_missing
        w_missing = 0.0
        sum_missing = 0.0
        if two_sided:
            for p in range(n_known, n_node):
                w = 1.0 if unit_weight else row_weight[np.uint64(idx[p])]
                w_missing += w
                sum_missing += ys[p] if presummed else w * ys[p]
        # Poisson refuses a child whose target sum is 0; "sum_total - sum_left" leaves a rounding
        # residue where the true sum is 0, so count the positive targets (y >= 0 is checked
        # upstream)
        pos_total = 0
        pos_missing = 0
        pos_left = 0
        if positive:
            for p in range(n_node):
                if ys[p] > 0.0:
                    pos_total += 1
                    pos_missing += p >= n_known
        w_blocks = w_before  # the sums of the blocks before this one
        sum_blocks = sum_before
        best_a = -np.inf
        best_a_p = -1
        best_a_w = 0.0
        best_b = -np.inf
        best_b_p = -1
        best_b_w = 0.0
        n_candidates = 0
        # without missing rows, no candidate past this leaves the right child its minimum of rows
        stop = n_known if two_sided and n_missing > 0 else n_node - min_rows_leaf
        n_scan = min(p1, stop) - p0
        # a block's rows in an inner loop of their own, from 0 on the block's slices (positions
        # from 0, as in the class scan: no wrap-around checks); a test per row of where a block
        # ends made the scan 40 % slower, wrap-around checks 35 % (measured)
        for b0 in range(p0, p0 + max(n_scan, 0), block_rows):
            xs_block = xs[b0:]
            ys_block = ys[b0:]
            idx_block = idx[b0:]
            w_block = 0.0  # this block's own sums
            sum_block = 0.0
            for j in range(min(p0 + n_scan - b0, block_rows)):
                y = ys_block[j]
                if unit_weight:
                    sum_block += y
                else:
                    w = row_weight[np.uint64(idx_block[j])]
                    w_block += w
                    sum_block += y if presummed else w * y
                if positive:
                    pos_left += y > 0.0
                p = b0 + j
                last = two_sided and p + 1 == n_known
                if not last and _same_value(xs_block[j], xs_block[j + 1]):
                    continue
                n_left = p + 1
                w_left = np.float64(n_left) if unit_weight else w_blocks + w_block
                sum_left = sum_blocks + sum_block
                valid = False
                # A: missing rows right (the right child's rows are enough when none are missing)
                w_right = w_total - w_left
                sum_right = sum_total - sum_left
                if (n_left >= min_rows_leaf
                        and (not two_sided or n_node - n_left >= min_rows_leaf)
                        and (unit_weight or (w_left >= min_weight_leaf
                                             and w_right >= min_weight_leaf
                                             and w_left + reg_lambda > 0.0
                                             and w_right + reg_lambda > 0.0))
                        and not (positive and (pos_left == 0 or pos_left == pos_total))
                        and (not constrained or cst == 0 or _sums_constraint_ok(
                            cst, lower, upper, w_left, sum_left, w_right, sum_right, criterion,
                            reg_lambda))):
                    valid = True
                    if by_reciprocal:
                        proxy = (sum_left * sum_left * reciprocal[np.uint64(n_left)]
                                 + sum_right * sum_right * reciprocal[np.uint64(n_node - n_left)])
                    else:
                        proxy = sums_proxy(w_left, sum_left, w_right, sum_right, criterion,
                                           reg_lambda)
                    if proxy > best_a:
                        best_a = proxy
                        best_a_p = p
                        best_a_w = w_left
                if last:
                    n_candidates += valid
                    continue
                if two_sided and n_missing > 0:  # B: missing rows left
                    w_left_b = w_left + w_missing
                    w_right_b = w_total - w_left_b
                    sum_left_b = sum_left + sum_missing
                    if (n_left + n_missing >= min_rows_leaf and n_known - n_left >= min_rows_leaf
                            and (unit_weight or (w_left_b >= min_weight_leaf
                                                 and w_right_b >= min_weight_leaf
                                                 and w_left_b + reg_lambda > 0.0
                                                 and w_right_b + reg_lambda > 0.0))
                            and not (positive and (pos_left + pos_missing == 0
                                                   or pos_left + pos_missing == pos_total))
                            and (not constrained or cst == 0 or _sums_constraint_ok(
                                cst, lower, upper, w_left_b, sum_left_b, w_right_b,
                                sum_total - sum_left_b, criterion, reg_lambda))):
                        valid = True
                        proxy = sums_proxy(w_left_b, sum_left_b, w_right_b, sum_total - sum_left_b,
                                           criterion, reg_lambda)
                        if proxy > best_b:
                            best_b = proxy
                            best_b_p = p
                            best_b_w = w_left_b
                n_candidates += valid
            w_blocks += w_block
            sum_blocks += sum_block
        if best_b > best_a:
            return best_b, best_b_p, True, best_b_w, n_candidates
        return best_a, best_a_p, False, best_a_w, n_candidates

    return scan


#: The scan of weighted rows without missing ones, constraint or Poisson (C4.5's known rows).
def _sum_scan(unit_weight, by_reciprocal, two_sided, constrained, positive, presummed):
    """The scan :func:`_make_sum_scan` makes for these flags, made once per process
    (:func:`fasttree._jit.specialized`)."""
    return specialized(_make_sum_scan, unit_weight, by_reciprocal, two_sided, constrained,
                       positive, presummed)


_scan_weighted_sums = _sum_scan(False, False, False, False, False, False)


def find_best_splits_regression(
    sorted_x,
    sorted_idx,
    sorted_y,
    sample_weight,
    seg_start,
    seg_end,
    seg_sums,
    feature_mask,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    reciprocal,
    missing_fractional,
    monotonic_cst,
    node_bounds,
    record,
):
    """Best threshold of every numeric feature for every segment (node) of a level, regression.

    Same contract as :func:`find_best_splits_classification`, except:

    Parameters
    ----------
    sorted_y : ndarray of shape (n_features, n_samples), float64, C-contiguous (IN)
        Regression target of the rows at the same positions (from :func:`gather_targets`).
    seg_sums : ndarray of shape (n_segments, 3), float64 (IN)
        Per node ``[sum w, sum w*y, c]`` (from :func:`segment_target_sums`; ``c`` as in
        :mod:`fasttree.kernels.criteria`).
    criterion : int
        ``CRITERION_SQUARED_ERROR`` or ``CRITERION_POISSON``.
    sample_weight : ndarray of shape (n_samples,) or (0,), float64 (IN)
        As in the classification kernel: empty means every weight is 1.
    reciprocal : ndarray of shape (n_samples + 1,) or (0,), float64 (IN)
        ``1 / c`` for integer counts (:func:`reciprocal_table`): required with unit weights,
        unused otherwise.
    missing_fractional : bool
        As in the classification kernel.
    monotonic_cst, node_bounds : ndarray (IN)
        As in the classification kernel; the constrained value is the mean target.

    Notes
    -----
    ``children_impurity`` is ``c - proxy`` with scikit-learn's proxy (maximised, lowest threshold
    on a tie): for squared error the children's total squared error.
    """
    unit_weight = sample_weight.shape[0] == 0
    if criterion not in (CRITERION_SQUARED_ERROR, CRITERION_POISSON):
        raise ValueError("criterion must be CRITERION_SQUARED_ERROR or CRITERION_POISSON "
                         f"(find_best_splits_gradient takes gradients), got {criterion!r}")
    if unit_weight and criterion == CRITERION_SQUARED_ERROR and \
            reciprocal.shape[0] <= sorted_x.shape[1]:
        raise ValueError("squared error with unit weights needs reciprocal of length "
                         f"n_samples + 1 (reciprocal_table(n_samples)), got {reciprocal.shape[0]}")
    _sums_search(sorted_x, sorted_idx, sorted_y, sample_weight, seg_start, seg_end, seg_sums,
                 feature_mask, criterion, 0.0, min_samples_leaf, min_weight_leaf, reciprocal,
                 missing_fractional, monotonic_cst, node_bounds, record)


def find_best_splits_gradient(
    sorted_x,
    sorted_idx,
    sorted_grad,
    hessian,
    seg_start,
    seg_end,
    seg_sums,
    feature_mask,
    reg_lambda,
    min_samples_leaf,
    min_child_weight,
    monotonic_cst,
    node_bounds,
    record,
):
    """Best threshold of every numeric feature for every node of a level, from gradients and
    hessians: the split search of a gradient-boosting round (XGBoost's exact greedy rule).

    A split's proxy is ``G_L**2 / (H_L + lambda) + G_R**2 / (H_R + lambda)`` (maximised), so
    XGBoost's split gain is ``(proxy - G**2 / (H + lambda)) / 2``; a leaf's value is
    ``-G / (H + lambda)`` (:mod:`fasttree.kernels.criteria`).  Same layout, rules and record as
    :func:`find_best_splits_regression` (missing values learned on either side, ties to the lowest
    threshold, monotonicity constraints on the leaves' values), with:

    Parameters
    ----------
    sorted_grad : ndarray of shape (n_features, n_samples), float64, C-contiguous (IN)
        Each row's gradient of the loss at the current prediction, in layout order (from
        :func:`gather_targets`), times the row's sample weight if any.
    hessian : ndarray of shape (n_ids,) or (0,), float64 (IN)
        Each row's hessian (times its sample weight), indexed by row id; empty means every
        hessian is 1 (squared error).
    seg_sums : ndarray of shape (n_segments, 3), float64 (IN)
        Per node ``[H, G, 0]``: :func:`segment_target_sums` with ``CRITERION_GRADIENT``.
    reg_lambda : float
        L2 regularization of the leaf values (XGBoost's ``lambda``), >= 0.
    min_child_weight : float
        Minimum hessian sum in each child (XGBoost's ``min_child_weight``).

    Notes
    -----
    ``children_impurity`` is ``-proxy`` and ``gain`` is ``(proxy - G**2 / (H + lambda)) / H``
    (twice XGBoost's gain, per unit of hessian).  With ``reg_lambda = 0`` a split is the one
    :func:`find_best_splits_regression` finds for targets ``-g / h`` weighted by ``h``.
    """
    reg_lambda = float(reg_lambda)
    if not (np.isfinite(reg_lambda) and reg_lambda >= 0.0):
        raise ValueError(f"reg_lambda must be a finite number >= 0, got {reg_lambda!r}")
    _sums_search(sorted_x, sorted_idx, sorted_grad, hessian, seg_start, seg_end, seg_sums,
                 feature_mask, CRITERION_GRADIENT, reg_lambda, min_samples_leaf,
                 float(min_child_weight), np.empty(0), False, monotonic_cst, node_bounds, record)


def _sums_search(sorted_x, sorted_idx, sorted_y, row_weight, seg_start, seg_end, seg_sums,
                 feature_mask, criterion, reg_lambda, min_samples_leaf, min_weight_leaf,
                 reciprocal, missing_fractional, monotonic_cst, node_bounds, record):
    """Run the search of sum statistics made for this kind of call, in parallel tasks."""
    check_split_record(record, *feature_mask.shape)
    # sums added in blocks: chunks cut at block boundaries change no sum, so the tasks may
    # follow the thread count
    block_rows = work_items.SUM_BLOCK_ROWS
    items, missing = numeric_scan_items(sorted_x, seg_start, seg_end, feature_mask,
                                        min_samples_leaf, monotonic_cst,
                                        chunk=criterion != CRITERION_POISSON, exact=True,
                                        granule=block_rows)
    kind = ("sums", row_weight.shape[0] == 0, int(criterion), missing, bool(missing_fractional),
            monotonic_cst.shape[0] > 0)
    presummed = criterion == CRITERION_GRADIENT
    chunk_sums = chunk_sum_prefix(sorted_idx, sorted_y, row_weight, seg_start, *items.arrays(),
                                  presummed, block_rows)
    _run_on_items(kind, (sorted_x, sorted_idx, sorted_y, seg_start, seg_end),
                  (row_weight, seg_sums, reg_lambda, min_samples_leaf, min_weight_leaf,
                   reciprocal, monotonic_cst, node_bounds, np.int64(block_rows)), items,
                  chunk_sums, record)


def _sums_kind(unit_weight, criterion, may_miss, fractional, constrained):
    """The sum statistics' hooks (:func:`_make_item_search`) for one kind of call, like
    :func:`_classes_kind`: the criterion (squared error, Poisson, gradient) is a flag too, so
    each kind compiles only its formulas.  Arguments: ``(row_weight, seg_sums, reg_lambda,
    min_samples_leaf, min_weight_leaf, reciprocal, monotonic_cst, node_bounds, block_rows)``."""
    fractional = may_miss and fractional
    squared_error = criterion == CRITERION_SQUARED_ERROR
    gradient = criterion == CRITERION_GRADIENT
    # unit-weight squared error multiplies by 1 / n where a node has no missing rows and no
    # constraint; without either in the level that is every node, and the general form is not
    # compiled at all
    by_reciprocal = unit_weight and squared_error
    only_by_reciprocal = by_reciprocal and not may_miss and not constrained
    positive = criterion == CRITERION_POISSON

    @njit(cache=True, no_cpython_wrapper=True)
    def prepare(args):
        min_samples_leaf, min_weight_leaf = args[3], args[4]
        # a child's minimum of rows; with unit weights a child of n rows weighs n, so the weight
        # minimum is one of rows too
        if unit_weight:
            return max(min_samples_leaf, np.int64(np.ceil(min_weight_leaf)))
        return min_samples_leaf

    @njit(cache=True, no_cpython_wrapper=True)
    def new_scratch(args, level):
        return 0  # the sum scans keep their sums in registers

    def scan_item(args, min_rows_leaf, work, layout, items, i, chunk_sums, chunk_score,
                  chunk_record, record):
        (row_weight, seg_sums, reg_lambda, min_samples_leaf, min_weight_leaf, reciprocal,
         monotonic_cst, node_bounds, block_rows) = args
        first, stop, chunked = _item_pairs(items, i)
        for q in range(first, stop):
            f, s, xs, idx, ys, p0, p1 = _item_pair(layout, items, i, q)
            cst, lower, upper = constraint_of(monotonic_cst, node_bounds, f, s)
            sums = seg_sums[s]
            n_miss = count_missing(xs) if may_miss else 0  # chunked pairs miss none
            node_impurity = sums_node_impurity(sums[0], sums[1], sums[2], criterion, reg_lambda)
            # each test starts with a constant flag: numba drops the branches it rules out
            if fractional and n_miss > 0 and cst == 0:
                _fractional_regression_split(
                    f, s, xs, ys, idx, row_weight, sums, n_miss, node_impurity, criterion,
                    min_samples_leaf, min_weight_leaf, record)
                continue
            if only_by_reciprocal or (by_reciprocal and n_miss == 0 and cst == 0):
                best, best_p, missing_left, w_left, n_cand = scan_by_reciprocal(
                    xs, ys, idx, row_weight, sums[0], sums[1], 0, min_rows_leaf, min_weight_leaf,
                    criterion, reg_lambda, 0, lower, upper, reciprocal, p0, p1, chunk_sums[i, 0],
                    chunk_sums[i, 1], block_rows)
            else:
                best, best_p, missing_left, w_left, n_cand = scan_general(
                    xs, ys, idx, row_weight, sums[0], sums[1], n_miss, min_rows_leaf,
                    min_weight_leaf, criterion, reg_lambda, cst, lower, upper, reciprocal, p0, p1,
                    chunk_sums[i, 0], chunk_sums[i, 1], block_rows)
            if chunked:  # the proxy negated: the lowest score wins (_run_on_items)
                chunk_score[i] = -best
            if best_p >= 0:
                # children impurity c - proxy, clipped at 0 except for gradients' -proxy
                children = sums[2] - best if gradient else max(sums[2] - best, 0.0)
                _store_binary_split(
                    f, i if chunked else s, children, node_impurity, sums[0], w_left, xs, best_p,
                    n_miss, missing_left, n_cand, np.empty(0), chunk_record if chunked else record)

    # the kind's scans as the hook's globals (see with_globals), named by the calls above
    return prepare, new_scratch, with_globals(
        scan_item, scan_by_reciprocal=_sum_scan(True, True, False, False, False, False),
        scan_general=_sum_scan(unit_weight, False, may_miss, constrained, positive, gradient))


#: each statistics kind's hooks for :func:`_make_item_search`: ``prepare(args)`` (the level's
#: values, once), ``new_scratch(args, level)`` (a task's own) and ``scan_item(args, level,
#: scratch, layout, items, i, chunk_stats, chunk_score, chunk_record, record)`` (item ``i``'s
#: pairs, :func:`_item_pairs` and :func:`_item_pair`: their rows' candidates, into their slots;
#: the item's loop is the hook's, so that it unpacks its arguments once an item, not once a
#: pair: 30 ns a pair, a tenth of B3's deepest levels, measured); the first two compiled, the
#: third a Python function, inlined in the search or called (:data:`CALLED_ITEM_SCANS`)
_ITEM_KINDS = {"classes": _classes_kind, "sums": _sums_kind}

#: the kinds whose ``scan_item`` the search calls once an item (:func:`_item_scan`) instead of
#: inlining it (numba's ``inline="always"``).  The classifier's search then compiled in 2.4 s and
#: its item scan in 1.0 s, against 4.5-5.0 s inlined, and compiling ahead lists the item scan
#: (:mod:`fasttree._compile_ahead`), so that a first fit's two processes compile one each; the
#: fits took as long (300,000 x 20, gini, full depth: 29,619 and 106,209 nodes).  The sums' item
#: scan stays inlined: called, a full-depth regression tree (300,000 x 20, 599,999 nodes) took
#: 1-8 % longer in four alternated rounds.
CALLED_ITEM_SCANS = ("classes",)


def _item_scan(name, *flags):
    """A kind's ``scan_item`` hook compiled as a function of its own, which the search calls
    (see :data:`CALLED_ITEM_SCANS`); made once per process, so that compiling ahead can name
    it."""
    return njit(cache=True, no_cpython_wrapper=True)(_ITEM_KINDS[name](*flags)[2])


def _make_item_search(name, *flags):
    """The task function (:mod:`fasttree._tasks`) of one statistics kind's search over a
    level's work items (:mod:`fasttree.kernels.work_items`): task ``t`` runs its items in turn,
    each item (its pairs, or its one chunk) through the kind's hooks (:data:`_ITEM_KINDS`), the
    item's scan inlined here or called (:data:`CALLED_ITEM_SCANS`).  As a parallel kernel of its
    own it compiled in 3.0-3.4 s for the classifier (5.5 s for the regressor); now 0.7 s (2.1
    s) besides the scans, and 0.6 s for the function that hands it its data."""
    # the hooks reach the kernel as globals, never as variables it closes over (with_globals):
    # no local variable here may be named like one
    hooks = dict(zip(("prepare", "new_scratch", "scan_item"), _ITEM_KINDS[name](*flags)))
    hooks["scan_item"] = (specialized(_item_scan, name, *flags) if name in CALLED_ITEM_SCANS
                          else njit(cache=True, inline="always")(hooks["scan_item"]))

    def item_task(pointer, t):
        (layout, items, args, chunk_stats, chunk_score, chunk_record,
         record) = load_pointer(pointer)
        task_item = items[0]
        level = prepare(args)
        work = new_scratch(args, level)
        for i in range(task_item[t], task_item[t + 1]):
            scan_item(args, level, work, layout, items, i, chunk_stats, chunk_score,
                      chunk_record, record)

    return njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)(
        with_globals(item_task, **hooks))


@njit(cache=True, no_cpython_wrapper=True)
def _fractional_regression_split(f, s, xs, ys, idx, sample_weight, sums, n_miss, node_impurity,
                                 criterion, min_samples_leaf, min_weight_leaf, record):
    """C4.5's split of one regression node with missing rows, like :func:`_fractional_split`."""
    n_known = xs.shape[0] - n_miss
    w_known = sums[0]
    sum_known = sums[1]
    sq_known = sums[2]
    for p in range(n_known, xs.shape[0]):
        w = sample_weight[np.uint64(idx[p])]
        w_known -= w
        sum_known -= w * ys[p]
        sq_known -= w * regression_target_term(ys[p], criterion)
    best, best_p, _, w_left, n_cand = _scan_weighted_sums(
        xs[:n_known], ys[:n_known], idx[:n_known], sample_weight, w_known, sum_known, 0,
        min_samples_leaf, min_weight_leaf, criterion, 0.0, 0, -np.inf, np.inf, np.empty(0), 0,
        n_known, 0.0, 0.0, SUM_BLOCK_ROWS)
    if best_p >= 0:
        _store_fractional_split(
            f, s, max(sq_known - best, 0.0),
            weighted_regression_impurity(w_known, sum_known, sq_known, criterion),
            node_impurity, sums[0], w_known, w_left, xs, best_p, n_miss, n_cand, record)
