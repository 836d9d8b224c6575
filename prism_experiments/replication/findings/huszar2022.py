"""Huszár, Ktena, O'Brien, Belli, Schlaikjer & Hardt (PNAS 2022): Twitter's ranked home timeline amplifies the
tweets of elected officials against a randomised reverse-chronological control, each party taken as a group (their
Fig. 1A), by amounts that differ from one account to the next ("individual amplification", their Fig. 1C).

Harness: x_algo against chronological in the research world x2023_10k_tail, 10,000 agents: the runs of
juul_ugander2021 (same config, so nothing runs twice). Both arms of a seed start from the same follow graph. The
accounts are the top 1 % by followers at the start (100), the model's nearest analogue of legislators with large
audiences. Reach of a set of accounts: the share of the run's population (the agents shown any post) who saw at
least one of its posts; amplification: reach under x_algo ÷ under chronological, minus 1 (analysis/amplification.py).
Two claims, both evidence: the top accounts taken as one group are amplified (the sign of every group value the paper
reports), and more than half of them are amplified each alone. The distribution over those accounts (median,
quartiles, maximum, share below 0), random groups of 10 accounts and the saturated top decile are descriptive
figures: Fig. 1C's values were not reachable, so no band is put on the share below 0 or on the maximum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from prism_experiments.analysis.amplification import (
    RANDOM_ALL,
    RANDOM_TOP_DECILE,
    TOP_ACCOUNTS,
    distribution_statistics,
    follower_deciles,
    saturated,
    set_reach,
    unit_amplification,
    unit_sets,
)
from prism_experiments.replication.findings.juul_ugander2021 import ARMS
from prism_experiments.replication.findings.shared import RESEARCH_FULL_OVERRIDES, RESEARCH_QUICK_OVERRIDES
from prism_experiments.replication.model import Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

CITATION = (
    "Huszár, F., Ktena, S. I., O'Brien, C., Belli, L., Schlaikjer, A. & Hardt, M. (2022). Algorithmic amplification "
    "of politics on Twitter. PNAS 119(1), e2025334119"
)
#: the measure: the paper's figure caption and its split into group and individual amplification
DEFINITION = Source(
    citation=CITATION,
    statement='"A value of 0% indicates that tweets by the group reach the same number of users on ranked timelines '
    'as they do on chronological timelines. A value of 100% means double the reach." (Fig. 1 caption); "calculate '
    "amplification of each individual in the group separately (individual amplification; Fig. 1C). The latter "
    "yields a distribution of individual amplification values for each group, thus revealing individual "
    'differences of amplifying effects within a group."',
    verification="quoted source text",
    checked_at="the paper's PMC copy (PMC8740571), quoted in a reading-notes file on GitHub (2026-11-28); the "
    "Methods' formula line and Fig. 1C's values were not reachable",
)
#: the group values the sign is taken from: Fig. 1A's group amplification of the two largest parties of two countries,
#: as a newspaper reading of the paper reports them (the figure itself was not reachable)
GROUP_VALUES = Source(
    citation=CITATION,
    statement="Fig. 1A, group amplification of each party: Canada's Liberals +43 % and Conservatives +167 %, the "
    "UK's Labour +112 % and Conservatives +176 % (every value reported is above 0; the paper's abstract compares "
    "left and right, never a party below 0)",
    verification="secondary summary",
    checked_at='The Conversation, "Twitter\'s algorithm favours the political right, a recent study finds", as '
    "quoted on thoughtshrapnel.com (2022-02-01); Twitter's announcement of the study (blog.twitter.com, 2021-10-21, "
    "by Chowdhury and Belli, one of the authors), quoted on a Hacker News thread and in a news site's rendering "
    "(playcrazygame.com, 2021-10-22): legislators' tweets of every party amplified; Fig. 1A itself was not reachable",
)
#: the per-account reading: no value of Fig. 1C was reachable, so the edge is the group finding read per account
AMPLIFIED = Source(
    citation=CITATION,
    statement='individual amplification, Fig. 1C: "a distribution of individual amplification values for each '
    "group, thus revealing individual differences of amplifying effects within a group\"; every party's group "
    "amplification above 0 (Fig. 1A, +43 % to +176 % where reported); its values per account not reached",
    verification="secondary summary",
    checked_at="the wording: the paper's PMC copy (PMC8740571), quoted in a reading-notes file on GitHub "
    "(2026-11-28); the group values: The Conversation as quoted on thoughtshrapnel.com (2022-02-01); Fig. 1C's "
    "values were not reachable",
)
#: more than half: the median account amplified, the group finding read per account (fixed before any run; not a
#: figure of the paper, which is why the group claim is there beside it)
MOST = 0.5
#: above 0: the sign of every group amplification the paper reports (Fig. 1A); its magnitudes (+43 % to +176 %) are
#: not a band here, since they depend on the platform's share of out-of-network posts and its users' follow counts,
#: which the model's world does not share
AMPLIFIED_GROUP = 0.0
CLAIMS = (
    Claim(
        name="top_group_amplified",
        kind="band",
        metric="group amplification of the top 1 % of accounts by followers at the start (100 at 10,000 agents) "
        "taken together: the share of the population who saw any of their posts under x_algo ÷ under "
        "chronological, minus 1",
        published="group amplification of every party reported is above 0: Canada's Liberals +43 %, Conservatives "
        "+167 %, the UK's Labour +112 %, Conservatives +176 % (Fig. 1A, secondary); band > 0",
        source=GROUP_VALUES,
        low=AMPLIFIED_GROUP,
        role="evidence",
        how_it_could_fail="If x_algo's out-of-network candidates took the feed slots chronological order gives to "
        "followees' posts, the most-followed accounts taken together would reach fewer agents than chronologically "
        "and the ratio would fall to 0 or below; a group every agent sees under both arms (reach >= 0.95) sits at "
        "about 0 and fails too.",
    ),
    Claim(
        name="top_accounts_amplified",
        kind="band",
        metric="share of the top 1 % of accounts by followers at the start (100 at 10,000 agents) whose reach is "
        "higher under x_algo than under chronological (amplification > 0), each account alone",
        published="individual amplification varies within a group (Fig. 1C, values not reached); every party's "
        "group is amplified (Fig. 1A); read per account as: the median account is amplified; band > 0.5",
        source=AMPLIFIED,
        low=MOST,
        role="evidence",
        how_it_could_fail="If x_algo's gains went to a few top accounts while out-of-network candidates crowded the "
        "rest out of their followers' feeds, most top accounts would be seen by fewer agents than chronological "
        "order shows them to, and the share amplified would fall below one half.",
    ),
)


def share_amplified(amplification: pd.Series) -> float:
    """The share of the units with a ratio whose amplification is above 0 (NaN without any)."""
    values = amplification.dropna()
    return float((values > 0).mean()) if len(values) else math.nan


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the top-1 % accounts' group amplification and the share of them amplified each alone; the
    distribution over them, over random groups, the group reaches with their saturation flags, and where the top
    accounts' reach comes from, as figures."""
    ranked, control = runs["x_algo"], runs["chronological"]
    # both arms start from the seed's follow graph (the ranker is no input of the world): one arm's table names them
    agents = ranked["agents"]
    sets = unit_sets(agents)
    nan = math.nan
    figures: dict[str, float] = {}
    amplification: dict[str, pd.Series] = {}
    for grouping in (TOP_ACCOUNTS, RANDOM_ALL, RANDOM_TOP_DECILE):
        units = sets.get(grouping, {})
        amplification[grouping] = unit_amplification(
            set_reach(ranked["exposures"], units), set_reach(control["exposures"], units)
        )
        stats = distribution_statistics(amplification[grouping])
        figures |= {f"{grouping}_{name}": value for name, value in stats.items()}
        figures[f"{grouping}_share_above_0"] = share_amplified(amplification[grouping])
        figures[f"{grouping}_with_ratio"] = float(amplification[grouping].notna().sum())
    top = sets.get(TOP_ACCOUNTS, {})
    for arm, tables in (("x_algo", ranked), ("chronological", control)):
        exposures = tables["exposures"]
        population = int(exposures["agent_id"].nunique())
        figures[f"population_{arm}"] = float(population)
        # where a top account's reach comes from: agents who saw its posts in network (as a followee's, or a
        # followee's reshare) and out of network, each a share of the whole population
        in_network = exposures["in_network"].fillna(False).astype(bool)
        for name, part in (("in_network", exposures.loc[in_network]), ("out_of_network", exposures.loc[~in_network])):
            reach = set_reach(part, top, population=population)
            figures[f"top_accounts_{name}_reach_{arm}"] = float(reach.median()) if len(reach) else nan
        deciles = follower_deciles(agents)
        decile = {"D10": tuple(deciles.index[deciles == deciles.max()])} if len(deciles) else {}
        figures[f"top_decile_reach_{arm}"] = float(set_reach(exposures, decile).get("D10", nan))
        # the top accounts as one group (the paper's group amplification, Fig. 1A): reach of any of their posts
        figures[f"top_group_reach_{arm}"] = float(set_reach(exposures, {"top": tuple(top)}).get("top", nan))
    for name in ("top_decile", "top_group"):
        reach_x, reach_c = figures[f"{name}_reach_x_algo"], figures[f"{name}_reach_chronological"]
        figures[f"{name}_amplification"] = reach_x / reach_c - 1.0 if reach_c > 0 else nan
        # a group every agent sees under both arms has a ratio near 0 whatever the ranker does (reason() says so)
        figures[f"{name}_saturated"] = float(saturated(reach_x, reach_c))
    claims = {
        "top_group_amplified": SeedValues(figures["top_group_amplification"]),
        "top_accounts_amplified": SeedValues(share_amplified(amplification[TOP_ACCOUNTS])),
    }
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Why a claim missed: the group saturated (seen by nearly everyone under both arms), or the top accounts' reach
    was lost among their followers and not made up out of network."""
    if result.claim == "top_group_amplified" and figures.get("top_group_saturated", 0.0) >= 0.5:
        return (
            f"the top accounts taken together are seen by nearly every agent under both arms (reach "
            f"{figures.get('top_group_reach_x_algo', math.nan):.3g} under x_algo, "
            f"{figures.get('top_group_reach_chronological', math.nan):.3g} under chronological, in most seeds >= "
            "0.95): the group's ratio saturates near 0 whatever the ranker does; the accounts alone are the test"
        )
    inside_x = figures.get("top_accounts_in_network_reach_x_algo", math.nan)
    inside_c = figures.get("top_accounts_in_network_reach_chronological", math.nan)
    outside_x = figures.get("top_accounts_out_of_network_reach_x_algo", math.nan)
    if np.isfinite([inside_x, inside_c, outside_x]).all() and inside_x < inside_c:
        return (
            f"x_algo shows a top account's posts to fewer agents in network (median reach {inside_x:.3g} against "
            f"{inside_c:.3g} under chronological: out-of-network candidates take slots from followees' posts) and "
            f"its out-of-network impressions add {outside_x:.3g}, too little to make up for it"
        )
    return "the top accounts' reach under x_algo differs little from chronological's against its seed-to-seed spread"


FINDING = Finding(
    name="huszar2022",
    title="Huszár et al. 2022: algorithmic ranking amplifies the most-followed accounts, as a group and most of them "
    "alone, against chronological",
    arms=ARMS,
    claims=CLAIMS,
    tables={
        "exposures": ("agent_id", "author_id", "in_network"),
        "agents": ("agent_id", "n_followers_at_start"),
    },
    measure=measure,
    seeds=10,
    quick_overrides=RESEARCH_QUICK_OVERRIDES,
    full_overrides=RESEARCH_FULL_OVERRIDES,
    reason=reason,
)
