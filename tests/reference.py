"""Naive, obviously correct twins of the kernels (pure NumPy / Python), for tests only."""

import numpy as np


def entropy_bits(counts):
    counts = np.asarray(counts, dtype=np.float64)
    w = counts.sum()
    if w <= 0:
        return 0.0
    p = counts[counts > 0] / w
    return float(-(p * np.log2(p)).sum())


def gini(counts):
    counts = np.asarray(counts, dtype=np.float64)
    w = counts.sum()
    if w <= 0:
        return 0.0
    p = counts / w
    return float(1.0 - (p * p).sum())


def weighted_variance(y, w):
    sw = w.sum()
    mean = (w * y).sum() / sw
    return float((w * (y - mean) ** 2).sum() / sw)


#: scikit-learn's FEATURE_THRESHOLD, in float32 like the values.
FEATURE_THRESHOLD = np.float32(1e-7)


def threshold_pairs(values):
    """Consecutive sorted distinct float32 values with a threshold between them: those more than
    FEATURE_THRESHOLD apart (float32 arithmetic, as scikit-learn's splitter)."""
    values = np.asarray(values, dtype=np.float32)
    return [(a, b) for a, b in zip(values[:-1], values[1:]) if b > a + FEATURE_THRESHOLD]


def brute_force_split(x, y, w, *, criterion, n_classes=None, min_samples_leaf=1,
                      min_weight_leaf=0.0):
    """Best split of one feature of one node by trying every midpoint, independently.

    Returns (children_impurity, threshold, n_left) or (inf, None, 0) if there is no valid split.
    children_impurity = w_left * I(left) + w_right * I(right), recomputed from scratch for each
    candidate.
    """
    x = np.asarray(x, dtype=np.float32)
    values = np.unique(x)
    best = (np.inf, None, 0)
    for a, b in threshold_pairs(values):
        t = np.float64(a) / 2 + np.float64(b) / 2
        if t == np.float64(b):
            t = np.float64(a)
        left = x <= t
        n_left, n_right = int(left.sum()), int((~left).sum())
        if n_left < min_samples_leaf or n_right < min_samples_leaf:
            continue
        w_left, w_right = w[left].sum(), w[~left].sum()
        if w_left < min_weight_leaf or w_right < min_weight_leaf or w_left <= 0 or w_right <= 0:
            continue
        if criterion == "squared_error":
            value = (w_left * weighted_variance(y[left], w[left])
                     + w_right * weighted_variance(y[~left], w[~left]))
        else:
            impurity = entropy_bits if criterion == "entropy" else gini
            cl = np.bincount(y[left], weights=w[left], minlength=n_classes)
            cr = np.bincount(y[~left], weights=w[~left], minlength=n_classes)
            value = w_left * impurity(cl) + w_right * impurity(cr)
        if value < best[0] - 1e-12 * max(1.0, abs(value)):
            best = (value, t, n_left)
    return best


