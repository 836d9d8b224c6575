"""Running the real entry point (`python -m prism_experiments`) as a child and reading back what it logged."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prism_experiments.bench.measure import ChildRun, run_child
from prism_experiments.bench.probe import probe_env
from prism_experiments.tracking.tags import KIND_TAG, SIMULATION_KIND, TIMING_TAG_PREFIX, tag_equals


def child_env(probe_dir: Path | None) -> dict[str, str]:
    """The environment of a child: offline model, no inherited tracking URI, the probe when `probe_dir` is given."""
    env = dict(os.environ) | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("MLFLOW_TRACKING_URI", None)  # the child logs into the scratch store given by paths.runs_dir
    return probe_env(env, probe_dir) if probe_dir is not None else env


def run_entry_point(arguments: Sequence[str], log_path: Path, probe_dir: Path, cwd: Path) -> ChildRun:
    """`python -m prism_experiments <arguments>`, timed, with the probe loaded; fails loudly on a non-zero exit."""
    run = run_child([sys.executable, "-m", "prism_experiments", *arguments], log_path, child_env(probe_dir), cwd)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(run.command)} exited with {run.returncode}; log {log_path}:\n{run.tail()}")
    return run


@dataclass(frozen=True)
class LoggedRun:
    run_id: str
    tags: dict[str, str]
    start_time: int  # ms since the epoch
    end_time: int | None = None  # ms since the epoch; None while RUNNING

    @property
    def timings(self) -> dict[str, float]:
        return {
            k.removeprefix(TIMING_TAG_PREFIX): float(v) for k, v in self.tags.items() if k.startswith(TIMING_TAG_PREFIX)
        }


def simulation_runs(tracking_uri: str, experiment_name: str) -> list[LoggedRun]:
    """Every simulation (child) run of the experiment in the store."""
    from prism_experiments.tracking.store import client_for

    client = client_for(tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        return []
    runs = client.search_runs(
        [experiment.experiment_id], filter_string=tag_equals(KIND_TAG, SIMULATION_KIND), max_results=10_000
    )
    return sorted(
        (LoggedRun(r.info.run_id, dict(r.data.tags), r.info.start_time, r.info.end_time) for r in runs),
        key=lambda run: run.start_time,
    )


def new_runs(before: Sequence[LoggedRun], after: Sequence[LoggedRun]) -> list[LoggedRun]:
    known = {run.run_id for run in before}
    return [run for run in after if run.run_id not in known]


def active_agent_steps(tracking_uri: str, run: LoggedRun, scratch: Path) -> int:
    """Distinct (step, agent) pairs in the run's exposures table: every feed the run served."""
    from prism_experiments.tracking.store import client_for

    local = client_for(tracking_uri).download_artifacts(run.run_id, "tables/exposures.parquet", str(scratch))
    exposures: Any = pd.read_parquet(local, columns=["step", "agent_id"])
    return len(exposures.drop_duplicates())
