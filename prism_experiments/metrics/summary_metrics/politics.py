"""The political metrics (REQ-POL-10, docs/politics.md): in the summary of a run with politics, absent otherwise
(each returns None without the political columns). Formulas: prism_experiments/politics/measures.py."""

from __future__ import annotations

from prism_experiments.metrics.registry import MetricFunction, register_metric
from prism_experiments.metrics.run_tables import RunTables
from prism_experiments.politics import measures

NYHAN = "Nyhan et al. 2023 (Nature 620:137), source classes"
RATHJE = "Rathje, Van Bavel & van der Linden 2021 (PNAS 118:e2024292118), out-group terms"
HUSZAR = "Huszár et al. 2022 (PNAS 119:e2025334119), reach"
NAN = float("nan")
#: Nyhan et al.'s source classes (`measures.EXPOSURE_CLASSES`) and the authors each counts, in summary order
SOURCE_CLASSES: tuple[tuple[str, str], ...] = (
    ("like_minded", "authors on their side"),
    ("cross_cutting", "authors on the other side"),
    ("neutral", "non-political authors"),
)


#: compared by default (`make compare` on a political experiment's runs: the exposure classes, hostile and political
#: shares and satisfaction, the outcomes of the field studies of docs/politics.md); runs without politics lack them,
#: and the comparison leaves them out without a word (analysis/selection.py, `choose_metrics`)
PRIMARY: frozenset[str] = frozenset(
    {
        "like_minded_impression_share",
        "cross_cutting_impression_share",
        "animosity_impression_share",
        "political_impression_share",
        "satisfaction_per_impression",
    }
)


def _register(name: str, compute: MetricFunction, *, description: str, source: str, columns: str) -> None:
    """Register `compute` as the optional metric `name`; the function takes that name too (`Metric.origin`)."""
    compute.__name__ = compute.__qualname__ = name
    register_metric(
        name, description=description, source=source, columns=columns, optional=True, primary=name in PRIMARY
    )(compute)


def _impression_share(source_class: str) -> MetricFunction:
    """The class's share of political readers' impressions (Nyhan et al. 2023); NaN when they had none."""

    def share(tables: RunTables) -> float | None:
        shares = measures.impression_class_shares(tables.exposures)
        if shares is None:
            return None if not measures.has_politics(tables.exposures) else NAN
        return shares[source_class]

    return share


def _engagement_share(source_class: str) -> MetricFunction:
    """The class's share of political readers' engagements (Nyhan et al. 2023); NaN when they had none."""

    def share(tables: RunTables) -> float | None:
        if not measures.has_politics(tables.exposures):
            return None
        shares = measures.engagement_class_shares(tables.exposures, tables.engagements, tables.posts)
        return NAN if shares is None else shares[source_class]

    return share


def _animosity_share(index: int) -> MetricFunction:
    """Item `index` of `measures.animosity_shares`: 0 the impressions' hostile share, 1 the posts' (Rathje 2021)."""

    def share(tables: RunTables) -> float | None:
        shares = measures.animosity_shares(tables.exposures, tables.posts)
        return None if shares is None else shares[index]

    return share


def _side_reach(side: int) -> MetricFunction:
    """Impressions per post of the side's (-1 left, +1 right) authors (Huszár et al. 2022); NaN without such posts."""

    def reach(tables: RunTables) -> float | None:
        if not measures.has_politics(tables.exposures):
            return None
        value = measures.side_reach(tables.exposures, tables.posts, side)
        return NAN if value is None else value

    return reach


for events, verb, columns, class_share in (
    ("impression", "of", "exposures.reader_position, author_position", _impression_share),
    (
        "engagement",
        "with",
        "engagements.agent_id, post_id; exposures.reader_position; posts.author_position",
        _engagement_share,
    ),
):
    for source_class, authors in SOURCE_CLASSES:
        _register(
            f"{source_class}_{events}_share",
            class_share(source_class),
            description=f"political readers' {events}s {verb} posts by {authors} / their {events}s",
            source=NYHAN,
            columns=columns,
        )

_register(
    "animosity_impression_share",
    _animosity_share(0),
    description="impressions of posts with at least one out-group term (animosity > 0) / impressions",
    source=RATHJE,
    columns="exposures.post_animosity",
)
_register(
    "animosity_available_share",
    _animosity_share(1),
    description="posts with at least one out-group term / every post of the run (the supply the feeds drew from)",
    source=RATHJE,
    columns="posts.animosity",
)


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
    primary=True,
)
def political_impression_share(tables: RunTables) -> float | None:
    return measures.political_share(tables.exposures)


@register_metric(
    "satisfaction_per_impression",
    description="mean stated-preference satisfaction of the impressions (-1 No, 0 Indifferent, +1 Yes)",
    source="Milli et al. 2025 (PNAS Nexus), stated preference scale",
    columns="exposures.satisfaction",
    optional=True,
    primary=True,
)
def satisfaction_per_impression(tables: RunTables) -> float | None:
    return measures.satisfaction_per_impression(tables.exposures)


for side, position in (("left", -1), ("right", 1)):
    _register(
        f"{side}_reach_per_post",
        _side_reach(position),
        description=f"impressions of {side} authors' posts / {side} authors' posts; Huszár amplification = this "
        "under a ranker / under chronological − 1",
        source=HUSZAR,
        columns="exposures.author_position; posts.author_position",
    )


@register_metric(
    "reshare_assortativity",
    description="Pearson correlation of resharer's and author's positions over reshares between political agents",
    source="Newman 2003 (Phys. Rev. E 67:026126), scalar assortativity",
    columns="engagements.action, agent_id, post_id; exposures.reader_position; posts.author_position",
    optional=True,
)
def reshare_assortativity(tables: RunTables) -> float | None:
    return measures.reshare_assortativity(tables.exposures, tables.engagements, tables.posts)
