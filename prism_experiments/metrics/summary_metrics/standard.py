"""The standard run summary: diversity, network share, engagement, volume, cascades, inequality, overlap.

Registered in the order the summary lists them (docs/metrics.md, "Run summary"). Ratios and means over an empty set
are NaN; counts and cascade statistics are 0.0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import as_bool
from prism_experiments.metrics.engagement import media_engagement_lift, ratio
from prism_experiments.metrics.entropy import shannon_entropy
from prism_experiments.metrics.feeds import SAFETY_COLUMN, feed_jaccard_mean, mean_over_feeds, safety_override_rate
from prism_experiments.metrics.inequality import author_impression_gini
from prism_experiments.metrics.registry import register_metric
from prism_experiments.metrics.run_tables import RunTables, new_post_mask

NAN = float("nan")
SHANNON = "Shannon 1948, entropy in bits"
COUNT = "count"
SHARE = "share of rows"
RATE = "engagements / impressions"
CASCADES = "Goel, Anderson, Hofman & Watts 2016 (Management Science 62(1)), cascade trees"


@register_metric(
    "feed_topic_entropy",
    description="mean over feeds of the entropy (bits) of the feed's topics; a post shown twice in a feed counts twice",
    source=SHANNON,
    columns="exposures.step, agent_id, topic",
    label="feed topic entropy",
    primary=True,
    headline=True,
)
def feed_topic_entropy(tables: RunTables) -> float:
    return mean_over_feeds(tables.feed_entropies("topic"))


@register_metric(
    "feed_author_entropy",
    description="mean over feeds of the entropy (bits) of the feed's authors",
    source=SHANNON,
    columns="exposures.step, agent_id, author_id",
)
def feed_author_entropy(tables: RunTables) -> float:
    return mean_over_feeds(tables.feed_entropies("author_id"))


@register_metric(
    "exposure_topic_entropy",
    description="entropy (bits) of the topics of all impressions of the run pooled",
    source=SHANNON,
    columns="exposures.topic",
    label="exposure topic entropy",
    primary=True,
)
def exposure_topic_entropy(tables: RunTables) -> float:
    return shannon_entropy(tables.exposures["topic"]) if tables.n_impressions else NAN


@register_metric(
    "inn_share",
    description="impressions with `in_network` true / impressions",
    source=SHARE,
    columns="exposures.in_network",
    label="in-network share",
    primary=True,
    headline=True,
)
def inn_share(tables: RunTables) -> float:
    return float(as_bool(tables.exposures["in_network"]).mean()) if tables.n_impressions else NAN


@register_metric(
    "oon_share",
    description="`1 − inn_share` (NaN with it)",
    source=SHARE,
    columns="exposures.in_network",
)
def oon_share(tables: RunTables) -> float:
    return 1.0 - inn_share(tables)


@register_metric(
    "inn_engagement_rate",
    description="engagements with `in_network` true / in-network impressions",
    source=RATE,
    columns="engagements.in_network, exposures.in_network",
)
def inn_engagement_rate(tables: RunTables) -> float:
    return tables.network_engagement_rates[0]


@register_metric(
    "oon_engagement_rate",
    description="engagements with `in_network` false / out-of-network impressions",
    source=RATE,
    columns="engagements.in_network, exposures.in_network",
)
def oon_engagement_rate(tables: RunTables) -> float:
    return tables.network_engagement_rates[1]


@register_metric(
    "engagement_rate",
    description="engagement actions (likes + reshares + replies) / impressions",
    source=RATE,
    columns="engagements, exposures",
    label="engagement rate",
    primary=True,
    headline=True,
)
def engagement_rate(tables: RunTables) -> float:
    return ratio(len(tables.engagements), tables.n_impressions)


@register_metric("impressions_total", description="number of impressions", source=COUNT, columns="exposures")
def impressions_total(tables: RunTables) -> float:
    return float(tables.n_impressions)


@register_metric("likes_total", description="number of `like` actions", source=COUNT, columns="engagements.action")
def likes_total(tables: RunTables) -> float:
    return float(tables.actions["like"])


@register_metric(
    "reshares_total", description="number of `reshare` actions", source=COUNT, columns="engagements.action"
)
def reshares_total(tables: RunTables) -> float:
    return float(tables.actions["reshare"])


@register_metric("replies_total", description="number of `reply` actions", source=COUNT, columns="engagements.action")
def replies_total(tables: RunTables) -> float:
    return float(tables.actions["reply"])


@register_metric(
    "posts_total",
    description="new original posts: `created_step >= 0` and `parent_id` null (replies and the starting corpus "
    "excluded)",
    source=COUNT,
    columns="posts.created_step, parent_id",
)
def posts_total(tables: RunTables) -> float:
    return float(new_post_mask(tables.posts).sum())


def over_cascades(tables: RunTables, statistic: Callable[[pd.DataFrame], float]) -> float:
    """`statistic` of the run's cascade table (one row per cascade); 0.0 when the run has no cascade."""
    return float(statistic(tables.cascades)) if len(tables.cascades) else 0.0


