"""Moments for calibration against published platform figures: authorship concentration and cascade shape.

Pure functions of the event log; they are not part of `summarize` (the run summary and its golden
fixture stay as they are), the calibration adds them to the summary (`calibration_moments`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import as_int, event_table, require_columns
from prism_experiments.metrics.summary import summarize

NAN = float("nan")
EXTRA_MOMENTS: tuple[str, ...] = ("author_top10_post_share", "never_reshared_share")


def top_share(values: Iterable[float], fraction: float = 0.1) -> float:
    """Share of the total held by the top `fraction` of units (ceil(fraction * n) largest); NaN if the total is 0."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction: must be in (0, 1], got {fraction}")
    x = np.sort(np.asarray(list(values), dtype=np.float64))[::-1]
    if x.size and x[-1] < 0:
        raise ValueError(f"values: must be non-negative, got minimum {x[-1]}")
    total = x.sum()
    if x.size == 0 or total == 0:
        return NAN
    k = int(np.ceil(fraction * x.size - 1e-9))
    return float(x[:k].sum() / total)


def author_top_share(posts: pd.DataFrame, author_ids: Iterable[str], fraction: float = 0.1) -> float:
    """Share of the posts and replies written during the run (created_step >= 0) by the top `fraction` of
    `author_ids` (every agent, those who wrote nothing included, as in Pew 2019's user sample)."""
    require_columns(posts, "posts", ["author_id", "created_step"])
    written = posts.loc[as_int(posts["created_step"]) >= 0, "author_id"].value_counts()
    ids = pd.Index(list(author_ids))
    return top_share(written.reindex(ids, fill_value=0).to_numpy(), fraction)


def never_reshared_share(posts: pd.DataFrame, exposures: pd.DataFrame, engagements: pd.DataFrame) -> float:
    """Among original posts (not replies) shown at least once, the share never reshared: the cascades of size 1.

    A post nobody was shown cannot spread in any model, so unseen posts are left out of the denominator.
    """
    require_columns(posts, "posts", ["post_id", "parent_id"])
    require_columns(exposures, "exposures", ["post_id"])
    require_columns(engagements, "engagements", ["post_id", "action"])
    originals = set(posts.loc[posts["parent_id"].isna(), "post_id"])
    shown = set(exposures["post_id"]) & originals
    if not shown:
        return NAN
    reshared = set(engagements.loc[engagements["action"] == "reshare", "post_id"]) & shown
    return 1.0 - len(reshared) / len(shown)


def calibration_moments(result: object) -> dict[str, float]:
    """The run summary plus EXTRA_MOMENTS; `result` carries the event log and `agents`."""
    posts = event_table(result, "posts")
    agent_ids = [agent.id for agent in getattr(result, "agents", [])]
    return summarize(result) | {
        "author_top10_post_share": author_top_share(posts, agent_ids, 0.1),
        "never_reshared_share": never_reshared_share(
            posts, event_table(result, "exposures"), event_table(result, "engagements")
        ),
    }
