"""Juul & Ugander (PNAS 2021): structural differences between diffusion processes that mostly differ in how far
they spread disappear when cascades are compared at the same size.

Harness: x_algo against reverse-chronological in the research world (the rankers change how many people see a
post, i.e. its infectiousness). Per seed, the difference of the two rankers' mean structural virality and mean
depth over all their cascades (pooled), and the same difference at matched size (metrics/size_matching.py).
The claim, an equivalence: the difference at matched size, as a share of the seed's pooled difference, is 0 within
±1/2 (size accounts for most of the pooled difference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from prism_experiments.metrics.size_matching import size_matched_difference
from prism_experiments.replication.findings.shared import RESEARCH_FULL_OVERRIDES, RESEARCH_QUICK_OVERRIDES
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

SOURCE = Source(
    citation="Juul, J. L. & Ugander, J. (2021). Comparing information diffusion mechanisms by matching on cascade "
    "size. PNAS 118(46), e2100786118",
    statement='"previously reported structural differences between diffusion paths of false and true news on '
    "Twitter disappear when comparing only cascades of the same size; differences between diffusion paths of "
    'images, videos, news, and petitions persist"; "it may be enough to focus on reducing the mean '
    "'infectiousness' of the information\"",
    verification="source text",
    checked_at="the paper's significance statement and abstract (PMC8609637)",
)
ARMS = (Arm("x_algo", ("ranking=x_algo",)), Arm("chronological", ("ranking=chronological",)))
#: cascade table column -> claim name
PROPERTIES = {"structural_virality": "virality_at_matched_size", "depth": "depth_at_matched_size"}
#: the share of the pooled difference that may remain at matched size for it to have "disappeared": less than half,
#: i.e. size accounts for most of it (a reading of the paper's word fixed before any run; docs/validation.md)
REMAINING_SHARE_MARGIN = 0.5
#: how each property's difference could persist at matched size in this model
PERSISTS = {
    "structural_virality": "If x_algo changed how cascades branch and not only how far they spread (its "
    "out-of-network impressions start new branches deep in a tree), cascades of the same size would still differ "
    "by half or more of the pooled difference in structural virality, outside the margin.",
    "depth": "If x_algo made cascades of a given size deeper (long chains of reshares through out-of-network "
    "impressions) rather than only larger, their difference in depth at matched size would stay at half or more "
    "of the pooled one, outside the margin.",
}
CLAIMS = tuple(
    Claim(
        name=claim,
        kind="equivalence",
        metric=f"x_algo − chronological difference in mean {column.replace('_', ' ')} at matched size, as a share "
        "of the seed's pooled difference (x), against 0 (y)",
        published="structural differences disappear at matched size when processes differ in infectiousness "
        "(true vs false news); no figure",
        source=SOURCE,
        margin=REMAINING_SHARE_MARGIN,
        margin_reason="'Disappear' read as: size accounts for most of the pooled difference, so less than half of "
        "it remains at matched size (half is where a difference stops being mostly size, the paper's "
        "infectiousness, and becomes mostly shape, which it says persists); fixed before any run, not fitted.",
        role="evidence",
        how_it_could_fail=PERSISTS[column],
    )
    for column, claim in PROPERTIES.items()
)


def remaining_share(pooled: float, matched: float) -> float:
    """matched / pooled: the share of the pooled difference left at matched size (NaN without a pooled difference)."""
    if not (math.isfinite(pooled) and math.isfinite(matched)) or pooled == 0:
        return float("nan")
    return matched / pooled


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the share of the pooled x_algo − chronological difference in virality and depth left at matched
    size."""
    a, b = runs["x_algo"]["cascades"], runs["chronological"]["cascades"]
    claims, figures = {}, {}
    for column, claim in PROPERTIES.items():
        difference = size_matched_difference(a, b, column)
        share = remaining_share(difference.pooled, difference.matched)
        # the equivalence's difference is the share itself: x - 0
        claims[claim] = SeedValues(share, 0.0 if math.isfinite(share) else math.nan)
        figures[f"{column}_pooled_difference"] = difference.pooled
        figures[f"{column}_matched_difference"] = difference.matched
    figures["cascade_size_mean_x_algo"] = float(a["size"].mean()) if len(a) else float("nan")
    figures["cascade_size_mean_chronological"] = float(b["size"].mean()) if len(b) else float("nan")
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Either there is no pooled difference to explain, or the rankers change cascade shape beyond size."""
    column = next(c for c, name in PROPERTIES.items() if name == result.claim)
    pooled, matched = figures.get(f"{column}_pooled_difference"), figures.get(f"{column}_matched_difference")
    if pooled is not None and matched is not None and abs(matched) >= REMAINING_SHARE_MARGIN * abs(pooled):
        return (
            f"the rankers differ in {column.replace('_', ' ')} at matched size ({matched:.3g}) by half or more of "
            f"the pooled difference ({pooled:.3g}): the ranker changes cascade shape, not only reach (as Goel et "
            "al.'s content types did)"
        )
    return "the pooled difference is small against its seed-to-seed spread: its share left at matched size is noise"


FINDING = Finding(
    name="juul_ugander2021",
    title="Juul & Ugander 2021: compare diffusion at matched cascade size, not pooled",
    arms=ARMS,
    claims=CLAIMS,
    tables={"cascades": ("size", "depth", "structural_virality")},
    measure=measure,
    seeds=10,
    quick_overrides=RESEARCH_QUICK_OVERRIDES,
    full_overrides=RESEARCH_FULL_OVERRIDES,
    reason=reason,
)
