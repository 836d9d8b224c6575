"""DeciderConfig: the discriminated union, on `kind`, of every registered decider's config model; and the agents
group's model, the population plus who decides.

Each decider module declares its own model (`deciders/rules.py`, `llm.py`, `hybrid.py`); importing them here registers
them, so `agents.decider.kind` picks the model and every other key is validated by that model alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import Field

# importing a decider's module registers it
import prism_experiments.deciders.hybrid
import prism_experiments.deciders.llm
import prism_experiments.deciders.rules  # noqa: F401  (registers the decider)
from prism_experiments.agents import AgentsConfig
from prism_experiments.deciders.base import BaseDeciderConfig
from prism_experiments.deciders.registry import DEFAULT_KIND, KINDS

if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    DeciderConfig: TypeAlias = BaseDeciderConfig
else:
    DeciderConfig = KINDS.union()


def decider_config(kind: str = DEFAULT_KIND, **fields: Any) -> BaseDeciderConfig:
    """The validated config of `kind` with `fields` set (ValueError naming agents.decider.kind if unknown)."""
    return KINDS.validate(kind, **fields)


class DecidingAgentsConfig(AgentsConfig):
    """The agents group: the population and its rule model (`AgentsConfig`), plus who decides (`decider`)."""

    #: who decides what an agent does with its feed: rules (the behaviour model), llm (every agent asks a model),
    #: hybrid (a seeded share asks the model); `agents/decider=<kind>`, docs/llm.md
    decider: DeciderConfig = Field(default_factory=decider_config)
