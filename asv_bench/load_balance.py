"""Load balance of a fit's parallel loops on P threads, from the work the fit actually does.

A model, not a timing: it records what each parallel loop of a fit is given (the split search's
work items and the rows each scans, the partition's feature rows and the rows each moves, the
presort's features and row chunks), then lays those iterations out on P threads the way numba
does.  numba's parallel loops run a static schedule (``create_schedule`` in numba's
``gufunc_scheduler.cpp``, chunk size 0, the default): thread ``i`` of P takes the next
``ceil(remaining / (P - i))`` iterations, one contiguous block each.  So the makespan of a loop
on P threads is the largest block's cost, and its balance ``sum(costs) / (P * makespan)``: 1
when every thread has as much work as the others, ``1 / P`` when one thread does it all.  Costs
are rows (scanned, moved or sorted): a thread's time grows with the rows it touches.

    python asv_bench/load_balance.py                 # B1 (1M x 20) and 10M x 4, P = 16 and 64
    python asv_bench/load_balance.py --rows 1000000 --features 20 --threads 16 64 256

``asv_bench/compare.py --cases LB`` prints the same tables.
"""

import argparse
import contextlib
import sys
from unittest import mock

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from benchmarks.common import classification_data  # noqa: E402

import fasttree  # noqa: E402
from fasttree import splitter as exact_splitter  # noqa: E402
from fasttree.kernels import partition as partition_module  # noqa: E402
from fasttree.kernels import presort as presort_module  # noqa: E402
from fasttree.kernels import split_search  # noqa: E402
from fasttree.kernels import work_items  # noqa: E402


