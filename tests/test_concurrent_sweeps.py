"""Sweeps of one experiment started in the same second, on the real stack: each gets a Hydra folder of its own
(its sweep file, its jobs' outcome files), its jobs are children of its own parent run, and each exits 0.

The same second is made certain by pinning the clock Hydra's folder name reads (`${now:...}`), in every process
of the sweeps; the second test starts them together for real."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from process_helpers import all_runs, command, environment, killed_if_left_running

from prism_experiments.harness.recovery import read_outcome
from prism_experiments.harness.sweep_file import SWEEP_FILE_NAME

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: the second every sweep of the pinned test starts in
PINNED_SECOND = "2030-01-01_12-00-00"
#: a sitecustomize module that makes Hydra's `now` resolver read a pinned clock, in every process it starts in
PINNED_CLOCK = f'''
from datetime import datetime

from omegaconf import OmegaConf

_register = OmegaConf.register_new_resolver


def _register_pinned(name, resolver, *args, **kwargs):
    if name == "now":
        resolver = lambda pattern: datetime.strptime("{PINNED_SECOND}", "%Y-%m-%d_%H-%M-%S").strftime(pattern)
    return _register(name, resolver, *args, **kwargs)


OmegaConf.register_new_resolver = staticmethod(_register_pinned)
'''
#: three sweeps of two short jobs each, one worker each (the warm session cache holds every text they embed)
SWEEPS = (("seed=0",), ("seed=1",), ("seed=2",))
SHORT = ("-m", "experiment=smoke", "simulation.n_steps=2", "simulation.show_progress=false", "hydra.launcher.n_jobs=1")


def start_sweeps(
    runs_dir: Path, cache_dir: Path, env: dict[str, str], sweeps: tuple[tuple[str, ...], ...] = SWEEPS
) -> list[subprocess.CompletedProcess]:
    """Start every sweep of `sweeps` at once and wait for all of them."""
    processes = [
        subprocess.Popen(
            command(*SHORT, *extra, runs_dir=runs_dir, cache_dir=cache_dir),
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for extra in sweeps
    ]
    results = []
    for process in processes:
        with killed_if_left_running(process):
            output, _ = process.communicate(timeout=900)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, output))
    return results


def check_each_sweep_kept_its_own(runs_dir: Path, results: list[subprocess.CompletedProcess]) -> list[Path]:
    """Every sweep exited 0, has its own folder and sweep file, and its two jobs are its parent's children and
    its own outcome files' runs; returns the sweep folders."""
    assert [result.returncode for result in results] == [0] * len(results), results[0].stdout[-3000:]
    folders = sorted(path.parent for path in runs_dir.glob(f"hydra/smoke/*/{SWEEP_FILE_NAME}"))
    assert len(folders) == len(results), f"one folder per sweep: {folders}"
    parents = {run.info.run_id: run for run in all_runs(runs_dir, "sweep")}
    children = all_runs(runs_dir)
    assert Counter(run.info.status for run in [*parents.values(), *children]) == {"FINISHED": 3 * len(results)}
    for folder in folders:
        sweep = json.loads((folder / SWEEP_FILE_NAME).read_text())
        parent = parents[sweep["parent_run_id"]]
        assert parent.data.tags["prism.sweep_id"] == sweep["sweep_id"]
        own = [run for run in children if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert len(own) == 2 and {run.data.tags["prism.sweep_id"] for run in own} == {sweep["sweep_id"]}
        outcomes = [read_outcome(folder, num) for num in range(2)]
        assert {outcome.run_id for outcome in outcomes if outcome} == {run.info.run_id for run in own}
    assert len({json.loads((f / SWEEP_FILE_NAME).read_text())["sweep_id"] for f in folders}) == len(results)
    return folders


def test_sweeps_started_in_one_pinned_second_each_keep_their_own_folder_and_parent(
    tmp_path: Path, warm_smoke_cache: Path
) -> None:
    clock = tmp_path / "pinned-clock"
    clock.mkdir()
    (clock / "sitecustomize.py").write_text(PINNED_CLOCK)
    env = environment() | {"PYTHONPATH": os.pathsep.join(filter(None, (str(clock), os.environ.get("PYTHONPATH"))))}
    runs_dir = tmp_path / "runs"
    folders = check_each_sweep_kept_its_own(runs_dir, start_sweeps(runs_dir, warm_smoke_cache, env))
    assert all(folder.name.startswith(f"{PINNED_SECOND}_") for folder in folders), "the clock was pinned"


def test_sweeps_started_together_each_keep_their_own_folder_and_parent(tmp_path: Path, warm_smoke_cache: Path) -> None:
    runs_dir = tmp_path / "runs"  # two sweeps, as close together as two processes start
    check_each_sweep_kept_its_own(runs_dir, start_sweeps(runs_dir, warm_smoke_cache, environment(), SWEEPS[:2]))
