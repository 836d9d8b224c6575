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
    StepFilters,
    best_per_view,
    nearest_visible_flat,
    pair_keys,
    pair_similarities,
    ranges,
)
from prism_experiments.ranking.mode_config import CandidateSourcingConfig
from prism_experiments.ranking.sourcing import in_sorted, nearest_visible, sorted_union, top_k

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
        filters = StepFilters(views, count, n_codes, epoch_microseconds(now))
        queries = np.stack([view.interest_vector for view in views])
        # in-network: rows by followed authors and rows reshared by followees, visible, best by similarity
        by_code, pointers = retriever.rows_by_author_code()
        followed_view, followed_code = np.divmod(filters.following, n_codes)
        which, index = ranges(pointers[followed_code], pointers[followed_code + 1])
        keys = sorted_union(pair_keys(followed_view[which], by_code[index], count), filters.reshared)
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
        self, queries: np.ndarray, filters: StepFilters, stamps: np.ndarray, codes: np.ndarray
    ) -> tuple[Pairs, np.ndarray]:
        """`out_of_network_candidates` of every view at once."""
        limit = self.config.out_of_network_limit

        def keep(pairs: Pairs) -> np.ndarray:
            kept = filters.visible(pairs, stamps) & ~filters.followed(pairs, codes)
            return kept & ~in_sorted(pair_keys(pairs.view, pairs.row, filters.count), filters.reshared)

        return nearest_visible_flat(self.retriever, queries, limit, keep, first_fetch=2 * limit)
