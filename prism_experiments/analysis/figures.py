"""PNG figures: per-metric box + strip plot by condition, and the cascade-size CCDF.

Built on `matplotlib.figure.Figure` (Agg canvas) rather than pyplot, so no global figure
state or interactive backend is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from prism_experiments.plotting import ccdf_figure, new_figure  # noqa: F401  (ccdf_figure re-exported)


def metric_figure(values: pd.DataFrame, conditions: Sequence[str], metric: str, paired: bool, path: Path) -> Path:
    """Box plot per condition with every run as a point; in a paired design, grey lines join a seed's runs."""
    figure = new_figure(len(conditions))
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
