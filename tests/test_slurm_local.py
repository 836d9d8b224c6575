"""Sweeps through `hydra/launcher=prism_submitit_slurm` on a real SLURM: munged, slurmctld and one slurmd from
Debian's packages on 127.0.0.1, started as `make slurm-local` starts them and stopped by their PIDs."""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import pytest
from mlflow.entities import Run
from process_helpers import (
    HeldEncoding,
    all_runs,
    command,
    environment,
    forked,
    forked_run,
    gone_or_zombie,
    killed_if_left_running,
    run,
    wait_for_run_status,
    wait_for_running_job,
)
from test_cluster import finished_children

from prism_experiments.ops import slurm_local

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SLURM = ("hydra/launcher=prism_submitit_slurm",)
#: 2 configs (seed 0, x_algo and random); on a held cache (`held_cache`) each stays RUNNING until the test lets it go
TWO_JOBS = ("-m", "experiment=smoke", "seed=0")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm_local.SlurmLocalState]:
    """`make slurm-local`'s cluster (2 CPUs), always stopped by its PIDs, with no job process left behind."""
    missing = slurm_local.missing_binaries()
    if missing:
        pytest.skip(f"no SLURM here ({', '.join(missing)} missing): {slurm_local.APT_INSTALL}")
    runs_dir = tmp_path_factory.mktemp("slurm-local") / "runs"
    state = slurm_local.start(runs_dir, cpus=2)
    try:
        yield state
    finally:
        stopped = slurm_local.stop(runs_dir)
        assert stopped and all(gone_or_zombie(pid) for pid in state.pids())
        assert not Path(state.runtime_dir).exists()
        # no daemon and no job script (under slurmd's spool) of this cluster is left
        assert not [pid for pid in _pids() if state.runtime_dir in _cmdline(pid) or state.conf in _cmdline(pid)]


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def on_slurm(
    state: slurm_local.SlurmLocalState, *args: str, runs_dir: Path, cache_dir: Path
) -> subprocess.CompletedProcess:
    return forked_run(
        command(*args, *SLURM, runs_dir=runs_dir, cache_dir=cache_dir),
        env=environment() | state.client_env(),
        timeout=600,
    )


def start_on_slurm(state: slurm_local.SlurmLocalState, *args: str, runs_dir: Path, cache_dir: Path) -> subprocess.Popen:
    """`on_slurm`'s sweep, started in the background (a test acts on its jobs while it runs)."""
    return forked(
        command(*args, *SLURM, runs_dir=runs_dir, cache_dir=cache_dir),
        env=environment() | state.client_env(),
    )


@contextmanager
def two_jobs_one_running(
    state: slurm_local.SlurmLocalState, held_cache: HeldEncoding, runs_dir: Path, name: str
) -> Iterator[tuple[tuple[str, ...], subprocess.Popen, Run]]:
    """TWO_JOBS started on SLURM as experiment `name` on the held cache: (its arguments, the sweep, the run of a job
    held RUNNING); the sweep is killed on the way out if a step inside failed before it ended."""
    args = (*TWO_JOBS, f"experiment_name={name}")
    sweep = start_on_slurm(state, *args, runs_dir=runs_dir, cache_dir=held_cache.root)
    with killed_if_left_running(sweep):
        yield args, sweep, cast(Run, wait_for_running_job(runs_dir, timeout=300, experiment=name, sweep=sweep))


def process_environment(pid: int) -> dict[str, str]:
    """The environment a process started with (a SLURM job's carries its ids); empty once it is gone."""
    try:
        entries = Path(f"/proc/{pid}/environ").read_text().split("\0")
    except OSError:
        return {}
    return {key: value for key, _, value in (entry.partition("=") for entry in entries) if key}


def listening(state: slurm_local.SlurmLocalState) -> tuple[list[str], list[str]]:
    """`ss` lines of the TCP listeners of this cluster's processes (daemons, and a job's srun: all carry its
    SLURM_CONF), and those of them bound beyond 127.0.0.1."""
    ours = {pid for pid in _pids() if process_environment(pid).get("SLURM_CONF") == state.conf}
    lines = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout.splitlines()
    owned = [line for line in lines if any(f"pid={pid}," in line for pid in ours)]
    return owned, [line for line in owned if not line.split()[3].startswith("127.0.0.1:")]


def slurm_env(state: slurm_local.SlurmLocalState) -> dict[str, str]:
    return os.environ | state.client_env()


#: squeue's states of a job that has not ended yet (slurm.schedmd.com/squeue.html, "JOB STATE CODES")
UNENDED_STATES = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"})


