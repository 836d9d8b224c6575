"""Engagement per impression: overall, in- vs out-of-network, media vs non-media, per format."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import as_bool, event_table, require_columns


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is zero (an undefined rate, not a zero rate)."""
    return float(numerator) / float(denominator) if denominator else float("nan")


def split_engagement_rates(exposures: pd.DataFrame, engagements: pd.DataFrame, flag: str) -> tuple[float, float]:
    """(rate where `flag` is true, rate where it is false): engagements / impressions within each side."""
    require_columns(exposures, "exposures", [flag])
    require_columns(engagements, "engagements", [flag])
    shown = as_bool(exposures[flag])
    engaged = as_bool(engagements[flag])
    n_shown_true, n_engaged_true = int(shown.sum()), int(engaged.sum())
    return (
        ratio(n_engaged_true, n_shown_true),
        ratio(len(engaged) - n_engaged_true, len(shown) - n_shown_true),
    )


def media_engagement_lift(exposures: pd.DataFrame, engagements: pd.DataFrame) -> float:
    """Engagement rate of media impressions / that of non-media impressions; NaN when undefined."""
    media_rate, plain_rate = split_engagement_rates(exposures, engagements, "has_media")
    return ratio(media_rate, plain_rate)


def engagement_rate_by_format(result: object) -> pd.DataFrame:
    """One row per post format present in exposures (sorted): impressions, engagements, engagements per impression.

    `result` is an EventLog or any object with `exposures` and `engagements` DataFrames.
    """
    exposures, engagements = event_table(result, "exposures"), event_table(result, "engagements")
    require_columns(exposures, "exposures", ["format"])
    require_columns(engagements, "engagements", ["format"])
    impressions = exposures.groupby("format", dropna=False, sort=True).size()
    engaged = engagements.groupby("format", dropna=False).size().reindex(impressions.index, fill_value=0)
    table = pd.DataFrame(
        {
            "format": impressions.index.to_numpy(dtype=object),
            "impressions": impressions.to_numpy(dtype=np.int64),
            "engagements": engaged.to_numpy(dtype=np.int64),
        }
    )
    table["engagement_rate"] = table["engagements"] / table["impressions"]
    return table.astype({"engagement_rate": np.float64})
