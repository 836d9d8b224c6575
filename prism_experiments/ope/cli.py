"""`prism-ope`: off-policy estimates of target policies from stochastic runs logged in MLflow, and the
estimate-vs-on-policy-truth validation (docs/ope.md)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.analysis.runs import (
    experiment_id_for,
    require_existing_store,
    search_all_runs,
    simulation_filter,
)
from prism_experiments.command_line import EXIT_OK, command_main, usage_error
from prism_experiments.composition import compose_experiment
from prism_experiments.config import ConfigError
from prism_experiments.domain import SERVING_CANDIDATES
from prism_experiments.locations import tracking_uri_for
from prism_experiments.ope.data import impression_rewards, ope_inputs, target_names
from prism_experiments.ope.report import estimates_table, markdown, validation_markdown
from prism_experiments.ope.validation import validate_seed
from prism_experiments.tracking.tags import SEED_TAG

TABLES = ("exposures", "engagements", SERVING_CANDIDATES)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prism-ope",
        description="Estimate the engagement rate of the target policies a stochastic run logged (IPS, SNIPS, DR "
        "with feed-bootstrap CIs); --validate compares the estimates with each target's own run.",
    )
    parser.add_argument("--experiment", default="ope_validation",
                        help="MLflow experiment to read; with --validate, the conf/experiment/ option to run "
                        "(default ope_validation)")  # fmt: skip
    parser.add_argument("--run", default=None, help="one run id (default: every FINISHED stochastic run)")
    parser.add_argument(
        "--validate",
        action="store_true",
        help="simulate A and each target B on-policy for every --seeds seed and print estimate vs truth",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="--validate's seeds")
    parser.add_argument(
        "--override",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="extra Hydra overrides for --validate (e.g. agents.n_agents=40)",
    )
    parser.add_argument("--bootstrap-resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else the runs dir's sqlite store)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown tables to this file")
    return parser


def estimate_logged_runs(experiment: str, run_id: str | None, tracking_uri: str | None, n_boot: int) -> str:
    """Markdown: every target of every stochastic run of `experiment` (or of run `run_id`)."""
    uri = tracking_uri_for(tracking_uri)
    require_existing_store(uri)
    client = MlflowClient(uri)
    runs = (
        [client.get_run(run_id)]
        if run_id
        else [
            run
            for run in search_all_runs(client, experiment_id_for(client, experiment, uri), simulation_filter())
            if run.info.status == "FINISHED" and "serving.policy" in run.data.params
        ]
    )
    if not runs:
        raise AnalysisInputError(
            f"experiment: no FINISHED run of {experiment!r} served stochastically (serving=softmax)"
        )
    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            try:
                data = {
                    name: pd.read_parquet(client.download_artifacts(run.info.run_id, f"tables/{name}.parquet", tmp))
                    for name in TABLES
                }
            except Exception as exc:  # an MLflow error type per store; the message names the missing file
                raise AnalysisInputError(f"run: {run.info.run_id} has no OPE tables ({exc})") from None
            exposures, engagements = data["exposures"], data["engagements"]
            logged = float(impression_rewards(exposures, engagements).mean())
            estimates = {
                t: ope_inputs(exposures, engagements, data[SERVING_CANDIDATES], t).estimates(n_boot)
                for t in target_names(exposures)
            }
            tables.append(estimates_table(run.info.run_id, run.data.tags.get(SEED_TAG, "?"), logged, estimates))
    return markdown(pd.concat(tables, ignore_index=True))


def validate(experiment: str, seeds: list[int], overrides: list[str], n_boot: int) -> str:
    """Markdown: estimate vs on-policy truth for every target of conf/experiment/<experiment>.yaml and seed."""
    rows = []
    for seed in seeds:
        cfg = compose_experiment([f"experiment={experiment}", f"seed={seed}", *overrides])
        if cfg.serving is None or not cfg.serving.targets:
            raise AnalysisInputError(f"experiment: {experiment!r} sets no serving.targets to validate")
        rows += validate_seed(
            cfg.model_copy(update={"simulation": cfg.simulation.model_copy(update={"show_progress": False})}), n_boot
        )
    return validation_markdown(rows)


def estimate(args: argparse.Namespace) -> int:
    """0 on success, 2 on bad options or runs without OPE tables."""
    try:
        if args.validate:
            text = validate(args.experiment, args.seeds, args.override, args.bootstrap_resamples)
        else:
            text = estimate_logged_runs(args.experiment, args.run, args.tracking_uri, args.bootstrap_resamples)
    except (AnalysisInputError, ConfigError) as error:
        return usage_error("prism-ope", str(error).splitlines()[0])
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return EXIT_OK


main = command_main(build_parser, estimate)


if __name__ == "__main__":
    sys.exit(main())
