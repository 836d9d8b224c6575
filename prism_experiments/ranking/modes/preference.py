"""preference: plain retrieval as a feed (REQ-FEED-5.2), the posts most similar to the agent's interests."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.ranking.flat import nearest_visible_flat
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.step_feeds import SOURCE_CODES, StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker


class PreferenceConfig(ModeConfig):
    """No knobs: the feed size is `rag.feed_size`."""

    mode: Literal["preference"] = "preference"


@register_mode
class PreferenceRanker(WholeStepRanker[PreferenceConfig]):
    """Similarity to the agent's interests only: the RAG retriever's order (REQ-FEED-5.2)."""

    config_model = PreferenceConfig

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        filters, stamps = views.filters, self.retriever.timestamps_us
        pairs, scores = nearest_visible_flat(
            self.retriever,
            views.queries,
            self.feed_size,
            keep=lambda pairs: filters.visible(pairs, stamps),
            first_fetch=2 * self.feed_size,
        )
        source = np.full(len(pairs), SOURCE_CODES["similarity"], dtype=np.int8)
        return self.step_feeds(views, pairs, scores, scores, source, {"similarity": scores}, similarity=scores)
