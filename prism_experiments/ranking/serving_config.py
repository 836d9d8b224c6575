"""The `serving` group: an optional stochastic policy over any mode's ranking, and the target policies to log for OPE.

Absent (`serving: null`, conf/serving/deterministic.yaml) is today's deterministic feed; docs/ope.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prism_experiments.ranking.config import RankingConfig
from prism_experiments.ranking.serving_policy import PolicySpec


class PolicyConfig(BaseModel):
    """A serving policy over the mode's top `serving.depth` candidates."""

    model_config = ConfigDict(extra="forbid")

    #: deterministic: the mode's order; softmax: Plackett-Luce over standardised scores / temperature;
    #: epsilon_greedy: per position the best remaining candidate, or with prob. epsilon a uniform remaining one
    policy: Literal["deterministic", "softmax", "epsilon_greedy"] = "softmax"
    #: softmax temperature tau, in units of the feed's score standard deviation (tau -> 0: the mode's order)
    temperature: float = Field(default=1.0, gt=0)
    #: epsilon_greedy's exploration probability per position
    epsilon: float = Field(default=0.1, ge=0, le=1)

    @property
    def spec(self) -> PolicySpec:
        """The policy with only the knob it reads set, so two configs of one policy compare equal."""
        return PolicySpec(
            self.policy,
            self.temperature if self.policy == "softmax" else 1.0,
            self.epsilon if self.policy == "epsilon_greedy" else 0.0,
        )


class TargetPolicyConfig(PolicyConfig):
    """A policy B whose propensities are logged beside the served policy A's, for off-policy evaluation."""

    #: the column suffix: exposures get `target_<name>`
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    #: B's ranking mode and knobs (a non-learning mode); null: the run's own ranking
    ranking: RankingConfig | None = None

    @model_validator(mode="after")
    def _not_learning(self) -> TargetPolicyConfig:
        if getattr(self.ranking, "predictor", None) == "learned":
            raise ValueError("ranking: a target's ranker must not learn (predictor: oracle)")
        return self


class ServingConfig(PolicyConfig):
    """The served policy A, how deep it samples, how its position propensities are estimated, and targets B."""

    #: how many of the mode's top candidates the policy samples the feed from (>= rag.feed_size)
    depth: int = Field(default=20, ge=1, le=200)
    #: seeded slates per feed that estimate P(post at position) (the item-position propensity)
    marginal_samples: int = Field(default=2000, ge=1, le=100_000)
    #: target policies B logged beside A (names unique)
    targets: list[TargetPolicyConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_targets(self) -> ServingConfig:
        names = [target.name for target in self.targets]
        if len(set(names)) != len(names):
            raise ValueError(f"targets: names must be unique, got {names}")
        return self
