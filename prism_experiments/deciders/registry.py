"""The decider registry: each decider module registers its class (and through it, its config model)."""

from __future__ import annotations

from typing import Any, TypeVar

from prism_experiments.deciders.base import BaseDeciderConfig, Decider, DeciderContext

#: kind -> decider class, in registration order; filled by `register_decider` as the decider modules are imported
DECIDERS: dict[str, Any] = {}

DeciderT = TypeVar("DeciderT", bound=type)


def decider_kind(model: type[BaseDeciderConfig]) -> str:
    """The kind a config model declares: the default of its `kind` field."""
    name = model.model_fields["kind"].default
    if not isinstance(name, str):
        raise TypeError(f"{model.__name__}.kind needs a default: the decider's name as a Literal")
    return name


def register_decider(cls: DeciderT) -> DeciderT:
    """Class decorator: register a decider under the kind its `config_model` declares."""
    kind = decider_kind(cls.config_model)  # type: ignore[attr-defined]
    if kind in DECIDERS and DECIDERS[kind] is not cls:
        raise ValueError(f"decider {kind!r} is registered twice: {DECIDERS[kind].__name__}, {cls.__name__}")
    DECIDERS[kind] = cls
    return cls


def config_models() -> dict[str, type[BaseDeciderConfig]]:
    """kind -> its config model."""
    return {kind: cls.config_model for kind, cls in DECIDERS.items()}


def build_decider(config: BaseDeciderConfig, context: DeciderContext) -> Decider:
    """The decider of `config.kind`, built from `config` and `context`."""
    try:
        cls = DECIDERS[config.kind]
    except KeyError:
        raise ValueError(f"agents.decider.kind: unknown {config.kind!r}; registered: {', '.join(DECIDERS)}") from None
    if not isinstance(config, cls.config_model):
        raise TypeError(f"decider {config.kind!r} takes a {cls.config_model.__name__}, got {type(config).__name__}")
    decider: Decider = cls(config, context)
    return decider
