"""The metric registry: a metric registers itself once, and the summary, the compared metrics, report.html, the MLflow
grouped view and docs/metrics.md's table follow from that registration alone."""

from __future__ import annotations

import contextlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from test_metrics import hand_built_log

import prism_experiments.metrics.summary_metrics as summary_metrics_package
from prism_experiments.analysis.html_report import metric_name
from prism_experiments.analysis.selection import choose_metrics
from prism_experiments.harness.sweep_summary import children_frame, condition_means
from prism_experiments.metrics import (
    METRICS,
    Metric,
    RunTables,
    docs_table,
    headline_metric_names,
    optional_metric_names,
    primary_metric_names,
    register_metric,
    registered_metrics,
    summarize,
    summary_metric_names,
)
from prism_experiments.metrics.engagement import ratio
from prism_experiments.tracking.experiment_views import runs_view_state, view_state_of, view_tags

NEW_METRIC = "test_like_share"
NEW_LABEL = "share of likes among engagements"
NEW_COLUMN = f"metrics.`{NEW_METRIC}`"


def like_share(tables: RunTables) -> float:
    """likes / engagement actions: the metric a test registers, as a metric module of summary_metrics/ would."""
    return ratio(tables.actions["like"], len(tables.engagements))


@contextlib.contextmanager
def registered_like_share() -> Iterator[None]:
    """`like_share` registered (primary and headline, as the example of docs/extending.md) for the block's duration."""
    registered_metrics()  # the real metrics first, so that the new one is appended as a new module's would be
    saved = dict(METRICS.entries)
    register_metric(
        NEW_METRIC,
        description="like actions / engagement actions",
        source="share of rows",
        columns="engagements.action",
        label=NEW_LABEL,
        primary=True,
        headline=True,
    )(like_share)
    try:
        yield
    finally:
        METRICS.entries.clear()
        METRICS.entries.update(saved)


@pytest.fixture
def with_like_share() -> Iterator[None]:
    with registered_like_share():
        yield


# --- what the registry holds ----------------------------------------------------------------------------------------


def test_every_metric_has_a_stable_name_a_one_line_description_and_a_formula_source() -> None:
    for metric in registered_metrics():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", metric.name), metric.name
        for text in (metric.description, metric.source, metric.columns):
            assert text.strip() and "\n" not in text, metric.name
    # compared by default: in every summary, or optional (in the runs it applies to: the political metrics)
    assert set(primary_metric_names()) <= set(summary_metric_names()) | set(optional_metric_names())
    assert {"like_minded_impression_share", "satisfaction_per_impression"} <= set(primary_metric_names())
    assert set(headline_metric_names()) <= set(primary_metric_names()) & set(summary_metric_names())


def test_every_module_of_the_metric_package_registers_a_metric() -> None:
    modules = {module.name for module in pkgutil.iter_modules(summary_metrics_package.__path__)}
    registering = {metric.compute.__module__.rsplit(".", 1)[1] for metric in registered_metrics()}
    assert registering == modules


def test_the_optional_metric_is_the_only_key_a_summary_may_lack() -> None:
    # the political metrics (REQ-POL-10) are in the summary of a run with politics only
    political = "prism_experiments.metrics.summary_metrics.politics."
    optional = [metric.name for metric in registered_metrics() if metric.optional]
    assert [name for name in optional if not METRICS[name].origin.startswith(political)] == ["safety_override_rate"]
    assert list(summarize(hand_built_log())) == list(summary_metric_names())


def test_a_metric_registered_twice_is_refused_and_only_an_optional_one_may_return_none() -> None:
    twice = "metric 'test_like_share' is registered twice: .*like_share, .*<lambda>"
    with registered_like_share(), pytest.raises(ValueError, match=twice):
        register_metric(NEW_METRIC, description="d", source="s", columns="c")(lambda tables: 0.0)
    with registered_like_share():
        METRICS.add("nothing", Metric("nothing", "d", "s", "c", lambda tables: None))
        with pytest.raises(TypeError, match="metric nothing: .* returned None; only an optional metric may"):
            summarize(hand_built_log())


def test_the_docs_table_is_the_registry_s() -> None:
    text = docs_table.METRICS_DOC.read_text(encoding="utf-8")
    assert docs_table.with_current_table(text) == text, f"stale metric table: run {docs_table.REGENERATE}"
    for metric in registered_metrics():
        assert docs_table.table_row(metric) in text
    assert docs_table.main(["--check"]) == 0


