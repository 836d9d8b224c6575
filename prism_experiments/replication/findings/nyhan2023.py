"""Nyhan et al. (Nature 2023, 620:137): reducing Facebook users' exposure to content from like-minded sources by
about one-third increased their exposure to content from cross-cutting sources and decreased their exposure to
uncivil language.

Harness: x_algo (the control: an algorithmic feed) against x_algo with like-minded sources demoted
(`ranking.like_minded_scale`, REQ-POL-13: a candidate whose author is on its reader's side has its score
multiplied by it), paired by seed, in milli2025's political world (x2023, 500 agents, 2,500 posts, 24 steps; the
same reason of cost). The dose, `LIKE_MINDED_SCALE`, is the paper's treatment size, an input: the value that cut
like-minded exposure by about a third in probe runs of seeds 100 and 101 (never the seeds judged here), chosen on
that share alone. Source classes are Nyhan et al.'s, by the author's side, over political readers
(politics.measures.exposure_class); uncivil language is the model's out-group animosity (out-group terms / 3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from prism_experiments.politics.measures import impression_class_shares
from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES
from prism_experiments.replication.knobs import needs
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

DEMOTION_KNOB = "ranking.like_minded_scale"
#: the treatment's dose: like-minded candidates' scores x this. Of the scales probed in seeds 100-101 (0.25, 0.5, 0.85,
#: 0.9, 0.95; like-minded share ÷ x_algo's 0.21, 0.21, 0.49, 0.58, 0.69), the one nearest a cut of one third; chosen
#: on that share alone, never on the outcomes (docs/validation.md, "nyhan2023 in set v7")
LIKE_MINDED_SCALE = 0.95

SOURCE = Source(
    citation="Nyhan, B., Settle, J., Thorson, E., Wojcieszak, M., Barberá, P., Chen, A. Y. et al. (2023). "
    "Like-minded sources on Facebook are prevalent but not polarizing. Nature 620, 137-144, "
    "doi:10.1038/s41586-023-06297-w",
    statement='"we conducted a multi-wave field experiment on Facebook among 23,377 users for whom we reduced '
    "exposure to content from like-minded sources during the 2020 US presidential election by about one-third. We "
    "found that the intervention increased their exposure to content from cross-cutting sources and decreased "
    'exposure to uncivil language, but had no measurable effects on eight preregistered attitudinal measures"',
    verification="source text",
    checked_at="the paper's abstract as indexed by ScienceOpen, IDEAS/RePEc and OUCI (doi:10.1038/"
    "s41586-023-06297-w), read 2026-11-29; the effect sizes (Fig. 3, Extended Data Table 3) were not reached",
)
ARMS = (
    Arm("control", ("ranking=x_algo",)),
    Arm("demoted", ("ranking=x_algo", f"{DEMOTION_KNOB}={LIKE_MINDED_SCALE}")),
)
#: "about one-third", read as a cut of 25 % to 40 % (a ratio of 0.60 to 0.75 to the control's share)
DOSE_BAND = (0.60, 0.75)
CLAIMS = (
    Claim(
        name="like_minded_cut",
        kind="band",
        metric="like-minded share of political readers' impressions, demoted ÷ control",
        published="reduced exposure to content from like-minded sources ... by about one-third (the treatment)",
        source=SOURCE,
        low=DOSE_BAND[0],
        high=DOSE_BAND[1],
        role="consistency",
        how_it_could_fail="It is the treatment's dose, an input: the scale was chosen in probe seeds to cut "
        "like-minded exposure by about a third, so it checks that the dose holds on the judged seeds.",
    ),
    Claim(
        name="cross_cutting_up",
        kind="contrast",
        metric="cross-cutting share of political readers' impressions (author on the other side): demoted − control",
        published="increased their exposure to content from cross-cutting sources (direction)",
        source=SOURCE,
        sign=1,
        role="evidence",
        how_it_could_fail="Follows are homophilous and 43% of agents are non-political, so the slots freed by "
        "like-minded posts could go to non-political authors' posts alone and leave the cross-cutting share where "
        "it was.",
    ),
    Claim(
        name="uncivil_down",
        kind="contrast",
        metric="mean out-group animosity of political readers' impressions (out-group terms / 3): demoted − control",
        published="decreased exposure to uncivil language (direction)",
        source=SOURCE,
        sign=-1,
        role="evidence",
        how_it_could_fail="Out-group terms grow with the author's extremity on either side, so cross-cutting posts "
        "attacking the reader's side could replace like-minded hostile posts one for one and leave the animosity "
        "shown unchanged or higher.",
    ),
)


def political_reader_animosity(exposures: pd.DataFrame) -> float:
    """Mean out-group animosity (0 for a non-political post) over political readers' impressions (NaN without)."""
    readers = exposures.loc[exposures["reader_position"].notna(), "post_animosity"]
    return float(np.nan_to_num(readers.to_numpy(dtype=float)).mean()) if len(readers) else math.nan


def arm_values(exposures: pd.DataFrame) -> dict[str, float]:
    """An arm's Nyhan classes (like-minded, cross-cutting, neutral shares) and its animosity, political readers."""
    shares = impression_class_shares(exposures) or {}
    return {
        "like_minded": shares.get("like_minded", math.nan),
        "cross_cutting": shares.get("cross_cutting", math.nan),
        "neutral": shares.get("neutral", math.nan),
        "animosity": political_reader_animosity(exposures),
    }


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the dose (like-minded ratio), the cross-cutting shares and the animosity of both arms."""
    values = {arm: arm_values(tables["exposures"]) for arm, tables in runs.items()}
    control, demoted = values["control"], values["demoted"]
    ratio = demoted["like_minded"] / control["like_minded"] if control["like_minded"] > 0 else math.nan
    claims = {
        "like_minded_cut": SeedValues(ratio),
        "cross_cutting_up": SeedValues(demoted["cross_cutting"], control["cross_cutting"]),
        "uncivil_down": SeedValues(demoted["animosity"], control["animosity"]),
    }
    figures = {f"{name}_{arm}": value for arm, arm_figures in values.items() for name, value in arm_figures.items()}
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Where the freed slots went: to non-political authors (neutral) or to the other side (cross-cutting)."""
    neutral = figures.get("neutral_demoted", math.nan) - figures.get("neutral_control", math.nan)
    cross = figures.get("cross_cutting_demoted", math.nan) - figures.get("cross_cutting_control", math.nan)
    return (
        f"demoting like-minded sources moved the neutral share by {neutral:+.3g} and the cross-cutting share by "
        f"{cross:+.3g}: the freed slots went mostly to "
        f"{'non-political authors' if neutral > cross else 'the other side, whose posts carry out-group terms too'}"
    )


FINDING = Finding(
    name="nyhan2023",
    title="Nyhan et al. 2023: demoting like-minded sources by about a third raises cross-cutting exposure and "
    "lowers exposure to uncivil language",
    arms=ARMS,
    claims=CLAIMS,
    tables={"exposures": ("agent_id", "reader_position", "author_position", "post_animosity")},
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    untestable=needs(DEMOTION_KNOB, "a ranking that demotes candidates from like-minded sources"),
    reason=reason,
)
