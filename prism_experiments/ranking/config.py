"""RankingConfig: the discriminated union, on `mode`, of every registered mode's config model.

Each mode module declares its own model (`modes/<mode>.py`); this module only collects them, so
`ranking.mode` picks the model and every other `ranking.*` key is validated by that model alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import Discriminator, Tag

import prism_experiments.ranking.modes  # noqa: F401  (registers every mode)
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import config_models, registered_modes

#: the mode of `ranking` when a mapping leaves it out, and of `conf/config.yaml`'s default
DEFAULT_MODE = "x_algo"


def mode(value: Any) -> Any:
    """The discriminator: a mapping's `mode` (DEFAULT_MODE when absent) or a config's `mode`."""
    if isinstance(value, dict):
        return value.get("mode", DEFAULT_MODE)
    return getattr(value, "mode", None)


#: every registered mode's config model (the modes' modules were imported above)
KNOWN_MODES: tuple[str, ...] = registered_modes()
if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    RankingConfig: TypeAlias = ModeConfig
else:
    RankingConfig = Annotated[
        Union[tuple(Annotated[model, Tag(name)] for name, model in config_models().items())],  # noqa: UP007  (a runtime tuple)
        Discriminator(mode),
    ]


def ranking_config(mode: str = DEFAULT_MODE, **fields: Any) -> ModeConfig:
    """The validated config of `mode` with `fields` set (ValueError naming ranking.mode if unknown)."""
    models = config_models()
    if mode not in models:
        raise ValueError(f"ranking.mode: unknown mode {mode!r}; registered modes: {', '.join(models)}")
    return models[mode].model_validate({"mode": mode, **fields})
