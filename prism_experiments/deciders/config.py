"""DeciderConfig: the discriminated union, on `kind`, of every registered decider's config model; and the agents
group's model, the population plus who decides.

Each decider is a module of `deciders/kinds/` that declares its own model and registers itself when that package is
imported (as ranking modes do), so `agents.decider.kind` picks the model and every other key is validated by that model
alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import Field

import prism_experiments.deciders.kinds  # noqa: F401  (registers every decider)
from prism_experiments.agents import AgentsConfig
from prism_experiments.deciders.base import BaseDeciderConfig
from prism_experiments.deciders.registry import DECIDERS, DEFAULT_KIND

if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    DeciderConfig: TypeAlias = BaseDeciderConfig
else:
    DeciderConfig = DECIDERS.union()


def decider_config(kind: str = DEFAULT_KIND, **fields: Any) -> BaseDeciderConfig:
    """The validated config of `kind` with `fields` set (ValueError naming agents.decider.kind if unknown)."""
    return DECIDERS.validate(kind, **fields)


class DecidingAgentsConfig(AgentsConfig):
    """The agents group: the population and its rule model (`AgentsConfig`), plus who decides (`decider`)."""

    #: who decides what an agent does with its feed: rules (the behaviour model), llm (every agent asks a model),
    #: hybrid (a seeded share asks the model); `agents/decider=<kind>`, docs/llm.md
    decider: DeciderConfig = Field(default_factory=decider_config)
