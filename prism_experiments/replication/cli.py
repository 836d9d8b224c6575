"""`prism-replicate` / `make replicate`: run the replication suite and give each published finding its verdict."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from prism_experiments.command_line import EXIT_OK, command_main, usage_error
from prism_experiments.config import ConfigError
from prism_experiments.replication.registry import BY_NAME, REPLICATION_SET_VERSION, UnknownFindingError

PROGRAM = "prism-replicate"
EXIT_FAILED = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prism-replicate",
        description=f"Replication suite v{REPLICATION_SET_VERSION}: run the harness's analogue of each published "
        "finding (sweeps for the runs MLflow does not have yet) and give each its verdict (docs/validation.md).",
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", default=None,
                        help=f"only these findings ({', '.join(BY_NAME)})")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds per finding (default: each finding's own, chosen from its power)")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="a smoke size of every finding (runs in experiment replication_quick): checks the "
                        "plumbing in minutes, gives no verdict and logs no replication run")  # fmt: skip
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="start no sweep: judge only the runs already in MLflow (missing ones are reported)",
    )
    parser.add_argument(
        "--power-replicates",
        type=int,
        default=None,
        help="replicates of the power simulation per claim (default 300; 0: normal figures only)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="report directory (default: <runs dir>/reports/replication/<timestamp>)"
    )
    return parser


def replicate(args: argparse.Namespace) -> int:
    """0 when every finding got its verdict, 1 when a sweep failed, 2 on bad input (before any run)."""
    from prism_experiments.replication.suite import SuiteOptions, plan_suite

    try:
        options = SuiteOptions(
            only=tuple(args.only) if args.only else None, seeds=args.seeds, quick=args.quick, run=not args.no_run,
            **({"power_replicates": args.power_replicates} if args.power_replicates is not None else {}),
        )  # fmt: skip
        if options.power_replicates < 0:
            raise ValueError(f"--power-replicates: must be an integer >= 0, got {options.power_replicates}")
        plan_suite(options)  # every job's config composed and validated before any run starts
    except (UnknownFindingError, ValueError, ConfigError, ValidationError) as error:
        return usage_error(PROGRAM, str(error).splitlines()[0])
    return _run(options, args.out)


def _run(options: object, out: Path | None) -> int:
    """Run the suite, write the report, log the replication run (never for --quick)."""
    from mlflow.tracking import MlflowClient

    from prism_experiments.analysis.experiment_comparison import report_directory
    from prism_experiments.composition import compose_experiment
    from prism_experiments.replication.report import console_summary, write_report
    from prism_experiments.replication.suite import SuiteOptions, run_suite
    from prism_experiments.replication.tracking import (
        REPLICATION_EXPERIMENT,
        finish_replication_run,
        start_replication_run,
    )
    from prism_experiments.tracking.store import resolve_tracking_uri

    assert isinstance(options, SuiteOptions)
    result = run_suite(options)
    now = datetime.now()
    directory = report_directory(out, REPLICATION_EXPERIMENT + ("_quick" if options.quick else ""), now)
    run_id = None
    if not options.quick:
        cfg = compose_experiment([f"experiment={result.findings[0].experiment}"])
        uri = resolve_tracking_uri(cfg)
        client = MlflowClient(uri)
        run_id = start_replication_run(client, uri, cfg.paths.artifacts_dir, result, f"replicate-{now:%Y%m%d-%H%M%S}")
    try:
        write_report(directory, result, now, run_id)
        if run_id is not None:
            finish_replication_run(client, run_id, result, directory)
    except BaseException:
        if run_id is not None:
            client.set_terminated(run_id, "FAILED")
        raise
    print(console_summary(result, directory, run_id))
    if result.failed_sweeps:
        print(
            f"prism-replicate: {len(result.failed_sweeps)} sweep(s) failed; their findings lack runs", file=sys.stderr
        )
        return EXIT_FAILED
    return EXIT_OK


main = command_main(build_parser, replicate)


if __name__ == "__main__":
    sys.exit(main())
