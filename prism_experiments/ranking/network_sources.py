"""The two candidate sources (REQ-XALGO-1), shared by x_algo and pooled_boost (its priority / specific pools)."""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import numpy as np

from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import IN_NETWORK, IN_NETWORK_RESHARE, OUT_OF_NETWORK, RankedCandidate
from prism_experiments.ranking.flat import (
    Pairs,
    StepFilters,
    best_per_view,
    nearest_visible_flat,
    pair_keys,
)
from prism_experiments.ranking.mode_config import CandidateSourcingConfig
from prism_experiments.ranking.sourcing import in_sorted, nearest_visible, sorted_union, top_k
from prism_experiments.ranking.step_feeds import NO_VIA, SOURCE_CODES
from prism_experiments.ranking.whole_step import StepViews

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
    """`CandidatePool`s of a whole step: the same entries, in (view, row) order; `via` is the resharer's author code
    (-1: none)."""

    view: np.ndarray
    rows: np.ndarray
    similarity: np.ndarray
    is_oon: np.ndarray
    via: np.ndarray

    def sources(self) -> np.ndarray:
        """Each entry's source code (`StepFeeds.source`)."""
        return np.where(
            self.is_oon,
            SOURCE_CODES[OUT_OF_NETWORK],
            np.where(self.via != NO_VIA, SOURCE_CODES[IN_NETWORK_RESHARE], SOURCE_CODES[IN_NETWORK]),
        ).astype(np.int8)


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

    def candidate_pools(self, views: list[AgentView], now: datetime) -> list[CandidatePool]:
        """`candidate_pool` of every view, the out-of-network sources searched for all views at once."""
        out_of_network = self.out_of_network_candidates(views, now)
        return [self.candidate_pool(view, now, oon) for view, oon in zip(views, out_of_network)]

    def pool_feed(
        self,
        view: AgentView,
        pool: CandidatePool,
        order: np.ndarray,
        final: np.ndarray,
        components: Mapping[str, np.ndarray],
    ) -> list[RankedCandidate]:
        """The pool's entries in `order` as the feed: base score the similarity, `final` and `components` (aligned
        with the pool) taken in that order, source and resharer the pool's."""
        return self.candidates(
            view,
            pool.rows[order],
            pool.similarity[order],
            final[order],
            pool.sources(order),
            {name: values[order] for name, values in components.items()},
            in_network=~pool.is_oon[order],
            via=[pool.via[i] for i in order],
        )

    def flat_pools(self, views: StepViews, now: datetime) -> FlatPools:
        """`candidate_pool` of every view at once (ranking/flat.py): the same entries per view, in (view, row) order."""
        retriever = self.retriever
        filters = views.filters
        codes, stamps = retriever.author_codes, retriever.timestamps_us
        # in-network: rows by followed authors and rows reshared by followees, visible, best by similarity
        network = views.network_keys(retriever)
        pairs = views.visible_pairs(network, stamps)
        similarity = retriever.pair_similarities(views.queries, pairs.view, pairs.row)
        best = best_per_view(pairs, similarity, self.config.in_network_limit)
        inn, inn_similarity = pairs.take(best), similarity[best]
        inn_via = views.resharer_of(inn)
        inn_via[filters.followed(inn, codes)] = NO_VIA
        # out-of-network: neither excluded nor in-network (by a followed author, or reshared by a followee)
        blocked = sorted_union(filters.excluded, network)
        oon, oon_similarity = self._flat_out_of_network(views.queries, blocked, filters, stamps)
        # the two sources are disjoint (`blocked` holds every in-network key): no post counts twice
        view, rows = np.concatenate([inn.view, oon.view]), np.concatenate([inn.row, oon.row])
        order = np.argsort(pair_keys(view, rows, filters.count), kind="stable")  # (view, row) order
        return FlatPools(
            view=view[order],
            rows=rows[order],
            similarity=np.concatenate([inn_similarity, oon_similarity])[order],
            is_oon=np.concatenate([np.zeros(len(inn), bool), np.ones(len(oon), bool)])[order],
            via=np.concatenate([inn_via, np.full(len(oon), NO_VIA, dtype=np.int64)])[order],
        )

    def _flat_out_of_network(
        self, queries: np.ndarray, blocked: np.ndarray, filters: StepFilters, stamps: np.ndarray
    ) -> tuple[Pairs, np.ndarray]:
        """`out_of_network_candidates` of every view at once; `blocked`: the sorted (view, row) keys no view may get
        from this source (excluded for it, or in-network): one search per round instead of one per filter."""
        limit = self.config.out_of_network_limit

        def keep(pairs: Pairs) -> np.ndarray:
            unblocked = ~in_sorted(pair_keys(pairs.view, pairs.row, filters.count), blocked)
            return unblocked & (stamps[pairs.row] <= filters.now_us)

        return nearest_visible_flat(self.retriever, queries, limit, keep, first_fetch=2 * limit)
