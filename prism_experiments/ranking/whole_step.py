"""Modes that rank a whole step at once: the step's agents as flat arrays (`StepViews`) in, `StepFeeds` out.

x_algo, preference, random and chronological rank every active agent of a step with grouped numpy operations
(ranking/flat.py); this builds what they read about the agents the same way, for all of them at once, instead of
an `AgentView` per agent: interest vectors, each agent's excluded rows (what it was shown, its own posts), its
followees' author codes and its followees' reshares, as sorted (view, value) keys. Same rows, scores and order
as the per-agent views (tests/test_ranking_integration.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.domain import as_utc, epoch_microseconds
from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.group_order import ranges
from prism_experiments.ranking.base import AgentView, ConfigT, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.flat import Pairs, StepFilters, flat_keys, pair_keys
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.reshares import ReshareLog
from prism_experiments.ranking.sourcing import sorted_union
from prism_experiments.ranking.step_feeds import NO_VIA, StepFeeds

if TYPE_CHECKING:
    from prism_experiments.agents import SocialAgent

_NO_ROWS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class StepViews:
    """A step's agents as a whole-step ranker sees them, view v being `agents[v]`: interest vectors (`queries`),
    the filters as sorted keys, and per reshared key (`filters.reshared`) the author code of its resharer."""

    agents: Sequence[SocialAgent]
    queries: np.ndarray
    filters: StepFilters
    resharer: np.ndarray

    def __len__(self) -> int:
        return len(self.agents)

    def excluded_rows(self) -> list[np.ndarray]:
        """Per view, its excluded rows, ascending."""
        count = self.filters.count
        view, rows = np.divmod(self.filters.excluded, count)
        return np.split(rows, np.searchsorted(view, np.arange(1, len(self.agents))))

    def resharer_of(self, pairs: Pairs) -> np.ndarray:
        """Per pair, the author code of the followee whose reshare it is (`ReshareLog.reshared_by`), else -1."""
        keys, reshared = pair_keys(pairs.view, pairs.row, self.filters.count), self.filters.reshared
        out = np.full(len(pairs), NO_VIA, dtype=np.int64)
        if len(reshared) == 0 or len(keys) == 0:
            return out
        index = np.minimum(np.searchsorted(reshared, keys), len(reshared) - 1)
        found = reshared[index] == keys
        out[found] = self.resharer[index[found]]
        return out

    def in_network_pairs(self, retriever: FeedRetriever) -> Pairs:
        """Every view's visible in-network rows (by a followed author, or reshared by a followee), ascending by
        (view, row): the in-network source of chronological and of the x_algo family (ranking/network_sources.py)."""
        return self.visible_pairs(self.network_keys(retriever), retriever.timestamps_us)

    def network_keys(self, retriever: FeedRetriever) -> np.ndarray:
        """Sorted (view, row) keys of every row by a followed author or reshared by a followee, visible or not."""
        filters, count = self.filters, self.filters.count
        by_code, pointers = retriever.rows_by_author_code()
        followed_view, followed_code = np.divmod(filters.following, filters.n_codes)
        which, index = ranges(pointers[followed_code], pointers[followed_code + 1])
        return sorted_union(pair_keys(followed_view[which], by_code[index], count), filters.reshared)

    def visible_pairs(self, keys: np.ndarray, stamps: np.ndarray) -> Pairs:
        """The pairs of sorted (view, row) keys that their views may see (`StepFilters.visible`), in key order."""
        pairs = Pairs(*np.divmod(keys, self.filters.count))
        return pairs.take(np.flatnonzero(self.filters.visible(pairs, stamps)))


class FolloweeReshares:
    """The reshare log by resharer author code, kept in step with the log as it grows."""

    def __init__(self, log: ReshareLog, retriever: FeedRetriever) -> None:
        self.log, self.retriever = log, retriever
        self._synced = 0
        self._codes, self._rows, self._steps = _NO_ROWS, _NO_ROWS, _NO_ROWS
        self._by_code = _NO_ROWS  # entries ordered by resharer code
        self._id_rank = _NO_ROWS  # per code, the rank of its id among the resharers' ids (ties go to the smallest)

    def _sync(self) -> None:
        if len(self.log) == self._synced:
            return
        ids, rows, steps = self.log.entries(self._synced)
        self.retriever.register_authors(ids)  # a resharer that never wrote a post still gets a code
        code_of = self.retriever.author_code_of
        codes = np.fromiter((code_of[i] for i in ids), dtype=np.int64, count=len(ids))
        self._codes = np.concatenate([self._codes, codes])
        self._rows = np.concatenate([self._rows, rows])
        self._steps = np.concatenate([self._steps, steps])
        self._synced = len(self.log)
        self._by_code = np.argsort(self._codes, kind="stable")
        resharers = np.unique(self._codes)
        author_ids = self.retriever.author_ids()
        by_id = sorted(resharers.tolist(), key=author_ids.__getitem__)
        self._id_rank = np.zeros(int(resharers[-1]) + 1, dtype=np.int64)
        self._id_rank[by_id] = np.arange(len(by_id))

    def of_views(self, following: np.ndarray, n_codes: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """For sorted (view, followed code) keys: the sorted (view, row) keys of what those followees reshared, and
        each one's resharer: the latest, a tie to the smallest id (`ReshareLog.reshared_by`)."""
        self._sync()
        if len(self._codes) == 0 or len(following) == 0:
            return _NO_ROWS, _NO_ROWS
        codes = self._codes[self._by_code]
        pointers = np.searchsorted(codes, np.arange(n_codes + 1))
        view, code = np.divmod(following, n_codes)
        which, index = ranges(pointers[code], pointers[code + 1])
        entries = self._by_code[index]
        keys = pair_keys(view[which], self._rows[entries], count)
        entry_codes = self._codes[entries]
        best = np.lexsort((self._id_rank[entry_codes], -self._steps[entries], keys))
        keys, entry_codes = keys[best], entry_codes[best]
        first = np.ones(len(keys), dtype=bool)
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        return keys[first], entry_codes[first]

    def ensure_synced(self) -> None:
        """Codes for every resharer so far (before a step's author count is read)."""
        self._sync()


