"""engagement: x_algo's candidates ordered by predicted engagement, X's weighted scorer.

1. candidates: x_algo's in-network and out-of-network sources (so the scorer is the only difference);
2. P(like), P(reshare), P(reply), P(follow) per candidate from the predictor: `oracle` (the behaviour
   model's own probabilities) or `learned` (logistic regressions refit every K steps on the impressions
   this ranker served and their outcomes: the feedback loop of Chaney, Stewart & Engelhardt, RecSys 2018);
3. weighted score = sum_a w_a * P(a) (twitter/the-algorithm-ml, projects/home/recap/README.md);
4. then x_algo's OON scale, reply scale and author diversity, as home-mixer applies them after the
   weighted scorer; sort; take feed_size.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.agents import AgentsConfig
from prism_experiments.domain import Post, epoch_microseconds
from prism_experiments.politics.behaviour import engagement_offsets, post_columns
from prism_experiments.ranking.base import AgentView
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.engagement_prediction import (
    PREDICTED_ACTIONS,
    LearnedEngagementModel,
    candidate_features,
    oracle_probabilities,
    predictor_quality,
    weighted_engagement_score,
)
from prism_experiments.ranking.feedback import ServedFeedback
from prism_experiments.ranking.modes.x_algo import XAlgoConfig, rescored
from prism_experiments.ranking.network_sources import CandidatePool, NetworkSourcedRanker
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import descending_order

MICROSECONDS_PER_HOUR = 3_600_000_000


class EngagementConfig(XAlgoConfig):
    """X's weighted scorer over predicted engagement (the-algorithm-ml recap README, weights of 2023-04-05),
    then x_algo's scale factors and author diversity."""

    mode: Literal["engagement"] = "engagement"  # type: ignore[assignment]
    #: oracle: the behaviour model's probabilities (an upper bound); learned: logistic regressions on the
    #: run's own served impressions, refit every `retrain_every_steps`
    predictor: Literal["oracle", "learned"] = "oracle"
    #: scored_tweets_model_weight_fav (recap README)
    like_weight: float = Field(default=0.5, ge=0.0)
    #: scored_tweets_model_weight_retweet (recap README)
    reshare_weight: float = Field(default=1.0, ge=0.0)
    #: scored_tweets_model_weight_reply (recap README)
    reply_weight: float = Field(default=13.5, ge=0.0)
    #: scored_tweets_model_weight_good_profile_click ("opens the author profile and likes or replies"), the
    #: nearest published head to follow-after-engaging; xai-org/x-algorithm's weighted_scorer has a
    #: follow_author head but its weight lives in params the release does not include
    follow_weight: float = Field(default=12.0, ge=0.0)
    #: learned: refit on everything served so far every K steps (K)
    retrain_every_steps: int = Field(default=1, ge=1)
    #: learned, before an action has a model: `similarity` (P = similarity for every action) or `oracle`
    cold_start: Literal["similarity", "oracle"] = "similarity"


