"""The comparison itself: per metric, condition means with CIs, omnibus, pairwise tests, Holm/BH, trends, power.

Pure: a tidy runs table in, tables of results out. Which tests run is decided by the
`Design` (paired: Friedman + Wilcoxon + rank-biserial; unpaired: Kruskal-Wallis +
Mann-Whitney + Cliff's delta).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from prism_experiments.analysis.conditions import numeric_levels
from prism_experiments.analysis.design import Design
from prism_experiments.analysis.power import DEFAULT_REPLICATES, POWER_COLUMNS, power_rows
from prism_experiments.analysis.stats import (
    ConfidenceInterval,
    TestResult,
    adjust_pvalues,
    bootstrap_difference_ci,
    bootstrap_mean_ci,
    cliffs_delta,
    friedman_test,
    kruskal_test,
    mann_whitney_test,
    matched_pairs_rank_biserial,
    page_trend,
    rng_for,
    spearman_trend,
    wilcoxon_test,
)
from prism_experiments.tracking.labels import condition_labels

SUMMARY_COLUMNS: tuple[str, ...] = ("metric", "condition", "n", "mean", "sd", "ci_low", "ci_high", "ci_method")
PAIRWISE_COLUMNS: tuple[str, ...] = (
    "metric", "condition_a", "condition_b", "design", "test", "n_a", "n_b", "n_pairs",
    "mean_a", "mean_b", "difference", "diff_ci_low", "diff_ci_high", "ci_method",
    "statistic", "p_value", "p_holm", "effect_size", "effect_size_name", "significant", "note",
)  # fmt: skip
OMNIBUS_COLUMNS: tuple[str, ...] = ("metric", "test", "statistic", "p_value", "n", "note")
TREND_COLUMNS: tuple[str, ...] = (
    "metric", "factor", "stratum", "n", "n_levels", "rho", "p_value", "page_l", "page_p", "page_n_seeds", "note",
)  # fmt: skip
MIN_TREND_LEVELS = 3


class ComparisonSettings(BaseModel):
    """Significance level, multiple-testing family, bootstrap (BCa, percentile fallback; Efron 1987) and power."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    n_resamples: int = Field(default=9999, ge=100)
    #: seed of every bootstrap interval and of the power simulation
    bootstrap_seed: int = Field(default=0, ge=0)
    #: holm: family-wise error (Holm 1979); bh: false discovery rate (Benjamini & Hochberg 1995)
    correction: Literal["holm", "bh"] = "holm"
    #: report: every pairwise test of the report (the default: P(any false finding) <= alpha for the whole report);
    #: metric: one family per metric (its pairwise tests), about alpha false findings per metric under no effect
    family: Literal["metric", "report"] = "report"
    #: replicates of the power simulation per evaluated size or effect; 0 keeps only the normal figures
    power_replicates: int = Field(default=DEFAULT_REPLICATES, ge=0)
    #: effect for "seeds needed", in sd units (Cohen's d_z paired, d unpaired); None: the observed difference
    effect: float | None = Field(default=None, gt=0.0)

    @property
    def adjusted_column(self) -> str:
        """`p_holm` or `p_bh`: the results.csv column with the adjusted p-value."""
        return f"p_{self.correction}"


def pairwise_columns(settings: ComparisonSettings) -> list[str]:
    """PAIRWISE_COLUMNS with the adjusted p column named after the correction."""
    return [settings.adjusted_column if column == "p_holm" else column for column in PAIRWISE_COLUMNS]


@dataclass(frozen=True)
class Comparison:
    """Result tables (columns: SUMMARY/PAIRWISE/OMNIBUS/TREND/POWER_COLUMNS) and the warnings met on the way."""

    design: Design
    settings: ComparisonSettings
    conditions: tuple[str, ...]
    metrics: tuple[str, ...]
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    omnibus: pd.DataFrame
    trends: pd.DataFrame
    warnings: tuple[str, ...]
    power: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(POWER_COLUMNS)))


