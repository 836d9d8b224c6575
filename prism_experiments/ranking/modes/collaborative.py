"""collaborative: implicit-feedback matrix factorisation (ALS; Hu, Koren & Volinsky 2008) learned from the run's own
engagement log, retrained every K steps: a recommender that learns each user from the feedback its feed produced
(the feedback loop of Chaney, Stewart & Engelhardt, RecSys 2018).

1. log: each impression this ranker's feeds made and its likes + reshares + replies (r_ui);
2. every `retrain_every_steps` observed steps, ALS on everything logged: confidence 1 + alpha * r_ui;
3. a user with factors gets the best `feed_size - explore_slots` of its visible posts that have factors, by
   x_u . y_i; the rest of the feed, and the whole feed of a user without factors (the cold start), is the
   `random` mode's uniform draw of recent posts, keyed by (agent, time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from prism_experiments.domain import epoch_microseconds
from prism_experiments.metrics.consumption import most_similar_pairs
from prism_experiments.ranking.collaborative_model import EngagementLog, Factors, fit_factors
from prism_experiments.ranking.feedback import ServedFeedback
from prism_experiments.ranking.flat import Pairs, pair_similarities
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import descending_order
from prism_experiments.ranking.sourcing import concat_rows, sorted_union
from prism_experiments.ranking.step_feeds import SOURCE_CODES, StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker

#: the run tables the mode logs (tables/<name>.parquet): the last fit's user factors, and each user's most similar
#: user under them (`metrics.consumption.most_similar_pairs`)
FACTORS_TABLE = "cf_user_factors"
PAIRS_TABLE = "cf_user_pairs"
#: spawn keys of the ranker's own streams: a fit's initial factors, the pairing's tie draws
_FIT_KEY, _PAIRING_KEY = 1, 2


class CollaborativeConfig(ModeConfig):
    """Implicit-feedback ALS (Hu, Koren & Volinsky 2008) on the run's own likes, reshares and replies."""

    mode: Literal["collaborative"] = "collaborative"
    #: K: refit on everything logged so far every K observed steps (6 hourly steps: four refits a simulated day)
    retrain_every_steps: int = Field(default=6, ge=1)
    #: latent factors per user and post (20: the T-RECS replication of Chaney et al. 2018, num_latent_factors)
    factors: int = Field(default=20, ge=1)
    #: lambda, the L2 penalty of every factor (0.01: the implicit package's default)
    regularization: float = Field(default=0.01, gt=0.0)
    #: confidence c_ui = 1 + alpha * r_ui (40: Hu, Koren & Volinsky 2008)
    alpha: float = Field(default=40.0, ge=0.0)
    #: ALS sweeps per fit (15: the implicit package's default)
    iterations: int = Field(default=15, ge=1)
    #: slots of each feed kept for the fallback's draw even when the model has picks, so posts the model has not
    #: seen can get engagements and factors (the T-RECS replication interleaves new items into every list)
    explore_slots: int = Field(default=2, ge=0)
    #: the fallback draws from posts of the last recent_window_hours (the `random` mode's REQ-FEED-5.3 window)
    recent_window_hours: float = Field(default=24.0, gt=0.0)


