"""The harness for real: Hydra multirun on the joblib launcher into a fresh sqlite MLflow store."""

from __future__ import annotations

import base64
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from process_helpers import (
    HeldEncoding,
    forked,
    forked_run,
    free_port,
    prism,
    start_mlflow_server,
    stop_server,
    wait_for_port,
)

from prism_experiments.metrics import summary_metric_names
from prism_experiments.tracking.experiment_views import view_state_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def client_for(runs_dir: Path) -> MlflowClient:
    return MlflowClient(f"sqlite:///{runs_dir}/mlflow.db")


def simulation_runs(runs_dir: Path, experiment: str = "smoke", extra: str = "") -> list:
    client = client_for(runs_dir)
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    query = "tags.`prism.kind` = 'simulation'" + (f" and {extra}" if extra else "")
    return client.search_runs([experiment_id], query, max_results=1000)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """experiment=smoke: 2 modes x 2 seeds on 2 joblib workers, into a fresh store."""
    runs_dir = tmp_path_factory.mktemp("sweep") / "runs"
    cwd = tmp_path_factory.mktemp("cwd")
    return runs_dir, prism("-m", "experiment=smoke", runs_dir=runs_dir, cwd=cwd)


def test_sweep_logs_four_finished_children_under_one_parent(swept) -> None:
    runs_dir, process = swept
    assert process.returncode == 0, process.stderr[-3000:]
    # the driver embedded both seeds' starting corpora (a fresh cache) before any job started
    upfront = re.search(
        r"starting corpora of (\d+) worlds: (\d+) distinct texts \(0 more from[^)]*\), (\d+) embedded now",
        process.stdout + process.stderr,
    )
    assert upfront and upfront.group(1) == "2" and int(upfront.group(3)) == int(upfront.group(2)) > 0, process.stderr[
        -3000:
    ]
    client = client_for(runs_dir)
    experiment = client.get_experiment_by_name("smoke")
    parents = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'sweep'")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    children = simulation_runs(runs_dir)
    assert len(children) == 4
    assert {run.info.status for run in children} == {"FINISHED"}
    assert {run.data.tags["mlflow.parentRunId"] for run in children} == {parents[0].info.run_id}
    assert {(run.data.tags["prism.condition"], run.data.tags["prism.seed"]) for run in children} == {
        ("x_algo", "0"),
        ("x_algo", "1"),
        ("random", "0"),
        ("random", "1"),
    }
    for run in children:
        assert set(summary_metric_names()) <= set(run.data.metrics)
        # the calibration moments are run metrics: how far each run is from the world's targets
        for share in ("author_top10_post_share", "never_reshared_share", "cascades_reaching_10_share"):
            assert 0.0 <= run.data.metrics[share] <= 1.0, share
        assert run.data.metrics["cascades_reaching_100_share"] == 0.0  # 30 agents: no cascade reaches 100
        assert math.isnan(run.data.metrics["large_cascade_structural_virality"])
        assert run.data.params["ranking.mode"] in ("x_algo", "random")
        assert run.data.params["agents.n_agents"] == "30"
        for tag in ("prism.sweep_id", "prism.config_hash", "prism.git_commit", "prism.version.mlflow"):
            assert run.data.tags[tag]
        history = client.get_metric_history(run.info.run_id, "step/impressions")
        assert sorted(m.step for m in history) == list(range(6))
        artifacts = _artifact_paths(client, run.info.run_id)
        for expected in (
            "config/resolved.yaml",
            "config/overrides.yaml",
            "summary.json",
            "tables/exposures.parquet",
            "tables/engagements.parquet",
            "tables/posts.parquet",
            "tables/follows.parquet",
            "tables/cascade_edges.parquet",
            "tables/cascades.parquet",
            "tables/engagement_by_format.csv",
            "figures/inn_share.png",
            "figures/feed_topic_entropy.png",
            "figures/cascade_size_ccdf.png",
        ):
            assert expected in artifacts, expected
        assert any(path.startswith("feeds/") for path in artifacts)


