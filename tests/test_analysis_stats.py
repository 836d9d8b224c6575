"""The comparison statistics, design detection, run selection and report files, on synthetic run tables."""

from __future__ import annotations

from datetime import datetime
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from prism_experiments.analysis.cli import main
from prism_experiments.analysis.compare import ComparisonSettings, compare_conditions, smallest_holm_p
from prism_experiments.analysis.conditions import resolve_param_keys
from prism_experiments.analysis.design import detect_design
from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.analysis.report import CascadeComparison, ReportProvenance, reading, write_report
from prism_experiments.analysis.runs import RunRecord, runs_to_table, simulation_filter
from prism_experiments.analysis.selection import select_runs
from prism_experiments.analysis.stats import (
    bootstrap_difference_ci,
    bootstrap_mean_ci,
    ccdf,
    cliffs_delta,
    friedman_test,
    holm_adjust,
    kruskal_test,
    ks_test,
    mann_whitney_test,
    matched_pairs_rank_biserial,
    page_trend,
    spearman_trend,
    wilcoxon_test,
)
from prism_experiments.tracking.labels import short_names

FAST = ComparisonSettings(n_resamples=999)


def run_table(shifts: dict[str, float], seeds: range, noise: float = 0.1, rng_seed: int = 7) -> pd.DataFrame:
    """Tidy runs: metric `m` = seed effect + condition shift + noise (common random numbers across conditions)."""
    rng = np.random.default_rng(rng_seed)
    seed_effect = rng.normal(0.0, 1.0, size=len(seeds))
    rows = [
        {"run_id": f"{condition}-{seed}", "seed": seed, "condition": condition,
         "m": seed_effect[i] + shift + rng.normal(0.0, noise)}
        for condition, shift in shifts.items()
        for i, seed in enumerate(seeds)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def compare(tidy: pd.DataFrame, metrics: tuple[str, ...] = ("m",), settings: ComparisonSettings = FAST):
    conditions = list(dict.fromkeys(tidy["condition"]))
    design = detect_design(tidy, conditions)
    return compare_conditions(tidy, conditions, metrics, design, settings)


# --- Holm, effect sizes ---------------------------------------------------------------------------------------


def test_holm_matches_a_hand_computed_example() -> None:
    # sorted 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    adjusted = holm_adjust([0.01, np.nan, 0.04])
    assert adjusted[0] == pytest.approx(0.02) and np.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_rank_biserial_matches_kerby_by_hand() -> None:
    # differences 1, -2, 3, 0, 4: zero dropped, ranks 1..4, R+ = 8, R- = 2 -> (8 - 2) / 10
    assert matched_pairs_rank_biserial([2, 0, 6, 5, 9], [1, 2, 3, 5, 5]) == pytest.approx(0.6)
    # tied |d| = 1, 1, 1 get rank 2 each: R+ = 4, R- = 2 -> 1/3
    assert matched_pairs_rank_biserial([1, 1, 0], [0, 0, 1]) == pytest.approx(1 / 3)
    assert matched_pairs_rank_biserial([1, 2], [1, 2]) == 0.0


def test_cliffs_delta_matches_hand_count_and_mann_whitney_u() -> None:
    # 1 < 2, 2, 4; 2 = 2, 2 < 4; 3 > 2, 2, 3 < 4: 2 greater, 5 less of 9 pairs
    assert cliffs_delta([1, 2, 3], [2, 2, 4]) == pytest.approx(-3 / 9)
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, 9).astype(float), rng.integers(1, 6, 7).astype(float)
    u = stats.mannwhitneyu(x, y, alternative="two-sided").statistic
    assert cliffs_delta(x, y) == pytest.approx(2 * u / (x.size * y.size) - 1)


# --- every p-value is scipy's ---------------------------------------------------------------------------------


