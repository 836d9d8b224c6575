"""Spec 000's two candidate sources, shared by x_algo and pooled_boost (its priority / specific pools)."""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import numpy as np

from prism_experiments.domain import epoch_microseconds
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import IN_NETWORK, IN_NETWORK_RESHARE, OUT_OF_NETWORK
from prism_experiments.ranking.flat import (
    Pairs,
    best_per_view,
    first_per_view,
    flat_keys,
    pair_keys,
    pair_similarities,
    ranges,
)
from prism_experiments.ranking.mode_config import CandidateSourcingConfig
from prism_experiments.ranking.sourcing import in_sorted, nearest_visible, top_k

SourcingT = TypeVar("SourcingT", bound=CandidateSourcingConfig)


@dataclass(frozen=True)
class CandidatePool:
    """One agent's candidates before scoring: rows, similarity, out-of-network flags, resharer (or None)."""

    rows: np.ndarray
    similarity: np.ndarray
    is_oon: np.ndarray
    via: list[str | None]

    def sources(self, order: np.ndarray) -> list[str]:
        """The source label of each candidate in `order`."""
        return [
            OUT_OF_NETWORK if self.is_oon[i] else (IN_NETWORK_RESHARE if self.via[i] else IN_NETWORK) for i in order
        ]


@dataclass(frozen=True)
class FlatPools:
    """`CandidatePool`s of a whole step: entries grouped by view, each view's in-network entries first."""

    view: np.ndarray
    rows: np.ndarray
    similarity: np.ndarray
    is_oon: np.ndarray
    via: list[str | None]

    def sources(self, index: np.ndarray) -> list[str]:
        """The source label of each entry in `index`."""
        return [
            OUT_OF_NETWORK if oon else (IN_NETWORK_RESHARE if self.via[i] else IN_NETWORK)
            for i, oon in zip(index.tolist(), self.is_oon[index].tolist())
        ]


class _StepFilters:
    """The per-view filters of one step as sorted (view, value) keys: excluded rows, followed authors' codes,
    followees' reshares."""

    def __init__(self, views: list[AgentView], count: int, n_codes: int, now_us: int) -> None:
        self.count, self.n_codes, self.now_us = count, n_codes, now_us
        self.excluded = flat_keys([view.excluded_rows for view in views], count)
        self.following = flat_keys([view.following_codes for view in views], n_codes)
        self.reshared = flat_keys([view.reshared_rows for view in views], count)

    def visible(self, pairs: Pairs, stamps: np.ndarray) -> np.ndarray:
        """`Ranker.visible` of each pair: not excluded for its view, not from the future."""
        return ~in_sorted(pair_keys(pairs.view, pairs.row, self.count), self.excluded) & (
            stamps[pairs.row] <= self.now_us
        )

    def followed(self, pairs: Pairs, codes: np.ndarray) -> np.ndarray:
        """`Ranker.followed_author` of each pair."""
        return in_sorted(pair_keys(pairs.view, codes[pairs.row], self.n_codes), self.following)


