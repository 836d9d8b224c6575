"""From a stochastic run's event-log tables to the per-impression inputs of the OPE estimators (docs/ope.md).

The direct method q(x, d, k) for DR is a Poisson GLM (log link: attention by position times engagement, the shape
of a position-based click model) on the logged impressions, cross-fitted over feeds (Chernozhukov et al. 2018).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.linear_model import PoissonRegressor

from prism_experiments.domain import FEED_KEYS, TARGET_PREFIX
from prism_experiments.ope.estimators import Estimate, bootstrap_estimates, importance_weights

#: the logged context of a (post, position) cell the direct model reads
FEATURES: tuple[str, ...] = ("interest_similarity", "in_network", "has_media")
CELL_KEYS: tuple[str, ...] = (*FEED_KEYS, "position")


def target_names(exposures: pd.DataFrame) -> list[str]:
    """The target policies a run logged: its `target_<name>` exposure columns."""
    return [c.removeprefix(TARGET_PREFIX) for c in exposures.columns if c.startswith(TARGET_PREFIX)]


def impression_rewards(exposures: pd.DataFrame, engagements: pd.DataFrame) -> np.ndarray:
    """Engagements (likes + reshares + replies) per exposure row, so sum / rows is the run's engagement_rate."""
    keys = [*FEED_KEYS, "post_id"]
    counts = engagements.groupby(keys).size().rename("reward")
    joined = exposures[keys].join(counts, on=keys)
    return joined["reward"].fillna(0).to_numpy(dtype=np.float64)


def features(table: pd.DataFrame, n_positions: int) -> np.ndarray:
    """Direct-model features of (post, position) cells: FEATURES, then a one-hot position."""
    positions = table["position"].to_numpy(dtype=np.int64)
    one_hot = np.zeros((len(table), n_positions))
    one_hot[np.arange(len(table)), positions] = 1.0
    return np.column_stack([table[c].to_numpy(dtype=np.float64) for c in FEATURES] + [one_hot])


def feed_folds(exposures: pd.DataFrame, folds: int, seed: int) -> tuple[np.ndarray, pd.DataFrame]:
    """A fold per exposure row, drawn per feed; and the feed -> fold table."""
    feeds = exposures[list(FEED_KEYS)].drop_duplicates().reset_index(drop=True)
    feeds["fold"] = np.random.default_rng(seed).permutation(len(feeds)) % folds
    return exposures[list(FEED_KEYS)].merge(feeds, on=list(FEED_KEYS), how="left")["fold"].to_numpy(), feeds


@dataclass(frozen=True)
class OPEInputs:
    """Per logged impression: feed id, reward, weight w = P_B / P_A, direct-model q and the cell's DM value."""

    groups: np.ndarray
    reward: np.ndarray
    weight: np.ndarray
    predicted: np.ndarray
    direct: np.ndarray

    def estimates(self, n_boot: int = 1000, seed: int = 0) -> dict[str, Estimate]:
        return bootstrap_estimates(
            self.groups, self.reward, self.weight, self.predicted, self.direct, n_boot, seed=seed
        )


def ope_inputs(
    exposures: pd.DataFrame,
    engagements: pd.DataFrame,
    candidates: pd.DataFrame,
    target: str,
    folds: int = 2,
    seed: int = 0,
) -> OPEInputs:
    """The estimators' inputs for target `target` from a stochastic run's exposures, engagements and
    serving_candidates; q is fitted on the other folds' feeds (plain fit when `folds` is 1)."""
    column = f"{TARGET_PREFIX}{target}"
    if column not in exposures.columns:
        raise ValueError(f"target: the run logged no policy {target!r}; logged: {', '.join(target_names(exposures))}")
    reward = impression_rewards(exposures, engagements)
    n_positions = int(max(exposures["position"].max(), candidates["position"].max())) + 1
    fold, feeds = feed_folds(exposures, folds, seed)
    cell_fold = candidates[list(FEED_KEYS)].merge(feeds, on=list(FEED_KEYS), how="left")["fold"].to_numpy()
    logged_x, cells_x = features(exposures, n_positions), features(candidates, n_positions)
    predicted, cell_q = np.zeros(len(exposures)), np.zeros(len(candidates))
    for k in range(folds):
        train = fold != k if folds > 1 else np.ones(len(exposures), dtype=bool)
        model = PoissonRegressor(alpha=1e-4, solver="newton-cholesky", max_iter=100).fit(logged_x[train], reward[train])
        predicted[fold == k] = model.predict(logged_x[fold == k])
        if (cell_fold == k).any():
            cell_q[cell_fold == k] = model.predict(cells_x[cell_fold == k])
    cells = candidates[list(CELL_KEYS)].assign(value=candidates[column].to_numpy() * cell_q)
    direct = cells.groupby(list(CELL_KEYS))["value"].sum()
    direct_logged = exposures[list(CELL_KEYS)].join(direct, on=list(CELL_KEYS))["value"].fillna(0).to_numpy()
    groups = pd.factorize(pd.MultiIndex.from_frame(exposures[list(FEED_KEYS)]))[0]
    return OPEInputs(
        groups, reward, importance_weights(exposures[column], exposures["propensity"]), predicted, direct_logged
    )
