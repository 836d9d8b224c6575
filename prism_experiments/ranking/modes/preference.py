"""preference: spec 001's plain retrieval as a feed, the posts most similar to the agent's interests."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.flat import nearest_visible_flat
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode


class PreferenceConfig(ModeConfig):
    """No knobs: the feed size is `rag.feed_size`."""

    mode: Literal["preference"] = "preference"


@register_mode
class PreferenceRanker(Ranker[PreferenceConfig]):
    """Similarity to the agent's interests only: the RAG retriever's order (spec 001, FR-5.2)."""

    config_model = PreferenceConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        queries = np.stack([view.interest_vector for view in views])
        filters = self.step_filters(views, now)
        stamps = self.retriever.timestamps_us
        pairs, scores = nearest_visible_flat(
            self.retriever,
            queries,
            self.feed_size,
            keep=lambda pairs: filters.visible(pairs, stamps),
            first_fetch=2 * self.feed_size,
        )
        sources = ["similarity"] * len(pairs)
        return self.flat_feeds(views, pairs, scores, scores, sources, {"similarity": scores}, filters)
