"""`python -m prism_experiments` / `prism-run`: the Hydra entry point of one run or a sweep."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from prism_experiments.config import ConfigError
from prism_experiments.harness.hydra_config import experiment_config
from prism_experiments.harness.context import current_sweep
from prism_experiments.harness.job import run_job

CONFIG_DIR = str(Path(__file__).resolve().parent.parent / "conf")
log = logging.getLogger("prism_experiments")


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg: DictConfig) -> dict[str, float] | None:
    hydra_cfg = HydraConfig.get()
    overrides = list(hydra_cfg.overrides.task)
    try:
        experiment = experiment_config(cfg)
    except ConfigError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    sweep = current_sweep(Path(hydra_cfg.sweep.dir)) if multirun else None
    # in a sweep a failed job is recorded and the others go on; the sweep fails at the end
    outcome = run_job(experiment, overrides, sweep, reraise=not multirun)
    return outcome.summary


if __name__ == "__main__":
    sys.exit(main())
