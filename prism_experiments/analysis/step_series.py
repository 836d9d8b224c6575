"""Per-step series per condition for the report: mean across seeds with a t confidence band.

`load_step_values` reads the runs' `step/<name>` metric histories; the rest is pure (DataFrames in and out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from prism_experiments.tracking.run_logger import STEP_PREFIX

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

#: (series, axis label): the report's per-step figures. engagement_rate = engagements / impressions per step.
REPORT_SERIES: tuple[tuple[str, str], ...] = (
    ("inn_share", "in-network share of impressions"),
    ("feed_topic_entropy", "mean feed topic entropy (bits)"),
    ("engagement_rate", "engagements per impression"),
)
RAW_SERIES: tuple[str, ...] = ("inn_share", "feed_topic_entropy", "engagements", "impressions")
VALUE_COLUMNS: tuple[str, ...] = ("run_id", "condition", "seed", "step", "series", "value")
BAND_COLUMNS: tuple[str, ...] = ("series", "condition", "step", "n", "mean", "ci_low", "ci_high")


def load_step_values(client: MlflowClient, runs: pd.DataFrame, names: Sequence[str] = RAW_SERIES) -> pd.DataFrame:
    """VALUE_COLUMNS for every run of `runs` (run_id, condition, seed) and logged series in `names`."""
    rows = []
    for run in runs.itertuples(index=False):
        for name in names:
            for metric in client.get_metric_history(run.run_id, f"{STEP_PREFIX}{name}"):
                rows.append((run.run_id, run.condition, run.seed, int(metric.step), name, float(metric.value)))
    return pd.DataFrame(rows, columns=list(VALUE_COLUMNS))


def with_engagement_rate(values: pd.DataFrame) -> pd.DataFrame:
    """`values` plus the series engagement_rate = engagements / impressions (NaN where no impressions)."""
    keys = ["run_id", "condition", "seed", "step"]
    wide = values.pivot_table(index=keys, columns="series", values="value", aggfunc="first")
    if not {"engagements", "impressions"} <= set(wide.columns):
        return values
    impressions = wide["impressions"].where(wide["impressions"] > 0)
    rate = (wide["engagements"] / impressions).rename("value").reset_index().assign(series="engagement_rate")
    return pd.concat([values, rate[list(VALUE_COLUMNS)]], ignore_index=True)


def step_bands(values: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per series, condition and step: n seeds, their mean and the t-interval of the mean (NaN for n < 2)."""
    present = values.dropna(subset=["value"])
    grouped = present.groupby(["series", "condition", "step"], sort=True)["value"]
    bands = grouped.agg(n="count", mean="mean", sd="std").reset_index()
    n = bands["n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = stats.t.ppf(0.5 + confidence / 2, np.where(n > 1, n - 1, np.nan))
        half = t * bands["sd"].to_numpy(dtype=float) / np.sqrt(n)
    bands["ci_low"] = bands["mean"] - half
    bands["ci_high"] = bands["mean"] + half
    return bands.reindex(columns=list(BAND_COLUMNS))
