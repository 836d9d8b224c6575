"""One comparison of an experiment's conditions, end to end: load runs, compare, write the report, log it.

This is what `prism-compare` does; the CLI only parses options and turns known errors into exit codes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from mlflow.tracking import MlflowClient

from prism_experiments.analysis.analysis_run import fail_analysis_run, finish_analysis_run, start_analysis_run
from prism_experiments.analysis.cascades import compare_cascade_sizes, download_cascade_sizes, pool_by_condition
from prism_experiments.analysis.compare import Comparison, ComparisonSettings, compare_conditions
from prism_experiments.analysis.crossover import CROSSOVER_SERIES
from prism_experiments.analysis.design import MIN_RUNS_PER_CONDITION, Design, detect_design
from prism_experiments.analysis.field_comparison import field_console, field_tables, write_field_tables
from prism_experiments.analysis.html_report import write_html_report
from prism_experiments.analysis.report import (
    CascadeComparison,
    ReportFiles,
    ReportProvenance,
    console_summary,
    power_console,
    safe_name,
    write_report,
)
from prism_experiments.analysis.runs import experiment_id_for, load_simulation_runs, require_existing_store
from prism_experiments.analysis.selection import Selection, select_runs
from prism_experiments.analysis.step_series import RAW_SERIES, load_step_values, step_bands, with_engagement_rate
from prism_experiments.locations import RunLayout, default_runs_dir, tracking_uri_for
from prism_experiments.tracking.experiment_note import write_analysis_line

DEFAULT_SETTINGS = ComparisonSettings()


@dataclass(frozen=True)
class ComparisonOutcome:
    """Where the report went, the analysis run that logged it (None with `log_run=False`) and the console text."""

    files: ReportFiles
    analysis_run_id: str | None
    n_runs: int
    summary: str
    power: str = ""


def report_directory(out: Path | None, experiment: str, now: datetime) -> Path:
    """`out` as given, else a fresh `<runs>/reports/<experiment>/<YYYYmmdd-HHMMSS>[-n]` directory."""
    if out is not None:
        return out.resolve()
    base = RunLayout(default_runs_dir()).reports_dir / safe_name(experiment) / f"{now:%Y%m%d-%H%M%S}"
    candidate, n = base, 1
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate


def compare_experiment(
    experiment: str,
    *,
    tracking_uri: str | None = None,
    sweep_id: str | None = None,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    settings: ComparisonSettings = DEFAULT_SETTINGS,
    out: Path | None = None,
    cascades: bool = True,
    log_run: bool = True,
    now: datetime | None = None,
    amplification: bool = True,
    size_matched: bool = False,
    crossover: bool = False,
) -> ComparisonOutcome:
    """Compare the conditions of `experiment`'s simulation runs and write (and log) the report.

    `amplification`: Huszár et al.'s amplification ratio against a chronological condition (when there is one);
    `size_matched`: Juul & Ugander's pooled vs size-matched cascade comparison (analysis/field_comparison.py);
    `crossover`: the switch-on / switch-off crossover of ranking schedules (analysis/crossover.py).

    Raises AnalysisInputError when the store, experiment, options or runs do not allow a comparison.
    """
    now = now or datetime.now()
    tracking_uri = tracking_uri_for(tracking_uri)
    require_existing_store(tracking_uri)
    client = MlflowClient(tracking_uri)
    experiment_id = experiment_id_for(client, experiment, tracking_uri)
    selection = select_runs(load_simulation_runs(client, experiment_id, sweep_id), by=by, metrics=metrics)
    design = detect_design(selection.tidy, selection.conditions, MIN_RUNS_PER_CONDITION)
    comparison = compare_conditions(
        selection.tidy,
        selection.conditions,
        selection.metrics,
        design,
        settings,
        factor_keys=selection.condition_keys,
        names=selection.short_names,
    )
    warnings = list(selection.warnings)
    cascade_comparison = None
    if cascades:
        cascade_comparison, cascade_warnings = _compare_cascades(client, selection)
        warnings += cascade_warnings
    names = (*RAW_SERIES, *CROSSOVER_SERIES) if crossover else RAW_SERIES
    values = with_engagement_rate(load_step_values(client, selection.tidy[["run_id", "condition", "seed"]], names))
    field = field_tables(
        tracking_uri, selection, design, settings, amplification, size_matched, values if crossover else None
    )
    warnings += field.warnings
    bands = step_bands(values, settings.confidence)
    directory = report_directory(out, experiment, now)
    run_ids = selection.tidy["run_id"].astype(str).tolist()
    analysis_run_id = None
    if log_run:
        params = _analysis_params(experiment, sweep_id, selection, design, settings, directory)
        analysis_run_id = start_analysis_run(
            client, experiment_id, f"compare-{now:%Y%m%d-%H%M%S}", run_ids, params, sweep_id
        )
    provenance = ReportProvenance(
        experiment=experiment,
        generated_at=now,
        tracking_uri=tracking_uri,
        requested_sweep_id=sweep_id,
        sweep_ids=selection.sweep_ids,
        condition_keys=selection.condition_keys,
        seed_tracking_keys=selection.seed_tracking_keys,
        excluded=selection.excluded,
        warnings=tuple(warnings),
        analysis_run_id=analysis_run_id,
        llm_checks=selection.llm_checks,
    )
    try:
        files = write_report(directory, provenance, comparison, selection.tidy, cascade_comparison, bands)
        field_files = write_field_tables(directory, field, files.report)
        files = replace(files, tables=(*files.tables, *field_files))
        html = write_html_report(directory, provenance, comparison, len(run_ids), files.figure_map, cascade_comparison)
        files = replace(files, html=html)
        if analysis_run_id is not None:
            finish_analysis_run(client, analysis_run_id, directory, _counts(selection, comparison))
            write_analysis_line(client, experiment_id, analysis_run_id, f"compare-{now:%Y%m%d-%H%M%S}")
    except BaseException:
        # Ctrl-C included: the analysis run must not stay RUNNING
        if analysis_run_id is not None:
            fail_analysis_run(client, analysis_run_id)
        raise
    summary = "\n".join([console_summary(provenance, comparison, len(run_ids), files), *field_console(field)])
    return ComparisonOutcome(files, analysis_run_id, len(run_ids), summary, power_console(comparison))


def _compare_cascades(client: MlflowClient, selection: Selection) -> tuple[CascadeComparison, list[str]]:
    """Cascade sizes of the compared runs pooled per condition, their KS tests, and download warnings."""
    with tempfile.TemporaryDirectory(prefix="prism-compare-") as scratch:
        sizes, warnings = download_cascade_sizes(client, selection.tidy["run_id"].tolist(), Path(scratch))
    pooled = pool_by_condition(sizes, selection.tidy)
    return CascadeComparison(pooled, compare_cascade_sizes(pooled, selection.conditions)), warnings


def _analysis_params(
    experiment: str,
    sweep_id: str | None,
    selection: Selection,
    design: Design,
    settings: ComparisonSettings,
    directory: Path,
) -> dict[str, str]:
    """What the analysis run records about how the comparison was made."""
    return {
        "experiment": experiment,
        "sweep_id": sweep_id or ",".join(selection.sweep_ids),
        "condition_keys": ",".join(selection.condition_keys),
        "metrics": ",".join(selection.metrics),
        "design": "paired" if design.paired else "unpaired",
        "alpha": str(settings.alpha),
        "correction": settings.correction,
        "family": settings.family,
        "power_replicates": str(settings.power_replicates),
        "power_effect": "observed" if settings.effect is None else str(settings.effect),
        "bootstrap_resamples": str(settings.n_resamples),
        "bootstrap_seed": str(settings.bootstrap_seed),
        "report_dir": str(directory),
    }


def _counts(selection: Selection, comparison: Comparison) -> dict[str, float]:
    """The analysis run's metrics: how many runs and conditions were compared, and significant pairs."""
    return {
        "n_runs_compared": len(selection.tidy),
        "n_runs_excluded": len(selection.excluded),
        "n_conditions": len(selection.conditions),
        "n_significant_pairs": int(comparison.pairwise["significant"].sum()),
    }
