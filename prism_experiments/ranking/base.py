"""The one interface every ranking mode implements, and the steps the modes share."""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

import numpy as np

from prism_experiments.domain import as_utc, epoch_microseconds
from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.network.graph import out_degree_of
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.sourcing import in_sorted, sorted_union
from prism_experiments.ranking.step_feeds import StepFeeds

if TYPE_CHECKING:
    import pandas as pd

    from prism_experiments.agents import SocialAgent
    from prism_experiments.network import SocialGraph
    from prism_experiments.ranking.feedback import ServedFeedback


@dataclass(slots=True)
class AgentView:
    """What a ranker knows about one agent at one moment; built once per agent per call."""

    agent_id: str
    interests: tuple[str, ...]
    interest_vector: np.ndarray
    following: frozenset[str]
    following_codes: np.ndarray  # sorted: the followees' author codes in the store (FeedRetriever.author_codes)
    excluded_rows: np.ndarray  # sorted: its own posts and whatever the caller excluded
    reshared: dict[int, str]  # row -> followee who reshared it
    reshared_rows: np.ndarray  # sorted: the keys of `reshared`
    agent: SocialAgent  # read-only: a mode that models the agent (engagement's oracle) reads it


ConfigT = TypeVar("ConfigT", bound=ModeConfig)