def apply_naive(tree, X):
    """Leaf of every row, one row at a time (see :func:`decision_path_naive`)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    for i, row in enumerate(X):
        out[i] = decision_path_naive(tree, row)[-1]
    return out


# --- missing values, categorical splits, routing -------------------------------------------------
# Split kinds of fasttree._dtypes, restated so that the twins read on their own.
SPLIT_THRESHOLD, SPLIT_SUBSET, SPLIT_MULTIWAY = 0, 1, 2
GAIN_RATIO_EPSILON = 1e-3


def midpoint(a, b):
    """float64 midpoint of two consecutive distinct float32 values (``a`` if it rounds to ``b``)."""
    t = np.float64(a) / 2 + np.float64(b) / 2
    return np.float64(a) if t == np.float64(b) else t


def weighted_median(y, w):
    """scikit-learn's weighted median: the first value where the cumulative weight passes half the
    total; exactly half: the mean of that value and the previous one."""
    order = np.argsort(y, kind="stable")
    y, w = np.asarray(y, np.float64)[order], np.asarray(w, np.float64)[order]
    cum = np.concatenate([[0.0], np.cumsum(w)])
    half = cum[-1] / 2
    r = int(np.flatnonzero(cum[1:] > half)[0])
    return (y[r - 1] + y[r]) / 2 if r > 0 and cum[r] == half else float(y[r])


def weighted_node_impurity(y, w, criterion, n_classes=None):
    """``W * I`` of a group of rows (``W`` their weight), from scratch; 0 for an empty group.
    A 2-D ``y`` (several outputs) gives the mean over outputs (``n_classes`` then a list)."""
    y, w = np.asarray(y), np.asarray(w, dtype=np.float64)
    if y.size == 0 or w.sum() <= 0:
        return 0.0
    if y.ndim == 2:
        return float(np.mean([
            weighted_node_impurity(y[:, k], w, criterion,
                                   None if n_classes is None else n_classes[k])
            for k in range(y.shape[1])]))
    if criterion == "squared_error":
        return float(w.sum() * weighted_variance(y, w))
    if criterion == "absolute_error":
        return float((w * np.abs(y - weighted_median(y, w))).sum())
    if criterion == "poisson":
        mean = (w * y).sum() / w.sum()
        if (w * y).sum() <= 0:
            return np.inf  # a child predicting 0: refused
        terms = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mean), 0.0)
        return float((w * terms).sum())
    counts = np.bincount(y.astype(np.int64), weights=w, minlength=n_classes)
    return float(w.sum() * (entropy_bits(counts) if criterion == "entropy" else gini(counts)))


def children_impurity_of(branch, y, w, criterion, n_classes=None):
    """``sum_b W_b * I(branch b)`` of a row -> branch assignment."""
    return sum(weighted_node_impurity(y[branch == b], w[branch == b], criterion, n_classes)
               for b in np.unique(branch))


def split_information_of(branch_weights):
    """C4.5's split information ``-sum_i p_i log2 p_i`` of branch weights (0-weight branches: 0)."""
    p = np.asarray(branch_weights, dtype=np.float64)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log2(p)).sum())


def binary_split_is_valid(left, w, min_samples_leaf, min_weight_leaf):
    """Both children have ``min_samples_leaf`` rows, ``min_weight_leaf`` weight and weight > 0."""
    n_left, n_right = int(left.sum()), int((~left).sum())
    w_left, w_right = w[left].sum(), w[~left].sum()
    return (n_left >= min_samples_leaf and n_right >= min_samples_leaf
            and w_left >= min_weight_leaf and w_right >= min_weight_leaf
            and w_left > 0 and w_right > 0)


def constrained_value(y, w, criterion):
    """The value a monotonicity constraint applies to: the weighted fraction of class 0, the
    weighted median (absolute error) or the weighted mean."""
    y, w = np.asarray(y), np.asarray(w, dtype=np.float64)
    if criterion in ("gini", "entropy"):
        return w[y == 0].sum() / w.sum()
    if criterion == "absolute_error":
        return weighted_median(y, w)
    return (w * y).sum() / w.sum()


def gradient_score(g, h, reg_lambda):
    """XGBoost's structure score ``G**2 / (H + lambda)`` of a group of rows, from scratch."""
    return float(np.sum(g)) ** 2 / (float(np.sum(h)) + reg_lambda)


