"""`hydra/sweeper=prism_basic` (the default): Hydra's basic sweeper without its second composition of every job.

Before the sweeper starts, the sweep callback (`prism_experiments.harness.sweep`) composes and validates every
job's config, with a one-line error for a bad one; Hydra's `validate_batch_is_legal` would compose each again,
0.13 s a job in the driver. Without the callback (a config that drops it), Hydra's own check runs.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore

from prism_experiments.harness.sweep_file import SWEEP_FILE_ENV


@dataclass
class PrismBasicSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.prism_launcher.prism_basic_sweeper.PrismBasicSweeper"


ConfigStore.instance().store(
    group="hydra/sweeper", name="prism_basic", node=PrismBasicSweeperConf, provider="prism_experiments"
)


class PrismBasicSweeper(BasicSweeper):
    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        if os.environ.get(SWEEP_FILE_ENV):  # set by the sweep callback once it validated every job
            return
        super().validate_batch_is_legal(batch)
