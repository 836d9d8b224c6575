"""Fault injection on the real stack at smoke size: killed processes, concurrent sweeps, bad inputs,
a dead tracking server. Nothing may stay RUNNING, be orphaned, or run twice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from process_helpers import (
    LONG_SMOKE,
    SMOKE_SWEEP,
    HeldEncoding,
    all_runs,
    captured,
    free_port,
    python_module,
    run,
    start,
    wait_for_running_job,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def cache_dir(warm_smoke_cache: Path) -> Path:
    return warm_smoke_cache


def test_killed_worker_fails_its_job_and_the_others_run(tmp_path: Path, held_cache: HeldEncoding) -> None:
    runs_dir = tmp_path / "runs"
    sweep = start(*SMOKE_SWEEP, runs_dir=runs_dir, cache_dir=held_cache.root)
    victim = wait_for_running_job(runs_dir, sweep=sweep)
    os.kill(int(victim.data.tags["prism.pid"]), signal.SIGKILL)
    held_cache.release()  # the other jobs go on
    stdout, stderr = sweep.communicate(timeout=600)
    stderr = stdout + stderr  # Hydra logs the driver to stdout
    assert sweep.returncode == 1, stderr[-3000:]
    assert "Traceback" not in stderr and "a worker process died" in stderr
    runs = all_runs(runs_dir)
    statuses = Counter(r.info.status for r in runs)
    assert statuses["RUNNING"] == 0
    killed = next(r for r in runs if r.info.run_id == victim.info.run_id)
    assert killed.info.status == "FAILED" and "process died" in killed.data.tags["prism.error"]
    finished = {r.data.tags["prism.config_hash"] for r in runs if r.info.status == "FINISHED"}
    failed = {r.data.tags["prism.config_hash"] for r in runs if r.info.status == "FAILED"}
    assert len(finished | failed) == 4, "every job ran or is listed as failed; queued jobs were not dropped"
    assert "jobs failed" in stderr and victim.data.tags["prism.overrides"] in stderr
    (parent,) = all_runs(runs_dir, "sweep")
    assert parent.info.status == "FAILED"


def test_the_same_sweep_started_twice_runs_every_job_once(tmp_path: Path, cache_dir: Path) -> None:
    runs_dir = tmp_path / "runs"  # no store yet: the two also race to create it (tracking/store.py's lock)
    both = [start(*LONG_SMOKE, runs_dir=runs_dir, cache_dir=cache_dir) for _ in range(2)]
    outputs = [process.communicate(timeout=900) for process in both]
    assert [process.returncode for process in both] == [0, 0], outputs[0][1][-2000:] + outputs[1][1][-2000:]
    finished = Counter(r.data.tags["prism.config_hash"] for r in all_runs(runs_dir) if r.info.status == "FINISHED")
    assert len(finished) == 4 and max(finished.values()) == 1, finished
    assert any("skipped" in out + err or "skipping" in out + err for out, err in outputs), "the second sweep says so"
    # the session's warm cache (tests/conftest.py) holds every text of these sweeps: no worker loads the model
    assert all("the sweep encoded 0 texts" in out + err for out, err in outputs), outputs[0][1][-2000:]


@pytest.mark.parametrize(
    "args, field",
    [
        (("ranking=bogus",), "ranking"),
        (("-m", "experiment=smoke", "ranking=x_algo,bogus"), "ranking"),
        (("experiment=nope",), "experiment"),
        (("paths.runs_dir=/proc/nonexistent/runs",), "paths.runs_dir"),
        (("-m", "experiment=smoke", "corpus=file", "corpus.path=/nonexistent.csv"), "corpus.path"),
        (("network=file", "network.path=/nonexistent.txt"), "network.path"),
        (("-m", "experiment=smoke", "agents=file", "agents.path=/nonexistent.csv"), "agents.path"),
        (("rag.feed_size=0",), "rag.feed_size"),
        (("-m", "experiment=smoke", "simulation.n_steps=-1"), "simulation.n_steps"),
        (("corpus=file", "corpus.path={empty_csv}"), "corpus.path"),
        (("-m", "experiment=smoke", "corpus=file", "corpus.path={empty_csv}"), "corpus.path"),
        # later cases last: a case's id is its index, and the suite's ids are kept from one version to the next
        (("ranking=collaborative", "ranking.retrain_every_steps=0"), "ranking.retrain_every_steps"),
        (("ranking=collaborative", "ranking.factors=0"), "ranking.factors"),
        (("ranking=collaborative", "ranking.regularization=-0.1"), "ranking.regularization"),
        # politics (REQ-POL-3, docs/politics.md): a position off the axis, a homophily or animosity setting out of range
        (("agents=file", "agents.path={bad_positions}", "agents.politics.enabled=true"), "agents.path"),
        (("agents.politics.enabled=true", "agents.politics.homophily=0.5"), "agents.politics.homophily"),
        (("agents.politics.enabled=true", "agents.politics.outgroup_log_odds=-1"), "agents.politics.outgroup_log_odds"),
        (("agents.politics.left_share=0.7", "agents.politics.right_share=0.5"), "agents.politics.left_share"),
    ],
)
def test_startup_errors_are_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], field: str) -> None:
    runs_dir = tmp_path / "new" / "runs"  # neither exists yet: the command must not leave them behind
    empty_csv = tmp_path / "empty.csv"
    empty_csv.write_text("")
    bad_positions = tmp_path / "positions.csv"
    bad_positions.write_text("agent_id,position\na,2\n")
    args = tuple(arg.format(empty_csv=empty_csv, bad_positions=bad_positions) for arg in args)
    own_runs_dir = () if any(a.startswith("paths.") for a in args) else (f"paths.runs_dir={runs_dir}",)
    process = captured(python_module("prism_experiments", *args, f"rag.cache_dir={tmp_path}", *own_runs_dir), 120)
    assert process.returncode == 2, process.stderr[-2000:]
    output = process.stdout + process.stderr  # a sweep's driver logs through Hydra's stdout handler
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and field in errors[0] and "Traceback" not in output, output[-2000:]
    assert not (tmp_path / "new").exists(), "a config error leaves no folder behind, the runs dir included"


def test_no_server_listening_is_a_clear_error_within_seconds(tmp_path: Path) -> None:
    port = free_port()
    started = time.monotonic()
    server = ("tracking=server", f"tracking.uri=http://127.0.0.1:{port}")
    args = ("-m", "experiment=smoke", *server, f"paths.runs_dir={tmp_path / 'runs'}")
    process = captured(python_module("prism_experiments", *args), 120)
    elapsed = time.monotonic() - started
    output = process.stdout + process.stderr
    # one refused connection, no retry loop (MLflow's own retries with backoff take minutes); the bound is a safety
    # net that leaves start-up on a loaded machine its time
    assert process.returncode == 2 and "Retrying" not in output and elapsed < 60, output[-2000:]
    assert f"no MLflow server answers at http://127.0.0.1:{port}" in output


def test_compare_on_a_store_where_every_run_failed_says_so(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("smoke")
    for seed, status in enumerate(["FAILED", "FAILED", "KILLED"]):
        run_id = client.create_run(
            experiment_id, tags={"prism.kind": "simulation", "prism.seed": str(seed)}
        ).info.run_id
        client.set_terminated(run_id, status)
    args = ("--experiment", "smoke", "--tracking-uri", uri, "--out", str(tmp_path / "report"))
    compare = captured(python_module("prism_experiments.analysis.cli", *args), 120)
    assert compare.returncode == 2, compare.stderr[-2000:]
    assert "none of the 3 simulation runs is FINISHED (2 FAILED, 1 KILLED)" in compare.stderr


def test_compare_on_a_stopped_sweep_answers_before_loading_the_report_stack(tmp_path: Path) -> None:
    """A sweep stopped before its first job leaves an experiment with only its parent run: the one-line answer
    comes from one query, without importing matplotlib and the report writers (which took minutes under load)."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    parent = client.create_run(client.create_experiment("stopped"), tags={"prism.kind": "sweep"}).info.run_id
    client.set_terminated(parent, "KILLED")
    code = (
        "import sys; from prism_experiments.analysis.cli import main; "
        f"code = main(['--experiment', 'stopped', '--tracking-uri', '{uri}']); "
        "print(code, 'matplotlib' in sys.modules)"
    )
    result = captured([sys.executable, "-c", code], 120)
    assert result.stdout.split() == ["2", "False"], result.stdout + result.stderr[-2000:]
    assert "experiment 'stopped' has no simulation runs" in result.stderr