def missing_aware_numeric_split(x, y, w, *, criterion, n_classes=None, min_samples_leaf=1,
                                min_weight_leaf=0.0, monotonic=None, reg_lambda=0.0):
    """Every numeric split of one node with scikit-learn's missing-value rules, from scratch.

    Candidates: the midpoint of every two consecutive distinct known values, with the missing rows
    (NaN) on the left and on the right, and, when some rows are missing, the threshold ``inf``
    (every known value left, the missing rows right).  A candidate counts when it is a real split
    (both sides non-empty) that honours the leaf minimums, and ``monotonic = (c, lower, upper)``
    when given: both children's :func:`constrained_value` in ``[lower, upper]`` and ordered as
    ``c`` says (``(v_left - v_right) * c <= 0``).

    ``criterion="gradient"``: ``y`` holds gradients and ``w`` hessians; a side is valid with
    ``H >= min_weight_leaf`` and ``H + reg_lambda > 0``, its value is ``-G / (H + reg_lambda)``
    and the children impurity is minus the sides' :func:`gradient_score` added.

    Returns (best children impurity or inf, list of valid (value, threshold, missing_left),
    number of thresholds that have at least one valid candidate).
    """
    x = np.asarray(x, dtype=np.float32)
    missing = np.isnan(x)
    known = np.unique(x[~missing])
    thresholds = [midpoint(a, b) for a, b in threshold_pairs(known)]
    if missing.any() and known.size:
        thresholds.append(np.inf)
    candidates = []
    n_thresholds = 0
    for t in thresholds:
        counted = False
        for missing_left in ((False, True) if missing.any() else (False,)):
            left = (~missing & (x <= t)) | (missing & missing_left)
            sides = (left, ~left)
            if criterion == "gradient":
                if not all(side.sum() >= min_samples_leaf and w[side].sum() >= min_weight_leaf
                           and w[side].sum() + reg_lambda > 0 for side in sides):
                    continue
            elif not binary_split_is_valid(left, w, min_samples_leaf, min_weight_leaf):
                continue
            if monotonic is not None:
                c, lower, upper = monotonic
                if criterion == "gradient":
                    v_left, v_right = (-y[side].sum() / (w[side].sum() + reg_lambda)
                                       for side in sides)
                else:
                    v_left, v_right = (constrained_value(y[side], w[side], criterion)
                                       for side in sides)
                if not (lower <= v_left <= upper and lower <= v_right <= upper
                        and (v_left - v_right) * c <= 0):
                    continue
            counted = True
            if criterion == "gradient":
                value = -sum(gradient_score(y[side], w[side], reg_lambda) for side in sides)
            else:
                value = children_impurity_of(left.astype(np.int64), y, w, criterion, n_classes)
            candidates.append((value, t, missing_left))
        n_thresholds += counted
    best = min((c[0] for c in candidates), default=np.inf)
    return best, candidates, n_thresholds


def present_categories(x):
    """Category codes present among the known values, increasing."""
    x = np.asarray(x, dtype=np.float64)
    return np.unique(x[~np.isnan(x)]).astype(np.int64)


def subset_splits(x, y, w, left_sets, *, criterion, n_classes=None, min_samples_leaf=1,
                  min_weight_leaf=0.0):
    """Best valid split among "these categories go left", missing rows tried on both sides.

    Returns (best value or inf, (left categories, missing left) of the best).
    """
    x = np.asarray(x, dtype=np.float64)
    missing = np.isnan(x)
    best, best_split = np.inf, None
    for left_codes in left_sets:
        known_left = np.isin(x, list(left_codes)) & ~missing
        for missing_left in ((False, True) if missing.any() else (False,)):
            left = known_left | (missing & missing_left)
            if not binary_split_is_valid(left, w, min_samples_leaf, min_weight_leaf):
                continue
            value = children_impurity_of(left.astype(np.int64), y, w, criterion, n_classes)
            if value < best:
                best, best_split = value, (tuple(left_codes), missing_left)
    return best, best_split


def exhaustive_subset_split(x, y, w, **kwargs):
    """The best subset split over every subset of the present categories (exponential)."""
    codes = present_categories(x)
    subsets = [[c for i, c in enumerate(codes) if mask >> i & 1] for mask in range(2 ** len(codes))]
    return subset_splits(x, y, w, subsets, **kwargs)


def category_order(x, y, w, order_class, criterion):
    """Present categories by increasing share of ``order_class`` (mean target for regression),
    ties by code (a stable sort of the increasing codes)."""
    x = np.asarray(x, dtype=np.float64)
    codes = present_categories(x)
    key = {}
    for c in codes:
        rows = x == c
        weight = w[rows].sum()
        if criterion == "squared_error":
            key[c] = (w[rows] * y[rows]).sum() / weight
        else:
            key[c] = w[rows & (y == order_class)].sum() / weight
    return sorted(codes, key=lambda c: key[c])


def documented_subset_orders(n_classes, criterion):
    """The orders the subset scan documents: target mean (regression), class 1's share (two
    classes), each class's share in turn (more classes)."""
    if criterion == "squared_error":
        return [0]
    if n_classes == 2:
        return [1]
    return list(range(n_classes))


