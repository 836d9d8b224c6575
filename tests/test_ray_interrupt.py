"""Ctrl-C and SIGTERM to a Ray sweep's driver, on the real stack: the sweep stops within 15 s, no queued job starts
after the interrupt, and the jobs that were running end KILLED naming the interrupt.

Ray's workers are not the driver's children, so neither a terminal's Ctrl-C nor the driver's forwarding of SIGTERM
reaches them by itself (prism_experiments/harness/interruption.py). The running jobs are held RUNNING by the
embedding cache's lock (`held_cache`, tests/process_helpers.py `HeldEncoding`) until the signal comes."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from process_helpers import (
    HeldEncoding,
    all_runs,
    command,
    descendants,
    environment,
    forked,
    gone_or_zombie,
    killed_if_left_running,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: 4 jobs on a local instance of 2 CPUs: two run while two wait in Ray's queue
RAY_SWEEP = (
    "-m",
    "experiment=smoke",
    "simulation.n_steps=2",
    "simulation.show_progress=false",
    "hydra/launcher=prism_ray",
    "hydra.launcher.ray.init.num_cpus=2",
)
#: the fault table's promise (docs/faults.md): an interrupted Ray sweep is gone within this many seconds
STOP_BUDGET_S = 15


def wait_for_running_jobs(runs_dir: Path, sweep: subprocess.Popen, count: int, timeout: float = 600) -> list:
    """Until `count` simulation runs are RUNNING in their processes (held at the gate)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert sweep.poll() is None, f"the sweep ended (exit {sweep.returncode}) before its jobs ran"
        running = [
            run
            for run in (all_runs(runs_dir) if (runs_dir / "mlflow.db").exists() else [])
            if run.info.status == "RUNNING" and "prism.pid" in run.data.tags
        ]
        if len(running) >= count:
            return running
        time.sleep(0.3)
    raise AssertionError(f"{count} jobs were not seen RUNNING")


@pytest.mark.parametrize(
    "signum, reason, exit_code",
    [(signal.SIGINT, "interrupted (Ctrl-C)", 130), (signal.SIGTERM, "interrupted (SIGTERM)", 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_an_interrupted_ray_sweep_stops_within_15_s_and_starts_no_job_after_it(
    tmp_path: Path, held_cache: HeldEncoding, signum: signal.Signals, reason: str, exit_code: int
) -> None:
    runs_dir, cache_dir, log = tmp_path / "runs", held_cache.root, tmp_path / "sweep.log"
    with log.open("wb") as sink:
        sweep = forked(
            command(*RAY_SWEEP, runs_dir=runs_dir, cache_dir=cache_dir),
            env=environment(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job,
        )
        with killed_if_left_running(sweep):
            running = wait_for_running_jobs(runs_dir, sweep, count=2)
            started = descendants(sweep.pid)
            interrupted = time.monotonic()
            if signum == signal.SIGINT:
                os.killpg(sweep.pid, signum)  # a terminal's Ctrl-C: the driver's whole process group
            else:
                sweep.send_signal(signum)  # `kill`, `timeout`, scancel: the driver alone
            sweep.wait(timeout=300)
            stopped_after = time.monotonic() - interrupted
    output = log.read_text()
    assert sweep.returncode == exit_code, output[-3000:]
    assert stopped_after < STOP_BUDGET_S, f"stopped {stopped_after:.1f} s after the signal"
    assert "Traceback" not in output, output[-3000:]
    runs = all_runs(runs_dir)
    assert {run.info.run_id for run in runs} == {run.info.run_id for run in running}, "no job started after it"
    assert Counter((run.info.status, run.data.tags.get("prism.error")) for run in runs) == {("KILLED", reason): 2}
    (parent,) = all_runs(runs_dir, "sweep")
    assert parent.info.status == "KILLED"
    deadline = time.monotonic() + 60
    while not all(gone_or_zombie(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert all(gone_or_zombie(pid) for pid in started), "every process the sweep started stopped with it"