@register_mode
class EngagementRanker(NetworkSourcedRanker[EngagementConfig]):
    """x_algo's sources, rescored by predicted engagement; `learned` trains on what it served."""

    config_model = EngagementConfig

    def __init__(self, config: EngagementConfig, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self.agents_config = inputs.agents or AgentsConfig()
        self.appeal = inputs.appeal
        self.model = LearnedEngagementModel()
        self._served: dict[tuple[str, int], np.ndarray] = {}
        self._observed_steps = 0
        self._quality: dict[str, dict[int, float]] = {}

    @property
    def weights(self) -> tuple[float, float, float, float]:
        cfg = self.config
        return cfg.like_weight, cfg.reshare_weight, cfg.reply_weight, cfg.follow_weight

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        self._served = {}
        pools = self.candidate_pools(views, now)
        predicted = self.predict_many(views, pools, now)
        return [self._rank_pool(view, pool, p) for view, pool, p in zip(views, pools, predicted)]

    def _rank_pool(self, view: AgentView, pool: CandidatePool, probabilities: np.ndarray) -> list[RankedCandidate]:
        rows, similarity, is_oon = pool.rows, pool.similarity, pool.is_oon
        score = weighted_engagement_score(probabilities, self.weights)
        final, parts = rescored(score, is_oon, rows, self.retriever, self.config)
        order = descending_order(final, rows)[: self.feed_size]
        parts = {"similarity": similarity, "engagement_score": score} | parts
        parts |= {f"p_{name}": probabilities[:, i] for i, name in enumerate(PREDICTED_ACTIONS)}
        return self.pool_feed(view, pool, order, final, parts)

    def predict_many(self, views: list[AgentView], pools: list[CandidatePool], now: datetime) -> list[np.ndarray]:
        """Per agent, (n, 4) predicted P(like), P(reshare), P(reply), P(follow) of its candidates; the learned
        model predicts every agent's candidates in one call (a call costs milliseconds whatever its size)."""
        priors = [self._prior(view, pool) for view, pool in zip(views, pools)]
        if self.config.predictor == "oracle":
            return priors
        features = [self._features(view, pool, now) for view, pool in zip(views, pools)]
        for view, pool, vectors in zip(views, pools, features):
            for row, vector in zip(pool.rows, vectors):
                self._served[(view.agent_id, int(row))] = vector
        if not priors:
            return []
        predicted = self.model.predict(np.vstack(features), np.vstack(priors))
        return np.split(predicted, np.cumsum([len(p) for p in priors])[:-1])

    def _prior(self, view: AgentView, pool: CandidatePool) -> np.ndarray:
        """The oracle's probabilities, or (learned, cold start `similarity`) P = similarity for every action."""
        if self.config.predictor == "learned" and self.config.cold_start == "similarity":
            return np.repeat(pool.similarity[:, None], len(PREDICTED_ACTIONS), axis=1)
        posts = [self.retriever.posts[r] for r in pool.rows]
        agent = view.agent
        return oracle_probabilities(
            pool.similarity,
            np.array([p.has_media for p in posts], dtype=bool),
            np.array([p.likes for p in posts]),
            ~pool.is_oon,
            np.array([p.author_id in view.following for p in posts], dtype=bool),
            (agent.like_bias, agent.reshare_bias, agent.reply_bias),
            agent.archetype_vector(),
            [p.format for p in posts],
            self.agents_config,
            self.appeal.of([p.id for p in posts]) if self.appeal is not None else None,
            self._politics(agent.position, posts),
        )

    def _politics(self, position: float | None, posts: list[Post]) -> np.ndarray | None:
        """The behaviour model's political logit terms for this reader (None when politics is off)."""
        config = self.agents_config.politics
        if not config.enabled:
            return None
        political, slant, animosity, moral = post_columns(posts)
        reader = np.full(len(posts), np.nan if position is None else position)
        return engagement_offsets(reader, political, slant, animosity, moral, config)

    def _features(self, view: AgentView, pool: CandidatePool, now: datetime) -> np.ndarray:
        posts = [self.retriever.posts[r] for r in pool.rows]
        return candidate_features(
            pool.similarity,
            ~pool.is_oon,
            np.array([p.has_media for p in posts], dtype=bool),
            (epoch_microseconds(now) - self.retriever.timestamps_us[pool.rows]) / MICROSECONDS_PER_HOUR,
            np.array([p.likes for p in posts]),
            np.array([p.reshares for p in posts]),
            np.array([len(self.graph.followers(p.author_id)) for p in posts]),
            [p.format for p in posts],
        )

    def observe(self, feedback: ServedFeedback) -> None:
        """Learned: score the current model on this step's impressions (not yet trained on), log them, refit
        every `retrain_every_steps`."""
        if self.config.predictor != "learned" or len(feedback.rows) == 0:
            return
        features = np.array([self._served[(a, int(r))] for a, r in zip(feedback.agent_ids, feedback.rows)])
        labels = feedback.labels()
        prior = np.repeat(features[:, :1], len(PREDICTED_ACTIONS), axis=1)  # similarity, the column-0 feature
        if self.model.models:
            held_out = self.model.predict(features, prior)
            for i in self.model.models:
                for name, value in predictor_quality(held_out[:, i], labels[:, i]).items():
                    self._quality.setdefault(f"predictor_{name}_{PREDICTED_ACTIONS[i]}", {})[feedback.step] = value
        self.model.add(features, labels)
        self._observed_steps += 1
        if self._observed_steps % self.config.retrain_every_steps == 0:
            self.model.fit()

    def step_metrics(self) -> dict[str, dict[int, float]]:
        return {name: dict(values) for name, values in self._quality.items()}
