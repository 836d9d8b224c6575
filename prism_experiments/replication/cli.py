"""`prism-replicate` / `make replicate`: run the replication suite and give each published finding its verdict.

Only the standard library is imported before `main` prints its first line: the replication set, Hydra, MLflow and
pandas take seconds to import on a loaded machine, and the console must never stay silent that long.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from prism_experiments.command_line import EXIT_OK, usage_error

PROGRAM = "prism-replicate"
EXIT_FAILED = 1
#: the first line, printed before any heavy import (docs/validation.md, "What it prints")
STARTING_LINE = f"{PROGRAM}: starting (loading the replication set, Hydra and MLflow) ..."


def say(line: str) -> None:
    """One progress line on stderr, flushed at once (the console summary goes to stdout)."""
    print(f"{PROGRAM}: {line}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    from prism_experiments.replication.registry import BY_NAME, REPLICATION_SET_VERSION

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
    parser.add_argument("--full", action="store_true",
                        help="only the findings with a full size (the shape claims at 100,000 agents), at that size, "
                        "in experiment replication_full, with verdicts; not with --quick")  # fmt: skip
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
        "--out",
        type=Path,
        default=None,
        help="report directory (default: <runs dir>/reports/replication[_quick|_full]/<timestamp>)",
    )
    return parser


def replicate(args: argparse.Namespace) -> int:
    """0 when every finding got its verdict, 1 when a sweep failed, 2 on bad input (before any run)."""
    from pydantic import ValidationError

    from prism_experiments.config import ConfigError
    from prism_experiments.replication.registry import UnknownFindingError
    from prism_experiments.replication.suite import SuiteOptions, plan_suite

    try:
        options = SuiteOptions(
            only=tuple(args.only) if args.only else None, seeds=args.seeds, quick=args.quick, full=args.full,
            run=not args.no_run,
            **({"power_replicates": args.power_replicates} if args.power_replicates is not None else {}),
        )  # fmt: skip
        if options.power_replicates < 0:
            raise ValueError(f"--power-replicates: must be an integer >= 0, got {options.power_replicates}")
        # every job's config composed and validated before any run starts; the plan is the suite's (composed once)
        planned = plan_suite(options, say)
    except (UnknownFindingError, ValueError, ConfigError, ValidationError) as error:
        return usage_error(PROGRAM, str(error).splitlines()[0])
    return _run(options, args.out, planned)


def _run(options: object, out: Path | None, planned: object) -> int:
    """Run the suite, write the report, log the replication run (never for --quick; --full's in its own
    experiment, tagged as the full size)."""
    from mlflow.tracking import MlflowClient

    from prism_experiments.analysis.experiment_comparison import report_directory
    from prism_experiments.composition import compose_experiment
    from prism_experiments.replication.report import console_summary, write_report
    from prism_experiments.replication.runs import FULL_EXPERIMENT
    from prism_experiments.replication.suite import StoreUnreachable, SuiteOptions, run_suite
    from prism_experiments.replication.tracking import (
        REPLICATION_EXPERIMENT,
        finish_replication_run,
        start_replication_run,
    )
    from prism_experiments.tracking.store import resolve_tracking_uri

    assert isinstance(options, SuiteOptions) and isinstance(planned, tuple)
    try:
        result = run_suite(options, planned, say)
    except StoreUnreachable as error:
        say(f"error: {error}; no sweep started and no report written")
        return EXIT_FAILED
    now = datetime.now()
    # --full's report and replication run go with its runs, in replication_full: never beside the other size's
    experiment = FULL_EXPERIMENT if options.full else REPLICATION_EXPERIMENT
    directory = report_directory(out, experiment + ("_quick" if options.quick else ""), now)
    run_id = None
    if not options.quick:
        say("logging the replication run to MLflow")
        cfg = compose_experiment([f"experiment={result.findings[0].experiment}"])
        uri = resolve_tracking_uri(cfg)
        client = MlflowClient(uri)
        run_name = f"replicate{'-full' if options.full else ''}-{now:%Y%m%d-%H%M%S}"
        run_id = start_replication_run(client, uri, cfg.paths.artifacts_dir, result, run_name, experiment)
    try:
        say(f"writing the report (forest plot, tables) to {directory}")
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


def main(argv: Sequence[str] | None = None) -> int:
    """The command: its first line at once, then the parse (which loads the replication set) and the run.

    The return value is the exit code, argparse's own included (0 after --help, 2 for a bad option).
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not {"-h", "--help"} & set(arguments):
        print(STARTING_LINE, file=sys.stderr, flush=True)
    from prism_experiments.ops.processes import interrupt_name, interrupt_on_sigterm

    interrupt_on_sigterm(forward_to_children=True)  # `timeout`, scancel: the sweep in flight hears it too
    try:
        args = build_parser().parse_args(arguments)
        return replicate(args)
    except SystemExit as exit_:
        return int(exit_.code or 0) if isinstance(exit_.code, int | None) else EXIT_FAILED
    except KeyboardInterrupt as interrupt:  # REQ-FAULT-3: one line, no traceback, no report
        name = interrupt_name(interrupt)
        say(f"interrupted ({name}): the sweep in flight marked its runs KILLED and no report was written; "
            "`make replicate` again runs only the jobs not FINISHED")  # fmt: skip
        return 128 + (signal.SIGTERM if name == "SIGTERM" else signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
