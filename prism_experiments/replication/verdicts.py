"""From per-seed values to verdicts: the tests, the family's Holm adjustment, the CIs and the seeds needed.

Pure: lists of per-seed values in, `ClaimResult`s out. Every test and interval is the comparison report's own
(analysis/stats.py, analysis/power.py): a paired Wilcoxon signed-rank test (scipy), BCa bootstrap CIs, Holm
(1979) over the set's evidence claims, and seeds for power 0.8 simulated through the same test (Collings & Hamilton
1988). Bands and equivalences are two one-sided tests against fixed edges (Schuirmann 1987): an equivalence is the
band test on the paired difference with the edges -margin and +margin. Consistency checks (inputs, truths by
construction, identities) are decided on their raw p, outside the family, and never count as replication.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from prism_experiments.analysis.power import pair_power
from prism_experiments.analysis.stats import (
    bootstrap_difference_ci,
    bootstrap_mean_ci,
    holm_adjust,
    rng_for,
    wilcoxon_test,
)
from prism_experiments.replication.model import (
    DOES_NOT_HOLD,
    EQUIVALENT,
    HOLDING,
    HOLDS,
    NO_EVIDENCE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMOKE,
    WITHIN_BAND,
    Claim,
    ClaimResult,
    Finding,
    SeedValues,
)

ALPHA = 0.05
CONFIDENCE = 0.95
POWER = 0.8
DEFAULT_RESAMPLES = 9999
DEFAULT_POWER_REPLICATES = 300


def empty_result(finding: Finding, claim: Claim, verdict: str = NOT_TESTABLE, reason: str = "") -> ClaimResult:
    """A claim's row before (or without) evidence."""
    nan = math.nan
    return ClaimResult(
        finding=finding.name, claim=claim.name, kind=claim.kind, metric=claim.metric, published=claim.published,
        verification=claim.source.verification, role=claim.role, how_it_could_fail=claim.how_it_could_fail,
        sign=claim.sign, low=nan if claim.low is None else claim.low, high=nan if claim.high is None else claim.high,
        margin=nan if claim.margin is None else claim.margin, margin_reason=claim.margin_reason, verdict=verdict,
        reason=reason,
    )  # fmt: skip


