"""preference: spec 001's plain retrieval as a feed, the posts most similar to the agent's interests."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.sourcing import nearest_visible


class PreferenceConfig(ModeConfig):
    """No knobs: the feed size is `rag.feed_size`."""

    mode: Literal["preference"] = "preference"


@register_mode
class PreferenceRanker(Ranker[PreferenceConfig]):
    """Similarity to the agent's interests only: the RAG retriever's order (spec 001, FR-5.2)."""

    config_model = PreferenceConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        queries = np.stack([view.interest_vector for view in views])
        nearest = nearest_visible(
            self.retriever,
            queries,
            self.feed_size,
            keep=lambda index, rows: self.visible(views[index], rows, now),
            first_fetch=2 * self.feed_size,
        )
        return [
            self.candidates(view, rows, scores, scores, ["similarity"] * len(rows), {"similarity": scores})
            for view, (rows, scores) in zip(views, nearest)
        ]
