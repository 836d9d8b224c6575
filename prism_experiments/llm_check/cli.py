"""`prism-llm-check` / `make llm-check`: the fitness test of the model LLM agents ask, on any backend.

The model and prompt are those of the composed experiment's `agents.decider` (Hydra overrides as for `prism-run`,
e.g. `agents/decider/llm=openai agents.decider.llm.base_url=http://127.0.0.1:8000/v1 agents.decider.llm.model=m`).
Prints the figures and the verdict, logs them to MLflow (experiment `llm_check`); every later LLM run of that model
carries the verdict (`prism.llm_check`) and `make compare` prints it. A failing model stays usable.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from prism_experiments.config import ConfigError
from prism_experiments.llm import LLMUnavailable

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prism-llm-check", description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="*", help="Hydra overrides selecting the backend and model")
    parser.add_argument(
        "--style",
        choices=["schema", "example", "both"],
        default=None,
        help="prompt style(s) to check (default: the config's agents.decider.prompt_style)",
    )
    parser.add_argument("--tracking-uri", default=None, help="MLflow store (default: the runs dir's)")
    parser.add_argument("--no-log", action="store_true", help="print only; log no MLflow run")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the model fails the check")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="only the first N probes: a smoke test, whose figures are not the check's",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    from prism_experiments.composition import compose_experiment
    from prism_experiments.deciders.kinds.llm import ModelDeciderConfig

    try:
        cfg = compose_experiment(["agents/decider=llm", *args.overrides])
    except ConfigError as error:
        print(f"prism-llm-check: {error}", file=sys.stderr)
        return EXIT_USAGE
    decider = cfg.agents.decider
    assert isinstance(decider, ModelDeciderConfig)
    styles = ["schema", "example"] if args.style == "both" else [args.style or decider.prompt_style]
    from prism_experiments.llm_check.check import EXPERIMENT, log_check, run_check
    from prism_experiments.llm_check.probes import probe_set
    from prism_experiments.llm_check.scoring import figures_table

    results = []
    for style in styles:
        try:
            result = run_check(
                decider.llm, style, cfg.cache_dir, cfg.simulation.show_progress, probe_set()[: args.limit]
            )
        except LLMUnavailable as error:
            print(f"prism-llm-check: {error}", file=sys.stderr)
            return EXIT_USAGE
        results.append(result)
        table = figures_table(result.figures)
        print(f"\n{result.identity}, prompt {style}: {len(result.answers)} probes in {result.seconds:.0f} s")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"verdict: {result.verdict()}")
    if args.limit is not None:
        print("not logged: a --limit check is a smoke test, not the model's verdict")
    elif not args.no_log:
        from prism_experiments.locations import tracking_uri_for
        from prism_experiments.tracking.store import client_for, ensure_experiment

        uri = tracking_uri_for(args.tracking_uri, cfg.paths.runs_dir)
        experiment_id = ensure_experiment(uri, EXPERIMENT, cfg.paths.artifacts_dir)
        for result in results:
            run_id = log_check(client_for(uri), experiment_id, result, {"overrides": " ".join(args.overrides)})
            print(f"logged: run {run_id} in experiment {EXPERIMENT!r} at {uri}")
    return EXIT_FAILED_CHECK if args.strict and not all(r.passed for r in results) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
