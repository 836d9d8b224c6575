"""Who decides what an agent does with its feed: self-registering deciders behind one interface, as ranking modes
are (`rules`, `llm`, `hybrid`; docs/llm.md "Adding a decider")."""

from typing import TYPE_CHECKING

from prism_experiments.deciders.base import (
    BaseDeciderConfig,
    Decider,
    DeciderInputs,
    Decisions,
    Impressions,
    StepActions,
)
from prism_experiments.deciders.config import DeciderConfig, DecidingAgentsConfig, decider_config
from prism_experiments.deciders.kinds.hybrid import HybridDecider, HybridDeciderConfig, hybrid_llm_mask
from prism_experiments.deciders.kinds.llm import LLMDecider, LLMDeciderConfig, ModelDecider
from prism_experiments.deciders.kinds.rules import RulesDecider, RulesDeciderConfig, rule_decisions
from prism_experiments.deciders.registry import DECIDERS, build_decider, config_models
from prism_experiments.deprecation import renamed

__all__ = [
    "DECIDERS",
    "BaseDeciderConfig",
    "Decider",
    "DeciderConfig",
    "DeciderInputs",
    "DecidingAgentsConfig",
    "Decisions",
    "HybridDecider",
    "HybridDeciderConfig",
    "Impressions",
    "LLMDecider",
    "LLMDeciderConfig",
    "ModelDecider",
    "RulesDecider",
    "RulesDeciderConfig",
    "StepActions",
    "build_decider",
    "config_models",
    "decider_config",
    "hybrid_llm_mask",
    "rule_decisions",
]


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"DeciderContext": DeciderInputs})