def test_single_tests_give_scipys_p_values() -> None:
    rng = np.random.default_rng(11)
    x, y, z = rng.normal(0, 1, 12), rng.normal(0.5, 1, 12), rng.normal(1, 1, 12)
    assert wilcoxon_test(x, y).pvalue == stats.wilcoxon(x, y).pvalue
    assert mann_whitney_test(x, y).pvalue == stats.mannwhitneyu(x, y, alternative="two-sided").pvalue
    assert friedman_test(np.column_stack([x, y, z])).pvalue == stats.friedmanchisquare(x, y, z).pvalue
    assert kruskal_test([x, y, z[:7]]).pvalue == stats.kruskal(x, y, z[:7]).pvalue
    assert ks_test(x, z).pvalue == stats.ks_2samp(x, z).pvalue
    levels = np.repeat([0.25, 0.5, 1.0], 4)
    assert spearman_trend(levels, x).pvalue == stats.spearmanr(levels, x).pvalue
    blocks = np.column_stack([x, y, z])
    increasing, decreasing = stats.page_trend_test(blocks), stats.page_trend_test(blocks[:, ::-1])
    assert page_trend(blocks).pvalue == pytest.approx(min(1.0, 2 * min(increasing.pvalue, decreasing.pvalue)))


SCIPY_PAIRED = (
    lambda x, y: stats.wilcoxon(x, y.reindex(x.index)).pvalue,
    lambda *groups: stats.friedmanchisquare(*groups).pvalue,
)
SCIPY_UNPAIRED = (
    lambda x, y: stats.mannwhitneyu(x, y, alternative="two-sided").pvalue,
    lambda *groups: stats.kruskal(*groups).pvalue,
)


@pytest.mark.parametrize("paired", [True, False])
def test_every_reported_p_value_equals_scipy_on_the_same_numbers(paired: bool) -> None:
    tidy = run_table({"a": 0.0, "b": 0.3, "c": 1.0}, range(8), noise=0.5)
    if not paired:
        tidy = tidy.loc[~((tidy["condition"] == "c") & (tidy["seed"] == 0))]
    comparison = compare(tidy)
    assert comparison.design.paired is paired
    groups = {c: tidy.loc[tidy["condition"] == c].set_index("seed")["m"] for c in ("a", "b", "c")}
    pair_p, omnibus_p = SCIPY_PAIRED if paired else SCIPY_UNPAIRED
    pairs = comparison.pairwise[["condition_a", "condition_b", "p_value"]].itertuples(index=False, name=None)
    reported = {(a, b): p for a, b, p in pairs}
    assert reported == {(a, b): pair_p(groups[a], groups[b]) for a, b in combinations("abc", 2)}
    raw = comparison.pairwise["p_value"].to_numpy()
    assert comparison.pairwise["p_holm"].to_numpy() == pytest.approx(holm_adjust(raw))
    assert comparison.omnibus.iloc[0]["p_value"] == omnibus_p(*groups.values())


def test_known_large_effect_is_significant_after_holm() -> None:
    comparison = compare(run_table({"a": 0.0, "b": 1.0, "c": 2.0}, range(10)))
    assert comparison.pairwise["significant"].all()
    assert (comparison.pairwise["p_holm"] < 0.01).all()
    # a - b is negative in every seed: the effect size is at its extreme
    assert comparison.pairwise["effect_size"].tolist() == pytest.approx([-1.0, -1.0, -1.0])
    assert comparison.omnibus["p_value"].iloc[0] < 1e-3


def test_a_a_comparison_is_not_significant() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(0.0, 1.0, size=20)
    tidy = pd.DataFrame({"run_id": [f"r{i}" for i in range(20)], "seed": range(20),
                         "condition": ["A1"] * 10 + ["A2"] * 10, "m": values})  # fmt: skip
    comparison = compare(tidy)
    row = comparison.pairwise.iloc[0]
    assert not comparison.design.paired
    assert not row["significant"] and row["p_holm"] > 0.05
    assert row["diff_ci_low"] < 0 < row["diff_ci_high"]
    assert row["p_value"] == stats.mannwhitneyu(values[:10], values[10:], alternative="two-sided").pvalue


