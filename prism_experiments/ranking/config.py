"""RankingConfig: the mode and every knob of every mode, validated in one place.

The flat fields are seed 000's (x_algo) and the baselines'; seeds 002-004 each get a nested
sub-model, so `conf/ranking/<mode>.yaml` mirrors one shape and every run logs the same params.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Every mode the registry knows; `build_ranker` and the config validation share this list.
KNOWN_MODES: tuple[str, ...] = (
    "x_algo", "preference", "random", "chronological", "engagement_recency", "pooled_boost", "context_rerank",
)


class EngagementRecencyConfig(BaseModel):
    """Seed 002 ("winning DNA"): engagement score x exponential recency decay."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: performance_score = like_weight*likes + reshare_weight*reshares + reply_weight*replies
    #: (seed 002 names performance_score without its parts; equal weights are our default)
    like_weight: float = Field(default=1.0, ge=0.0)
    reshare_weight: float = Field(default=1.0, ge=0.0)
    reply_weight: float = Field(default=1.0, ge=0.0)
    #: seed 002 RECENCY_HALF_LIFE_DAYS = 14.0: decay = exp(-0.693 * age_days / half_life)
    recency_half_life_days: float = Field(default=14.0, gt=0.0)
    #: seed 002 MIN_ENGAGEMENT_SCORE = 0.1: candidates need engagement_score >= this
    min_engagement_score: float = Field(default=0.1, ge=0.0, le=1.0)
    #: seed 002 "Fetch up to 50 candidates": the most recent qualifying posts
    candidate_limit: int = Field(default=50, ge=1)
    #: seed 002 COLD_START_WEIGHT = 0.5: every score when max performance is 0, and the
    #: weight of fallback / backfill posts
    cold_start_weight: float = Field(default=0.5, ge=0.0, le=1.0)


class PooledBoostConfig(BaseModel):
    """Seed 003: in-network (priority) and out-of-network (specific) pools in one global ranking.

    Pool sizes are the flat `in_network_limit` / `out_of_network_limit` (the sourcing is x_algo's).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: seed 003: priority items get min(score_ceiling, similarity + 0.1)
    priority_boost: float = Field(default=0.1, ge=0.0, le=1.0)
    #: seed 003: `Math.min(1.0, chunk.similarity + 0.1)` ("ceiling protection")
    score_ceiling: float = Field(default=1.0, gt=0.0, le=1.0)
    #: seed 003 safety guarantee: at least 1 priority item if any is available (0 turns it off)
    min_priority_items: int = Field(default=1, ge=0, le=20)


class ContextRerankConfig(BaseModel):
    """Seed 004: second-pass rerank, final = similarity + clamped generic boost + archetype boost."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: seed 004 PERAZZI_ENABLE_RERANK = true; false returns similarity order
    enable_rerank: bool = True
    #: seed 004 PERAZZI_RERANK_CANDIDATE_LIMIT = 60: candidates pulled by similarity before the rerank
    candidate_limit: int = Field(default=60, ge=1)
    #: seed 004 "platform slug match" +0.10 -> the post's topic is the agent's primary interest
    primary_interest_boost: float = Field(default=0.10, ge=0.0, le=1.0)
    #: seed 004 "discipline overlap" +0.06 -> the post's topic is one of the agent's other interests
    other_interest_boost: float = Field(default=0.06, ge=0.0, le=1.0)
    #: seed 004 "entity alignment" +0.12 (low end) -> the agent follows the author
    followed_author_boost: float = Field(default=0.12, ge=0.0, le=1.0)
    #: seed 004 "entity alignment" +0.15 (high end) -> the agent and the author follow each other
    mutual_follow_boost: float = Field(default=0.15, ge=0.0, le=1.0)
    #: seed 004 "topic/tag overlap" +0.04-0.06 (we take 0.05) -> a hashtag of an interest's vocabulary
    hashtag_boost: float = Field(default=0.05, ge=0.0, le=1.0)
    #: seed 004 "keyword presence" +0.03-0.06 (we take 0.03) -> an interest's name in the text
    keyword_boost: float = Field(default=0.03, ge=0.0, le=1.0)
    #: seed 004 "mode alignment" +0.06 -> the format is preferred by the agent's dominant archetype
    preferred_format_boost: float = Field(default=0.06, ge=0.0, le=1.0)
    #: mirror of mode alignment (ours): subtracted when the dominant archetype dislikes the format
    disliked_format_penalty: float = Field(default=0.06, ge=0.0, le=1.0)
    #: seed 004 hard clamp: boost in [-0.1, +0.5]
    boost_min: float = Field(default=-0.1, ge=-1.0, le=0.0)
    boost_max: float = Field(default=0.5, ge=0.0, le=1.0)
    #: seed 004 PERAZZI_ARCHETYPE_BOOST_K = 0.08
    archetype_k: float = Field(default=0.08, ge=0.0, le=1.0)
    #: seed 004 PERAZZI_ARCHETYPE_CONFIDENCE_MIN = 0.08: confidence = clamp(margin / this, 0, 1)
    archetype_confidence_min: float = Field(default=0.08, gt=0.0, le=1.0)
    #: seed 004 "Clamp boost to <= 0.15"
    archetype_boost_max: float = Field(default=0.15, ge=0.0, le=1.0)
    #: seed 004 PERAZZI_ENABLE_RETRIEVAL_DEBUG = false: record rank movements of sampled feeds
    debug: bool = False
    #: share of feeds recorded when debug is on, chosen by a hash of (agent, time) (ours)
    debug_sample_rate: float = Field(default=0.05, ge=0.0, le=1.0)


class RankingConfig(BaseModel):
    """Scale factors and limits of seed 000's `RankingConfig`, the choice of mode, and one
    sub-model per mode from seeds 002-004."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "x_algo"
    #: seed 000: out-of-network candidates x 0.75
    out_of_network_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: seed 000: replies (parent_id set) x 0.75
    reply_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: seed 000: score *= max(floor, decay^occurrence)
    author_diversity_decay: float = Field(default=0.5, gt=0.0, le=1.0)
    author_diversity_floor: float = Field(default=0.25, ge=0.0, le=1.0)
    #: `seed`: max(floor, decay^k); `home_mixer`: (1 - floor) * decay^k + floor
    #: (twitter/the-algorithm, home-mixer DiversityDiscountProvider)
    author_diversity_formula: Literal["seed", "home_mixer"] = "seed"
    in_network_limit: int = Field(default=50, ge=1)
    out_of_network_limit: int = Field(default=50, ge=1)
    #: random and chronological: how far back "recent" reaches
    recent_window_hours: float = Field(default=24.0, gt=0.0)
    #: seed 002
    engagement_recency: EngagementRecencyConfig = Field(default_factory=EngagementRecencyConfig)
    #: seed 003
    pooled_boost: PooledBoostConfig = Field(default_factory=PooledBoostConfig)
    #: seed 004
    context_rerank: ContextRerankConfig = Field(default_factory=ContextRerankConfig)

    @field_validator("mode")
    @classmethod
    def _mode_is_known(cls, mode: str) -> str:
        if mode not in KNOWN_MODES:
            raise ValueError(f"unknown ranking mode {mode!r}; known modes: {', '.join(KNOWN_MODES)}")
        return mode
