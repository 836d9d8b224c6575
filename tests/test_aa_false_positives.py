"""A/A: one condition under two labels; the comparison's tests must flag a difference at about rate alpha.

Synthetic runs (no simulation): many A/A replicates through the report's own test functions, and
the observed false-positive rate must lie in the binomial interval around alpha.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from prism_experiments.analysis.compare import ComparisonSettings, compare_conditions
from prism_experiments.analysis.design import detect_design
from prism_experiments.analysis.stats import adjust_pvalues, mann_whitney_test, wilcoxon_test
from prism_experiments.composition import arm_of_seed

ALPHA = 0.05
REPLICATES = 2000
#: two-sided 99.9% binomial interval: a correct test fails this test about once in a thousand runs
CONFIDENCE = 0.999


def binomial_interval(p: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The central interval of the share of successes in n trials at success probability p."""
    low, high = stats.binom.interval(confidence, n, p)
    return low / n, high / n


@pytest.mark.parametrize(("test", "paired", "seeds"), [
    (wilcoxon_test, True, 12),        # exact null distribution: 2^12 outcomes, sizes close to alpha
    (mann_whitney_test, False, 10),   # 10 runs per arm: normal approximation with continuity correction
])  # fmt: skip
def test_a_a_false_positive_rate_is_alpha(test: object, paired: bool, seeds: int) -> None:
    rng = np.random.default_rng(1234)
    hits = 0
    for _ in range(REPLICATES):
        # the two arms run disjoint seeds of one condition: skewed, seed-to-seed noise, no difference
        a, b = rng.gamma(2.0, 1.0, seeds), rng.gamma(2.0, 1.0, seeds)
        hits += test(a, b).pvalue < ALPHA  # type: ignore[operator]
    low, high = binomial_interval(ALPHA, REPLICATES)
    rate = hits / REPLICATES
    # the rank tests are exact or slightly conservative: the rate may sit a little below alpha, never above
    assert low - 0.01 <= rate <= high, f"A/A false-positive rate {rate:.4f} outside [{low:.4f}, {high:.4f}]"


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_a_a_family_wise_rate_over_the_report_is_at_most_alpha(correction: str) -> None:
    # 9 metrics, 1 pair each, all null and independent: any significant test is a false positive.
    # Holm controls the family-wise error; under the global null BH's FDR equals it (Benjamini & Hochberg 1995)
    rng = np.random.default_rng(99)
    a, b = rng.normal(0, 1, (REPLICATES, 9, 12)), rng.normal(0, 1, (REPLICATES, 9, 12))
    pvalues = stats.mannwhitneyu(a, b, axis=2, alternative="two-sided").pvalue
    any_hit = np.array([(adjust_pvalues(row, correction) < ALPHA).any() for row in pvalues])
    unadjusted = (pvalues < ALPHA).any(axis=1).mean()
    _, high = binomial_interval(ALPHA, REPLICATES)
    assert any_hit.mean() <= high
    assert unadjusted > 0.25  # without the report family, 9 tests find "something" a third of the time


def test_a_a_through_compare_conditions_is_significant_at_most_at_rate_alpha() -> None:
    # the whole comparison on the A/A layout of conf/experiment/aa.yaml: arms by seed block, disjoint seeds
    rng = np.random.default_rng(7)
    settings = ComparisonSettings(n_resamples=100, power_replicates=0)
    n_replicates, hits = 200, 0
    for _ in range(n_replicates):
        seeds = range(20)
        tidy = pd.DataFrame({"run_id": [f"r{s}" for s in seeds], "seed": list(seeds),
                             "condition": [f"arm={arm_of_seed(s, 10, 'A', 'B')}" for s in seeds],
                             "m": rng.normal(0.5, 0.1, 20)})  # fmt: skip
        conditions = ["arm=A", "arm=B"]
        design = detect_design(tidy, conditions)
        assert not design.paired
        hits += bool(compare_conditions(tidy, conditions, ["m"], design, settings).pairwise["significant"].iloc[0])
    _, high = binomial_interval(ALPHA, n_replicates)
    assert hits / n_replicates <= high


def test_arm_of_seed_splits_one_seed_range_into_disjoint_blocks() -> None:
    assert [arm_of_seed(s, 5, "A", "B") for s in range(10)] == ["A"] * 5 + ["B"] * 5
    with pytest.raises(ValueError, match="seed 10 is beyond 2 arm"):
        arm_of_seed(10, 5, "A", "B")