def level(claim: Claim, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """What a band or an equivalence tests against its edges: the level x (band), the difference x - y (equivalence)."""
    return x if claim.kind == "band" else x - y


def claim_pvalue(claim: Claim, x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided paired Wilcoxon p (contrast), or the larger of the one-sided tests against the edges (band,
    equivalence: two one-sided tests, Schuirmann 1987; both reject exactly when the larger p is below alpha)."""
    if claim.kind == "contrast":
        return wilcoxon_test(x, y).pvalue
    values = level(claim, x, y)
    return max(wilcoxon_test(values, np.full(values.size, edge), side).pvalue for edge, side in claim.edges())


def complete(claim: Claim, values: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The seeds with a value: x (band), x and y (contrast, equivalence)."""
    return [(x, y) for x, y in values if math.isfinite(x) and (claim.kind == "band" or math.isfinite(y))]


def evaluate_claim(
    finding: Finding,
    claim: Claim,
    values: Sequence[SeedValues],
    *,
    bootstrap_seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> ClaimResult:
    """Effect, 95 % CI and raw p of one claim over its seeds (seeds with a NaN value are left out)."""
    pairs = [(v.x, v.y) for v in values]
    keep = complete(claim, pairs)
    result = empty_result(finding, claim, NOT_REPRODUCED)
    result.values, result.n_seeds = pairs, len(keep)
    if len(keep) < 2:
        result.reason = f"{len(keep)} seed(s) gave a value; a paired test needs at least 2"
        return result
    x = np.array([p[0] for p in keep])
    y = np.array([p[1] for p in keep])
    rng = rng_for(bootstrap_seed, "replication", finding.name, claim.name)
    if claim.kind == "band":
        ci = bootstrap_mean_ci(x, rng, n_resamples=n_resamples)
    else:
        ci = bootstrap_difference_ci(x, y, rng, paired=True, n_resamples=n_resamples)
        result.y_mean = float(y.mean())
    result.effect, result.ci_low, result.ci_high, result.ci_method = ci.estimate, ci.low, ci.high, ci.method
    result.x_mean = float(x.mean())
    result.p_value = claim_pvalue(claim, x, y)
    return result


def decision_alpha(claim: Claim, family_size: int) -> float:
    """The level a claim's raw p must reach: alpha / m, Holm's first step (evidence); alpha (consistency, no family)."""
    return ALPHA / family_size if claim.evidence else ALPHA


def seeds_for_power(claim: Claim, result: ClaimResult, family_size: int, seed: int, replicates: int) -> None:
    """Seeds needed for power 0.8 at the level the claim is decided at (`decision_alpha`): a contrast against 0, a
    band level or an equivalence's difference against its nearer edge or margin (its one-sided tests run at that
    level too, so this is conservative)."""
    keep = complete(claim, result.values)
    if len(keep) < 2:
        return
    x = np.array([p[0] for p in keep])
    y = np.array([p[1] for p in keep])
    if claim.kind != "contrast":
        x = level(claim, x, y)
        nearest = min((edge for edge, _ in claim.edges()), key=lambda edge: abs(float(x.mean()) - edge))
        y = np.full(x.size, nearest)
    figures = pair_power(x, y, True, decision_alpha(claim, family_size),
                         rng_for(seed, "replication-power", result.claim), replicates, powers=(POWER,))  # fmt: skip
    result.seeds_80, result.seeds_80_normal = figures.seeds_sim[POWER], figures.seeds_rank[POWER]


def adjust_family(results: Sequence[ClaimResult], family_size: int) -> None:
    """Holm over the stated family: every evidence claim of the replication set, a claim not tested here counted as
    p = 1. Consistency checks are not in it (their p_holm stays NaN: they are decided on their raw p).

    Holm never gains from an untested member (p = 1 sorts last), so a claim's p_holm in a partial run (`--only`)
    is at least its p_holm in the whole suite: the partial run is never the more permissive one.
    """
    evidence = [r for r in results if r.evidence]
    if len(evidence) > family_size:
        raise ValueError(f"results: {len(evidence)} evidence claims but the family has {family_size}")
    p = np.ones(family_size)
    p[: len(evidence)] = [r.p_value if r.tested else 1.0 for r in evidence]
    adjusted = holm_adjust(p)
    for result, value in zip(evidence, adjusted[: len(evidence)], strict=True):
        result.p_holm = float(value) if result.tested else math.nan
    for result in results:
        if not result.evidence:
            result.p_holm = math.nan


def decide(claim: Claim, result: ClaimResult, alpha: float = ALPHA) -> None:
    """The claim's verdict from its deciding p (Holm-adjusted for evidence, raw for consistency) and the direction
    of its effect (never from anything else)."""
    if result.verdict == NOT_TESTABLE or not result.tested:
        if not claim.evidence and result.verdict == NOT_REPRODUCED:
            result.verdict = DOES_NOT_HOLD
        return
    significant = result.p_decision < alpha
    if claim.kind != "contrast":
        holds = significant
    else:
        holds = significant and np.sign(result.effect) == claim.sign
    if not claim.evidence:
        result.verdict = HOLDS if holds else DOES_NOT_HOLD
    elif not holds:
        result.verdict = NOT_REPRODUCED
    else:
        result.verdict = {"contrast": REPRODUCED, "band": WITHIN_BAND, "equivalence": EQUIVALENT}[claim.kind]


def finding_verdict(claims: Sequence[Claim], results: Sequence[ClaimResult]) -> str:
    """From the evidence claims only (consistency checks never count): not reproduced if any is not; else not
    testable if any cannot be tested; else magnitude within band if one is a band (every other reproduced or
    equivalent too); else reproduced. A finding without evidence claims says so."""
    verdicts = [r.verdict for r in results]
    if SMOKE in verdicts:
        return SMOKE
    evidence = [r.verdict for r, c in zip(results, claims, strict=True) if c.evidence]
    if not evidence:
        return NO_EVIDENCE
    if NOT_REPRODUCED in evidence:
        return NOT_REPRODUCED
    if NOT_TESTABLE in evidence:
        return NOT_TESTABLE
    return WITHIN_BAND if any(c.kind == "band" and c.evidence for c in claims) else REPRODUCED


def headline(results: Sequence[ClaimResult]) -> str:
    """`k of n evidence claims reproduced; m of c consistency checks hold (...)`: only evidence claims are counted
    as replication (reproduced, within band, equivalent); a smoke run counts nothing."""
    evidence = [r for r in results if r.evidence]
    checks = [r for r in results if not r.evidence]
    if any(r.verdict == SMOKE for r in results):
        return (f"smoke size (--quick): no verdicts; {len(evidence)} evidence claims and {len(checks)} consistency "
                "checks ran")  # fmt: skip
    untestable = sum(r.verdict == NOT_TESTABLE for r in evidence)
    return (
        f"{sum(r.verdict in HOLDING for r in evidence)} of {len(evidence)} evidence claims reproduced"
        + (f" ({untestable} not testable)" if untestable else "")
        + f"; {sum(r.verdict == HOLDS for r in checks)} of {len(checks)} consistency checks hold (inputs, truths by "
        "construction and identities: shown, never counted as replication)"
    )


def explain(finding: Finding, claim: Claim, result: ClaimResult, figures: Mapping[str, float]) -> None:
    """Fill in why a claim was not reproduced (or a check does not hold): what the numbers say, then the finding's
    most likely reason.

    An effect with the published sign that misses significance is a matter of seeds (the row's seeds for power
    says how many), not of the model: the finding's own reason is given when the harness goes the other way or
    the level misses its band. Call after `seeds_for_power`.
    """
    if result.verdict not in (NOT_REPRODUCED, DOES_NOT_HOLD):
        return
    p_name = "p_holm" if claim.evidence else "p"
    if not result.tested:  # too few seeds with a value: why the runs give none is the finding's to say
        parts = [finding.reason(result, figures)]
    elif claim.kind != "contrast":
        if claim.kind == "band":
            what = "level"
            edges = ", ".join(f"{'>=' if a == 'greater' else '<='} {edge:g}" for edge, a in claim.edges())
        else:
            what, edges = "difference", f"±{claim.margin:g} (the margin)"
        parts = [f"the {what}'s 95% CI [{result.ci_low:.4g}, {result.ci_high:.4g}] is not shown within {edges}",
                 finding.reason(result, figures)]  # fmt: skip
    elif np.sign(result.effect) == claim.sign:
        needed = "more than 100" if math.isinf(result.seeds_80) else f"{result.seeds_80:.0f}"
        parts = [f"the effect has the published sign but {p_name} {result.p_decision:.3g} >= {ALPHA:g} at "
                 f"{result.n_seeds} seeds; power 0.8 needs {needed} seeds"]  # fmt: skip
    else:
        significant = "significantly" if result.p_decision < ALPHA else "not significantly"
        parts = [f"the harness goes the other way ({significant})", finding.reason(result, figures)]
    result.reason = "; ".join(part for part in (result.reason, *parts) if part)


def judge(
    finding: Finding,
    claim: Claim,
    result: ClaimResult,
    figures: Mapping[str, float],
    family_size: int,
    seed: int,
    replicates: int,
) -> None:
    """A claim's verdict once its family is Holm-adjusted (`adjust_family`): `decide`, then `seeds_for_power` when it
    was tested, then `explain` (which reads the seeds for power)."""
    decide(claim, result)
    if result.tested:
        seeds_for_power(claim, result, family_size, seed, replicates)
    explain(finding, claim, result, figures)
