"""Report figures: per metric the paired-by-seed box + strip plot and the forest plot of pairwise differences,
per-step series with CI bands, and the cascade-size CCDF. One style per condition in every figure.

Built on `matplotlib.figure.Figure` (Agg canvas) rather than pyplot, so no global figure
state or interactive backend is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from prism_experiments.plotting import ccdf_figure, condition_styles, new_figure  # noqa: F401  (ccdf_figure re-exported)


def metric_figure(values: pd.DataFrame, conditions: Sequence[str], metric: str, paired: bool, path: Path) -> Path:
    """Box plot per condition with every run as a point; in a paired design, grey lines join a seed's runs."""
    figure = new_figure(len(conditions))
    axes = figure.add_subplot()
    styles = condition_styles(conditions)
    present = values.dropna(subset=["value"])
    samples = [present.loc[present["condition"] == c, "value"].to_numpy(dtype=float) for c in conditions]
    positions = np.arange(1, len(conditions) + 1)
    axes.boxplot(samples, positions=positions, widths=0.5, showfliers=False)
    position_of = {c: p for c, p in zip(conditions, positions, strict=True)}
    x = present["condition"].map(position_of).to_numpy(dtype=float)
    # Fixed offsets by seed rank, not random jitter, so the figure is identical on every run.
    seed_rank = present["seed"].rank(method="dense").to_numpy()
    offset = 0.15 * (seed_rank / max(seed_rank.max(), 1.0) - 0.5) if len(present) else seed_rank
    if paired:
        wide = present.assign(x=x + offset).pivot(index="seed", columns="condition", values=["x", "value"])
        for seed in wide.index:
            axes.plot(wide.loc[seed, "x"].reindex(conditions), wide.loc[seed, "value"].reindex(conditions),
                      color="0.75", linewidth=0.8, zorder=1)  # fmt: skip
    for condition in conditions:
        mask = (present["condition"] == condition).to_numpy()
        style = styles[condition]
        axes.scatter(x[mask] + offset[mask], present.loc[mask, "value"], s=18, color=style.color,
                     marker=style.marker, alpha=0.85, zorder=2)  # fmt: skip
    axes.set_xticks(positions, list(conditions), rotation=25, ha="right")
    axes.set_ylabel(metric)
    axes.set_title(f"{metric} by condition ({'paired by seed' if paired else 'independent groups'})")
    figure.savefig(path)
    return path


def forest_figure(pairs: pd.DataFrame, metric: str, confidence: float, path: Path) -> Path:
    """Each pair's difference A − B with its CI as a horizontal bar; filled marker when significant."""
    figure = new_figure(3)
    figure.set_figheight(max(4.5, 0.5 * len(pairs) + 1.5))
    axes = figure.add_subplot()
    y = np.arange(len(pairs))[::-1]
    for position, row in zip(y, pairs.itertuples(index=False), strict=True):
        low, high = float(row.diff_ci_low), float(row.diff_ci_high)
        if np.isfinite(low) and np.isfinite(high):
            axes.plot([low, high], [position, position], color="black", linewidth=1.5)
        axes.plot([row.difference], [position], marker="D", markersize=7, color="black",
                  markerfacecolor="black" if bool(row.significant) else "white")  # fmt: skip
    axes.axvline(0.0, color="0.5", linestyle="--", linewidth=1)
    axes.set_yticks(
        y, [f"{row.condition_a}\n− {row.condition_b}" for row in pairs.itertuples(index=False)], fontsize="small"
    )
    axes.set_xlabel(f"A − B ({confidence:.0%} CI); filled = significant")
    figure.suptitle(f"{metric}: pairwise differences")
    figure.savefig(path)
    return path


def series_figure(bands: pd.DataFrame, conditions: Sequence[str], ylabel: str, title: str, path: Path) -> Path:
    """Per-step mean across seeds per condition (line + marker) with its CI as a shaded band."""
    figure = new_figure(2)
    axes = figure.add_subplot()
    styles = condition_styles(conditions)
    for condition in conditions:
        part = bands.loc[bands["condition"] == condition].sort_values("step")
        if part.empty:
            continue
        style = styles[condition]
        steps = part["step"].to_numpy(dtype=float)
        axes.fill_between(steps, part["ci_low"].to_numpy(dtype=float), part["ci_high"].to_numpy(dtype=float),
                          color=style.color, alpha=0.18, linewidth=0)  # fmt: skip
        axes.plot(steps, part["mean"].to_numpy(dtype=float), color=style.color, linestyle=style.linestyle,
                  marker=style.marker, markersize=4, markevery=max(1, len(part) // 12), label=condition)  # fmt: skip
    if bands.empty:
        axes.text(0.5, 0.5, "no per-step series logged", ha="center", va="center", transform=axes.transAxes)
    else:
        axes.legend(fontsize="small")
    axes.set_xlabel("step")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    figure.savefig(path)
    return path


def account_amplification_figure(units: pd.DataFrame, conditions: Sequence[str], path: Path) -> Path:
    """Per condition, the amplification of each top-1 % account (every seed's accounts pooled) as points over a box,
    against the dashed line at 0 (the reach chronological order gives; Huszár et al. 2022's individual
    amplification); `units` holds one row per account and seed (`amplification.UNIT_COLUMNS`, NaN rows dropped)."""
    present = units.dropna(subset=["amplification"])
    shown = [c for c in conditions if (present["condition"] == c).any()]
    figure = new_figure(3)
    figure.set_figheight(max(3.0, 1.1 * len(shown) + 1.6))
    axes = figure.add_subplot()
    styles = condition_styles(conditions)
    positions = np.arange(len(shown))[::-1]
    for position, condition in zip(positions, shown, strict=True):
        values = present.loc[present["condition"] == condition, "amplification"].to_numpy(dtype=float)
        axes.boxplot([values], positions=[position], vert=False, widths=0.5, showfliers=False)
        # fixed offsets by rank, not random jitter, so the figure is identical on every run
        offsets = 0.3 * ((np.arange(values.size) % 7) / 6 - 0.5)
        style = styles[condition]
        axes.scatter(values, position + offsets, s=9, color=style.color, marker=style.marker, alpha=0.5, zorder=2)
        below = float(np.mean(values < 0))
        axes.annotate(f"{below:.0%} below 0 (n = {values.size})", (1.0, position), xycoords=("axes fraction", "data"),
                      xytext=(-4, 10), textcoords="offset points", ha="right", fontsize="small")  # fmt: skip
    axes.axvline(0.0, color="0.4", linestyle="--", linewidth=1)
    axes.set_yticks(positions, shown)
    if not shown:
        axes.text(0.5, 0.5, "no account with a ratio", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("amplification: reach ÷ reach under chronological − 1 (0 = same reach, 1 = double)")
    axes.set_title("Top 1 % of accounts by followers, each alone (all seeds)")
    figure.savefig(path)
    return path
