"""prism-compare against a real (temporary sqlite) MLflow store holding fake simulation runs."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient
from scipy import stats

from prism_experiments.analysis.cli import main

pytestmark = pytest.mark.integration

EXPERIMENT = "oon_scale"
SWEEP_ID = "sweep-test"
SEEDS = (0, 1, 2, 3, 4, 5)
SCALES = ("0.5", "1.0")


def inn_share(scale: str, seed: int) -> float:
    """Higher for the lower OON scale in every seed, so the paired test must find it."""
    return 0.6 + 0.01 * seed + (0.1 if scale == "0.5" else 0.0)


def log_simulation_run(
    client: MlflowClient, experiment_id: str, parent_id: str, scale: str, seed: int, tmp_path: Path, status: str
) -> str:
    tags = {
        "prism.kind": "simulation",
        "prism.condition": f"oon={scale}",
        "prism.seed": str(seed),
        "prism.sweep_id": SWEEP_ID,
        "prism.config_hash": "abc",
        "prism.git_commit": "deadbeef",
        "mlflow.parentRunId": parent_id,
    }
    run_id = client.create_run(experiment_id, tags=tags).info.run_id
    params = {
        "seed": str(seed),
        "ranking.mode": "x_algo",
        "ranking.out_of_network_scale": scale,
        "agents.n_agents": "50",
        "paths.runs_dir": str(tmp_path / f"runs-{run_id}"),
        "tracking.uri": "sqlite:///elsewhere.db",
        "experiment_name": EXPERIMENT,
    }
    client.log_batch(run_id, params=[Param(key, value) for key, value in params.items()])
    if status == "FINISHED":
        metrics = {
            "inn_share": inn_share(scale, seed),
            "feed_topic_entropy": 2.0 + 0.05 * ((seed * 7 + len(scale)) % 3),
            "cascade_size_mean": 1.5 + 0.1 * seed,
        }
        client.log_batch(run_id, metrics=[Metric(key, value, 0, 0) for key, value in metrics.items()])
        cascades = tmp_path / "cascades" / run_id / "cascades.parquet"
        cascades.parent.mkdir(parents=True)
        sizes = np.arange(1, 4 + seed) * (2 if scale == "0.5" else 1)
        pd.DataFrame(
            {
                "root_post_id": [f"p{i}" for i in range(sizes.size)],
                "size": sizes,
                "depth": sizes - 1,
                "max_breadth": np.ones(sizes.size, dtype=int),
                "structural_virality": np.ones(sizes.size),
                "first_step": np.zeros(sizes.size, dtype=int),
            }
        ).to_parquet(cascades, index=False)
        client.log_artifact(run_id, str(cascades), "tables")
    client.set_terminated(run_id, status)
    return run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A sqlite store with one sweep: 2 OON scales x 6 seeds FINISHED, plus one FAILED run."""
    tmp_path = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{(tmp_path / 'mlflow.db').resolve()}"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment(EXPERIMENT, artifact_location=(tmp_path / "artifacts").resolve().as_uri())
    parent = client.create_run(experiment_id, tags={"prism.kind": "sweep", "prism.sweep_id": SWEEP_ID})
    finished = {
        (scale, seed): log_simulation_run(client, experiment_id, parent.info.run_id, scale, seed, tmp_path, "FINISHED")
        for scale in SCALES
        for seed in SEEDS
    }
    failed = log_simulation_run(client, experiment_id, parent.info.run_id, "1.0", 6, tmp_path, "FAILED")
    client.set_terminated(parent.info.run_id, "FINISHED")
    return {"uri": uri, "client": client, "experiment_id": experiment_id, "finished": finished, "failed": failed,
            "tmp": tmp_path}  # fmt: skip


