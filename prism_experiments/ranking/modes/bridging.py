"""bridging: x_algo's candidates ranked by the Community Notes bridging score, learned from the run's own feedback
(REQ-POL-11; docs/politics.md).

1. candidates: x_algo's in-network and out-of-network sources (so the scorer is the only difference);
2. log every impression this ranker served as a rating: 1 if liked, reshared or replied, else 0;
3. every `retrain_every_steps` observed steps, fit r̂ = μ + i_u + i_n + f_u·f_n (`bridging_model.fit_bridging`,
   λ_i 0.15, λ_f 0.03: X's Community Notes); the one factor takes up approval that splits readers along an axis
   (in a political world, mostly left-right), so the post intercept i_n is approval across it (Ovadya & Thorburn
   2023, "Bridging Systems", arXiv 2301.09976: "bridging-based ranking");
4. score: i_n for a post with at least `min_ratings` ratings, minus `polarity_penalty` x |f_n| above
   `max_abs_factor` (Community Notes requires |f_n| < 0.5 of a helpful note); 0 for a post not yet rated enough
   (Community Notes' "Needs More Ratings"); ties by interest similarity.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.group_order import rank_within
from prism_experiments.ranking.bridging_model import (
    FACTOR_LAMBDA,
    INTERCEPT_LAMBDA,
    MIN_RATINGS,
    BridgingFit,
    fit_bridging,
)
from prism_experiments.ranking.feedback import FeedbackLog, ServedFeedback
from prism_experiments.ranking.modes.x_algo import XAlgoConfig
from prism_experiments.ranking.network_sources import NetworkSourcedRanker
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.step_feeds import StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker

#: spawn key of a fit's initial factors in the ranker's own stream
_FIT_KEY = 1


class BridgingConfig(XAlgoConfig):
    """Community Notes' matrix-factorisation bridging score on the run's own feedback, over x_algo's candidates."""

    mode: Literal["bridging"] = "bridging"  # type: ignore[assignment]
    #: refit on every rating logged so far every K observed steps (6 hourly steps: as `collaborative`)
    retrain_every_steps: int = Field(default=6, ge=1)
    #: λ_i, the intercepts' L2 penalty (Community Notes: 0.15)
    intercept_lambda: float = Field(default=INTERCEPT_LAMBDA, gt=0.0)
    #: λ_f, the factors' L2 penalty (Community Notes: 0.03)
    factor_lambda: float = Field(default=FACTOR_LAMBDA, gt=0.0)
    #: ALS sweeps per fit
    iterations: int = Field(default=30, ge=1)
    #: ratings a post needs before its intercept ranks it (Community Notes: 5)
    min_ratings: int = Field(default=MIN_RATINGS, ge=1)
    #: |f_n| from which a post counts as polarising (Community Notes: a helpful note has |f_n| < 0.5)
    max_abs_factor: float = Field(default=0.5, gt=0.0)
    #: score taken off per unit of |f_n| above max_abs_factor (0: the intercept alone)
    polarity_penalty: float = Field(default=1.0, ge=0.0)


@register_mode
class BridgingRanker(NetworkSourcedRanker[BridgingConfig], WholeStepRanker[BridgingConfig]):
    """x_algo's sources ordered by the bridging intercept; base_score is the interest similarity. The whole step at
    once (x_algo's flat pools): the per-agent pools cost over twice x_algo's step at 10,000 agents (docs/bench.md)."""

    config_model = BridgingConfig

    def __init__(self, config: BridgingConfig, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self.log = FeedbackLog()
        self.fit: BridgingFit | None = None
        self.fits = 0
        self._observed_steps = 0
        self._score_of_row = np.zeros(0)

    def observe(self, feedback: ServedFeedback) -> None:
        """Log the step's impressions as ratings; refit every K observed steps."""
        if len(feedback.rows) == 0:
            return
        engaged = np.asarray(feedback.liked) | np.asarray(feedback.reshared) | np.asarray(feedback.replied)
        self.log.add(feedback.agent_ids, feedback.rows, engaged.astype(float))
        self._observed_steps += 1
        if self._observed_steps % self.config.retrain_every_steps == 0:
            self.refit()

    def refit(self) -> None:
        """The fit on everything logged; its initial factors from the ranker's stream, keyed by the fit's number."""
        users, rows, ratings = self.log.arrays()
        cfg = self.config
        rng = np.random.default_rng(np.random.SeedSequence(self._entropy, spawn_key=(_FIT_KEY, self.fits)))
        self.fits += 1
        fit = fit_bridging(
            users,
            rows,
            ratings,
            rng,
            intercept_lambda=cfg.intercept_lambda,
            factor_lambda=cfg.factor_lambda,
            iterations=cfg.iterations,
        )
        if fit is None:
            return
        self.fit = fit
        score = bridging_scores(fit, cfg)
        by_row = np.zeros(int(fit.item_rows.max()) + 1)
        by_row[fit.item_rows] = score
        self._score_of_row = by_row

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """Each row's bridging score (0: not rated enough, or not yet fitted)."""
        table = self._score_of_row
        inside = rows < len(table)
        return np.where(inside, table[np.minimum(rows, max(len(table) - 1, 0))] if len(table) else 0.0, 0.0)

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        pools = self.flat_pools(views, now)
        rows, similarity = pools.rows, pools.similarity
        score = self.scores(rows)
        # per view, best score first; ties (the unrated posts' 0) by interest similarity, then the lower row: the
        # sort is stable and the pools are in (view, row) order
        by_rank = np.lexsort((-similarity, -score, pools.view))
        order = by_rank[rank_within(pools.view[by_rank]) < self.feed_size]
        return StepFeeds.grouped(
            len(views),
            pools.view[order],
            rows[order],
            similarity[order],
            score[order],
            ~pools.is_oon[order],
            pools.sources()[order],
            pools.via[order],
            {"similarity": similarity[order], "bridging_score": score[order]},
            similarity=similarity[order],
        )


def bridging_scores(fit: BridgingFit, cfg: BridgingConfig) -> np.ndarray:
    """Per fitted item: its intercept less the polarity penalty, 0 below `min_ratings` ratings."""
    excess = np.maximum(np.abs(fit.item_factors) - cfg.max_abs_factor, 0.0)
    score = fit.item_intercepts - cfg.polarity_penalty * excess
    return np.where(fit.item_ratings >= cfg.min_ratings, score, 0.0)