class NetworkSourcedRanker(Ranker[SourcingT], ABC):
    """A ranker whose candidates are in-network (followed authors, followees' reshares) and out-of-network."""

    def in_network_candidates(self, view: AgentView, now: datetime) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Posts by followed authors plus posts reshared by followees, best `in_network_limit` by similarity.

        Scored exactly from the store's vectors: the same posts Chroma's `where author_id $in`
        query returns, without a 15-30 ms filtered query per agent.
        """
        by_author = self.retriever.rows_by_authors(sorted(view.following))
        rows = self.visible(view, np.union1d(by_author, view.reshared_rows), now)
        rows, scores = top_k(rows, self.similarities(view, rows), self.config.in_network_limit)
        followed = self.followed_author(view, rows)
        via = [None if f else view.reshared[int(row)] for f, row in zip(followed, rows)]
        return rows, scores, via

    def out_of_network_candidates(self, views: list[AgentView], now: datetime) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per view, the best `out_of_network_limit` posts by similarity that are not in-network."""
        limit = self.config.out_of_network_limit

        def keep(index: int, rows: np.ndarray) -> np.ndarray:
            view = views[index]
            rows = self.visible(view, rows, now)
            # followed authors and followees' reshares belong to the in-network source
            return rows[~self.followed_author(view, rows) & ~in_sorted(rows, view.reshared_rows)]

        queries = np.stack([view.interest_vector for view in views])
        return nearest_visible(self.retriever, queries, limit, keep, first_fetch=2 * limit)

    def candidate_pool(self, view: AgentView, now: datetime, oon: tuple[np.ndarray, np.ndarray]) -> CandidatePool:
        """Both sources of one agent: in-network first, then the out-of-network posts not already in."""
        inn_rows, inn_scores, inn_via = self.in_network_candidates(view, now)
        oon_rows, oon_scores = oon
        fresh = ~in_sorted(oon_rows, np.sort(inn_rows))  # a post from both sources counts once, as in-network
        return CandidatePool(
            rows=np.concatenate([inn_rows, oon_rows[fresh]]),
            similarity=np.concatenate([inn_scores, oon_scores[fresh]]),
            is_oon=np.concatenate([np.zeros(len(inn_rows), bool), np.ones(int(fresh.sum()), bool)]),
            via=inn_via + [None] * int(fresh.sum()),
        )

    def flat_pools(self, views: list[AgentView], now: datetime) -> FlatPools:
        """`candidate_pool` of every view at once (ranking/flat.py): the same entries, in the same order per view."""
        retriever = self.retriever
        count, codes, stamps = len(retriever), retriever.author_codes, retriever.timestamps_us
        n_codes = max(retriever.author_count, 1)
        filters = _StepFilters(views, count, n_codes, epoch_microseconds(now))
        queries = np.stack([view.interest_vector for view in views])
        # in-network: rows by followed authors and rows reshared by followees, visible, best by similarity
        by_code, pointers = retriever.rows_by_author_code()
        followed_view, followed_code = np.divmod(filters.following, n_codes)
        which, index = ranges(pointers[followed_code], pointers[followed_code + 1])
        keys = np.union1d(pair_keys(followed_view[which], by_code[index], count), filters.reshared)
        pairs = Pairs(*np.divmod(keys, count))
        pairs = pairs.take(np.flatnonzero(filters.visible(pairs, stamps)))
        similarity = pair_similarities(retriever.vectors, queries, pairs)
        best = best_per_view(pairs, similarity, self.config.in_network_limit)
        inn, inn_similarity = pairs.take(best), similarity[best]
        followed = filters.followed(inn, codes)
        inn_via = [
            None if f else views[v].reshared[r]
            for f, v, r in zip(followed.tolist(), inn.view.tolist(), inn.row.tolist())
        ]
        oon, oon_similarity = self._flat_out_of_network(queries, filters, stamps, codes)
        fresh = ~in_sorted(pair_keys(oon.view, oon.row, count), np.sort(pair_keys(inn.view, inn.row, count)))
        view = np.concatenate([inn.view, oon.view[fresh]])
        order = np.argsort(view, kind="stable")  # per view: in-network first, each source in its own order
        via = inn_via + [None] * int(fresh.sum())
        return FlatPools(
            view=view[order],
            rows=np.concatenate([inn.row, oon.row[fresh]])[order],
            similarity=np.concatenate([inn_similarity, oon_similarity[fresh]])[order],
            is_oon=np.concatenate([np.zeros(len(inn), bool), np.ones(int(fresh.sum()), bool)])[order],
            via=[via[i] for i in order.tolist()],
        )

    def _flat_out_of_network(
        self, queries: np.ndarray, filters: _StepFilters, stamps: np.ndarray, codes: np.ndarray
    ) -> tuple[Pairs, np.ndarray]:
        """`out_of_network_candidates` of every view at once: `nearest_visible` with the same fetches."""
        retriever, limit, count = self.retriever, self.config.out_of_network_limit, filters.count
        last_round = np.full(len(queries), -1)
        rounds: list[tuple[Pairs, np.ndarray]] = []
        pending = np.arange(len(queries))
        fetch = max(1, min(2 * limit, count))
        while len(pending):
            answers = retriever.query_rows(queries[pending], fetch)
            lengths = np.fromiter((len(rows) for rows, _ in answers), dtype=np.int64, count=len(answers))
            pairs = Pairs(np.repeat(pending, lengths), np.concatenate([rows for rows, _ in answers]).astype(np.int64))
            scores = np.concatenate([scores for _, scores in answers])
            keep = filters.visible(pairs, stamps) & ~filters.followed(pairs, codes)
            keep &= ~in_sorted(pair_keys(pairs.view, pairs.row, count), filters.reshared)
            chosen = first_per_view(pairs.view, keep, limit)
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