def test_sweep_describes_its_experiment_and_parent_run_and_reports_progress(swept, tmp_path: Path) -> None:
    runs_dir, process = swept
    client = client_for(runs_dir)
    experiment = client.get_experiment_by_name("smoke")
    note = experiment.tags["mlflow.note.content"]
    assert "`ranking` = x_algo, random" in note and "**Seeds**: 2 per condition (4 jobs" in note
    assert "-m experiment=smoke" in note and "**Latest analysis**: none yet" in note
    parent = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'sweep'")[0]
    assert parent.info.run_id in note
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    view = view_state_of(experiment.tags["mlflow.sharedViewState.prism-by-condition"])
    assert view["groupBy"]["groupByKeys"] == [{"mode": "tag", "groupByData": "prism.condition"}]
    assert "metrics.`inn_share`" in view["selectedColumns"]
    assert {k: parent.data.metrics[f"children_{k}"] for k in ("finished", "failed", "killed", "running")} == {
        "finished": 4,
        "failed": 0,
        "killed": 0,
        "running": 0,
    }
    means = pd.read_csv(client.download_artifacts(parent.info.run_id, "sweep/condition_means.csv", str(tmp_path)))
    table = json.loads(
        Path(client.download_artifacts(parent.info.run_id, "sweep/condition_means.json", str(tmp_path))).read_text()
    )
    assert table["columns"][:2] == ["condition", "n_runs"] and len(table["data"]) == 2
    children = simulation_runs(runs_dir)
    for row in means.itertuples(index=False):
        mine = [run for run in children if run.data.tags["prism.condition"] == row.condition]
        assert row.n_runs == len(mine) == 2
        assert row.inn_share == pytest.approx(sum(run.data.metrics["inn_share"] for run in mine) / 2, rel=1e-12)
    log = process.stdout + process.stderr
    for done in range(1, 4):
        assert f"sweep progress: {done}/4 jobs done, 0 failed, ETA " in log
    assert "sweep progress: 4/4 jobs done, 0 failed, finished in " in log
    # smoke's 30 agents are 0.15x the 200 the default world was fitted at: the sweep says so once, not per job
    size_warnings = [line for line in log.splitlines() if "was fitted at agents.n_agents=200; this run has 30" in line]
    assert len(size_warnings) == 1 and "world=x2023" in size_warnings[0], log[-3000:]


def test_ui_prints_the_url_of_the_latest_experiments_runs_view(swept) -> None:
    runs_dir, _ = swept
    port = free_port()
    uri = f"sqlite:///{runs_dir}/mlflow.db"
    ui = forked([sys.executable, "-m", "prism_experiments.ops.ui", "--port", str(port),
                           "--tracking-uri", uri, "--no-browser"],
                          stderr=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ))  # fmt: skip
    try:
        lines = [ui.stdout.readline(), ui.stdout.readline()]
        match = re.search(
            rf"open (http://127\.0\.0\.1:{port}/#/experiments/(\d+)/runs\?viewStateShareKey=([\w-]+)"
            r"&workflowType=machine_learning)",
            lines[1],
        )
        assert match, lines
        experiment_id, key = match.group(2), match.group(3)
        wait_for_port(port)
        base = f"http://127.0.0.1:{port}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1, never a proxy
        with opener.open(f"{base}/ajax-api/2.0/mlflow/experiments/get?experiment_id={experiment_id}",
                         timeout=30) as response:  # fmt: skip
            experiment = json.load(response)["experiment"]
        tags = {tag["key"]: tag["value"] for tag in experiment["tags"]}
        assert experiment["name"] == "smoke" and experiment["lifecycle_stage"] == "active"
        assert view_state_of(tags[f"mlflow.sharedViewState.{key}"])["groupBy"]["groupByKeys"][0]["groupByData"] == (
            "prism.condition"
        )
        with opener.open(base + "/", timeout=30) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
    finally:
        stop_server(ui)
    with socket.socket() as sock:  # the UI's own server went with it
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    unknown = forked_run(
        [
            sys.executable,
            "-m",
            "prism_experiments.ops.ui",
            "--tracking-uri",
            uri,
            "--experiment",
            "nope",
            "--no-browser",
        ],
        env=dict(os.environ),
    )
    assert unknown.returncode == 2 and unknown.stderr.startswith("prism-ui: error: experiment: no experiment named")


def test_logged_tables_reproduce_the_logged_metrics(swept, tmp_path: Path) -> None:
    from prism_experiments.domain import EventLog
    from prism_experiments.metrics import summarize

    runs_dir, _ = swept
    run = simulation_runs(runs_dir)[0]
    local = client_for(runs_dir).download_artifacts(run.info.run_id, "tables", str(tmp_path))
    summary = summarize(EventLog.from_parquet(local))
    for name in summary_metric_names():
        assert summary[name] == pytest.approx(run.data.metrics[name], nan_ok=True), name


