"""The calibration moments every run logs: authorship concentration and cascade shape (docs/metrics.md,
"Calibration moments"); the formulas are `metrics/moments.py`'s, shared with `make calibrate`."""

from __future__ import annotations

from prism_experiments.metrics.moments import (
    LARGE_CASCADE_SIZE,
    author_top_share,
    large_cascade_virality,
    never_reshared_share,
    share_reaching,
)
from prism_experiments.metrics.registry import register_metric
from prism_experiments.metrics.run_tables import RunTables

GOEL = "Goel, Anderson, Hofman & Watts 2016 (Management Science 62(1)), cascade size distribution"


@register_metric(
    "author_top10_post_share",
    description="share of the posts and replies written during the run by the top ⌈0.1·n⌉ of the n agents (those "
    "who wrote nothing included; an event log read without its agents: every account it names)",
    source="Wojcik & Hughes 2019 (Pew Research Center), top 10% of users by tweets",
    columns="posts.author_id, created_step",
    label="authorship top-decile share",
)
def author_top10_post_share(tables: RunTables) -> float:
    return author_top_share(tables.posts, tables.accounts, 0.1)


@register_metric(
    "never_reshared_share",
    description="among original posts shown at least once, the share never reshared (cascades of size 1)",
    source=GOEL,
    columns="posts.post_id, parent_id, exposures.post_id, engagements.action",
    label="never-reshared share",
)
def never_reshared(tables: RunTables) -> float:
    return never_reshared_share(tables.posts, tables.exposures, tables.engagements)


@register_metric(
    "cascades_reaching_10_share",
    description="among original posts shown at least once, the share whose cascade reached ≥ 10 accounts",
    source=GOEL,
    columns="posts, exposures.post_id, cascade_table",
)
def cascades_reaching_10(tables: RunTables) -> float:
    return share_reaching(tables.shown_original_sizes, 10)


@register_metric(
    "cascades_reaching_100_share",
    description="among original posts shown at least once, the share whose cascade reached ≥ 100 accounts",
    source=GOEL,
    columns="posts, exposures.post_id, cascade_table",
    label="share of cascades reaching 100 accounts",
)
def cascades_reaching_100(tables: RunTables) -> float:
    return share_reaching(tables.shown_original_sizes, 100)


@register_metric(
    "large_cascade_structural_virality",
    description=f"mean structural virality of the cascades of ≥ {LARGE_CASCADE_SIZE} accounts (NaN without one)",
    source="Goel, Anderson, Hofman & Watts 2016 (Management Science 62(1)), mean distance between two accounts",
    columns="cascade_table",
)
def large_cascade_structural_virality(tables: RunTables) -> float:
    return large_cascade_virality(tables.cascades)
