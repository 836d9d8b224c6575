"""Power and sample size of the pairwise tests: normal approximation and simulation from the pilot runs.

Per metric and pair of conditions: the minimum detectable effect (MDE) at the seeds run so far
and the seeds needed to detect an effect with power 0.8 and 0.95. Two figures each:

- **normal approximation** (Cohen 1988, ch. 2; a z test on the mean difference):
  n = ((z_{1-a/2} + z_{power}) * sd / delta)^2 and MDE = (z_{1-a/2} + z_{power}) * sd / sqrt(n),
  sd being the sd of the per-seed differences (paired) or sqrt(sd_a^2 + sd_b^2) with n per group
  (unpaired). `rank_test_seeds` divides by the Wilcoxon / Mann-Whitney asymptotic relative
  efficiency against the t test under normality, 3/pi = 0.955 (Lehmann 2006, ch. 2 and 4).
- **simulation** (bootstrap power of the Wilcoxon test, Collings & Hamilton 1988): the pilot's
  residuals (per-seed differences minus their mean; unpaired: each group minus its mean) are
  resampled with replacement, smoothed so that resampling creates no artificial ties
  (shrunk smoothed bootstrap, Silverman 1986 sec. 6.4.1; variance kept, Gaussian kernel,
  bandwidth 1.06 sd n^(-1/5)), shifted by the effect and put through the report's own test
  (`scipy.stats.wilcoxon` / `mannwhitneyu`, defaults). For untied samples the p-value is a
  function of the rank statistic alone, so a batch's statistics are computed at once and scipy
  is asked once per distinct value (`wilcoxon_pvalues`, `mann_whitney_pvalues`; equal to scipy
  row by row). Power is the share of resamples with p < alpha. Draws are nested (the first n columns of
  one matrix per pair), so the power curve over n and over the effect uses common random numbers.

Pure: plain arrays in, dataclasses and DataFrames out; every draw comes from the Generator passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from prism_experiments.analysis.stats import FloatArray, finite_array, rng_for

TARGET_POWERS: tuple[float, ...] = (0.8, 0.95)
MDE_POWER = 0.8
DEFAULT_REPLICATES = 300
#: the seed counts searched for "seeds needed"; beyond this the figure is reported as not reached
MAX_SEEDS = 100
#: asymptotic relative efficiency of the Wilcoxon and Mann-Whitney tests to the t test for normal data
RANK_TEST_ARE = 3.0 / math.pi
#: effects searched for the simulated MDE, in multiples of the normal-approximation MDE
MAX_MDE_FACTOR = 64.0
MDE_BISECTIONS = 6
#: scipy's Wilcoxon "auto" uses the exact null distribution up to this many untied, non-zero differences
WILCOXON_EXACT_MAX_N = 50
#: an sd this small relative to the values is rounding error: "no variation"
RELATIVE_SD_FLOOR = 1e-9

IntArray = NDArray[np.int_]

POWER_COLUMNS: tuple[str, ...] = (
    "metric", "condition_a", "condition_b", "design", "test", "n_a", "n_b", "alpha_test", "sd", "difference",
    "effect", "effect_source", "power_now_sim", "mde_normal", "mde_sim",
    "seeds_80_normal", "seeds_80_rank", "seeds_80_sim", "seeds_95_normal", "seeds_95_rank", "seeds_95_sim",
    "replicates", "note",
)  # fmt: skip


def z_sum(alpha: float, power: float) -> float:
    """z_{1-alpha/2} + z_{power}: the two-sided normal-theory constant (Cohen 1988, eq. 2.3.2 rearranged)."""
    return float(stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power))


def normal_mde(standard_error: float, alpha: float, power: float) -> float:
    """Smallest |difference| a two-sided z test detects with `power`: (z_{1-a/2} + z_power) * SE (Cohen 1988)."""
    return z_sum(alpha, power) * standard_error


def normal_seeds(unit_sd: float, delta: float, alpha: float, power: float) -> float:
    """Seeds (pairs, or runs per group) for a z test: ceil(((z_{1-a/2} + z_power) * sd / delta)^2) (Cohen 1988).

    `unit_sd` is the sd of one paired difference, or sqrt(sd_a^2 + sd_b^2) for two groups of n each.
    """
    if delta == 0 or not math.isfinite(delta):
        return math.inf
    return float(math.ceil((z_sum(alpha, power) * unit_sd / abs(delta)) ** 2))


def rank_test_seeds(normal: float) -> float:
    """The normal-theory seeds divided by the rank tests' ARE 3/pi (Lehmann 2006): the Wilcoxon figure."""
    return normal if not math.isfinite(normal) else float(math.ceil(normal / RANK_TEST_ARE))


