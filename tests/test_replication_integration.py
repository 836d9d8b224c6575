"""prism-replicate for real: a smoke-size sweep through the harness, the report, MLflow, and make compare's
field-study sections on the same runs."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from process_helpers import forked_run

from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.experiment_comparison import compare_experiment
from prism_experiments.analysis.field_sections import html_sections
from prism_experiments.replication.model import NO_EVIDENCE, NOT_TESTABLE, SMOKE
from prism_experiments.replication.registry import REPLICATION_SET_VERSION
from prism_experiments.replication.runs import QUICK_EXPERIMENT

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def replicate(runs_dir: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    environment |= {"PRISM_RUNS_DIR": str(runs_dir), "PRISM_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    return forked_run([sys.executable, "-m", "prism_experiments.replication.cli", *args],
                          env=environment, timeout=900)  # fmt: skip


QUICK_JUUL = ("--quick", "--only", "juul_ugander2021", "--seeds", "2")


@pytest.fixture(scope="module")
def quick(
    tmp_path_factory: pytest.TempPathFactory, warm_smoke_cache: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`prism-replicate --quick --only juul_ugander2021 --seeds 2`: x_algo and chronological, 2 seeds, 60 agents, on
    the session's warm cache (the pool's texts and the topic descriptions: no job loads the model)."""
    runs_dir = tmp_path_factory.mktemp("replicate") / "runs"
    return runs_dir, replicate(runs_dir, warm_smoke_cache, *QUICK_JUUL)


def sweeps(runs_dir: Path) -> int:
    client = MlflowClient(uri(runs_dir))
    ids = [e.experiment_id for e in client.search_experiments()]
    return len(client.search_runs(ids, "tags.`prism.kind` = 'sweep'"))


def uri(runs_dir: Path) -> str:
    return f"sqlite:///{runs_dir}/mlflow.db"


