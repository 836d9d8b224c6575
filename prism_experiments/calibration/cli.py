"""`prism-calibrate`: fit a target set's parameters with Optuna, write the fit table and the fitted world file."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from prism_experiments.calibration.report import fit_table, write_report
from prism_experiments.calibration.search import (
    CalibrationResult,
    CalibrationSettings,
    base_overrides,
    log_evaluation,
    open_study,
    param_overrides,
    result_json,
    run_calibration,
    simulate_moments,
    summarize_study,
    world_values,
    world_yaml,
)
from prism_experiments.calibration.targets import TargetsError, available, load_targets
from prism_experiments.composition import compose_experiment
from prism_experiments.config import ConfigError
from prism_experiments.locations import CONFIG_DIR, default_runs_dir, tracking_uri_for
from prism_experiments.metrics.moments import result_cascade_sizes
from prism_experiments.plotting import ccdf_figure
from prism_experiments.tracking.store import client_for

log = logging.getLogger("prism_experiments")


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line on stderr and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"prism-calibrate: {message}", file=sys.stderr)
        raise SystemExit(2)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def parser() -> OneLineParser:
    p = OneLineParser(prog="prism-calibrate", description=__doc__)
    p.add_argument(
        "--targets", required=True, help=f"target set in conf/calibration/ ({', '.join(available())}) or a yaml path"
    )
    p.add_argument("--trials", type=positive_int, default=30, help="trials to add to the study (default 30)")
    p.add_argument(
        "--seeds", type=positive_int, default=3, help="seeds per trial, the same for every trial (default 3)"
    )
    p.add_argument("--first-seed", type=int, default=0, help="seeds are first-seed .. first-seed + seeds - 1")
    p.add_argument("--sampler-seed", type=int, default=0, help="seed of Optuna's TPESampler")
    p.add_argument(
        "--n-agents",
        type=positive_int,
        default=None,
        help="population size to fit at (agents.n_agents; default: the config's own, 200); the world file records it",
    )
    p.add_argument("--study", default=None, help="study name (default: the target set's name); same name continues it")
    p.add_argument("--runs-dir", type=Path, default=None, help="runs directory (default $PRISM_RUNS_DIR or ./runs)")
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (rag.cache_dir)")
    p.add_argument(
        "--world-file",
        type=Path,
        default=None,
        help="where the best parameters go (default conf/world/<study>.yaml); 'none' skips it",
    )
    p.add_argument(
        "--evaluate", action="store_true", help="no search: the fit table of the config (plus overrides) over the seeds"
    )
    p.add_argument(
        "--full-size",
        action="store_true",
        help="with --evaluate: run at the config's own size, without the target set's run_overrides",
    )
    p.add_argument("--label", default=None, help="with --evaluate: name of the fit table in the report")
    p.add_argument(
        "--report",
        action="store_true",
        help="no new trials: write the fit table and world file of the study as it stands",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run (key=value)")
    return p


def evaluate(settings: CalibrationSettings, full_size: bool, label: str) -> Path:
    """Fit table of the composed config over the seeds, written as `<label>` in the report directory."""
    overrides = base_overrides(settings)
    if full_size:
        overrides = [o for o in overrides if o not in settings.target_set.run_overrides]
    sizes: list[pd.DataFrame] = []

    def keep_sizes(seed: int, result: object) -> None:
        sizes.append(pd.DataFrame({"condition": "simulated", "seed": seed, "size": result_cascade_sizes(result)}))

    per_seed, _ = simulate_moments(overrides, settings.seeds, keep_sizes)
    table = fit_table(settings.target_set.targets, per_seed)
    print(table.to_string(index=False))
    out = settings.report_dir / label
    path = write_report(out, {label: table}, f"# {label}\n\noverrides: `{' '.join(overrides)}`\n")
    pooled = pd.concat(sizes, ignore_index=True)
    pooled.to_csv(out / "cascade_sizes.csv", index=False)  # one row per shown original: its cascade's size
    ccdf_figure(pooled, ["simulated"], out / "cascade_size_ccdf.png", f"Cascade sizes, {label}")
    print(f"MLflow run {log_evaluation(settings, label, out, overrides)} (kind calibration_evaluation) holds them")
    return path


def write_outputs(
    settings: CalibrationSettings, result: CalibrationResult, wall: float, world_file: Path | None
) -> None:
    """Fit tables before/after (markdown + csv), study.json, and the fitted world file."""
    target_set = settings.target_set
    tables = {
        "before": fit_table(target_set.targets, result.baseline_per_seed),
        "after": fit_table(target_set.targets, result.best_per_seed),
    }
    preamble = (
        f"# Calibration `{settings.name}` ({target_set.name})\n\n"
        f"- trials complete/failed: {result.n_complete}/{result.n_failed}; seeds {result.seeds}; "
        f"wall time of this call {wall / 60:.1f} min\n"
        f"- before = trial 0, the config's own values: `{' '.join(param_overrides(result.first_params))}`\n"
        f"- after = the best trial: `{' '.join(param_overrides(result.best_params))}`\n"
        f"- objective: before {result.first_value:.4f}, after {result.best_value:.4f}\n"
        f"- run overrides: `{' '.join(base_overrides(settings))}`\n"
        f"- MLflow parent run {result.parent_run_id or '(report only)'}; "
        f"Optuna storage sqlite:///{settings.storage_path}\n"
    )
    path = write_report(settings.report_dir, tables, preamble)
    (settings.report_dir / "study.json").write_text(result_json(result) + "\n")
    if result.parent_run_id:  # the fit tables, and any --evaluate CCDF beside them, with the calibration's run
        uri = tracking_uri_for(settings.tracking_uri, settings.runs_dir)
        client_for(uri).log_artifacts(result.parent_run_id, str(settings.report_dir), "report")
    world_file = world_file or CONFIG_DIR / "world" / f"{settings.name}.yaml"
    if str(world_file) != "none":
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        fitted = compose_experiment(
            [*base_overrides(settings), *param_overrides(result.best_params), f"seed={settings.seeds[0]}"]
        )
        fitted_at = fitted.agents.n_agents
        world_name = world_file.stem  # its name in the `world` group, whatever the study is called
        world_file.parent.mkdir(parents=True, exist_ok=True)
        world_file.write_text(
            world_yaml(
                world_values(fitted),
                [
                    f"World `{world_name}`: fitted by `prism-calibrate --targets {target_set.name}` on {stamp}",
                    f'(conf/calibration/{target_set.name}.yaml; fit table: docs/model.md, "Calibration").',
                    f"Best of {result.n_complete} trials x {len(result.seeds)} seeds at "
                    f"{' '.join(dict.fromkeys([*target_set.run_overrides, f'agents.n_agents={fitted_at}']))}:",
                    f"objective {result.best_value:.4f} (trial 0, the config's own values: {result.first_value:.4f}).",
                    f'Use: make run ARGS="world={world_name}".',
                ],
                world_name,
                fitted_at,
            )
        )
        print(f"wrote {world_file}")
    for label, table in tables.items():
        print(f"\n{label}\n{table.drop(columns=['source']).to_string(index=False)}")
    print(f"\nwrote {path} ({wall / 60:.1f} min)")


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C, so a stopped calibration marks its runs KILLED and its trial FAIL, not RUNNING."""
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parser().parse_args(argv)
    bad = [o for o in args.overrides if "=" not in o]
    if bad:
        parser().error(f"overrides: expected key=value Hydra overrides, got {' '.join(bad)}")
    try:
        target_set = load_targets(args.targets)
        settings = CalibrationSettings(
            target_set=target_set,
            n_trials=args.trials,
            seeds=tuple(range(args.first_seed, args.first_seed + args.seeds)),
            runs_dir=(args.runs_dir or default_runs_dir()).resolve(),
            sampler_seed=args.sampler_seed,
            cache_dir=args.cache_dir,
            overrides=tuple(args.overrides),
            n_agents=args.n_agents,
            study_name=args.study,
            show_progress=not args.no_progress,
        )
        compose_experiment(
            [*base_overrides(settings), f"seed={settings.seeds[0]}"]
        )  # bad overrides fail before any run
    except (TargetsError, ConfigError) as exc:
        print(f"prism-calibrate: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # Hydra's own composition errors (unknown group option, bad override syntax)
        print(f"prism-calibrate: overrides: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if args.evaluate:
        label = args.label or ("full_size" if args.full_size else "run_size")
        print(f"wrote {evaluate(settings, args.full_size, label)}")
        return 0
    started = time.perf_counter()
    if args.report:  # no new trials: the report and world file of the study as it stands
        result = summarize_study(open_study(settings))
    else:
        result = run_calibration(settings)
    write_outputs(settings, result, time.perf_counter() - started, args.world_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