def compare_conditions(
    tidy: pd.DataFrame,
    conditions: Sequence[str],
    metrics: Sequence[str],
    design: Design,
    settings: ComparisonSettings,
    factor_keys: Sequence[str] = (),
    names: Mapping[str, str] | None = None,
) -> Comparison:
    """Every metric of `tidy` (columns condition, seed, <metrics>, <factor_keys>) compared across conditions."""
    if len(conditions) < 2:
        raise ValueError("conditions: need at least two conditions to compare")
    summaries, pairwise, omnibus, warnings = [], [], [], []
    for metric in metrics:
        values = tidy[["condition", "seed", metric]].rename(columns={metric: "value"})
        warnings.extend(metric_warnings(values, metric))
        summaries.append(condition_summary(values, conditions, metric, settings))
        if design.paired:
            rows, overall = paired_comparison(values, conditions, metric, settings)
        else:
            rows, overall = unpaired_comparison(values, conditions, metric, settings)
        rows["design"] = "paired" if design.paired else "unpaired"
        pairwise.append(rows)
        omnibus.append(overall)
    pairwise = adjust_families(pairwise, settings)
    family_sizes = [int(rows["p_value"].notna().sum()) for rows in pairwise]
    if settings.family == "report":
        family_sizes = [sum(family_sizes)] * len(family_sizes)
    # per metric the family is the pairs (as before); over the report every test counts
    report_size = family_sizes[0] if settings.family == "report" and family_sizes else None
    warnings.extend(power_warnings(design, conditions, settings.alpha, settings.correction, report_size))
    trends = trend_tests(tidy, metrics, factor_keys, names or {key: key for key in factor_keys}, design.paired)
    power = [
        power_rows(tidy[["condition", "seed", metric]].rename(columns={metric: "value"}), conditions, metric,
                   design.paired, settings.alpha / max(size, 1), settings.bootstrap_seed,
                   settings.power_replicates, settings.effect)
        for metric, size in zip(metrics, family_sizes, strict=True)
    ]  # fmt: skip
    return Comparison(
        design=design,
        settings=settings,
        conditions=tuple(conditions),
        metrics=tuple(metrics),
        summary=pd.concat(summaries, ignore_index=True).reindex(columns=list(SUMMARY_COLUMNS)),
        pairwise=pd.concat(pairwise, ignore_index=True).reindex(columns=pairwise_columns(settings)),
        omnibus=pd.DataFrame(omnibus).reindex(columns=list(OMNIBUS_COLUMNS)),
        trends=trends,
        warnings=tuple(warnings),
        power=pd.concat(power, ignore_index=True).reindex(columns=list(POWER_COLUMNS)),
    )


def adjust_families(tables: Sequence[pd.DataFrame], settings: ComparisonSettings) -> list[pd.DataFrame]:
    """Each metric's pairwise table with its adjusted p and `significant`, adjusted per metric or over them all.

    NaN p-values (pairs without a test) are not counted in any family.
    """
    column = settings.adjusted_column
    tables = [table.copy() for table in tables]
    if settings.family == "metric":
        for table in tables:
            table[column] = adjust_pvalues(table["p_value"].to_numpy(), settings.correction)
    else:
        pooled = (
            np.concatenate([table["p_value"].to_numpy(dtype=float) for table in tables]) if tables else np.array([])
        )
        adjusted = adjust_pvalues(pooled, settings.correction)
        ends = np.cumsum([len(table) for table in tables])
        for table, part in zip(tables, np.split(adjusted, ends[:-1]), strict=True):
            table[column] = part
    for table in tables:
        table["significant"] = table[column] < settings.alpha
    return tables


def smallest_holm_p(design: Design, conditions: Sequence[str], correction: str = "holm",
                    family_size: int | None = None) -> float:  # fmt: skip
    """Smallest adjusted p any pair can reach: m x (Holm) or 1 x (BH, all m tests at the floor) the smallest p.

    The smallest exact two-sided p: Wilcoxon on n pairs 2 / 2^n; Mann-Whitney on groups of n_a
    and n_b 2 / C(n_a + n_b, n_a) (exact null distributions without ties, as scipy's exact
    methods use). m is `family_size`, by default the number of pairs.
    """
    m = len(conditions) * (len(conditions) - 1) // 2 if family_size is None else family_size
    m = m if correction == "holm" else 1
    if design.paired:
        smallest = 2.0 / 2.0 ** len(design.seeds)
    else:
        sizes = sorted(design.group_sizes[c] for c in conditions)
        smallest = 2.0 / math.comb(sizes[0] + sizes[1], sizes[0]) if sizes[0] > 0 else 1.0
    return min(1.0, m * smallest)


