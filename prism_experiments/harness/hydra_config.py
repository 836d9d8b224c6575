"""From a composed Hydra config to a validated ExperimentConfig."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from prism_experiments.config import ExperimentConfig


def experiment_config(cfg: DictConfig) -> ExperimentConfig:
    """The composed config without Hydra's own node, resolved and validated (ConfigError if invalid)."""
    data = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(data, dict)
    data.pop("hydra", None)  # hydra.* interpolations only resolve inside a running job
    resolved = OmegaConf.to_container(OmegaConf.create(data), resolve=True)
    assert isinstance(resolved, dict)
    return ExperimentConfig.from_mapping(resolved)
