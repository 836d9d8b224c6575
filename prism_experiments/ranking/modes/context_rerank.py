"""context_rerank: the second-pass rerank (REQ-RERANK-1 ... REQ-RERANK-6) of similarity candidates.

1. `candidate_limit` candidates by similarity to the agent's interests (one batched query);
2. final = base (similarity) + boost (generic, clamped) + archetype_boost (clamped);
3. resort by final, take feed_size; `enable_rerank: false` keeps the similarity order;
4. `debug: true` records base, boosts, final and rank movement of sampled feeds (`debug_records()`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from prism_experiments.agents import ARCHETYPES, AgentsConfig
from prism_experiments.domain import epoch_microseconds
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rerank_boosts import (
    PostText,
    archetype_boost,
    bias_matrix,
    dominant_archetype,
    generic_boost,
    has_keyword,
    interest_hashtags,
    post_text,
)
from prism_experiments.ranking.rescoring import descending_order
from prism_experiments.ranking.sourcing import nearest_visible

if TYPE_CHECKING:
    from prism_experiments.agents import SocialAgent


class ContextRerankConfig(ModeConfig):
    """REQ-RERANK-5: second-pass rerank, final = similarity + clamped generic boost + archetype boost."""

    mode: Literal["context_rerank"] = "context_rerank"
    #: REQ-RERANK-1: on by default; false returns similarity order
    enable_rerank: bool = True
    #: REQ-RERANK-1: 60 candidates pulled by similarity before the rerank
    #: (must be >= rag.feed_size)
    candidate_limit: int = Field(default=60, ge=1)
    #: REQ-RERANK-2 +0.10 -> the post's topic is the agent's primary interest
    primary_interest_boost: float = Field(default=0.10, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.06 -> the post's topic is one of the agent's other interests
    other_interest_boost: float = Field(default=0.06, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.12 -> the agent follows the author
    followed_author_boost: float = Field(default=0.12, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.15 -> the agent and the author follow each other
    #: (replaces, does not add to, followed_author_boost)
    mutual_follow_boost: float = Field(default=0.15, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.05 -> a hashtag of an interest's vocabulary
    hashtag_boost: float = Field(default=0.05, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.03 -> an interest's name in the text
    keyword_boost: float = Field(default=0.03, ge=0.0, le=1.0)
    #: REQ-RERANK-2 +0.06 -> the format is preferred by the agent's dominant archetype (conf/agents)
    preferred_format_boost: float = Field(default=0.06, ge=0.0, le=1.0)
    #: mirror of mode alignment (ours): subtracted when the dominant archetype dislikes the format
    disliked_format_penalty: float = Field(default=0.06, ge=0.0, le=1.0)
    #: REQ-RERANK-3: boost in [-0.1, +0.5]
    boost_min: float = Field(default=-0.1, ge=-1.0, le=0.0)
    #: REQ-RERANK-3: boost in [-0.1, +0.5]
    boost_max: float = Field(default=0.5, ge=0.0, le=1.0)
    #: REQ-RERANK-4: k = 0.08
    archetype_k: float = Field(default=0.08, ge=0.0, le=1.0)
    #: REQ-RERANK-4: 0.08, confidence = clamp(margin / this, 0, 1)
    archetype_confidence_min: float = Field(default=0.08, gt=0.0, le=1.0)
    #: REQ-RERANK-4: the archetype boost is at most 0.15
    archetype_boost_max: float = Field(default=0.15, ge=0.0, le=1.0)
    #: REQ-RERANK-6, off by default: record rank movements of sampled feeds (JSON artifact)
    debug: bool = False
    #: share of feeds recorded when debug is on, chosen by a hash of (agent, time) (ours)
    debug_sample_rate: float = Field(default=0.05, ge=0.0, le=1.0)


@dataclass(slots=True)
class ContextView(AgentView):
    """AgentView plus what the boosts need: the archetype weights."""

    archetype_weights: np.ndarray  # ARCHETYPES order
    dominant_archetype: str | None


def sampled_for_debug(agent_id: str, now: datetime, rate: float) -> bool:
    """Whether the feed of (agent, time) is recorded: a hash, so call order and batching do not matter."""
    key = f"{agent_id}@{epoch_microseconds(now)}".encode()
    return zlib.crc32(key) / 2**32 < rate


@register_mode
class ContextRerankRanker(Ranker[ContextRerankConfig]):
    """Similarity candidates nudged by context: interests, follows, hashtags, keywords, formats, archetypes."""

    config_model = ContextRerankConfig

    def __init__(self, config: ContextRerankConfig, context: RankerInputs) -> None:
        super().__init__(config, context)
        limit = config.candidate_limit
        if limit < self.feed_size:
            raise ValueError(f"ranking.candidate_limit: must be >= rag.feed_size ({self.feed_size}), got {limit}")
        self.agents_config = context.agents if context.agents is not None else AgentsConfig()
        table = self.agents_config.format_archetype_bias
        self._bias_rows = dict(zip(table, bias_matrix(list(table), table, ARCHETYPES)))
        self._no_bias = np.zeros(len(ARCHETYPES), dtype=bool)
        self._texts: dict[int, PostText] = {}  # row -> parsed text; posts' texts never change
        self._debug: list[dict[str, Any]] = []

    def debug_records(self) -> list[dict[str, Any]]:
        """The recorded feeds (empty unless `context_rerank.debug`), in the order they were served."""
        return list(self._debug)

    def _view(self, agent: SocialAgent, exclude: Iterable[str]) -> ContextView:
        view = super()._view(agent, exclude)
        return ContextView(
            **{f.name: getattr(view, f.name) for f in fields(AgentView)},
            archetype_weights=np.asarray(agent.archetype_vector(), dtype=np.float64),
            dominant_archetype=dominant_archetype(agent.archetype_weights),
        )

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        limit = self.config.candidate_limit
        queries = np.stack([view.interest_vector for view in views])
        nearest = nearest_visible(
            self.retriever,
            queries,
            limit,
            keep=lambda index, rows: self.visible(views[index], rows, now),
            first_fetch=limit + self.feed_size,
        )
        return [
            self._rank_one(view, rows, similarity, now)  # type: ignore[arg-type]
            for view, (rows, similarity) in zip(views, nearest)
        ]

    def _text(self, row: int) -> PostText:
        text = self._texts.get(row)
        if text is None:
            text = self._texts[row] = post_text(self.retriever.posts[row].text)
        return text

    def boosts(self, view: ContextView, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(generic boost, archetype boost) of each candidate for the agent."""
        cfg = self.config
        posts = [self.retriever.posts[row] for row in rows]
        topics = [post.topic for post in posts]
        primary = view.interests[0]
        followed = np.array([post.author_id in view.following for post in posts], dtype=bool)
        mutual = followed & np.array(
            [self.graph.is_following(post.author_id, view.agent_id) for post in posts], dtype=bool
        )
        tags = interest_hashtags(view.interests)
        texts = [self._text(int(row)) for row in rows]
        preferred = set(self.agents_config.archetype_preferred_formats.get(view.dominant_archetype or "", ()))
        disliked = set(self.agents_config.archetype_disliked_formats.get(view.dominant_archetype or "", ()))
        formats = [post.format for post in posts]
        boost = generic_boost(
            primary_topic=np.array([t == primary for t in topics], dtype=bool),
            other_topic=np.array([t is not None and t != primary and t in view.interests for t in topics], dtype=bool),
            followed=followed,
            mutual=mutual,
            hashtag=np.array([not text.hashtags.isdisjoint(tags) for text in texts], dtype=bool),
            keyword=np.array([has_keyword(text, view.interests) for text in texts], dtype=bool),
            preferred_format=np.array([f in preferred for f in formats], dtype=bool),
            disliked_format=np.array([f in disliked for f in formats], dtype=bool),
            config=cfg,
        )
        bias = np.array([self._bias_rows.get(f, self._no_bias) for f in formats], dtype=bool)
        archetype = archetype_boost(
            view.archetype_weights,
            bias.reshape(len(rows), len(ARCHETYPES)),
            k=cfg.archetype_k,
            confidence_min=cfg.archetype_confidence_min,
            max_boost=cfg.archetype_boost_max,
        )
        return boost, archetype

    def _rank_one(
        self, view: ContextView, rows: np.ndarray, similarity: np.ndarray, now: datetime
    ) -> list[RankedCandidate]:
        cfg = self.config
        by_similarity = descending_order(similarity, rows)
        rows, similarity = rows[by_similarity], similarity[by_similarity]
        if cfg.enable_rerank and len(rows):
            boost, archetype = self.boosts(view, rows)
        else:
            boost, archetype = np.zeros(len(rows)), np.zeros(len(rows))
        final = similarity + boost + archetype
        # ties keep the similarity order, so with no boosts the feed is exactly the similarity order
        order = descending_order(final, np.arange(len(rows)))[: self.feed_size]
        if cfg.debug and sampled_for_debug(view.agent_id, now, cfg.debug_sample_rate):
            self._debug.append(self._record(view, now, rows, similarity, boost, archetype, final, order))
        return self.candidates(
            view,
            rows[order],
            similarity[order],
            final[order],
            ["similarity"] * len(order),
            {"similarity": similarity[order], "boost": boost[order], "archetype_boost": archetype[order]},
        )

    def _record(
        self,
        view: AgentView,
        now: datetime,
        rows: np.ndarray,
        base: np.ndarray,
        boost: np.ndarray,
        archetype: np.ndarray,
        final: np.ndarray,
        order: np.ndarray,
    ) -> dict[str, Any]:
        """The debug payload for one feed (REQ-RERANK-6); ranks are 1-based, movement > 0 means moved up."""
        posts = self.retriever.posts
        items = [
            {
                "post_id": posts[int(rows[i])].id,
                "base": float(base[i]),
                "boost": float(boost[i]),
                "archetype_boost": float(archetype[i]),
                "final": float(final[i]),
                "similarity_rank": int(i) + 1,
                "final_rank": position + 1,
                "movement": int(i) - position,
            }
            for position, i in enumerate(order)
        ]
        return {"agent_id": view.agent_id, "now": now.isoformat(), "items": items}