class WholeStepRanker(Ranker[ConfigT], ABC):
    """A mode that ranks every agent of a step at once (`_rank_step`); `rank_many` serves its feeds as objects."""

    def __init__(self, config: ConfigT, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self._followee_reshares = FolloweeReshares(inputs.reshares, inputs.retriever)
        self._codes_by_id: dict[str, tuple[tuple[int, int], np.ndarray]] = {}

    @abstractmethod
    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        """Every view's feed."""

    def rank_step(
        self, agents: Sequence[SocialAgent], now: datetime, exclude: Sequence[np.ndarray] | None = None
    ) -> StepFeeds:
        if not agents or len(self.retriever) == 0:
            return StepFeeds.empty(len(agents))
        return self._rank_step(self.step_views(agents, now, exclude), as_utc(now))

    def _rank_agents(
        self, agents: Sequence[SocialAgent], now: datetime, exclude_by_agent: Mapping[str, Collection[str]]
    ) -> list[list[RankedCandidate]]:
        """The whole step at once (`rank_step`), no view built agent by agent."""
        exclude = [self._excluded_rows(exclude_by_agent.get(agent.id, ())) for agent in agents]
        feeds = self.rank_step(agents, now, exclude)
        return feeds.candidates(self.retriever.posts, self.retriever.author_ids())

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        """The same feeds for views built agent by agent (their excluded rows hold their own posts already)."""
        feeds = self.rank_step([view.agent for view in views], now, [view.excluded_rows for view in views])
        return feeds.candidates(self.retriever.posts, self.retriever.author_ids())

    def _excluded_rows(self, exclude: Iterable[str] | np.ndarray) -> np.ndarray:
        if isinstance(exclude, np.ndarray):
            return exclude
        retriever = self.retriever
        return np.sort(np.asarray([retriever.row_of(i) for i in exclude if retriever.has_post(i)], dtype=np.int64))

    def step_views(
        self, agents: Sequence[SocialAgent], now: datetime, exclude: Sequence[np.ndarray] | None = None
    ) -> StepViews:
        """What `_view` gives each agent, for all of them at once; `exclude` per agent its excluded rows, sorted."""
        retriever = self.retriever
        self._followee_reshares.ensure_synced()
        count, n_codes = len(retriever), max(retriever.author_count, 1)
        queries = np.stack([retriever.embed_interests(agent.interests) for agent in agents])
        code_of = retriever.author_code_of
        own = np.fromiter((code_of.get(agent.id, -1) for agent in agents), dtype=np.int64, count=len(agents))
        authors = np.flatnonzero(own >= 0)
        by_code, pointers = retriever.rows_by_author_code()
        which, index = ranges(pointers[own[authors]], pointers[own[authors] + 1])
        own_keys = pair_keys(authors[which], by_code[index], count)
        excluded = sorted_union(flat_keys(exclude, count), own_keys) if exclude is not None else own_keys
        following = flat_keys([self._followee_codes(agent.id) for agent in agents], n_codes)
        reshared, resharer = self._followee_reshares.of_views(following, n_codes, count)
        filters = StepFilters(count, n_codes, epoch_microseconds(as_utc(now)), excluded, following, reshared)
        return StepViews(agents, queries, filters, resharer)

    def step_feeds(
        self,
        views: StepViews,
        pairs: Pairs,
        base: np.ndarray,
        final: np.ndarray,
        source: np.ndarray,
        components: Mapping[str, np.ndarray],
        similarity: np.ndarray | None = None,
    ) -> StepFeeds:
        """The feeds of pairs grouped by view, each view's pairs in feed order; in-network where the author is followed
        or a followee reshared the post (`network_flags`)."""
        followed = views.filters.followed(pairs, self.retriever.author_codes)
        via = views.resharer_of(pairs)
        via[followed] = NO_VIA
        in_network = followed | (via != NO_VIA)
        return StepFeeds.grouped(
            len(views), pairs.view, pairs.row, base, final, in_network, source, via, components, similarity
        )

    def _followee_codes(self, agent_id: str) -> np.ndarray:
        """The agent's followees' author codes, ascending, kept while neither its follows (only ever added, so their
        count tells) nor the store's authors change."""
        retriever = self.retriever
        key = (self._out_degree(agent_id), retriever.author_count)
        kept = self._codes_by_id.get(agent_id)
        if kept is None or kept[0] != key:
            kept = (key, retriever.author_codes_of(self.graph.following(agent_id)))
            self._codes_by_id[agent_id] = kept
        return kept[1]
