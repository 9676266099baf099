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
    for a, b in zip(values[:-1], values[1:]):
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
    """Leaf of every row, one row at a time."""
    out = np.empty(X.shape[0], dtype=np.int64)
    for i, row in enumerate(X):
        node = 0
        while tree.children_left[node] != -1:
            go_left = row[tree.feature[node]] <= tree.threshold[node]
            node = tree.children_left[node] if go_left else tree.children_right[node]
        out[i] = node
    return out