@dataclass
class PilotResampler:
    """Smoothed-bootstrap draws of centred pilot residuals, nested over n (first n columns of one matrix).

    One residual array for a paired design (the per-seed differences), two for an unpaired one.
    Shrunk smoothed bootstrap (Silverman 1986, sec. 6.4.1): (r_I + h Z) / sqrt(1 + h^2 / s^2), h = 1.06 s n^(-1/5).
    """

    residuals: tuple[FloatArray, ...]
    replicates: int
    rng: np.random.Generator
    _draws: list[FloatArray] = field(default_factory=list)

    def columns(self, n: int, group: int = 0) -> FloatArray:
        """The first `n` draws of every replicate for `group`, extending the matrix (same stream) as needed."""
        while len(self._draws) < len(self.residuals):
            self._draws.append(np.empty((self.replicates, 0)))
        have = self._draws[group].shape[1]
        if n > have:
            # extend every group together, so the stream (and the draws) never depend on the order of calls
            add = max(n - have, have)
            for g, residual in enumerate(self.residuals):
                self._draws[g] = np.hstack([self._draws[g], self._smoothed(residual, add)])
        return self._draws[group][:, :n]

    def _smoothed(self, residual: FloatArray, n: int) -> FloatArray:
        s = float(np.std(residual, ddof=1))
        h = 1.06 * s * residual.size ** (-0.2)
        picked = residual[self.rng.integers(0, residual.size, size=(self.replicates, n))]
        noise = self.rng.standard_normal((self.replicates, n))
        return (picked + h * noise) / math.sqrt(1.0 + (h / s) ** 2)


def wilcoxon_samples(n: int, r_plus: IntArray) -> FloatArray:
    """One untied, zero-free sample of n differences per value of R+ (|d| = 1..n, positive ranks summing to it)."""
    samples = -np.tile(np.arange(1.0, n + 1.0), (r_plus.size, 1))
    remaining = r_plus.astype(int).copy()
    for rank in range(n, 0, -1):  # greedy from the largest rank reaches every sum 0 .. n(n+1)/2
        take = rank <= remaining
        samples[take, rank - 1] = rank
        remaining[take] -= rank
    return samples


def mann_whitney_samples(n_a: int, n_b: int, u: IntArray) -> tuple[FloatArray, FloatArray]:
    """Untied samples (x, y = 0 .. n_b - 1) whose U of x is each value of `u`: x_i sits above min(n_b, ...) ys."""
    above = np.clip(u[:, None] - np.arange(n_a)[None, :] * n_b, 0, n_b)
    x = above - 0.5 + np.arange(n_a)[None, :] * (0.5 / (n_a + 1))  # distinct, never equal to a y
    return x.astype(float), np.tile(np.arange(float(n_b)), (u.size, 1))


#: (test, sizes) -> {statistic: scipy's p}; for untied samples the p-value is a function of these alone
_PVALUE_MEMO: dict[tuple[object, ...], dict[int, float]] = {}


def _pvalues_by_statistic(key: tuple[object, ...], statistic: IntArray, scipy_p: Callable[[IntArray], ArrayLike]
                          ) -> FloatArray:  # fmt: skip
    """p for each statistic, asking scipy (on constructed samples) only for values not seen before."""
    memo = _PVALUE_MEMO.setdefault(key, {})
    if statistic.size == 0:
        return np.empty(0)
    unique, inverse = np.unique(statistic, return_inverse=True)
    missing = np.array([value for value in unique.tolist() if value not in memo], dtype=int)
    if missing.size:
        memo.update(zip(missing.tolist(), np.asarray(scipy_p(missing), dtype=float).tolist(), strict=True))
    return np.array([memo[value] for value in unique.tolist()])[inverse.ravel()]


def _untied_rows(values: FloatArray) -> NDArray[np.bool_]:
    """Rows of `values` without two equal entries."""
    return np.all(np.diff(np.sort(values, axis=1), axis=1) != 0, axis=1)


