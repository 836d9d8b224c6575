"""Whether the config schema has a setting: a replication that needs a mechanism becomes testable when it lands."""

from __future__ import annotations

import typing
from collections.abc import Iterator

from pydantic import BaseModel


def _models_in(annotation: object) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation can hold (through Optional, unions, Annotated, containers)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from _models_in(argument)


def config_has(dotted: str, model: type[BaseModel] | None = None) -> bool:
    """True when `dotted` (e.g. `simulation.schedule`) is a field of the experiment config (any ranking mode's
    config for `ranking.*`)."""
    if model is None:
        from prism_experiments.config import ExperimentConfig

        model = ExperimentConfig
    head, _, rest = dotted.partition(".")
    field = model.model_fields.get(head)
    if field is None:
        return False
    return not rest or any(config_has(rest, inner) for inner in _models_in(field.annotation))


def missing_knobs(*dotted: str) -> list[str]:
    """The settings of `dotted` the config schema does not have (yet)."""
    return [key for key in dotted if not config_has(key)]
