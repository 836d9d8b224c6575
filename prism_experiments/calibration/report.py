"""The fit table: target, reference, simulated mean with a 95% CI over seeds, within tolerance or not."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from prism_experiments.calibration.objective import scaled_distance, within_tolerance
from prism_experiments.calibration.targets import Target

FIT_COLUMNS: tuple[str, ...] = (
    "target",
    "metric",
    "reference",
    "sim_mean",
    "ci_low",
    "ci_high",
    "n_seeds",
    "within_tolerance",
    "weight",
    "distance",
    "source",
)


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval over seeds, NaN values left out; one value -> (x, nan, nan)."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if x.size == 1:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


def reference_text(target: Target) -> str:
    """`0.5 ± 0.05` or `[0.9, 0.99] ± 0.02`."""
    ref = f"{target.value:g}" if target.value is not None else f"[{target.interval[0]:g}, {target.interval[1]:g}]"  # type: ignore[index]
    return f"{ref} ± {target.tolerance:g}"


def fit_table(targets: Mapping[str, Target], per_seed: Sequence[Mapping[str, float]]) -> pd.DataFrame:
    """One row per target (excluded ones too, marked), from the per-seed moments of one configuration."""
    rows = []
    for name, target in targets.items():
        mean, low, high = mean_ci([float(m.get(target.metric, math.nan)) for m in per_seed])
        excluded = target.excluded is not None
        rows.append(
            {
                "target": name,
                "metric": target.metric,
                "reference": reference_text(target),
                "sim_mean": mean,
                "ci_low": low,
                "ci_high": high,
                "n_seeds": len(per_seed),
                "within_tolerance": "excluded" if excluded else ("yes" if within_tolerance(mean, target) else "no"),
                "weight": 0.0 if excluded else target.weight,
                "distance": math.nan if excluded else target.weight * scaled_distance(mean, target),
                "source": target.source.citation,
            }
        )
    return pd.DataFrame(rows, columns=list(FIT_COLUMNS))


def to_markdown(table: pd.DataFrame, title: str) -> str:
    """A markdown table of the fit (numbers to 3 decimals)."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return "" if math.isnan(value) else f"{value:.3f}"
        return str(value).replace("|", "/")

    header = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "---|" * len(table.columns)
    lines = [f"## {title}", "", header, rule]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_report(directory: Path, tables: Mapping[str, pd.DataFrame], preamble: str = "") -> Path:
    """`fit.md` (every table) and `fit_<label>.csv` per table in `directory`; returns the markdown path."""
    directory.mkdir(parents=True, exist_ok=True)
    parts = [preamble] if preamble else []
    for label, table in tables.items():
        table.to_csv(directory / f"fit_{label}.csv", index=False)
        parts.append(to_markdown(table, label))
    path = directory / "fit.md"
    path.write_text("\n".join(parts))
    return path
