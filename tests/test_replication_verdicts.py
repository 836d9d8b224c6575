"""The replication's verdicts: tests, Holm over the stated family, band checks, aggregation (synthetic seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from prism_experiments.analysis.stats import holm_adjust
from prism_experiments.replication.model import (
    DOES_NOT_HOLD,
    EQUIVALENT,
    HOLDS,
    NO_EVIDENCE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMOKE,
    WITHIN_BAND,
    Arm,
    Claim,
    ClaimResult,
    Finding,
    SeedValues,
    Source,
)
from prism_experiments.replication.registry import (
    FAMILY_SIZE,
    FINDINGS,
    N_CONSISTENCY,
    REPLICATION_SET_VERSION,
    select,
)
from prism_experiments.replication.verdicts import (
    adjust_family,
    empty_result,
    evaluate_claim,
    finding_verdict,
    headline,
    judge,
)

SOURCE = Source("A. Author (2020). A paper.", "it goes up", "source text", "its abstract")
FAILS = "if it went down, the contrast would go the other way"
UP = Claim("goes_up", "contrast", "x − y", "goes up", SOURCE, role="evidence", how_it_could_fail=FAILS, sign=1)
BAND = Claim("in_band", "band", "a share", ">= 0.9", SOURCE, role="evidence", how_it_could_fail=FAILS, low=0.9,
             high=1.0)  # fmt: skip
CHECK = Claim("an_input", "contrast", "x − y", "goes up", SOURCE, role="consistency",
              how_it_could_fail="it is an input of the world", sign=1)  # fmt: skip
FINDING = Finding(
    name="toy", title="toy", arms=(Arm("a", ()),), claims=(UP, BAND), tables={},
    measure=lambda runs: ({}, {}), seeds=10, reason=lambda result, figures: "the toy's own reason",
)  # fmt: skip


def equivalence(margin: float) -> Claim:
    return Claim("no_effect", "equivalence", "x − y", "no effect", SOURCE, role="evidence", how_it_could_fail=FAILS,
                 margin=margin, margin_reason="the paper's own figures")  # fmt: skip


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
    assert FAMILY_SIZE == sum(c.evidence for f in FINDINGS for c in f.claims) >= 5
    names = [f.name for f in FINDINGS]
    assert {"goel2016", "juul_ugander2021", "huszar2022", "chaney2018", "guess2023", "gauthier2026"} <= set(names)
    for finding in FINDINGS:
        for claim in finding.claims:
            assert claim.source.verification in ("source text", "quoted source text", "secondary summary")
            assert claim.source.checked_at and claim.published
    with pytest.raises(ValueError, match="unknown finding 'nope'"):
        select(["nope"])


def test_claims_must_state_a_sign_a_band_or_a_margin_and_how_they_could_fail() -> None:
    with pytest.raises(ValueError, match="sign"):
        Claim("c", "contrast", "m", "p", SOURCE, role="evidence", how_it_could_fail=FAILS)
    with pytest.raises(ValueError, match="edge"):
        Claim("b", "band", "m", "p", SOURCE, role="evidence", how_it_could_fail=FAILS)
    with pytest.raises(ValueError, match="margin > 0"):
        Claim("e", "equivalence", "m", "p", SOURCE, role="evidence", how_it_could_fail=FAILS, margin_reason="r")
    with pytest.raises(ValueError, match="margin_reason"):
        Claim("e", "equivalence", "m", "p", SOURCE, role="evidence", how_it_could_fail=FAILS, margin=0.1)
    with pytest.raises(ValueError, match="how_it_could_fail"):
        Claim("c", "contrast", "m", "p", SOURCE, role="evidence", how_it_could_fail=" ", sign=1)
    with pytest.raises(ValueError, match="role"):
        Claim("c", "contrast", "m", "p", SOURCE, role="input", how_it_could_fail=FAILS, sign=1)  # type: ignore[arg-type]


#: per-seed differences without ties, built so that the one-sided tests' exact p-values can be counted by hand
D = np.array([0.12, -0.21, 0.33, 0.04, -0.09, 0.17, -0.06, 0.26])
Y = np.arange(1.0, 9.0)  # any paired baseline: the claim tests d = x - y


def test_an_equivalence_is_two_one_sided_wilcoxon_tests_of_the_difference_against_the_margins() -> None:
    # margin 0.3: d + 0.3 all positive, p = 1/2^8; d - 0.3 has one positive value, 0.03, the smallest |.|: R+ = 1,
    # p = P(R+ <= 1) = 2/2^8. The larger, 2/256, is below 0.05: equivalent
    result = judged(equivalence(0.3), seeds(D + Y, Y))
    assert result.p_value == pytest.approx(2 / 256)
    assert result.verdict == EQUIVALENT
    assert result.effect == pytest.approx(float(D.mean())) and result.ci_low < result.effect < result.ci_high
    upper = stats.wilcoxon(D - 0.3, alternative="less").pvalue
    lower = stats.wilcoxon(D + 0.3, alternative="greater").pvalue
    assert (lower, upper) == pytest.approx((1 / 256, 2 / 256))


def test_an_equivalence_fails_when_the_difference_is_not_shown_within_the_margin() -> None:
    # margin 0.2: d - 0.2 has positives 0.13 and 0.06, ranks 4 and 2 of the |.|: R+ = 6, and 14 of the 256 sign
    # patterns have R+ <= 6 (sums 0..6 of distinct ranks: 1 + 1 + 1 + 2 + 2 + 3 + 4), so p = 14/256 > 0.05
    result = judged(equivalence(0.2), seeds(D + Y, Y))
    assert result.p_value == pytest.approx(14 / 256)
    assert result.verdict == NOT_REPRODUCED
    assert "the difference's 95% CI" in result.reason and "is not shown within ±0.2 (the margin)" in result.reason
    assert result.seeds_80 > 8  # power against the nearer margin (+0.2, the mean is 0.07): more seeds would do


def test_only_evidence_claims_are_in_the_family_and_a_check_is_decided_on_its_raw_p() -> None:
    six = np.array([1.1, 1.3, 0.9, 1.2, 1.05, 1.4])  # six seeds, all up: two-sided p = 2/2^6 = 0.03125
    evidence = evaluate_claim(FINDING, UP, seeds(six, np.zeros(6)), **FAST)
    check = evaluate_claim(FINDING, CHECK, seeds(six, np.zeros(6)), **FAST)
    adjust_family([evidence, check], 2)  # a family of 2 evidence claims, the other not tested here
    assert evidence.p_holm == pytest.approx(2 * 0.03125)
    assert math.isnan(check.p_holm) and check.p_value == pytest.approx(0.03125)
    for claim, result in ((UP, evidence), (CHECK, check)):
        judge(FINDING, claim, result, {}, 2, 0, 100)
    assert evidence.verdict == NOT_REPRODUCED and "p_holm 0.0625 >= 0.05" in evidence.reason
    assert check.verdict == HOLDS  # raw p 0.031 < 0.05: it holds, and the family never saw it
    with pytest.raises(ValueError, match="2 evidence claims but the family has 1"):
        adjust_family([evidence, check, evaluate_claim(FINDING, UP, seeds(six, np.zeros(6)), **FAST)], 1)
    failing = evaluate_claim(FINDING, CHECK, seeds(-six, np.zeros(6)), **FAST)
    adjust_family([failing], 1)
    judge(FINDING, CHECK, failing, {}, 1, 0, 100)
    assert failing.verdict == DOES_NOT_HOLD and "the harness goes the other way" in failing.reason


def result_with(claim: Claim, verdict: str) -> ClaimResult:
    return empty_result(FINDING, claim, verdict)


def test_the_headline_counts_evidence_claims_only() -> None:
    results = [result_with(UP, REPRODUCED), result_with(BAND, WITHIN_BAND), result_with(equivalence(1.0), EQUIVALENT),
               result_with(UP, NOT_REPRODUCED), result_with(UP, NOT_TESTABLE), result_with(CHECK, HOLDS),
               result_with(CHECK, HOLDS), result_with(CHECK, DOES_NOT_HOLD)]  # fmt: skip
    assert headline(results) == (
        "3 of 5 evidence claims reproduced (1 not testable); 2 of 3 consistency checks hold (inputs, truths by "
        "construction and identities: shown, never counted as replication)"
    )
    smoke = [result_with(UP, SMOKE), result_with(CHECK, SMOKE)]
    assert headline(smoke) == "smoke size (--quick): no verdicts; 1 evidence claims and 1 consistency checks ran"


def test_a_finding_verdict_reads_its_evidence_claims_only() -> None:
    assert finding_verdict([UP, CHECK], [result_with(UP, REPRODUCED), result_with(CHECK, DOES_NOT_HOLD)]) == REPRODUCED
    assert finding_verdict([UP, CHECK], [result_with(UP, NOT_REPRODUCED), result_with(CHECK, HOLDS)]) == NOT_REPRODUCED
    assert finding_verdict([CHECK, CHECK], [result_with(CHECK, HOLDS), result_with(CHECK, HOLDS)]) == NO_EVIDENCE
    eq = equivalence(1.0)
    assert finding_verdict([UP, eq], [result_with(UP, REPRODUCED), result_with(eq, EQUIVALENT)]) == REPRODUCED


#: the role of every claim of the set: inputs, truths by construction and identities are consistency checks
ROLES = {
    ("goel2016", "never_reshared"): "consistency",  # a calibration input of the world
    ("goel2016", "tail"): "consistency",  # semi-held-out: the world's adoption rule nearly meets the lower edge
    ("goel2016", "virality_low"): "evidence",
    ("goel2016", "virality_flat"): "evidence",
    ("juul_ugander2021", "virality_at_matched_size"): "evidence",
    ("juul_ugander2021", "depth_at_matched_size"): "evidence",
    ("huszar2022", "top_group_amplified"): "evidence",
    ("huszar2022", "top_accounts_amplified"): "evidence",
    ("chaney2018", "homogeneity"): "evidence",
    ("chaney2018", "utility"): "consistency",  # the oracle is the behaviour model
    ("guess2023", "time_on_platform"): "consistency",  # signs fixed by the activity response and x_algo's rate
    ("guess2023", "activity"): "consistency",
    ("gauthier2026", "follows_persist"): "consistency",  # no unfollowing; chronological shows followees
    ("gauthier2026", "asymmetry_switch_on"): "consistency",  # x_algo's higher rate at equal sessions
    ("gauthier2026", "asymmetry_switch_off"): "evidence",
    ("milli2025", "animosity_engagement"): "evidence",
    ("milli2025", "partisanship_engagement"): "evidence",
    ("milli2025", "animosity_stated_preference"): "evidence",
    ("nyhan2023", "like_minded_cut"): "consistency",  # the treatment's dose, an input
    ("nyhan2023", "cross_cutting_up"): "evidence",
    ("nyhan2023", "uncivil_down"): "evidence",
    ("guess2023_exposure", "political_up"): "evidence",
    ("guess2023_exposure", "uncivil_down"): "evidence",
}


def test_every_claim_of_the_set_has_its_role_and_says_how_it_could_fail() -> None:
    claims = {(f.name, c.name): c for f in FINDINGS for c in f.claims}
    assert {key: c.role for key, c in claims.items()} == ROLES
    for (finding, name), claim in claims.items():
        assert claim.how_it_could_fail.strip(), f"{finding}.{name}"
        assert claim.how_it_could_fail.rstrip().endswith("."), f"{finding}.{name}: one sentence, ended"
        if claim.kind == "equivalence":
            assert claim.margin is not None and claim.margin > 0 and claim.margin_reason.strip(), f"{finding}.{name}"
    assert sum(role == "evidence" for role in ROLES.values()) == FAMILY_SIZE
    assert sum(role == "consistency" for role in ROLES.values()) == N_CONSISTENCY
    tail = claims[("goel2016", "tail")].how_it_could_fail
    assert "semi-held-out" in tail.lower()


def test_full_gives_real_verdicts_in_the_whole_family_and_lists_the_findings_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prism_experiments.replication import suite
    from prism_experiments.replication.model import HOLDING, NOT_RUN_FULL
    from prism_experiments.replication.runs import Plan

    def measured(
        finding: Finding, plan: Plan, options: suite.SuiteOptions
    ) -> tuple[list[ClaimResult], dict[str, float], list[dict[str, object]]]:
        results = [empty_result(finding, claim, NOT_REPRODUCED) for claim in finding.claims]
        for result in results:  # every claim met with p = 1e-6 at 10 seeds
            result.p_value, result.effect, result.n_seeds = 1e-6, float(result.sign or 0), 10
        return results, {}, []

    monkeypatch.setattr(suite, "evaluate_finding", measured)
    options = suite.SuiteOptions(full=True, run=False, power_replicates=0)
    result = suite.run_suite(options, (suite.selected(options)[0], Plan([])))  # no job: no store read, no sweep
    assert [f.name for f in result.findings] == ["goel2016", "juul_ugander2021", "huszar2022"]
    assert [f.name for f in result.not_run] == [f.name for f in FINDINGS[3:]]
    evidence = [r for r in result.results if r.evidence]
    # Holm over the set's whole family, the claims not run counting as p = 1: m x p, never (claims run) x p
    assert len(evidence) < FAMILY_SIZE
    assert [r.p_holm for r in evidence] == pytest.approx([FAMILY_SIZE * 1e-6] * len(evidence))
    assert all(r.verdict in HOLDING for r in evidence)  # verdicts, not --quick's smoke
    assert set(result.verdicts) == {"goel2016", "juul_ugander2021", "huszar2022"}
    assert SMOKE not in result.verdicts.values() and NOT_RUN_FULL not in result.verdicts.values()