@pytest.fixture(scope="module")
def report(store: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = Path(str(store["tmp"])) / "report"
    capture = tmp_path_factory.mktemp("stdout") / "stdout.txt"
    with capture.open("w") as stream, contextlib.redirect_stdout(stream):
        # Holm within each metric: 6 seeds cannot pass Holm over the whole report (3 x 2/2^6 > 0.05)
        code = main(["--experiment", EXPERIMENT, "--tracking-uri", str(store["uri"]), "--out", str(out),
                     "--family", "metric"])  # fmt: skip
    return {"code": code, "out": out, "stdout": capture.read_text()}


def test_compare_succeeds_and_writes_the_report(report: dict[str, object]) -> None:
    out = Path(str(report["out"]))
    assert report["code"] == 0
    for name in ("report.md", "results.csv", "conditions.csv", "excluded_runs.csv", "figures/inn_share.png",
                 "figures/cascade_size_ccdf.png"):  # fmt: skip
        assert (out / name).is_file(), name


def test_failed_run_is_listed_as_excluded(store: dict[str, object], report: dict[str, object]) -> None:
    out = Path(str(report["out"]))
    excluded = pd.read_csv(out / "excluded_runs.csv")
    assert excluded["run_id"].tolist() == [store["failed"]]
    assert excluded["reason"].tolist() == ["status FAILED"]
    assert str(store["failed"]) in (out / "report.md").read_text()
    finished = store["finished"]
    assert isinstance(finished, dict)
    assert set((out / "compared_runs.txt").read_text().split()) == set(finished.values())


def test_results_match_the_logged_metrics(report: dict[str, object]) -> None:
    results = pd.read_csv(Path(str(report["out"])) / "results.csv")
    row = results.loc[results["metric"] == "inn_share"].iloc[0]
    assert row["condition_a"] == "out_of_network_scale=0.5"
    assert row["condition_b"] == "out_of_network_scale=1.0"
    assert row["design"] == "paired"
    low = np.array([inn_share("0.5", seed) for seed in SEEDS])
    high = np.array([inn_share("1.0", seed) for seed in SEEDS])
    assert row["mean_a"] == pytest.approx(low.mean())
    assert row["mean_b"] == pytest.approx(high.mean())
    assert row["difference"] == pytest.approx(0.1)
    assert row["p_value"] == pytest.approx(stats.wilcoxon(low, high).pvalue)
    assert row["n_pairs"] == len(SEEDS)
    assert row["p_holm"] == pytest.approx(row["p_value"]) and bool(row["significant"])
    assert set(results["metric"]) == {"inn_share", "feed_topic_entropy", "cascade_size_mean"}


def test_console_summary_reads_the_significant_result(report: dict[str, object]) -> None:
    stdout = str(report["stdout"])
    assert "inn_share: out_of_network_scale=0.5 is higher than out_of_network_scale=1.0 by 0.1 (95% CI" in stdout
    assert "excluded runs: 1" in stdout


def test_cascade_sizes_are_pooled_from_the_artifacts(report: dict[str, object]) -> None:
    ks = pd.read_csv(Path(str(report["out"])) / "cascade_ks.csv")
    low = np.concatenate([np.arange(1, 4 + seed) * 2 for seed in SEEDS])
    high = np.concatenate([np.arange(1, 4 + seed) for seed in SEEDS])
    assert ks["n_a"].tolist() == [low.size]
    assert ks["p_value"].iloc[0] == pytest.approx(stats.ks_2samp(low, high).pvalue)


def test_analysis_run_is_logged(store: dict[str, object], report: dict[str, object]) -> None:
    client = store["client"]
    assert isinstance(client, MlflowClient)
    runs = client.search_runs([str(store["experiment_id"])], filter_string="tags.`prism.kind` = 'analysis'")
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED"
    finished = store["finished"]
    assert isinstance(finished, dict)
    assert set(run.data.tags["prism.compared_runs"].split(",")) == set(finished.values())
    artifacts = {info.path for info in client.list_artifacts(run.info.run_id)}
    assert {"report.md", "results.csv", "figures"} <= artifacts
    assert run.info.run_id in (Path(str(report["out"])) / "report.md").read_text()


def test_one_condition_exits_with_code_2(store: dict[str, object], report: dict[str, object],
                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    code = main(["--experiment", EXPERIMENT, "--tracking-uri", str(store["uri"]), "--by", "n_agents", "--no-log",
                 "--out", str(Path(str(store["tmp"])) / "unused")])  # fmt: skip
    assert code == 2
    assert "nothing to compare" in capsys.readouterr().err


def test_unknown_experiment_exits_with_code_2(store: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--experiment", "nope", "--tracking-uri", str(store["uri"])]) == 2
    err = capsys.readouterr().err
    assert "no MLflow experiment named 'nope'" in err and "oon_scale" in err


def test_default_report_directory_is_under_the_runs_dir(
    store: dict[str, object], report: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs_dir = Path(str(store["tmp"])) / "project-runs"
    monkeypatch.setenv("PRISM_RUNS_DIR", str(runs_dir))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", str(store["uri"]))
    assert main(["--experiment", EXPERIMENT, "--metrics", "inn_share", "--no-log", "--no-cascades"]) == 0
    written = list((runs_dir / "reports" / EXPERIMENT).glob("*/report.md"))
    assert len(written) == 1
    assert len(written[0].parent.name) == len("YYYYmmdd-HHMMSS")


def test_missing_sqlite_store_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "absent.db"
    assert main(["--experiment", EXPERIMENT, "--tracking-uri", f"sqlite:///{database}"]) == 2
    assert not database.exists()
    assert f"no MLflow store at {database}" in capsys.readouterr().err


def test_a_run_without_cascade_table_is_warned_not_fatal(store: dict[str, object], tmp_path: Path) -> None:
    from prism_experiments.analysis.cascades import download_cascade_sizes

    client = store["client"]
    assert isinstance(client, MlflowClient)
    finished = store["finished"]
    assert isinstance(finished, dict)
    with_table, without_table = finished["0.5", 0], str(store["failed"])
    sizes, warnings = download_cascade_sizes(client, [with_table, without_table], tmp_path)
    assert sizes["size"].tolist() == [2.0, 4.0, 6.0]
    assert warnings == [f"no readable tables/cascades.parquet for 1 run(s), left out of the CCDF: {without_table}"]


def test_compare_experiment_returns_the_report_without_the_cli(store: dict[str, object], tmp_path: Path) -> None:
    from prism_experiments.analysis.experiment_comparison import compare_experiment

    client = store["client"]
    assert isinstance(client, MlflowClient)
    before = client.search_runs([str(store["experiment_id"])], filter_string="tags.`prism.kind` = 'analysis'")
    outcome = compare_experiment(EXPERIMENT, tracking_uri=str(store["uri"]), metrics=["inn_share"],
                                 out=tmp_path / "direct", cascades=False, log_run=False)  # fmt: skip
    assert outcome.files.directory == (tmp_path / "direct").resolve()
    assert outcome.files.report.is_file() and outcome.files.results.is_file()
    assert outcome.analysis_run_id is None and outcome.n_runs == 2 * len(SEEDS)
    assert outcome.summary.startswith(f"prism-compare: {EXPERIMENT}: {2 * len(SEEDS)} runs, 2 conditions")
    after = client.search_runs([str(store["experiment_id"])], filter_string="tags.`prism.kind` = 'analysis'")
    assert len(after) == len(before)


def test_power_option_prints_only_the_power_table(store: dict[str, object], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    code = main(["--experiment", EXPERIMENT, "--tracking-uri", str(store["uri"]), "--metrics", "inn_share",
                 "--no-log", "--no-cascades", "--power", "--out", str(tmp_path / "power")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("Per test at alpha 0.05") and "| inn_share | out_of_network_scale=0.5 |" in out
    assert "significant after" not in out  # the summary is not printed
    power = pd.read_csv(tmp_path / "power" / "power.csv")
    low = np.array([inn_share("0.5", seed) for seed in SEEDS])
    high = np.array([inn_share("1.0", seed) for seed in SEEDS])
    assert power["difference"].iloc[0] == pytest.approx((low - high).mean())
    # every per-seed difference is 0.1: nothing varies, so no power figure is made up
    assert "no variation" in power["note"].iloc[0]
