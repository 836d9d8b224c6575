"""Off-policy estimators of a target policy's engagement per impression, under the item-position model.

Each logged impression i (post d_i at position k_i of a feed x_i) has reward r_i (engagements), the served policy's
propensity p_i = P_A(d_i at k_i | x_i) and the target's t_i = P_B(d_i at k_i | x_i); w_i = t_i / p_i (Li, Kim,
Zitouni & Guo, KDD 2018, item-position IPS; OBP's `SlateIndependentIPS`, Kiyohara et al., WSDM 2022). Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ESTIMATORS: tuple[str, ...] = ("ips", "snips", "dr")


def importance_weights(target: np.ndarray, propensity: np.ndarray) -> np.ndarray:
    """w_i = t_i / p_i; a logged impression always has p_i > 0 (the served slate counts in its estimate)."""
    propensity = np.asarray(propensity, dtype=np.float64)
    if np.any(propensity <= 0):
        raise ValueError("propensity: every logged impression needs P_A > 0")
    return np.asarray(target, dtype=np.float64) / propensity


def ips(reward: np.ndarray, weight: np.ndarray) -> float:
    """Inverse propensity scoring, sum_i w_i r_i / n (Horvitz & Thompson 1952; Li et al. 2018, eq. for IP-IPS)."""
    return float(np.sum(weight * reward) / len(reward)) if len(reward) else float("nan")


def snips(reward: np.ndarray, weight: np.ndarray) -> float:
    """Self-normalised IPS, sum_i w_i r_i / sum_i w_i (Swaminathan & Joachims, NeurIPS 2015)."""
    total = float(np.sum(weight))
    return float(np.sum(weight * reward) / total) if total > 0 else float("nan")


def doubly_robust(reward: np.ndarray, weight: np.ndarray, predicted: np.ndarray, direct: np.ndarray) -> float:
    """Doubly robust, mean_i [dm_i + w_i (r_i - q_i)] (Dudik, Langford & Li, ICML 2011): `predicted` q_i = q(x_i, d_i,
    k_i), `direct` dm_i = sum_d P_B(d at k_i | x_i) q(x_i, d, k_i), the direct method's value of the logged cell."""
    return float(np.mean(direct + weight * (reward - predicted))) if len(reward) else float("nan")


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its percentile bootstrap interval."""

    value: float
    low: float
    high: float

    def covers(self, truth: float) -> bool:
        return self.low <= truth <= self.high


def bootstrap_estimates(
    groups: np.ndarray,
    reward: np.ndarray,
    weight: np.ndarray,
    predicted: np.ndarray,
    direct: np.ndarray,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, Estimate]:
    """IPS, SNIPS and DR with percentile bootstrap CIs, resampling whole feeds (`groups`: one id per impression),
    since impressions of one feed share a context (Efron & Tibshirani 1993, ch. 13; the cluster bootstrap)."""
    if len(reward) == 0:
        return {name: Estimate(float("nan"), float("nan"), float("nan")) for name in ESTIMATORS}
    _, feed = np.unique(groups, return_inverse=True)
    n_feeds = int(feed.max()) + 1
    per_feed = np.stack(
        [
            np.bincount(feed, values, minlength=n_feeds)
            for values in (np.ones(len(reward)), weight * reward, weight, direct + weight * (reward - predicted))
        ]
    )
    counts = np.random.default_rng(seed).multinomial(n_feeds, np.full(n_feeds, 1.0 / n_feeds), size=n_boot)
    n, weighted, weights, doubly = (counts @ per_feed.T).T
    resampled = {"ips": weighted / n, "snips": weighted / weights, "dr": doubly / n}
    point = {
        "ips": ips(reward, weight),
        "snips": snips(reward, weight),
        "dr": doubly_robust(reward, weight, predicted, direct),
    }
    tail = 100 * (1 - level) / 2
    return {
        name: Estimate(point[name], *np.percentile(resampled[name], [tail, 100 - tail]).tolist()) for name in ESTIMATORS
    }