def sizes(cascades: pd.DataFrame) -> np.ndarray:
    """Every cascade's size (accounts, the root author included) as float64."""
    return cascades["size"].to_numpy(dtype=np.float64)


@register_metric(
    "cascade_count",
    description="number of cascades (roots with ≥ 1 reshare edge)",
    source=COUNT,
    columns="cascade_edges",
)
def cascade_count(tables: RunTables) -> float:
    return float(len(tables.cascades))


@register_metric(
    "cascade_size_mean",
    description="mean of `size` over cascades (0.0 without cascades)",
    source=CASCADES,
    columns="cascade_table",
    label="mean cascade size",
    primary=True,
    headline=True,
)
def cascade_size_mean(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: sizes(cascades).mean())


@register_metric(
    "cascade_size_p99",
    description="99th percentile of `size` over cascades (0.0 without cascades)",
    source="numpy.percentile(sizes, 99), linear interpolation",
    columns="cascade_table",
)
def cascade_size_p99(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: np.percentile(sizes(cascades), 99, method="linear"))


@register_metric(
    "cascade_size_max",
    description="max of `size` over cascades (0.0 without cascades)",
    source=CASCADES,
    columns="cascade_table",
)
def cascade_size_max(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: sizes(cascades).max())


@register_metric(
    "cascade_depth_mean",
    description="mean of `depth` over cascades (0.0 without cascades)",
    source=CASCADES,
    columns="cascade_table",
)
def cascade_depth_mean(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: cascades["depth"].mean())


@register_metric(
    "cascade_depth_max",
    description="max of `depth` over cascades (0.0 without cascades)",
    source=CASCADES,
    columns="cascade_table",
    label="maximum cascade depth",
    primary=True,
)
def cascade_depth_max(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: cascades["depth"].max())


@register_metric(
    "cascade_breadth_max",
    description="max of `max_breadth` over cascades (0.0 without cascades)",
    source=CASCADES,
    columns="cascade_table",
)
def cascade_breadth_max(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: cascades["max_breadth"].max())


@register_metric(
    "structural_virality_mean",
    description="mean of `structural_virality` over cascades (0.0 without cascades)",
    source="Goel, Anderson, Hofman & Watts 2016 (Management Science 62(1)), mean distance between two accounts",
    columns="cascade_table",
    label="mean structural virality",
    primary=True,
    headline=True,
)
def structural_virality_mean(tables: RunTables) -> float:
    return over_cascades(tables, lambda cascades: cascades["structural_virality"].mean())


@register_metric(
    "author_impression_gini",
    description="`gini` of impressions per author over every author in `posts` (authors without impressions count "
    "as 0; an author seen only in exposures is included too)",
    source="Damgaard & Weiner 2000 (Ecology 81(4)), Gini coefficient",
    columns="posts.author_id, exposures.author_id",
    label="author impression Gini",
    primary=True,
)
def author_impressions(tables: RunTables) -> float:
    return author_impression_gini(tables.posts, tables.exposures)


@register_metric(
    "feed_jaccard_mean",
    description="mean over steps of the mean Jaccard similarity of the post-id sets of every pair of feeds "
    "(section below)",
    source="Jaccard 1901; homogenization as in Chaney, Stewart & Engelhardt 2018 (RecSys)",
    columns="exposures.step, agent_id, post_id",
    label="mean feed overlap (Jaccard)",
    primary=True,
)
def feed_overlap(tables: RunTables) -> float:
    return feed_jaccard_mean(tables.exposures, max_feeds_for_jaccard=tables.max_feeds_for_jaccard)


@register_metric(
    "interest_similarity_mean",
    description="mean of `exposures.interest_similarity` over impressions (NaN values skipped)",
    source="arithmetic mean",
    columns="exposures.interest_similarity",
)
def interest_similarity_mean(tables: RunTables) -> float:
    return float(pd.to_numeric(tables.exposures["interest_similarity"]).mean()) if tables.n_impressions else NAN


@register_metric(
    "media_engagement_lift",
    description="(engagements with `has_media` / media impressions) ÷ (engagements without media / non-media "
    "impressions)",
    source="ratio of two engagement rates",
    columns="engagements.has_media, exposures.has_media",
)
def media_lift(tables: RunTables) -> float:
    return media_engagement_lift(tables.exposures, tables.engagements)


@register_metric(
    "safety_override_rate",
    description="only when exposures has a `comp_forced_by_safety` column: share of feeds in which any row has "
    "`comp_forced_by_safety == 1` (the pooled ranking's in-network guarantee fired)",
    source="share of feeds",
    columns="exposures.comp_forced_by_safety",
    optional=True,
)
def safety_overrides(tables: RunTables) -> float | None:
    return safety_override_rate(tables.exposures) if SAFETY_COLUMN in tables.exposures.columns else None
