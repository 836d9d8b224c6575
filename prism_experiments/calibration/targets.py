"""The targets file `conf/calibration/<name>.yaml`: published moments, their sources, and the parameters to fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prism_experiments.config import ExperimentConfig, describe_validation_error
from prism_experiments.locations import CONFIG_DIR
from prism_experiments.metrics.moments import EXTRA_MOMENTS
from prism_experiments.metrics.registry import summary_metric_names
from prism_experiments.tracking.params import flatten

CALIBRATION_DIR = CONFIG_DIR / "calibration"
#: World keys only: a fitted world must compose with every ranking mode (docs/model.md, "Calibration").
FITTABLE_PREFIXES: tuple[str, ...] = ("agents.", "network.")
#: numeric keys whose default is null (the mechanism off): fittable all the same, and the low end of the range
#: (0: off) is their value in trial 0
FITTABLE_WHEN_NULL: tuple[str, ...] = ("agents.reply_post_rate_elasticity", "network.followee_post_rate_elasticity")


def calibration_metrics() -> tuple[str, ...]:
    """The metrics a target may name: the run summary's and the calibration moments."""
    return summary_metric_names() + EXTRA_MOMENTS


class TargetsError(ValueError):
    """A targets file that cannot be used; the message is one line naming the field."""


class Source(BaseModel):
    """Where a reference figure comes from, and the figure as the source states it."""

    model_config = ConfigDict(extra="forbid")

    citation: str = Field(min_length=1)
    locator: str = Field(min_length=1, description="table, figure, page or section")
    statement: str = Field(min_length=1, description="the figure as the source states it")
    url: str | None = None


class Target(BaseModel):
    """One summary metric against a reference value or interval; `excluded` keeps it out of the objective."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    value: float | None = None
    interval: tuple[float, float] | None = None
    scale: float = Field(default=1.0, gt=0, description="the distance unit: (sim - ref) / scale")
    weight: float = Field(default=1.0, ge=0)
    tolerance: float = Field(default=0.0, ge=0, description="within tolerance when |sim - ref| <= tolerance")
    source: Source
    excluded: str | None = Field(default=None, min_length=1, description="why this figure is not matched")

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        allowed = calibration_metrics()
        if value not in allowed:
            raise ValueError(f"unknown metric {value!r}; allowed: {', '.join(allowed)}")
        return value

    @model_validator(mode="after")
    def _one_reference(self) -> Target:
        if (self.value is None) == (self.interval is None):
            raise ValueError("value: give exactly one of value and interval")
        if self.interval is not None and self.interval[0] > self.interval[1]:
            raise ValueError(f"interval: low must be <= high, got {list(self.interval)}")
        return self


class Parameter(BaseModel):
    """A numeric config key to fit and its search range."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    log: bool = False
    integer: bool = False

    @model_validator(mode="after")
    def _range(self) -> Parameter:
        if not self.low < self.high:
            raise ValueError(f"low: must be < high, got low={self.low}, high={self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"low: must be > 0 with log: true, got {self.low}")
        return self


class TargetSet(BaseModel):
    """A calibration: targets, parameters, and the reduced run size (Hydra overrides) each trial simulates."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    description: str = ""
    reference_ranking: str = Field(default="x_algo", min_length=1)
    run_overrides: list[str] = Field(default_factory=list)
    targets: dict[str, Target] = Field(min_length=1)
    parameters: dict[str, Parameter] = Field(min_length=1)

    @field_validator("parameters")
    @classmethod
    def _known_keys(cls, value: dict[str, Parameter]) -> dict[str, Parameter]:
        defaults = fittable_defaults()
        for key in value:
            if key not in defaults:
                raise ValueError(
                    f"unknown key {key!r}; fittable numeric keys under "
                    f"{', '.join(FITTABLE_PREFIXES)} e.g. {', '.join(list(defaults)[:6])}, ..."
                )
        return value

    @model_validator(mode="after")
    def _something_to_fit(self) -> TargetSet:
        if not self.active_targets():
            raise ValueError("targets: every target is excluded; nothing to fit")
        return self

    def active_targets(self) -> dict[str, Target]:
        """The targets that enter the objective."""
        return {name: target for name, target in self.targets.items() if target.excluded is None}


def fittable_defaults() -> dict[str, float | None]:
    """Every numeric (non-bool) default under FITTABLE_PREFIXES, and the FITTABLE_WHEN_NULL keys, by dotted key."""
    flat = flatten(ExperimentConfig().model_dump(mode="json"))
    return {
        key: value
        for key, value in flat.items()
        if (key.startswith(FITTABLE_PREFIXES) and isinstance(value, (int, float)) and not isinstance(value, bool))
        or key in FITTABLE_WHEN_NULL
    }


def targets_path(name_or_path: str | Path, directory: Path = CALIBRATION_DIR) -> Path:
    """`x2023` -> conf/calibration/x2023.yaml; a path to a yaml file is taken as it is."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        return candidate
    return directory / f"{name_or_path}.yaml"


def available(directory: Path = CALIBRATION_DIR) -> list[str]:
    """Target set names shipped in `directory`."""
    return sorted(path.stem for path in directory.glob("*.yaml"))


def parse_targets(data: Any, origin: str = "targets") -> TargetSet:
    """Validate a mapping; TargetsError with one line naming the field on any problem."""
    if not isinstance(data, dict):
        raise TargetsError(f"{origin}: must be a mapping of name, targets, parameters, got {type(data).__name__}")
    try:
        return TargetSet.model_validate(data)
    except ValidationError as exc:
        raise TargetsError(f"{origin}: {describe_validation_error(exc).removeprefix('config error: ')}") from None


def load_targets(name_or_path: str | Path, directory: Path = CALIBRATION_DIR) -> TargetSet:
    """Read and validate a targets file by name or path."""
    path = targets_path(name_or_path, directory)
    if not path.is_file():
        raise TargetsError(f"--targets: no targets file {path}; available: {', '.join(available(directory)) or 'none'}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise TargetsError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    return parse_targets(data, str(path))
