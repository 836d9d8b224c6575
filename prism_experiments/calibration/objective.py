"""Distances between simulated and target moments: pure functions of numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from prism_experiments.calibration.targets import Target

#: Squared distance charged for a moment the run could not measure (NaN): worse than any in-range miss
#: of a scaled target, so a trial that produces no events is never preferred.
MISSING_PENALTY = 100.0


def gap(sim: float, value: float | None = None, interval: tuple[float, float] | None = None) -> float:
    """Signed gap to the reference: sim - value, or the distance outside [low, high] (0 inside)."""
    if (value is None) == (interval is None):
        raise ValueError("give exactly one of value and interval")
    if value is not None:
        return sim - value
    low, high = interval  # type: ignore[misc]
    return sim - low if sim < low else sim - high if sim > high else 0.0


def scaled_distance(sim: float, target: Target) -> float:
    """((sim - ref) / scale)^2, with the interval form of `gap`; MISSING_PENALTY for NaN."""
    if math.isnan(sim):
        return MISSING_PENALTY
    return (gap(sim, target.value, target.interval) / target.scale) ** 2


def within_tolerance(sim: float, target: Target) -> bool:
    """|gap| <= tolerance (NaN is never within)."""
    return not math.isnan(sim) and abs(gap(sim, target.value, target.interval)) <= target.tolerance + 1e-12


def objective(moments: Mapping[str, float], targets: Mapping[str, Target]) -> float:
    """sum over targets of weight * scaled_distance; excluded targets are left out."""
    return float(
        sum(
            target.weight * scaled_distance(moments[target.metric], target)
            for target in targets.values()
            if target.excluded is None
        )
    )


def mean_moments(per_seed: Sequence[Mapping[str, float]], metrics: Sequence[str]) -> dict[str, float]:
    """Mean of each metric over seeds, NaN seeds left out (NaN if every seed is NaN)."""
    means = {}
    for metric in metrics:
        values = [float(m[metric]) for m in per_seed if not math.isnan(float(m[metric]))]
        means[metric] = sum(values) / len(values) if values else math.nan
    return means
