"""Power figures: closed forms (Cohen 1988 normal approximation) and the simulation against brute force."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from prism_experiments.analysis.compare import ComparisonSettings, compare_conditions
from prism_experiments.analysis.design import detect_design
from prism_experiments.analysis.power import (
    POWER_COLUMNS,
    PilotResampler,
    mann_whitney_pvalues,
    normal_mde,
    normal_seeds,
    pair_power,
    rank_test_seeds,
    rejection_rate,
    wilcoxon_pvalues,
    z_sum,
)
from prism_experiments.analysis.stats import mann_whitney_test, wilcoxon_test

# standard normal quantiles from printed tables (Cohen 1988, table 2.3.1), not from the code under test
Z_975, Z_80, Z_95 = 1.959964, 0.841621, 1.644854


def test_normal_seeds_and_mde_match_the_textbook_formula() -> None:
    # n = ((z_{1-a/2} + z_{1-b}) * sd / delta)^2, rounded up: sd 1, delta 0.5, power 0.8 -> 31.4 -> 32
    assert normal_seeds(1.0, 0.5, 0.05, 0.8) == math.ceil(((Z_975 + Z_80) * 1.0 / 0.5) ** 2) == 32
    assert normal_seeds(2.0, -0.5, 0.05, 0.95) == math.ceil(((Z_975 + Z_95) * 2.0 / 0.5) ** 2)
    assert normal_seeds(1.0, 0.0, 0.05, 0.8) == math.inf
    assert z_sum(0.05, 0.8) == pytest.approx(Z_975 + Z_80, abs=1e-6)
    # MDE = (z + z) * sd / sqrt(n): sd 0.3 over 10 pairs
    assert normal_mde(0.3 / math.sqrt(10), 0.05, 0.8) == pytest.approx((Z_975 + Z_80) * 0.3 / math.sqrt(10), rel=1e-6)
    # the Wilcoxon figure divides by the ARE 3/pi (Lehmann 2006): 32 -> 32 * pi / 3 = 33.5 -> 34
    assert rank_test_seeds(32.0) == 34.0


def test_pair_power_normal_columns_use_the_pilot_sd() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(1.0, 1.0, 12), rng.normal(0.0, 1.0, 12)
    paired = pair_power(x, y, True, 0.05, np.random.default_rng(0), replicates=0)
    sd = np.std(x - y, ddof=1)
    assert paired.sd == pytest.approx(sd)
    assert paired.mde_normal == pytest.approx((Z_975 + Z_80) * sd / math.sqrt(12), rel=1e-6)
    delta = np.mean(x - y)
    assert paired.seeds_normal[0.8] == math.ceil(((Z_975 + Z_80) * sd / delta) ** 2)
    unpaired = pair_power(x, y, False, 0.05, np.random.default_rng(0), replicates=0)
    sd_a, sd_b = np.std(x, ddof=1), np.std(y, ddof=1)
    assert unpaired.mde_normal == pytest.approx((Z_975 + Z_80) * math.sqrt(sd_a**2 / 12 + sd_b**2 / 12), rel=1e-6)
    per_group = ((Z_975 + Z_95) * math.hypot(sd_a, sd_b) / (x.mean() - y.mean())) ** 2
    assert unpaired.seeds_normal[0.95] == math.ceil(per_group)
    # --effect is in sd units: Cohen's d_z (paired), d with the pooled sd (unpaired)
    assert pair_power(x, y, True, 0.05, np.random.default_rng(0), 0, effect=0.5).effect == pytest.approx(0.5 * sd)
    pooled = math.sqrt((sd_a**2 + sd_b**2) / 2)
    assert pair_power(x, y, False, 0.05, np.random.default_rng(0), 0, effect=0.5).effect == pytest.approx(0.5 * pooled)


@pytest.mark.parametrize("n", [5, 12, 50, 70])
def test_batched_wilcoxon_p_values_are_scipys_row_by_row(n: int) -> None:
    d = np.random.default_rng(n).normal(0.4, 1.0, (200, n))
    d[0, :2] = [0.5, -0.5]  # a tie in |d|: that batch must go to scipy directly and still agree
    for batch in (d[1:], d):
        expected = [stats.wilcoxon(row).pvalue for row in batch]
        assert wilcoxon_pvalues(batch) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("n_a", "n_b"), [(5, 5), (8, 3), (9, 9), (20, 30)])
def test_batched_mann_whitney_p_values_are_scipys_row_by_row(n_a: int, n_b: int) -> None:
    rng = np.random.default_rng(n_a * 100 + n_b)
    a, b = rng.normal(0.5, 1.0, (200, n_a)), rng.normal(0.0, 1.0, (200, n_b))
    a[0, 0] = b[0, 0]  # a tie in one row: that row gets scipy's own method choice, the others theirs
    expected = [stats.mannwhitneyu(x, y, alternative="two-sided").pvalue for x, y in zip(a, b, strict=True)]
    assert mann_whitney_pvalues(a, b) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def brute_force_power(delta: float, n: int, paired: bool, replicates: int, seed: int) -> float:
    """Fresh normal samples (sd 1) through the report's own test functions, one at a time."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(replicates):
        if paired:
            hits += wilcoxon_test(rng.normal(delta, 1.0, n), np.zeros(n)).pvalue < 0.05
        else:
            hits += mann_whitney_test(rng.normal(delta, 1.0, n), rng.normal(0.0, 1.0, n)).pvalue < 0.05
    return hits / replicates


