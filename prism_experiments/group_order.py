"""Grouped entries ordered best first, ties by row: `np.lexsort((row, -score, group))` and its per-group cuts, faster.

Rankers order a whole step's candidates this way (a view's feed: best first, ties to the smaller row) and the
retriever merges query answers the same way. `np.lexsort` runs one indirect merge sort per key; here
`best_first_by_group` turns the scores into dense ranks (one float sort) and (group, rank, row) into one int64 key
(one integer sort), and `best_of_each_group` finds each group's `limit` best without a sort: a partition of a
(groups x group length) grid gives each group's limit-th best score, and the ties at it go to the earlier entries.
The same entries and the same order, bit for bit (docs/history/bench.md).
"""

from __future__ import annotations

import numpy as np

_KEY_LIMIT = 1 << 63
#: cells of one grid `best_of_each_group` partitions at most (float64: 64 MB), unless one group is longer
GRID_CELLS = 1 << 23


def group_bounds(group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For entries grouped by group (equal groups adjacent, at least one entry): whether each entry starts its group,
    and each group's start and length."""
    first = np.empty(len(group), dtype=bool)
    first[0] = True
    np.not_equal(group[1:], group[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return first, starts, np.diff(np.append(starts, len(group)))


def rank_within(group: np.ndarray) -> np.ndarray:
    """For entries grouped by group (equal groups adjacent), each entry's position within its group."""
    if len(group) == 0:
        return np.zeros(0, dtype=np.int64)
    _, starts, lengths = group_bounds(group)
    return np.arange(len(group)) - np.repeat(starts, lengths)


def ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which range, index) of every index in the half-open ranges [starts[i], ends[i]), ranges in order."""
    lengths = np.maximum(ends - starts, 0)
    which = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return which, starts[which] + offsets


def best_first_by_group(group: np.ndarray, score: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Indices by group ascending, then score descending, then row ascending, equal entries in input order: exactly
    `np.lexsort((row, -score, group))` for non-negative integer groups and rows and scores that are not NaN."""
    count = len(score)
    if count == 0:
        return np.zeros(0, dtype=np.intp)
    worse = -np.asarray(score, dtype=np.float64)
    # a stable sort (timsort) runs through what is ordered already: a merge's remembered answers, best first
    by_worse = np.argsort(worse, kind="stable")
    ordered = worse[by_worse]
    rises = np.empty(count, dtype=np.int64)
    rises[0] = 0
    np.not_equal(ordered[1:], ordered[:-1], out=rises[1:], casting="unsafe")
    rank = np.empty(count, dtype=np.int64)
    rank[by_worse] = np.cumsum(rises)  # equal scores (0.0 and -0.0 too) share a rank, as they tie in lexsort
    levels, width, groups = int(rank[by_worse[-1]]) + 1, int(row.max()) + 1, int(group.max()) + 1
    if groups * levels * width >= _KEY_LIMIT:
        return np.lexsort((row, worse, group))
    key = (np.asarray(group, dtype=np.int64) * levels + rank) * width + row
    return np.argsort(key, kind="stable")


def best_of_each_group(group: np.ndarray, score: np.ndarray, limit: int) -> np.ndarray:
    """Whether each entry is among its group's `limit` best by score, ties to the earlier entry, for entries grouped by
    group (equal groups adjacent): the entries `lexsort((position, -score, group))` puts first `limit` in a group.

    Groups longer than `limit` go into grids of groups of about one length (up to the next power of two, so at most
    half a grid is padding; at most `GRID_CELLS` cells each), and one partition per grid finds each group's
    limit-th best score."""
    count = len(score)
    if count == 0 or limit <= 0:
        return np.zeros(count, dtype=bool)
    first, starts, lengths = group_bounds(group)
    gid = np.cumsum(first) - 1
    long_groups = np.flatnonzero(lengths > limit)
    grid_of_group = np.full(len(starts), -1)
    line_of_group = np.zeros(len(starts), dtype=np.int64)
    shapes: list[tuple[int, int]] = []  # each grid's (groups, width)
    width_class = np.ceil(np.log2(lengths[long_groups])).astype(np.int64)
    for same_class in np.unique(width_class).tolist():
        members = long_groups[width_class == same_class]
        width = int(lengths[members].max())
        per_grid = max(1, GRID_CELLS // width)
        for first_member in range(0, len(members), per_grid):
            part = members[first_member : first_member + per_grid]
            grid_of_group[part], line_of_group[part] = len(shapes), np.arange(len(part))
            shapes.append((len(part), width))
    grid_of_entry = grid_of_group[gid]
    best = grid_of_entry < 0  # a group of at most `limit` entries keeps them all
    position = np.arange(count) - starts[gid]
    worse = -np.asarray(score, dtype=np.float64)  # a partition puts the smallest first
    for grid_index, shape in enumerate(shapes):
        index = np.flatnonzero(grid_of_entry == grid_index)
        line = line_of_group[gid[index]]
        grid = np.full(shape, np.inf)
        grid[line, position[index]] = worse[index]
        kth = np.partition(grid, limit - 1, axis=1)[:, limit - 1][line]
        better = worse[index] < kth
        tied = np.flatnonzero(worse[index] == kth)  # in input order: the earlier ones fill what the better ones left
        room = limit - np.bincount(line[better], minlength=shape[0])
        best[index[better]] = True
        best[index[tied[rank_within(line[tied]) < room[line[tied]]]]] = True
    return best


def top_of_each_group(group: np.ndarray, score: np.ndarray, limit: int) -> np.ndarray:
    """Indices of each group's `limit` best entries, groups ascending, best first, ties to the earlier entry, for
    entries grouped by group in ascending order: `np.lexsort((position, -score, group))` cut to `limit` per group."""
    chosen = np.flatnonzero(best_of_each_group(group, score, limit))
    return chosen[best_first_by_group(group[chosen], score[chosen], chosen)]
