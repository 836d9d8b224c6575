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
from prism_experiments.group_order import top_of_each_group
from prism_experiments.politics.behaviour import PostColumnCache, satisfaction
from prism_experiments.ranking.modes.x_algo import XAlgoConfig
from prism_experiments.ranking.network_sources import NetworkSourcedRanker
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.step_feeds import StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker


class StatedPreferenceConfig(XAlgoConfig):
    """x_algo's candidates ordered by predicted stated-preference satisfaction (Milli et al. 2025)."""

    mode: Literal["stated_preference"] = "stated_preference"  # type: ignore[assignment]


@register_mode
class StatedPreferenceRanker(NetworkSourcedRanker[StatedPreferenceConfig], WholeStepRanker[StatedPreferenceConfig]):
    """final_score is the predicted satisfaction; base_score the interest similarity. The whole step at once (x_algo's
    flat pools): the per-agent pools cost over twice x_algo's step at 10,000 agents (docs/bench.md)."""

    config_model = StatedPreferenceConfig

    def __init__(self, config: StatedPreferenceConfig, inputs: RankerInputs) -> None:
        super().__init__(config, inputs)
        self.politics = (inputs.agents or AgentsConfig()).politics
        self._columns = PostColumnCache()

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        pools = self.flat_pools(views, now)
        rows, similarity = pools.rows, pools.similarity
        political, slant, animosity, _ = self._columns.at(self.retriever.posts, rows)
        reader = np.array(
            [np.nan if not self.politics.enabled or a.position is None else a.position for a in views.agents],
            dtype=float,
        )
        score = satisfaction(similarity, reader[pools.view], political, slant, animosity, self.politics)
        # best first, ties to the lower row (pools are in (view, row) order): descending_order's rule, per view
        order = top_of_each_group(pools.view, score, self.feed_size)
        return StepFeeds.grouped(
            len(views),
            pools.view[order],
            rows[order],
            similarity[order],
            score[order],
            ~pools.is_oon[order],
            pools.sources()[order],
            pools.via[order],
            {"similarity": similarity[order], "satisfaction": score[order]},
            similarity=similarity[order],
        )
