"""The simulated reader (REQ-XALGO-7's `SocialAgent`, plus activity, propensities, archetypes)."""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prism_experiments.agents.archetypes import ARCHETYPES

MAX_INTERESTS = 3
_WEIGHT_SUM_TOLERANCE = 1e-6


def uniform_archetype_weights() -> dict[str, float]:
    return {archetype: 1.0 / len(ARCHETYPES) for archetype in ARCHETYPES}


class SocialAgent(BaseModel):
    """An agent. `following` is the initial follow set (REQ-XALGO-7); the live graph is the SocialGraph. A starting
    world's agents hold read-only views of its graph's starting rows there (`network.graph.FollowSet`), not copies.

    like_bias / reshare_bias / reply_bias are agent-level logit offsets (the agent's
    own engagement propensities, a random intercept per action).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str = Field(min_length=1)
    interests: list[str] = Field(min_length=1, max_length=MAX_INTERESTS)
    following: AbstractSet[str] = Field(default_factory=frozenset)
    activity: float = Field(default=0.1, ge=0.0, le=1.0)
    post_rate: float = Field(default=0.2, ge=0.0, le=1.0)
    like_bias: float = 0.0
    reshare_bias: float = 0.0
    reply_bias: float = 0.0
    archetype_weights: dict[str, float] = Field(default_factory=uniform_archetype_weights)
    #: left-right position in [-1, 1] (left negative); None: non-political, or a world without politics (REQ-POL-1)
    position: float | None = Field(default=None, ge=-1.0, le=1.0)

    @field_validator("interests")
    @classmethod
    def _distinct_topics(cls, value: list[str]) -> list[str]:
        if any(not topic for topic in value) or len(set(value)) != len(value):
            raise ValueError(f"interests: must be 1 to {MAX_INTERESTS} distinct non-empty topics, got {value}")
        return value

    @field_validator("archetype_weights")
    @classmethod
    def _archetype_distribution(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(ARCHETYPES))
        if unknown:
            raise ValueError(f"archetype_weights: unknown {unknown}; allowed: {', '.join(ARCHETYPES)}")
        if any(w < 0 or not math.isfinite(w) for w in value.values()):
            raise ValueError(f"archetype_weights: weights must be finite and >= 0, got {value}")
        total = sum(value.values())
        if abs(total - 1.0) > _WEIGHT_SUM_TOLERANCE:
            raise ValueError(f"archetype_weights: must sum to 1, got {total}")
        # Missing archetypes weigh 0; the full dict in ARCHETYPES order keeps vectors aligned.
        return {archetype: float(value.get(archetype, 0.0)) for archetype in ARCHETYPES}

    @model_validator(mode="after")
    def _share_complete_fields_set(self) -> SocialAgent:
        """An agent given every field (a generated population) holds the one shared set of field names instead of its
        own (728 bytes an agent, 0.7 GB at a million: docs/history/bench.md). Safe to share: setting a field adds its
        name to the set, already there."""
        if len(self.__pydantic_fields_set__) == len(_EVERY_FIELD):
            object.__setattr__(self, "__pydantic_fields_set__", _EVERY_FIELD)
        return self

    def archetype_vector(self) -> list[float]:
        """Weights in ARCHETYPES order."""
        return [self.archetype_weights[a] for a in ARCHETYPES]


#: every field's name: the fields set an agent given all of them shares (`SocialAgent._share_complete_fields_set`)
_EVERY_FIELD: set[str] = set(SocialAgent.model_fields)
