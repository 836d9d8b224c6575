"""Validated configuration of the agent population and its behaviour (`conf/agents/`).

Defaults and their sources are documented in docs/model.md and conf/agents/default.yaml.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prism_experiments.agents.archetypes import (
    ARCHETYPES,
    DEFAULT_ARCHETYPE_DISLIKED_FORMATS,
    DEFAULT_ARCHETYPE_PREFERRED_FORMATS,
    DEFAULT_FORMAT_ARCHETYPE_BIAS,
    POST_FORMATS,
)
from prism_experiments.politics.config import PoliticsConfig


class EngagementCoefficients(BaseModel):
    """Logit-linear coefficients of one action (like, reshare or reply).

    logit p = intercept + w_similarity*similarity + w_media*has_media
              + w_social*log1p(likes) + w_in_network*in_network + w_format*format_affinity
              + the agent's own bias for the action.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    intercept: float
    w_similarity: float = Field(ge=0.0)
    w_media: float
    w_social: float
    w_in_network: float
    w_format: float


def _like() -> EngagementCoefficients:
    return EngagementCoefficients(
        intercept=-4.75, w_similarity=4.0, w_media=0.15, w_social=0.15, w_in_network=0.2, w_format=0.5
    )


def _reshare() -> EngagementCoefficients:
    return EngagementCoefficients(
        intercept=-6.5, w_similarity=4.0, w_media=0.7, w_social=0.2, w_in_network=0.3, w_format=0.5
    )


def _reply() -> EngagementCoefficients:
    return EngagementCoefficients(
        intercept=-6.1, w_similarity=3.0, w_media=0.1, w_social=0.1, w_in_network=0.5, w_format=0.3
    )