def test_quick_runs_the_finding_through_the_harness_and_gives_no_verdict(quick) -> None:  # type: ignore[no-untyped-def]
    runs_dir, process = quick
    assert process.returncode == 0, process.stderr[-3000:]
    client = MlflowClient(uri(runs_dir))
    experiment = client.get_experiment_by_name(QUICK_EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'simulation'")
    assert sorted((r.data.params["ranking.mode"], r.data.params["seed"], r.info.status) for r in runs) == [
        ("chronological", "0", "FINISHED"), ("chronological", "1", "FINISHED"),
        ("x_algo", "0", "FINISHED"), ("x_algo", "1", "FINISHED"),
    ]  # fmt: skip
    assert {r.data.params["agents.n_agents"] for r in runs} == {"60"}
    [report] = (runs_dir / "reports" / "replication_quick").iterdir()
    verdicts = pd.read_csv(report / "verdicts.csv")
    assert set(verdicts["verdict"]) == {SMOKE} and len(verdicts) == 2
    assert verdicts["n_seeds"].tolist() == [2, 2] and verdicts["p_value"].notna().all()
    assert "SMOKE SIZE" in (report / "report.md").read_text() and (report / "report.html").is_file()
    seeds = pd.read_csv(report / "seeds.csv")
    assert set(seeds["seed"]) == {0, 1}
    # a smoke run is never a verdict: no replication run anywhere in the store
    assert not client.search_runs([e.experiment_id for e in client.search_experiments()],
                                  "tags.`prism.kind` = 'replication'")  # fmt: skip
    assert "smoke" in process.stdout


def test_a_second_run_finds_the_runs_by_config_hash_and_sweeps_nothing(quick, warm_smoke_cache: Path) -> None:  # type: ignore[no-untyped-def]
    runs_dir, _ = quick
    before = sweeps(runs_dir)
    process = replicate(runs_dir, warm_smoke_cache, *QUICK_JUUL)
    assert process.returncode == 0, process.stderr[-3000:]
    assert sweeps(runs_dir) == before  # every job's run was found: no sweep started
    assert "virality_at_matched_size" in process.stdout and "runs missing" not in process.stdout


def test_full_size_without_runs_is_logged_as_not_testable(quick) -> None:  # type: ignore[no-untyped-def]
    runs_dir, _ = quick
    process = replicate(runs_dir, runs_dir / "cache", "--only", "goel2016", "guess2023", "--seeds", "2", "--no-run")
    assert process.returncode == 0, process.stderr[-3000:]
    client = MlflowClient(uri(runs_dir))
    [run] = client.search_runs([client.get_experiment_by_name("replication").experiment_id],
                               "tags.`prism.kind` = 'replication'")  # fmt: skip
    assert run.info.status == "FINISHED"
    assert run.data.tags["prism.verdict.goel2016"] == NOT_TESTABLE  # the 10,000-agent runs were never made
    # --no-run: its runs were never made; its claims are all consistency checks, so its verdict never counts
    assert run.data.tags["prism.verdict.guess2023"] == NO_EVIDENCE
    assert run.data.tags["prism.replication_set"] == str(REPLICATION_SET_VERSION)
    assert run.data.metrics["n_not_testable"] == 1 and run.data.metrics["n_consistency_only"] == 1
    # the headline and its counts are of evidence claims only: goel2016's two, neither testable here
    assert run.data.metrics["n_evidence_claims"] == 2 and run.data.metrics["n_evidence_reproduced"] == 0
    assert run.data.metrics["n_consistency_checks"] == 4 and run.data.metrics["n_consistency_hold"] == 0
    assert run.data.tags["prism.replication_headline"].startswith("0 of 2 evidence claims reproduced (2 not testable)")
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.md", "verdicts.csv", "report.html"} <= artifacts


def test_compare_adds_amplification_and_the_size_matched_comparison(quick, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runs_dir, _ = quick
    with contextlib.redirect_stdout(io.StringIO()):
        outcome = compare_experiment(QUICK_EXPERIMENT, tracking_uri=uri(runs_dir), out=tmp_path / "report",
                                     log_run=False, size_matched=True,
                                     settings=ComparisonSettings(n_resamples=200, power_replicates=0))  # fmt: skip
    amplification = pd.read_csv(tmp_path / "report" / "amplification.csv")
    assert set(amplification["condition"]) == {"mode=x_algo"} and set(amplification["control"]) == {
        "mode=chronological"
    }
    groups = amplification.loc[amplification["statistic"] == "ratio"]
    assert {"topic", "follower_decile", "archetype"} == set(groups["grouping"])
    assert (groups["n_seeds"] == 2).all()
    row = groups.iloc[0]
    assert row["amplification"] == pytest.approx(row["reach"] / row["reach_control"] - 1)
    # 60 agents: the top 1 % is one account, the top decile (6) too small for a group of 10
    distribution = amplification.loc[amplification["statistic"] != "ratio"]
    assert set(distribution["grouping"]) == {"account_top_1pct", "random_10_all"}
    units = pd.read_csv(tmp_path / "report" / "amplification_units.csv")
    assert (units.loc[units["grouping"] == "account_top_1pct"].groupby("seed").size() == 1).all()
    assert (tmp_path / "report" / "figures" / "amplification_top_accounts.png").is_file()
    matched = pd.read_csv(tmp_path / "report" / "size_matched.csv")
    assert sorted(matched["property"]) == ["depth", "structural_virality"] and (matched["n_seeds"] >= 1).all()
    text = outcome.files.report.read_text()
    assert "## Amplification ratio (Huszár et al. 2022)" in text and "at matched size" in text
    assert "size-matched vs pooled" in outcome.summary
    sections = html_sections(tmp_path / "report")
    assert "Amplification ratio" in sections and "matched size" in sections and "single accounts" in sections
    assert sections in (tmp_path / "report" / "report.html").read_text()  # report.html shows the field sections
