"""Estimate vs truth, which only a simulator has: the logged run of policy A estimates every target B, and B's own
run with the same seed (common random numbers: same world, agents, activation and behaviour draws) is the truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from prism_experiments.config import ExperimentConfig
from prism_experiments.domain import TARGET_PREFIX
from prism_experiments.metrics import summarize
from prism_experiments.ope.data import ope_inputs
from prism_experiments.ope.estimators import ESTIMATORS, Estimate
from prism_experiments.ranking.serving_config import TargetPolicyConfig
from prism_experiments.simulation import SimulationResult, run_simulation


@dataclass(frozen=True)
class ValidationRow:
    """One (seed, target): A's logged rate, B's on-policy rate, each estimate, and B's mass A never offered."""

    seed: int
    target: str
    logged: float
    truth: float
    estimates: dict[str, Estimate]
    unsupported: float


def on_policy_config(cfg: ExperimentConfig, target: TargetPolicyConfig) -> ExperimentConfig:
    """B's own run: A's config and seed with B's ranking (if it has one) and B's policy, logging no targets."""
    assert cfg.serving is not None, "the logging run serves stochastically"
    policy = target.model_dump(include={"policy", "temperature", "epsilon"})
    return cfg.model_copy(
        update={
            "ranking": target.ranking or cfg.ranking,
            "serving": cfg.serving.model_copy(update={**policy, "targets": []}),
        }
    )


def unsupported_mass(candidates: pd.DataFrame, target: str) -> float:
    """Share of B's position probability on cells A gives probability 0 (no estimator sees them: support deficiency)."""
    mass = candidates[f"{TARGET_PREFIX}{target}"]
    total = float(mass.sum())
    return float(mass[candidates["propensity"] <= 0].sum()) / total if total > 0 else float("nan")


def validate_seed(
    cfg: ExperimentConfig, n_boot: int = 1000, simulate: Callable[[ExperimentConfig], SimulationResult] = run_simulation
) -> list[ValidationRow]:
    """Every logged target of `cfg` (a stochastic config with targets): estimates from A's run vs B's own run."""
    assert cfg.serving is not None and cfg.serving.targets, "validation needs serving.targets"
    logged = simulate(cfg)
    rows = []
    for target in cfg.serving.targets:
        truth = summarize(simulate(on_policy_config(cfg, target)))["engagement_rate"]
        inputs = ope_inputs(logged.exposures, logged.engagements, logged.serving_candidates, target.name, seed=cfg.seed)
        rows.append(
            ValidationRow(
                cfg.seed,
                target.name,
                summarize(logged)["engagement_rate"],
                truth,
                inputs.estimates(n_boot, seed=cfg.seed),
                unsupported_mass(logged.serving_candidates, target.name),
            )
        )
    return rows


def coverage_table(rows: Sequence[ValidationRow]) -> pd.DataFrame:
    """Per target: seeds, mean truth, B's unsupported mass, per estimator how many CIs cover the truth and the mean
    |estimate - truth|; `logged_mae` is the no-OPE baseline mean |A's logged rate - truth| (how far B is from A)."""
    records = []
    for target in dict.fromkeys(row.target for row in rows):
        mine = [row for row in rows if row.target == target]
        record: dict[str, object] = {
            "target": target,
            "seeds": len(mine),
            "truth_mean": sum(r.truth for r in mine) / len(mine),
            "unsupported_mass": sum(r.unsupported for r in mine) / len(mine),
            "logged_mae": sum(abs(r.logged - r.truth) for r in mine) / len(mine),
        }
        for name in ESTIMATORS:
            record[f"{name}_covers"] = sum(r.estimates[name].covers(r.truth) for r in mine)
            record[f"{name}_mae"] = sum(abs(r.estimates[name].value - r.truth) for r in mine) / len(mine)
        records.append(record)
    return pd.DataFrame.from_records(records)
