"""The run summary: one float per metric name, the names MLflow logs them under."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prism_experiments.domain import EVENT_TABLES
from prism_experiments.metrics._tables import as_bool, as_int, event_table, require_columns
from prism_experiments.metrics.cascades import cascade_table
from prism_experiments.metrics.engagement import media_engagement_lift, ratio, split_engagement_rates
from prism_experiments.metrics.entropy import shannon_entropy
from prism_experiments.metrics.feeds import (
    DEFAULT_MAX_FEEDS_FOR_JACCARD,
    SAFETY_COLUMN,
    feed_jaccard_mean,
    mean_feed_entropy,
    safety_override_rate,
)
from prism_experiments.metrics.inequality import gini

SUMMARY_METRICS: tuple[str, ...] = (
    "feed_topic_entropy",
    "feed_author_entropy",
    "exposure_topic_entropy",
    "inn_share",
    "oon_share",
    "inn_engagement_rate",
    "oon_engagement_rate",
    "engagement_rate",
    "impressions_total",
    "likes_total",
    "reshares_total",
    "replies_total",
    "posts_total",
    "cascade_count",
    "cascade_size_mean",
    "cascade_size_p99",
    "cascade_size_max",
    "cascade_depth_mean",
    "cascade_depth_max",
    "cascade_breadth_max",
    "structural_virality_mean",
    "author_impression_gini",
    "feed_jaccard_mean",
    "interest_similarity_mean",
    "media_engagement_lift",
)
PRIMARY_METRICS: tuple[str, ...] = (
    "feed_topic_entropy",
    "exposure_topic_entropy",
    "inn_share",
    "engagement_rate",
    "cascade_size_mean",
    "cascade_depth_max",
    "structural_virality_mean",
    "author_impression_gini",
    "feed_jaccard_mean",
)
NAN = float("nan")


def new_post_mask(posts: pd.DataFrame) -> pd.Series:
    """Posts authored during the run (created_step >= 0) that are originals, not replies."""
    require_columns(posts, "posts", ["created_step", "parent_id"])
    return (as_int(posts["created_step"]) >= 0) & posts["parent_id"].isna()


def action_counts(engagements: pd.DataFrame) -> dict[str, int]:
    """Number of like, reshare and reply actions."""
    require_columns(engagements, "engagements", ["action"])
    counts = engagements["action"].value_counts()
    return {action: int(counts.get(action, 0)) for action in ("like", "reshare", "reply")}


def cascade_summary(cascades: pd.DataFrame) -> dict[str, float]:
    """Count, size mean/p99/max, depth mean/max, breadth max, mean structural virality; 0.0 without cascades."""
    if cascades.empty:
        return {
            name: 0.0
            for name in (
                "cascade_count",
                "cascade_size_mean",
                "cascade_size_p99",
                "cascade_size_max",
                "cascade_depth_mean",
                "cascade_depth_max",
                "cascade_breadth_max",
                "structural_virality_mean",
            )
        }
    sizes = cascades["size"].to_numpy(dtype=np.float64)
    return {
        "cascade_count": float(len(cascades)),
        "cascade_size_mean": float(sizes.mean()),
        "cascade_size_p99": float(np.percentile(sizes, 99, method="linear")),
        "cascade_size_max": float(sizes.max()),
        "cascade_depth_mean": float(cascades["depth"].mean()),
        "cascade_depth_max": float(cascades["depth"].max()),
        "cascade_breadth_max": float(cascades["max_breadth"].max()),
        "structural_virality_mean": float(cascades["structural_virality"].mean()),
    }


def author_impression_gini(posts: pd.DataFrame, exposures: pd.DataFrame) -> float:
    """Gini of impressions per author over every author in posts (and exposures), zeros included."""
    require_columns(posts, "posts", ["author_id"])
    require_columns(exposures, "exposures", ["author_id"])
    impressions = exposures.groupby("author_id").size()
    authors = pd.Index(posts["author_id"].dropna().unique()).union(impressions.index)
    return gini(impressions.reindex(authors, fill_value=0).to_numpy())


def summarize(result: object, *, max_feeds_for_jaccard: int = DEFAULT_MAX_FEEDS_FOR_JACCARD) -> dict[str, float]:
    """Every SUMMARY_METRICS value of a run (plus safety_override_rate when exposures carry it).

    `result` is an EventLog or any object with the five event-log DataFrames as attributes.
    Ratios and means over an empty set are NaN; counts and cascade statistics are 0.0.
    """
    tables = {name: event_table(result, name) for name in EVENT_TABLES}
    posts, exposures, engagements = tables["posts"], tables["exposures"], tables["engagements"]
    require_columns(exposures, "exposures", ["topic", "in_network", "interest_similarity"])
    n_impressions = len(exposures)
    inn_share = float(as_bool(exposures["in_network"]).mean()) if n_impressions else NAN
    inn_rate, oon_rate = split_engagement_rates(exposures, engagements, "in_network")
    actions = action_counts(engagements)

    summary: dict[str, float] = {
        "feed_topic_entropy": mean_feed_entropy(exposures, "topic"),
        "feed_author_entropy": mean_feed_entropy(exposures, "author_id"),
        "exposure_topic_entropy": shannon_entropy(exposures["topic"]) if n_impressions else NAN,
        "inn_share": inn_share,
        "oon_share": 1.0 - inn_share,
        "inn_engagement_rate": inn_rate,
        "oon_engagement_rate": oon_rate,
        "engagement_rate": ratio(len(engagements), n_impressions),
        "impressions_total": float(n_impressions),
        "likes_total": float(actions["like"]),
        "reshares_total": float(actions["reshare"]),
        "replies_total": float(actions["reply"]),
        "posts_total": float(new_post_mask(posts).sum()),
        **cascade_summary(cascade_table(tables["cascade_edges"])),
        "author_impression_gini": author_impression_gini(posts, exposures),
        "feed_jaccard_mean": feed_jaccard_mean(exposures, max_feeds_for_jaccard=max_feeds_for_jaccard),
        "interest_similarity_mean": (
            float(pd.to_numeric(exposures["interest_similarity"]).mean()) if n_impressions else NAN
        ),
        "media_engagement_lift": media_engagement_lift(exposures, engagements),
    }
    ordered = {name: summary[name] for name in SUMMARY_METRICS}
    if SAFETY_COLUMN in exposures.columns:
        ordered["safety_override_rate"] = safety_override_rate(exposures)
    return ordered