def test_nothing_is_written_to_the_current_directory(swept) -> None:
    runs_dir, _ = swept
    cwd = next(p for p in runs_dir.parent.parent.iterdir() if p.name.startswith("cwd"))
    assert list(cwd.iterdir()) == []
    assert (runs_dir / "mlflow.db").is_file() and (runs_dir / "mlartifacts").is_dir()
    assert list((runs_dir / "hydra" / "smoke").iterdir())


def test_running_the_sweep_again_creates_no_runs(swept) -> None:
    runs_dir, _ = swept
    before = len(
        client_for(runs_dir).search_runs(
            [client_for(runs_dir).get_experiment_by_name("smoke").experiment_id], "", max_results=1000
        )
    )
    earlier = set((runs_dir / "hydra" / "smoke").iterdir())
    again = prism("-m", "experiment=smoke", runs_dir=runs_dir)
    assert again.returncode == 0, again.stderr[-3000:]
    after = len(
        client_for(runs_dir).search_runs(
            [client_for(runs_dir).get_experiment_by_name("smoke").experiment_id], "", max_results=1000
        )
    )
    assert after == before
    assert "already have FINISHED runs" in again.stderr + again.stdout
    # no job process started (the workers' own "skipping" line is absent) and no job folder was written; the 4 jobs
    # (2 modes x 2 seeds) took 2 Hydra compositions, one per mode
    assert "skipping: this config" not in again.stderr + again.stdout
    assert "sweep: 4 jobs valid (2 distinct compositions)" in again.stderr + again.stdout
    (sweep_dir,) = set((runs_dir / "hydra" / "smoke").iterdir()) - earlier
    assert [path.name for path in sweep_dir.iterdir() if path.is_dir()] == [], "no folder for a skipped job"


def test_a_failing_job_is_failed_the_others_finish_and_the_sweep_exits_nonzero(swept, tmp_path: Path) -> None:
    """One job's Chroma store cannot be created (its path runs through a regular file): a failure only the
    job meets, since the driver checks corpus files, runs dir and server before starting any job. On workers that
    loky spawns (`start_method=loky`); every other joblib sweep of the suite forks them from the fork server."""
    runs_dir, _ = swept
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    good, bad = tmp_path / "chroma", blocker / "chroma"
    failing = prism(
        "-m",
        "experiment=smoke",
        "seed=0",  # a world the module's sweep embedded: the jobs load no model
        "ranking=x_algo",
        "rag.client=persistent",
        f"rag.persist_directory={good},{bad}",
        "hydra.launcher.start_method=loky",
        runs_dir=runs_dir,
    )
    assert failing.returncode == 1, (failing.stdout + failing.stderr)[-3000:]
    assert "1 of 2 jobs failed" in failing.stderr + failing.stdout
    runs = simulation_runs(runs_dir, extra="params.`rag.client` = 'persistent'")
    by_cache = {run.data.params["rag.persist_directory"]: run for run in runs}
    assert by_cache[str(bad)].info.status == "FAILED"
    assert "a-file" in by_cache[str(bad)].data.tags["prism.error"]
    assert by_cache[str(good)].info.status == "FINISHED"
    parent = client_for(runs_dir).get_run(by_cache[str(bad)].data.tags["mlflow.parentRunId"])
    assert parent.info.status == "FAILED"
    assert (parent.data.metrics["children_finished"], parent.data.metrics["children_failed"]) == (1, 1)
    assert "sweep progress: 2/2 jobs done, 1 failed, finished in " in failing.stdout + failing.stderr


def test_bad_override_fails_before_any_run_is_created(swept) -> None:
    runs_dir, _ = swept
    count = len(simulation_runs(runs_dir))
    bad_value = prism("-m", "experiment=smoke", "rag.feed_size=0", runs_dir=runs_dir)
    assert bad_value.returncode == 2 and "rag.feed_size" in bad_value.stderr + bad_value.stdout
    bad_choice = prism("-m", "experiment=smoke", "ranking=bogus", runs_dir=runs_dir)
    assert bad_choice.returncode != 0 and "bogus" in bad_choice.stderr + bad_choice.stdout
    single = prism("experiment=smoke", "ranking.reply_scale=2", runs_dir=runs_dir)
    assert single.returncode == 2 and "ranking.reply_scale" in single.stderr + single.stdout
    assert len(simulation_runs(runs_dir)) == count


