"""engagement_recency: engagement x recency-decay retrieval as a feed (REQ-RETRIEVAL-1).

1. performance = weighted likes + reshares + replies, read live from the store;
2. engagement_score = performance / max performance over the published posts (all 0.5 if the max is 0);
3. candidates: the `candidate_limit` most recent visible posts with engagement_score >= min_engagement_score;
4. retrieval_weight = engagement_score x exp(-0.693 x age_days / half_life); sort; take feed_size;
5. cold-start fallback: the newest visible posts, weight 0.5; a short feed is backfilled the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.domain import epoch_microseconds
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import descending_order
from prism_experiments.ranking.sourcing import newest_first

#: REQ-RETRIEVAL-4: exp(-0.693 * days / half_life); 0.693 is ln 2 to three digits, so a post loses half its
#: weight every `recency_half_life_days` (the sweepable knob) and 0.693 itself stays fixed.
DECAY_CONSTANT = 0.693
MICROSECONDS_PER_DAY = 86_400_000_000


class EngagementRecencyConfig(ModeConfig):
    """REQ-RETRIEVAL-1: engagement score x exponential recency decay."""

    mode: Literal["engagement_recency"] = "engagement_recency"
    #: performance_score = like_weight*likes + reshare_weight*reshares + reply_weight*replies
    #: (REQ-RETRIEVAL-2 leaves the parts' weights open; equal weights are ours)
    like_weight: float = Field(default=1.0, ge=0.0)
    #: see like_weight
    reshare_weight: float = Field(default=1.0, ge=0.0)
    #: see like_weight
    reply_weight: float = Field(default=1.0, ge=0.0)
    #: REQ-RETRIEVAL-4: half-life 14.0 days, decay = exp(-0.693 * age_days / half_life). The default
    #: corpus (<= 3 days old) + 48 hourly steps keep every decay >= 0.78: sweep e.g. 0.5 to make recency bite
    recency_half_life_days: float = Field(default=14.0, gt=0.0)
    #: REQ-RETRIEVAL-5 minimum engagement score 0.1: candidates need engagement_score >= this
    min_engagement_score: float = Field(default=0.1, ge=0.0, le=1.0)
    #: REQ-RETRIEVAL-5 up to 50 candidates: the most recent qualifying posts
    candidate_limit: int = Field(default=50, ge=1)
    #: REQ-RETRIEVAL-3 cold-start weight 0.5: every score when max performance is 0, and the
    #: weight of fallback / backfill posts
    cold_start_weight: float = Field(default=0.5, ge=0.0, le=1.0)


def performance_scores(
    likes: np.ndarray,
    reshares: np.ndarray,
    replies: np.ndarray,
    like_weight: float = 1.0,
    reshare_weight: float = 1.0,
    reply_weight: float = 1.0,
) -> np.ndarray:
    """The performance score of each post (REQ-RETRIEVAL-2): weighted likes + reshares + replies."""
    return (
        like_weight * np.asarray(likes, dtype=np.float64)
        + reshare_weight * np.asarray(reshares, dtype=np.float64)
        + reply_weight * np.asarray(replies, dtype=np.float64)
    )


def engagement_scores(performance: np.ndarray, cold_start_weight: float = 0.5) -> np.ndarray:
    """performance / max performance (REQ-RETRIEVAL-2); all `cold_start_weight` when the max is 0 (REQ-RETRIEVAL-3)."""
    performance = np.asarray(performance, dtype=np.float64)
    top = float(performance.max()) if performance.size else 0.0
    if top <= 0.0:
        return np.full(performance.shape, float(cold_start_weight))
    return performance / top


def recency_decay(age_days: np.ndarray, half_life_days: float) -> np.ndarray:
    """exp(-0.693 x age_days / half_life_days) (REQ-RETRIEVAL-4): 1 now, ~0.5 after one half-life."""
    return np.exp(-DECAY_CONSTANT * np.asarray(age_days, dtype=np.float64) / half_life_days)


@register_mode
class EngagementRecencyRanker(Ranker[EngagementRecencyConfig]):
    """Most engaging recent posts for everyone (minus what each agent may not see); REQ-RETRIEVAL-1.

    Components: final = engagement_score x recency_decay. Fallback and backfill posts carry
    engagement_score = cold_start_weight, recency_decay = 1 and cold_start = 1 (the spec's flat 0.5);
    every post has cold_start = 1 when no post has any engagement yet.
    """

    config_model = EngagementRecencyConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        cfg = self.config
        retriever = self.retriever
        now_us = epoch_microseconds(now)
        published = np.flatnonzero(retriever.timestamps_us <= now_us)
        posts = retriever.posts
        counters = np.array(
            [(posts[r].likes, posts[r].reshares, posts[r].replies) for r in published.tolist()], dtype=np.float64
        ).reshape(len(published), 3)
        performance = performance_scores(
            counters[:, 0], counters[:, 1], counters[:, 2], cfg.like_weight, cfg.reshare_weight, cfg.reply_weight
        )
        cold = performance.size == 0 or float(performance.max()) <= 0.0
        n = len(retriever)
        scores = np.zeros(n)
        scores[published] = engagement_scores(performance, cfg.cold_start_weight)
        decay = np.zeros(n)
        decay[published] = recency_decay(
            (now_us - retriever.timestamps_us[published]) / MICROSECONDS_PER_DAY, cfg.recency_half_life_days
        )
        newest = newest_first(retriever, published)
        qualified = newest[scores[newest] >= cfg.min_engagement_score]
        return [self._rank_one(view, now, qualified, newest, scores, decay, cold) for view in views]

    def _first_visible(
        self, view: AgentView, ordered: np.ndarray, k: int, now: datetime, taken: np.ndarray | None = None
    ) -> np.ndarray:
        """The first k rows of `ordered` the agent may see (and not in `taken`), in that order."""
        skip = len(view.excluded_rows) + (0 if taken is None else len(taken))
        rows = self.visible(view, ordered[: k + skip], now)
        if taken is not None and len(taken):
            rows = rows[~np.isin(rows, taken)]
        return rows[:k]

    def _rank_one(
        self,
        view: AgentView,
        now: datetime,
        qualified: np.ndarray,
        newest: np.ndarray,
        scores: np.ndarray,
        decay: np.ndarray,
        cold: bool,
    ) -> list[RankedCandidate]:
        cfg = self.config
        pool = self._first_visible(view, qualified, cfg.candidate_limit, now)
        weights = scores[pool] * decay[pool]
        order = descending_order(weights, pool)[: self.feed_size]
        ranked = pool[order]
        backfill = self._first_visible(view, newest, self.feed_size - len(ranked), now, taken=ranked)
        rows = np.concatenate([ranked, backfill]).astype(np.int64)
        is_backfill = np.arange(len(rows)) >= len(ranked)
        engagement = np.where(is_backfill, cfg.cold_start_weight, scores[rows])
        recency = np.where(is_backfill, 1.0, decay[rows])
        cold_start = (is_backfill | cold).astype(np.float64)
        similarity = self.similarities(view, rows)
        sources = ["backfill" if b else "recent" for b in is_backfill]
        return self.candidates(
            view,
            rows,
            similarity,
            engagement * recency,
            sources,
            {
                "similarity": similarity,
                "engagement_score": engagement,
                "recency_decay": recency,
                "cold_start": cold_start,
            },
        )