def prefix_subset_split(x, y, w, *, criterion, n_classes=None, min_samples_leaf=1,
                        min_weight_leaf=0.0):
    """The best prefix of every documented category order (Breiman's ordering), from scratch."""
    best, best_split = np.inf, None
    for k in documented_subset_orders(n_classes, criterion):
        order = category_order(x, y, w, k, criterion)
        prefixes = [order[:t] for t in range(1, len(order) + 1)]
        value, split = subset_splits(x, y, w, prefixes, criterion=criterion, n_classes=n_classes,
                                     min_samples_leaf=min_samples_leaf,
                                     min_weight_leaf=min_weight_leaf)
        if value < best:
            best, best_split = value, split
    return best, best_split


def multiway_split(x, y, w, *, criterion, n_classes=None, min_samples_leaf=1,
                   min_weight_leaf=0.0):
    """One branch per present category (branch j: the j-th smallest code); the missing rows tried
    in every branch.  Valid when at least two branches hold ``min_samples_leaf`` known rows and
    ``min_weight_leaf`` known weight.

    Returns (best value or inf, list of (value, missing branch) over the tried branches).
    """
    x = np.asarray(x, dtype=np.float64)
    missing = np.isnan(x)
    codes = present_categories(x)
    rows_per_branch = np.array([(x == c).sum() for c in codes])
    weight_per_branch = np.array([w[x == c].sum() for c in codes])
    big = (rows_per_branch >= min_samples_leaf) & (weight_per_branch >= min_weight_leaf)
    if len(codes) < 2 or big.sum() < 2:
        return np.inf, []
    branch = np.full(x.shape[0], -1)
    for j, c in enumerate(codes):
        branch[x == c] = j
    tried = []
    for m in (range(len(codes)) if missing.any() else [None]):
        if m is not None:
            branch[missing] = m
        tried.append((children_impurity_of(branch, y, w, criterion, n_classes), m))
    return min(v for v, _ in tried), tried


def categorical_map(x, y, w, *, kind, cut, missing_branch, order_class, n_codes, criterion):
    """Category -> branch map of a chosen categorical split, from its description.

    Subset: the first ``cut`` categories of :func:`category_order` go left (branch 0).  Multiway:
    the j-th smallest present code takes branch j.  Absent categories and the last ("unseen")
    slot take the branch b with the most weight, missing rows included (lowest branch on a tie),
    stored as ``-1 - b`` (the mark of a category that never reached the node).
    """
    x = np.asarray(x, dtype=np.float64)
    missing = np.isnan(x)
    codes = present_categories(x)
    if kind == SPLIT_MULTIWAY:
        branch_of_code = {c: j for j, c in enumerate(codes)}
        n_branches = len(codes)
    else:
        order = category_order(x, y, w, order_class, criterion)
        branch_of_code = {c: (0 if t < cut else 1) for t, c in enumerate(order)}
        n_branches = 2
    weight = np.zeros(n_branches)
    for c, b in branch_of_code.items():
        weight[b] += w[x == c].sum()
    weight[missing_branch] += w[missing].sum()
    heaviest = int(np.argmax(weight))  # first maximum
    return np.array([branch_of_code.get(c, -1 - heaviest) for c in range(n_codes)],
                    dtype=np.int64)


def branch_naive(x, kind, threshold, missing_branch, category_map):
    """Branch of a value at a split node, spelled out.  A map entry ``-1 - b`` (a category that
    never reached the node) means branch ``b``."""
    if np.isnan(x):
        return int(missing_branch)
    if kind == SPLIT_THRESHOLD:
        return 0 if x <= threshold else 1
    n_codes = len(category_map)
    if float(x).is_integer() and 0 <= x < n_codes - 1:
        entry = int(category_map[int(x)])
    else:
        entry = int(category_map[n_codes - 1])  # not a known code: the "unseen category" slot
    return entry if entry >= 0 else -1 - entry


def _node_map(tree, node):
    if getattr(tree, "split_kind", None) is None or tree.split_kind[node] == SPLIT_THRESHOLD:
        return None
    start = tree.category_offset[node]
    return tree.category_branch[start:start + tree.category_n_codes[node]]