class BehaviourConfig(BaseModel):
    """Coefficients of the rule-based behaviour model (docs/model.md, "Agent behaviour")."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: P(look at feed position 0)
    look_top: float = Field(default=0.95, ge=0.0, le=1.0)
    #: P(look at i+1) / P(look at i); geometric examination (cascade model, Craswell et al. 2008):
    #: about 5 of 10 posts looked at
    attention_decay: float = Field(default=0.85, gt=0.0, le=1.0)
    #: logit P(action) = intercept + w_similarity*similarity + w_media*has_media + w_social*log1p(likes)
    #: + w_in_network*in_network + w_format*format_affinity + agent bias. Calibrated at similarity 0.6,
    #: no media, 2 likes, out-of-network, average agent: like 10.1%, reshare 2.0%, reply 1.5% of
    #: looked-at posts (calibrated assumption, docs/model.md). Media lifts likes a little (odds x1.16)...
    like: EngagementCoefficients = Field(default_factory=_like)
    #: ...and reshares much more (w_media 0.7, odds x2.0): visual virality hypothesis
    #: (Buffer: +150% retweets vs +89% favourites)
    reshare: EngagementCoefficients = Field(default_factory=_reshare)
    #: w_in_network 0.5: conversation happens mostly with accounts one follows
    reply: EngagementCoefficients = Field(default_factory=_reply)
    #: P(follow the author of an out-of-network post the agent engaged with); calibrated assumption
    follow_probability: float = Field(default=0.1, ge=0.0, le=1.0)
    #: P(a newly authored post carries media); calibrated assumption
    media_post_probability: float = Field(default=0.3, ge=0.0, le=1.0)


def _check_table(
    field: str,
    table: dict[str, list[str]],
    keys: tuple[str, ...],
    values: tuple[str, ...],
    min_len: int,
    max_len: int,
) -> dict[str, list[str]]:
    missing = [k for k in keys if k not in table]
    unknown = [k for k in table if k not in keys]
    if missing or unknown:
        raise ValueError(f"{field}: keys must be exactly {', '.join(keys)} (missing {missing}, unknown {unknown})")
    for key, entries in table.items():
        bad = [v for v in entries if v not in values]
        if bad:
            raise ValueError(f"{field}.{key}: unknown {bad}; allowed: {', '.join(values)}")
        if not min_len <= len(entries) <= max_len or len(set(entries)) != len(entries):
            raise ValueError(f"{field}.{key}: must list {min_len} to {max_len} distinct entries, got {entries}")
    return {k: list(table[k]) for k in keys}


class AgentsConfig(BaseModel):
    """The population: size, interests, activity, propensities, archetypes, behaviour."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: population size; 200 runs a sweep in minutes on a laptop
    n_agents: int = Field(default=200, ge=1)
    #: relative weights of holding 1, 2, 3 topics (>= 0, sum > 0); calibrated assumption
    interest_count_weights: tuple[float, float, float] = (0.35, 0.40, 0.25)
    #: Zipf exponent s of topic popularity, p_k ∝ (k+1)^-s in the order topics are given
    #: (0 = uniform); popularity is heavy-tailed (Weng et al. 2012)
    topic_popularity_exponent: float = Field(default=0.8, ge=0.0)
    #: median P(active in a step); about 1 in 10 hourly steps
    activity_median: float = Field(default=0.1, gt=0.0, le=1.0)
    #: lognormal sigma of activity across agents; heavy tail: 90-9-1 participation
    #: (Nielsen 2006), skewed activity (Muchnik et al. 2013)
    activity_sigma: float = Field(default=1.0, ge=0.0)
    #: lower clip of activity; even lurkers show up now and then
    activity_min: float = Field(default=0.01, ge=0.0, le=1.0)
    #: upper clip of activity, >= activity_min
    activity_max: float = Field(default=1.0, ge=0.0, le=1.0)
    #: 0: fixed activity. Else P(active) = activity * (mean engagements per visit / their calibration-point
    #: value) ** activity_response, clipped to [activity_min, activity_max]: visits follow the feed's reward
    #: (Niv et al. 2007; Lindström et al. 2021; 0.5 is Niv's optimum); docs/model.md, "Activity that responds"
    activity_response: float = Field(default=0.0, ge=0.0, le=5.0)
    #: Beta(alpha, beta) of P(author a post | active); mean ~0.17, right-skewed: a minority
    #: writes most posts (Pew 2019: top 10% of US adult users wrote 80% of tweets)
    post_rate_alpha: float = Field(default=0.8, gt=0.0)
    post_rate_beta: float = Field(default=4.0, gt=0.0)
    #: null: replies follow activity and the post alone. Else an agent's reply odds scale as
    #: (post_rate / mean post rate)^elasticity: the talkative write replies as they write posts (Pew 2019
    #: counts every tweet, replies included, in the top decile's 80%); docs/model.md, "Authorship"
    reply_post_rate_elasticity: float | None = Field(default=None, ge=0.0, le=5.0)
    #: sd of each agent's like/reshare/reply logit offset; random intercept per agent
    propensity_sigma: float = Field(default=0.5, ge=0.0)
    #: correlation between an agent's three offsets; heavy engagers engage in every way
    propensity_correlation: float = Field(default=0.5, ge=0.0, le=1.0)
    #: symmetric Dirichlet alpha of archetype weights; < 1 = most agents lean on one or two archetypes
    archetype_concentration: float = Field(default=0.5, gt=0.0)
    #: REQ-RERANK-4's archetype boost tags content with the audience archetypes that favour it; here the
    #: content tag is the post format (REQ-RETRIEVAL-6), each listing 1-3 archetypes. Analysts like structure and
    #: argument, storytellers narrative and transformation, skeptics challenges to received wisdom,
    #: enthusiasts conversation and personal stories, pragmatists actionable advice.
    format_archetype_bias: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_FORMAT_ARCHETYPE_BIAS.items()}
    )
    #: formats each archetype engages with more (+1 format affinity), 1-2 each, consistent with
    #: format_archetype_bias (a preferred format lists the archetype)
    archetype_preferred_formats: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ARCHETYPE_PREFERRED_FORMATS.items()}
    )
    #: formats each archetype engages with less (-1): analysts sweeping generalisations, storytellers
    #: bare structure, skeptics too-good-to-be-true transformations, enthusiasts negativity, pragmatists
    #: stories without an actionable point
    archetype_disliked_formats: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ARCHETYPE_DISLIKED_FORMATS.items()}
    )
    behaviour: BehaviourConfig = Field(default_factory=BehaviourConfig)
    #: politics in the world (docs/politics.md, REQ-POL-1..7); off by default: every existing world is unchanged
    politics: PoliticsConfig = Field(default_factory=PoliticsConfig)

    @field_validator("interest_count_weights")
    @classmethod
    def _weights_are_a_distribution(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if any(w < 0 for w in value) or sum(value) <= 0:
            raise ValueError(
                f"interest_count_weights: must be 3 non-negative weights (for 1, 2, 3 interests) "
                f"with a positive sum, got {list(value)}"
            )
        return value

    @field_validator("format_archetype_bias")
    @classmethod
    def _bias_table(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return _check_table("format_archetype_bias", value, POST_FORMATS, ARCHETYPES, 1, 3)

    @field_validator("archetype_preferred_formats")
    @classmethod
    def _preferred_table(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return _check_table("archetype_preferred_formats", value, ARCHETYPES, POST_FORMATS, 1, 2)

    @field_validator("archetype_disliked_formats")
    @classmethod
    def _disliked_table(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return _check_table("archetype_disliked_formats", value, ARCHETYPES, POST_FORMATS, 1, 2)

    @model_validator(mode="after")
    def _consistent(self) -> AgentsConfig:
        if self.activity_min > self.activity_max:
            raise ValueError(f"activity_min: must be <= activity_max ({self.activity_max}), got {self.activity_min}")
        for archetype in ARCHETYPES:
            both = set(self.archetype_preferred_formats[archetype]) & set(self.archetype_disliked_formats[archetype])
            if both:
                raise ValueError(f"archetype_disliked_formats.{archetype}: {sorted(both)} also listed as preferred")
        return self

    def interest_count_probabilities(self) -> tuple[float, float, float]:
        """`interest_count_weights` normalised to sum to 1."""
        total = sum(self.interest_count_weights)
        a, b, c = (w / total for w in self.interest_count_weights)
        return (a, b, c)
