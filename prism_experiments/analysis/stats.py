"""Pure statistical functions on plain arrays: rank tests, effect sizes, Holm and BH, bootstrap CIs.

Every p-value comes from `scipy.stats` called with its defaults unless stated; the
functions here add the edge cases a sweep produces (constant metrics, all-zero paired
differences, single runs) and say in `note` what they did about them.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from prism_experiments.metrics.cascades import ccdf  # noqa: F401  (re-exported: part of this module's API)

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class TestResult:
    """One hypothesis test: name, statistic, two-sided p-value, sample size, and why if special-cased."""

    test: str
    statistic: float
    pvalue: float
    n: int
    note: str = ""


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate and its bootstrap interval; `method` is BCa, percentile, or why there is none."""

    estimate: float
    low: float
    high: float
    method: str


@dataclass(frozen=True)
class TrendResult:
    """Spearman rank correlation of a metric with the levels of a numeric factor."""

    rho: float
    pvalue: float
    n: int
    n_levels: int
    note: str = ""


def finite_array(values: ArrayLike, name: str) -> FloatArray:
    """`values` as a 1-D float array; ValueError naming `name` if it holds NaN or inf."""
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: contains NaN or inf; drop incomplete runs or pairs first")
    return array


def holm_adjust(pvalues: ArrayLike) -> FloatArray:
    """Holm (1979) step-down adjusted p-values: monotone, capped at 1; NaN stays NaN and is not counted."""
    p = np.asarray(pvalues, dtype=float).ravel()
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if m == 0:
        return adjusted
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def bh_adjust(pvalues: ArrayLike) -> FloatArray:
    """Benjamini-Hochberg (1995) adjusted p-values (`scipy.stats.false_discovery_control`); NaN stays NaN."""
    p = np.asarray(pvalues, dtype=float).ravel()
    adjusted = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    if valid.any():
        adjusted[valid] = stats.false_discovery_control(p[valid], method="bh")
    return adjusted


#: --correction: the adjustment of the pairwise p-values within each family of tests
CORRECTIONS = {"holm": holm_adjust, "bh": bh_adjust}


def adjust_pvalues(pvalues: ArrayLike, correction: str) -> FloatArray:
    """Holm (1979, family-wise error) or Benjamini-Hochberg (1995, false discovery rate) adjusted p-values."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction: {correction!r} is not one of {', '.join(CORRECTIONS)}")
    return CORRECTIONS[correction](pvalues)


def matched_pairs_rank_biserial(x: ArrayLike, y: ArrayLike) -> float:
    """Kerby (2014) r = (R+ - R-) / (R+ + R-) over the ranked |x - y|, zero differences dropped.

    Zeros are dropped as in scipy's default Wilcoxon (`zero_method="wilcox"`); when every
    difference is zero no pair favours either side and r is 0.
    """
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"y: paired samples need equal lengths, got {a.size} and {b.size}")
    d = a - b
    d = d[d != 0]
    if d.size == 0:
        return 0.0
    ranks = stats.rankdata(np.abs(d))
    return float((ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum())


def cliffs_delta(x: ArrayLike, y: ArrayLike) -> float:
    """Cliff (1993) delta = P(X > Y) - P(X < Y) over all n_x * n_y pairs."""
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.size == 0 or b.size == 0:
        raise ValueError("x, y: Cliff's delta needs at least one value in each sample")
    b_sorted = np.sort(b)
    greater = np.searchsorted(b_sorted, a, side="left").sum()
    less = (b.size - np.searchsorted(b_sorted, a, side="right")).sum()
    return float((greater - less) / (a.size * b.size))


#: the alternatives of scipy's rank tests: x - y differs from 0, is above it, is below it
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")


def wilcoxon_test(x: ArrayLike, y: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """Wilcoxon signed-rank test of x - y (scipy; `alternative` as scipy's); all-zero differences give p = 1."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative: {alternative!r} is not one of {', '.join(ALTERNATIVES)}")
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"y: paired samples need equal lengths, got {a.size} and {b.size}")
    if a.size == 0:
        return TestResult("Wilcoxon", np.nan, np.nan, 0, "no complete pairs")
    if np.all(a == b):
        return TestResult("Wilcoxon", 0.0, 1.0, int(a.size), "all paired differences are zero: p set to 1")
    result = stats.wilcoxon(a, b, alternative=alternative)
    return TestResult("Wilcoxon", float(result.statistic), float(result.pvalue), int(a.size))