class Ranker(ABC, Generic[ConfigT]):
    """Serves feeds. Never modifies posts, agents or the graph."""

    #: the mode's settings; `registry.register_mode` reads the mode's name from it
    config_model: ClassVar[type[ModeConfig]]
    mode: ClassVar[str]

    def __init__(self, config: ConfigT, inputs: RankerInputs) -> None:
        self.config = config
        self.inputs = inputs
        self.retriever: FeedRetriever = inputs.retriever
        self.graph: SocialGraph = inputs.graph
        # a graph written before SocialGraph had out_degree still ranks (counted from `following`, with a warning)
        self._out_degree = out_degree_of(inputs.graph)
        self.reshares = inputs.reshares
        # one number from the caller's stream: per-agent draws are keyed by (agent, time), not call order
        rng = inputs.rng if inputs.rng is not None else np.random.default_rng(0)
        self._entropy = int(rng.integers(2**63))
        self._codes_by_agent: dict[str, tuple[tuple[int, int], np.ndarray]] = {}

    @property
    def feed_size(self) -> int:
        """How many candidates a feed holds: `rag.feed_size`, or the serving depth a stochastic policy samples from."""
        return self.inputs.depth or self.retriever.config.feed_size

    def rank(self, agent: SocialAgent, now: datetime, exclude: Collection[str] = ()) -> list[RankedCandidate]:
        """The agent's feed at `now`: at most feed_size candidates, best first."""
        return self.rank_many([agent], now, {agent.id: exclude})[0]

    def rank_many(
        self,
        agents: Sequence[SocialAgent],
        now: datetime,
        exclude_by_agent: Mapping[str, Collection[str]] | None = None,
    ) -> list[list[RankedCandidate]]:
        """Feeds for a whole step, with batched store queries."""
        if not agents or len(self.retriever) == 0:
            return [[] for _ in agents]
        return self._rank_agents(agents, as_utc(now), exclude_by_agent or {})

    def _rank_agents(
        self, agents: Sequence[SocialAgent], now: datetime, exclude_by_agent: Mapping[str, Collection[str]]
    ) -> list[list[RankedCandidate]]:
        """`rank_many` of a step with agents and posts: each agent's view, then `_rank_views`."""
        views = [self._view(agent, exclude_by_agent.get(agent.id, ())) for agent in agents]
        return self._rank_views(views, now)

    def rank_step(
        self, agents: Sequence[SocialAgent], now: datetime, exclude: Sequence[np.ndarray] | None = None
    ) -> StepFeeds:
        """The engine's one call: a whole step's feeds as arrays; `exclude` holds each agent's excluded store rows,
        ascending. A mode that ranks agent by agent serves its `RankedCandidate` feeds as arrays."""
        rows = exclude if exclude is not None else [np.zeros(0, dtype=np.int64)] * len(agents)
        feeds = self.rank_many(agents, now, {agent.id: excluded for agent, excluded in zip(agents, rows)})
        self.retriever.register_authors(c.via_agent_id for feed in feeds for c in feed if c.via_agent_id)
        return StepFeeds.from_candidates(feeds, self.retriever.author_code_of)

    @abstractmethod
    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        """Rank every agent's view."""

    def observe(self, feedback: ServedFeedback) -> None:
        """What the agents did with the step's feeds. Most modes ignore it; a learning mode trains on it."""

    def step_metrics(self) -> dict[str, dict[int, float]]:
        """Per-step figures the mode wants logged (name -> step -> value); none by default."""
        return {}

    def run_tables(self) -> dict[str, pd.DataFrame]:
        """Tables the mode wants logged at the end of the run (`tables/<name>.parquet`); none by default."""
        return {}

    # ---------------------------------------------------------------- shared steps
    def _view(self, agent: SocialAgent, exclude: Iterable[str] | np.ndarray) -> AgentView:
        """`exclude`: post ids, or their store rows as an ascending int array (what the engine keeps)."""
        following = frozenset(self.graph.following(agent.id))
        retriever = self.retriever
        if isinstance(exclude, np.ndarray):
            excluded = exclude
        else:
            excluded = np.asarray([retriever.row_of(i) for i in exclude if retriever.has_post(i)], dtype=np.int64)
        own = retriever.rows_by_authors([agent.id])
        rows = sorted_union(excluded, own)
        reshared = self.reshares.reshared_by(following) if len(self.reshares) else {}
        return AgentView(
            agent_id=agent.id,
            interests=tuple(agent.interests),
            interest_vector=retriever.embed_interests(agent.interests),
            following=following,
            following_codes=self._following_codes(agent.id, following),
            excluded_rows=rows,
            reshared=reshared,
            reshared_rows=np.sort(np.fromiter(reshared, dtype=np.int64, count=len(reshared))),
            agent=agent,
        )

    def _following_codes(self, agent_id: str, following: frozenset[str]) -> np.ndarray:
        """`retriever.author_codes_of(following)`, kept per agent while neither its follows nor the store's authors
        change (follows are only ever added, so their count tells)."""
        retriever = self.retriever
        key = (len(following), retriever.author_count)
        kept = self._codes_by_agent.get(agent_id)
        if kept is None or kept[0] != key:
            kept = (key, retriever.author_codes_of(following))
            self._codes_by_agent[agent_id] = kept
        return kept[1]

    def similarities(self, view: AgentView, rows: np.ndarray) -> np.ndarray:
        """Exact similarity (1 + cos)/2 of the agent's interests to posts, from the store's vectors."""
        return self.retriever.interest_similarities(view.interests, rows)

    def visible(self, view: AgentView, rows: np.ndarray, now: datetime) -> np.ndarray:
        """Rows not excluded for the agent and not from the future."""
        rows = np.asarray(rows, dtype=np.int64)
        keep = ~in_sorted(rows, view.excluded_rows)
        keep &= self.retriever.timestamps_us[rows] <= epoch_microseconds(now)
        return rows[keep]

    def followed_author(self, view: AgentView, rows: np.ndarray) -> np.ndarray:
        """Mask of rows whose author the agent follows."""
        return in_sorted(self.retriever.author_codes[np.asarray(rows, dtype=np.int64)], view.following_codes)

    def network_flags(self, view: AgentView, rows: np.ndarray) -> tuple[np.ndarray, list[str | None]]:
        """In-network (author followed, or reshared by a followee) and the resharer where that applies."""
        followed = self.followed_author(view, rows)
        via = [None if f else view.reshared.get(int(row)) for f, row in zip(followed, rows)]
        flags = followed | np.array([v is not None for v in via], dtype=bool)
        return flags, via

    def agent_rng(self, agent_id: str, now: datetime) -> np.random.Generator:
        """A generator keyed by (ranker seed, agent, time): the same draws whatever the call order."""
        key = (zlib.crc32(agent_id.encode("utf-8")), epoch_microseconds(now) // 1_000_000)
        return np.random.default_rng(np.random.SeedSequence(self._entropy, spawn_key=key))

    def candidates(
        self,
        view: AgentView,
        rows: np.ndarray,
        base: np.ndarray,
        final: np.ndarray,
        sources: Sequence[str],
        components: Mapping[str, np.ndarray],
        in_network: np.ndarray | None = None,
        via: Sequence[str | None] | None = None,
    ) -> list[RankedCandidate]:
        """RankedCandidates for `rows` in the given order (the caller sorts and truncates)."""
        if in_network is None or via is None:
            in_network, via = self.network_flags(view, rows)
        posts = self.retriever.posts
        names = list(components)
        columns = [np.asarray(components[name], dtype=np.float64).tolist() for name in names]
        parts = [dict(zip(names, values)) for values in zip(*columns)] if names else [{} for _ in range(len(rows))]
        return [
            RankedCandidate(posts[row], b, f, n, source, part, row, v)
            for row, b, f, n, source, part, v in zip(
                np.asarray(rows, dtype=np.int64).tolist(),
                np.asarray(base, dtype=np.float64).tolist(),
                np.asarray(final, dtype=np.float64).tolist(),
                np.asarray(in_network, dtype=bool).tolist(),
                sources,
                parts,
                via,
            )
        ]
