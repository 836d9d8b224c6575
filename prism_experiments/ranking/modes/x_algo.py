"""x_algo: the X-algorithm ranking (REQ-XALGO-1 ... REQ-XALGO-5).

1. in-network candidates (followed authors, and posts reshared by a followee), scored by similarity;
2. out-of-network candidates: a similarity query excluding followed authors and the agent's own posts;
3. similarity = 1 - distance/2; 4. OON x out_of_network_scale, reply x reply_scale;
5. author diversity by occurrence order; 6. sort by final score, take feed_size.
With politics on, `like_minded_scale` < 1 demotes candidates from like-minded sources (REQ-POL-13: Nyhan et al.
2023's treatment); at its default 1.0 nothing is computed and the feeds are bit for bit as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.group_order import top_of_each_group
from prism_experiments.politics.identity import sides
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
    #: REQ-POL-13: a candidate whose author is on its reader's side (politics on) x this; 1.0 = off. Nyhan et al.
    #: 2023 (Nature 620:137) demoted content from like-minded sources; x_algo only
    like_minded_scale: float = Field(default=1.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _like_minded_scale_is_x_algo_only(self) -> XAlgoConfig:
        # the modes built on x_algo's candidates rank by their own scores and would ignore it silently
        if self.mode != "x_algo" and self.like_minded_scale != 1.0:
            raise ValueError(f"like_minded_scale is x_algo's only; mode {self.mode} takes 1.0 (got "
                             f"{self.like_minded_scale})")  # fmt: skip
        return self


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
        parts: dict[str, np.ndarray] = {}
        if cfg.like_minded_scale != 1.0:  # off: not a single extra operation, so the default feeds are unchanged
            like = self.like_minded_scale(views, pools.view, retriever.author_codes[rows])
            rescored = rescored * like
            parts["like_minded_scale"] = like
        # author diversity counts each author's candidates per view in the order of the rescored value
        authors = pair_keys(pools.view, retriever.author_codes[rows], max(retriever.author_count, 1))
        occurrence = occurrence_by_score(authors, rescored, rows)
        diversity = author_diversity_multiplier(
            occurrence, cfg.author_diversity_decay, cfg.author_diversity_floor, cfg.author_diversity_formula
        )
        final = rescored * diversity
        order = top_of_each_group(pools.view, final, self.feed_size)  # pools in (view, row) order: ties by row
        parts = {"similarity": base, "oon_scale": oon, "reply_scale": reply, "author_diversity": diversity} | parts
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

    def like_minded_scale(self, views: StepViews, view: np.ndarray, author_codes: np.ndarray) -> np.ndarray:
        """Per candidate, `like_minded_scale` where reader and author are on the same side (Nyhan et al. 2023's
        like-minded source), else 1; all 1 without the agents' positions (politics off)."""
        positions = self.inputs.positions
        if positions is None:
            return np.ones(len(view))
        authors = self.retriever.author_ids()
        author_side = sides(np.array([np.nan if (p := positions.get(a)) is None else p for a in authors], dtype=float))
        reader_side = sides(np.array([np.nan if a.position is None else a.position for a in views.agents], dtype=float))
        reader, author = reader_side[view], author_side[author_codes]
        return np.where((reader != 0) & (author == reader), self.config.like_minded_scale, 1.0)
