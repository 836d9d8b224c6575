"""The decider registry: each decider module registers its class (and through it, its config model)."""

from __future__ import annotations

from typing import TypeVar

from prism_experiments.deciders.base import BaseDeciderConfig, Decider, DeciderInputs
from prism_experiments.llm.backend import DEFAULT_BACKEND
from prism_experiments.registries import ClassRegistry

#: the kind of a `decider` mapping that leaves `kind` out, and of `conf/agents/default.yaml`'s default
DEFAULT_KIND = "rules"
#: every decider (kind -> decider class, in registration order), filled by `register_decider` as the decider modules
#: are imported
#: (and each one's Hydra option `agents/decider=<kind>`; a decider that asks a model selects the default backend)
DECIDERS: ClassRegistry[BaseDeciderConfig] = ClassRegistry(
    "decider",
    "kind",
    "agents.decider.kind",
    DEFAULT_KIND,
    hydra_group="agents/decider",
    nested_choices=lambda model: {"llm": DEFAULT_BACKEND} if "llm" in model.model_fields else {},
)

DeciderT = TypeVar("DeciderT", bound=type)


def register_decider(cls: DeciderT) -> DeciderT:
    """Class decorator: register a decider under the kind its `config_model` declares."""
    return DECIDERS.register(cls)


def config_models() -> dict[str, type[BaseDeciderConfig]]:
    """kind -> its config model."""
    return DECIDERS.config_models()


def build_decider(config: BaseDeciderConfig, inputs: DeciderInputs) -> Decider:
    """The decider of `config.kind`, built from `config` and `inputs`."""
    decider: Decider = DECIDERS.class_for(config)(config, inputs)
    return decider
