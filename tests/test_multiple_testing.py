"""--correction holm|bh and --family metric|report, checked against scipy and a reference Holm on the same p-values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from prism_experiments.analysis.cli import main
from prism_experiments.analysis.compare import ComparisonSettings, compare_conditions
from prism_experiments.analysis.design import detect_design
from prism_experiments.analysis.stats import adjust_pvalues, bh_adjust

FAST = dict(n_resamples=100, power_replicates=0)
#: results.csv columns before --correction existed: the default must keep them
OLD_COLUMNS = [
    "metric", "condition_a", "condition_b", "design", "test", "n_a", "n_b", "n_pairs",
    "mean_a", "mean_b", "difference", "diff_ci_low", "diff_ci_high", "ci_method",
    "statistic", "p_value", "p_holm", "effect_size", "effect_size_name", "significant", "note",
]  # fmt: skip


def reference_holm(p: np.ndarray) -> np.ndarray:
    """Holm (1979) written out: i-th smallest p times (m - i + 1), running maximum, capped at 1."""
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, (m - i) * p[index])
        adjusted[index] = min(1.0, running)
    return adjusted


def tidy_table(paired: bool = True) -> pd.DataFrame:
    """4 conditions x 8 seeds, 3 metrics with different effect sizes."""
    rng = np.random.default_rng(21)
    seed_effect = rng.normal(0, 1, (8, 3))
    rows = []
    for c, shift in zip("abcd", (0.0, 0.2, 0.5, 0.9), strict=True):
        for s in range(8):
            seed = s if paired else s + 8 * "abcd".index(c)
            rows.append(
                {
                    "run_id": f"{c}{s}",
                    "seed": seed,
                    "condition": c,
                    **{f"m{i}": seed_effect[s, i] + shift * i + rng.normal(0, 0.3) for i in range(3)},
                }
            )
    return pd.DataFrame(rows)


def compare(settings: ComparisonSettings, paired: bool = True) -> pd.DataFrame:
    tidy = tidy_table(paired)
    conditions = list("abcd")
    return compare_conditions(tidy, conditions, ["m0", "m1", "m2"], detect_design(tidy, conditions), settings).pairwise


def test_bh_is_scipys_false_discovery_control_and_keeps_nan() -> None:
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2, 0.001])
    valid = ~np.isnan(p)
    adjusted = bh_adjust(p)
    assert np.isnan(adjusted[2])
    assert adjusted[valid] == pytest.approx(stats.false_discovery_control(p[valid], method="bh"))
    assert adjust_pvalues(p, "holm")[valid] == pytest.approx(reference_holm(p[valid]))
    with pytest.raises(ValueError, match="correction: 'bonferroni' is not one of holm, bh"):
        adjust_pvalues(p, "bonferroni")


@pytest.mark.parametrize("paired", [True, False])
def test_default_is_holm_over_the_whole_report_with_the_old_columns(paired: bool) -> None:
    # the report's family by default: P(any false finding in the report) <= alpha
    pairwise = compare(ComparisonSettings(**FAST), paired)
    assert list(pairwise.columns) == OLD_COLUMNS
    assert pairwise["p_holm"].to_numpy() == pytest.approx(reference_holm(pairwise["p_value"].to_numpy()))
    assert (pairwise["significant"] == (pairwise["p_holm"] < 0.05)).all()
    explicit = compare(ComparisonSettings(correction="holm", family="report", **FAST), paired)
    pd.testing.assert_frame_equal(pairwise, explicit)


@pytest.mark.parametrize("paired", [True, False])
def test_family_metric_is_holm_within_each_metric(paired: bool) -> None:
    pairwise = compare(ComparisonSettings(family="metric", **FAST), paired)
    for _, rows in pairwise.groupby("metric"):
        p = rows["p_value"].to_numpy()
        assert rows["p_holm"].to_numpy() == pytest.approx(reference_holm(p))
        assert (rows["significant"] == (rows["p_holm"] < 0.05)).all()


def test_bh_within_each_metric() -> None:
    pairwise = compare(ComparisonSettings(correction="bh", family="metric", **FAST))
    assert "p_bh" in pairwise.columns and "p_holm" not in pairwise.columns
    for _, rows in pairwise.groupby("metric"):
        expected = stats.false_discovery_control(rows["p_value"].to_numpy(), method="bh")
        assert rows["p_bh"].to_numpy() == pytest.approx(expected)
        assert (rows["significant"] == (rows["p_bh"] < 0.05)).all()


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_report_family_adjusts_every_test_together(correction: str) -> None:
    pairwise = compare(ComparisonSettings(correction=correction, family="report", alpha=0.1, **FAST))
    p = pairwise["p_value"].to_numpy()
    assert len(p) == 3 * 6
    expected = reference_holm(p) if correction == "holm" else stats.false_discovery_control(p, method="bh")
    assert pairwise[f"p_{correction}"].to_numpy() == pytest.approx(expected)
    assert (pairwise["significant"] == (pairwise[f"p_{correction}"] < 0.1)).all()
    if correction == "holm":  # Holm never gains from a larger family (BH can: other small p-values help)
        per_metric = compare(ComparisonSettings(correction=correction, family="metric", alpha=0.1, **FAST))
        assert (pairwise["p_holm"].to_numpy() >= per_metric["p_holm"].to_numpy() - 1e-15).all()


def test_power_alpha_follows_the_family_size() -> None:
    tidy = tidy_table()
    design = detect_design(tidy, list("abcd"))
    settings = ComparisonSettings(family="report", n_resamples=100, power_replicates=0)
    power = compare_conditions(tidy, list("abcd"), ["m0", "m1", "m2"], design, settings).power
    assert power["alpha_test"].tolist() == pytest.approx([0.05 / 18] * 18)


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [("--correction", "bonferroni", "'holm' or 'bh'"), ("--family", "all", "'metric' or 'report'")],
)
def test_cli_rejects_an_unknown_correction_or_family(option: str, value: str, allowed: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["--experiment", "x", option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"prism-compare: error: {option}: ") and allowed in err[0]


@pytest.mark.parametrize(("option", "value"), [("--power-replicates", "-1"), ("--effect", "0")])
def test_cli_rejects_bad_power_options(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--experiment", "x", option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"prism-compare: error: {option}: ")


def test_robustness_counts_sign_and_significance_agreement(tmp_path) -> None:
    from prism_experiments.analysis.robustness import main as robustness_main
    from prism_experiments.analysis.robustness import metric_summary, robustness_table

    def table(diffs: list[float], significant: list[bool]) -> pd.DataFrame:
        return pd.DataFrame({"metric": ["m", "n"], "condition_a": ["a", "a"], "condition_b": ["b", "b"],
                             "difference": diffs, "significant": significant})  # fmt: skip

    sets = {"s1": table([0.2, 0.1], [True, False]), "s2": table([0.3, -0.1], [True, False]),
            "s3": table([-0.1, 0.2], [False, True]), "s4": table([0.1, 0.0], [True, False])}  # fmt: skip
    result = robustness_table(sets).set_index("metric")
    # m: 3 of 4 higher, 3 of 4 significant, the same 3 -> consistent 3/4
    assert result.loc["m", ["n_higher", "n_lower", "n_significant"]].tolist() == [3, 1, 3]
    assert result.loc["m", "sign_agreement"] == 0.75 and result.loc["m", "consistent_significant"] == 0.75
    # n: 2 higher, 1 lower, 1 zero; 1 of 4 significant -> verdict agreement 3/4
    assert result.loc["n", "sign_agreement"] == 0.5 and result.loc["n", "significance_agreement"] == 0.75
    assert metric_summary(robustness_table(sets))["pairs_significant_in_every_set"].tolist() == [0, 0]
    paths = []
    for name, frame in sets.items():
        paths.append(tmp_path / f"{name}.csv")
        frame.to_csv(paths[-1], index=False)
    assert robustness_main([*map(str, paths), "--out", str(tmp_path / "r.csv")]) == 0
    assert pd.read_csv(tmp_path / "r.csv")["n_sets"].tolist() == [4, 4]
    with pytest.raises(ValueError, match="not a results.csv table"):
        robustness_table({"x": pd.DataFrame({"metric": ["m"]})})
