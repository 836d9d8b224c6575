"""The replication's forest plot: one row per claim, its effect and 95 % CI against what it is read against.

Small multiples: each row has its own x axis in the claim's own units (a share, sessions per agent, a slope), because
the claims' units differ and a reader checks a row against its reference, never against another row. A contrast is
drawn against 0, a band against its shaded edges, an equivalence against its shaded ±margin. Evidence claims and
consistency checks are two groups under their own headings; the verdict is the colour (and a filled marker when the
claim holds, an open one when it does not, so the figure reads without colour). Built on `matplotlib.figure.Figure`
(Agg canvas), no pyplot state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, MaxNLocator

from prism_experiments.analysis.report import format_number, format_p
from prism_experiments.replication.model import (
    DOES_NOT_HOLD,
    EQUIVALENT,
    HOLDING,
    HOLDS,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMOKE,
    WITHIN_BAND,
    ClaimResult,
)

FOREST_PNG = "forest.png"
DPI = 120
#: Okabe-Ito colours (distinguishable with colour-vision deficiencies): holds, does not hold, not testable, smoke
HOLDS_COLOUR, FAILS_COLOUR, UNTESTED_COLOUR, SMOKE_COLOUR = "#009E73", "#D55E00", "#8c8c8c", "#0072B2"
REFERENCE_COLOUR = "#d9d9d9"
VERDICT_COLOURS: dict[str, str] = {
    REPRODUCED: HOLDS_COLOUR, WITHIN_BAND: HOLDS_COLOUR, EQUIVALENT: HOLDS_COLOUR, HOLDS: HOLDS_COLOUR,
    NOT_REPRODUCED: FAILS_COLOUR, DOES_NOT_HOLD: FAILS_COLOUR, NOT_TESTABLE: UNTESTED_COLOUR, SMOKE: SMOKE_COLOUR,
}  # fmt: skip
#: the layout in inches: figure width, the three columns (label, plot, verdict), the heights of each kind of row
WIDTH, LABEL_RIGHT, PLOT_LEFT, PLOT_RIGHT, TEXT_LEFT = 11.0, 3.3, 3.45, 7.35, 7.55
TOP, HEADING, ROW, PLOT_HEIGHT, BOTTOM = 1.05, 0.5, 0.62, 0.24, 0.15
#: a band this many times wider than its low edge is drawn on a log axis (goel2016's tail: tenfold either way)
LOG_SPAN = 100.0


def reference(result: ClaimResult) -> tuple[float, float] | None:
    """The shaded interval of a row: the band's edges (a missing edge: NaN) or ±margin; None for a contrast."""
    if result.kind == "equivalence":
        return -result.margin, result.margin
    if result.kind == "band":
        return result.low, result.high
    return None


def reference_label(result: ClaimResult) -> str:
    """The row's reference in words, under its name."""
    if result.kind == "contrast":
        return f"contrast vs 0, published {'> 0' if result.sign > 0 else '< 0'}"
    if result.kind == "equivalence":
        return f"equivalence, margin ±{format_number(result.margin)}"
    if math.isnan(result.high):
        return f"band ≥ {format_number(result.low)}"
    if math.isnan(result.low):
        return f"band ≤ {format_number(result.high)}"
    return f"band {format_number(result.low)} to {format_number(result.high)}"


def log_axis(result: ClaimResult) -> bool:
    """A band spanning orders of magnitude, with every value drawn positive: a log axis shows where in it a level is."""
    values = [v for v in (result.low, result.high, result.ci_low, result.ci_high, result.effect) if math.isfinite(v)]
    return (
        result.kind == "band"
        and math.isfinite(result.low)
        and math.isfinite(result.high)
        and result.low > 0
        and result.high / result.low >= LOG_SPAN
        and all(v > 0 for v in values)
    )


def x_limits(result: ClaimResult, log: bool) -> tuple[float, float]:
    """The row's x range: the effect, its CI and its reference, padded (a tenth of the range, or a factor on log)."""
    shaded = reference(result) or (0.0, 0.0)
    values = [v for v in (*shaded, result.ci_low, result.ci_high, result.effect) if math.isfinite(v)] or [0.0]
    low, high = min(values), max(values)
    if log:
        return low / 2.5, high * 2.5
    span = high - low or max(abs(high), 1.0)
    return low - 0.15 * span, high + 0.15 * span


def draw_row(axes: Axes, result: ClaimResult) -> None:
    """One claim: its reference (0, the shaded band or margin), its effect with the 95 % CI in the verdict's colour."""
    log = log_axis(result)
    if log:
        axes.set_xscale("log")
    low, high = x_limits(result, log)
    axes.set_xlim(low, high)
    axes.set_ylim(-1, 1)
    shaded = reference(result)
    if shaded is not None:
        left = shaded[0] if math.isfinite(shaded[0]) else low
        right = shaded[1] if math.isfinite(shaded[1]) else high
        axes.axvspan(left, right, color=REFERENCE_COLOUR, zorder=0, linewidth=0)
    if result.kind != "band":
        axes.axvline(0.0, color="0.35", linewidth=1.0, linestyle="--", zorder=1)
    colour = VERDICT_COLOURS.get(result.verdict, UNTESTED_COLOUR)
    if math.isfinite(result.ci_low) and math.isfinite(result.ci_high):
        axes.plot([result.ci_low, result.ci_high], [0, 0], color=colour, linewidth=2.6, solid_capstyle="butt",
                  zorder=2)  # fmt: skip
    if math.isfinite(result.effect):
        filled = result.verdict in HOLDING or result.verdict == HOLDS or result.verdict == SMOKE
        axes.plot([result.effect], [0], marker="D", markersize=7.5, color=colour,
                  markerfacecolor=colour if filled else "white", markeredgewidth=1.6, zorder=3)  # fmt: skip
    else:
        axes.text(0.5, 0.5, "no value: not tested", transform=axes.transAxes, ha="center", va="center", fontsize=8,
                  color="0.3", style="italic", zorder=4,
                  bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5})  # fmt: skip
    axes.set_yticks([])
    for side in ("left", "right", "top"):
        axes.spines[side].set_visible(False)
    axes.spines["bottom"].set_color("0.6")
    axes.tick_params(axis="x", labelsize=7.5, length=3, pad=1.5, colors="0.3")
    if log:
        axes.xaxis.set_major_locator(LogLocator(base=10, numticks=6))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(nbins=5))


