"""Weighted sampling without replacement by successive sampling (each draw ∝ weight among those not yet drawn)."""

from __future__ import annotations

import numpy as np


def weighted_sample_without_replacement(
    rng: np.random.Generator, weights: np.ndarray, k: int, n_positive: int | None = None
) -> np.ndarray:
    """k distinct indices by successive sampling (each draw ∝ weight among those not yet drawn).

    Sparse case: draw with replacement from the CDF and keep first occurrences, which
    has exactly the successive-sampling distribution. Dense case (k >= a quarter of the
    candidates): Gumbel-top-k (Kool et al. 2019), same distribution, no rejection.
    """
    if n_positive is None:  # the caller may know it (`_FollowWeights` keeps the count)
        n_positive = int(np.count_nonzero(weights > 0))
    if k > n_positive:
        raise ValueError(f"k: must be <= the number of positive weights ({n_positive}), got {k}")
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if 4 * k >= n_positive:
        with np.errstate(divide="ignore"):
            keys = np.log(weights) + rng.gumbel(size=weights.shape[0])
        top = np.argpartition(-keys, k - 1)[:k]
        return top[np.argsort(-keys[top], kind="stable")].astype(np.int64)
    cdf = np.cumsum(weights)
    chosen: list[int] = []
    taken: set[int] = set()
    while len(chosen) < k:
        draws = np.searchsorted(cdf, rng.random(2 * (k - len(chosen)) + 8) * cdf[-1], side="right")
        # Rounding can land past the end or on a zero-weight slot; discard those draws.
        draws = draws[draws < weights.shape[0]]
        take_first_occurrences(draws[weights[draws] > 0], chosen, taken, k)
    return np.asarray(chosen, dtype=np.int64)


def take_first_occurrences(draws: np.ndarray, chosen: list[int], taken: set[int], k: int) -> None:
    """Append the draws not taken yet to `chosen`, in order, until it holds k (first occurrences of each)."""
    if len(draws) == 0:
        return
    _, first = np.unique(draws, return_index=True)
    fresh = draws[np.sort(first)].tolist()
    if taken:
        fresh = [index for index in fresh if index not in taken]
    fresh = fresh[: k - len(chosen)]
    chosen.extend(fresh)
    taken.update(fresh)
