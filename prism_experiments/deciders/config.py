"""DeciderConfig: the discriminated union, on `kind`, of every registered decider's config model; and the agents
group's model, the population plus who decides.

Each decider is a module of `deciders/kinds/` that declares its own model and registers itself when that package is
imported (as ranking modes do), so `agents.decider.kind` picks the model and every other key is validated by that model
alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from pydantic import Field

import prism_experiments.deciders.kinds  # noqa: F401  (registers every decider)
from prism_experiments.agents import AgentsConfig
from prism_experiments.deciders.base import BaseDeciderConfig
from prism_experiments.deciders.registry import DECIDERS

if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    DeciderConfig: TypeAlias = BaseDeciderConfig
else:
    DeciderConfig = DECIDERS.union()


#: decider_config(kind=DEFAULT_KIND, **fields): the validated config of a decider (ValueError naming
#: agents.decider.kind if unknown); the registry's own `validate`
decider_config = DECIDERS.validate


class DecidingAgentsConfig(AgentsConfig):
    """The agents group: the population and its rule model (`AgentsConfig`), plus who decides (`decider`)."""

    #: who decides what an agent does with its feed: rules (the behaviour model), llm (every agent asks a model),
    #: hybrid (a seeded share asks the model); `agents/decider=<kind>`, docs/llm.md
    decider: DeciderConfig = Field(default_factory=decider_config)
