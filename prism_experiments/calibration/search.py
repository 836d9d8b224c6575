"""The Optuna loop: each trial simulates the same seeds (common random numbers) and is an MLflow child run."""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import optuna
from tqdm import tqdm

from prism_experiments.calibration.objective import mean_moments, objective
from prism_experiments.calibration.targets import FITTABLE_WHEN_NULL, Parameter, TargetSet, fittable_defaults
from prism_experiments.composition import compose_experiment
from prism_experiments.config import ExperimentConfig
from prism_experiments.harness.job import end_run
from prism_experiments.locations import RunLayout, artifact_root, tracking_uri_for
from prism_experiments.metrics.summary import calibration_moments
from prism_experiments.ops.liveness import HEARTBEAT_TAG, Heartbeat, liveness_tags, reap_stale_runs
from prism_experiments.simulation import run_simulation
from prism_experiments.tracking.errors import error_line
from prism_experiments.tracking.params import flatten, to_params
from prism_experiments.tracking.provenance import git_commit, package_versions
from prism_experiments.tracking.run_logger import log_params, set_tags
from prism_experiments.tracking.store import client_for, ensure_experiment
from prism_experiments.tracking.tags import (
    BEST_TRIAL_TAG,
    CALIBRATION_EVALUATION_KIND,
    CALIBRATION_KIND,
    CALIBRATION_TRIAL_KIND,
    CONDITION_TAG,
    GIT_COMMIT_TAG,
    KIND_TAG,
    PARENT_RUN_TAG,
    SEED_TAG,
    TARGETS_TAG,
    TRIAL_TAG,
    VERSION_TAG_PREFIX,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

PER_SEED_ATTR = "per_seed_moments"
RUN_ID_ATTR = "mlflow_run_id"
log = logging.getLogger("prism_experiments")


@dataclass(frozen=True)
class CalibrationSettings:
    """What one `prism-calibrate` call does; `overrides` are extra Hydra overrides for every run."""

    target_set: TargetSet
    n_trials: int
    seeds: tuple[int, ...]
    runs_dir: Path
    sampler_seed: int = 0
    cache_dir: Path | None = None
    overrides: tuple[str, ...] = ()
    #: the population size to fit at (agents.n_agents); None: the config's own (200 by default)
    n_agents: int | None = None
    study_name: str | None = None
    tracking_uri: str | None = None
    experiment_name: str = "calibration"
    show_progress: bool = True

    @property
    def name(self) -> str:
        return self.study_name or self.target_set.name

    @property
    def storage_path(self) -> Path:
        return RunLayout(self.runs_dir).calibration_dir / f"{self.name}.db"

    @property
    def report_dir(self) -> Path:
        return RunLayout(self.runs_dir).calibration_dir / self.name


@dataclass
class CalibrationResult:
    """The study after the loop: its first (baseline) and best trials with their per-seed moments."""

    study_name: str
    storage: str
    parent_run_id: str
    best_params: dict[str, float]
    best_value: float
    first_value: float
    first_params: dict[str, float]
    baseline_per_seed: list[dict[str, float]] = field(default_factory=list)
    best_per_seed: list[dict[str, float]] = field(default_factory=list)
    n_complete: int = 0
    n_failed: int = 0
    seeds: list[int] = field(default_factory=list)


def base_overrides(settings: CalibrationSettings) -> list[str]:
    """The overrides of every calibration run: where it writes, the reference ranker, the reduced size."""
    cache = [f"rag.cache_dir={settings.cache_dir}"] if settings.cache_dir else []
    return [
        f"paths.runs_dir={settings.runs_dir}",
        *cache,
        f"ranking={settings.target_set.reference_ranking}",
        "simulation.show_progress=false",
        *settings.target_set.run_overrides,
        *([f"agents.n_agents={settings.n_agents}"] if settings.n_agents else []),
        *settings.overrides,
    ]


def param_overrides(params: Mapping[str, float]) -> list[str]:
    """`key=value` for each parameter, in sorted order (repr keeps every float digit)."""
    return [f"{key}={value!r}" for key, value in sorted(params.items())]


def config_values(cfg: ExperimentConfig, keys: Sequence[str]) -> dict[str, float]:
    """The values of dotted `keys` in a config."""
    flat = flatten(cfg.model_dump(mode="json"))
    return {key: flat[key] for key in keys}


def simulate_moments(
    overrides: Sequence[str], seeds: Sequence[int], on_result: Callable[[int, Any], None] | None = None
) -> tuple[list[dict[str, float]], dict[str, Any]]:
    """Calibration moments of one configuration for each seed, and the first seed's resolved config;
    `on_result(seed, result)` sees each run's result (its event log) before it is dropped."""
    per_seed: list[dict[str, float]] = []
    resolved: dict[str, Any] = {}
    for seed in seeds:
        cfg = compose_experiment([*overrides, f"seed={seed}"])
        resolved = resolved or cfg.model_dump(mode="json")
        result = run_simulation(cfg)
        per_seed.append(calibration_moments(result))
        if on_result is not None:
            on_result(seed, result)
    return per_seed, resolved


def suggest(trial: optuna.Trial, parameters: Mapping[str, Parameter]) -> dict[str, float]:
    """One value per parameter from the trial's sampler."""
    values: dict[str, float] = {}
    for key, spec in parameters.items():
        if spec.integer:
            values[key] = trial.suggest_int(key, int(spec.low), int(spec.high), log=spec.log)
        else:
            values[key] = trial.suggest_float(key, spec.low, spec.high, log=spec.log)
    return values


def _run_tags(settings: CalibrationSettings, kind: str) -> dict[str, str]:
    tags = {
        KIND_TAG: kind,
        TARGETS_TAG: settings.target_set.name,
        GIT_COMMIT_TAG: git_commit(),
        SEED_TAG: ",".join(map(str, settings.seeds)),
    }
    return tags | {f"{VERSION_TAG_PREFIX}{name}": version for name, version in package_versions().items()}


def log_evaluation(settings: CalibrationSettings, label: str, report_dir: Path, overrides: Sequence[str]) -> str:
    """An MLflow run of kind calibration_evaluation in the calibration experiment holding an `--evaluate`'s
    fit table and cascade-size CCDF (`report_dir`) as artifacts under `report/`; FINISHED, or FAILED if
    logging fails (never left RUNNING)."""
    uri = tracking_uri_for(settings.tracking_uri, settings.runs_dir)
    experiment_id = ensure_experiment(uri, settings.experiment_name, artifact_root(settings.runs_dir))
    client = client_for(uri)
    tags = _run_tags(settings, CALIBRATION_EVALUATION_KIND)
    run_id = client.create_run(experiment_id, run_name=f"evaluation {label}", tags=tags).info.run_id
    try:
        log_params(client, run_id, {"calibration.label": label, "calibration.overrides": " ".join(overrides)})
        client.log_artifacts(run_id, str(report_dir), "report")
    except BaseException as exc:
        end_run(client, run_id, "FAILED", error_line(exc))
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id


def _metric_payload(per_seed: list[dict[str, float]], target_set: TargetSet, value: float) -> dict[str, float]:
    metrics = sorted({target.metric for target in target_set.targets.values()})
    means = mean_moments(per_seed, metrics)
    payload = {"objective": value} | {f"sim/{name}": v for name, v in means.items() if not math.isnan(v)}
    return payload


def _run_trial(
    settings: CalibrationSettings, study: optuna.Study, client: MlflowClient, experiment_id: str, parent_run_id: str
) -> None:
    """Ask, simulate every seed, log the child run, tell; a failure marks both FAILED and the loop goes on."""
    target_set = settings.target_set
    trial = study.ask()
    params = suggest(trial, target_set.parameters)
    tags = (
        _run_tags(settings, CALIBRATION_TRIAL_KIND)
        | liveness_tags()
        | {
            PARENT_RUN_TAG: parent_run_id,
            TRIAL_TAG: str(trial.number),
            CONDITION_TAG: f"{target_set.reference_ranking} calibration={target_set.name} trial={trial.number}",
        }
    )
    run_id = client.create_run(experiment_id, run_name=f"{settings.name} trial {trial.number}", tags=tags).info.run_id
    trial.set_user_attr(RUN_ID_ATTR, run_id)
    try:
        per_seed, resolved = simulate_moments([*base_overrides(settings), *param_overrides(params)], settings.seeds)
        value = objective(
            mean_moments(per_seed, sorted({t.metric for t in target_set.targets.values()})), target_set.targets
        )
        log_params(client, run_id, to_params(resolved) | {f"calibration.{k}": repr(v) for k, v in params.items()})
        now = int(time.time() * 1000)
        for key, metric in _metric_payload(per_seed, target_set, value).items():
            client.log_metric(run_id, key, metric, timestamp=now, step=0)
        trial.set_user_attr(
            PER_SEED_ATTR,
            [{k: m[k] for k in sorted({t.metric for t in target_set.targets.values()})} for m in per_seed],
        )
        client.set_terminated(run_id, "FINISHED")
        study.tell(trial, value)
    except KeyboardInterrupt:
        end_run(client, run_id, "KILLED", "interrupted (KeyboardInterrupt)")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        raise
    except Exception as exc:
        message = error_line(exc)
        log.error("calibration trial %d FAILED: %s", trial.number, message)
        end_run(client, run_id, "FAILED", message)
        study.tell(trial, state=optuna.trial.TrialState.FAIL)


def open_study(settings: CalibrationSettings) -> optuna.Study:
    """The study `settings.name` in its sqlite file, created or continued; a new study's first trial is
    the current config's values (the uncalibrated baseline), so the fit is always compared with it."""
    settings.storage_path.parent.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{settings.storage_path}"
    sampler = optuna.samplers.TPESampler(seed=settings.sampler_seed)
    study = optuna.create_study(
        study_name=settings.name, storage=storage, sampler=sampler, direction="minimize", load_if_exists=True
    )
    if not study.trials:
        parameters = settings.target_set.parameters
        baseline = config_values(compose_experiment(base_overrides(settings)), list(parameters))
        # a null default is the mechanism off, which the low end (0) of its range reproduces
        baseline = {k: parameters[k].low if v is None and k in FITTABLE_WHEN_NULL else v for k, v in baseline.items()}
        outside = [k for k, v in baseline.items() if not parameters[k].low <= v <= parameters[k].high]
        if outside:  # the sampler cannot propose it; the study then has no baseline trial
            log.warning("no baseline trial: the config's %s lie outside their ranges", ", ".join(outside))
        else:
            study.enqueue_trial(baseline, skip_if_exists=True)
        study.set_user_attr("targets", settings.target_set.name)
        study.set_user_attr("seeds", list(settings.seeds))
    return study


def run_calibration(settings: CalibrationSettings) -> CalibrationResult:
    """Run `n_trials` more trials of the study under one MLflow parent run (never left RUNNING)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = open_study(settings)
    uri = tracking_uri_for(settings.tracking_uri, settings.runs_dir)
    experiment_id = ensure_experiment(uri, settings.experiment_name, artifact_root(settings.runs_dir))
    client = client_for(uri)
    reap_stale_runs(client, [experiment_id])
    tags = _run_tags(settings, CALIBRATION_KIND) | liveness_tags()
    parent = client.create_run(experiment_id, run_name=f"calibration {settings.name}", tags=tags).info.run_id
    heartbeat = Heartbeat(lambda: client.set_tag(parent, HEARTBEAT_TAG, f"{time.time():.0f}"))
    try:
        log_params(
            client,
            parent,
            {
                "calibration.targets": settings.target_set.name,
                "calibration.study": settings.name,
                "calibration.storage": str(settings.storage_path),
                "calibration.n_trials": str(settings.n_trials),
                "calibration.seeds": ",".join(map(str, settings.seeds)),
                "calibration.sampler_seed": str(settings.sampler_seed),
                "calibration.overrides": " ".join(base_overrides(settings)),
                **{
                    f"calibration.range.{k}": f"[{p.low}, {p.high}]{' log' if p.log else ''}"
                    for k, p in settings.target_set.parameters.items()
                },
            },
        )
        with heartbeat:
            for _ in tqdm(
                range(settings.n_trials),
                desc=f"calibrate {settings.name}",
                unit="trial",
                disable=not settings.show_progress,
            ):
                _run_trial(settings, study, client, experiment_id, parent)
        result = summarize_study(study, parent)
        set_tags(client, parent, {BEST_TRIAL_TAG: str(study.best_trial.number)} if result.n_complete else {})
        if result.n_complete:
            client.log_metric(parent, "best_objective", result.best_value, step=0)
            client.log_metric(parent, "first_objective", result.first_value, step=0)
        client.set_terminated(parent, "FINISHED" if result.n_complete else "FAILED")
        return result
    except KeyboardInterrupt:
        end_run(client, parent, "KILLED", "interrupted (KeyboardInterrupt)")
        raise
    except Exception as exc:
        end_run(client, parent, "FAILED", error_line(exc))
        raise


def summarize_study(study: optuna.Study, parent_run_id: str = "") -> CalibrationResult:
    """First and best complete trials of a study (ValueError if none completed)."""
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    failed = sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials)
    if not complete:
        raise ValueError(f"study {study.study_name}: no trial completed ({failed} failed)")
    first, best = complete[0], study.best_trial
    return CalibrationResult(
        study_name=study.study_name,
        storage="",
        parent_run_id=parent_run_id,
        best_params=dict(best.params),
        best_value=float(best.value),  # a COMPLETE trial has a value
        first_value=float(first.value),
        first_params=dict(first.params),
        baseline_per_seed=list(first.user_attrs.get(PER_SEED_ATTR, [])),
        best_per_seed=list(best.user_attrs.get(PER_SEED_ATTR, [])),
        n_complete=len(complete),
        n_failed=failed,
        seeds=list(study.user_attrs.get("seeds", [])),
    )


def nested(params: Mapping[str, float]) -> dict[str, Any]:
    """Dotted keys -> nested mappings."""
    tree: dict[str, Any] = {}
    for key, value in sorted(params.items()):
        *parents, leaf = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def world_values(fitted: ExperimentConfig) -> dict[str, float]:
    """Every fittable world value of the fitted config that differs from the models' defaults, the population
    size left out: the fitted parameters and the values of the world the calibration ran in (a world file
    replaces that world in the `world` group, so it must carry them)."""
    defaults = fittable_defaults()
    values = config_values(fitted, list(defaults))
    return {k: v for k, v in values.items() if v != defaults[k] and k != "agents.n_agents"}


def world_yaml(params: Mapping[str, float], header: Sequence[str], name: str, fitted_n_agents: int) -> str:
    """A `world` option file (`# @package _global_`) setting `params`, rounded to 4 significant digits (the
    seed-to-seed spread of every moment is far larger), and naming the world and the size it was fitted at."""
    import yaml

    rounded = {k: (int(v) if isinstance(v, int) else float(f"{v:.4g}")) for k, v in params.items()}
    tree = nested(rounded) | {"world": {"name": name, "fitted_n_agents": int(fitted_n_agents)}}
    body = yaml.safe_dump(tree, sort_keys=True, default_flow_style=False)
    return "# @package _global_\n" + "".join(f"# {line}\n" for line in header) + body


def result_json(result: CalibrationResult) -> str:
    """The study summary as JSON (for the report directory)."""
    return json.dumps({k: v for k, v in result.__dict__.items()}, indent=1, sort_keys=True, default=str)