def mann_whitney_test(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Two-sided Mann-Whitney U test (scipy, method auto); the statistic is U of `x`."""
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.size == 0 or b.size == 0:
        return TestResult("Mann-Whitney U", np.nan, np.nan, int(a.size + b.size), "an empty sample")
    result = stats.mannwhitneyu(a, b, alternative="two-sided")
    note = "all values identical" if np.all(np.concatenate([a, b]) == a[0]) else ""
    return TestResult("Mann-Whitney U", float(result.statistic), float(result.pvalue), int(a.size + b.size), note)


def friedman_test(blocks: ArrayLike) -> TestResult:
    """Friedman omnibus test; rows are blocks (seeds), columns the >= 3 conditions.

    When every block is constant the statistic is undefined; p is set to 1 and said so.
    """
    table = np.asarray(blocks, dtype=float)
    if table.ndim != 2 or table.shape[1] < 3:
        raise ValueError("blocks: Friedman needs a 2-D array with at least 3 condition columns")
    finite_array(table, "blocks")
    n = int(table.shape[0])
    if n == 0:
        return TestResult("Friedman", np.nan, np.nan, 0, "no complete blocks")
    if np.all(table == table[:, :1]):
        return TestResult("Friedman", 0.0, 1.0, n, "every seed has the same value in all conditions: p set to 1")
    result = stats.friedmanchisquare(*table.T)
    return TestResult("Friedman", float(result.statistic), float(result.pvalue), n)


def kruskal_test(groups: Sequence[ArrayLike]) -> TestResult:
    """Kruskal-Wallis H omnibus test over independent groups; all values identical gives p = 1."""
    arrays = [finite_array(group, f"groups[{i}]") for i, group in enumerate(groups)]
    arrays = [a for a in arrays if a.size > 0]
    n = int(sum(a.size for a in arrays))
    if len(arrays) < 2:
        return TestResult("Kruskal-Wallis", np.nan, np.nan, n, "fewer than two non-empty groups")
    pooled = np.concatenate(arrays)
    if np.all(pooled == pooled[0]):
        return TestResult("Kruskal-Wallis", 0.0, 1.0, n, "all values identical: p set to 1")
    result = stats.kruskal(*arrays)
    return TestResult("Kruskal-Wallis", float(result.statistic), float(result.pvalue), n)


def spearman_trend(levels: ArrayLike, values: ArrayLike) -> TrendResult:
    """Spearman rank correlation of `values` with numeric factor `levels` (scipy.stats.spearmanr)."""
    x, y = finite_array(levels, "levels"), finite_array(values, "values")
    if x.shape != y.shape:
        raise ValueError(f"values: need one value per level, got {y.size} values for {x.size} levels")
    n_levels = int(np.unique(x).size)
    if y.size < 3 or np.all(y == y[0]) or n_levels < 2:
        note = "metric constant" if y.size >= 3 and np.all(y == y[0]) else "too few runs or levels"
        return TrendResult(np.nan, np.nan, int(y.size), n_levels, note)
    result = stats.spearmanr(x, y)
    return TrendResult(float(result.statistic), float(result.pvalue), int(y.size), n_levels)


def page_trend(blocks: ArrayLike) -> TestResult:
    """Two-sided Page (1963) L test for a monotone trend across ordered conditions within blocks (seeds).

    Columns are the factor levels in ascending order; p = min(1, 2 * min(p_increasing,
    p_decreasing)) from `scipy.stats.page_trend_test` run on both column orders.
    """
    table = np.asarray(blocks, dtype=float)
    if table.ndim != 2 or table.shape[1] < 3:
        raise ValueError("blocks: Page's test needs a 2-D array with at least 3 level columns")
    finite_array(table, "blocks")
    if table.shape[0] < 2:
        return TestResult("Page L", np.nan, np.nan, int(table.shape[0]), "fewer than 2 complete seeds")
    increasing = stats.page_trend_test(table)
    decreasing = stats.page_trend_test(table[:, ::-1])
    pvalue = min(1.0, 2.0 * min(float(increasing.pvalue), float(decreasing.pvalue)))
    return TestResult("Page L", float(increasing.statistic), pvalue, int(table.shape[0]))


def ks_test(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Two-sample two-sided Kolmogorov-Smirnov test (scipy.stats.ks_2samp, method auto)."""
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.size == 0 or b.size == 0:
        return TestResult("Kolmogorov-Smirnov", np.nan, np.nan, int(a.size + b.size), "an empty sample")
    result = stats.ks_2samp(a, b)
    return TestResult("Kolmogorov-Smirnov", float(result.statistic), float(result.pvalue), int(a.size + b.size))


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A Generator fixed by `seed` and string keys, so one CI never depends on which others were computed."""
    return np.random.default_rng([seed, *(zlib.crc32(key.encode()) for key in keys)])


def _mean_difference(x: FloatArray, y: FloatArray, axis: int = -1) -> FloatArray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _bootstrap(
    data: tuple[FloatArray, ...],
    statistic: object,
    rng: np.random.Generator,
    confidence: float,
    n_resamples: int,
    paired: bool = False,
) -> tuple[float, float, str]:
    """BCa interval (Efron 1987); percentile when BCa is undefined (degenerate or constant resamples)."""
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                data, statistic, n_resamples=n_resamples, confidence_level=confidence, method=method, rng=rng,
                paired=paired,
            )  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if np.isfinite(low) and np.isfinite(high):
            return low, high, method
    return np.nan, np.nan, "undefined"


def bootstrap_mean_ci(
    values: ArrayLike, rng: np.random.Generator, confidence: float = 0.95, n_resamples: int = 9999
) -> ConfidenceInterval:
    """Mean and its bootstrap CI (scipy.stats.bootstrap); a constant sample gives the point interval."""
    x = finite_array(values, "values")
    if x.size == 0:
        return ConfidenceInterval(np.nan, np.nan, np.nan, "no values")
    estimate = float(np.mean(x))
    if x.size < 2:
        return ConfidenceInterval(estimate, np.nan, np.nan, "n<2")
    if np.all(x == x[0]):
        return ConfidenceInterval(estimate, estimate, estimate, "constant")
    low, high, method = _bootstrap((x,), np.mean, rng, confidence, n_resamples)
    return ConfidenceInterval(estimate, low, high, method)


def bootstrap_difference_ci(
    x: ArrayLike,
    y: ArrayLike,
    rng: np.random.Generator,
    paired: bool,
    confidence: float = 0.95,
    n_resamples: int = 9999,
) -> ConfidenceInterval:
    """mean(x) - mean(y) and its bootstrap CI: pairs resampled together if `paired`, else each sample alone."""
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if paired:
        if a.shape != b.shape:
            raise ValueError(f"y: paired samples need equal lengths, got {a.size} and {b.size}")
        return bootstrap_mean_ci(a - b, rng, confidence, n_resamples)
    if a.size == 0 or b.size == 0:
        return ConfidenceInterval(np.nan, np.nan, np.nan, "no values")
    estimate = float(a.mean() - b.mean())
    if a.size < 2 or b.size < 2:
        return ConfidenceInterval(estimate, np.nan, np.nan, "n<2")
    if np.all(a == a[0]) and np.all(b == b[0]):
        return ConfidenceInterval(estimate, estimate, estimate, "constant")
    low, high, method = _bootstrap((a, b), _mean_difference, rng, confidence, n_resamples)
    return ConfidenceInterval(estimate, low, high, method)


def _ratio_of_means(x: FloatArray, y: FloatArray, axis: int = -1) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mean(x, axis=axis) / np.mean(y, axis=axis) - 1.0


def bootstrap_ratio_ci(
    x: ArrayLike, y: ArrayLike, rng: np.random.Generator, confidence: float = 0.95, n_resamples: int = 9999
) -> ConfidenceInterval:
    """mean(x) / mean(y) - 1 of paired samples and its bootstrap CI (pairs resampled together: scipy's `paired`).

    The ratio of totals minus one, as Huszár et al. (PNAS 2022) define the amplification ratio; NaN when mean(y)
    is 0 (nothing to amplify).
    """
    a, b = finite_array(x, "x"), finite_array(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"y: paired samples need equal lengths, got {a.size} and {b.size}")
    if a.size == 0 or b.mean() == 0:
        return ConfidenceInterval(np.nan, np.nan, np.nan, "no values" if a.size == 0 else "control is 0")
    estimate = float(_ratio_of_means(a, b))
    if a.size < 2:
        return ConfidenceInterval(estimate, np.nan, np.nan, "n<2")
    if np.all(a == a[0]) and np.all(b == b[0]):
        return ConfidenceInterval(estimate, estimate, estimate, "constant")
    low, high, method = _bootstrap((a, b), _ratio_of_means, rng, confidence, n_resamples, paired=True)
    return ConfidenceInterval(estimate, low, high, method)