def test_same_config_logged_twice_gives_identical_metrics_and_reproduce_agrees(swept) -> None:
    runs_dir, _ = swept
    forced = prism("experiment=smoke", "seed=1", "ranking=random", "+force=true", runs_dir=runs_dir)
    assert forced.returncode == 0, forced.stderr[-3000:]
    pair = simulation_runs(runs_dir, extra="tags.`prism.seed` = '1' and params.`ranking.mode` = 'random'")
    assert len(pair) == 2
    assert pair[0].data.tags["prism.config_hash"] == pair[1].data.tags["prism.config_hash"]
    for name in summary_metric_names():
        assert pair[0].data.metrics[name] == pytest.approx(pair[1].data.metrics[name], nan_ok=True, rel=0, abs=0)
    reproduced = forked_run(
        [
            sys.executable,
            "-m",
            "prism_experiments.harness.reproduce",
            pair[0].info.run_id,
            "--tracking-uri",
            f"sqlite:///{runs_dir}/mlflow.db",
        ],
        timeout=600,
        env=dict(os.environ),
    )
    assert reproduced.returncode == 0, reproduced.stdout + reproduced.stderr
    n_metrics = len(summary_metric_names())
    assert f"{n_metrics} of {n_metrics} metrics equal" in reproduced.stdout


def test_compare_reports_on_the_smoke_sweep(swept, tmp_path: Path) -> None:
    runs_dir, _ = swept
    client = client_for(runs_dir)
    experiment_id = client.get_experiment_by_name("smoke").experiment_id
    first_sweep = min(
        client.search_runs([experiment_id], "tags.`prism.kind` = 'sweep'"), key=lambda run: run.info.start_time
    ).data.tags["prism.sweep_id"]
    out = tmp_path / "report"
    process = forked_run(
        [
            sys.executable,
            "-m",
            "prism_experiments.analysis.cli",
            "--experiment",
            "smoke",
            "--sweep-id",
            first_sweep,
            "--tracking-uri",
            f"sqlite:///{runs_dir}/mlflow.db",
            "--out",
            str(out),
        ],
        timeout=600,
        env=dict(os.environ),
    )
    assert process.returncode == 0, process.stdout + process.stderr
    for name in ("report.md", "results.csv"):
        assert (out / name).is_file()
    assert (out / "figures" / "cascade_size_ccdf.png").is_file() and (out / "figures" / "inn_share.png").is_file()
    assert "paired" in (out / "report.md").read_text().lower()
    results = pd.read_csv(out / "results.csv")
    children = simulation_runs(runs_dir, extra=f"tags.`prism.sweep_id` = '{first_sweep}'")
    assert len(children) == 4
    for metric in ("inn_share", "feed_topic_entropy", "engagement_rate"):
        row = results[results["metric"] == metric].iloc[0]
        for side in ("a", "b"):
            mode = row[f"condition_{side}"].split("=")[-1]
            expected = sum(r.data.metrics[metric] for r in children if r.data.params["ranking.mode"] == mode) / 2
            assert row[f"mean_{side}"] == pytest.approx(expected, rel=1e-12)
    analysis = client.search_runs([experiment_id], "tags.`prism.kind` = 'analysis'")
    assert len(analysis) == 1
    assert set(analysis[0].data.tags["prism.compared_runs"].split(",")) == {r.info.run_id for r in children}
    assert_html_report(out, results)
    artifacts = _artifact_paths(client, analysis[0].info.run_id)
    assert "report.html" in artifacts and "report.md" in artifacts
    note = client.get_experiment(experiment_id).tags["mlflow.note.content"]
    assert "**Latest analysis**: [compare-" in note and analysis[0].info.run_id in note and "## smoke" in note


