"""The decider registry: each decider module registers its class (and through it, its config model)."""

from __future__ import annotations

from typing import TypeVar

from prism_experiments.deciders.base import BaseDeciderConfig, Decider, DeciderInputs
from prism_experiments.registries import ClassRegistry

#: the kind of a `decider` mapping that leaves `kind` out, and of `conf/agents/default.yaml`'s default
DEFAULT_KIND = "rules"
#: every decider (kind -> decider class, in registration order), filled by `register_decider` as the decider modules
#: are imported
DECIDERS: ClassRegistry[BaseDeciderConfig] = ClassRegistry("decider", "kind", "agents.decider.kind", DEFAULT_KIND)

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
