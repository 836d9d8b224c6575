"""Chaney, Stewart & Engelhardt (RecSys 2018): a recommender trained on its own feedback homogenises what users
consume and gives no more utility than the ideal recommender.

Harness: the `engagement` mode with `ranking.predictor=learned` (logistic regressions refit every step on the
impressions this ranker served: the feedback loop) against `ranking.predictor=oracle` (the behaviour model's own
probabilities: the ideal recommender); `random` and `chronological` are references, reported, not tested.
"""

from __future__ import annotations

from collections.abc import Mapping

from prism_experiments.metrics.consumption import consumption_jaccard_mean, engagements_per_impression
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
    Arm("learned", ("ranking=engagement", "ranking.predictor=learned")),
    Arm("oracle", ("ranking=engagement", "ranking.predictor=oracle")),
    Arm("random", ("ranking=random",)),
    Arm("chronological", ("ranking=chronological",)),
)
CLAIMS = (
    Claim(
        name="homogeneity",
        kind="contrast",
        metric="mean Jaccard index of the posts pairs of agents engaged with (learned − oracle)",
        published="increases homogeneity / homogenizes user behavior (direction only, no figure)",
        source=SOURCE,
        sign=1,
        role="evidence",
        how_it_could_fail="If the learned predictor, which sees only platform features, spread agents over more "
        "different posts than the oracle, which knows every agent's biases, the agents' consumption would be less "
        "alike under it and the contrast would go the other way.",
    ),
    Claim(
        name="utility",
        kind="contrast",
        metric="engagements per impression (learned − oracle)",
        published="decreases utility (title); without increasing utility (abstract); direction only",
        source=SOURCE,
        sign=-1,
        role="consistency",
        how_it_could_fail="It cannot contradict the paper: the oracle ranks by the behaviour model's own engagement "
        "probabilities, so per impression no predictor can beat it in expectation, and learned − oracle < 0 only "
        "checks that the learned predictor is not the oracle.",
    ),
)


def measure(runs: SeedRuns) -> tuple[dict[str, SeedValues], dict[str, float]]:
    """Per seed: consumption overlap and engagements per impression of each arm."""
    jaccard = {arm: consumption_jaccard_mean(tables["engagements"]) for arm, tables in runs.items()}
    utility = {arm: engagements_per_impression(t["exposures"], t["engagements"]) for arm, t in runs.items()}
    claims = {
        "homogeneity": SeedValues(jaccard["learned"], jaccard["oracle"]),
        "utility": SeedValues(utility["learned"], utility["oracle"]),
    }
    figures = {f"jaccard_{arm}": value for arm, value in jaccard.items()}
    figures |= {f"engagement_per_impression_{arm}": value for arm, value in utility.items()}
    return claims, figures


def reason(result: ClaimResult, figures: Mapping[str, float]) -> str:
    """Chaney's recommenders learn latent user preferences from consumption; ours sees only what a platform logs."""
    if result.claim == "homogeneity":
        return (
            "the learned predictor sees only platform features (similarity, network, format, counts, follower "
            "count), not the agents' own biases, so it converges to a similarity ranker (docs/ranking.md, "
            "'engagement') while the oracle, which knows every agent's biases, concentrates agents on the posts "
            "most of them like; Chaney et al.'s recommenders learn per-user latent preferences from consumption, "
            "which is what narrows their users onto the same items"
        )
    return (
        "the learned feed engages at least as much as the oracle's: the platform features explain engagement as "
        "well as the behaviour model's own probabilities here"
    )


FINDING = Finding(
    name="chaney2018",
    title="Chaney, Stewart & Engelhardt 2018: a feedback-trained recommender homogenises consumption",
    arms=ARMS,
    claims=CLAIMS,
    tables={"engagements": ("agent_id", "post_id"), "exposures": ("post_id",)},
    measure=measure,
    seeds=10,
    quick_overrides=SMALL_QUICK_OVERRIDES,
    reason=reason,
)
