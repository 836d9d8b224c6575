"""DeciderConfig: the discriminated union, on `kind`, of every registered decider's config model; and the agents
group's model, the population plus who decides.

Each decider module declares its own model (`deciders/rules.py`, `llm.py`, `hybrid.py`); importing them here registers
them, so `agents.decider.kind` picks the model and every other key is validated by that model alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import Discriminator, Field, Tag

# importing a decider's module registers it
import prism_experiments.deciders.hybrid
import prism_experiments.deciders.llm
import prism_experiments.deciders.rules  # noqa: F401  (registers the decider)
from prism_experiments.agents import AgentsConfig
from prism_experiments.deciders.base import BaseDeciderConfig
from prism_experiments.deciders.registry import config_models

#: the kind of a `decider` mapping that leaves `kind` out, and of `conf/agents/default.yaml`'s default
DEFAULT_KIND = "rules"


def kind_of(value: Any) -> Any:
    """The discriminator: a mapping's `kind` (DEFAULT_KIND when absent) or a config's `kind`."""
    if isinstance(value, dict):
        return value.get("kind", DEFAULT_KIND)
    return getattr(value, "kind", None)


#: every registered decider's config model
if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    DeciderConfig: TypeAlias = BaseDeciderConfig
else:
    DeciderConfig = Annotated[
        Union[tuple(Annotated[model, Tag(kind)] for kind, model in config_models().items())],  # noqa: UP007  (a runtime tuple)
        Discriminator(kind_of),
    ]


def decider_config(kind: str = DEFAULT_KIND, **fields: Any) -> BaseDeciderConfig:
    """The validated config of `kind` with `fields` set (ValueError naming agents.decider.kind if unknown)."""
    models = config_models()
    if kind not in models:
        raise ValueError(f"agents.decider.kind: unknown kind {kind!r}; registered: {', '.join(models)}")
    return models[kind].model_validate({"kind": kind, **fields})


class DecidingAgentsConfig(AgentsConfig):
    """The agents group: the population and its rule model (`AgentsConfig`), plus who decides (`decider`)."""

    #: who decides what an agent does with its feed: rules (the behaviour model), llm (every agent asks a model),
    #: hybrid (a seeded share asks the model); `agents/decider=<kind>`, docs/llm.md
    decider: DeciderConfig = Field(default_factory=decider_config)