def decision_path_naive(tree, row):
    """Nodes a row visits, root first, one node at a time (any kind of split node)."""
    node = 0
    path = [0]
    while tree.children_left[node] != -1:
        x = row[tree.feature[node]]
        if getattr(tree, "split_kind", None) is None:  # a plain threshold tree
            node = tree.children_left[node] if x <= tree.threshold[node] else \
                tree.children_right[node]
        else:  # branch b of a node is its child children_left + b
            node = tree.children_left[node] + branch_naive(
                x, tree.split_kind[node], tree.threshold[node], tree.missing_branch[node],
                _node_map(tree, node))
        path.append(int(node))
    return path


def select_best_splits_naive(children_impurity, gain, split_info, n_branches, gain_ratio):
    """One feature per node: the lowest children impurity, or C4.5's gain ratio (among the valid
    splits whose gain is positive and at least the average gain of the valid splits minus 1e-3,
    with split information above 1e-3, the highest gain / split information); lowest feature on
    ties, -1 when none qualifies."""
    n_features, n_segments = children_impurity.shape
    best = []
    for s in range(n_segments):
        chosen, best_value = -1, None
        valid = [f for f in range(n_features) if n_branches[f, s] > 0]
        if gain_ratio:
            if not valid:
                best.append(-1)
                continue
            total = 0.0
            for f in valid:
                total += gain[f, s]
            floor = total / len(valid) - GAIN_RATIO_EPSILON
            for f in valid:
                if (gain[f, s] > 0 and gain[f, s] >= floor
                        and split_info[f, s] > GAIN_RATIO_EPSILON):
                    ratio = gain[f, s] / split_info[f, s]
                    if best_value is None or ratio > best_value:
                        chosen, best_value = f, ratio
        else:
            for f in range(n_features):
                value = children_impurity[f, s]
                if value < np.inf and (best_value is None or value < best_value):
                    chosen, best_value = f, value
        best.append(chosen)
    return np.array(best)


# --- sparse input ----------------------------------------------------------------------------
def sparse_entries_naive(X, rows=None):
    """Per feature, the nonzero values of the given rows (all rows by default) and their row ids,
    sorted by (value, row id): what the sparse layout must hold for a node with these rows.
    ``X`` is dense; stored zeros of a sparse matrix are zeros here too."""
    X = np.asarray(X, dtype=np.float32)
    rows = np.arange(X.shape[0]) if rows is None else np.sort(np.asarray(rows))
    out = []
    for f in range(X.shape[1]):
        values = X[rows, f]
        keep = values != 0
        v, r = values[keep], rows[keep]
        order = np.lexsort((r, v))  # last key first: value, then row id
        out.append((v[order], r[order]))
    return out


def non_constant_naive(X, rows):
    """Features whose values on the given rows (zeros included) span more than scikit-learn's
    FEATURE_THRESHOLD, 1e-7 in float32 arithmetic."""
    X = np.asarray(X, dtype=np.float32)[np.asarray(rows)]
    return ~(X.max(axis=0) <= X.min(axis=0) + np.float32(1e-7))


# --- several trees in one layout -------------------------------------------------------------
def presort_samples_naive(X, in_sample):
    """Each sample presorted on its own (a stable argsort, NaN last), its rows renamed ``0, 1,
    ...`` in row order after the ids of the samples before it: the four arrays of
    ``fasttree.kernels.presort_samples`` (values, new ids, origin of every id, offsets)."""
    X = np.asarray(X, dtype=np.float32)
    blocks_x, blocks_id, origin, offsets = [], [], [], [0]
    for sample in np.asarray(in_sample, dtype=bool):
        rows = np.flatnonzero(sample)
        order = np.argsort(X[rows], axis=0, kind="stable")  # per feature; NaN sorts last
        blocks_x.append(np.take_along_axis(X[rows], order, axis=0).T)
        blocks_id.append(order.T + offsets[-1])
        origin.append(rows)
        offsets.append(offsets[-1] + rows.size)
    return (np.hstack(blocks_x), np.hstack(blocks_id), np.concatenate(origin),
            np.array(offsets))