def _ranks(values: FloatArray) -> FloatArray:
    """Ranks 1..n along each row of untied values (one argsort, inverted by scattering)."""
    order = np.argsort(values, axis=1)
    ranks = np.empty(values.shape)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1.0, values.shape[1] + 1.0), values.shape), axis=1)
    return ranks


def wilcoxon_pvalues(d: FloatArray) -> FloatArray:
    """Row-wise two-sided `scipy.stats.wilcoxon(row)` p-values (defaults), fast for many rows of one size.

    For an untied, zero-free row p depends on n and R+ only: R+ is computed here and scipy is asked
    once per distinct R+, on a constructed sample with that R+. A row with ties or zeros (rare:
    the draws are smoothed) is passed to scipy alone, as scipy's "auto" method decides per call.
    """
    n = d.shape[1]

    def scipy_p(values: IntArray) -> ArrayLike:
        return stats.wilcoxon(wilcoxon_samples(n, values), axis=1).pvalue

    clean = np.all(d != 0, axis=1) & _untied_rows(np.abs(d))
    pvalues = np.empty(d.shape[0])
    r_plus = np.rint(np.sum(_ranks(np.abs(d[clean])) * (d[clean] > 0), axis=1)).astype(int)
    if n <= WILCOXON_EXACT_MAX_N:
        # scipy's exact distribution costs per call: ask once for every R+ of this n
        pvalues[clean] = _pvalues_by_statistic(("wilcoxon", n), np.arange(n * (n + 1) // 2 + 1), scipy_p)[r_plus]
    else:
        pvalues[clean] = _pvalues_by_statistic(("wilcoxon", n), r_plus, scipy_p)
    pvalues[~clean] = [stats.wilcoxon(row).pvalue for row in d[~clean]]
    return pvalues


def mann_whitney_pvalues(a: FloatArray, b: FloatArray) -> FloatArray:
    """Row-wise two-sided `scipy.stats.mannwhitneyu(a_row, b_row)` p-values (method auto); scipy per distinct U."""
    n_a, n_b = a.shape[1], b.shape[1]
    pooled = np.hstack([a, b])
    clean = _untied_rows(pooled)
    pvalues = np.empty(a.shape[0])
    u = np.rint(np.sum(_ranks(pooled[clean])[:, :n_a], axis=1) - n_a * (n_a + 1) / 2).astype(int)
    pvalues[clean] = _pvalues_by_statistic(
        ("mann-whitney", n_a, n_b), u,
        lambda values: stats.mannwhitneyu(*mann_whitney_samples(n_a, n_b, values), alternative="two-sided",
                                          axis=1).pvalue,
    )  # fmt: skip
    pvalues[~clean] = [stats.mannwhitneyu(x, y, alternative="two-sided").pvalue
                       for x, y in zip(a[~clean], b[~clean], strict=True)]  # fmt: skip
    return pvalues


def rejection_rate(resampler: PilotResampler, delta: float, n_a: int, n_b: int, alpha: float) -> float:
    """Share of replicates where the report's test (Wilcoxon paired / Mann-Whitney) gives p < alpha."""
    if len(resampler.residuals) == 1:
        pvalues = wilcoxon_pvalues(resampler.columns(n_a) + delta)
    else:
        pvalues = mann_whitney_pvalues(resampler.columns(n_a, 0) + delta, resampler.columns(n_b, 1))
    return float(np.mean(pvalues < alpha))


def simulated_mde(resampler: PilotResampler, n_a: int, n_b: int, alpha: float, power: float,
                  start: float) -> float:  # fmt: skip
    """Smallest shift with simulated power >= `power` at these sizes: doubling from `start`, then bisection."""
    if not (start > 0 and math.isfinite(start)):
        return math.nan
    low, high = 0.0, start
    while rejection_rate(resampler, high, n_a, n_b, alpha) < power:
        low, high = high, 2.0 * high
        if high > MAX_MDE_FACTOR * start:
            return math.inf
    for _ in range(MDE_BISECTIONS):
        middle = (low + high) / 2.0
        if rejection_rate(resampler, middle, n_a, n_b, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def simulated_seeds(resampler: PilotResampler, delta: float, alpha: float, power: float, start: float,
                    cache: dict[int, float], max_seeds: int = MAX_SEEDS) -> float:  # fmt: skip
    """Smallest n (pairs, or runs per group) with simulated power >= `power` for shift `delta`.

    Galloping from `start` (the normal figure) by x1.5, then integer bisection; `cache` holds
    power by n, shared between target powers. inf when `max_seeds` is not enough.
    """
    if delta == 0 or not math.isfinite(delta) or start > 2 * max_seeds:
        return math.inf  # far beyond the cap the normal figure is the answer, and simulating it is slow

    def power_at(n: int) -> float:
        if n not in cache:
            cache[n] = rejection_rate(resampler, delta, n, n, alpha)
        return cache[n]

    n = int(min(max(start if math.isfinite(start) else max_seeds, 2), max_seeds))
    if power_at(n) >= power:
        high, low = n, n
        while low > 2 and power_at(low) >= power:
            high, low = low, max(2, low * 2 // 3)
        if power_at(low) >= power:
            return float(low)
    else:
        low, high = n, n
        while power_at(high) < power:
            if high >= max_seeds:
                return math.inf
            low, high = high, min(max_seeds, max(high + 1, math.ceil(high * 1.5)))
    while high - low > 1:
        middle = (low + high) // 2
        if power_at(middle) >= power:
            high = middle
        else:
            low = middle
    return float(high)


@dataclass(frozen=True)
class PairPower:
    """The power figures of one pair on one metric; NaN where undefined, inf where `MAX_SEEDS` is not enough."""

    n_a: int
    n_b: int
    alpha_test: float
    sd: float
    difference: float
    effect: float
    effect_source: str
    power_now_sim: float
    mde_normal: float
    mde_sim: float
    seeds_normal: dict[float, float]
    seeds_rank: dict[float, float]
    seeds_sim: dict[float, float]
    replicates: int
    note: str = ""


def pair_power(
    x: ArrayLike,
    y: ArrayLike,
    paired: bool,
    alpha: float,
    rng: np.random.Generator,
    replicates: int = DEFAULT_REPLICATES,
    effect: float | None = None,
    powers: Sequence[float] = TARGET_POWERS,
    max_seeds: int = MAX_SEEDS,
) -> PairPower:
    """MDE now and seeds needed for the observed difference (or `effect` x sd, Cohen's d) at each of `powers`.

    Paired: `x`, `y` are the values of the same seeds and sd is that of x - y (Cohen's d_z);
    unpaired: two groups and the standardiser is sqrt((sd_a^2 + sd_b^2) / 2) (Cohen's d).
    """
    a, b = finite_array(x, "x"), finite_array(y, "y")
    n_a, n_b = int(a.size), int(b.size)
    empty = {p: math.nan for p in powers}
    if paired:
        if a.shape != b.shape:
            raise ValueError(f"y: paired samples need equal lengths, got {n_a} and {n_b}")
        d = a - b
        residuals: tuple[FloatArray, ...] = (d - d.mean(),) if d.size else ()
        difference = float(d.mean()) if d.size else math.nan
        unit_sd = float(np.std(d, ddof=1)) if d.size > 1 else math.nan
        standardiser = unit_sd
        standard_error = unit_sd / math.sqrt(n_a) if n_a else math.nan
    else:
        residuals = (a - a.mean(), b - b.mean()) if n_a and n_b else ()
        difference = float(a.mean() - b.mean()) if n_a and n_b else math.nan
        sd_a = float(np.std(a, ddof=1)) if n_a > 1 else math.nan
        sd_b = float(np.std(b, ddof=1)) if n_b > 1 else math.nan
        unit_sd = math.hypot(sd_a, sd_b)
        standardiser = unit_sd / math.sqrt(2.0)
        standard_error = math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b) if n_a > 1 and n_b > 1 else math.nan
    delta = difference if effect is None else effect * standardiser
    source = "observed" if effect is None else f"--effect {effect:g} sd"

    def result(note: str, **figures: object) -> PairPower:
        base: dict[str, object] = dict(
            n_a=n_a, n_b=n_b, alpha_test=alpha, sd=unit_sd, difference=difference, effect=delta,
            effect_source=source, power_now_sim=math.nan, mde_normal=math.nan, mde_sim=math.nan,
            seeds_normal=dict(empty), seeds_rank=dict(empty), seeds_sim=dict(empty), replicates=replicates,
        )  # fmt: skip
        return PairPower(**(base | figures), note=note)  # type: ignore[arg-type]

    if not math.isfinite(unit_sd):
        return result("fewer than 2 values: no sd")
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    if unit_sd <= RELATIVE_SD_FLOOR * scale:
        return result("no variation between seeds: power is undefined")
    seeds_normal = {p: normal_seeds(unit_sd, delta, alpha, p) for p in powers}
    seeds_rank = {p: rank_test_seeds(seeds_normal[p]) for p in powers}
    mde_normal = normal_mde(standard_error, alpha, MDE_POWER)
    if replicates <= 0:
        return result("simulation off", mde_normal=mde_normal, seeds_normal=seeds_normal, seeds_rank=seeds_rank)
    if not paired and (np.std(a) == 0 or np.std(b) == 0):
        return result("a constant group: simulation skipped", mde_normal=mde_normal, seeds_normal=seeds_normal,
                      seeds_rank=seeds_rank)  # fmt: skip
    resampler = PilotResampler(residuals, replicates, rng)
    cache: dict[int, float] = {}
    seeds_sim = {p: simulated_seeds(resampler, delta, alpha, p, seeds_rank[p], cache, max_seeds) for p in powers}
    power_now = rejection_rate(resampler, delta, n_a, n_b, alpha)
    mde_sim = simulated_mde(resampler, n_a, n_b, alpha, MDE_POWER, mde_normal)
    notes = []
    if any(math.isinf(v) for v in seeds_sim.values()):
        notes.append(f"more than {max_seeds} seeds needed")
    if math.isinf(mde_sim):
        notes.append(f"no effect up to {MAX_MDE_FACTOR:g} x the normal MDE reaches power {MDE_POWER:g} at this n")
    return result("; ".join(notes), power_now_sim=power_now, mde_normal=mde_normal, mde_sim=mde_sim,
                  seeds_normal=seeds_normal, seeds_rank=seeds_rank, seeds_sim=seeds_sim)  # fmt: skip


def power_rows(
    values: pd.DataFrame,
    conditions: Sequence[str],
    metric: str,
    paired: bool,
    alpha_test: float,
    seed: int,
    replicates: int = DEFAULT_REPLICATES,
    effect: float | None = None,
) -> pd.DataFrame:
    """POWER_COLUMNS rows for every pair of `conditions` on one metric (`values`: condition, seed, value).

    Pairs take complete seeds (paired) or each group's values (unpaired), as the pairwise tests do;
    each pair has its own generator, `rng_for(seed, "power", metric, a, b)`.
    """
    rows = []
    if paired:
        wide = values.pivot(index="seed", columns="condition", values="value").reindex(columns=list(conditions))
    present = values.dropna(subset=["value"])
    for a, b in combinations(conditions, 2):
        if paired:
            pair = wide[[a, b]].dropna()
            x, y = pair[a].to_numpy(dtype=float), pair[b].to_numpy(dtype=float)
        else:
            x = present.loc[present["condition"] == a, "value"].to_numpy(dtype=float)
            y = present.loc[present["condition"] == b, "value"].to_numpy(dtype=float)
        figures = pair_power(x, y, paired, alpha_test, rng_for(seed, "power", metric, a, b), replicates, effect)
        rows.append(
            {
                "metric": metric, "condition_a": a, "condition_b": b,
                "design": "paired" if paired else "unpaired",
                "test": "Wilcoxon signed-rank" if paired else "Mann-Whitney U",
                "n_a": figures.n_a, "n_b": figures.n_b, "alpha_test": alpha_test, "sd": figures.sd,
                "difference": figures.difference, "effect": figures.effect, "effect_source": figures.effect_source,
                "power_now_sim": figures.power_now_sim, "mde_normal": figures.mde_normal, "mde_sim": figures.mde_sim,
                **{f"seeds_{round(p * 100)}_{kind}": getattr(figures, f"seeds_{kind}")[p]
                   for p in TARGET_POWERS for kind in ("normal", "rank", "sim")},
                "replicates": figures.replicates, "note": figures.note,
            }
        )  # fmt: skip
    return pd.DataFrame(rows, columns=list(POWER_COLUMNS))