@pytest.mark.parametrize("paired", [True, False])
def test_simulated_power_agrees_with_brute_force_on_normal_data(paired: bool) -> None:
    # a large normal pilot: its smoothed bootstrap is close to the normal the brute force draws from
    pilot = np.random.default_rng(11).normal(0.0, 1.0, (2, 400))
    residuals = (pilot[0] - pilot[0].mean(),) if paired else tuple(p - p.mean() for p in pilot)
    resampler = PilotResampler(residuals, 3000, np.random.default_rng(1))
    n, delta = (12, 0.7) if paired else (10, 1.0)
    simulated = rejection_rate(resampler, delta * np.std(pilot[0], ddof=1), n, n, 0.05)
    brute = brute_force_power(delta, n, paired, 3000, seed=2)
    # two Monte Carlo estimates of a power near 0.6: sd of the difference ~0.013; allow 4 sd
    assert 0.3 < brute < 0.9
    assert simulated == pytest.approx(brute, abs=0.055)


def test_seeds_needed_by_simulation_approach_the_normal_figure_over_the_are() -> None:
    # for large n under normality the Wilcoxon needs the t test's n divided by 3/pi (Lehmann 2006)
    x = np.random.default_rng(5).normal(0.0, 1.0, 500)
    result = pair_power(x, np.zeros(500), True, 0.05, np.random.default_rng(3), replicates=1500, effect=0.3)
    expected = (Z_975 + Z_80) ** 2 / 0.3**2 * math.pi / 3  # 91.4
    assert result.seeds_rank[0.8] == math.ceil(math.ceil((Z_975 + Z_80) ** 2 / 0.3**2) * math.pi / 3)
    assert result.seeds_sim[0.8] == pytest.approx(expected, rel=0.15)
    assert result.seeds_sim[0.95] > result.seeds_sim[0.8]


def test_simulated_mde_has_power_080_by_brute_force() -> None:
    x = np.random.default_rng(8).normal(0.0, 1.0, 300)
    n = 15
    result = pair_power(x[:n], np.zeros(n), True, 0.05, np.random.default_rng(0), replicates=1500)
    assert result.n_a == n and math.isfinite(result.mde_sim)
    # the pilot is only 15 values: check the MDE against fresh draws from a normal with the pilot's sd
    sd = float(np.std(x[:n], ddof=1))
    brute = brute_force_power(result.mde_sim / sd, n, True, 2000, seed=9)
    assert brute == pytest.approx(0.8, abs=0.07)
    # and it is near the normal MDE inflated by the rank test's efficiency: (z + z) sd / sqrt(n * 3/pi)
    assert result.mde_sim == pytest.approx((Z_975 + Z_80) * sd / math.sqrt(n * 3 / math.pi), rel=0.2)


def test_degenerate_pilots_are_said_not_simulated() -> None:
    rng = np.random.default_rng(0)
    same = np.arange(6.0)
    assert "no variation" in pair_power(same + 1.0, same, True, 0.05, rng).note
    assert "fewer than 2" in pair_power([1.0], [0.0], True, 0.05, rng).note
    tiny = pair_power(rng.normal(0, 1, 8), rng.normal(0, 1, 8), True, 0.05, rng, replicates=200, effect=1e-4)
    assert tiny.seeds_sim[0.8] == math.inf and "seeds needed" in tiny.note


def test_power_is_seeded_and_reported_per_pair() -> None:
    rng = np.random.default_rng(2)
    seed_effect = rng.normal(0, 1, 10)
    tidy = pd.DataFrame(
        [{"run_id": f"{c}{s}", "seed": s, "condition": c, "m": seed_effect[s] + shift + rng.normal(0, 0.2)}
         for c, shift in (("a", 0.0), ("b", 0.3), ("c", 0.6)) for s in range(10)]
    )  # fmt: skip
    design = detect_design(tidy, ["a", "b", "c"])
    settings = ComparisonSettings(n_resamples=100, power_replicates=200)
    first = compare_conditions(tidy, ["a", "b", "c"], ["m"], design, settings).power
    again = compare_conditions(tidy, ["a", "b", "c"], ["m"], design, settings).power
    pd.testing.assert_frame_equal(first, again)
    assert list(first.columns) == list(POWER_COLUMNS) and len(first) == 3
    # alpha per test: alpha / the 3 tests of the metric's Holm family
    assert first["alpha_test"].tolist() == pytest.approx([0.05 / 3] * 3)
    wide = tidy.pivot(index="seed", columns="condition", values="m")
    assert first["difference"].tolist() == pytest.approx(
        [(wide["a"] - wide["b"]).mean(), (wide["a"] - wide["c"]).mean(), (wide["b"] - wide["c"]).mean()]
    )
