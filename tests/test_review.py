"""Reviewing a sweep: progress line, note, parent-run tables, runs view, report figures and sentences."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from prism_experiments.analysis.html_report import summary_rows, summary_sentence
from prism_experiments.analysis.step_series import VALUE_COLUMNS, step_bands, with_engagement_rate
from prism_experiments.harness.progress import SweepProgress, format_duration, progress_line
from prism_experiments.harness.sweep_summary import children_frame, condition_means, status_counts
from prism_experiments.plotting import condition_styles, new_figure, plain_log_axes
from prism_experiments.tracking.experiment_note import (
    NO_ANALYSIS,
    analysis_line,
    compose_note,
    split_note,
    sweep_note,
)
from prism_experiments.tracking.experiment_views import runs_view_state, runs_view_url, view_state_of, view_tags


def test_progress_line_counts_failures_and_extrapolates_the_eta() -> None:
    assert progress_line(2, 8, 1, 60.0) == "sweep progress: 2/8 jobs done, 1 failed, ETA 3m00s"
    assert progress_line(8, 8, 0, 3725.0) == "sweep progress: 8/8 jobs done, 0 failed, finished in 1h02m"
    assert progress_line(0, 3, 0, 5.0).endswith("ETA unknown")
    assert format_duration(42.4) == "42s"
    with pytest.raises(ValueError, match="^done: "):
        progress_line(5, 4, 0, 1.0)


def test_sweep_progress_emits_one_line_per_finished_job() -> None:
    lines: list[str] = []
    ticks = iter([0.0, 10.0, 30.0])
    progress = SweepProgress(2, lines.append, clock=lambda: next(ticks))
    progress.finished(failed=True)
    progress.finished(failed=False)
    assert lines == [
        "sweep progress: 1/2 jobs done, 1 failed, ETA 10s",
        "sweep progress: 2/2 jobs done, 1 failed, finished in 30s",
    ]


def _run(run_id: str, condition: str, status: str, inn: float | None) -> SimpleNamespace:
    metrics = {} if inn is None else {"inn_share": inn}
    return SimpleNamespace(
        info=SimpleNamespace(run_id=run_id, status=status),
        data=SimpleNamespace(tags={"prism.condition": condition}, metrics=metrics),
    )


def test_parent_tables_count_statuses_and_average_finished_children_only() -> None:
    children = children_frame([_run("a", "x", "FINISHED", 0.2), _run("b", "x", "FINISHED", 0.4),
                               _run("c", "x", "FAILED", None), _run("d", "y", "FINISHED", 0.9)],
                              metrics=("inn_share",))  # fmt: skip
    counts = status_counts(children)
    assert counts.set_index("status")["runs"].to_dict() == {"FINISHED": 3, "FAILED": 1, "KILLED": 0, "RUNNING": 0}
    means = condition_means(children, ("inn_share",)).set_index("condition")
    assert means.loc["x", "n_runs"] == 2 and means.loc["x", "inn_share"] == pytest.approx(0.3)
    assert means.loc["y", "inn_share"] == pytest.approx(0.9)


def test_note_keeps_the_analysis_line_when_the_sweep_part_changes() -> None:
    body = sweep_note(
        "oon",
        {"ranking.out_of_network_scale": "0.25, 1.0"},
        10,
        20,
        "python -m prism_experiments -m experiment=oon",
        "7",
        "abcdef0123",
        "oon-1",
    )
    assert "`ranking.out_of_network_scale` = 0.25, 1.0" in body and "10 per condition (20 jobs" in body
    first = compose_note(body, None)
    assert first.rstrip().endswith(NO_ANALYSIS)
    with_analysis = compose_note(split_note(first)[0], analysis_line("7", "run9", "compare-1"))
    assert "[compare-1](#/experiments/7/runs/run9)" in with_analysis and NO_ANALYSIS not in with_analysis
    new_body = body.replace("oon-1", "oon-2")
    _, kept = split_note(with_analysis)
    again = compose_note(new_body, kept)
    assert "oon-2" in again and "oon-1" not in again and "compare-1" in again


def test_runs_view_groups_by_condition_and_the_url_loads_it() -> None:
    state = runs_view_state(("inn_share",))
    assert state["groupBy"] == {
        "aggregateFunction": "average",
        "groupByKeys": [{"mode": "tag", "groupByData": "prism.condition"}],
    }
    assert state["selectedColumns"][-1] == "metrics.`inn_share`"
    tags = view_tags(created_ms=5)
    assert tags["mlflow.experimentKind"] == "custom_model_development"
    envelope = json.loads(tags["mlflow.sharedViewState.prism-by-condition"])
    assert (envelope["name"], envelope["createdAt"]) == ("PRISM: conditions side by side", 5)
    assert view_state_of(tags["mlflow.sharedViewState.prism-by-condition"]) == runs_view_state()
    assert runs_view_url("http://127.0.0.1:5000/", "3") == (
        "http://127.0.0.1:5000/#/experiments/3/runs?viewStateShareKey=prism-by-condition&workflowType=machine_learning"
    )


def test_log_axes_label_ticks_as_plain_integers(tmp_path: Path) -> None:
    figure = new_figure(2)
    axes = figure.add_subplot()
    axes.plot([1, 2, 3, 40, 300], [1.0, 0.5, 0.2, 0.05, 0.01])
    plain_log_axes(axes)
    figure.savefig(tmp_path / "f.png")
    x_labels = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
    y_labels = [t.get_text() for t in axes.get_yticklabels() if t.get_text()]
    assert {"1", "2", "5", "10", "20", "50", "100", "200"} <= set(x_labels)
    assert all(label.replace(",", "").isdigit() for label in x_labels)
    assert {"0.01", "0.1", "1"} <= set(y_labels)
    assert not any("times" in label or "^" in label for label in x_labels + y_labels)
    assert not [t.get_text() for t in axes.xaxis.get_minorticklabels() if t.get_text()]


def test_every_condition_has_its_own_colour_marker_and_line() -> None:
    styles = condition_styles([f"c{i}" for i in range(4)])
    assert len({s.color for s in styles.values()}) == 4 and len({s.marker for s in styles.values()}) == 4
    assert condition_styles(["b", "a"])["b"] == condition_styles(["b"])["b"]


def test_step_bands_are_t_intervals_of_the_seed_means() -> None:
    rows = [("r0", "x", 0, 1, "impressions", 10.0), ("r0", "x", 0, 1, "engagements", 2.0),
            ("r1", "x", 1, 1, "impressions", 10.0), ("r1", "x", 1, 1, "engagements", 4.0),
            ("r2", "x", 2, 1, "impressions", 0.0), ("r2", "x", 2, 1, "engagements", 0.0)]  # fmt: skip
    bands = step_bands(with_engagement_rate(pd.DataFrame(rows, columns=list(VALUE_COLUMNS))), 0.95)
    rate = bands.loc[bands["series"] == "engagement_rate"].iloc[0]
    assert rate["n"] == 2 and rate["mean"] == pytest.approx(0.3)  # no impressions: no rate for r2
    half = stats.t.ppf(0.975, 1) * np.std([0.2, 0.4], ddof=1) / np.sqrt(2)
    assert (rate["ci_low"], rate["ci_high"]) == pytest.approx((0.3 - half, 0.3 + half))


def _comparison(rows: list[dict[str, object]], paired: bool = True) -> SimpleNamespace:
    pairwise = pd.DataFrame(rows)
    settings = SimpleNamespace(alpha=0.05, confidence=0.95, correction="holm", adjusted_column="p_holm")
    return SimpleNamespace(
        pairwise=pairwise,
        metrics=tuple(dict.fromkeys(pairwise["metric"])),
        settings=settings,
        design=SimpleNamespace(paired=paired),
    )


def test_summary_sentence_reads_like_the_readme() -> None:
    row = {"metric": "inn_share", "condition_a": "x_algo oon=0.25", "condition_b": "x_algo oon=1.0",
           "difference": 0.2104, "diff_ci_low": 0.15, "diff_ci_high": 0.27, "p_holm": 0.004, "n_pairs": 10,
           "n_a": 10, "n_b": 10, "significant": True, "effect_size": 1.0}  # fmt: skip
    comparison = _comparison([row, row | {"condition_b": "random", "significant": False, "p_holm": 0.2,
                                          "effect_size": 0.3, "difference": -0.01}])  # fmt: skip
    chosen = summary_rows(comparison)
    assert chosen["condition_b"].tolist() == ["x_algo oon=1.0"]  # the significant pair only
    assert summary_sentence(chosen.iloc[0], comparison) == (
        "x_algo oon=0.25 raises in-network share (inn_share) by 0.21 against x_algo oon=1.0 (95% CI of the "
        "difference 0.15 to 0.27; paired Wilcoxon, Holm-adjusted p = 0.004, 10 seeds)."
    )
    lower = pd.Series(row | {"difference": -0.05, "significant": False, "p_holm": 0.3})
    assert " lowers " in summary_sentence(lower, comparison) and "not significant at alpha 0.05" in (
        summary_sentence(lower, comparison)
    )


def test_per_run_figure_titles_name_condition_and_seed() -> None:
    from prism_experiments.config import ExperimentConfig
    from prism_experiments.harness.job import run_label
    from prism_experiments.harness.sweep_file import SweepFile

    cfg = ExperimentConfig.from_mapping({"ranking": {"mode": "x_algo"}, "seed": 3})
    sweep = SweepFile("s", "sqlite:///x.db", "1", None, ["ranking.out_of_network_scale", "seed"])
    overrides = ["ranking=x_algo", "ranking.out_of_network_scale=0.5", "seed=3"]
    assert run_label(cfg, overrides, sweep) == "x_algo oon=0.5, seed 3"
    assert run_label(cfg, ["ranking.reply_scale=0.2"], None) == "x_algo reply=0.2, seed 3"


def test_summary_keeps_the_largest_significant_differences_of_a_metric() -> None:
    base = {"metric": "inn_share", "condition_b": "b", "diff_ci_low": 0.0, "diff_ci_high": 1.0, "p_holm": 0.01,
            "n_pairs": 10, "n_a": 10, "n_b": 10, "significant": True, "effect_size": 1.0}  # fmt: skip
    rows = [base | {"condition_a": f"a{i}", "difference": d} for i, d in enumerate([0.1, -0.5, 0.3, 0.2, 0.05])]
    chosen = summary_rows(_comparison(rows), most=3)
    assert chosen["condition_a"].tolist() == ["a1", "a2", "a3"] and chosen["more"].tolist() == [0, 0, 2]
