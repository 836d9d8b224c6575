"""The political metrics (REQ-POL-10, docs/politics.md): in the summary of a run with politics, absent otherwise
(each returns None without the political columns). Formulas: prism_experiments/politics/measures.py."""

from __future__ import annotations

from prism_experiments.metrics.registry import register_metric
from prism_experiments.metrics.run_tables import RunTables
from prism_experiments.politics import measures

NYHAN = "Nyhan et al. 2023 (Nature 620:137), source classes"
NAN = float("nan")


def _impression_share(tables: RunTables, name: str) -> float | None:
    shares = measures.impression_class_shares(tables.exposures)
    if shares is None:
        return None if not measures.has_politics(tables.exposures) else NAN
    return shares[name]


def _engagement_share(tables: RunTables, name: str) -> float | None:
    if not measures.has_politics(tables.exposures):
        return None
    shares = measures.engagement_class_shares(tables.exposures, tables.engagements, tables.posts)
    return NAN if shares is None else shares[name]


@register_metric(
    "like_minded_impression_share",
    description="political readers' impressions of posts by authors on their side / their impressions",
    source=NYHAN,
    columns="exposures.reader_position, author_position",
    optional=True,
)
def like_minded_impression_share(tables: RunTables) -> float | None:
    return _impression_share(tables, "like_minded")


@register_metric(
    "cross_cutting_impression_share",
    description="political readers' impressions of posts by authors on the other side / their impressions",
    source=NYHAN,
    columns="exposures.reader_position, author_position",
    optional=True,
)
def cross_cutting_impression_share(tables: RunTables) -> float | None:
    return _impression_share(tables, "cross_cutting")


@register_metric(
    "neutral_impression_share",
    description="political readers' impressions of posts by non-political authors / their impressions",
    source=NYHAN,
    columns="exposures.reader_position, author_position",
    optional=True,
)
def neutral_impression_share(tables: RunTables) -> float | None:
    return _impression_share(tables, "neutral")


@register_metric(
    "like_minded_engagement_share",
    description="political readers' engagements with posts by authors on their side / their engagements",
    source=NYHAN,
    columns="engagements.agent_id, post_id; exposures.reader_position; posts.author_position",
    optional=True,
)
def like_minded_engagement_share(tables: RunTables) -> float | None:
    return _engagement_share(tables, "like_minded")


@register_metric(
    "cross_cutting_engagement_share",
    description="political readers' engagements with posts by authors on the other side / their engagements",
    source=NYHAN,
    columns="engagements.agent_id, post_id; exposures.reader_position; posts.author_position",
    optional=True,
)
def cross_cutting_engagement_share(tables: RunTables) -> float | None:
    return _engagement_share(tables, "cross_cutting")


@register_metric(
    "neutral_engagement_share",
    description="political readers' engagements with posts by non-political authors / their engagements",
    source=NYHAN,
    columns="engagements.agent_id, post_id; exposures.reader_position; posts.author_position",
    optional=True,
)
def neutral_engagement_share(tables: RunTables) -> float | None:
    return _engagement_share(tables, "neutral")


@register_metric(
    "animosity_impression_share",
    description="impressions of posts with at least one out-group term (animosity > 0) / impressions",
    source="Rathje, Van Bavel & van der Linden 2021 (PNAS 118:e2024292118), out-group terms",
    columns="exposures.post_animosity",
    optional=True,
)
def animosity_impression_share(tables: RunTables) -> float | None:
    shares = measures.animosity_shares(tables.exposures, tables.posts)
    return None if shares is None else shares[0]


@register_metric(
    "animosity_available_share",
    description="posts with at least one out-group term / every post of the run (the supply the feeds drew from)",
    source="Rathje, Van Bavel & van der Linden 2021 (PNAS 118:e2024292118), out-group terms",
    columns="posts.animosity",
    optional=True,
)
def animosity_available_share(tables: RunTables) -> float | None:
    shares = measures.animosity_shares(tables.exposures, tables.posts)
    return None if shares is None else shares[1]


@register_metric(
    "animosity_amplification",
    description="`animosity_impression_share` / `animosity_available_share`: above 1, feeds show hostile posts "
    "more than their supply",
    source="ratio; Milli et al. 2025 (PNAS Nexus) compare a ranked timeline's hostile share with a baseline's",
    columns="exposures.post_animosity, posts.animosity",
    optional=True,
)
def animosity_amplification(tables: RunTables) -> float | None:
    shares = measures.animosity_shares(tables.exposures, tables.posts)
    if shares is None:
        return None
    return shares[0] / shares[1] if shares[1] > 0 else NAN


@register_metric(
    "political_impression_share",
    description="impressions of political posts / impressions",
    source="share of rows",
    columns="exposures.post_political",
    optional=True,
)
def political_impression_share(tables: RunTables) -> float | None:
    return measures.political_share(tables.exposures)


@register_metric(
    "satisfaction_per_impression",
    description="mean stated-preference satisfaction of the impressions (-1 No, 0 Indifferent, +1 Yes)",
    source="Milli et al. 2025 (PNAS Nexus), stated preference scale",
    columns="exposures.satisfaction",
    optional=True,
)
def satisfaction_per_impression(tables: RunTables) -> float | None:
    return measures.satisfaction_per_impression(tables.exposures)


@register_metric(
    "left_reach_per_post",
    description="impressions of left authors' posts / left authors' posts; Huszár amplification = this under a "
    "ranker / under chronological − 1",
    source="Huszár et al. 2022 (PNAS 119:e2025334119), reach",
    columns="exposures.author_position; posts.author_position",
    optional=True,
)
def left_reach_per_post(tables: RunTables) -> float | None:
    if not measures.has_politics(tables.exposures):
        return None
    value = measures.side_reach(tables.exposures, tables.posts, -1)
    return NAN if value is None else value


@register_metric(
    "right_reach_per_post",
    description="impressions of right authors' posts / right authors' posts; Huszár amplification = this under a "
    "ranker / under chronological − 1",
    source="Huszár et al. 2022 (PNAS 119:e2025334119), reach",
    columns="exposures.author_position; posts.author_position",
    optional=True,
)
def right_reach_per_post(tables: RunTables) -> float | None:
    if not measures.has_politics(tables.exposures):
        return None
    value = measures.side_reach(tables.exposures, tables.posts, 1)
    return NAN if value is None else value


@register_metric(
    "reshare_assortativity",
    description="Pearson correlation of resharer's and author's positions over reshares between political agents",
    source="Newman 2003 (Phys. Rev. E 67:026126), scalar assortativity",
    columns="engagements.action, agent_id, post_id; exposures.reader_position; posts.author_position",
    optional=True,
)
def reshare_assortativity(tables: RunTables) -> float | None:
    return measures.reshare_assortativity(tables.exposures, tables.engagements, tables.posts)
