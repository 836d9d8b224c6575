"""Faults whose handling depends on the launcher, on the real stack at smoke size, for every launcher (joblib, Ray,
submitit): a killed sweep driver and a killed tracking server. Nothing may stay RUNNING, be orphaned, or run twice."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from process_helpers import (
    LAUNCHERS,
    TWO_JOB_SWEEP,
    HeldEncoding,
    all_runs,
    descendants,
    free_port,
    gone_or_zombie,
    run,
    start,
    start_mlflow_server,
    stop_server,
    wait_for_running_job,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_killed_driver_takes_its_workers_and_the_next_sweep_reaps_and_finishes(
    tmp_path: Path, held_cache: HeldEncoding, launcher: str
) -> None:
    runs_dir, cache_dir = tmp_path / "runs", held_cache.root
    args = (*TWO_JOB_SWEEP, *LAUNCHERS[launcher])
    sweep = start(*args, runs_dir=runs_dir, cache_dir=cache_dir)
    job = wait_for_running_job(runs_dir, timeout=600, sweep=sweep)
    workers = descendants(sweep.pid)
    assert int(job.data.tags["prism.pid"]) in workers
    sweep.send_signal(signal.SIGKILL)
    sweep.wait(timeout=60)  # not communicate(): submitit's controllers hold the driver's pipes until their jobs end
    if launcher == "prism_submitit_local":
        held_cache.release()  # a submitit job is a batch job: it goes on and finishes its run
    deadline = time.monotonic() + 600  # a safety net, not a race: minutes on a loaded machine
    while not all(gone_or_zombie(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    held_cache.release()  # (the other launchers' workers stopped while their jobs were held)
    assert all(gone_or_zombie(pid) for pid in workers), "every worker, busy or idle, stopped (or ended) with its driver"
    if launcher == "prism_joblib":  # a Ray worker dies with its raylet before it can mark its run: the reaper does
        orphaned = next(r for r in all_runs(runs_dir) if r.info.run_id == job.info.run_id)
        assert (
            orphaned.info.status == "KILLED"
            and "(the sweep driver, or Ray's raylet) died" in orphaned.data.tags["prism.error"]
        )
    rerun = run(*args, runs_dir=runs_dir, cache_dir=cache_dir)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    runs = all_runs(runs_dir) + all_runs(runs_dir, "sweep")
    assert not [r for r in runs if r.info.status == "RUNNING"], "the reaper closed what the dead driver left"
    # submitit's jobs are batch jobs: like SLURM's, they outlive the process that submitted them and finish;
    # a Ray worker dies when its raylet notices the dead driver, which on a loaded machine can be after its run ended
    expected = {
        "prism_joblib": {"KILLED"},
        "prism_ray": {"KILLED", "FINISHED"},
        "prism_submitit_local": {"FINISHED"},
    }[launcher]
    assert next(r for r in runs if r.info.run_id == job.info.run_id).info.status in expected
    finished = Counter(
        r.data.tags["prism.config_hash"]
        for r in runs
        if r.info.status == "FINISHED" and r.data.tags["prism.kind"] == "simulation"
    )
    assert len(finished) == 2 and max(finished.values()) == 1, "no job ran twice"


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_killed_tracking_server_fails_the_jobs_within_the_budget_and_the_next_sweep_reaps(
    tmp_path: Path, held_cache: HeldEncoding, launcher: str
) -> None:
    """A real `mlflow server` SIGKILLed mid-sweep: bounded retries, every job listed, the sweep exits 1; once a
    server is back on the same backend, the next sweep marks what the dead one left RUNNING and runs the rest.
    The recovery is the driver's reaper, the same for every launcher: it is run for joblib alone (minutes each)."""
    runs_dir, backend, artifacts, port = tmp_path / "runs", tmp_path / "server.db", tmp_path / "artifacts", free_port()
    store = f"sqlite:///{backend}"  # read behind the server's back, so it answers while the server is dead
    server_args = (
        "tracking=server",
        f"tracking.uri=http://127.0.0.1:{port}",
        "tracking.http_max_retries=1",
        "tracking.http_timeout_s=3",
        *LAUNCHERS[launcher],
    )
    cache_dir = held_cache.root
    server = start_mlflow_server(backend, artifacts, port)
    try:
        sweep = start(*TWO_JOB_SWEEP, *server_args, runs_dir=runs_dir, cache_dir=cache_dir)
        victim = wait_for_running_job(runs_dir, timeout=600, store=store, sweep=sweep)
        stop_server(server, signal.SIGKILL)
        held_cache.release()  # the running jobs go on, to a dead server
        killed_at = time.monotonic()
        stdout, stderr = sweep.communicate(timeout=600)
        seconds_to_fail = time.monotonic() - killed_at
        output = stdout + stderr
        assert sweep.returncode == 1, output[-3000:]
        assert "Traceback" not in output and "of 2 jobs failed" in output, output[-3000:]
        # bounded: seconds of retries per request here, where MLflow's own defaults (7 retries with backoff, 120 s
        # timeouts) take tens of minutes; the margin covers the jobs' work after the release on a loaded machine
        assert seconds_to_fail < 300, f"the sweep took {seconds_to_fail:.0f} s to give up on a dead server"
        assert victim.info.run_id in {
            r.info.run_id for r in all_runs(runs_dir, store=store) if r.info.status == "RUNNING"
        }, "the dead server could not be told"
        if launcher != "prism_joblib":
            return

        server = start_mlflow_server(backend, artifacts, port)
        rerun = run(*TWO_JOB_SWEEP, *server_args, runs_dir=runs_dir, cache_dir=cache_dir)
        assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    finally:
        stop_server(server)
    runs = all_runs(runs_dir, store=store) + all_runs(runs_dir, "sweep", store=store)
    assert not [r for r in runs if r.info.status == "RUNNING"], "the reaper closed what the dead server left"
    reaped = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert reaped.info.status == "KILLED"
    finished = Counter(
        r.data.tags["prism.config_hash"]
        for r in runs
        if r.info.status == "FINISHED" and r.data.tags["prism.kind"] == "simulation"
    )
    assert len(finished) == 2 and max(finished.values()) == 1