class _StrictHtml(HTMLParser):
    """Collects <img> and table cells; fails on a closing tag that does not match the open one."""

    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.images: list[dict[str, str]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "img":
            self.images.append(values)
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag == "table" and "data-metric" in values:
            self._table = values["data-metric"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag == "td" and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()
        if tag == "td" and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def assert_html_report(out: Path, results: pd.DataFrame) -> None:
    """report.html parses with balanced tags, embeds every figure it shows, and its numbers are results.csv's."""
    from prism_experiments.analysis.report import format_number, format_p

    text = (out / "report.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    parser = _StrictHtml()
    parser.feed(text)
    parser.close()
    assert parser.stack == []
    sources = {image["data-source"] for image in parser.images}
    metrics = list(dict.fromkeys(results["metric"]))
    expected = (
        {f"figures/forest_{m}.png" for m in metrics}
        | {f"figures/{m}.png" for m in metrics}
        | {f"figures/series_{name}.png" for name in ("inn_share", "feed_topic_entropy", "engagement_rate")}
        | {"figures/cascade_size_ccdf.png"}
    )
    assert sources == expected
    for image in parser.images:
        prefix = "data:image/png;base64,"
        assert image["src"].startswith(prefix)
        assert base64.b64decode(image["src"][len(prefix) :]) == (out / image["data-source"]).read_bytes()
    assert set(parser.tables) == set(metrics)
    for metric, rows in parser.tables.items():
        body = [row for row in rows if row]
        expected_rows = results.loc[results["metric"] == metric]
        assert len(body) == len(expected_rows)
        for cells, row in zip(body, expected_rows.itertuples(index=False), strict=True):
            assert cells[:2] == [row.condition_a, row.condition_b]
            assert cells[3] == format_number(row.difference)
            assert cells[4] == f"{format_number(row.diff_ci_low)} to {format_number(row.diff_ci_high)}"
            assert cells[5] == format_p(row.p_value) and cells[6].split(" ")[0] == format_p(row.p_holm)
    summary = text[text.index("<h2>Summary</h2>") : text.index("<h2>Metrics</h2>")]
    first = results.loc[results["metric"] == "inn_share"].iloc[0]
    assert f"{format_number(abs(first.difference))} against" in summary and "2 seeds" in summary


def test_tracking_server_receives_the_run_and_its_artifacts(tmp_path: Path, warm_smoke_cache: Path) -> None:
    port = free_port()
    server = start_mlflow_server(tmp_path / "server.db", tmp_path / "server-artifacts", port)
    try:
        uri = f"http://127.0.0.1:{port}"
        process = prism(
            "experiment=smoke",
            "tracking=server",
            f"tracking.uri={uri}",
            "simulation.n_steps=3",
            f"rag.cache_dir={warm_smoke_cache}",  # no model load: the texts are not what this test is about
            runs_dir=tmp_path / "runs",
        )
        assert process.returncode == 0, process.stderr[-3000:]
        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name("smoke")
        runs = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'simulation'")
        assert len(runs) == 1 and runs[0].info.status == "FINISHED"
        assert "inn_share" in runs[0].data.metrics
        assert "tables/exposures.parquet" in _artifact_paths(client, runs[0].info.run_id)
        assert any((tmp_path / "server-artifacts").rglob("exposures.parquet"))
        assert not (tmp_path / "runs" / "mlflow.db").exists()
    finally:
        stop_server(server)


def _sigint_ignored_or_blocked(pid: int) -> bool:
    """From /proc/<pid>/status (proc(5)): SigIgn and SigBlk are masks with bit n-1 for signal n."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    bit = 1 << (signal.SIGINT - 1)
    return any(int(fields[key].strip(), 16) & bit for key in ("SigIgn", "SigBlk"))


def test_ctrl_c_leaves_no_run_running(tmp_path: Path, held_cache: HeldEncoding) -> None:
    runs_dir = tmp_path / "runs"
    environment = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR")}
    output = tmp_path / "output.log"
    with output.open("wb") as sink:
        process = forked(
            [
                sys.executable,
                "-m",
                "prism_experiments",
                "experiment=smoke",
                f"paths.runs_dir={runs_dir}",
                f"rag.cache_dir={held_cache.root}",
            ],
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        # Ctrl-C once the run exists (its line is logged after its creation) and waits on the held cache, however
        # fast the machine: a SIGINT during start-up (native imports) was seen unanswered under load, and the store
        # is opened only after the run exists (a client opening the sqlite file while the child migrates it races
        # the migration)
        deadline = time.time() + 300
        while not re.search(rb"MLflow run [0-9a-f]+ \(", output.read_bytes()):
            assert time.time() < deadline and process.poll() is None, output.read_text()[-2000:]
            time.sleep(0.5)
        assert not _sigint_ignored_or_blocked(process.pid), "the child could not see a Ctrl-C"
        process.send_signal(signal.SIGINT)
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    runs = simulation_runs(runs_dir)
    assert len(runs) == 1
    assert runs[0].info.status == "KILLED"
    assert runs[0].data.tags["prism.error"] == "interrupted (Ctrl-C)"
    assert process.returncode != 0


def _artifact_paths(client: MlflowClient, run_id: str, path: str | None = None) -> set[str]:
    found: set[str] = set()
    for item in client.list_artifacts(run_id, path):
        if item.is_dir:
            found |= _artifact_paths(client, run_id, item.path)
        else:
            found.add(item.path)
    return found