def power_warnings(design: Design, conditions: Sequence[str], alpha: float, correction: str = "holm",
                   family_size: int | None = None) -> list[str]:  # fmt: skip
    """Say so when no pair could reach significance whatever the data, because there are too few runs."""
    floor = smallest_holm_p(design, conditions, correction, family_size or None)
    if floor < alpha:
        return []
    name = "Holm" if correction == "holm" else "BH"
    return [
        f"too few runs for significance: the smallest {name}-adjusted p any pair can reach is {floor:.3g} "
        f"(>= alpha {alpha:g}); run more seeds"
    ]


def metric_warnings(values: pd.DataFrame, metric: str) -> list[str]:
    """Missing values and constant metrics are reported, never silently absorbed."""
    warnings = []
    missing = values.loc[values["value"].isna()]
    if len(missing):
        where = "; ".join(
            f"{condition} seed(s) {', '.join(map(str, group['seed'].tolist()))}"
            for condition, group in missing.groupby("condition", sort=False)
        )
        warnings.append(f"{metric}: {len(missing)} run(s) without a value are left out ({where})")
    present = values["value"].dropna()
    if len(present) and (present == present.iloc[0]).all():
        warnings.append(f"{metric}: constant ({present.iloc[0]:g}) across all runs; nothing can differ")
    return warnings


def condition_summary(
    values: pd.DataFrame, conditions: Sequence[str], metric: str, settings: ComparisonSettings
) -> pd.DataFrame:
    """Per condition: n, mean, sd and the bootstrap CI of the mean."""
    rows = []
    for condition in conditions:
        sample = values.loc[values["condition"] == condition, "value"].dropna().to_numpy(dtype=float)
        ci = bootstrap_mean_ci(
            sample,
            rng_for(settings.bootstrap_seed, metric, condition),
            settings.confidence,
            settings.n_resamples,
        )
        rows.append(
            {
                "metric": metric,
                "condition": condition,
                "n": int(sample.size),
                "mean": ci.estimate,
                "sd": float(np.std(sample, ddof=1)) if sample.size > 1 else np.nan,
                "ci_low": ci.low,
                "ci_high": ci.high,
                "ci_method": ci.method,
            }
        )
    return pd.DataFrame(rows)


def _pair_row(
    metric: str,
    a: str,
    b: str,
    x: np.ndarray,
    y: np.ndarray,
    ci: ConfidenceInterval,
    effect: float,
    effect_name: str,
    result: TestResult,
    n_pairs: int | None,
) -> dict[str, object]:
    """One row of the pairwise table (paired when `n_pairs` is given)."""
    return {
        "metric": metric, "condition_a": a, "condition_b": b,
        "n_a": int(x.size), "n_b": int(y.size), "n_pairs": np.nan if n_pairs is None else n_pairs,
        "mean_a": float(x.mean()) if x.size else np.nan, "mean_b": float(y.mean()) if y.size else np.nan,
        "difference": ci.estimate, "diff_ci_low": ci.low, "diff_ci_high": ci.high, "ci_method": ci.method,
        "effect_size": effect, "effect_size_name": effect_name,
        **_test_columns(result),
    }  # fmt: skip


def _pair_as_omnibus(metric: str, only: pd.Series, test: str, n: int) -> dict[str, object]:
    """With exactly two conditions the omnibus is the one pairwise test."""
    return {
        "metric": metric,
        "test": f"{test} (2 conditions: the omnibus is the pairwise test)",
        "statistic": only["statistic"],
        "p_value": only["p_value"],
        "n": n,
        "note": only["note"],
    }


def _test_columns(result: TestResult) -> dict[str, object]:
    return {"test": result.test, "statistic": result.statistic, "p_value": result.pvalue, "note": result.note}


