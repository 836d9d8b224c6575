"""Heuristic rescoring steps as pure functions (REQ-XALGO-3 ... REQ-XALGO-5)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def scale_factors(
    is_out_of_network: np.ndarray, is_reply: np.ndarray, oon_scale: float, reply_scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-candidate OON and reply multipliers: OON x oon_scale, a reply x reply_scale (REQ-XALGO-3)."""
    oon = np.where(np.asarray(is_out_of_network, dtype=bool), oon_scale, 1.0)
    reply = np.where(np.asarray(is_reply, dtype=bool), reply_scale, 1.0)
    return oon, reply


def author_diversity_multiplier(occurrence: np.ndarray, decay: float, floor: float, formula: str) -> np.ndarray:
    """Discount of an author's k-th candidate (k = 0 for the first).

    spec:       max(floor, decay^k)                (REQ-XALGO-4)
    home_mixer: (1 - floor) * decay^k + floor      (twitter/the-algorithm, home-mixer
                DiversityDiscountProvider; k = rank within the author's candidates)
    """
    power = np.power(float(decay), np.asarray(occurrence, dtype=np.float64))
    if formula == "spec":
        return np.maximum(floor, power)
    if formula == "home_mixer":
        return (1.0 - floor) * power + floor
    raise ValueError(f"author_diversity_formula: {formula!r} is not one of 'spec', 'home_mixer'")


def occurrence_in_order(authors: Sequence[Hashable], order: np.ndarray) -> np.ndarray:
    """For each candidate, how many candidates by the same author come before it in `order`."""
    occurrence = np.zeros(len(authors), dtype=np.int64)
    seen: dict[Hashable, int] = {}
    for index in order:
        author = authors[index]
        occurrence[index] = seen.get(author, 0)
        seen[author] = occurrence[index] + 1
    return occurrence


def descending_order(scores: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Indices by score, best first; ties broken by `tiebreak` ascending (deterministic)."""
    return np.lexsort((np.asarray(tiebreak), -np.asarray(scores, dtype=np.float64)))


def x_algo_scores(
    base: np.ndarray,
    is_out_of_network: np.ndarray,
    is_reply: np.ndarray,
    authors: Sequence[Hashable],
    tiebreak: np.ndarray,
    *,
    oon_scale: float,
    reply_scale: float,
    decay: float,
    floor: float,
    formula: str,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Final scores and their components: base x oon x reply x author diversity.

    Author occurrence is counted in the order of the rescored value (base x oon x reply), as
    REQ-XALGO-4 requires (author occurrences are counted after the scale factors).
    """
    oon, reply = scale_factors(is_out_of_network, is_reply, oon_scale, reply_scale)
    rescored = np.asarray(base, dtype=np.float64) * oon * reply
    occurrence = occurrence_in_order(authors, descending_order(rescored, tiebreak))
    diversity = author_diversity_multiplier(occurrence, decay, floor, formula)
    components = {"oon_scale": oon, "reply_scale": reply, "author_diversity": diversity}
    return rescored * diversity, components
