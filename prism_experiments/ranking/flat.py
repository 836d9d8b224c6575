"""A whole step's candidates as flat arrays: one entry per (view, row) pair, views one after another.

The per-agent steps of `network_sources` (in-network by followed author, out-of-network by similarity,
the pool of both) and x_algo's rescoring, done for every agent of a step at once with grouped numpy
operations instead of a few dozen small ones per agent. Same rows, scores and order as the per-agent
steps, bit for bit: similarities are `exact_similarities` (each row summed on its own), and every
per-agent sort becomes one sort keyed by (view, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.feed_store.pair_similarity import pair_dot_similarities
from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.feed_store.vector_table import RowVectors
from prism_experiments.group_order import best_first_by_group, best_of_each_group, group_bounds, rank_within
from prism_experiments.ranking.sourcing import ascending, in_sorted

if TYPE_CHECKING:
    from prism_experiments.ranking.base import AgentView


@dataclass(frozen=True)
class Pairs:
    """(view, row) pairs, grouped by view in ascending view order."""

    view: np.ndarray
    row: np.ndarray

    def __len__(self) -> int:
        return len(self.row)

    def take(self, index: np.ndarray) -> Pairs:
        return Pairs(self.view[index], self.row[index])


def pair_keys(view: np.ndarray, row: np.ndarray, width: int) -> np.ndarray:
    """One int64 per (view, value) pair, ordered by view then value (`value < width`)."""
    return view.astype(np.int64) * np.int64(width) + row


def flat_keys(parts: Sequence[np.ndarray], width: int) -> np.ndarray:
    """Sorted (view, value) keys of per-view arrays of values (`view` = the array's index)."""
    lengths = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    if not lengths.sum():
        return np.zeros(0, dtype=np.int64)
    values = np.concatenate([np.asarray(p, dtype=np.int64) for p in parts])
    keys = pair_keys(np.repeat(np.arange(len(parts)), lengths), values, width)
    return keys if ascending(keys) else np.sort(keys)  # each part sorted (the usual case): sorted already


def pair_similarities(vectors: np.ndarray | RowVectors, queries: np.ndarray, pairs: Pairs) -> np.ndarray:
    """`exact_similarities` of each pair's row to its view's query: float64 products, each row summed on its own
    (`pair_dot_similarities`: a pair's value does not depend on the pairs scored with it).

    Products in chunks cost half the time of one small product per view (a few thousand views of about 8 pairs
    each, bench); `FeedRetriever.pair_similarities` gives the same values, each distinct pair scored once.
    """
    if isinstance(vectors, RowVectors):
        table, table_rows = vectors.table, vectors.table_rows(pairs.row)
    else:
        table, table_rows = np.asarray(vectors), pairs.row
    return pair_dot_similarities(table, table_rows, np.asarray(queries, dtype=np.float64), pairs.view)


def best_per_view(pairs: Pairs, scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of each view's `limit` best pairs by score, ties by row (`top_k`'s pairs), in (view, row) order, for
    pairs in (view, row) order."""
    return np.flatnonzero(best_of_each_group(pairs.view, scores, limit))


def first_per_view(view: np.ndarray, keep: np.ndarray, limit: int) -> np.ndarray:
    """Indices of each view's first `limit` kept entries, in order (entries grouped by view)."""
    kept = np.flatnonzero(keep)
    return kept[rank_within(view[kept]) < limit]


def occurrence_by_score(group: np.ndarray, score: np.ndarray, row: np.ndarray) -> np.ndarray:
    """For each entry, how many entries of its group have a higher score, or the same and a smaller row: its
    `occurrence_in_order` in best-first order. Only groups of two or more entries are sorted."""
    occurrence = np.zeros(len(group), dtype=np.int64)
    if len(group) == 0:
        return occurrence
    by_group = np.argsort(group, kind="stable")
    first, _, lengths = group_bounds(group[by_group])
    shared = np.repeat(lengths > 1, lengths)
    members, gid = by_group[shared], (np.cumsum(first) - 1)[shared]
    order = best_first_by_group(gid, score[members], row[members])
    occurrence[members[order]] = rank_within(gid[order])
    return occurrence


def nearest_visible_flat(
    retriever: FeedRetriever,
    queries: np.ndarray,
    limit: int,
    keep: Callable[[Pairs], np.ndarray],
    first_fetch: int,
) -> tuple[Pairs, np.ndarray]:
    """`sourcing.nearest_visible` of every query at once: per query (its view), its `limit` nearest rows that
    `keep` lets through, best first, with the same fetches (a query thinned below `limit` asks again for twice
    as many). Returns the kept pairs grouped by view and their similarities."""
    count = len(retriever)
    last_round = np.full(len(queries), -1)
    rounds: list[tuple[Pairs, np.ndarray]] = []
    pending = np.arange(len(queries))
    fetch = max(1, min(first_fetch, count))
    while len(pending):
        answers = retriever.query_rows(queries[pending], fetch)
        lengths = np.fromiter((len(rows) for rows, _ in answers), dtype=np.int64, count=len(answers))
        pairs = Pairs(np.repeat(pending, lengths), np.concatenate([rows for rows, _ in answers]).astype(np.int64))
        scores = np.concatenate([scores for _, scores in answers])
        chosen = first_per_view(pairs.view, keep(pairs), limit)
        rounds.append((pairs.take(chosen), scores[chosen]))
        last_round[pending] = len(rounds) - 1
        kept = np.bincount(pairs.view[chosen], minlength=len(queries))[pending]
        pending = pending[kept < limit] if fetch < count else pending[:0]
        fetch = min(2 * fetch, count)
    finals = [(pairs, scores, last_round[pairs.view] == r) for r, (pairs, scores) in enumerate(rounds)]
    view = np.concatenate([pairs.view[mine] for pairs, _, mine in finals])
    order = np.argsort(view, kind="stable")
    rows = np.concatenate([pairs.row[mine] for pairs, _, mine in finals])
    return Pairs(view[order], rows[order]), np.concatenate([scores[mine] for _, scores, mine in finals])[order]


@dataclass(frozen=True)
class StepFilters:
    """The per-view filters of one step as sorted (view, value) keys: excluded rows, followed authors' codes,
    followees' reshares."""

    count: int
    n_codes: int
    now_us: int
    excluded: np.ndarray
    following: np.ndarray
    reshared: np.ndarray

    @classmethod
    def of_views(cls, views: Sequence[AgentView], count: int, n_codes: int, now_us: int) -> StepFilters:
        return cls(
            count,
            n_codes,
            now_us,
            flat_keys([view.excluded_rows for view in views], count),
            flat_keys([view.following_codes for view in views], n_codes),
            flat_keys([view.reshared_rows for view in views], count),
        )

    def visible(self, pairs: Pairs, stamps: np.ndarray) -> np.ndarray:
        """`Ranker.visible` of each pair: not excluded for its view, not from the future."""
        return ~in_sorted(pair_keys(pairs.view, pairs.row, self.count), self.excluded) & (
            stamps[pairs.row] <= self.now_us
        )

    def followed(self, pairs: Pairs, codes: np.ndarray) -> np.ndarray:
        """`Ranker.followed_author` of each pair."""
        return in_sorted(pair_keys(pairs.view, codes[pairs.row], self.n_codes), self.following)
