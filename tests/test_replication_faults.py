"""`make replicate` under faults, on the real stack at smoke size (`--quick`, one finding, 2 seeds): Ctrl-C during
one of its sweeps, then a resume that gives the numbers of an uninterrupted suite; a job that dies inside a
finding's sweep; a tracking store that does not answer at the start."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from process_helpers import HeldEncoding, all_runs, forked, forked_run, free_port, sqlite_has_running_job

from prism_experiments.replication.runs import QUICK_EXPERIMENT

pytestmark = [pytest.mark.integration, pytest.mark.slow]
#: the smallest finding at smoke size: x_algo and chronological, 2 seeds, 40 agents, 8 steps
QUICK_GUESS = ("--quick", "--only", "guess2023", "--seeds", "2")
COMMAND = [sys.executable, "-m", "prism_experiments.replication.cli"]


def suite_environment(runs_dir: Path, cache: Path, **more: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return environment | {"PRISM_RUNS_DIR": str(runs_dir), "PRISM_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"} | more


def report_of(output: str) -> Path:
    """The report directory the console summary names (`...; report: <dir>/report.md`)."""
    (line,) = [line for line in output.splitlines() if line.rstrip().endswith("report.md")][-1:]
    return Path(line.rsplit("report: ", 1)[1].strip()).parent


def claim_numbers(directory: Path) -> pd.DataFrame:
    """Every claim's numbers as the report gives them (verdicts.csv), without what names the run."""
    table = pd.read_csv(directory / "verdicts.csv")
    return table.drop(columns=[c for c in table.columns if c in ("run_id", "report")]).sort_values(["finding", "claim"])


def wait_for_running_job(runs_dir: Path, process: object, timeout: float = 300) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the suite ended before any job was seen running"  # type: ignore[attr-defined]
        # read-only until a job runs: a client of our own would race the suite's creation of the store
        if sqlite_has_running_job(runs_dir / "mlflow.db", QUICK_EXPERIMENT):
            running = [
                r
                for r in all_runs(runs_dir, experiment=QUICK_EXPERIMENT)
                if r.info.status == "RUNNING"
                and r.data.params
                and "experiment=replicate_" in r.data.tags.get("prism.overrides", "")
            ]
            if running:
                return running[0]
        time.sleep(0.5)
    raise AssertionError("no job of the suite started")


def test_ctrl_c_stops_the_suite_in_one_line_and_a_resume_gives_the_uninterrupted_numbers(
    tmp_path: Path, held_cache: HeldEncoding, warm_smoke_cache: Path
) -> None:
    interrupted_dir, whole_dir = tmp_path / "interrupted", tmp_path / "whole"
    suite = forked([*COMMAND, *QUICK_GUESS], env=suite_environment(interrupted_dir, held_cache.root),
                   start_new_session=True)  # fmt: skip
    try:
        wait_for_running_job(interrupted_dir, suite)
        os.killpg(suite.pid, signal.SIGINT)  # a terminal's Ctrl-C: the suite and its sweep's whole group
        out, err = suite.communicate(timeout=300)
    finally:
        if suite.poll() is None:
            os.killpg(suite.pid, signal.SIGKILL)
    output = str(out) + str(err)
    assert suite.returncode == 130, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert [line for line in output.splitlines() if line.startswith("prism-replicate: interrupted")], output[-3000:]
    assert not [r for r in all_runs(interrupted_dir, experiment=QUICK_EXPERIMENT) if r.info.status == "RUNNING"]
    held_cache.release()

    resumed = forked_run([*COMMAND, *QUICK_GUESS], env=suite_environment(interrupted_dir, held_cache.root))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    finished_before = {r.info.run_id for r in all_runs(interrupted_dir, experiment=QUICK_EXPERIMENT)}
    assert len([r for r in all_runs(interrupted_dir, experiment=QUICK_EXPERIMENT) if r.info.status == "FINISHED"]) == 4
    whole = forked_run([*COMMAND, *QUICK_GUESS], env=suite_environment(whole_dir, warm_smoke_cache))
    assert whole.returncode == 0, whole.stderr[-3000:]
    pd.testing.assert_frame_equal(
        claim_numbers(report_of(resumed.stdout)).reset_index(drop=True),
        claim_numbers(report_of(whole.stdout)).reset_index(drop=True),
    )
    again = forked_run([*COMMAND, *QUICK_GUESS], env=suite_environment(interrupted_dir, held_cache.root))
    assert again.returncode == 0 and "runs missing" not in again.stderr, again.stderr[-3000:]
    assert {r.info.run_id for r in all_runs(interrupted_dir, experiment=QUICK_EXPERIMENT)} == finished_before, (
        "a second resume reuses exactly the finished runs"
    )


def test_a_job_that_dies_in_a_findings_sweep_is_named_and_the_suite_exits_1(
    tmp_path: Path, held_cache: HeldEncoding
) -> None:
    """The first finding's sweep loses a job (SIGKILL: its worker pool breaks, so a job beside it may fail too); the
    other finding's runs are whole and it still gets its numbers; the first names the seeds that lack runs; the suite
    exits 1."""
    runs_dir = tmp_path / "runs"
    findings = ("guess2023", "goel2016")
    suite = forked([*COMMAND, "--quick", "--only", *findings, "--seeds", "2"],
                   env=suite_environment(runs_dir, held_cache.root))  # fmt: skip
    try:
        victim = wait_for_running_job(runs_dir, suite)
        os.kill(int(victim.data.tags["prism.pid"]), signal.SIGKILL)  # type: ignore[attr-defined]
        held_cache.release()  # the other jobs go on
        out, err = suite.communicate(timeout=600)
    finally:
        suite.kill()
    output = str(out) + str(err)
    assert suite.returncode == 1, output[-3000:]
    assert "Traceback" not in output and "sweep(s) failed" in output, output[-3000:]
    failed = [r for r in all_runs(runs_dir, experiment=QUICK_EXPERIMENT) if r.info.status == "FAILED"]
    assert victim.info.run_id in {r.info.run_id for r in failed}  # type: ignore[attr-defined]
    hit = next(f for f in findings if f"experiment=replicate_{f}" in victim.data.tags["prism.overrides"])  # type: ignore[attr-defined]
    (whole,) = set(findings) - {hit}
    verdicts = pd.read_csv(report_of(str(out)) / "verdicts.csv")
    reasons = " ".join(verdicts.loc[verdicts["finding"] == hit, "reason"].fillna(""))
    seed = victim.data.tags["prism.seed"]  # type: ignore[attr-defined]
    assert f"runs missing for {len(failed)} of" in reasons and f"seed {seed}" in reasons, reasons
    other = verdicts.loc[verdicts["finding"] == whole]
    assert not other["reason"].fillna("").str.contains("runs missing").any(), other
    assert other["n_seeds"].max() == 2, "the finding whose sweep held got its numbers from both seeds"


def test_a_tracking_store_that_does_not_answer_stops_the_suite_in_one_line_with_no_report(
    tmp_path: Path, warm_smoke_cache: Path
) -> None:
    runs_dir = tmp_path / "runs"
    dead = f"http://127.0.0.1:{free_port()}"
    result = forked_run([*COMMAND, *QUICK_GUESS], env=suite_environment(runs_dir, warm_smoke_cache) | {
        "MLFLOW_TRACKING_URI": dead})  # fmt: skip
    assert result.returncode == 1, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and dead in errors[0] and "no report written" in errors[0], result.stderr[-3000:]
    assert "Traceback" not in result.stderr + result.stdout
    assert not list(runs_dir.glob("reports/**/report.md")), "no report written as if complete"
