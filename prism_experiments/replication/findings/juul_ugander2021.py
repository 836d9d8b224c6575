"""Juul & Ugander (PNAS 2021): structural differences between diffusion processes that mostly differ in how far
they spread disappear when cascades are compared at the same size.

Harness: x_algo against reverse-chronological in the research world (the rankers change how many people see a
post, i.e. its infectiousness). Per seed, the difference of the two rankers' mean structural virality and mean
depth over all their cascades (pooled), and the same difference at matched size (metrics/size_matching.py).
The claim: the pooled difference shrinks once size is matched, |pooled| > |matched|.
"""

from __future__ import annotations

from collections.abc import Mapping

from prism_experiments.metrics.size_matching import size_matched_difference
from prism_experiments.replication.findings.shared import RESEARCH_QUICK_OVERRIDES
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
CLAIMS = tuple(
    Claim(
        name=claim,
        kind="contrast",
        metric=f"|pooled − size-matched| of the mean {column.replace('_', ' ')} difference, x_algo − chronological "
        "(x = |pooled difference|, y = |difference at matched size|)",
        published="structural differences disappear at matched size when processes differ in infectiousness "
        "(true vs false news); direction only",
        source=SOURCE,
        sign=1,
    )
    for column, claim in PROPERTIES.items()
)


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: |pooled| and |matched| x_algo − chronological differences in virality and depth."""
    a, b = runs["x_algo"]["cascades"], runs["chronological"]["cascades"]
    claims, figures = {}, {}
    for column, claim in PROPERTIES.items():
        difference = size_matched_difference(a, b, column)
        claims[claim] = SeedValues(abs(difference.pooled), abs(difference.matched))
        figures[f"{column}_pooled_difference"] = difference.pooled
        figures[f"{column}_matched_difference"] = difference.matched
    figures["cascade_size_mean_x_algo"] = float(a["size"].mean()) if len(a) else float("nan")
    figures["cascade_size_mean_chronological"] = float(b["size"].mean()) if len(b) else float("nan")
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Either there is no pooled difference to explain, or the rankers change cascade shape beyond size."""
    column = next(c for c, name in PROPERTIES.items() if name == result.claim)
    pooled, matched = figures.get(f"{column}_pooled_difference"), figures.get(f"{column}_matched_difference")
    if pooled is not None and matched is not None and abs(matched) >= abs(pooled):
        return (
            f"the rankers differ in {column.replace('_', ' ')} as much at matched size ({matched:.3g}) as pooled "
            f"({pooled:.3g}): the ranker changes cascade shape, not only reach (as Goel et al.'s content types did)"
        )
    return "the pooled difference is small against its seed-to-seed spread: little to attenuate"


FINDING = Finding(
    name="juul_ugander2021",
    title="Juul & Ugander 2021: compare diffusion at matched cascade size, not pooled",
    arms=ARMS,
    claims=CLAIMS,
    tables={"cascades": ("size", "depth", "structural_virality")},
    measure=measure,
    seeds=10,
    quick_overrides=RESEARCH_QUICK_OVERRIDES,
    reason=reason,
)
