"""From a composed Hydra config to a validated ExperimentConfig."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationResolutionError

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.harness.resolvers import register_resolvers

register_resolvers()  # before any config that uses them is resolved, in the driver and in every worker


def experiment_config(cfg: DictConfig) -> ExperimentConfig:
    """The composed config without Hydra's own node, resolved and validated (ConfigError if invalid)."""
    data = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(data, dict)
    data.pop("hydra", None)  # hydra.* interpolations only resolve inside a running job
    try:
        resolved = OmegaConf.to_container(OmegaConf.create(data), resolve=True)
    except InterpolationResolutionError as exc:
        raise ConfigError(f"config error: {str(exc).splitlines()[0]}") from None
    assert isinstance(resolved, dict)
    return ExperimentConfig.from_mapping(resolved)