def test_political_metrics_are_compared_by_default_where_logged_and_their_absence_is_no_warning() -> None:
    plain = list(summary_metric_names())
    chosen, warnings = choose_metrics(None, plain)
    assert chosen == [name for name in primary_metric_names() if name in plain] and warnings == []
    political = ["like_minded_impression_share", "animosity_impression_share", "satisfaction_per_impression"]
    chosen, warnings = choose_metrics(None, [*plain, *political, "reshare_assortativity"])
    assert chosen[-3:] == political and "reshare_assortativity" not in chosen and warnings == []
    # a default metric that every run should log, missing, is still named
    _, warnings = choose_metrics(None, [name for name in plain if name != "inn_share"])
    assert warnings == ["default metrics not logged by any run, skipped: inn_share"]


# --- a new metric, from its registration alone -----------------------------------------------------------------------


def test_a_registered_metric_is_in_the_summary_the_defaults_the_view_and_the_docs(with_like_share: None) -> None:
    summary = summarize(hand_built_log())
    assert list(summary)[-1] == NEW_METRIC and summary[NEW_METRIC] == pytest.approx(2 / 6)  # 2 likes, 6 actions
    assert NEW_METRIC in summary_metric_names() and NEW_METRIC in primary_metric_names()
    chosen, _ = choose_metrics(None, list(summary))
    assert chosen[-1] == NEW_METRIC
    assert metric_name(NEW_METRIC) == f"{NEW_LABEL} ({NEW_METRIC})"
    assert runs_view_state()["selectedColumns"][-1] == NEW_COLUMN
    assert view_state_of(view_tags(created_ms=1)["mlflow.sharedViewState.prism-by-condition"]) == runs_view_state()
    text = docs_table.METRICS_DOC.read_text(encoding="utf-8")
    assert docs_table.with_current_table(text) != text  # the docs test would ask for the table to be regenerated
    assert f"| `{NEW_METRIC}` | like actions / engagement actions | share of rows | engagements.action |" in (
        docs_table.metric_table()
    )


@pytest.mark.integration
@pytest.mark.slow
def test_a_registered_metric_is_logged_compared_in_report_html_and_a_grouped_view_column(
    with_like_share: None, tmp_path: Path, warm_smoke_cache: Path
) -> None:
    """Real runs (smoke world, 2 modes x 2 seeds, in this process so that they see the test's registration), the
    real MLflow store, the view tags a sweep sets, and prism-compare's report."""
    from prism_experiments.analysis.cli import main as compare
    from prism_experiments.composition import compose_experiment
    from prism_experiments.harness.job import run_job
    from prism_experiments.tracking.experiment_views import apply_view_tags

    runs_dir = tmp_path / "runs"
    for mode in ("x_algo", "random"):
        for seed in (0, 1):
            overrides = ["experiment=smoke", f"ranking={mode}", f"seed={seed}", "tracking.log_figures=false"]
            places = [f"paths.runs_dir={runs_dir}", f"rag.cache_dir={warm_smoke_cache}"]
            assert run_job(compose_experiment([*overrides, *places]), overrides).status == "FINISHED"
    client = MlflowClient(f"sqlite:///{runs_dir}/mlflow.db")
    experiment = client.get_experiment_by_name("smoke")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], "tags.`prism.kind` = 'simulation'")
    assert len(runs) == 4
    for run in runs:  # logged, with the value its definition gives
        metrics = run.data.metrics
        actions = metrics["likes_total"] + metrics["reshares_total"] + metrics["replies_total"]
        assert metrics[NEW_METRIC] == pytest.approx(metrics["likes_total"] / actions, rel=1e-12)

    apply_view_tags(client, experiment.experiment_id)  # what a sweep does when it starts
    tags = client.get_experiment(experiment.experiment_id).tags
    view = view_state_of(tags["mlflow.sharedViewState.prism-by-condition"])
    assert NEW_COLUMN in view["selectedColumns"]
    means = condition_means(children_frame(runs))  # a sweep's per-condition means
    assert NEW_METRIC in means.columns and means[NEW_METRIC].notna().all()

    out = tmp_path / "report"
    assert compare(["--experiment", "smoke", "--tracking-uri", f"sqlite:///{runs_dir}/mlflow.db", "--out", str(out),
                    "--no-log", "--no-cascades"]) == 0  # fmt: skip
    results = pd.read_csv(out / "results.csv")
    assert NEW_METRIC in set(results["metric"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"<h3>{NEW_LABEL} ({NEW_METRIC})</h3>" in html
    assert f'data-metric="{NEW_METRIC}"' in html