@register_mode
class CollaborativeRanker(WholeStepRanker[CollaborativeConfig]):
    """ALS picks first (x_u . y_i, best first, ties by row), then the random fallback's draw.

    final_score is x_u . y_i for the model's picks and the fallback's uniform key for the rest (picks come first);
    base_score is the interest similarity.
    """

    config_model = CollaborativeConfig

    def __init__(self, config: CollaborativeConfig, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self.log = EngagementLog()
        self.factors: Factors | None = None
        #: how many fits so far (the retraining counter)
        self.fits = 0
        self._observed_steps = 0
        self._user_of: dict[str, int] = {}
        self._column_of_row = np.full(0, -1, dtype=np.int64)

    # ------------------------------------------------------------------ learning
    def observe(self, feedback: ServedFeedback) -> None:
        """Log the step's engagements (likes + reshares + replies per impression); refit every K observed steps."""
        counts = (
            np.asarray(feedback.liked, dtype=np.int64)
            + np.asarray(feedback.reshared, dtype=np.int64)
            + np.asarray(feedback.replied, dtype=np.int64)
        )
        self.log.add(feedback.agent_ids, feedback.rows, counts)
        self._observed_steps += 1
        if self._observed_steps % self.config.retrain_every_steps == 0:
            self.fit()

    def fit(self) -> None:
        """ALS on everything logged so far; the initial factors come from the ranker's stream, keyed by the fit's
        number, so a run's fits do not depend on anything but its seed and its log."""
        users, rows, counts = self.log.arrays()
        cfg = self.config
        rng = np.random.default_rng(np.random.SeedSequence(self._entropy, spawn_key=(_FIT_KEY, self.fits)))
        factors = fit_factors(
            self.log.user_ids,
            users,
            rows,
            counts,
            factors=cfg.factors,
            regularization=cfg.regularization,
            alpha=cfg.alpha,
            iterations=cfg.iterations,
            rng=rng,
        )
        self.fits += 1
        if factors is None:
            return
        self.factors = factors
        self._user_of = {user: u for u, user in enumerate(factors.user_ids)}
        column = np.full(int(factors.item_rows.max()) + 1, -1, dtype=np.int64)
        column[factors.item_rows] = np.arange(len(factors.item_rows))
        self._column_of_row = column

    # ------------------------------------------------------------------ ranking
    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        size = self.feed_size
        model_slots = size - min(self.config.explore_slots, size) if self.factors is not None else 0
        now_us = epoch_microseconds(now)
        rows, finals, is_pick = [], [], []
        for agent, excluded in zip(views.agents, views.excluded_rows()):
            picks, scores = self._picks(agent.id, excluded, model_slots, now_us)
            rng = self.agent_rng(agent.id, now)
            fill = self.retriever.random_rows(
                size - len(picks),
                now,
                self.config.recent_window_hours,
                rng,
                exclude_rows=sorted_union(excluded, np.sort(picks)),
            )
            keys = np.sort(rng.random(len(fill)))[::-1]
            rows.append(np.concatenate([picks, fill]))
            finals.append(np.concatenate([scores, keys]))
            is_pick.append(np.arange(len(picks) + len(fill)) < len(picks))
        lengths = [len(r) for r in rows]
        pairs = Pairs(np.repeat(np.arange(len(views)), lengths), concat_rows(rows))
        base = pair_similarities(self.retriever.vectors, views.queries, pairs)
        final = np.concatenate(finals) if finals else np.zeros(0)
        picked = np.concatenate(is_pick) if is_pick else np.zeros(0, dtype=bool)
        components = {
            "similarity": base,
            "cf_score": np.where(picked, final, np.nan),
            "random_key": np.where(picked, np.nan, final),
        }
        source = np.where(picked, SOURCE_CODES["collaborative"], SOURCE_CODES["random"]).astype(np.int8)
        return self.step_feeds(views, pairs, base, final, source, components, similarity=base)

    def _picks(self, agent_id: str, excluded: np.ndarray, limit: int, now_us: int) -> tuple[np.ndarray, np.ndarray]:
        """The agent's `limit` best visible posts with factors by x_u . y_i (ties: lower row first), and the scores;
        none for an agent without factors. One agent's scores are one matrix-vector product, the same whether the
        agent is ranked alone or in a step."""
        factors, user = self.factors, self._user_of.get(agent_id)
        if factors is None or user is None or limit <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        scores = factors.items @ factors.users[user]
        visible = self.retriever.timestamps_us[factors.item_rows] <= now_us
        column = self._column_of_row
        hidden = column[excluded[excluded < len(column)]]
        visible[hidden[hidden >= 0]] = False
        candidates = np.flatnonzero(visible)
        if len(candidates) > limit:  # everything tied with the limit-th best stays, so ties still go to the lower row
            threshold = np.partition(scores[candidates], len(candidates) - limit)[len(candidates) - limit]
            candidates = candidates[scores[candidates] >= threshold]
        order = descending_order(scores[candidates], factors.item_rows[candidates])[:limit]
        chosen = candidates[order]
        return factors.item_rows[chosen], scores[chosen]

    # ------------------------------------------------------------------ what the run logs
    def user_factors_table(self) -> pd.DataFrame:
        """The last fit's user factors: `agent_id`, `factor_0` ... (no rows before the first fit)."""
        width = self.config.factors
        if self.factors is None:
            return pd.DataFrame({"agent_id": pd.Series(dtype="object")} | {f"factor_{k}": [] for k in range(width)})
        table = pd.DataFrame(self.factors.users, columns=[f"factor_{k}" for k in range(self.factors.users.shape[1])])
        table.insert(0, "agent_id", list(self.factors.user_ids))
        return table

    def run_tables(self) -> dict[str, pd.DataFrame]:
        """The last fit's user factors and each user's most similar user under them (Chaney et al.'s pairing), the
        pairing's ties drawn from the ranker's own stream."""
        rng = np.random.default_rng(np.random.SeedSequence(self._entropy, spawn_key=(_PAIRING_KEY,)))
        users = self.factors.users if self.factors is not None else np.zeros((0, self.config.factors))
        ids = self.factors.user_ids if self.factors is not None else ()
        return {FACTORS_TABLE: self.user_factors_table(), PAIRS_TABLE: most_similar_pairs(ids, users, rng)}
