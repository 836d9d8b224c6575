"""Hydra composition of the project's `conf/`, once for every entry point: resolvers, validation, `compose_experiment`.

`prism-run` composes through `@hydra.main`; everything else that needs an experiment's config (calibration
trials, `prism-ope --validate`, the benchmarks, tests) calls `compose_experiment(overrides)`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationResolutionError

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.locations import (
    CONFIG_DIR,
    FOLDER_TOKEN_RESOLVER,
    OUTPUT_DIR_RESOLVER,
    folder_token,
    hydra_output_dir,
)

ARM_RESOLVER = "prism.arm"


def arm_of_seed(seed: int, seeds_per_arm: int, *labels: str) -> str:
    """The label of the block of `seeds_per_arm` consecutive seeds that `seed` falls in: labels[seed // size].

    `${prism.arm:${seed},5,A,B}` with seeds 0-9 gives A for 0-4 and B for 5-9: a sweep over one
    seed range yields two arms on disjoint seeds (Hydra's basic sweeper only takes products).
    """
    seed, size = int(seed), int(seeds_per_arm)
    if size < 1 or not labels:
        raise ValueError(f"{ARM_RESOLVER}: need seeds_per_arm >= 1 and at least one label, got {size}, {labels}")
    block = seed // size
    if not 0 <= block < len(labels):
        raise ValueError(f"{ARM_RESOLVER}: seed {seed} is beyond {len(labels)} arm(s) of {size} seeds "
                         f"({', '.join(labels)}); sweep seeds 0-{len(labels) * size - 1}")  # fmt: skip
    return str(labels[block])


def register_resolvers() -> None:
    """Register the project's resolvers (idempotent)."""
    if not OmegaConf.has_resolver(ARM_RESOLVER):
        OmegaConf.register_new_resolver(ARM_RESOLVER, arm_of_seed)
    if not OmegaConf.has_resolver(FOLDER_TOKEN_RESOLVER):
        # cached, as Hydra's own `now`: one value per config, carried into every job's config (load_sweep_config)
        OmegaConf.register_new_resolver(FOLDER_TOKEN_RESOLVER, folder_token, use_cache=True)
    if not OmegaConf.has_resolver(OUTPUT_DIR_RESOLVER):
        OmegaConf.register_new_resolver(OUTPUT_DIR_RESOLVER, hydra_output_dir)


register_resolvers()  # before any config that uses them is resolved, in the driver and in every worker


def experiment_config(cfg: DictConfig) -> ExperimentConfig:
    """The composed config without Hydra's own node, resolved and validated (ConfigError if invalid)."""
    data = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(data, dict)
    data.pop("hydra", None)  # hydra.* interpolations only resolve inside a running job
    missing = sorted(OmegaConf.missing_keys(OmegaConf.create(data)))
    if missing:
        raise ConfigError(f"config error: {missing[0]}: required, no default (set {missing[0]}=...)")
    try:
        resolved = OmegaConf.to_container(OmegaConf.create(data), resolve=True)
    except InterpolationResolutionError as exc:
        raise ConfigError(f"config error: {str(exc).splitlines()[0]}") from None
    assert isinstance(resolved, dict)
    return ExperimentConfig.from_mapping({str(key): value for key, value in resolved.items()})


@contextmanager
def hydra_context() -> Iterator[None]:
    """Hydra initialised on the project's `conf/`, as `@hydra.main` would (cleared before and after)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(version_base="1.3", config_dir=str(CONFIG_DIR)):
            yield
    finally:
        GlobalHydra.instance().clear()


def compose_dictconfig(overrides: Sequence[str], return_hydra_config: bool = False) -> DictConfig:
    """`conf/config.yaml` composed with `overrides` as `python -m prism_experiments <overrides>` would, unvalidated
    (inside `hydra_context()` when one is open, so Hydra's config loader stays available to the caller)."""
    from hydra import compose
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        return compose("config", overrides=list(overrides), return_hydra_config=return_hydra_config)
    with hydra_context():
        return compose("config", overrides=list(overrides), return_hydra_config=return_hydra_config)


def compose_experiment(overrides: Sequence[str]) -> ExperimentConfig:
    """The validated config `python -m prism_experiments <overrides>` would run (ConfigError if invalid)."""
    return experiment_config(compose_dictconfig(overrides))
