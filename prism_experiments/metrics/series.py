"""Per-step time series of a run (what MLflow logs with `step=`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import as_bool, as_int, require_columns
from prism_experiments.metrics.run_tables import RunTables, new_post_mask

STEP_SERIES_COLUMNS: tuple[str, ...] = (
    "impressions",
    "engagements",
    "likes",
    "reshares",
    "replies",
    "inn_share",
    "feed_topic_entropy",
    "feed_author_entropy",
    "new_cascades",
    "new_posts",
    "new_follows",
)


def _counts_by_step(steps: pd.Series, index: pd.Index) -> pd.Series:
    """Rows per step, zero for steps without rows."""
    return as_int(steps).value_counts().reindex(index, fill_value=0).astype(np.int64)


def step_series(result: object) -> pd.DataFrame:
    """One row per step seen in exposures or engagements (sorted); counts are 0 and rates NaN where absent.

    new_cascades counts cascades whose first reshare happened in the step; new_posts counts
    original (non-reply) posts created in the step. `result` may be the `RunTables` the summary read: its feeds'
    entropies and cascades are then not computed again.
    """
    tables = RunTables.of(result)
    posts, exposures, engagements, follows = tables.posts, tables.exposures, tables.engagements, tables.follows
    require_columns(exposures, "exposures", ["step", "in_network"])
    require_columns(engagements, "engagements", ["step", "action"])
    require_columns(posts, "posts", ["created_step"])
    require_columns(follows, "follows", ["step"])
    exposure_steps, engagement_steps = as_int(exposures["step"]), as_int(engagements["step"])
    index = pd.Index(np.union1d(exposure_steps.unique(), engagement_steps.unique()).astype(np.int64), name="step")

    actions = engagements["action"]
    series = pd.DataFrame(index=index)
    series["impressions"] = _counts_by_step(exposure_steps, index)
    series["engagements"] = _counts_by_step(engagement_steps, index)
    for action, column in (("like", "likes"), ("reshare", "reshares"), ("reply", "replies")):
        series[column] = _counts_by_step(engagement_steps[actions.eq(action).to_numpy()], index)
    inn = as_bool(exposures["in_network"]).astype(np.float64).groupby(exposure_steps.to_numpy()).mean()
    series["inn_share"] = inn.reindex(index).astype(np.float64)
    for label, column in (("topic", "feed_topic_entropy"), ("author_id", "feed_author_entropy")):
        step_means = tables.feed_entropies(label).groupby(level="step").mean()
        step_means.index = as_int(step_means.index.to_series()).to_numpy()
        series[column] = step_means.reindex(index).astype(np.float64)
    series["new_cascades"] = _counts_by_step(tables.cascades["first_step"], index)
    series["new_posts"] = _counts_by_step(posts["created_step"][new_post_mask(posts).to_numpy()], index)
    series["new_follows"] = _counts_by_step(follows["step"], index)
    return series[list(STEP_SERIES_COLUMNS)]
