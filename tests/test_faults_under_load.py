"""Faults met under load, on the real stack: a store that fails while the sweep starts, SIGTERM to a run and to a
sweep's driver (as `timeout`, SLURM's scancel and Kubernetes send it), a local Ray instance started beside CPU-bound
work, and MLflow's telemetry thread. A sweep that did not do all its work never exits 0; nothing stays RUNNING."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from process_helpers import (
    LAUNCHERS,
    ROOT,
    SMOKE_SWEEP,
    HeldEncoding,
    all_runs,
    command,
    descendants,
    environment,
    forked,
    free_port,
    gone_or_zombie,
    start_mlflow_server,
    stop_server,
    wait_for_running_job,
)
from process_helpers import (
    run as run_prism,
)

from prism_experiments.ops import ray_head

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _default_sigterm() -> None:
    """In the child before exec: SIGTERM at its default and unblocked, whatever the pytest worker passed on."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start_logged(log: Path, *args: str, runs_dir: Path, cache_dir: Path) -> subprocess.Popen:
    """`prism-run <args>` with stdout and stderr into `log`, SIGTERM at its default."""
    with log.open("wb") as sink:
        return forked(
            command(*args, runs_dir=runs_dir, cache_dir=cache_dir),
            env=environment(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def killed_at_exit(process: subprocess.Popen) -> Iterator[None]:
    """A test that fails half-way leaves no process behind."""
    try:
        yield
    finally:
        if process.poll() is None:
            process.kill()


def error_lines(output: str) -> list[str]:
    """The lines that report a failure: an error, or what could not be done."""
    return [line for line in output.splitlines() if "error" in line.lower() or "could not" in line]


def test_mlflow_telemetry_is_off_so_its_thread_cannot_break_a_request() -> None:
    """MLflow 3's telemetry thread pops `_MLFLOW_TELEMETRY_SESSION_ID` from os.environ when it cannot reach the
    internet, racing a request that reads os.environ (KeyError: a failed runs/search). Checked outside
    pytest's and CI's environment variables, which turn the telemetry off by themselves."""
    env = {
        k: v
        for k, v in environment().items()
        if not k.startswith("PYTEST") and k not in ("CI", "GITHUB_ACTIONS", "MLFLOW_DISABLE_TELEMETRY")
    }
    code = (
        "import os, prism_experiments, mlflow; from mlflow.telemetry.client import get_telemetry_client; "
        "print(get_telemetry_client() is None, '_MLFLOW_TELEMETRY_SESSION_ID' in os.environ)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["True", "False"], result.stdout + result.stderr[-2000:]


def test_a_store_that_fails_while_the_sweep_starts_stops_it_with_one_line_and_exit_2(
    tmp_path: Path, warm_smoke_cache: Path
) -> None:
    """A real `mlflow server` that answers /health but whose runs table is gone: the sweep's start step fails.
    Hydra would turn that into a warning and run the jobs without a parent (the sweep then exited 0)."""
    backend, port = tmp_path / "server.db", free_port()
    server = start_mlflow_server(backend, tmp_path / "artifacts", port)
    try:
        with sqlite3.connect(backend) as db:
            db.execute("DROP TABLE runs")
        runs_dir = tmp_path / "runs"
        result = run_prism(
            "-m",
            "experiment=smoke",
            "simulation.n_steps=2",
            "tracking=server",
            f"tracking.uri=http://127.0.0.1:{port}",
            "tracking.http_max_retries=0",
            "tracking.http_timeout_s=5",
            runs_dir=runs_dir,
            cache_dir=warm_smoke_cache,
            timeout=300,
        )
    finally:
        stop_server(server)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-3000:]
    errors = error_lines(output)
    assert len(errors) == 1 and "the sweep could not start" in errors[0], output[-3000:]
    assert "Traceback" not in output and "jobs done" not in output, "no job ran without a parent run"


def _wait_for_progress(log: Path, process: subprocess.Popen, pattern: bytes, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not re.search(pattern, log.read_bytes()):
        assert time.monotonic() < deadline and process.poll() is None, log.read_text()[-2000:]
        time.sleep(0.5)


def test_sigterm_to_a_single_run_marks_it_killed_with_one_line(tmp_path: Path, held_cache: HeldEncoding) -> None:
    runs_dir, log = tmp_path / "runs", tmp_path / "output.log"
    process = start_logged(log, "experiment=smoke", runs_dir=runs_dir, cache_dir=held_cache.root)
    with killed_at_exit(process):
        # the run exists (its line is logged after its creation) and waits on the held cache: SIGTERM lands in it
        _wait_for_progress(log, process, rb"MLflow run [0-9a-f]+ \(")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    output = log.read_text()
    assert process.returncode == 128 + signal.SIGTERM, output[-2000:]
    (run,) = all_runs(runs_dir)
    assert run.info.status == "KILLED" and run.data.tags["prism.error"] == "interrupted (SIGTERM)"
    assert error_lines(output) == [line for line in output.splitlines() if f"run {run.info.run_id} KILLED" in line]
    assert len(error_lines(output)) == 1 and "Traceback" not in output, output[-2000:]


#: a sitecustomize module that holds a `prism-run` process at one point of its code (PRISM_TEST_HOLD_AT,
#: "module:attribute" or "module:Class.method"): the first call returns, writes PRISM_TEST_HOLD_MARK, then waits for
#: a shared lock on PRISM_TEST_HOLD_LOCK, which the test holds until it has sent its signal
HOLD_AT = """
import fcntl, functools, importlib, os

def _hold_at(target, mark, lock):
    module_name, _, path = target.partition(":")
    owner = importlib.import_module(module_name)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    real, held = getattr(owner, name), []

    @functools.wraps(real)
    def holding(*args, **kwargs):
        result = real(*args, **kwargs)
        if not held:
            held.append(True)
            with open(mark, "w") as marker:
                marker.write("held")
            with open(lock) as waiting:
                fcntl.flock(waiting, fcntl.LOCK_SH)
        return result

    setattr(owner, name, holding)

if os.environ.get("PRISM_TEST_HOLD_AT"):
    _hold_at(os.environ["PRISM_TEST_HOLD_AT"], os.environ["PRISM_TEST_HOLD_MARK"], os.environ["PRISM_TEST_HOLD_LOCK"])
"""

#: the points between a run's creation in the store and the job's guard around its simulation where a signal once
#: left the run RUNNING (the process exited 143 with its run RUNNING under load 7-10): each holds the process there
WINDOW_POINTS = {
    "inside create_run, after the run exists": (
        "mlflow.tracking.client:MlflowClient.create_run",
        "SIGTERM",
    ),
    "during the claim checks": ("prism_experiments.harness.job:close_own_duplicates", "SIGINT"),
    "after the run's line, before its simulation": ("prism_experiments.harness.job:Heartbeat", "SIGTERM"),
}


def _default_signals() -> None:
    """In the child before exec: SIGTERM and SIGINT at their defaults and unblocked (Python then raises Ctrl-C)."""
    _default_sigterm()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("point", WINDOW_POINTS)
def test_a_signal_in_the_window_after_a_run_exists_still_ends_it_killed(
    tmp_path: Path, warm_pool_cache: Path, point: str
) -> None:
    target, name = WINDOW_POINTS[point]
    signum = signal.Signals[name]
    hooks, mark, lock = tmp_path / "hooks", tmp_path / "held", tmp_path / "hold.lock"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOLD_AT)
    lock.touch()
    env = environment() | {
        "PYTHONPATH": os.pathsep.join(filter(None, (str(hooks), os.environ.get("PYTHONPATH")))),
        "PRISM_TEST_HOLD_AT": target,
        "PRISM_TEST_HOLD_MARK": str(mark),
        "PRISM_TEST_HOLD_LOCK": str(lock),
    }
    runs_dir, log = tmp_path / "runs", tmp_path / "output.log"
    with lock.open() as holding, log.open("wb") as sink:
        fcntl.flock(holding, fcntl.LOCK_EX)
        process = subprocess.Popen(
            command("experiment=smoke", runs_dir=runs_dir, cache_dir=warm_pool_cache),
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            preexec_fn=_default_signals,
        )
        with killed_at_exit(process):
            deadline = time.monotonic() + 300
            while not mark.exists():  # the process is held at the point: the signal lands inside the window
                assert time.monotonic() < deadline and process.poll() is None, log.read_text()[-2000:]
                time.sleep(0.2)
            process.send_signal(signum)
            fcntl.flock(holding, fcntl.LOCK_UN)
            process.wait(timeout=120)
    output = log.read_text()
    assert process.returncode == 128 + signum, output[-2000:]
    (run,) = all_runs(runs_dir)
    reason = "interrupted (Ctrl-C)" if signum == signal.SIGINT else "interrupted (SIGTERM)"
    assert (run.info.status, run.data.tags.get("prism.error")) == ("KILLED", reason), output[-2000:]
    assert error_lines(output) == [line for line in output.splitlines() if f"run {run.info.run_id} KILLED" in line], (
        output[-2000:]
    )
    assert len(error_lines(output)) == 1 and "Traceback" not in output, output[-2000:]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_sigterm_to_a_sweep_driver_leaves_no_run_running_and_no_process_behind(
    tmp_path: Path, held_cache: HeldEncoding, launcher: str
) -> None:
    runs_dir, log = tmp_path / "runs", tmp_path / "output.log"
    # the running jobs wait on the held cache: the signal lands while they run, however fast the machine
    sweep = start_logged(log, *SMOKE_SWEEP, *LAUNCHERS[launcher], runs_dir=runs_dir, cache_dir=held_cache.root)
    with killed_at_exit(sweep):
        wait_for_running_job(runs_dir, timeout=300, sweep=sweep)
        started = descendants(sweep.pid)
        sweep.send_signal(signal.SIGTERM)
        sweep.wait(timeout=180)
    output = log.read_text()
    assert sweep.returncode == 128 + signal.SIGTERM, output[-3000:]
    assert "prism-run: interrupted (SIGTERM)" in output and "Traceback" not in output, output[-3000:]
    runs = all_runs(runs_dir) + all_runs(runs_dir, "sweep")
    statuses = Counter(run.info.status for run in runs)
    assert statuses["RUNNING"] == 0 and statuses["KILLED"] >= 2, (statuses, output[-3000:])
    deadline = time.monotonic() + 60
    while not all(gone_or_zombie(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert all(gone_or_zombie(pid) for pid in started), "every process the sweep started stopped with it"


@pytest.fixture
def cpu_burners() -> Iterator[None]:
    """Processes that spin on the CPU, enough to bring a 2-core machine to load 4-5 with a sweep beside them:
    three on an idle machine, none inside `make test`, whose other workers already keep it there (burners
    would only take CPU from them)."""
    busy = int(os.getloadavg()[0])
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(0, 3 - busy))]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_a_local_ray_instance_starts_beside_cpu_bound_work_or_says_why_in_one_line(
    tmp_path: Path, warm_smoke_cache: Path, cpu_burners: None
) -> None:
    runs_dir, started = tmp_path / "runs", time.time()
    result = run_prism(
        "-m",
        "experiment=smoke",
        "simulation.n_steps=2",
        "hydra/launcher=prism_ray",
        runs_dir=runs_dir,
        cache_dir=warm_smoke_cache,
        timeout=900,
    )
    output = result.stdout + result.stderr
    if result.returncode == 2:  # it may not come up in time: then one line, before any run exists
        assert len(error_lines(output)) == 1 and "did not start" in output and all_runs(runs_dir) == [], output[-3000:]
        return
    assert result.returncode == 0, output[-3000:]
    port = re.search(r"Ray: local instance on 127\.0\.0\.1:(\d+)", output)
    assert port is not None, output[-3000:]
    assert not ray_head.session_dir(int(port.group(1))).exists(), "the instance's session directory was removed"
    assert Counter(run.info.status for run in all_runs(runs_dir)) == {"FINISHED": 4}
    home_token = Path.home() / ".ray" / "auth_token"
    assert not home_token.exists() or home_token.stat().st_mtime < started, "Ray wrote nothing to ~/.ray"
    assert list(runs_dir.glob("ray/local-*/auth_token")), "the local instance's token is under the runs dir"


def test_a_local_ray_instance_that_does_not_start_in_its_budget_is_one_line_and_exit_2(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    result = run_prism(
        "-m",
        "experiment=smoke",
        "hydra/launcher=prism_ray",
        "hydra.launcher.ray.start_timeout_s=0.5",
        runs_dir=runs_dir,
        cache_dir=tmp_path,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-3000:]
    errors = error_lines(output)
    assert len(errors) == 1 and "did not start in 2 attempts of 0.5 s" in errors[0], output[-3000:]
    assert "attempt 1 of 2" in output and "Traceback" not in output
    assert all_runs(runs_dir) == [] and all_runs(runs_dir, "sweep") == [], "no run exists"
