"""Candidate sources shared by the modes: in-network by author, out-of-network by similarity."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from prism_experiments.feed_store.retriever import FeedRetriever

RowFilter = Callable[[int, np.ndarray], np.ndarray]


def in_sorted(values: np.ndarray, sorted_array: np.ndarray) -> np.ndarray:
    """Mask of `values` present in `sorted_array` (ascending): a binary search, cheaper than np.isin
    on the small arrays of one feed."""
    if len(sorted_array) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    index = np.minimum(np.searchsorted(sorted_array, values), len(sorted_array) - 1)
    return sorted_array[index] == values


def ascending(values: np.ndarray, strictly: bool = False) -> bool:
    """Whether `values` never decrease (`strictly`: always increase)."""
    compare = np.greater if strictly else np.greater_equal
    return bool(compare(values[1:], values[:-1]).all())


def sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`np.union1d` of two int arrays by a sort: numpy's hash-based unique cost several times more, on a feed's few
    rows as on a step's hundred thousand (view, row) keys. Two strictly ascending arrays (a step's sorted keys) are
    merged instead: the shorter searched into the longer, no sort."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if ascending(a, strictly=True) and ascending(b, strictly=True):
        return _merged(a, b) if len(a) >= len(b) else _merged(b, a)
    merged = np.concatenate([a, b])
    merged.sort()
    if len(merged) < 2:
        return merged
    keep = np.empty(len(merged), dtype=bool)
    keep[0] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return merged[keep]


def _merged(longer: np.ndarray, shorter: np.ndarray) -> np.ndarray:
    """The sorted union of two strictly ascending arrays."""
    at = np.searchsorted(longer, shorter)
    present = at < len(longer)
    present[present] = longer[at[present]] == shorter[present]
    return np.insert(longer, at[~present], shorter[~present])


def top_k(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (rows, scores), best first, ties by row ascending."""
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order]


def nearest_visible(
    retriever: FeedRetriever,
    queries: np.ndarray,
    limit: int,
    keep: RowFilter,
    first_fetch: int,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each query, its `limit` nearest posts that pass `keep(query_index, rows)`.

    One batched Chroma query for everyone; the queries whose results were thinned below `limit`
    by the filter are asked again, together, for twice as many, until they are full or the store
    is exhausted (an ANN query cannot take per-query filters in one call; this keeps it batched).
    """
    results: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(queries)
    pending = list(range(len(queries)))
    fetch = max(1, min(first_fetch, len(retriever)))
    while pending:
        answers = retriever.query_rows(queries[pending], fetch)
        still_short = []
        for index, (rows, scores) in zip(pending, answers):
            mask = in_sorted(rows, np.sort(keep(index, rows)))
            rows, scores = rows[mask][:limit], scores[mask][:limit]
            results[index] = (rows, scores)
            if len(rows) < limit and fetch < len(retriever):
                still_short.append(index)
        pending = still_short
        fetch = min(2 * fetch, len(retriever))
    return [r if r is not None else (np.zeros(0, dtype=np.int64), np.zeros(0)) for r in results]


def newest_first(retriever: FeedRetriever, rows: np.ndarray) -> np.ndarray:
    """Rows by timestamp, newest first (ties: later row first)."""
    stamps = retriever.timestamps_us[rows]
    return rows[np.lexsort((-rows, -stamps))]


def age_hours(retriever: FeedRetriever, rows: np.ndarray, now: datetime) -> np.ndarray:
    from prism_experiments.domain import epoch_microseconds

    return (epoch_microseconds(now) - retriever.timestamps_us[rows]) / 3_600_000_000


def concat_rows(parts: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
