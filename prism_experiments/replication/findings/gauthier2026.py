"""Gauthier, Hodler, Widmer & Zhuravskaya (Nature 2026): switching X's algorithmic feed on increased engagement and
moved users' following and attitudes; switching it off had no comparable effects, because the accounts the algorithm
had led them to follow stayed followed.

Harness: a crossover of ranking schedules within a run (`simulation.schedule`, prism_experiments/simulation/
schedule.py: chronological then x_algo, x_algo then chronological, and the two constant feeds). The harness has no
attitudes; the paper's own behavioural outcome is engagement. Per seed, engagements per agent after the switch: the
effect of switching on is (chronological → x_algo) − always chronological, of switching off (x_algo → chronological)
− always x_algo. The asymmetry: switching on raises engagement, and switching off changes it by less than half of
that (an equivalence). New follows per step after the switch are reported beside them.
"""

from __future__ import annotations

import math
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
    statement='"Switching from a chronological to an algorithmic feed increased engagement and shifted political '
    "opinion towards more conservative positions ... In contrast, switching from the algorithmic to the "
    'chronological feed had no comparable effects." "Exposure to algorithmic content leads users to follow '
    "conservative political activist accounts, which they continue to follow even after switching off the "
    'algorithm, helping explain the asymmetry in effects."',
    verification="quoted source text",
    checked_at="the abstract as quoted on pxlnv.com/linklog/twitter-algorithm-political-effects (the same text on "
    "bskyview.com) and the summary as quoted on mastodawn.com, both linking nature.com/articles/"
    "s41586-026-10098-2; not read on nature.com itself here",
)
ARMS = (
    Arm("chronological", ("ranking=chronological", schedule_override("chronological", "chronological"))),
    Arm("switch_on", ("ranking=chronological", schedule_override("chronological", "x_algo"))),
    Arm("switch_off", ("ranking=x_algo", schedule_override("x_algo", "chronological"))),
    Arm("algorithmic", ("ranking=x_algo", schedule_override("x_algo", "x_algo"))),
)
#: "no comparable effects": switching off changes engagement by less than this share of what switching on adds
OFF_SHARE_MARGIN = 0.5
CLAIMS = (
    Claim(
        name="follows_persist",
        kind="contrast",
        metric="after the switch, share of impressions from accounts followed before it (switch_off − "
        "always chronological)",
        published="they continue to follow [those accounts] even after switching off the algorithm (direction)",
        source=SOURCE,
        sign=1,
        role="consistency",
        how_it_could_fail="It holds by construction: agents never unfollow and a chronological feed shows its "
        "followees' posts first (backfilled with the newest posts only when they run short), so accounts followed "
        "under the algorithm keep their share of it after the switch; it checks the crossover's plumbing, not a "
        "behaviour.",
    ),
    Claim(
        name="asymmetry_switch_on",
        kind="contrast",
        metric="engagements per agent from the switch on: chronological → x_algo (x) − always chronological (y)",
        published="switching from a chronological to an algorithmic feed increased engagement (direction)",
        source=SOURCE,
        sign=1,
        role="consistency",
        how_it_could_fail="Its sign is fixed before any run: both arms are served chronologically until the switch, "
        "their agents visit equally often after it (activity does not respond to the feed here), and x_algo earns "
        "more engagements per impression than chronological order.",
    ),
    Claim(
        name="asymmetry_switch_off",
        kind="equivalence",
        metric="engagements per agent from the switch on: x_algo → chronological − always x_algo, in units of the "
        "same seed's switch-on effect (x), against 0 (y)",
        published="switching from the algorithmic to the chronological feed had no comparable effects (no figure)",
        source=SOURCE,
        margin=OFF_SHARE_MARGIN,
        margin_reason="'No comparable effects' read as: switching off moves engagement by less than half of what "
        "switching on adds in the same seed (half is where one effect stops being comparable in size to the "
        "other); fixed before any run, not fitted.",
        role="evidence",
        how_it_could_fail="If the engagement x_algo adds came from its ranking of each feed rather than from the "
        "accounts agents followed under it, switching it off would take that engagement away, an effect about as "
        "large as switching on, far outside half of it.",
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


def engagements_per_agent_after(engagements: pd.DataFrame, agents: pd.DataFrame, switch: int) -> float:
    """Engagements (likes, reshares, replies) at steps >= `switch` per agent of the population (Gauthier et al.'s
    outcome; NaN without agents)."""
    return float((engagements["step"] >= switch).sum() / len(agents)) if len(agents) else float("nan")


def follows_per_step_after(follows: pd.DataFrame, steps: int, switch: int) -> float:
    """New follows per step at steps switch .. steps - 1 (NaN when the run ends before the switch)."""
    after = steps - switch
    return float((follows["step"] >= switch).sum() / after) if after > 0 else float("nan")


def switch_effects(values: Mapping[str, float]) -> tuple[float, float]:
    """(switch-on, switch-off) effects of one seed: (chronological → x_algo) − always chronological, and
    (x_algo → chronological) − always x_algo (the crossover's, analysis/crossover.py)."""
    return values["switch_on"] - values["chronological"], values["switch_off"] - values["algorithmic"]


def off_share(effect_on: float, effect_off: float) -> float:
    """The switch-off effect in units of the switch-on effect: NaN unless switching on raised the value (without a
    rise there is nothing for the switch-off effect to be comparable to)."""
    return effect_off / effect_on if math.isfinite(effect_on) and effect_on > 0 else float("nan")


def measure(
    runs: SeedRuns, switch: int = SWITCH_STEP, steps: int = N_STEPS
) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the persistence contrast, the two switching effects on engagement per agent, and follows."""
    persisted = {a: followed_share_after(t["exposures"], t["follows"], switch, True) for a, t in runs.items()}
    engaged = {a: engagements_per_agent_after(t["engagements"], t["agents"], switch) for a, t in runs.items()}
    follows = {a: follows_per_step_after(t["follows"], steps, switch) for a, t in runs.items()}
    effect_on, effect_off = switch_effects(engaged)
    follows_on, follows_off = switch_effects(follows)
    share = off_share(effect_on, effect_off)
    claims = {
        "follows_persist": SeedValues(persisted["switch_off"], persisted["chronological"]),
        "asymmetry_switch_on": SeedValues(engaged["switch_on"], engaged["chronological"]),
        # the equivalence's difference is the share itself: x - 0
        "asymmetry_switch_off": SeedValues(share, 0.0 if math.isfinite(share) else math.nan),
    }
    figures = {f"engagements_per_agent_{a}": v for a, v in engaged.items()}
    figures |= {f"new_follows_per_step_{a}": v for a, v in follows.items()}
    figures |= {"effect_switch_on": effect_on, "effect_switch_off": effect_off, "switch_off_share": share,
                "follows_effect_switch_on": follows_on, "follows_effect_switch_off": follows_off}  # fmt: skip
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Where the engagement comes from: the feed's ranking (lost when the algorithm is off) or the follows it led to
    (kept)."""
    on, off = figures.get("effect_switch_on", math.nan), figures.get("effect_switch_off", math.nan)
    follows = figures.get("follows_effect_switch_on", math.nan)
    if result.claim == "asymmetry_switch_off":
        return (
            f"switching x_algo off changes engagements per agent by {off:+.3g} against {on:+.3g} for switching it "
            f"on: the engagement comes from its ranking of each feed, not from the accounts followed under it "
            f"(switching on changes new follows per step by {follows:+.3g}), so it leaves with the algorithm"
        )
    if result.claim == "asymmetry_switch_on":
        return f"switching x_algo on changes engagements per agent by {on:+.3g}"
    return "follows made under the algorithm are too few for their accounts to weigh in the chronological feed"


FINDING = Finding(
    name="gauthier2026",
    title="Gauthier et al. 2026: switching the algorithm on raises engagement; switching it off has no comparable "
    "effect",
    arms=ARMS,
    claims=CLAIMS,
    tables={
        "exposures": ("step", "agent_id", "author_id"),
        "follows": ("step", "follower_id", "followee_id"),
        "engagements": ("step", "agent_id"),
        "agents": ("agent_id",),
    },
    measure=measure,
    seeds=10,
    quick_overrides=replacing(SMALL_QUICK_OVERRIDES, f"simulation.n_steps={N_STEPS}"),
    untestable=needs(SCHEDULE_KNOB, "a ranking schedule within a run, for the switch-on / switch-off crossover"),
    reason=reason,
)