def verdict_text(result: ClaimResult) -> tuple[str, str]:
    """The verdict and the numbers beside a row: effect [CI], p_holm (evidence) or p (consistency), seeds."""
    p = f"p_holm {format_p(result.p_holm)}" if result.evidence else f"p {format_p(result.p_value)}"
    if not result.tested:
        return result.verdict, f"{result.n_seeds} seed(s) with a value"
    numbers = f"{format_number(result.effect)} [{format_number(result.ci_low)}, {format_number(result.ci_high)}]"
    return result.verdict, f"{numbers}; {p}; {result.n_seeds} seeds"


def forest_figure(results: Sequence[ClaimResult], title: str, family_size: int, path: Path) -> Path:
    """The forest plot of every claim (evidence, then consistency), saved as PNG at `path`."""
    groups = [
        (f"Evidence claims: Holm over the family of {family_size}; these alone count as replication",
         [r for r in results if r.evidence]),
        ("Consistency checks: inputs, truths by construction, identities; raw p; never counted",
         [r for r in results if not r.evidence]),
    ]  # fmt: skip
    groups = [(heading, rows) for heading, rows in groups if rows]
    height = TOP + sum(HEADING + ROW * len(rows) for _, rows in groups) + BOTTOM
    figure = Figure(figsize=(WIDTH, height), dpi=DPI)
    FigureCanvasAgg(figure)

    def fx(inches: float) -> float:
        return inches / WIDTH

    def fy(from_top: float) -> float:
        return 1.0 - from_top / height

    figure.text(fx(0.15), fy(0.3), title, fontsize=11.5, fontweight="bold", va="center", ha="left", wrap=True)
    present = list(dict.fromkeys(VERDICT_COLOURS[r.verdict] for r in results if r.verdict in VERDICT_COLOURS))
    legend_labels = {
        HOLDS_COLOUR: "reproduced / within band / equivalent; a check holds",
        FAILS_COLOUR: "not reproduced; a check does not hold",
        UNTESTED_COLOUR: "not testable",
        SMOKE_COLOUR: "smoke size (--quick): not a verdict",
    }
    handles = [Line2D([], [], color=c, marker="D", linewidth=2.6, markersize=7,
                      markerfacecolor="white" if c == FAILS_COLOUR else c, label=legend_labels[c])
               for c in legend_labels if c in present]  # fmt: skip
    handles.append(Line2D([], [], color=REFERENCE_COLOUR, linewidth=8, label="band or ±margin"))
    handles.append(Line2D([], [], color="0.35", linewidth=1, linestyle="--", label="zero"))
    figure.legend(handles=handles, loc="center left", bbox_to_anchor=(fx(0.1), fy(0.75)), ncol=len(handles),
                  fontsize=8, frameon=False, handlelength=2.2, columnspacing=1.2)  # fmt: skip
    top = TOP
    for heading, rows in groups:
        figure.text(fx(0.15), fy(top + HEADING * 0.55), heading, fontsize=10.5, fontweight="bold", va="center",
                    color="0.15")  # fmt: skip
        figure.add_artist(Line2D([fx(0.15), fx(WIDTH - 0.15)], [fy(top + HEADING * 0.85)] * 2, color="0.75",
                                 linewidth=0.8))  # fmt: skip
        top += HEADING
        for result in rows:
            centre = top + 0.08 + PLOT_HEIGHT / 2
            axes = figure.add_axes((fx(PLOT_LEFT), fy(top + 0.08 + PLOT_HEIGHT), fx(PLOT_RIGHT - PLOT_LEFT),
                                    PLOT_HEIGHT / height))  # fmt: skip
            draw_row(axes, result)
            figure.text(fx(LABEL_RIGHT), fy(centre - 0.07), f"{result.finding} · {result.claim}", ha="right",
                        va="center", fontsize=9, fontweight="bold")  # fmt: skip
            figure.text(fx(LABEL_RIGHT), fy(centre + 0.13), reference_label(result), ha="right", va="center",
                        fontsize=7.5, color="0.35")  # fmt: skip
            verdict, numbers = verdict_text(result)
            figure.text(fx(TEXT_LEFT), fy(centre - 0.07), verdict, ha="left", va="center", fontsize=9,
                        fontweight="bold", color=VERDICT_COLOURS.get(result.verdict, UNTESTED_COLOUR))  # fmt: skip
            figure.text(fx(TEXT_LEFT), fy(centre + 0.13), numbers, ha="left", va="center", fontsize=7.5, color="0.3")
            top += ROW
    figure.savefig(path)
    return path
