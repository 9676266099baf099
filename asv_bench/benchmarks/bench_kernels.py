"""The kernels alone, and the first call (compile or cache load) in a fresh process."""

import numpy as np

from .common import BARE_NUMBA, FIRST_CALL, classification_data, fresh_process_seconds, warm_up


class Kernels:
    params = ([300_000], [20])
    param_names = ["n_samples", "n_features"]

    def setup(self, n_samples, n_features):
        from fasttree.kernels import (gather_targets, presort_features, segment_class_weights,
                                      xlog2x_table)

        warm_up()
        X, y = classification_data(n_samples, n_features)
        self.X = np.ascontiguousarray(X)
        self.y = y.astype(np.int32)
        self.w = np.empty(0)  # unit weights
        self.sorted_x, self.sorted_idx = presort_features(self.X)
        # one level of 64 equal nodes (rows assigned by position: fine for timing a scan)
        bounds = np.linspace(0, n_samples, 65).astype(np.int64)
        self.start, self.end = bounds[:-1].copy(), bounds[1:].copy()
        self.sorted_y = gather_targets(self.sorted_idx, self.y.astype(np.uint8))
        self.counts = segment_class_weights(self.sorted_idx, self.sorted_y, self.w, self.start,
                                            self.end, np.zeros(64, np.int64), 2)
        self.mask = np.ones((n_features, 64), np.uint8)
        self.table = xlog2x_table(n_samples)

    def time_presort(self, *args):
        from fasttree.kernels import presort_features

        presort_features(self.X)

    def time_find_best_splits_entropy(self, *args):
        from fasttree.kernels import find_best_splits_classification, new_split_record
        from fasttree.kernels.monotonic import unconstrained

        record = new_split_record(self.mask.shape[0], self.start.shape[0])
        find_best_splits_classification(self.sorted_x, self.sorted_idx, self.sorted_y, self.w,
                                        self.start, self.end, self.counts, self.mask, 1, 1, 0.0,
                                        self.table, 0.0, False, *unconstrained(), record)

    def time_partition(self, *args):
        from fasttree.kernels import partition_segments

        n_left = ((self.end - self.start) // 2).astype(np.int64)
        feature = np.zeros(64, dtype=np.int64)
        partition_segments(self.sorted_x, self.sorted_idx, self.sorted_y, self.start, self.end,
                           feature, n_left, self.y.shape[0])


class FirstCall:
    """Import + first fit/predict in a fresh process (numba's cache warm) minus `import numba`."""

    timeout = 600
    unit = "seconds"

    def setup(self):
        fresh_process_seconds(FIRST_CALL)  # fills numba's on-disk cache

    def track_first_fit_over_bare_numba(self):
        return fresh_process_seconds(FIRST_CALL) - fresh_process_seconds(BARE_NUMBA)

    track_first_fit_over_bare_numba.unit = "seconds"


class Timers:
    """The grower's own per-phase timers for the B1-style case (reported, not timed by asv)."""

    timeout = 300

    def setup(self):
        warm_up()

    def track_search_share(self):
        import fasttree

        X, y = classification_data(300_000, 20)
        est = fasttree.DecisionTreeClassifier(criterion="entropy", max_depth=10).fit(X, y)
        return est.fit_timings_["search"] / est.fit_timings_["total"]

    track_search_share.unit = "fraction"
