"""The mode registry: each mode module registers its ranker class (and through it, its config model)."""

from __future__ import annotations

from typing import TypeVar

from prism_experiments.ranking.base import Ranker
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.registries import ClassRegistry

#: the mode of `ranking` when a mapping leaves it out, and of `conf/config.yaml`'s default
DEFAULT_MODE = "x_algo"
#: every ranking mode (mode name -> ranker class, in registration order), filled by `register_mode` as the mode
#: modules are imported
#: (and each one's Hydra option `ranking=<mode>`)
RANKING_MODES: ClassRegistry[ModeConfig] = ClassRegistry(
    "ranking mode", "mode", "ranking.mode", DEFAULT_MODE, hydra_group="ranking"
)

RankerT = TypeVar("RankerT", bound=type[Ranker])


def register_mode(cls: RankerT) -> RankerT:
    """Class decorator: register a ranker under the mode its `config_model` declares."""
    RANKING_MODES.register(cls)
    cls.mode = RANKING_MODES.name_of(cls.config_model)
    return cls


def registered_modes() -> tuple[str, ...]:
    """Every registered mode, in registration order."""
    return tuple(RANKING_MODES.entries)


def config_models() -> dict[str, type[ModeConfig]]:
    """mode -> its config model."""
    return RANKING_MODES.config_models()


def build_ranker(config: ModeConfig, inputs: RankerInputs) -> Ranker:
    """The ranker of `config.mode`, built from `config` and `inputs`."""
    ranker: Ranker = RANKING_MODES.class_for(config)(config, inputs)
    return ranker