def test_all_zero_differences_report_p_one_with_the_reason() -> None:
    tidy = run_table({"a": 0.0, "b": 0.0}, range(6), noise=0.0)
    comparison = compare(tidy)
    row = comparison.pairwise.iloc[0]
    assert row["p_value"] == 1.0 and row["effect_size"] == 0.0
    assert "all paired differences are zero" in row["note"]
    assert (row["diff_ci_low"], row["diff_ci_high"]) == (0.0, 0.0)


def test_constant_metric_is_warned_and_never_significant() -> None:
    tidy = run_table({"a": 0.0, "b": 1.0, "c": 2.0}, range(6)).assign(m=3.0)
    comparison = compare(tidy)
    assert (comparison.pairwise["p_value"] == 1.0).all()
    assert comparison.omnibus["p_value"].iloc[0] == 1.0
    assert any("constant" in warning for warning in comparison.warnings)


def test_nan_values_drop_their_pairs_and_are_warned() -> None:
    tidy = run_table({"a": 0.0, "b": 1.0}, range(8))
    tidy.loc[(tidy["condition"] == "b") & (tidy["seed"] == 3), "m"] = np.nan
    comparison = compare(tidy)
    row = comparison.pairwise.iloc[0]
    assert row["n_pairs"] == 7
    x = tidy.loc[(tidy["condition"] == "a") & (tidy["seed"] != 3), "m"].to_numpy()
    y = tidy.loc[(tidy["condition"] == "b") & (tidy["seed"] != 3), "m"].to_numpy()
    assert row["p_value"] == stats.wilcoxon(x, y).pvalue
    assert any("b seed(s) 3" in warning for warning in comparison.warnings)


def test_smallest_reachable_holm_p_is_warned_when_above_alpha() -> None:
    tidy = run_table({"a": 0.0, "b": 5.0, "c": 10.0}, range(5))
    comparison = compare(tidy)
    design = comparison.design
    assert smallest_holm_p(design, comparison.conditions) == pytest.approx(3 * 2 / 2**5)
    assert any("too few runs for significance" in warning for warning in comparison.warnings)
    assert not comparison.pairwise["significant"].any()


# --- bootstrap ------------------------------------------------------------------------------------------------


def test_bootstrap_ci_is_scipys_bca_with_the_same_generator() -> None:
    values = np.array([0.2, 0.5, 0.4, 0.9, 0.1, 0.7])
    ci = bootstrap_mean_ci(values, np.random.default_rng(4), n_resamples=999)
    expected = stats.bootstrap((values,), np.mean, n_resamples=999, method="BCa", rng=np.random.default_rng(4))
    assert (ci.low, ci.high, ci.method) == (expected.confidence_interval.low, expected.confidence_interval.high, "BCa")
    assert ci.low < values.mean() < ci.high


def test_bootstrap_handles_degenerate_samples() -> None:
    assert bootstrap_mean_ci([2.0, 2.0, 2.0], np.random.default_rng(0)).low == 2.0
    single = bootstrap_mean_ci([1.5], np.random.default_rng(0))
    assert single.estimate == 1.5 and np.isnan(single.low) and single.method == "n<2"
    # BCa is undefined when almost every resample has the same mean; the percentile interval still exists
    ci = bootstrap_mean_ci([0.0] * 9 + [1.0], np.random.default_rng(0), n_resamples=999)
    assert ci.method in {"BCa", "percentile"} and ci.low <= 0.1 <= ci.high
    unpaired = bootstrap_difference_ci([1.0, 2.0, 3.0], [0.0, 0.5], np.random.default_rng(0), paired=False)
    assert unpaired.estimate == pytest.approx(1.75) and unpaired.low < 1.75 < unpaired.high


def test_ccdf_is_the_share_at_least_each_size() -> None:
    sizes, share = ccdf([1, 1, 2, 5])
    assert sizes.tolist() == [1, 2, 5] and share.tolist() == [1.0, 0.5, 0.25]


