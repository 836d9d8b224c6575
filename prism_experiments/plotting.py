"""Figures shared by run artifacts and reports (matplotlib `Figure` on an Agg canvas, no pyplot state)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from prism_experiments.metrics.cascades import ccdf

DPI = 120
#: Okabe-Ito colours (distinguishable with colour-vision deficiencies), then tab10 for many conditions.
PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                            "#F0E442", "#8c564b", "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
LINESTYLES: tuple[str, ...] = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class Style:
    """How one condition is drawn in every figure: colour, marker and line style (readable without colour)."""

    color: str
    marker: str
    linestyle: str


def condition_styles(conditions: Sequence[str]) -> dict[str, Style]:
    """A fixed style per condition, by its position in `conditions` (the report's condition order)."""
    return {
        condition: Style(PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], LINESTYLES[i % len(LINESTYLES)])
        for i, condition in enumerate(conditions)
    }


def new_figure(n_conditions: int) -> Figure:
    figure = Figure(figsize=(max(5.0, 1.3 * n_conditions + 2.0), 4.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def plain_number(value: float, _position: object = None) -> str:
    """A tick label as a plain number (`1`, `20`, `0.01`), never `2×10⁰`."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def plain_log_axes(axes: Axes, integer_x: bool = True) -> None:
    """Log-log axes labelled with plain numbers: 1, 2, 5, 10, 20, ... on x (integers), decades on y."""
    axes.set_xscale("log")
    axes.set_yscale("log")
    if integer_x:
        axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 1 else ""))
    else:
        axes.xaxis.set_major_formatter(FuncFormatter(plain_number))
    axes.yaxis.set_major_formatter(FuncFormatter(plain_number))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.yaxis.set_minor_formatter(NullFormatter())


def ccdf_figure(
    pooled: pd.DataFrame, conditions: Sequence[str], path: Path, title: str = "Cascade size CCDF, pooled over runs"
) -> Path:
    """Cascade-size CCDF P(size >= s) per condition on one log-log axis, one style per condition."""
    figure = new_figure(2)
    axes = figure.add_subplot()
    styles = condition_styles(conditions)
    drawn = False
    for condition in conditions:
        sizes = pooled.loc[pooled["condition"] == condition, "size"].to_numpy(dtype=float)
        if sizes.size == 0:
            continue
        x, p = ccdf(sizes)
        style = styles[condition]
        axes.step(
            x, p, where="pre", color=style.color, linestyle=style.linestyle, label=f"{condition} (n={sizes.size})"
        )
        axes.plot(
            x, p, linestyle="none", marker=style.marker, color=style.color, markersize=4, markevery=max(1, x.size // 12)
        )
        drawn = True
    if drawn:
        if (pooled["size"] > 0).all():
            plain_log_axes(axes)
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
