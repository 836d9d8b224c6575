"""The hybrid decider: a seeded share of agents asks the model, the rest use rules (docs/llm.md)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.deciders.base import DeciderInputs
from prism_experiments.deciders.kinds.llm import ModelDecider, ModelDeciderConfig
from prism_experiments.deciders.registry import register_decider
from prism_experiments.random_streams import Stream, keyed_uniforms


class HybridDeciderConfig(ModelDeciderConfig):
    """A seeded share `fraction` of the agents asks the model; the others decide by rules."""

    kind: Literal["hybrid"] = "hybrid"
    #: share of agents that decide by LLM, drawn once per seed (stream DECIDER): the same set in every condition
    fraction: float = Field(default=0.1, ge=0.0, le=1.0)


def hybrid_llm_mask(seed: int, n_agents: int, fraction: float) -> np.ndarray:
    """Which agents decide by LLM: a keyed uniform per agent below `fraction` (the same in every condition)."""
    return keyed_uniforms(seed, Stream.DECIDER, 0, np.arange(n_agents), np.zeros(1))[:, 0] < fraction


@register_decider
class HybridDecider(ModelDecider):
    """Rules for most agents, the model for a seeded share."""

    config_model = HybridDeciderConfig

    def __init__(self, config: HybridDeciderConfig, inputs: DeciderInputs) -> None:
        super().__init__(config, inputs, hybrid_llm_mask(inputs.seed, len(inputs.population), config.fraction))