# --- design detection -----------------------------------------------------------------------------------------


def test_same_seeds_everywhere_is_paired() -> None:
    tidy = run_table({"a": 0.0, "b": 1.0}, range(5))
    design = detect_design(tidy, ["a", "b"])
    assert design.paired and design.seeds == (0, 1, 2, 3, 4)
    assert design.pairwise_test == "Wilcoxon signed-rank" and not design.warnings


def test_different_seeds_are_unpaired_with_unequal_groups_warned() -> None:
    tidy = pd.concat([run_table({"a": 0.0}, range(5)), run_table({"b": 0.0}, range(10, 16))], ignore_index=True)
    design = detect_design(tidy, ["a", "b"])
    assert not design.paired and design.omnibus_test == "Kruskal-Wallis"
    assert any("unequal group sizes: a 5, b 6" in warning for warning in design.warnings)


def test_a_missing_seed_breaks_the_pairing_and_says_which() -> None:
    tidy = run_table({"a": 0.0, "b": 1.0}, range(6))
    tidy = tidy.loc[~((tidy["condition"] == "b") & (tidy["seed"] == 4))]
    design = detect_design(tidy, ["a", "b"])
    assert not design.paired
    assert any("missing seeds break the pairing (b lacks 4)" in warning for warning in design.warnings)
    assert design.group_sizes == {"a": 6, "b": 5} and design.pairwise_test == "Mann-Whitney U"


def test_small_conditions_are_warned_and_duplicates_refused() -> None:
    tidy = run_table({"a": 0.0, "b": 1.0}, range(3))
    assert any("fewer than 5 runs in condition(s): a (3); b (3)" in w for w in detect_design(tidy, ["a", "b"]).warnings)
    with pytest.raises(ValueError, match="each \\(condition, seed\\) must appear once"):
        detect_design(pd.concat([tidy, tidy.iloc[:1]]), ["a", "b"])


# --- run selection --------------------------------------------------------------------------------------------


def record(run_id: str, seed: int, mode: str, scale: str | None, status: str = "FINISHED", start: int = 0,
           value: float | None = 1.0) -> RunRecord:  # fmt: skip
    params = {"seed": str(seed), "ranking.mode": mode, "paths.runs_dir": f"/tmp/{run_id}",
              "corpus.seed": str(seed), "agents.n_agents": "50", "experiment_name": "x"}  # fmt: skip
    if scale is not None:
        params["ranking.out_of_network_scale"] = scale
    metrics = {} if value is None else {"inn_share": value + seed, "feed_topic_entropy": 2.0}
    tags = {"prism.seed": str(seed), "prism.sweep_id": "s1", "prism.kind": "simulation"}
    return RunRecord(run_id, status, start, tags, params, metrics)


def test_selection_excludes_unfinished_runs_and_finds_the_varying_params() -> None:
    records = [record(f"x{scale}-{seed}", seed, "x_algo", scale) for scale in ("0.5", "1.0") for seed in range(3)]
    records += [record(f"r-{seed}", seed, "random", None) for seed in range(3)]
    records += [record("failed", 9, "random", None, status="FAILED", value=None),
                record("running", 8, "random", None, status="RUNNING"),
                record("empty", 7, "random", None, value=None)]  # fmt: skip
    selection = select_runs(runs_to_table(records))
    assert selection.condition_keys == ("ranking.mode", "ranking.out_of_network_scale")
    assert selection.seed_tracking_keys == ("corpus.seed",)
    assert selection.conditions == ("mode=random", "mode=x_algo, out_of_network_scale=0.5",
                                    "mode=x_algo, out_of_network_scale=1.0")  # fmt: skip
    reasons = dict(zip(selection.excluded["run_id"], selection.excluded["reason"], strict=True))
    assert reasons == {"failed": "status FAILED", "running": "status RUNNING (incomplete)",
                       "empty": "incomplete: none of the compared metrics logged"}  # fmt: skip
    assert selection.metrics == ("feed_topic_entropy", "inn_share")
    assert len(selection.tidy) == 9 and selection.tidy["seed"].dtype == np.int64