def final_slurm_states(state: slurm_local.SlurmLocalState, *squeue_args: str, timeout: float = 300) -> list[str]:
    """squeue's lines for `squeue_args` once no job among them is left unended. submitit returns as soon as a job
    wrote its result, while SLURM still lists the job RUNNING until its batch script exits (seen on a loaded CI
    machine), so the test waits for SLURM's own end, not for a fixed time."""
    deadline = time.monotonic() + timeout
    while True:
        listed = subprocess.run(
            ["squeue", "--noheader", "--states=all", *squeue_args],
            capture_output=True,
            text=True,
            env=slurm_env(state),
            check=True,
        ).stdout.split("\n")
        lines = sorted(line.strip() for line in listed if line.strip())
        if lines and not [line for line in lines if line.split()[-1] in UNENDED_STATES]:
            return lines
        if time.monotonic() > deadline:
            raise AssertionError(f"SLURM never ended {squeue_args}: {lines}")
        time.sleep(0.5)


def test_missing_packages_are_one_line_naming_apt_get(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(slurm_local, "SBIN", ())
    assert slurm_local.main(["start", "--runs-dir", str(tmp_path / "runs")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "munged" in error and "apt-get install -y slurm-wlm munge" in error
    assert not (tmp_path / "runs").exists()


def test_a_smoke_sweep_on_slurm_gives_the_joblib_metrics_bit_for_bit(
    slurm: slurm_local.SlurmLocalState,
    session_cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs_dir = tmp_path / "runs"
    assert slurm_local.main(["status", "--runs-dir", str(Path(slurm.conf).parents[1])]) == 0
    assert f"export SLURM_CONF={slurm.conf}" in capsys.readouterr().out
    smoke = ("-m", "experiment=smoke", "seed=0")
    joblib = run(*smoke, "experiment_name=smoke_joblib", runs_dir=runs_dir, cache_dir=session_cache_dir)
    assert joblib.returncode == 0, joblib.stderr[-3000:]
    sweep = on_slurm(slurm, *smoke, "experiment_name=smoke_slurm", runs_dir=runs_dir, cache_dir=session_cache_dir)
    output = sweep.stdout + sweep.stderr
    assert sweep.returncode == 0, output[-3000:]
    assert "sweep progress: 2/2 jobs done, 0 failed" in output and "Traceback" not in output
    uri = f"sqlite:///{runs_dir}/mlflow.db"
    on_slurm_metrics, reference = finished_children(uri, "smoke_slurm"), finished_children(uri, "smoke_joblib")
    assert set(on_slurm_metrics) == {("0", mode) for mode in ("x_algo", "random")} == set(reference)
    for key, metrics in on_slurm_metrics.items():
        assert metrics == reference[key], key
    # the jobs ran as SLURM jobs: each submitit folder is named by its SLURM array job
    submitit = sorted(p.name for p in runs_dir.glob("hydra/smoke_slurm/*/.submitit/[0-9]*_[0-9]*"))
    assert len(submitit) == 2 and len({name.split("_")[0] for name in submitit}) == 1
    listed = final_slurm_states(slurm, "--array", "--format=%i %T", "--jobs", submitit[0].split("_")[0])
    assert listed == [f"{name} COMPLETED" for name in submitit]
    owned, beyond_loopback = listening(slurm)
    assert len(owned) >= 2 and beyond_loopback == []  # slurmctld and slurmd, on 127.0.0.1 only


def test_scancel_of_a_running_job_fails_only_it_and_the_next_sweep_runs_only_it(
    slurm: slurm_local.SlurmLocalState, held_cache: HeldEncoding, tmp_path: Path
) -> None:
    runs_dir, name = tmp_path / "runs", "slurm_scancel"
    with two_jobs_one_running(slurm, held_cache, runs_dir, name) as (args, sweep, victim):
        job_env = process_environment(int(victim.data.tags["prism.pid"]))
        assert "SLURM_ARRAY_JOB_ID" in job_env, "the job ran outside SLURM, or ended before it could be cancelled"
        slurm_job = f"{job_env['SLURM_ARRAY_JOB_ID']}_{job_env['SLURM_ARRAY_TASK_ID']}"
        assert listening(slurm)[1] == []  # srun's listeners too, while the job runs
        subprocess.run(["scancel", slurm_job], env=slurm_env(slurm), check=True, capture_output=True)
        held_cache.release()  # the other job goes on
        stdout, stderr = sweep.communicate(timeout=600)
    output = stdout + stderr
    job = victim.data.tags["prism.job_num"]
    assert sweep.returncode == 1, output[-3000:]
    died = next(line for line in output.splitlines() if f"job {job}: its submitit job {slurm_job} died" in line)
    assert died.endswith("(state: CANCELLED))"), died
    assert "1 of 2 jobs failed" in output, output[-3000:]
    assert final_slurm_states(slurm, "--format=%T", "--jobs", slurm_job) == ["CANCELLED"]
    runs = all_runs(runs_dir, experiment=name)
    assert not [r.info.run_id for r in runs if r.info.status == "RUNNING"], output[-3000:]
    cancelled = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert cancelled.info.status in ("KILLED", "FAILED"), cancelled.data.tags.get("prism.error")
    mode = cancelled.data.params["ranking.mode"]
    listed_failure = [line for line in output.splitlines() if f"ranking={mode}" in line and " -> " in line]
    assert len(listed_failure) == 1 and f" -> {cancelled.info.status}: " in listed_failure[0], output[-3000:]
    assert Counter(r.info.status for r in runs)["FINISHED"] == 1

    rerun = on_slurm(slurm, *args, runs_dir=runs_dir, cache_dir=held_cache.root)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    assert "2 jobs, 1 to run, 1 already FINISHED" in rerun.stdout + rerun.stderr
    after = all_runs(runs_dir, experiment=name)
    assert len(after) == len(runs) + 1, "the rerun ran only the cancelled job"
    finished = Counter(r.data.tags["prism.config_hash"] for r in after if r.info.status == "FINISHED")
    assert len(finished) == 2 and max(finished.values()) == 1
    assert not [r for r in after + all_runs(runs_dir, "sweep", experiment=name) if r.info.status == "RUNNING"]


def test_a_job_over_its_time_limit_fails_naming_the_limit(
    slurm: slurm_local.SlurmLocalState, held_cache: HeldEncoding, tmp_path: Path
) -> None:
    runs_dir, name = tmp_path / "runs", "slurm_time_limit"
    # the sweep asks for three minutes, with SLURM's warning signal 60 s before the end. Once the job runs (it waits
    # on the held cache's lock inside its RUNNING run, so submitit's handler exists, however fast or loaded the
    # machine), its limit is cut to SLURM's shortest, one minute, which its elapsed time and the 60 s warning
    # already reach: slurmctld's next time-limit pass (every 30 s) sends the warning, as it would at minute two of
    # three. The job's start-up alone once outlasted a limit of 1 min given at submission (the signal came before
    # the handler and killed the job unnamed), and waiting out the whole limit took minutes of the suite's time
    limit = ("hydra.launcher.timeout_min=3", "hydra.launcher.signal_delay_s=60")
    args = ("-m", "experiment=smoke", "seed=0", "ranking=random", *limit)
    sweep = start_on_slurm(slurm, *args, f"experiment_name={name}", runs_dir=runs_dir, cache_dir=held_cache.root)
    with killed_if_left_running(sweep):
        running = cast(Run, wait_for_running_job(runs_dir, timeout=300, experiment=name, sweep=sweep))
        job_id = process_environment(int(running.data.tags["prism.pid"]))["SLURM_JOB_ID"]
        subprocess.run(["scontrol", "update", f"JobId={job_id}", "TimeLimit=1"], env=slurm_env(slurm), check=True)
        stdout, stderr = sweep.communicate(timeout=600)
    output = stdout + stderr
    assert sweep.returncode == 1, output[-3000:]
    assert "1 of 1 jobs failed" in output, output[-3000:]
    listed = [line for line in output.splitlines() if "ranking=random" in line and " -> FAILED: " in line]
    assert len(listed) == 1 and "over its time limit, hydra.launcher.timeout_min=3" in listed[0], output[-3000:]
    (timed_out,) = all_runs(runs_dir, experiment=name)
    assert timed_out.info.status == "FAILED"
    assert "over its time limit, hydra.launcher.timeout_min=3" in timed_out.data.tags["prism.error"]


def test_a_preempted_job_is_requeued_and_its_config_finishes_once(
    slurm: slurm_local.SlurmLocalState, held_cache: HeldEncoding, tmp_path: Path
) -> None:
    runs_dir, name = tmp_path / "runs", "slurm_preempted"
    with two_jobs_one_running(slurm, held_cache, runs_dir, name) as (_, sweep, victim):
        # a job of the higher-priority partition that needs the whole node: SLURM preempts the running sweep jobs
        urgent = ["sbatch", f"--partition={slurm_local.URGENT_PARTITION}", "--cpus-per-task=2", "--wrap", "sleep 1"]
        subprocess.run(urgent, env=slurm_env(slurm), check=True, capture_output=True, cwd=tmp_path)
        # held until SLURM preempted it: the requeued jobs then run to the end
        wait_for_run_status(runs_dir, victim.info.run_id, {"KILLED"}, sweep=sweep, timeout=300)
        held_cache.release()
        stdout, stderr = sweep.communicate(timeout=900)
    output = stdout + stderr
    assert sweep.returncode == 0, output[-3000:]
    assert "sweep progress: 2/2 jobs done, 0 failed" in output, output[-3000:]
    runs = all_runs(runs_dir, experiment=name)
    assert not [r for r in runs if r.info.status == "RUNNING"], output[-3000:]
    finished = Counter(r.data.tags["prism.config_hash"] for r in runs if r.info.status == "FINISHED")
    assert len(finished) == 2 and set(finished.values()) == {1}, "each config FINISHED once"
    preempted = [r for r in runs if r.info.status != "FINISHED"]
    assert victim.info.run_id in {r.info.run_id for r in preempted}, "the running job was preempted"
    assert all(r.info.status == "KILLED" for r in preempted), [r.data.tags.get("prism.error") for r in preempted]
