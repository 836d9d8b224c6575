"""`prism-compare`: compare the conditions of an experiment's runs and write a statistical report."""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from mlflow.tracking import MlflowClient
from pydantic import ValidationError

from prism_experiments.analysis.analysis_run import fail_analysis_run, finish_analysis_run, start_analysis_run
from prism_experiments.analysis.cascades import compare_cascade_sizes, download_cascade_sizes, pool_by_condition
from prism_experiments.analysis.compare import ComparisonSettings, compare_conditions
from prism_experiments.analysis.design import MIN_RUNS_PER_CONDITION, detect_design
from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.analysis.report import (
    CascadeComparison,
    ReportContext,
    console_summary,
    safe_name,
    write_report,
)
from prism_experiments.analysis.runs import experiment_id_for, load_simulation_runs, require_existing_store
from prism_experiments.analysis.selection import DEFAULT_METRICS, select_runs
from prism_experiments.paths import default_runs_dir, default_tracking_uri

EXIT_OK = 0
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prism-compare",
        description="Compare the conditions of an experiment's FINISHED simulation runs "
        "(paired Wilcoxon/Friedman when every condition ran the same seeds, else Mann-Whitney/Kruskal-Wallis).",
    )
    parser.add_argument("--experiment", required=True, help="MLflow experiment name (the harness's experiment_name)")
    parser.add_argument("--sweep-id", default=None, help="only runs tagged prism.sweep_id=ID (default: all sweeps)")
    parser.add_argument("--by", nargs="+", default=None, metavar="PARAM",
                        help="params defining the conditions, full dotted key or unique suffix "
                        "(default: every param that varies, seed and paths/tracking/hydra excluded)")  # fmt: skip
    parser.add_argument("--metrics", nargs="+", default=None, metavar="METRIC",
                        help=f"metrics to compare (default: {' '.join(DEFAULT_METRICS)})")  # fmt: skip
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    parser.add_argument("--tracking-uri", default=None,
                        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, "
                        "else the sqlite store in the runs dir)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None,
                        help="report directory (default: <runs dir>/reports/<experiment>/<timestamp>)")  # fmt: skip
    parser.add_argument("--bootstrap-resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    parser.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the bootstrap CIs (default 0)")
    parser.add_argument("--no-cascades", action="store_true", help="skip the cascade-size CCDF and KS tests")
    parser.add_argument("--no-log", action="store_true", help="write the report but log no MLflow analysis run")
    return parser


def report_directory(out: Path | None, experiment: str, now: datetime) -> Path:
    """`--out` as given, else a fresh `<runs>/reports/<experiment>/<YYYYmmdd-HHMMSS>[-n]` directory."""
    if out is not None:
        return out.resolve()
    base = default_runs_dir() / "reports" / safe_name(experiment) / f"{now:%Y%m%d-%H%M%S}"
    candidate, n = base, 1
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; 0 on success, 2 on bad options or runs that cannot be compared."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return compare(args)
    except (AnalysisInputError, ValidationError) as error:
        message = str(error).splitlines()[0] if isinstance(error, AnalysisInputError) else _one_line(error)
        print(f"prism-compare: error: {message}", file=sys.stderr)
        return EXIT_USAGE


def _one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]).replace("n_resamples", "bootstrap-resamples")
    return f"{field.replace('_', '-')}: {first['msg']}"


def compare(args: argparse.Namespace) -> int:
    settings = ComparisonSettings(
        alpha=args.alpha, n_resamples=args.bootstrap_resamples, bootstrap_seed=args.bootstrap_seed
    )
    now = datetime.now()
    tracking_uri = args.tracking_uri or default_tracking_uri()
    require_existing_store(tracking_uri)
    client = MlflowClient(tracking_uri)
    experiment_id = experiment_id_for(client, args.experiment, tracking_uri)
    table = load_simulation_runs(client, experiment_id, args.sweep_id)
    selection = select_runs(table, by=args.by, metrics=args.metrics)
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
    cascades = None
    if not args.no_cascades:
        with tempfile.TemporaryDirectory(prefix="prism-compare-") as scratch:
            sizes, cascade_warnings = download_cascade_sizes(client, selection.tidy["run_id"].tolist(), Path(scratch))
        pooled = pool_by_condition(sizes, selection.tidy)
        cascades = CascadeComparison(pooled, compare_cascade_sizes(pooled, selection.conditions))
        warnings += cascade_warnings

    directory = report_directory(args.out, args.experiment, now)
    run_ids = selection.tidy["run_id"].astype(str).tolist()
    analysis_run_id = None
    if not args.no_log:
        params = {
            "experiment": args.experiment,
            "sweep_id": args.sweep_id or ",".join(selection.sweep_ids),
            "condition_keys": ",".join(selection.condition_keys),
            "metrics": ",".join(selection.metrics),
            "design": "paired" if design.paired else "unpaired",
            "alpha": str(settings.alpha),
            "bootstrap_resamples": str(settings.n_resamples),
            "bootstrap_seed": str(settings.bootstrap_seed),
            "report_dir": str(directory),
        }
        analysis_run_id = start_analysis_run(
            client, experiment_id, f"compare-{now:%Y%m%d-%H%M%S}", run_ids, params, args.sweep_id
        )
    context = ReportContext(
        experiment=args.experiment,
        generated_at=now,
        tracking_uri=tracking_uri,
        requested_sweep_id=args.sweep_id,
        sweep_ids=selection.sweep_ids,
        condition_keys=selection.condition_keys,
        seed_tracking_keys=selection.seed_tracking_keys,
        excluded=selection.excluded,
        warnings=tuple(warnings),
        analysis_run_id=analysis_run_id,
    )
    try:
        files = write_report(directory, context, comparison, selection.tidy, cascades)
        if analysis_run_id is not None:
            counts = {
                "n_runs_compared": len(run_ids),
                "n_runs_excluded": len(selection.excluded),
                "n_conditions": len(selection.conditions),
                "n_significant_pairs": int(comparison.pairwise["significant"].sum()),
            }
            finish_analysis_run(client, analysis_run_id, directory, counts)
    except BaseException:
        if analysis_run_id is not None:
            fail_analysis_run(client, analysis_run_id)
        raise
    print(console_summary(context, comparison, len(run_ids), files))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
