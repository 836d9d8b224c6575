"""random: a uniform sample of recent posts (REQ-FEED-5.3)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.ranking.flat import Pairs, pair_similarities
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.sourcing import concat_rows
from prism_experiments.ranking.step_feeds import SOURCE_CODES, StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker


class RandomConfig(ModeConfig):
    """How far back "recent" reaches."""

    mode: Literal["random"] = "random"
    #: REQ-FEED-5.3: the sample is drawn from posts of the last recent_window_hours
    recent_window_hours: float = Field(default=24.0, gt=0.0)


@register_mode
class RandomRanker(WholeStepRanker[RandomConfig]):
    """A uniform sample of recent posts (REQ-FEED-5.3); draws keyed by (agent, time).

    final_score is the uniform key that ordered the feed; base_score is still the similarity.
    """

    config_model = RandomConfig

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        rows, keys = [], []
        for agent, excluded in zip(
            views.agents, views.excluded_rows()
        ):  # each agent's own draws, keyed by (agent, time)
            rng = self.agent_rng(agent.id, now)
            drawn = self.retriever.random_rows(
                self.feed_size, now, self.config.recent_window_hours, rng, exclude_rows=excluded
            )
            rows.append(drawn)
            keys.append(np.sort(rng.random(len(drawn)))[::-1])
        lengths = [len(r) for r in rows]
        pairs = Pairs(np.repeat(np.arange(len(views)), lengths), concat_rows(rows))
        base = pair_similarities(self.retriever.vectors, views.queries, pairs)
        final = np.concatenate(keys) if keys else np.zeros(0)
        components = {"similarity": base, "random_key": final}
        source = np.full(len(pairs), SOURCE_CODES["random"], dtype=np.int8)
        return self.step_feeds(views, pairs, base, final, source, components, similarity=base)