def test_duplicate_condition_and_seed_keeps_the_newest_run() -> None:
    records = [record(f"{mode}-{seed}", seed, mode, None, start=10) for mode in ("a", "b") for seed in range(3)]
    records.append(record("a-0-rerun", 0, "a", None, start=20, value=5.0))
    selection = select_runs(runs_to_table(records))
    assert "a-0-rerun" in set(selection.tidy["run_id"]) and "a-0" not in set(selection.tidy["run_id"])
    dropped = selection.excluded.set_index("run_id").loc["a-0", "reason"]
    assert dropped == "duplicate of newer run a-0-rerun (same condition and seed)"
    assert any("newest run of each is kept" in warning for warning in selection.warnings)


def test_one_condition_is_an_error() -> None:
    records = [record(f"r-{seed}", seed, "random", None) for seed in range(3)]
    with pytest.raises(AnalysisInputError, match="nothing to compare"):
        select_runs(runs_to_table(records))


def test_explicit_by_and_metrics_are_validated() -> None:
    records = [record(f"{mode}-{seed}", seed, mode, None) for mode in ("a", "b") for seed in range(3)]
    table = runs_to_table(records)
    assert select_runs(table, by=["mode"], metrics=["inn_share"]).metrics == ("inn_share",)
    with pytest.raises(AnalysisInputError, match="by: 'nope' is not a param"):
        select_runs(table, by=["nope"])
    with pytest.raises(AnalysisInputError, match="metrics: gini not logged by any selected run; allowed values"):
        select_runs(table, metrics=["gini"])


def test_short_names_and_key_resolution() -> None:
    keys = ["ranking.mode", "rag.retrieval.mode", "ranking.out_of_network_scale"]
    assert short_names(keys) == {"ranking.mode": "ranking.mode", "rag.retrieval.mode": "retrieval.mode",
                                 "ranking.out_of_network_scale": "out_of_network_scale"}  # fmt: skip
    assert resolve_param_keys(["out_of_network_scale"], keys) == ["ranking.out_of_network_scale"]
    with pytest.raises(ValueError, match="by: 'mode' is ambiguous; allowed values: ranking.mode, rag.retrieval.mode"):
        resolve_param_keys(["mode"], keys)


def test_sweep_filter_rejects_quotes() -> None:
    assert simulation_filter("s1") == "tags.`prism.kind` = 'simulation' AND tags.`prism.sweep_id` = 's1'"
    with pytest.raises(AnalysisInputError, match="sweep-id"):
        simulation_filter("x' OR '1")


# --- trends, report -------------------------------------------------------------------------------------------


def oon_table() -> pd.DataFrame:
    """x_algo at three OON scales (metric falls with the scale in every seed) plus a random baseline."""
    frames = []
    for scale, shift in (("0.25", 0.6), ("0.5", 0.3), ("1.0", 0.0)):
        frame = run_table({f"mode=x_algo, out_of_network_scale={scale}": shift}, range(8))
        frames.append(frame.assign(**{"ranking.mode": "x_algo", "ranking.out_of_network_scale": scale}))
    baseline = run_table({"mode=random": 0.1}, range(8)).assign(**{"ranking.mode": "random"})
    frames.append(baseline.assign(**{"ranking.out_of_network_scale": None}))
    return pd.concat(frames, ignore_index=True)


