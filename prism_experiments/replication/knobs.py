"""Whether the config schema has a setting: a replication that needs a mechanism becomes testable when it lands."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator

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


def needs(knob: str, why: str) -> Callable[[], str | None]:
    """A finding's `untestable`: None once the config schema has `knob`, else what is missing and `why` it matters."""

    def untestable() -> str | None:
        return None if config_has(knob) else f"needs {knob} (not in the config yet): {why}"

    return untestable
