"""The mode registry: each mode module registers its ranker class (and through it, its config model)."""

from __future__ import annotations

from typing import TypeVar

from prism_experiments.ranking.base import Ranker
from prism_experiments.ranking.context import RankerContext
from prism_experiments.ranking.mode_config import ModeConfig, mode_name

#: mode name -> ranker class, in registration order; filled by `register_mode` as the modes are imported
RANKERS: dict[str, type[Ranker]] = {}

RankerT = TypeVar("RankerT", bound=type[Ranker])


def register_mode(cls: RankerT) -> RankerT:
    """Class decorator: register a ranker under the mode its `config_model` declares."""
    mode = mode_name(cls.config_model)
    if mode in RANKERS and RANKERS[mode] is not cls:
        raise ValueError(f"ranking mode {mode!r} is registered twice: {RANKERS[mode].__name__}, {cls.__name__}")
    cls.mode = mode
    RANKERS[mode] = cls
    return cls


def registered_modes() -> tuple[str, ...]:
    """Every registered mode, in registration order."""
    return tuple(RANKERS)


def config_models() -> dict[str, type[ModeConfig]]:
    """mode -> its config model."""
    return {mode: cls.config_model for mode, cls in RANKERS.items()}


def build_ranker(config: ModeConfig, context: RankerContext) -> Ranker:
    """The ranker of `config.mode`, built from `config` and `context`."""
    try:
        cls = RANKERS[config.mode]
    except KeyError:
        raise ValueError(
            f"ranking.mode: unknown mode {config.mode!r}; registered modes: {', '.join(RANKERS)}"
        ) from None
    if not isinstance(config, cls.config_model):
        raise TypeError(
            f"ranking mode {config.mode!r} takes a {cls.config_model.__name__}, got {type(config).__name__}"
        )
    return cls(config, context)