def test_trend_is_tested_within_the_mode_over_numeric_levels() -> None:
    tidy = oon_table()
    conditions = list(dict.fromkeys(tidy["condition"]))
    design = detect_design(tidy, conditions)
    keys = ["ranking.mode", "ranking.out_of_network_scale"]
    comparison = compare_conditions(tidy, conditions, ["m"], design, FAST, keys, short_names(keys))
    trend = comparison.trends.iloc[0]
    assert len(comparison.trends) == 1 and trend["stratum"] == "mode=x_algo" and trend["n"] == 24
    x_algo = tidy.loc[tidy["ranking.mode"] == "x_algo"]
    levels = x_algo["ranking.out_of_network_scale"].astype(float)
    assert trend["p_value"] == stats.spearmanr(levels, x_algo["m"]).pvalue
    blocks = x_algo.pivot(index="seed", columns="ranking.out_of_network_scale", values="m").to_numpy()
    assert trend["page_p"] == pytest.approx(2 * stats.page_trend_test(blocks[:, ::-1]).pvalue)
    assert trend["page_p"] < 1e-3


def test_report_files_are_written_from_a_synthetic_table(tmp_path: Path) -> None:
    tidy = run_table({"a": 0.0, "b": 1.0, "c": 1.05}, range(10)).assign(m2=lambda t: t["m"] * 2)
    conditions = ["a", "b", "c"]
    comparison = compare_conditions(tidy, conditions, ["m", "m2"], detect_design(tidy, conditions), FAST)
    pooled = pd.DataFrame({"condition": ["a", "a", "b", "c"], "run_id": ["a-0", "a-1", "b-0", "c-0"],
                           "size": [1.0, 3.0, 2.0, 8.0]})  # fmt: skip
    from prism_experiments.analysis.cascades import compare_cascade_sizes

    cascades = CascadeComparison(pooled, compare_cascade_sizes(pooled, conditions))
    excluded = pd.DataFrame({"run_id": ["f"], "status": ["FAILED"], "seed": [3.0], "condition": [None],
                             "reason": ["status FAILED"]})  # fmt: skip
    provenance = ReportProvenance("demo", datetime(2026, 1, 2, 3, 4, 5), "sqlite:///x.db", None, ("s1",), ("k",), (),
                            excluded, ("a warning",), None)  # fmt: skip
    files = write_report(tmp_path / "out", provenance, comparison, tidy, cascades)

    results = pd.read_csv(files.results)
    assert len(results) == 2 * 3 and set(results["metric"]) == {"m", "m2"}
    assert results["p_value"].tolist() == pytest.approx(comparison.pairwise["p_value"].tolist())
    for name in ("m.png", "m2.png", "cascade_size_ccdf.png"):
        assert (tmp_path / "out" / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = files.report.read_text()
    assert "paired (common random numbers)" in text and "Friedman" in text and "a warning" in text
    significant = results.loc[results["significant"]]
    assert set(zip(significant["condition_a"], significant["condition_b"], strict=True)) >= {("a", "b"), ("a", "c")}
    line = reading(comparison.pairwise.iloc[0], 0.95)
    assert line in text
    assert line.startswith("m: a is lower than b by ") and "Wilcoxon p_holm = " in line and ", r = -1.00)" in line


def test_cli_rejects_a_bad_alpha_with_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--experiment", "x", "--alpha", "1.5"]) == 2
    assert "alpha: Input should be less than 1" in capsys.readouterr().err


def test_pairwise_rows_cover_every_pair_once() -> None:
    comparison = compare(run_table({"a": 0.0, "b": 0.1, "c": 0.2, "d": 0.3}, range(6)))
    pairs = list(zip(comparison.pairwise["condition_a"], comparison.pairwise["condition_b"], strict=True))
    assert pairs == list(combinations(["a", "b", "c", "d"], 2))


def test_compared_runs_tag_is_cut_at_a_whole_id_when_too_long() -> None:
    from prism_experiments.analysis.analysis_run import compared_runs_tag
    from prism_experiments.tracking.limits import MAX_TAG_LENGTH

    ids = [f"{i:032x}" for i in range(300)]
    assert compared_runs_tag(ids[:3]) == ",".join(ids[:3])
    tag = compared_runs_tag(ids)
    assert len(tag) <= MAX_TAG_LENGTH and tag.endswith("...(300 runs; full list in compared_runs.txt)")
    assert all(len(part) == 32 for part in tag.split(",")[:-1])
