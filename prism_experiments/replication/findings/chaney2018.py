"""Chaney, Stewart & Engelhardt (RecSys 2018): a recommender trained on its own feedback homogenises what users
consume and gives no more utility than the ideal recommender.

Harness: the `collaborative` mode (implicit-feedback matrix factorisation, refit every 6 steps on the likes, reshares
and replies its own feeds produced: the feedback loop, and a model of each user) against the `engagement` mode with
`ranking.predictor=oracle` (the behaviour model's own probabilities: the ideal recommender); `random` and
`chronological` are references, reported, not tested. Homogeneity is Chaney et al.'s "change in Jaccard index":
each user is paired with the user most similar under the recommender's own user factors, and the Jaccard index of
the pair's consumption under the recommender is compared with the same pairs' under the ideal recommender (the
pairing of T-RECS's replication, sunnymatt/t-recs-experiments `algo_confounding/chaney_utils.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from prism_experiments.metrics.consumption import (
    consumption_jaccard_mean,
    engagements_per_impression,
    most_similar_pairs,
    paired_jaccard_means,
)
from prism_experiments.ranking.collaborative_model import fit_factors
from prism_experiments.ranking.modes.collaborative import PAIRS_TABLE, CollaborativeConfig
from prism_experiments.replication.findings.shared import SMALL_QUICK_OVERRIDES
from prism_experiments.replication.model import Arm, Claim, ClaimResult, Finding, SeedRuns, SeedValues, Source

SOURCE = Source(
    citation="Chaney, A. J. B., Stewart, B. M. & Engelhardt, B. E. (2018). How algorithmic confounding in "
    "recommendation systems increases homogeneity and decreases utility. RecSys '18 (arXiv:1710.11214)",
    statement='title: "... increases homogeneity and decreases utility"; abstract: "Using simulations, we '
    'demonstrate how using data confounded in this way homogenizes user behavior without increasing utility."',
    verification="source text",
    checked_at="the paper's title and abstract (arXiv 1710.11214, as listed on the second author's publication page)",
)
ARMS = (
    Arm("collaborative", ("ranking=collaborative",)),
    Arm("oracle", ("ranking=engagement", "ranking.predictor=oracle")),
    Arm("random", ("ranking=random",)),
    Arm("chronological", ("ranking=chronological",)),
)
CLAIMS = (
    Claim(
        name="homogeneity",
        kind="contrast",
        metric="mean Jaccard index of the posts engaged with by each agent and the agent most similar to it under "
        "the collaborative filter's user factors, collaborative − oracle (the same pairs)",
        published='increases homogeneity / homogenizes user behavior (direction only; figures: "change in Jaccard '
        'index" relative to the ideal recommender)',
        source=SOURCE,
        sign=1,
        role="evidence",
        how_it_could_fail="If the collaborative filter's feedback loop did not narrow what users it deems similar "
        "consume, relative to the ideal recommender, the change in Jaccard index of the same pairs would be ≤ 0.",
    ),
    Claim(
        name="utility",
        kind="contrast",
        metric="engagements per impression (collaborative − oracle)",
        published="decreases utility (title); without increasing utility (abstract); direction only",
        source=SOURCE,
        sign=-1,
        role="consistency",
        how_it_could_fail="It cannot contradict the paper: the oracle ranks by the behaviour model's own engagement "
        "probabilities, so per impression no recommender can beat it in expectation, and collaborative − oracle < 0 "
        "only checks that the collaborative filter is not the oracle.",
    ),
)


def offline_pairs(engagements: pd.DataFrame) -> pd.DataFrame:
    """The pairing rule applied to an arm that served without learning: ALS with the collaborative mode's defaults
    fitted once, after the run, on the arm's engagements (fixed seed 0), then `most_similar_pairs`."""
    cfg = CollaborativeConfig()
    counts = engagements.groupby(["agent_id", "post_id"]).size().reset_index(name="count")
    users, user_ids = pd.factorize(counts["agent_id"])
    items = pd.factorize(counts["post_id"])[0]
    factors = fit_factors(
        list(user_ids),
        users,
        items,
        counts["count"].to_numpy(),
        factors=cfg.factors,
        regularization=cfg.regularization,
        alpha=cfg.alpha,
        iterations=cfg.iterations,
        rng=np.random.default_rng(0),
    )
    if factors is None:
        return pd.DataFrame({"agent_id": [], "paired_agent_id": []})
    return most_similar_pairs(factors.user_ids, factors.users, np.random.default_rng(0))


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: the paired Jaccard index under both recommenders, engagements per impression, and (descriptive)
    the mean Jaccard index over all pairs of each arm's engagers."""
    pairs = runs["collaborative"][PAIRS_TABLE]
    paired, ideal, n_pairs = paired_jaccard_means(
        pairs, runs["collaborative"]["engagements"], runs["oracle"]["engagements"]
    )
    utility = {arm: engagements_per_impression(t["exposures"], t["engagements"]) for arm, t in runs.items()}
    claims = {
        "homogeneity": SeedValues(paired, ideal),
        "utility": SeedValues(utility["collaborative"], utility["oracle"]),
    }
    figures = {"paired_jaccard_collaborative": paired, "paired_jaccard_oracle": ideal, "pairs": float(n_pairs)}
    figures |= {f"jaccard_all_pairs_{arm}": consumption_jaccard_mean(t["engagements"]) for arm, t in runs.items()}
    figures |= {f"engagement_per_impression_{arm}": value for arm, value in utility.items()}
    if "random" in runs:  # the pairing's selection alone: the same rule on an arm without a feedback loop
        selected, same_pairs_ideal, _ = paired_jaccard_means(
            offline_pairs(runs["random"]["engagements"]), runs["random"]["engagements"], runs["oracle"]["engagements"]
        )
        figures["paired_change_random_offline"] = selected - same_pairs_ideal
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """The most likely reason a claim is not reproduced (the pairing alone: `paired_change_random_offline`)."""
    if result.claim == "homogeneity":
        return (
            "the users the collaborative filter deems alike consume no more alike under it than under the oracle: "
            "with few engagements per agent the factors separate users weakly, and the oracle, which knows every "
            "agent's biases, also concentrates agents with shared interests on the same posts"
        )
    return (
        "the collaborative feed engages at least as much as the oracle's: the oracle ranks only x_algo's candidates, "
        "the collaborative filter any visible post"
    )


FINDING = Finding(
    name="chaney2018",
    title="Chaney, Stewart & Engelhardt 2018: a feedback-trained recommender homogenises consumption",
    arms=ARMS,
    claims=CLAIMS,
    tables={"engagements": ("agent_id", "post_id"), "exposures": ("post_id",)},
    arm_tables={"collaborative": {PAIRS_TABLE: ("agent_id", "paired_agent_id")}},
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    reason=reason,
)
