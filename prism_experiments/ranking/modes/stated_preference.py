"""stated_preference: x_algo's candidates ranked by the satisfaction each would give its reader when asked, not by
predicted engagement (REQ-POL-12; docs/politics.md): the alternative timeline of Milli et al. 2025 (PNAS Nexus,
arXiv 2305.16941), "an alternative approach that ranks content based on users' stated preferences".

The predictor is the oracle: the satisfaction model's own value (`politics.behaviour.satisfaction`), as `engagement`'s
oracle predictor is the behaviour model's. Without politics the satisfaction is the interest fit alone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.agents import AgentsConfig
from prism_experiments.politics.behaviour import post_columns, satisfaction
from prism_experiments.ranking.base import AgentView
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.modes.x_algo import XAlgoConfig
from prism_experiments.ranking.network_sources import CandidatePool, NetworkSourcedRanker
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import descending_order


class StatedPreferenceConfig(XAlgoConfig):
    """x_algo's candidates ordered by predicted stated-preference satisfaction (Milli et al. 2025)."""

    mode: Literal["stated_preference"] = "stated_preference"  # type: ignore[assignment]


@register_mode
class StatedPreferenceRanker(NetworkSourcedRanker[StatedPreferenceConfig]):
    """final_score is the predicted satisfaction; base_score the interest similarity."""

    config_model = StatedPreferenceConfig

    def __init__(self, config: StatedPreferenceConfig, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self.politics = (inputs.agents or AgentsConfig()).politics

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        return [self._rank_pool(view, pool) for view, pool in zip(views, self.candidate_pools(views, now))]

    def _rank_pool(self, view: AgentView, pool: CandidatePool) -> list[RankedCandidate]:
        rows, similarity = pool.rows, pool.similarity
        political, slant, animosity, _ = post_columns([self.retriever.posts[r] for r in rows.tolist()])
        position = view.agent.position if self.politics.enabled and view.agent.position is not None else np.nan
        score = satisfaction(similarity, np.full(len(rows), position), political, slant, animosity, self.politics)
        order = descending_order(score, rows)[: self.feed_size]
        return self.pool_feed(view, pool, order, score, {"similarity": similarity, "satisfaction": score})
