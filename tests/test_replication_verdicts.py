"""The replication's verdicts: tests, Holm over the stated family, band checks, aggregation (synthetic seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from prism_experiments.analysis.stats import holm_adjust
from prism_experiments.replication.model import (
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMOKE,
    WITHIN_BAND,
    Arm,
    Claim,
    Finding,
    SeedValues,
    Source,
)
from prism_experiments.replication.registry import FAMILY_SIZE, FINDINGS, REPLICATION_SET_VERSION, select
from prism_experiments.replication.verdicts import (
    adjust_family,
    empty_result,
    evaluate_claim,
    finding_verdict,
    judge,
)

SOURCE = Source("A. Author (2020). A paper.", "it goes up", "source text", "its abstract")
UP = Claim("goes_up", "contrast", "x − y", "goes up", SOURCE, sign=1)
BAND = Claim("in_band", "band", "a share", ">= 0.9", SOURCE, low=0.9, high=1.0)
FINDING = Finding(
    name="toy", title="toy", arms=(Arm("a", ()),), claims=(UP, BAND), tables={},
    measure=lambda runs: ({}, {}), seeds=10, reason=lambda result, figures: "the toy's own reason",
)  # fmt: skip
FAST = {"n_resamples": 500}


def seeds(x: np.ndarray, y: np.ndarray | None = None) -> list[SeedValues]:
    return [SeedValues(float(a), float("nan") if y is None else float(b)) for a, b in zip(x, x if y is None else y)]


def judged(claim: Claim, values: list[SeedValues], family: int = 1):  # type: ignore[no-untyped-def]
    result = evaluate_claim(FINDING, claim, values, **FAST)
    adjust_family([result], family)
    judge(FINDING, claim, result, {}, family, 0, 100)
    return result


def test_a_contrast_with_the_published_sign_is_reproduced_and_its_numbers_are_scipys() -> None:
    rng = np.random.default_rng(1)
    y = rng.normal(0, 1, 10)
    x = y + 1.0 + rng.normal(0, 0.1, 10)
    result = judged(UP, seeds(x, y))
    assert result.verdict == REPRODUCED
    assert result.p_value == pytest.approx(stats.wilcoxon(x, y).pvalue)
    assert result.effect == pytest.approx(float(np.mean(x - y)))
    assert result.ci_low < result.effect < result.ci_high
    assert result.n_seeds == 10


def test_the_opposite_sign_is_not_reproduced_even_when_significant() -> None:
    rng = np.random.default_rng(2)
    y = rng.normal(0, 1, 10)
    result = judged(UP, seeds(y - 1.0 - rng.uniform(0, 0.1, 10), y))
    assert result.p_holm < 0.05
    assert result.verdict == NOT_REPRODUCED
    assert "the harness goes the other way (significantly)" in result.reason
    assert "the toy's own reason" in result.reason


def test_no_difference_is_not_reproduced_with_the_reason_and_the_seeds_power_needs() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(0, 1, 10)
    result = judged(UP, seeds(y + rng.normal(0.1, 0.5, 10), y), family=FAMILY_SIZE)
    assert result.verdict == NOT_REPRODUCED and result.effect > 0
    assert result.seeds_80 > 10 and result.seeds_80_normal > 10
    assert f"the effect has the published sign but p_holm {result.p_holm:.3g} >= 0.05 at 10 seeds" in result.reason
    assert "power 0.8 needs" in result.reason and "the toy's own reason" not in result.reason


def test_a_band_holds_only_when_both_one_sided_tests_pass() -> None:
    rng = np.random.default_rng(4)
    inside = judged(BAND, seeds(rng.uniform(0.93, 0.97, 10)))
    assert inside.verdict == WITHIN_BAND
    lower = stats.wilcoxon(np.array([v for v, _ in inside.values]) - 0.9, alternative="greater").pvalue
    upper = stats.wilcoxon(np.array([v for v, _ in inside.values]) - 1.0, alternative="less").pvalue
    assert inside.p_value == pytest.approx(max(lower, upper))
    straddling = judged(BAND, seeds(rng.uniform(0.85, 0.95, 10)))
    assert straddling.verdict == NOT_REPRODUCED
    assert "is not shown within >= 0.9, <= 1" in straddling.reason
    below = judged(BAND, seeds(np.zeros(10)))  # no tail at all: every seed 0
    assert below.verdict == NOT_REPRODUCED and below.p_value == 1.0


def test_holm_runs_over_the_whole_family_with_untested_claims_at_p_one() -> None:
    rng = np.random.default_rng(5)
    y = rng.normal(0, 1, 10)
    results = [evaluate_claim(FINDING, UP, seeds(y + 1 + rng.normal(0, 0.1, 10), y), **FAST) for _ in range(2)]
    untested = empty_result(FINDING, UP, NOT_TESTABLE, "no mechanism")
    adjust_family([*results, untested], 12)
    expected = holm_adjust([results[0].p_value, results[1].p_value, *[1.0] * 10])
    assert [r.p_holm for r in results] == pytest.approx(expected[:2])
    assert math.isnan(untested.p_holm)
    # a partial run is never the more permissive: the same claim alone in the family of 12 gets at least as large
    alone = evaluate_claim(FINDING, UP, seeds(y + 1 + rng.normal(0, 0.1, 10), y), **FAST)
    adjust_family([alone], 12)
    assert alone.p_holm == pytest.approx(min(1.0, 12 * alone.p_value))
    with pytest.raises(ValueError, match="family has 1"):
        adjust_family(results, 1)


def test_ten_seeds_can_reach_significance_in_the_family_of_the_set() -> None:
    # the smallest two-sided Wilcoxon p on 10 seeds is 2 / 2^10; Holm's first step multiplies it by the family
    assert FAMILY_SIZE * 2 / 2**10 < 0.05
    assert all(finding.seeds >= 10 for finding in FINDINGS)


def test_too_few_seeds_give_no_test() -> None:
    result = judged(UP, [SeedValues(1.0, 0.0), SeedValues(float("nan"), 0.0)])
    assert result.verdict == NOT_REPRODUCED and not result.tested
    assert "1 seed(s) gave a value" in result.reason and "the toy's own reason" in result.reason


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([REPRODUCED, WITHIN_BAND], WITHIN_BAND),
        ([REPRODUCED, REPRODUCED], REPRODUCED),
        ([REPRODUCED, NOT_TESTABLE], NOT_TESTABLE),
        ([NOT_TESTABLE, NOT_REPRODUCED], NOT_REPRODUCED),
        ([SMOKE, SMOKE], SMOKE),
    ],
)
def test_a_finding_is_as_strong_as_its_weakest_claim(verdicts: list[str], expected: str) -> None:
    claims = [UP, BAND] if expected == WITHIN_BAND else [UP, UP]
    results = []
    for claim, verdict in zip(claims, verdicts):
        result = empty_result(FINDING, claim, verdict)
        results.append(result)
    assert finding_verdict(claims, results) == expected


def test_the_set_is_versioned_and_every_value_says_where_it_was_verified() -> None:
    assert REPLICATION_SET_VERSION >= 1
    assert FAMILY_SIZE == sum(len(f.claims) for f in FINDINGS) >= 10
    names = [f.name for f in FINDINGS]
    assert {"goel2016", "juul_ugander2021", "chaney2018", "guess2023", "gauthier2026"} <= set(names)
    for finding in FINDINGS:
        for claim in finding.claims:
            assert claim.source.verification in ("source text", "quoted source text", "secondary summary")
            assert claim.source.checked_at and claim.published
    with pytest.raises(ValueError, match="unknown finding 'nope'"):
        select(["nope"])


def test_claims_must_state_a_sign_or_a_band() -> None:
    with pytest.raises(ValueError, match="sign"):
        Claim("c", "contrast", "m", "p", SOURCE)
    with pytest.raises(ValueError, match="edge"):
        Claim("b", "band", "m", "p", SOURCE)
