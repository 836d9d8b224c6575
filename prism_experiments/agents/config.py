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
    """Coefficients of the rule-based behaviour model (DESIGN.md, "Agent behaviour")."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    look_top: float = Field(default=0.95, ge=0.0, le=1.0)
    attention_decay: float = Field(default=0.85, gt=0.0, le=1.0)
    like: EngagementCoefficients = Field(default_factory=_like)
    reshare: EngagementCoefficients = Field(default_factory=_reshare)
    reply: EngagementCoefficients = Field(default_factory=_reply)
    follow_probability: float = Field(default=0.1, ge=0.0, le=1.0)
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
        raise ValueError(
            f"{field}: keys must be exactly {', '.join(keys)} (missing {missing}, unknown {unknown})"
        )
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

    n_agents: int = Field(default=200, ge=1)
    interest_count_weights: tuple[float, float, float] = (0.35, 0.40, 0.25)
    topic_popularity_exponent: float = Field(default=0.8, ge=0.0)
    activity_median: float = Field(default=0.1, gt=0.0, le=1.0)
    activity_sigma: float = Field(default=1.0, ge=0.0)
    activity_min: float = Field(default=0.01, ge=0.0, le=1.0)
    activity_max: float = Field(default=1.0, ge=0.0, le=1.0)
    post_rate_alpha: float = Field(default=0.8, gt=0.0)
    post_rate_beta: float = Field(default=4.0, gt=0.0)
    propensity_sigma: float = Field(default=0.5, ge=0.0)
    propensity_correlation: float = Field(default=0.5, ge=0.0, le=1.0)
    archetype_concentration: float = Field(default=0.5, gt=0.0)
    format_archetype_bias: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_FORMAT_ARCHETYPE_BIAS.items()}
    )
    archetype_preferred_formats: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ARCHETYPE_PREFERRED_FORMATS.items()}
    )
    archetype_disliked_formats: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ARCHETYPE_DISLIKED_FORMATS.items()}
    )
    behaviour: BehaviourConfig = Field(default_factory=BehaviourConfig)

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
    def _consistent(self) -> "AgentsConfig":
        if self.activity_min > self.activity_max:
            raise ValueError(
                f"activity_min: must be <= activity_max ({self.activity_max}), got {self.activity_min}"
            )
        for archetype in ARCHETYPES:
            both = set(self.archetype_preferred_formats[archetype]) & set(self.archetype_disliked_formats[archetype])
            if both:
                raise ValueError(
                    f"archetype_disliked_formats.{archetype}: {sorted(both)} also listed as preferred"
                )
        return self

    def interest_count_probabilities(self) -> tuple[float, float, float]:
        """`interest_count_weights` normalised to sum to 1."""
        total = sum(self.interest_count_weights)
        a, b, c = (w / total for w in self.interest_count_weights)
        return (a, b, c)
