"""`prism-compare`: compare the conditions of an experiment's runs and write a statistical report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.command_line import EXIT_OK, command_main, usage_error
from prism_experiments.metrics.registry import primary_metric_names

DEFAULT_SETTINGS = ComparisonSettings()

PROGRAM = "prism-compare"


def build_parser() -> argparse.ArgumentParser:
    """The options of `prism-compare`; the statistical defaults come from ComparisonSettings."""
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
                        help=f"metrics to compare (default: {' '.join(primary_metric_names())})")  # fmt: skip
    parser.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_SETTINGS.alpha,
        help=f"significance level of the adjusted p-values (default {DEFAULT_SETTINGS.alpha})",
    )
    parser.add_argument("--correction", default=DEFAULT_SETTINGS.correction,
                        help="holm (family-wise error) or bh (Benjamini-Hochberg false discovery rate) "
                        f"(default {DEFAULT_SETTINGS.correction})")  # fmt: skip
    parser.add_argument("--family", default=DEFAULT_SETTINGS.family,
                        help="metric: adjust within each metric's pairwise tests; report: across every test "
                        f"of the report (default {DEFAULT_SETTINGS.family})")  # fmt: skip
    parser.add_argument(
        "--power", action="store_true", help="print only the power table (MDE now, seeds needed for power 0.8 and 0.95)"
    )
    parser.add_argument("--power-replicates", type=int, default=DEFAULT_SETTINGS.power_replicates,
                        help="simulation replicates per evaluated size or effect; 0: normal approximation only "
                        f"(default {DEFAULT_SETTINGS.power_replicates})")  # fmt: skip
    parser.add_argument("--effect", type=float, default=None,
                        help="effect for 'seeds needed' in sd units (Cohen's d_z paired, d unpaired; "
                        "default: the observed difference)")  # fmt: skip
    parser.add_argument("--tracking-uri", default=None,
                        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, "
                        "else the sqlite store in the runs dir)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None,
                        help="report directory (default: <runs dir>/reports/<experiment>/<timestamp>)")  # fmt: skip
    parser.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=DEFAULT_SETTINGS.n_resamples,
        help=f"bootstrap resamples (default {DEFAULT_SETTINGS.n_resamples})",
    )
    parser.add_argument(
        "--bootstrap-seed",
        type=int,
        default=DEFAULT_SETTINGS.bootstrap_seed,
        help=f"seed of the bootstrap CIs (default {DEFAULT_SETTINGS.bootstrap_seed})",
    )
    parser.add_argument("--no-cascades", action="store_true", help="skip the cascade-size CCDF and KS tests")
    parser.add_argument("--size-matched", action="store_true",
                        help="also compare cascade virality and depth at matched cascade size (Juul & Ugander 2021) "
                        "and say where that and the pooled comparison disagree")  # fmt: skip
    parser.add_argument("--crossover", action="store_true",
                        help="also compare ranking schedules that switch the ranker on and off (A→B and B→A against "
                        "A and B throughout, Gauthier et al. 2026), from the switch step on")  # fmt: skip
    parser.add_argument(
        "--no-amplification",
        action="store_true",
        help="skip the amplification ratio against the chronological control (Huszár et al. 2022)",
    )
    parser.add_argument("--no-log", action="store_true", help="write the report but log no MLflow analysis run")
    return parser


def compare(args: argparse.Namespace) -> int:
    """Run the comparison; 0 on success, 2 on bad options or runs that cannot be compared."""
    try:
        settings = ComparisonSettings(
            alpha=args.alpha, n_resamples=args.bootstrap_resamples, bootstrap_seed=args.bootstrap_seed,
            correction=args.correction, family=args.family, power_replicates=args.power_replicates,
            effect=args.effect,
        )  # fmt: skip
        require_simulation_runs(args.experiment, args.tracking_uri, args.sweep_id)
        # the report's stack (matplotlib, the cascade and HTML writers) only once there is something to compare
        from prism_experiments.analysis.experiment_comparison import compare_experiment

        outcome = compare_experiment(
            args.experiment, tracking_uri=args.tracking_uri, sweep_id=args.sweep_id, by=args.by,
            metrics=args.metrics, settings=settings, out=args.out, cascades=not args.no_cascades,
            log_run=not args.no_log, amplification=not args.no_amplification, size_matched=args.size_matched,
            crossover=args.crossover,
        )  # fmt: skip
    except AnalysisInputError as error:
        return usage_error(PROGRAM, str(error).splitlines()[0])
    except ValidationError as error:
        return usage_error(PROGRAM, _one_line(error))
    print(outcome.power if args.power else outcome.summary)
    return EXIT_OK


def require_simulation_runs(experiment: str, tracking_uri: str | None, sweep_id: str | None) -> None:
    """AnalysisInputError at once when the store, the experiment or its simulation runs are missing (a sweep
    stopped before its first job leaves an experiment with no runs)."""
    from mlflow.tracking import MlflowClient

    from prism_experiments.analysis.runs import experiment_id_for, require_existing_store, simulation_filter
    from prism_experiments.locations import tracking_uri_for

    uri = tracking_uri_for(tracking_uri)
    require_existing_store(uri)
    client = MlflowClient(uri)
    experiment_id = experiment_id_for(client, experiment, uri)
    if not client.search_runs([experiment_id], simulation_filter(sweep_id), max_results=1):
        which = f"sweep {sweep_id} of experiment {experiment!r}" if sweep_id else f"experiment {experiment!r}"
        raise AnalysisInputError(
            f"runs: {which} has no simulation runs at {uri} (a sweep stopped before its first "
            f"job leaves none); run it with make sweep EXPERIMENT={experiment}"
        )


def _one_line(error: ValidationError) -> str:
    """The first validation problem, named by its command-line option (`bootstrap-resamples: ...`)."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]).replace("n_resamples", "bootstrap-resamples")
    return f"--{field.replace('_', '-')}: {first['msg']}"


main = command_main(build_parser, compare)


if __name__ == "__main__":
    sys.exit(main())
