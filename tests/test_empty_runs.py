"""Honest empty runs (REQ-FAULT-2): a run with no impression or no engagement says why, is tagged, and compare
leaves it out in one line."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest
from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient
from process_helpers import prism

from prism_experiments.analysis.cli import main as compare_main
from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.analysis.runs import RunRecord, runs_to_table
from prism_experiments.analysis.selection import empty_runs_line, select_runs
from prism_experiments.harness.empty_run import empty_reason, empty_warning
from prism_experiments.tracking.tags import EMPTY_TAG

COUNTS = {"impressions_total": 12.0, "likes_total": 2.0, "reshares_total": 1.0, "replies_total": 0.0}


# ---------------------------------------------------------------------------------------------------- the reason
def test_a_run_with_impressions_and_engagements_is_not_empty() -> None:
    assert empty_reason(COUNTS, 30, 6) is None


def test_no_impression_is_named_with_the_world_and_the_steps() -> None:
    assert empty_reason(COUNTS | {"impressions_total": 0.0}, 3, 6) == "3 agents × 6 steps gave 0 impressions"
    assert empty_reason(COUNTS | {"impressions_total": 0.0}, 1, 1) == "1 agent × 1 step gave 0 impressions"


def test_impressions_without_engagement_are_named_too() -> None:
    quiet = COUNTS | {"likes_total": 0.0, "reshares_total": 0.0}
    assert empty_reason(quiet, 2_000, 48) == "2,000 agents × 48 steps gave 12 impressions and 0 engagements"
    assert (
        empty_reason(quiet | {"impressions_total": 1.0}, 2, 1)
        == "2 agents × 1 step gave 1 impression and 0 engagements"
    )


def test_a_summary_without_the_counts_is_not_judged() -> None:
    assert empty_reason({"engagement_rate": float("nan")}, 3, 6) is None


def test_the_warning_names_the_reason_the_tag_and_compare() -> None:
    line = empty_warning("abc", "3 agents × 6 steps gave 0 impressions")
    assert line.startswith("run abc has no metric to compare: 3 agents × 6 steps gave 0 impressions")
    assert "prism.empty" in line and "make compare leaves it out" in line


# --------------------------------------------------------------------------------------------------- the selection
def _record(run_id: str, mode: str, seed: int, empty: str | None = None) -> RunRecord:
    tags = {"prism.kind": "simulation", "prism.seed": str(seed), "prism.condition": mode}
    if empty:
        tags[EMPTY_TAG] = empty
    rate = float("nan") if empty else 0.1 + 0.01 * seed + (0.05 if mode == "x_algo" else 0.0)
    return RunRecord(run_id, "FINISHED", seed, tags, {"ranking.mode": mode, "seed": str(seed)},
                     {"engagement_rate": rate})  # fmt: skip


def test_select_runs_leaves_empty_runs_out_and_says_so_in_one_line() -> None:
    records = [_record(f"{mode}-{seed}", mode, seed) for mode in ("x_algo", "random") for seed in (0, 1)]
    records.append(_record("tiny", "random", 2, "3 agents × 6 steps gave 0 impressions"))
    selection = select_runs(runs_to_table(records), metrics=["engagement_rate"])
    assert "tiny" not in set(selection.tidy["run_id"]) and len(selection.tidy) == 4
    excluded = selection.excluded.set_index("run_id")
    assert excluded.loc["tiny", "reason"] == "empty: 3 agents × 6 steps gave 0 impressions"
    line = (
        "1 empty run(s) left out: no impression or no engagement, so no metric to compare (e.g. 3 agents × 6 steps "
        "gave 0 impressions; tag prism.empty)"
    )
    assert [w for w in selection.warnings if "empty" in w] == [line]
    assert empty_runs_line(selection.excluded) == line


def test_only_empty_runs_is_an_error_that_names_them() -> None:
    records = [_record(f"r{seed}", "random", seed, "3 agents × 6 steps gave 0 impressions") for seed in (0, 1)]
    with pytest.raises(AnalysisInputError, match=r"\(2 empty: no impression or no engagement, tag prism.empty\)"):
        select_runs(runs_to_table(records), metrics=["engagement_rate"])


def test_a_table_without_the_empty_column_still_selects() -> None:
    """Tables built by hand (older callers, tests) have no `empty` column: nothing is empty then."""
    records = [_record(f"{mode}-{seed}", mode, seed) for mode in ("x_algo", "random") for seed in (0, 1)]
    table = runs_to_table(records)
    table.info.drop(columns="empty", inplace=True)
    assert len(select_runs(table, metrics=["engagement_rate"]).tidy) == 4


# ------------------------------------------------------------------------------------------------ the real stack
def _log_run(client: MlflowClient, experiment_id: str, mode: str, seed: int) -> str:
    """A FINISHED simulation run with metrics, as a sweep's job leaves it (no simulation: the compared side)."""
    tags = {"prism.kind": "simulation", "prism.seed": str(seed), "prism.condition": mode, "prism.sweep_id": "s"}
    run_id = client.create_run(experiment_id, tags=tags).info.run_id
    client.log_batch(run_id, params=[Param("ranking.mode", mode), Param("seed", str(seed))])
    rate = 0.1 + 0.01 * seed + (0.05 if mode == "x_algo" else 0.0)
    client.log_batch(run_id, metrics=[Metric("engagement_rate", rate, 0, 0), Metric("inn_share", rate, 0, 0)])
    client.set_terminated(run_id, "FINISHED")
    return run_id


@pytest.mark.integration
def test_a_three_account_world_warns_is_tagged_and_compare_leaves_it_out(
    tmp_path: Path, warm_smoke_cache: Path
) -> None:
    """REQ-FAULT-2 on the real stack: a 3-account edge list (network=file) runs to FINISHED with 0 impressions, ends
    with a WARNING naming why and the tag `prism.empty`; `prism-compare` over it and four runs with metrics leaves it
    out and says so in one line."""
    edges = tmp_path / "edges.txt"
    edges.write_text("1 2\n2 3\n3 1\n")
    runs_dir = tmp_path / "runs"
    done = prism("experiment=smoke", "network=file", f"network.path={edges}", f"rag.cache_dir={warm_smoke_cache}",
                 runs_dir=runs_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    last = [line for line in output.splitlines() if "][prism_experiments][" in line][-1]  # the run's last log line
    assert "[WARNING]" in last and "has no metric to compare: 3 agents × 6 steps gave 0 impressions" in last, last

    uri = f"sqlite:///{runs_dir}/mlflow.db"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("smoke")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'simulation'")
    assert run.info.status == "FINISHED"
    assert run.data.tags[EMPTY_TAG] == "3 agents × 6 steps gave 0 impressions"

    for mode in ("x_algo", "random"):
        for seed in (0, 1):
            _log_run(client, experiment.experiment_id, mode, seed)
    out = tmp_path / "report"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = compare_main(["--experiment", "smoke", "--tracking-uri", uri, "--out", str(out), "--no-log",
                             "--metrics", "engagement_rate", "--no-cascades", "--no-amplification"])  # fmt: skip
    assert code == 0
    lines = [line for line in stdout.getvalue().splitlines() if "empty run(s) left out" in line]
    assert lines == [
        "1 empty run(s) left out: no impression or no engagement, so no metric to compare (e.g. 3 agents × 6 steps "
        "gave 0 impressions; tag prism.empty)"
    ]
    excluded = pd.read_csv(out / "excluded_runs.csv")
    assert excluded["run_id"].tolist() == [run.info.run_id]
    assert run.info.run_id not in (out / "compared_runs.txt").read_text()
