"""Faults of the cluster path on real parts: a Ray worker or a submitit job killed mid-job, and the
tracking server (MLflow on PostgreSQL, as `make tracking-server` starts it) paused mid-sweep."""

from __future__ import annotations

import os
import re
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_helpers import (
    TWO_JOB_SWEEP,
    HeldEncoding,
    all_runs,
    killed_if_left_running,
    postgres_tracking_server,
    run,
    start,
    wait_for_running_job,
)

from prism_experiments.ops import tracking_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]
LAUNCHERS = {
    "prism_ray": ("hydra/launcher=prism_ray", "hydra.launcher.ray.init.num_cpus=2"),
    "prism_submitit_local": ("hydra/launcher=prism_submitit_local",),
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Path]]:
    """One PostgreSQL-backed MLflow server; each test logs into an experiment of its own."""
    with postgres_tracking_server() as started:
        yield started


def finished_once_each(runs: list) -> Counter:
    return Counter(
        r.data.tags["prism.config_hash"]
        for r in runs
        if r.info.status == "FINISHED" and r.data.tags["prism.kind"] == "simulation"
    )


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_killed_worker_fails_only_its_job_and_the_next_sweep_runs_only_that_job(
    server: tuple[str, Path], held_cache: HeldEncoding, tmp_path: Path, launcher: str
) -> None:
    uri, _ = server
    runs_dir, name, cache_dir = tmp_path / "runs", f"kill_{launcher}", held_cache.root
    args = (*TWO_JOB_SWEEP, *LAUNCHERS[launcher], "tracking=server", f"tracking.uri={uri}", f"experiment_name={name}")
    sweep = start(*args, runs_dir=runs_dir, cache_dir=cache_dir)
    with killed_if_left_running(sweep):
        victim = wait_for_running_job(runs_dir, timeout=300, store=uri, experiment=name, sweep=sweep)
        os.kill(int(victim.data.tags["prism.pid"]), signal.SIGKILL)  # the Ray worker or submitit job running it
        held_cache.release()  # the other jobs go on
        stdout, stderr = sweep.communicate(timeout=600)
    output = stdout + stderr
    job = victim.data.tags["prism.job_num"]
    assert sweep.returncode == 1, output[-3000:]
    assert re.search(rf"job {job}: its (Ray worker|submitit job \S+) died", output), output[-3000:]
    assert "1 of 2 jobs failed" in output, output[-3000:]
    assert "Traceback" not in output
    runs = all_runs(runs_dir, store=uri, experiment=name)
    running = [
        (r.info.run_id, r.data.tags.get("prism.job_num"), r.data.tags.get("prism.pid"))
        for r in runs
        if r.info.status == "RUNNING"
    ]
    assert not running, f"left RUNNING (run, job, pid): {running}; victim job {job}\n{output[-3000:]}"
    killed = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert killed.info.status == "FAILED" and "process died" in killed.data.tags["prism.error"]
    assert len(finished_once_each(runs)) == 1

    rerun = run(*args, runs_dir=runs_dir, cache_dir=cache_dir)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    assert "2 jobs, 1 to run, 1 already FINISHED" in rerun.stdout + rerun.stderr
    after = all_runs(runs_dir, store=uri, experiment=name)
    assert len(after) == len(runs) + 1, "the rerun ran only the lost job"
    finished = finished_once_each(after)
    assert len(finished) == 2 and max(finished.values()) == 1
    assert not [
        r for r in after + all_runs(runs_dir, "sweep", store=uri, experiment=name) if r.info.status == "RUNNING"
    ]


def test_a_tracking_server_paused_mid_sweep_delays_the_jobs_and_loses_or_doubles_nothing(
    server: tuple[str, Path], held_cache: HeldEncoding, tmp_path: Path
) -> None:
    """SIGSTOP for 6 s (the fault's length, shorter than `tracking.http_timeout_s`, 10 s): requests wait."""
    uri, home = server
    runs_dir, name = tmp_path / "runs", "server_pause"
    sweep = start(
        *TWO_JOB_SWEEP,
        "tracking=server",
        f"tracking.uri={uri}",
        f"experiment_name={name}",
        runs_dir=runs_dir,
        cache_dir=held_cache.root,
    )
    state = tracking_server.read_state(home)
    assert state is not None
    with killed_if_left_running(sweep):
        wait_for_running_job(runs_dir, timeout=300, store=uri, experiment=name, sweep=sweep)
        os.killpg(state.mlflow_pid, signal.SIGSTOP)  # the server and its workers (own process group)
        held_cache.release()  # the running jobs go on against the paused server, however fast the machine
        try:
            time.sleep(6)
        finally:
            os.killpg(state.mlflow_pid, signal.SIGCONT)
        stdout, stderr = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, (stdout + stderr)[-3000:]
    runs = all_runs(runs_dir, store=uri, experiment=name)
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    assert len(finished_once_each(runs)) == 2
    assert all("inn_share" in r.data.metrics for r in runs)