def paired_comparison(
    values: pd.DataFrame, conditions: Sequence[str], metric: str, settings: ComparisonSettings
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Wilcoxon + rank-biserial + paired bootstrap per pair; Friedman over complete seeds (>= 3 conditions)."""
    wide = values.pivot(index="seed", columns="condition", values="value").reindex(columns=list(conditions))
    rows = []
    for a, b in combinations(conditions, 2):
        pair = wide[[a, b]].dropna()
        x, y = pair[a].to_numpy(dtype=float), pair[b].to_numpy(dtype=float)
        result = wilcoxon_test(x, y)
        ci = bootstrap_difference_ci(
            x, y, rng_for(settings.bootstrap_seed, metric, a, b), True, settings.confidence, settings.n_resamples
        )
        effect = matched_pairs_rank_biserial(x, y) if x.size else np.nan
        rows.append(_pair_row(metric, a, b, x, y, ci, effect, "rank-biserial r", result, n_pairs=len(pair)))
    table = pd.DataFrame(rows)
    if len(conditions) == 2:
        only = table.iloc[0]
        return table, _pair_as_omnibus(metric, only, "Wilcoxon signed-rank", int(only["n_pairs"]))
    complete = wide.dropna()
    result = friedman_test(complete.to_numpy(dtype=float))
    note = result.note
    if len(complete) < len(wide):
        note = "; ".join(filter(None, [note, f"{len(wide) - len(complete)} seed(s) with a missing value left out"]))
    return table, {"metric": metric, **_test_columns(result), "n": result.n, "note": note}


def unpaired_comparison(
    values: pd.DataFrame, conditions: Sequence[str], metric: str, settings: ComparisonSettings
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Mann-Whitney + Cliff's delta + two-sample bootstrap per pair; Kruskal-Wallis (>= 3 conditions)."""
    present = values.dropna(subset=["value"])
    groups = {c: present.loc[present["condition"] == c, "value"].to_numpy(dtype=float) for c in conditions}
    rows = []
    for a, b in combinations(conditions, 2):
        x, y = groups[a], groups[b]
        result = mann_whitney_test(x, y)
        ci = bootstrap_difference_ci(
            x, y, rng_for(settings.bootstrap_seed, metric, a, b), False, settings.confidence, settings.n_resamples
        )
        effect = cliffs_delta(x, y) if x.size and y.size else np.nan
        rows.append(_pair_row(metric, a, b, x, y, ci, effect, "Cliff's delta", result, n_pairs=None))
    table = pd.DataFrame(rows)
    if len(conditions) == 2:
        only = table.iloc[0]
        overall = _pair_as_omnibus(metric, only, "Mann-Whitney U", int(only["n_a"] + only["n_b"]))
        return table, overall
    result = kruskal_test(list(groups.values()))
    return table, {"metric": metric, **_test_columns(result), "n": result.n}


def trend_tests(
    tidy: pd.DataFrame,
    metrics: Sequence[str],
    factor_keys: Sequence[str],
    names: Mapping[str, str],
    paired: bool = False,
) -> pd.DataFrame:
    """Spearman trend of each metric over each numeric factor with >= 3 levels, within each stratum.

    A stratum is one combination of the other factors (e.g. `mode=x_algo`), so the trend over
    the OON scale is never confounded with a change of ranking mode. Spearman pools runs and
    ignores seeds; in a paired design Page's L test on the seeds complete across the levels
    is added, which removes the seed-to-seed variation common random numbers share.
    """
    rows = []
    for factor in factor_keys:
        levels = numeric_levels(tidy[factor])
        if levels is None:
            continue
        others = [key for key in factor_keys if key != factor]
        strata = condition_labels(tidy, others, names)  # SINGLE_CONDITION_LABEL for every run when no others
        usable = levels.notna()
        for stratum, index in tidy.loc[usable].groupby(strata[usable], sort=True).groups.items():
            stratum_levels = levels.loc[index]
            if stratum_levels.nunique() < MIN_TREND_LEVELS:
                continue
            for metric in metrics:
                value = tidy.loc[index, metric]
                keep = value.notna()
                result = spearman_trend(stratum_levels[keep].to_numpy(), value[keep].to_numpy(dtype=float))
                row: dict[str, object] = {
                    "metric": metric, "factor": factor, "stratum": str(stratum), "n": result.n,
                    "n_levels": result.n_levels, "rho": result.rho, "p_value": result.pvalue, "note": result.note,
                    "page_l": np.nan, "page_p": np.nan, "page_n_seeds": np.nan,
                }  # fmt: skip
                if paired:
                    blocks = (
                        pd.DataFrame({"seed": tidy.loc[index, "seed"], "level": stratum_levels, "value": value})
                        .pivot(index="seed", columns="level", values="value")
                        .sort_index(axis=1)
                        .dropna()
                    )
                    page = page_trend(blocks.to_numpy(dtype=float))
                    row.update({"page_l": page.statistic, "page_p": page.pvalue, "page_n_seeds": page.n})
                rows.append(row)
    return pd.DataFrame(rows, columns=list(TREND_COLUMNS))