def static_blocks(n_iterations, n_threads):
    """numba's static schedule: ``(start, stop)`` of each thread's block of iterations."""
    blocks = []
    start = 0
    for i in range(n_threads):
        length = -(-(n_iterations - start) // (n_threads - i)) if n_iterations > start else 0
        blocks.append((start, start + length))
        start += length
    return blocks


def makespan(costs, n_threads):
    """The largest cost a thread gets when numba lays ``costs`` (one per iteration, in loop
    order) out on ``n_threads`` threads."""
    costs = np.asarray(costs, dtype=np.float64)
    return max((costs[a:b].sum() for a, b in static_blocks(costs.size, n_threads)), default=0.0)


def balance(costs, n_threads):
    """``sum(costs) / (n_threads * makespan)``: 1 when every thread works alike (nan: no work)."""
    span = makespan(costs, n_threads)
    return float(np.sum(costs) / (n_threads * span)) if span > 0 else float("nan")


def search_costs(items, pair_rows):
    """Rows each task of the search scans (its items': a chunk's rows, or the rows of the whole
    pairs it covers)."""
    pair_end = np.concatenate([[0], np.cumsum(pair_rows)])
    whole = pair_end[items.item_stop] - pair_end[items.item_first]
    item_rows = np.where(items.item_hi > 0, items.item_hi - items.item_lo, whole)
    before = np.concatenate([[0], np.cumsum(item_rows)])
    return before[items.task_item[1:]] - before[items.task_item[:-1]]


def partition_loops(n_features, seg_start, seg_end, split_feature, n_threads):
    """The partition's parallel loops on ``n_threads`` threads, each as the costs of its
    iterations (``fasttree.kernels.partition._move_plan``): one loop over lanes of whole
    (feature, segment) pairs, then, for the pairs moved in row chunks, one loop over the chunks
    of each feature row (the mover's batches are a feature row's chunked segments; a chunk costs its
    rows times ``CHUNKED_MOVE_COST``, the count, scatter and copy back together).  Every split
    node's rows are moved in each feature row but the node's own split feature."""
    if n_features == 1:
        return [np.zeros(1)]  # the split feature's row is in order already: nothing moves
    skip = np.asarray(split_feature, dtype=np.int64)
    lane_first, chunked_feature, chunked_segment, n_chunks = partition_module._move_plan(
        n_features, seg_start, seg_end, skip, n_threads, partition_module.MIN_MOVE_CHUNK_ROWS,
        partition_module.MOVE_CHUNK_ROWS)
    # a lane's rows: its range of the (feature, segment) grid, but the skipped and chunked pairs
    n_segments = seg_start.shape[0]
    grid_rows = np.tile(seg_end - seg_start, n_features).reshape(n_features, n_segments)
    grid_rows[skip[skip >= 0], np.flatnonzero(skip >= 0)] = 0
    grid_rows[chunked_feature, chunked_segment] = 0
    ends = np.concatenate([[0], np.cumsum(grid_rows.ravel())])
    loops = [ends[lane_first[1:]] - ends[lane_first[:-1]]]
    for g in np.unique(chunked_feature):
        mine = chunked_feature == g
        rows = (seg_end - seg_start)[chunked_segment[mine]]
        # each pair's rows cut evenly, as the mover does
        _, lo, hi = work_items.even_chunks(np.zeros_like(rows), rows, n_chunks[mine])
        chunk_rows = hi - lo
        loops.append(partition_module.CHUNKED_MOVE_COST * chunk_rows)
    return loops


def loops_balance(loops, n_threads):
    """Balance of loops run one after the other: their work over ``n_threads`` times the sum
    of their makespans."""
    span = sum(makespan(costs, n_threads) for costs in loops)
    return float(sum(np.sum(c) for c in loops) / (n_threads * span)) if span > 0 else float("nan")


def presort_loops(X, n_threads):
    """The presort's parallel loops on ``n_threads`` threads, the rows of each iteration
    (``fasttree.kernels.presort.presort_features``): blocks of whole features; or, for a few
    features on more threads (``by_buckets``), three loops over row chunks (keys, their
    leading digits counted, scattered into buckets), three over the row chunks of the buckets
    cut again (``_split_buckets``: counted, scattered, copied back), and one over the tasks
    sorting the buckets; the buckets and tasks those of the presort itself, run on ``X`` with
    the tasks of ``n_threads`` threads."""
    n_samples, n_features = X.shape
    if not presort_module.by_buckets(n_samples, n_features, n_threads):
        n_blocks = max(1, min(n_threads, n_features))
        return [np.array([n_samples * ((c + 1) * n_features // n_blocks
                                       - c * n_features // n_blocks)
                          for c in range(n_blocks)], dtype=np.float64)]
    chunk = presort_module._SORT_CHUNK
    chunks = np.array([min(chunk, n_samples - lo) for lo in range(0, n_samples, chunk)] *
                      n_features, dtype=np.float64)
    loops = {}
    split, sort = presort_module._split_buckets, presort_module._sort_buckets

    def record_split(*args):
        item_lo, item_hi = args[-2:]
        loops["split"] = (item_hi - item_lo).astype(np.float64)
        return split(*args)

    def record_sort(*args):
        lo, hi, _, task_bucket = args[-4:]
        before = np.concatenate([[0], np.cumsum(hi - lo)])
        loops["tasks"] = (before[task_bucket[1:]] - before[task_bucket[:-1]]).astype(np.float64)
        return sort(*args)

    with mock.patch.object(presort_module, "_split_buckets", record_split), \
            mock.patch.object(presort_module, "_sort_buckets", record_sort):
        presort_module.sort_by_buckets(
            np.ascontiguousarray(X, dtype=np.float32),
            np.empty((n_features, n_samples), np.float32),
            np.empty((n_features, n_samples), np.int32),
            presort_module.bucket_tasks(n_threads), chunk)
    return [chunks] * 3 + ([loops["split"]] * 3 if "split" in loops else []) + [loops["tasks"]]


@contextlib.contextmanager
def recording():
    """Record, during a fit, the search's work items and the partition's calls, in order."""
    log = []
    make_items = work_items.WorkItems.__init__
    partition = exact_splitter._partition_prefix

    def record_items(self, pair_feature, pair_segment, pair_rows, chunkable, *args):
        make_items(self, pair_feature, pair_segment, pair_rows, chunkable, *args)
        log.append(("search", self, np.asarray(pair_rows)))

    def record_partition(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_feature,
                         *args):
        log.append(("partition", sorted_x.shape[0], seg_start.copy(), seg_end.copy(),
                    np.asarray(split_feature).copy()))
        return partition(sorted_x, sorted_idx, sorted_y, seg_start, seg_end, split_feature,
                         *args)

    # a layout small enough for one task a level skips the plan (WorkItems.one_task, the same
    # items): planned here, so that every level passes through the recorder
    with mock.patch.object(work_items.WorkItems, "__init__", record_items), \
            mock.patch.object(exact_splitter, "_partition_prefix", record_partition), \
            mock.patch.object(split_search, "ONE_TASK_LAYOUT", 0):
        yield log


def fit_balance(X, y, threads, **params):
    """Per level of one fit: rows and balance on each P of ``threads``, for the search and the
    partition; and the presort's.  Returns (levels, presort) where each level is a dict.

    The tree is fitted once per P: a search whose class counts add up exactly cuts its tasks
    for the thread count (``split_search.search_threads``, made to answer P here), which cannot
    change the tree."""
    levels = []
    for p in threads:
        with recording() as log, mock.patch.object(split_search, "search_threads",
                                                   lambda p=p: p):
            fasttree.DecisionTreeClassifier(**params).fit(X, y)
        depth = -1
        for entry in log:
            if entry[0] == "search":
                _, items, pair_rows = entry
                depth += 1
                if depth == len(levels):
                    levels.append({})
                costs = search_costs(items, pair_rows)
                levels[depth].update({"search_rows": int(costs.sum()), f"tasks@{p}": costs.size,
                                      f"search@{p}": balance(costs, p)})
            elif depth >= 0:  # the partition after a level's search
                _, n_features, seg_start, seg_end, split_feature = entry
                level = levels[depth]
                level["partition_rows"] = int(
                    partition_loops(n_features, seg_start, seg_end, split_feature, 1)[0].sum())
                level[f"partition@{p}"] = loops_balance(
                    partition_loops(n_features, seg_start, seg_end, split_feature, p), p)
    presort = {f"presort@{p}": loops_balance(presort_loops(X, p), p) for p in threads}
    return levels, presort


def weighted(levels, key, rows):
    """A phase's balance over the whole fit: its levels' balances weighted by their rows."""
    pairs = [(level[key], level[rows]) for level in levels if rows in level and level[rows] > 0]
    if not pairs:
        return float("nan")
    # total work over total thread-time: sum(rows) / sum(rows / balance)
    return sum(r for _, r in pairs) / sum(r / b for b, r in pairs)


def table(title, levels, presort, threads):
    """Markdown: one row per level, then the fit's totals."""
    head = ["level", "search tasks (" + " / ".join(f"P={p}" for p in threads) + ")",
            "search rows"] + [f"search, P={p}" for p in threads] + [
        "partition rows"] + [f"partition, P={p}" for p in threads]
    lines = [f"**{title}**", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for depth, level in enumerate(levels):
        cells = [str(depth), " / ".join(str(level[f"tasks@{p}"]) for p in threads),
                 f"{level['search_rows']:,}"]
        cells += [f"{level[f'search@{p}']:.2f}" for p in threads]
        cells += [f"{level.get('partition_rows', 0):,}"]
        cells += [f"{level[f'partition@{p}']:.2f}" if f"partition@{p}" in level else "-"
                  for p in threads]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["fit (weighted by rows)", "", ""]
    cells += [f"{weighted(levels, f'search@{p}', 'search_rows'):.2f}" for p in threads]
    cells += [""]
    cells += [f"{weighted(levels, f'partition@{p}', 'partition_rows'):.2f}" for p in threads]
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("presort: " + ", ".join(f"P={p} {presort[f'presort@{p}']:.2f}"
                                          for p in threads))
    return "\n".join(lines)


CASES = {"B1": (1_000_000, 20), "10M x 4": (10_000_000, 4)}


def run(cases, threads, max_depth=10, criterion="entropy"):
    """The tables of ``cases`` (name -> (rows, features)), entropy, depth 10 as in B1."""
    out = []
    for name, (n_rows, n_features) in cases.items():
        X, y = classification_data(n_rows, max(n_features, 4))
        X = np.ascontiguousarray(X[:, :n_features])
        levels, presort = fit_balance(X, y, threads, max_depth=max_depth, criterion=criterion)
        out.append(table(f"{name}: {n_rows:,} x {n_features}, {criterion}, depth {max_depth}",
                         levels, presort, threads))
    return "\n\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, help="one case of this many rows (with --features)")
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--threads", type=int, nargs="+", default=[16, 64])
    args = parser.parse_args()
    cases = CASES if args.rows is None else {"custom": (args.rows, args.features)}
    print(run(cases, args.threads))


if __name__ == "__main__":
    main()
