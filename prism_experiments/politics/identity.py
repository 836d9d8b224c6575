"""Agents' political identity and the follow homophily fitted to a published input (REQ-POL-1, REQ-POL-2).

Position is one left-right axis in [-1, 1] (left negative), NaN for a non-political agent. The side shares and the
strong-partisan shares are survey figures (politics/config.py); within a side, a strong partisan's |position| is
uniform on (2/3, 1] and the others' on [0.1, 2/3] (assumption: the survey gives categories, not a scale).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prism_experiments.politics.config import PoliticsConfig

#: |position| above which a partisan is strong (the top third of the axis)
STRONG_FROM = 2.0 / 3.0
#: the weakest partisan's |position|: a partisan is never exactly at the centre
WEAKEST = 0.1


def draw_positions(rng: np.random.Generator, config: PoliticsConfig, n_agents: int) -> np.ndarray:
    """(n_agents,) positions in [-1, 1], NaN for the non-political; three uniforms per agent, drawn at once."""
    side, strength, magnitude = rng.random((3, n_agents))
    left = side < config.left_share
    right = (side >= config.left_share) & (side < config.political_agent_share)
    strong = np.where(left, strength < config.strong_left, strength < config.strong_right)
    size = np.where(
        strong, STRONG_FROM + magnitude * (1.0 - STRONG_FROM), WEAKEST + magnitude * (STRONG_FROM - WEAKEST)
    )
    return np.where(left, -size, np.where(right, size, np.nan))


def sides(positions: np.ndarray) -> np.ndarray:
    """-1 left, +1 right, 0 non-political (NaN position)."""
    values = np.asarray(positions, dtype=float)
    return np.where(np.isnan(values), 0, np.sign(values)).astype(np.int8)


def expected_exposure_shares(same: float, neutral: float, shares: Sequence[float]) -> np.ndarray:
    """(2, 3) like-minded, cross-cutting, neutral shares of a left and a right agent's follows when a same-side
    followee weighs `same`, a non-political one `neutral` and an other-side one 1; `shares` = (left, right,
    non-political) population shares. Interest homophily and preferential attachment are left out (they act on
    every side alike)."""
    left, right, none = shares
    rows = []
    for mine, other in ((left, right), (right, left)):
        weights = np.array([same * mine, other, neutral * none])
        rows.append(weights / weights.sum())
    return np.array(rows)


@dataclass(frozen=True)
class Homophily:
    """Follow weight multipliers of a political follower: same side, non-political followee (other side: 1)."""

    same: float
    neutral: float


def pooled_exposure_shares(same: float, neutral: float, shares: Sequence[float]) -> np.ndarray:
    """(3,) like-minded, cross-cutting, neutral shares of all political agents' follows: the two sides' rows of
    `expected_exposure_shares` weighted by their population shares."""
    rows = expected_exposure_shares(same, neutral, shares)
    weights = np.array(shares[:2], dtype=float)
    return np.asarray(weights @ rows / weights.sum())


def fit_homophily(config: PoliticsConfig) -> Homophily:
    """The multipliers whose expected follow shares over all political agents (`pooled_exposure_shares`) are
    closest, in squared error, to the like-minded and cross-cutting targets (Nyhan et al. 2023's population figures,
    an input): two multipliers, two targets, so the fit is exact unless `config.homophily` pins `same`.

    With `config.homophily` set, `same` is that value and only `neutral` is fitted."""
    from scipy.optimize import minimize  # here: a run's start-up imports this module, and not scipy.optimize

    shares = (config.left_share, config.right_share, 1.0 - config.political_agent_share)
    targets = np.array([config.like_minded_target, config.cross_cutting_target])
    if min(config.left_share, config.right_share) <= 0.0:
        return Homophily(config.homophily or 1.0, 1.0)

    def loss(log_params: np.ndarray) -> float:
        same = config.homophily if config.homophily is not None else float(np.exp(log_params[0]))
        got = pooled_exposure_shares(same, float(np.exp(log_params[1])), shares)
        return float(((got[:2] - targets) ** 2).sum())

    fitted = minimize(loss, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-12})
    same = config.homophily if config.homophily is not None else float(np.exp(fitted.x[0]))
    return Homophily(same=same, neutral=float(np.exp(fitted.x[1])))


def follow_multipliers(positions: np.ndarray, homophily: Homophily) -> dict[int, np.ndarray]:
    """Side of a political follower -> each agent's weight multiplier as its followee (itself included)."""
    side = sides(positions)
    out = {}
    for mine in (-1, 1):
        out[mine] = np.where(side == mine, homophily.same, np.where(side == 0, homophily.neutral, 1.0))
    return out
