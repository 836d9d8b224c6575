"""How a sweep lists its failed jobs, and the one line an exception is reported in."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from prism_experiments.harness.recovery import JobRecord, failure_lines, read_outcome, write_outcome
from prism_experiments.harness.sweep_file import SweepFile, jobs_to_start
from prism_experiments.tracking.errors import error_line


def fake_run(num: int, status: str, error: str = "") -> SimpleNamespace:
    tags = {"prism.job_num": str(num), "prism.overrides": f"seed={num}", "prism.error": error}
    return SimpleNamespace(info=SimpleNamespace(run_id=f"run{num}", status=status), data=SimpleNamespace(tags=tags))


def test_runs_that_did_not_finish_and_jobs_without_a_run_are_listed(tmp_path: Path) -> None:
    children = [fake_run(0, "FINISHED"), fake_run(1, "FAILED", "ValueError: bad")]
    outcomes = {
        0: JobRecord("FINISHED", "run0"),
        1: None,
        2: JobRecord("SKIPPED", "old"),
        3: JobRecord("FAILED", None, "MlflowException: database or disk is full"),
        4: None,
    }
    lines = failure_lines(children, outcomes, tmp_path)
    assert lines == [
        "seed=1 -> FAILED: ValueError: bad",
        "job 3 -> FAILED: MlflowException: database or disk is full",
        f"job 4 -> no run and no outcome file: it could not start or write (see {tmp_path / '4'})",
    ]


def test_an_attempt_whose_config_finished_later_in_the_sweep_is_not_a_failure(tmp_path: Path) -> None:
    preempted, requeued, other = (
        fake_run(0, "KILLED", "KeyboardInterrupt: SIGTERM"),
        fake_run(0, "FINISHED"),
        fake_run(1, "KILLED"),
    )
    for run, digest in ((preempted, "aaa"), (requeued, "aaa"), (other, "bbb")):
        run.data.tags["prism.config_hash"] = digest
    outcomes = {0: JobRecord("FINISHED", "run0"), 1: None}
    assert failure_lines([preempted, requeued, other], outcomes, tmp_path) == ["seed=1 -> KILLED: "]


def test_an_unreachable_store_lists_from_the_outcome_files_alone(tmp_path: Path) -> None:
    outcomes = {0: JobRecord("FINISHED", "a"), 1: JobRecord("FAILED", None, "gone")}
    assert failure_lines(None, outcomes, tmp_path) == ["job 1 -> FAILED: gone"]
    assert failure_lines(None, {0: JobRecord("FINISHED", "a")}, tmp_path) == []


def test_an_outcome_file_round_trips_and_a_damaged_one_reads_as_missing(tmp_path: Path) -> None:
    write_outcome(tmp_path / "0", JobRecord("FAILED", "r", "boom"))
    assert read_outcome(tmp_path, 0) == JobRecord("FAILED", "r", "boom")
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "prism_outcome.json").write_text('{"status": "FIN')
    assert read_outcome(tmp_path, 1) is None and read_outcome(tmp_path, 2) is None


def test_error_line_names_the_innermost_cause() -> None:
    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError as inner:
            raise RuntimeError("(raised as a result of Query-invoked autoflush; ...)\n[SQL: INSERT ...]") from inner
    except RuntimeError as outer:
        assert error_line(outer) == "RuntimeError: database or disk is full"
    assert error_line(ValueError("first\nsecond")) == "ValueError: first"
    assert error_line(KeyError()) == "KeyError"


@pytest.mark.parametrize("status", ["SKIPPED", "FINISHED"])
def test_a_job_that_ended_well_without_a_run_in_this_sweep_is_not_a_failure(tmp_path: Path, status: str) -> None:
    assert failure_lines([], {0: JobRecord(status, "earlier")}, tmp_path) == []


def test_a_sweeps_texts_encoded_adds_the_pass_before_fan_out_to_its_runs() -> None:
    from prism_experiments.harness.sweep_summary import log_texts_encoded

    logged: dict[str, float] = {}
    client = SimpleNamespace(log_metric=lambda run_id, key, value: logged.update({f"{run_id}/{key}": value}))
    runs = [fake_run(0, "FINISHED"), fake_run(1, "FINISHED"), fake_run(2, "FAILED")]
    runs[0].data.tags["prism.timing.texts_encoded"] = "120.000"
    runs[1].data.tags["prism.timing.texts_encoded"] = "3.000"  # the third run ended before it could say
    assert log_texts_encoded(client, "parent", 4000, runs) == 4123
    assert logged == {"parent/texts_encoded": 4123}


def test_a_launcher_starts_only_the_jobs_not_finished_before_the_sweep() -> None:
    numbered = [(0, ["seed=0", "ranking=x_algo"]), (1, ["seed=0", "ranking=random"]), (2, ["seed=1", "ranking=x_algo"])]
    sweep = SweepFile("s", "sqlite:////tmp/m.db", "1", None, finished_jobs={"1": ["seed=0", "ranking=random"]})
    assert jobs_to_start(sweep, numbered) == ([numbered[0], numbered[2]], [1])
    # the same number with other overrides (a sweep the callback did not see): started, the job checks itself
    other = SweepFile("s", "sqlite:////tmp/m.db", "1", None, finished_jobs={"1": ["seed=9", "ranking=random"]})
    assert jobs_to_start(other, numbered) == (numbered, [])
    assert jobs_to_start(None, numbered) == (numbered, [])


def test_the_finished_jobs_survive_the_sweep_file(tmp_path: Path) -> None:
    sweep = SweepFile("s", "sqlite:////tmp/m.db", "1", "parent", finished_jobs={"3": ["seed=1"]})
    assert SweepFile.load(sweep.save(tmp_path / "prism_sweep.json")).finished_jobs == {"3": ["seed=1"]}


def test_a_job_killed_at_its_time_limit_is_relabelled_with_the_schedulers_reason(tmp_path: Path) -> None:
    """SLURM's SIGTERM at a time limit ends the job's run KILLED "interrupted (SIGTERM)"; the launcher, which reads
    the TIMEOUT state, re-marks that run FAILED naming the limit. A FINISHED run of the same job is never touched."""
    from prism_experiments.harness.recovery import relabel_ended_job
    from prism_experiments.tracking.store import client_for, ensure_experiment, seed_sqlite_store

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    seed_sqlite_store(uri)
    experiment_id = ensure_experiment(uri, "limits", tmp_path / "mlartifacts")
    client = client_for(uri)
    SweepFile("sweep-1", uri, experiment_id, None).save(tmp_path / "sweep" / "prism_sweep.json")
    tags = {"prism.sweep_id": "sweep-1"}
    killed = client.create_run(experiment_id, tags={**tags, "prism.job_num": "0"}).info.run_id
    client.set_terminated(killed, "KILLED")
    finished = client.create_run(experiment_id, tags={**tags, "prism.job_num": "1"}).info.run_id
    client.set_terminated(finished, "FINISHED")

    reason = "its submitit job 7_0 died (over its time limit, hydra.launcher.timeout_min=3; state: TIMEOUT)"
    assert relabel_ended_job(tmp_path / "sweep", 0, reason) == killed
    assert relabel_ended_job(tmp_path / "sweep", 1, reason) is None
    run = client.get_run(killed)
    assert (run.info.status, run.data.tags["prism.error"]) == ("FAILED", reason)
    assert read_outcome(tmp_path / "sweep", 0) == JobRecord("FAILED", killed, reason)
    assert client.get_run(finished).info.status == "FINISHED" and read_outcome(tmp_path / "sweep", 1) is None
