"""Guess et al. (Science 2023), the content outcomes: a reverse-chronological feed in place of the algorithmic one
raised the amount of political content users saw (on both platforms) and lowered the amount of content classified
as uncivil (on Facebook).

Harness: x_algo against chronological, paired by seed, in milli2025's political world (x2023, 500 agents, 2,500
posts, 24 steps, politics on; the same reason of cost). Its configs are those of milli2025's chronological arm and
nyhan2023's control arm, so their runs are found by config hash and nothing runs twice. Measured over every
impression of the shown timeline: the share of political posts, and the mean out-group animosity (out-group terms
/ 3, 0 for a non-political post: uncivil language in the model, as in nyhan2023). Two evidence claims, signs only:
the abstract gives directions, and the paper's per-platform magnitudes were not reached here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from prism_experiments.politics.measures import impression_class_shares
from prism_experiments.replication.findings.milli2025 import POLITICS_KNOB
from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES
from prism_experiments.replication.knobs import needs
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

SOURCE = Source(
    citation="Guess, A. M. et al. (2023). How do social media feed algorithms affect attitudes and behavior in an "
    "election campaign? Science 381(6656), 398-404, doi:10.1126/science.abp9364",
    statement='"The chronological feed also affected exposure to content: The amount of political and untrustworthy '
    "content they saw increased on both platforms, the amount of content classified as uncivil or containing slur "
    "words they saw decreased on Facebook, and the amount of content from moderate friends and sources with "
    'ideologically mixed audiences they saw increased on Facebook."',
    verification="source text",
    checked_at="the paper's abstract as indexed by BVS/MEDLINE (mdl-37498999), Scite and a reading-notes page, read "
    "2026-11-29; the per-platform effect sizes (the paper's figures) were not reached",
)
ARMS = (
    Arm("algorithmic", ("ranking=x_algo",)),
    Arm("chronological", ("ranking=chronological",)),
)
CLAIMS = (
    Claim(
        name="political_up",
        kind="contrast",
        metric="political share of impressions: chronological − algorithmic",
        published="The amount of political ... content they saw increased on both platforms (direction)",
        source=SOURCE,
        sign=1,
        role="evidence",
        how_it_could_fail="Political posts earn more reshares (each out-group term raises a share's odds, Rathje "
        "et al. 2021), x_algo's in-network candidates include the posts followees reshared, and its out-of-network "
        "ones match political readers' interests, so the algorithmic feed could show a larger political share "
        "than the followees' own posts in order of time.",
    ),
    Claim(
        name="uncivil_down",
        kind="contrast",
        metric="mean out-group animosity of the impressions (out-group terms / 3, 0 for a non-political post): "
        "chronological − algorithmic",
        published="the amount of content classified as uncivil or containing slur words they saw decreased on "
        "Facebook (direction)",
        source=SOURCE,
        sign=-1,
        role="evidence",
        how_it_could_fail="A chronological feed is the followees' posts, homophilous and more political, so it "
        "could show more hostile posts than x_algo, whose out-of-network candidates are drawn by interest, not "
        "by engagement.",
    ),
)


def impression_levels(exposures: pd.DataFrame) -> dict[str, float]:
    """Over every impression: the political share and the mean out-group animosity (NaN without impressions)."""
    if not len(exposures):
        return {"political_share": math.nan, "animosity": math.nan, "animosity_among_political": math.nan}
    political = np.nan_to_num(exposures["post_political"].to_numpy(dtype=float)) > 0
    animosity = np.nan_to_num(exposures["post_animosity"].to_numpy(dtype=float))
    return {
        "political_share": float(political.mean()),
        "animosity": float(animosity.mean()),
        "animosity_among_political": float(animosity[political].mean()) if political.any() else math.nan,
    }


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: both arms' political share and animosity of the impressions; as figures, how hostile the political
    posts shown are and the Nyhan classes of political readers' impressions (cross-cutting, like-minded, neutral)."""
    levels = {arm: impression_levels(tables["exposures"]) for arm, tables in runs.items()}
    chronological, algorithmic = levels["chronological"], levels["algorithmic"]
    claims = {
        "political_up": SeedValues(chronological["political_share"], algorithmic["political_share"]),
        "uncivil_down": SeedValues(chronological["animosity"], algorithmic["animosity"]),
    }
    figures = {f"{name}_{arm}": value for arm, values in levels.items() for name, value in values.items()}
    for arm, tables in runs.items():
        for name, share in (impression_class_shares(tables["exposures"]) or {}).items():
            figures[f"{name}_{arm}"] = share
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Why a claim missed: how political each feed is against how hostile the political posts it shows are."""
    share = {arm.name: figures.get(f"political_share_{arm.name}", math.nan) for arm in ARMS}
    among = {arm.name: figures.get(f"animosity_among_political_{arm.name}", math.nan) for arm in ARMS}
    return (
        f"the chronological feed shows political posts in {share['chronological']:.3g} of its impressions against "
        f"{share['algorithmic']:.3g} under x_algo, with mean animosity {among['chronological']:.3g} against "
        f"{among['algorithmic']:.3g} among them"
    )


FINDING = Finding(
    name="guess2023_exposure",
    title="Guess et al. 2023 (content): a chronological feed shows more political and less uncivil content than "
    "the algorithmic one",
    arms=ARMS,
    claims=CLAIMS,
    tables={"exposures": ("agent_id", "reader_position", "author_position", "post_political", "post_animosity")},
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    untestable=needs(POLITICS_KNOB, "agents with political positions and posts with slant and out-group animosity"),
    reason=reason,
)