def test_reproduce_of_a_run_that_never_finished_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from prism_experiments.harness.reproduce import main as reproduce_main

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("smoke"), tags={"prism.kind": "simulation"}).info.run_id
    assert reproduce_main([run_id, "--tracking-uri", uri]) == 2
    assert f"run {run_id} never finished (status RUNNING)" in capsys.readouterr().err


def test_reproduce_of_a_sweeps_parent_lists_its_children(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from prism_experiments.harness.reproduce import main as reproduce_main

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("smoke")
    parent = client.create_run(experiment_id, tags={"prism.kind": "sweep", "prism.sweep_id": "smoke-1a2b3c4d"})
    parent_id = parent.info.run_id
    children = [
        client.create_run(
            experiment_id,
            tags={
                "prism.kind": "simulation",
                "mlflow.parentRunId": parent_id,
                "prism.condition": mode,
                "prism.seed": "0",
            },
        ).info.run_id
        for mode in ("x_algo", "random")
    ]
    for run_id in [*children, parent_id]:
        client.set_terminated(run_id, "FINISHED")
    assert reproduce_main([parent_id, "--tracking-uri", uri]) == 2
    error = capsys.readouterr().err
    assert f"run {parent_id} is a sweep's parent run (sweep smoke-1a2b3c4d)" in error, error
    assert all(child in error for child in children) and "x_algo, seed 0, FINISHED" in error, error
    assert "MlflowException" not in error and len([line for line in error.splitlines() if "reproduce" in line]) == 1


def test_reproduce_of_a_run_from_another_store_names_the_store_searched(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from prism_experiments.harness.reproduce import main as reproduce_main

    elsewhere = MlflowClient(f"sqlite:///{tmp_path}/elsewhere.db")
    run_id = elsewhere.create_run(elsewhere.create_experiment("smoke")).info.run_id
    searched = f"sqlite:///{tmp_path}/mlflow.db"
    MlflowClient(searched).create_experiment("smoke")  # a store that exists, without that run
    assert reproduce_main([run_id, "--tracking-uri", searched]) == 2
    error = capsys.readouterr().err
    assert f"run {run_id} is not in the tracking store {searched}" in error and "--tracking-uri" in error, error
    assert len([line for line in error.splitlines() if "reproduce" in line]) == 1, error


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    """A 64 MiB tmpfs mounted for this test (root only: CI and this machine run as root with CAP_SYS_ADMIN)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}): the disk-full test needs root")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=True)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full (ENOSPC); returns it, so the test can free the space. Unbuffered: a
    buffered file would flush the last partial block again at its close, and raise ENOSPC there."""
    filler = disk / "filler"
    block = b"\0" * (1 << 20)
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(block)
                handle.flush()
        except OSError as error:
            assert error.errno == 28, error  # ENOSPC
    return filler


def test_a_full_disk_leaves_the_store_intact_and_the_next_sweep_finishes(
    small_disk: Path, held_cache: HeldEncoding
) -> None:
    """The runs dir's disk fills up mid-sweep: the sweep fails, the sqlite store stays sound, and once space is
    freed the next sweep reaps what was left RUNNING and runs every job once."""
    runs_dir, cache_dir = small_disk / "runs", held_cache.root  # the cache is on another disk
    sweep = start(*SMOKE_SWEEP, runs_dir=runs_dir, cache_dir=cache_dir)
    wait_for_running_job(runs_dir, sweep=sweep)
    filler = fill(small_disk)
    held_cache.release()  # the running jobs go on, onto a full disk
    stdout, stderr = sweep.communicate(timeout=600)
    output = stdout + stderr
    assert sweep.returncode == 1, output[-3000:]
    assert "jobs failed" in output, output[-3000:]
    with sqlite3.connect(runs_dir / "mlflow.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    filler.unlink()
    rerun = run(*SMOKE_SWEEP, runs_dir=runs_dir, cache_dir=cache_dir)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    runs = all_runs(runs_dir) + all_runs(runs_dir, "sweep")
    assert not [r for r in runs if r.info.status == "RUNNING"], "the reaper closed what the full disk left"
    finished = [r for r in runs if r.info.status == "FINISHED" and r.data.tags["prism.kind"] == "simulation"]
    assert sorted(Counter(r.data.tags["prism.config_hash"] for r in finished).values()) == [1, 1, 1, 1]
    client = MlflowClient(f"sqlite:///{runs_dir}/mlflow.db")
    for finished_run in finished:
        tables = client.download_artifacts(
            finished_run.info.run_id, "tables", str(small_disk / finished_run.info.run_id)
        )
        assert pd.read_parquet(Path(tables) / "exposures.parquet").shape[0] > 0
