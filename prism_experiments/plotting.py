"""Figures shared by run artifacts and reports (matplotlib `Figure` on an Agg canvas, no pyplot state)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from prism_experiments.metrics.cascades import ccdf

DPI = 120


def new_figure(n_conditions: int) -> Figure:
    figure = Figure(figsize=(max(5.0, 1.3 * n_conditions + 2.0), 4.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def ccdf_figure(pooled: pd.DataFrame, conditions: Sequence[str], path: Path,
                title: str = "Cascade size CCDF, pooled over runs") -> Path:
    """Cascade-size CCDF P(size >= s) per condition, log-log when every size is positive."""
    figure = new_figure(2)
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
        axes.text(0.5, 0.5, "no cascades", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("cascade size (users)")
    axes.set_ylabel("P(size \u2265 s)")
    axes.set_title(title)
    figure.savefig(path)
    return path


def step_figure(series: pd.DataFrame, column: str, path: Path, ylabel: str, title: str) -> Path:
    """One per-step series as a line over steps."""
    figure = new_figure(2)
    axes = figure.add_subplot()
    if column in series and len(series):
        axes.plot(series.index.to_numpy(), series[column].to_numpy(dtype=float), marker="o", markersize=3)
    axes.set_xlabel("step")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    figure.savefig(path)
    return path
