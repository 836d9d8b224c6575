"""Milli, Carroll, Wang, Pandey, Zhao & Dragan (PNAS Nexus 2025): relative to a reverse-chronological timeline,
Twitter's engagement-based ranking amplified emotionally charged, partisan, out-group hostile content; a timeline
ranked by users' stated preferences reduced angry, partisan and out-group hostile content.

Harness: three arms paired by seed (common random numbers: the same agents, graph, posts and draws), politics on
(agents.politics.enabled, every politics parameter as docs/politics.md fits or assumes it; none fitted to this
finding): `chronological` (the paper's reverse-chronological baseline), `engagement` (X's weighted scorer over
predicted engagement with the oracle predictor, whose predictions carry the political engagement terms of Rathje
2021 and Brady 2017: the analogue of "engagement-based", a ranking that predicts engagement, which x_algo's
similarity score does not) and `stated_preference` (the paper's alternative timeline). Measured on the shown
timeline, every impression: mean out-group animosity and mean partisanship (|slant| of a political post, 0 for the
others), each in SD units of the same post-level value over the chronological run's posts. Three evidence claims,
signs only: the paper's +0.24 SD is a reader- and GPT-4-judged scale over ten-tweet timelines, read only in
secondary summaries here, so no band (docs/validation.md, "milli2025 in set v7").

Size: world x2023 at 500 agents, 2,500 posts, 24 steps (about a minute a run here; the suite gives each finding
about 10 min of CPU for its 30 runs); 1,000 agents and 48 steps took 2 min 12 s a run, three times that budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES
from prism_experiments.replication.knobs import needs
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

POLITICS_KNOB = "agents.politics.enabled"
#: the published effects of engagement over chronological, in the paper's standardised units (secondary summaries:
#: SOURCE_NUMBERS); reported beside the harness's effect, never a band (the module docstring says why)
PUBLISHED_SD = {"animosity": 0.24, "partisanship": 0.24, "anger": 0.47}

SOURCE = Source(
    citation="Milli, S., Carroll, M., Wang, Y., Pandey, S., Zhao, S. & Dragan, A. D. (2025). Engagement, user "
    "satisfaction, and the amplification of divisive content on social media. PNAS Nexus 4(3), pgaf062, "
    "doi:10.1093/pnasnexus/pgaf062 (arXiv 2305.16941)",
    statement='"In a preregistered algorithmic audit, we found that, relative to a reverse-chronological baseline, '
    "Twitter's engagement-based ranking algorithm amplifies emotionally charged, out-group hostile content that "
    'users say makes them feel worse about their political out-group." "Finally, we explore the implications of '
    "an alternative approach that ranks content based on users' stated preferences and find a reduction in angry, "
    'partisan, and out-group hostile content, but also a potential reinforcement of proattitudinal content."',
    verification="source text",
    checked_at="the paper's abstract on academic.oup.com/pnasnexus/article/4/3/pgaf062/8052060 (the same text in "
    "arXiv 2305.16941v6's HTML and, as v5, on knightcolumbia.org), read 2026-11-29",
)
#: the magnitudes: not found in the paper's own text here, only in two secondary summaries that agree
SOURCE_NUMBERS = Source(
    citation=SOURCE.citation,
    statement='"$0.24$ SD increases in partisanship and out-group animus; ... author anger rises by $0.47$ SD" '
    '(sciencestack.ai); "amplifies partisan tweets (0.24 SD), out-group animosity (0.24 SD), anger (0.47 SD)" '
    "(guide.fake-news.site)",
    verification="secondary summary",
    checked_at="sciencestack.ai/paper/2305.16941 and guide.fake-news.site/papers/2023-mills-engagement-"
    "amplification/, read 2026-11-29; the paper's results section was not reached",
)
ARMS = (
    Arm("chronological", ("ranking=chronological",)),
    Arm("engagement", ("ranking=engagement",)),
    Arm("stated_preference", ("ranking=stated_preference",)),
)
CLAIMS = (
    Claim(
        name="animosity_engagement",
        kind="contrast",
        metric="mean out-group animosity of the impressions, in SD of post-level animosity: engagement − chronological",
        published="amplifies ... out-group hostile content (direction; +0.24 SD out-group animosity, secondary)",
        source=SOURCE,
        sign=1,
        role="evidence",
        how_it_could_fail="Engagement ranking draws half its candidates out of network by interest while a "
        "chronological feed is the followees' posts, homophilous and more political, so it could show fewer "
        "hostile posts than chronological order although hostile posts earn more reshares.",
    ),
    Claim(
        name="partisanship_engagement",
        kind="contrast",
        metric="mean partisanship of the impressions (|slant| of a political post, 0 otherwise), in SD of the "
        "post-level value: engagement − chronological",
        published="partisan tweets amplified, +0.24 SD (direction and size in secondary summaries only: the abstract "
        "names emotionally charged, out-group hostile content for the engagement timeline)",
        source=SOURCE_NUMBERS,
        sign=1,
        role="evidence",
        how_it_could_fail="Political posts are 13% of the supply and only political readers engage more with "
        "aligned ones, so ranking by predicted engagement could show fewer or less slanted political posts than "
        "the homophilous chronological feed does.",
    ),
    Claim(
        name="animosity_stated_preference",
        kind="contrast",
        metric="mean out-group animosity of the impressions, in SD of post-level animosity: stated_preference − "
        "engagement",
        published="a reduction in angry, partisan, and out-group hostile content (direction)",
        source=SOURCE,
        sign=-1,
        role="evidence",
        how_it_could_fail="Satisfaction rewards alignment (0.3 × position × slant) more than it penalises one "
        "out-group term (0.5 × 1/3), so stated preference could rank a reader's own side's hostile posts above "
        "the neutral ones engagement ranking shows, and show more hostility than it.",
    ),
)


def post_values(political: pd.Series, slant: pd.Series, animosity: pd.Series) -> dict[str, np.ndarray]:
    """Per post: out-group animosity and partisanship (|slant| of a political post); 0 where a non-political post has
    none (NaN), as Milli et al. rate a non-political tweet's partisanship and animosity at the scale's floor."""
    flag = np.nan_to_num(political.to_numpy(dtype=float)) > 0
    return {
        "animosity": np.nan_to_num(animosity.to_numpy(dtype=float)),
        "partisanship": np.where(flag, np.abs(np.nan_to_num(slant.to_numpy(dtype=float))), 0.0),
    }


def impression_values(exposures: pd.DataFrame) -> dict[str, np.ndarray]:
    """`post_values` of every impression of the shown timeline (the exposures table's political columns)."""
    return post_values(exposures["post_political"], exposures["post_slant"], exposures["post_animosity"])


def supply_sd(posts: pd.DataFrame) -> dict[str, float]:
    """SD (ddof 1) of each post-level value over a run's posts: the unit the effects are read in (NaN under 2)."""
    values = post_values(posts["political"], posts["slant"], posts["animosity"])
    return {name: float(np.std(v, ddof=1)) if len(v) > 1 else math.nan for name, v in values.items()}


def standardised_means(exposures: pd.DataFrame, sd: Mapping[str, float]) -> dict[str, float]:
    """Mean of each value over the impressions, divided by its post-level SD (NaN without impressions or spread)."""
    values = impression_values(exposures)
    return {name: float(v.mean()) / sd[name] if len(v) and sd[name] > 0 else math.nan for name, v in values.items()}


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: each arm's standardised animosity and partisanship, in SD of the chronological run's posts (one unit
    for the three arms of a seed, so the paired differences are in it too)."""
    sd = supply_sd(runs["chronological"]["posts"])
    level = {arm: standardised_means(tables["exposures"], sd) for arm, tables in runs.items()}
    claims = {
        "animosity_engagement": SeedValues(level["engagement"]["animosity"], level["chronological"]["animosity"]),
        "partisanship_engagement": SeedValues(
            level["engagement"]["partisanship"], level["chronological"]["partisanship"]
        ),
        "animosity_stated_preference": SeedValues(
            level["stated_preference"]["animosity"], level["engagement"]["animosity"]
        ),
    }
    figures: dict[str, float] = {f"sd_{name}": value for name, value in sd.items()}
    for arm, tables in runs.items():
        exposures = tables["exposures"]
        political = np.nan_to_num(exposures["post_political"].to_numpy(dtype=float)) > 0
        animosity = impression_values(exposures)["animosity"]
        # where a difference comes from: how many political posts a feed shows, and how hostile those are
        figures[f"political_share_{arm}"] = float(political.mean()) if len(political) else math.nan
        figures[f"animosity_among_political_{arm}"] = (
            float(animosity[political].mean()) if political.any() else math.nan
        )
        figures[f"hostile_share_{arm}"] = float((animosity > 0).mean()) if len(animosity) else math.nan
        figures[f"satisfaction_{arm}"] = float(exposures["satisfaction"].mean()) if len(exposures) else math.nan
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Why a claim missed: the feeds' political share (a chronological feed of homophilous followees is more
    political) against how hostile their political posts are."""
    share = {arm.name: figures.get(f"political_share_{arm.name}", math.nan) for arm in ARMS}
    among = {arm.name: figures.get(f"animosity_among_political_{arm.name}", math.nan) for arm in ARMS}
    first, second = ("stated_preference", "engagement") if result.claim.endswith("stated_preference") else (
        "engagement", "chronological")  # fmt: skip
    return (
        f"{first} shows political posts in {share[first]:.3g} of its impressions against {share[second]:.3g} under "
        f"{second}, with mean animosity {among[first]:.3g} against {among[second]:.3g} among them: the difference "
        "in how political the feed is outweighs the difference in how hostile its political posts are"
    )


FINDING = Finding(
    name="milli2025",
    title="Milli et al. 2025: engagement ranking amplifies out-group hostile and partisan content against "
    "chronological order; a stated-preference timeline reduces it",
    arms=ARMS,
    claims=CLAIMS,
    tables={
        "exposures": ("agent_id", "post_political", "post_slant", "post_animosity", "satisfaction"),
        "posts": ("post_id", "political", "slant", "animosity"),
    },
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    untestable=needs(POLITICS_KNOB, "agents with political positions and posts with slant and out-group animosity"),
    reason=reason,
)
