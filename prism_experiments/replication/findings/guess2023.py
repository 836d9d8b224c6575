"""Guess et al. (Science 2023): moving users from the algorithmic feed to a reverse-chronological one
substantially reduced the time they spent on the platform and their activity.

Harness: x_algo against chronological, with agents whose chance to come back responds to what their feeds gave
them (`agents.activity_response`, prism_experiments/simulation/activity.py). Its strength is Niv et al. (2007)'s
optimal-vigour exponent (response rate ∝ average reward ** 0.5), taken from that source and never fitted to this
check's target (docs/validation.md, "Out of sample"). With fixed activity (strength 0) both arms would serve the
same sessions by construction (common random numbers).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES
from prism_experiments.replication.knobs import needs
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source
from prism_experiments.simulation.activity import NIV_RATE_EXPONENT

#: the setting of feed-responsive activity (its strength; 0 = today's fixed activity) this check waits for
ACTIVITY_KNOB = "agents.activity_response"
#: the strength both arms run at: Niv et al. (2007)'s optimal response rate ∝ R_bar ** 0.5, from the source, not
#: fitted to this check's target (docs/validation.md, "Out of sample")
ACTIVITY_RESPONSE = NIV_RATE_EXPONENT

SOURCE = Source(
    citation="Guess, A. M. et al. (2023). How do social media feed algorithms affect attitudes and behavior in an "
    "election campaign? Science 381(6656), 398-404",
    statement='"Moving users out of algorithmic feeds substantially decreased the time they spent on the '
    'platforms and their activity."',
    verification="source text",
    checked_at="the paper's abstract (doi:10.1126/science.abp9364, as indexed by PubMed and Scite)",
)
ARMS = tuple(
    Arm(name, (f"ranking={mode}", f"{ACTIVITY_KNOB}={ACTIVITY_RESPONSE}"))
    for name, mode in (("algorithmic", "x_algo"), ("chronological", "chronological"))
)
CLAIMS = (
    Claim(
        name="time_on_platform",
        kind="contrast",
        metric="sessions (feeds served) per agent, chronological − algorithmic",
        published="substantially decreased the time they spent on the platforms (direction; figures per "
        "platform in the paper, not mapped here)",
        source=SOURCE,
        sign=-1,
        role="consistency",
        how_it_could_fail="Its sign is fixed before any run: with agents.activity_response > 0 an agent's visits "
        "rise with the engagements its feeds earn per visit, and x_algo earns more engagements per impression than "
        "a chronological feed.",
    ),
    Claim(
        name="activity",
        kind="contrast",
        metric="engagements (likes, reshares, replies) per agent, chronological − algorithmic",
        published="and their activity (direction only)",
        source=SOURCE,
        sign=-1,
        role="consistency",
        how_it_could_fail="Its sign is fixed before any run: engagements per agent are visits times engagements "
        "per visit, and both are higher under x_algo (visits through the activity response, engagements per visit "
        "through its ranking).",
    ),
)


def sessions_per_agent(exposures: pd.DataFrame, agents: pd.DataFrame) -> float:
    """Feeds served (distinct step x agent) per agent of the population: time on the platform in sessions."""
    return float(exposures[["step", "agent_id"]].drop_duplicates().shape[0] / len(agents)) if len(agents) else 0.0


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: sessions and engagements per agent in each arm."""
    sessions = {arm: sessions_per_agent(t["exposures"], t["agents"]) for arm, t in runs.items()}
    activity = {arm: len(t["engagements"]) / max(len(t["agents"]), 1) for arm, t in runs.items()}
    claims = {
        "time_on_platform": SeedValues(sessions["chronological"], sessions["algorithmic"]),
        "activity": SeedValues(activity["chronological"], activity["algorithmic"]),
    }
    figures = {f"sessions_per_agent_{a}": v for a, v in sessions.items()}
    return claims, figures | {f"engagements_per_agent_{a}": v for a, v in activity.items()}


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    return "the activity response is too weak at this strength for the feeds' difference to change who comes back"


FINDING = Finding(
    name="guess2023",
    title="Guess et al. 2023: a chronological feed reduces time on platform and activity",
    arms=ARMS,
    claims=CLAIMS,
    tables={"exposures": ("step", "agent_id"), "engagements": ("agent_id",), "agents": ("agent_id",)},
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    untestable=needs(
        ACTIVITY_KNOB,
        "agents whose activity responds to their feeds; with fixed activity both arms serve the same sessions by "
        "construction",
    ),
    reason=reason,
)
