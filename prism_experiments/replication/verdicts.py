"""From per-seed values to verdicts: the tests, the family's Holm adjustment, the CIs and the seeds needed.

Pure: lists of per-seed values in, `ClaimResult`s out. Every test and interval is the comparison report's own
(analysis/stats.py, analysis/power.py): a paired Wilcoxon signed-rank test (scipy), BCa bootstrap CIs, Holm
(1979), and seeds for power 0.8 simulated through the same test (Collings & Hamilton 1988).
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
    return ClaimResult(
        finding=finding.name, claim=claim.name, kind=claim.kind, metric=claim.metric, published=claim.published,
        verification=claim.source.verification, calibration_input=claim.calibration_input, verdict=verdict,
        reason=reason,
    )  # fmt: skip


def band_edges(claim: Claim) -> list[tuple[float, str]]:
    """The band's edges with the one-sided alternative each is tested with (x - low > 0, x - high < 0)."""
    edges = []
    if claim.low is not None:
        edges.append((claim.low, "greater"))
    if claim.high is not None:
        edges.append((claim.high, "less"))
    return edges


def claim_pvalue(claim: Claim, x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided paired Wilcoxon p (contrast), or the larger of the two one-sided tests against the edges (band)."""
    if claim.kind == "contrast":
        return wilcoxon_test(x, y).pvalue
    return max(wilcoxon_test(x, np.full(x.size, edge), alternative).pvalue for edge, alternative in band_edges(claim))


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
    keep = [(x, y) for x, y in pairs if math.isfinite(x) and (claim.kind == "band" or math.isfinite(y))]
    result = empty_result(finding, claim, NOT_REPRODUCED)
    result.values, result.n_seeds = pairs, len(keep)
    if len(keep) < 2:
        result.reason = f"{len(keep)} seed(s) gave a value; a paired test needs at least 2"
        return result
    x = np.array([p[0] for p in keep])
    y = np.array([p[1] for p in keep])
    rng = rng_for(bootstrap_seed, "replication", finding.name, claim.name)
    if claim.kind == "contrast":
        ci = bootstrap_difference_ci(x, y, rng, paired=True, n_resamples=n_resamples)
        result.y_mean = float(y.mean())
    else:
        ci = bootstrap_mean_ci(x, rng, n_resamples=n_resamples)
    result.effect, result.ci_low, result.ci_high, result.ci_method = ci.estimate, ci.low, ci.high, ci.method
    result.x_mean = float(x.mean())
    result.p_value = claim_pvalue(claim, x, y)
    return result


def seeds_for_power(claim: Claim, result: ClaimResult, family_size: int, seed: int, replicates: int) -> None:
    """Seeds needed for power 0.8 at the family's first Holm step, alpha / m: a contrast against 0, a band level
    against its nearer edge (its one-sided tests run at that level too, so this is conservative)."""
    keep = [(x, y) for x, y in result.values if math.isfinite(x) and (claim.kind == "band" or math.isfinite(y))]
    if len(keep) < 2:
        return
    x = np.array([p[0] for p in keep])
    if claim.kind == "contrast":
        y = np.array([p[1] for p in keep])
    else:
        nearest = min((edge for edge, _ in band_edges(claim)), key=lambda edge: abs(float(x.mean()) - edge))
        y = np.full(x.size, nearest)
    figures = pair_power(x, y, True, ALPHA / family_size, rng_for(seed, "replication-power", result.claim),
                         replicates, powers=(POWER,))  # fmt: skip
    result.seeds_80, result.seeds_80_normal = figures.seeds_sim[POWER], figures.seeds_rank[POWER]


def adjust_family(results: Sequence[ClaimResult], family_size: int) -> None:
    """Holm over the stated family: every claim of the replication set, a claim not tested here counted as p = 1.

    Holm never gains from an untested member (p = 1 sorts last), so a claim's p_holm in a partial run (`--only`)
    is at least its p_holm in the whole suite: the partial run is never the more permissive one.
    """
    if len(results) > family_size:
        raise ValueError(f"results: {len(results)} claims but the family has {family_size}")
    p = np.ones(family_size)
    p[: len(results)] = [r.p_value if r.tested else 1.0 for r in results]
    adjusted = holm_adjust(p)
    for result, value in zip(results, adjusted[: len(results)], strict=True):
        result.p_holm = float(value) if result.tested else math.nan


def decide(claim: Claim, result: ClaimResult, alpha: float = ALPHA) -> None:
    """The claim's verdict from its Holm-adjusted p and the direction of its effect (never from anything else)."""
    if result.verdict == NOT_TESTABLE or not result.tested:
        return
    significant = result.p_holm < alpha
    if claim.kind == "band":
        result.verdict = WITHIN_BAND if significant else NOT_REPRODUCED
        return
    right_way = np.sign(result.effect) == claim.sign
    result.verdict = REPRODUCED if significant and right_way else NOT_REPRODUCED


def finding_verdict(claims: Sequence[Claim], results: Sequence[ClaimResult]) -> str:
    """Not reproduced if any claim is not; else not testable if any claim cannot be tested; else magnitude within
    band if a claim is a band (every contrast reproduced too); else reproduced."""
    verdicts = [r.verdict for r in results]
    if SMOKE in verdicts:
        return SMOKE
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    if NOT_TESTABLE in verdicts:
        return NOT_TESTABLE
    return WITHIN_BAND if any(c.kind == "band" for c in claims) else REPRODUCED


def explain(finding: Finding, claim: Claim, result: ClaimResult, figures: Mapping[str, float]) -> None:
    """Fill in why a claim was not reproduced: what the numbers say, then the finding's most likely reason.

    An effect with the published sign that misses significance is a matter of seeds (the row's seeds for power
    says how many), not of the model: the finding's own reason is given when the harness goes the other way or
    the level misses its band. Call after `seeds_for_power`.
    """
    if result.verdict != NOT_REPRODUCED:
        return
    if not result.tested:  # too few seeds with a value: why the runs give none is the finding's to say
        parts = [finding.reason(result, figures)]
    elif claim.kind == "band":
        edges = ", ".join(f"{'>=' if a == 'greater' else '<='} {edge:g}" for edge, a in band_edges(claim))
        parts = [f"the level's 95% CI [{result.ci_low:.4g}, {result.ci_high:.4g}] is not shown within {edges}",
                 finding.reason(result, figures)]  # fmt: skip
    elif np.sign(result.effect) == claim.sign:
        needed = "more than 100" if math.isinf(result.seeds_80) else f"{result.seeds_80:.0f}"
        parts = [f"the effect has the published sign but p_holm {result.p_holm:.3g} >= {ALPHA:g} at "
                 f"{result.n_seeds} seeds; power 0.8 needs {needed} seeds"]  # fmt: skip
    else:
        significant = "significantly" if result.p_holm < ALPHA else "not significantly"
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
