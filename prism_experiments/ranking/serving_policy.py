"""Stochastic serving policies over a mode's ranked candidates: Plackett-Luce (softmax) and epsilon-greedy.

Pure functions of numpy arrays. Plackett-Luce: P(slate) = prod_k exp(s_k/tau) / sum_{j not yet picked} exp(s_j/tau)
(Plackett 1975; Luce 1959), sampled exactly by the Gumbel-top-k trick (Kool, van Hoof & Welling, ICML 2019).
Epsilon-greedy per position: the best remaining candidate with prob. 1 - eps, a uniform remaining one with eps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Policy = Literal["deterministic", "softmax", "epsilon_greedy"]
POLICIES: tuple[str, ...] = ("deterministic", "softmax", "epsilon_greedy")


@dataclass(frozen=True)
class PolicySpec:
    """One serving policy: which, its temperature (softmax) and epsilon (epsilon_greedy)."""

    policy: Policy
    temperature: float = 1.0
    epsilon: float = 0.0


#: subtracted per rank after standardising: ties keep the mode's order as tau -> 0, invisible at any practical tau
TIE_BREAK = 1e-9


def serving_scores(final_scores: np.ndarray) -> np.ndarray:
    """The scores a policy sees: the running minimum of the mode's final scores along its order (so a mode whose
    feed is not sorted by score, e.g. engagement_recency's filler, is never reordered at tau -> 0), standardised
    per feed (z-scores: tau is in units of the feed's score spread, comparable across modes), minus TIE_BREAK x rank."""
    scores = np.minimum.accumulate(np.asarray(final_scores, dtype=np.float64)) if len(final_scores) else np.zeros(0)
    spread = scores.std()
    standard = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
    return standard - TIE_BREAK * np.arange(len(scores))


def sample_slates(spec: PolicySpec, scores: np.ndarray, k: int, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, min(k, len(scores))) candidate indices: n independent slates drawn without replacement.

    `scores` are in the mode's order (index 0 = the mode's best); deterministic returns that order n times.
    """
    size = len(scores)
    k = min(k, size)
    if spec.policy == "deterministic" or size == 0:
        return np.tile(np.arange(k), (n, 1))
    if spec.policy == "softmax":
        keys = scores[None, :] / spec.temperature + rng.gumbel(size=(n, size))
        return np.argsort(-keys, axis=1, kind="stable")[:, :k]
    return _epsilon_greedy(spec.epsilon, size, k, rng, n)


def _epsilon_greedy(epsilon: float, size: int, k: int, rng: np.random.Generator, n: int) -> np.ndarray:
    """Per position: the mode's best remaining candidate with prob. 1 - eps, else a uniform remaining one."""
    explore = rng.random((n, k)) < epsilon
    picks = rng.random((n, k))
    remaining = np.ones((n, size), dtype=bool)
    slates = np.empty((n, k), dtype=np.int64)
    rows = np.arange(n)
    for position in range(k):
        greedy = np.argmax(remaining, axis=1)  # the first remaining index is the mode's best remaining
        counts = remaining.sum(axis=1)
        nth = np.minimum((picks[:, position] * counts).astype(np.int64), counts - 1)
        uniform = np.argmax(np.cumsum(remaining, axis=1) > nth[:, None], axis=1)
        chosen = np.where(explore[:, position], uniform, greedy)
        slates[:, position] = chosen
        remaining[rows, chosen] = False
    return slates


def conditional_probabilities(spec: PolicySpec, scores: np.ndarray, slate: np.ndarray) -> np.ndarray:
    """P(slate[k] at position k | slate[:k] above it) under the policy, one per position: the exact chain-rule
    factors of the slate's probability (for softmax, the Plackett-Luce factor over the remaining candidates)."""
    size = len(scores)
    remaining = np.ones(size, dtype=bool)
    out = np.empty(len(slate))
    for position, index in enumerate(slate):
        if spec.policy == "softmax":
            logits = scores[remaining] / spec.temperature
            top = logits.max()
            out[position] = np.exp(scores[index] / spec.temperature - top) / np.exp(logits - top).sum()
        else:
            best = bool(np.argmax(remaining) == index)
            epsilon = spec.epsilon if spec.policy == "epsilon_greedy" else 0.0
            out[position] = (1.0 - epsilon) * best + epsilon / remaining.sum()
        remaining[index] = False
    return out


def position_marginals(slates: np.ndarray, size: int) -> np.ndarray:
    """(size, k) matrix P(candidate i at position k), the share of `slates` (n, k) that put i at k.

    Each column sums to 1 over the candidates (every slate fills every position); the item-position propensities
    of Li, Kim, Zitouni & Guo, "Offline Evaluation of Ranking Policies with Click Models", KDD 2018.
    """
    n, k = slates.shape
    counts = np.zeros((size, k))
    for position in range(k):
        counts[:, position] = np.bincount(slates[:, position], minlength=size)
    return counts / max(n, 1)
