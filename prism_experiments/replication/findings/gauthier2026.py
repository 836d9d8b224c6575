"""Gauthier, Hodler, Widmer & Zhuravskaya (Nature 2026): switching X's algorithmic feed on moved users'
following and attitudes; switching it off had no comparable effect, because the accounts the algorithm had led
them to follow stayed followed.

Harness: a crossover of ranking schedules within a run (`simulation.schedule`, prism_experiments/simulation/
schedule.py: chronological then x_algo, x_algo then chronological, and the two constant feeds). The harness has no
attitudes; its analogue of the lasting mark is what users
see after the switch from accounts they started following during the run.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES, replacing
from prism_experiments.replication.knobs import needs
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

SCHEDULE_KNOB = "simulation.schedule"
#: the step at which the feed switches: half of the 48-step run (the smoke size keeps the 48 steps, so it too)
SWITCH_STEP = 24
N_STEPS = 48


def schedule_override(first: str, second: str, at_step: int = SWITCH_STEP) -> str:
    """The Hydra override of a run served by `first` until `at_step`, then by `second`.

    A schedule is a list of {step, mode} entries (prism_experiments/simulation/schedule.py); each run logs the mode
    that served each step (tables/served_modes.parquet).
    """
    return f"{SCHEDULE_KNOB}=[{{step:0,mode:{first}}},{{step:{at_step},mode:{second}}}]"


SOURCE = Source(
    citation="Gauthier, G., Hodler, R., Widmer, P. & Zhuravskaya, E. (2026). The political effects of X's feed "
    "algorithm. Nature, doi:10.1038/s41586-026-10098-2",
    statement="\"Among users initially on a chronological feed, 7 weeks of exposure to X's algorithmic feed in "
    "2023 shifted political attitudes and account-following behaviour in a more conservative direction compared "
    "with those remaining on a chronological feed, whereas switching the feed setting in the opposite direction, "
    'from algorithmic to chronological, had no effect." "Exposure to algorithmic content leads users to follow '
    "conservative political activist accounts, which they continue to follow even after switching off the "
    'algorithm, helping explain the asymmetry in effects."',
    verification="quoted source text",
    checked_at="the article's summary and abstract as quoted on mastodawn.com (links nature.com/articles/"
    "s41586-026-10098-2); not read on nature.com itself here",
)
ARMS = (
    Arm("chronological", ("ranking=chronological", schedule_override("chronological", "chronological"))),
    Arm("switch_on", ("ranking=chronological", schedule_override("chronological", "x_algo"))),
    Arm("switch_off", ("ranking=x_algo", schedule_override("x_algo", "chronological"))),
    Arm("algorithmic", ("ranking=x_algo", schedule_override("x_algo", "x_algo"))),
)
CLAIMS = (
    Claim(
        name="follows_persist",
        kind="contrast",
        metric="after the switch, share of impressions from accounts followed before it (switch_off − "
        "always chronological)",
        published="they continue to follow [those accounts] even after switching off the algorithm (direction)",
        source=SOURCE,
        sign=1,
    ),
    Claim(
        name="asymmetry",
        kind="contrast",
        metric="after the switch, share of impressions from accounts followed during the run: effect of switching "
        "on (x = switch_on − chronological) vs |effect of switching off| (y = |switch_off − algorithmic|)",
        published="switching the algorithm on shifted following; switching it off had no effect (direction)",
        source=SOURCE,
        sign=1,
    ),
)


def followed_share_after(exposures: pd.DataFrame, follows: pd.DataFrame, switch: int, before: bool) -> float:
    """Share of impressions at steps >= `switch` whose author the viewer started following during the run:
    before the switch (`before`), or at any step before the impression."""
    later = exposures.loc[exposures["step"] >= switch, ["step", "agent_id", "author_id"]]
    if later.empty:
        return float("nan")
    new = follows.rename(columns={"follower_id": "agent_id", "followee_id": "author_id", "step": "followed_at"})
    new = new.groupby(["agent_id", "author_id"], as_index=False)["followed_at"].min()
    joined = later.merge(new, on=["agent_id", "author_id"], how="left")
    limit = switch if before else joined["step"]
    return float((joined["followed_at"] < limit).mean())


def measure(runs: SeedRuns, switch: int = SWITCH_STEP) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the persistence contrast and the two switching effects."""
    persisted = {a: followed_share_after(t["exposures"], t["follows"], switch, True) for a, t in runs.items()}
    followed = {a: followed_share_after(t["exposures"], t["follows"], switch, False) for a, t in runs.items()}
    effect_on = followed["switch_on"] - followed["chronological"]
    effect_off = followed["switch_off"] - followed["algorithmic"]
    claims = {
        "follows_persist": SeedValues(persisted["switch_off"], persisted["chronological"]),
        "asymmetry": SeedValues(effect_on, abs(effect_off)),
    }
    figures = {f"followed_share_{a}": v for a, v in followed.items()}
    return claims, figures | {"effect_switch_on": effect_on, "effect_switch_off": effect_off}


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """The share measures what the feed shows as well as whom users follow: a ranker that fills the feed with
    out-of-network posts lowers it whatever the follows."""
    if result.claim == "asymmetry" and figures.get("effect_switch_on", 0.0) < 0:
        return (
            "switching x_algo on lowers the share of impressions from accounts followed during the run "
            f"({figures['effect_switch_on']:+.3g}): its out-of-network candidates crowd them out of the feed, so the "
            "share measures the feed's composition more than following; switching it off raises the share "
            f"({figures.get('effect_switch_off', float('nan')):+.3g}): the follows made under x_algo fill the "
            "chronological feed"
        )
    return "follows made under the algorithm are too few for their accounts to weigh in the chronological feed"


FINDING = Finding(
    name="gauthier2026",
    title="Gauthier et al. 2026: switching the algorithm on shifts following; switching it off does not undo it",
    arms=ARMS,
    claims=CLAIMS,
    tables={"exposures": ("step", "agent_id", "author_id"), "follows": ("step", "follower_id", "followee_id")},
    measure=measure,
    seeds=10,
    quick_overrides=replacing(SMALL_QUICK_OVERRIDES, f"simulation.n_steps={N_STEPS}"),
    untestable=needs(SCHEDULE_KNOB, "a ranking schedule within a run, for the switch-on / switch-off crossover"),
    reason=reason,
)
