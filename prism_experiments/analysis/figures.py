"""PNG figures: per-metric box + strip plot by condition, and the cascade-size CCDF.

Built on `matplotlib.figure.Figure` (Agg canvas) rather than pyplot, so no global figure
state or interactive backend is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from prism_experiments.analysis.stats import ccdf

DPI = 120


def _new_figure(n_conditions: int) -> Figure:
    figure = Figure(figsize=(max(5.0, 1.3 * n_conditions + 2.0), 4.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def metric_figure(values: pd.DataFrame, conditions: Sequence[str], metric: str, paired: bool, path: Path) -> Path:
    """Box plot per condition with every run as a point; in a paired design, grey lines join a seed's runs."""
    figure = _new_figure(len(conditions))
    axes = figure.add_subplot()
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
    axes.scatter(x + offset, present["value"], s=16, color="tab:blue", alpha=0.8, zorder=2)
    axes.set_xticks(positions, list(conditions), rotation=25, ha="right")
    axes.set_ylabel(metric)
    axes.set_title(f"{metric} by condition ({'paired by seed' if paired else 'independent groups'})")
    figure.savefig(path)
    return path


def ccdf_figure(pooled: pd.DataFrame, conditions: Sequence[str], path: Path) -> Path:
    """Cascade-size CCDF P(size >= s) per condition, log-log when every size is positive."""
    figure = _new_figure(2)
    axes = figure.add_subplot()
    drawn = False
    for condition in conditions:
        sizes = pooled.loc[pooled["condition"] == condition, "size"].to_numpy(dtype=float)
        if sizes.size == 0:
            continue
        x, p = ccdf(sizes)
        axes.step(x, p, where="pre", label=f"{condition} (n={sizes.size})")
        drawn = True
    if drawn:
        if (pooled["size"] > 0).all():
            axes.set_xscale("log")
            axes.set_yscale("log")
        axes.legend(fontsize="small")
    else:
        axes.text(0.5, 0.5, "no cascades in the compared runs", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("cascade size (users)")
    axes.set_ylabel("P(size \u2265 s)")
    axes.set_title("Cascade size CCDF, pooled over runs")
    figure.savefig(path)
    return path
