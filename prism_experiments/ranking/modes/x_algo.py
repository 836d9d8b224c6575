"""x_algo: the X-algorithm ranking (REQ-XALGO-1 ... REQ-XALGO-5).

1. in-network candidates (followed authors, and posts reshared by a followee), scored by similarity;
2. out-of-network candidates: a similarity query excluding followed authors and the agent's own posts;
3. similarity = 1 - distance/2; 4. OON x out_of_network_scale, reply x reply_scale;
5. author diversity by occurrence order; 6. sort by final score, take feed_size.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.group_order import top_of_each_group
from prism_experiments.ranking.flat import occurrence_by_score, pair_keys
from prism_experiments.ranking.mode_config import CandidateSourcingConfig
from prism_experiments.ranking.network_sources import NetworkSourcedRanker
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import author_diversity_multiplier, scale_factors, x_algo_scores
from prism_experiments.ranking.step_feeds import StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker


class XAlgoConfig(CandidateSourcingConfig):
    """The scale factors and author diversity (REQ-XALGO-3, REQ-XALGO-4) (its candidate limits come from the base)."""

    mode: Literal["x_algo"] = "x_algo"
    #: REQ-XALGO-3: out-of-network candidates x 0.75
    out_of_network_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: REQ-XALGO-3: replies (parent_id set) x 0.75
    reply_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: REQ-XALGO-4: score *= max(floor, decay^occurrence)
    author_diversity_decay: float = Field(default=0.5, gt=0.0, le=1.0)
    #: REQ-XALGO-4: the floor of the author-diversity multiplier
    author_diversity_floor: float = Field(default=0.25, ge=0.0, le=1.0)
    #: `spec`: max(floor, decay^k) (REQ-XALGO-4); `home_mixer`: (1 - floor) * decay^k + floor
    #: (twitter/the-algorithm, home-mixer DiversityDiscountProvider)
    author_diversity_formula: Literal["spec", "home_mixer"] = "spec"


def rescored(
    base: np.ndarray, is_oon: np.ndarray, rows: np.ndarray, retriever: FeedRetriever, cfg: XAlgoConfig
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rescoring of `base` scores (REQ-XALGO-5) with `cfg`'s OON and reply scales and author diversity."""
    return x_algo_scores(
        base,
        is_oon,
        retriever.is_reply[rows],
        retriever.author_codes[rows].tolist(),  # author diversity compares authors: codes stand for ids
        rows,
        oon_scale=cfg.out_of_network_scale,
        reply_scale=cfg.reply_scale,
        decay=cfg.author_diversity_decay,
        floor=cfg.author_diversity_floor,
        formula=cfg.author_diversity_formula,
    )


@register_mode
class XAlgorithmRanker(NetworkSourcedRanker[XAlgoConfig], WholeStepRanker[XAlgoConfig]):
    """In-network and out-of-network candidates, rescored (OON, reply), author-diversified."""

    config_model = XAlgoConfig

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        pools = self.flat_pools(views, now)
        cfg, retriever = self.config, self.retriever
        rows, base = pools.rows, pools.similarity
        oon, reply = scale_factors(pools.is_oon, retriever.is_reply[rows], cfg.out_of_network_scale, cfg.reply_scale)
        rescored = base * oon * reply
        # author diversity counts each author's candidates per view in the order of the rescored value
        authors = pair_keys(pools.view, retriever.author_codes[rows], max(retriever.author_count, 1))
        occurrence = occurrence_by_score(authors, rescored, rows)
        diversity = author_diversity_multiplier(
            occurrence, cfg.author_diversity_decay, cfg.author_diversity_floor, cfg.author_diversity_formula
        )
        final = rescored * diversity
        order = top_of_each_group(pools.view, final, self.feed_size)  # pools in (view, row) order: ties by row
        parts = {"similarity": base, "oon_scale": oon, "reply_scale": reply, "author_diversity": diversity}
        return StepFeeds.grouped(
            len(views),
            pools.view[order],
            rows[order],
            base[order],
            final[order],
            ~pools.is_oon[order],
            pools.sources()[order],
            pools.via[order],
            {name: values[order] for name, values in parts.items()},
            similarity=base[order],  # the pool's similarity is the interest similarity
        )
