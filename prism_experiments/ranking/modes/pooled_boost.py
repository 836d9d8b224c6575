"""pooled_boost: a global ranking of two pools (REQ-POOLED-1 ... REQ-POOLED-3) with a modest priority boost.

1. priority pool = in-network candidates (x_algo's sourcing), specific pool = out-of-network
   candidates (x_algo's batched similarity query); both scored by similarity to the interests;
2. priority items get min(score_ceiling, similarity + priority_boost); a post in both pools is kept
   once, with its higher score (a tie keeps the priority copy, as the spec's strict `<` does);
3. one global sort, take feed_size;
4. safety guarantee: while the feed holds fewer than min_priority_items priority items and the pool
   has more, the lowest-scoring specific item is replaced by the best priority item left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.ranking.base import AgentView
from prism_experiments.ranking.candidate import IN_NETWORK, IN_NETWORK_RESHARE, OUT_OF_NETWORK, RankedCandidate
from prism_experiments.ranking.mode_config import CandidateSourcingConfig
from prism_experiments.ranking.network_sources import NetworkSourcedRanker
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.rescoring import descending_order


class PooledBoostConfig(CandidateSourcingConfig):
    """The boost and safety guarantee (REQ-POOLED-2, REQ-POOLED-3); pool sizes are x_algo's in/out-of-network limits."""

    mode: Literal["pooled_boost"] = "pooled_boost"
    #: REQ-POOLED-2: priority score = min(score_ceiling, similarity + priority_boost), a modest boost (0.1)
    priority_boost: float = Field(default=0.1, ge=0.0, le=1.0)
    #: REQ-POOLED-2: the ceiling 1.0 of min(1.0, similarity + 0.1)
    score_ceiling: float = Field(default=1.0, gt=0.0, le=1.0)
    #: REQ-POOLED-3 safety guarantee: at least 1 priority item if any is available (0 turns it off)
    min_priority_items: int = Field(default=1, ge=0, le=20)


def pooled_scores(
    priority_rows: np.ndarray,
    priority_similarity: np.ndarray,
    specific_rows: np.ndarray,
    specific_similarity: np.ndarray,
    *,
    boost: float = 0.1,
    ceiling: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, similarity, score, is_priority) of the merged pools, priority rows first (REQ-POOLED-1).

    Priority score = min(ceiling, similarity + boost); specific score = similarity. A row in both
    pools keeps the higher score; on a tie it stays priority (the spec replaces only on `<`).
    """
    p_rows = np.asarray(priority_rows, dtype=np.int64)
    p_sim = np.asarray(priority_similarity, dtype=np.float64)
    s_rows = np.asarray(specific_rows, dtype=np.int64)
    s_sim = np.asarray(specific_similarity, dtype=np.float64)
    p_score = np.minimum(ceiling, p_sim + boost)
    # a specific copy wins only if it beats the priority copy of the same row
    position = {int(row): i for i, row in enumerate(p_rows)}
    p_keep = np.ones(len(p_rows), dtype=bool)
    s_keep = np.ones(len(s_rows), dtype=bool)
    for j, row in enumerate(s_rows):
        i = position.get(int(row))
        if i is None:
            continue
        if p_score[i] < s_sim[j]:
            p_keep[i] = False
        else:
            s_keep[j] = False
    rows = np.concatenate([p_rows[p_keep], s_rows[s_keep]])
    similarity = np.concatenate([p_sim[p_keep], s_sim[s_keep]])
    score = np.concatenate([p_score[p_keep], s_sim[s_keep]])
    is_priority = np.concatenate([np.ones(int(p_keep.sum()), bool), np.zeros(int(s_keep.sum()), bool)])
    return rows, similarity, score, is_priority


def apply_safety_guarantee(
    ranked: np.ndarray, is_priority: np.ndarray, feed_size: int, min_priority_items: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The feed (candidate indices, best first) and which of its items were forced in (REQ-POOLED-3).

    `ranked` orders every candidate best first. The feed is its first `feed_size`; if that holds fewer
    than min(min_priority_items, feed_size, pool size) priority items, the lowest-scoring specific
    items are dropped and the best priority items left out are appended in their place (they score
    no higher than anything kept, so the feed stays in score order).
    """
    ranked = np.asarray(ranked, dtype=np.int64)
    is_priority = np.asarray(is_priority, dtype=bool)
    feed, rest = ranked[:feed_size], ranked[feed_size:]
    wanted = min(min_priority_items, feed_size, int(is_priority.sum()))
    missing = wanted - int(is_priority[feed].sum())
    if missing <= 0:
        return feed, np.zeros(len(feed), dtype=bool)
    forced = rest[is_priority[rest]][:missing]
    dropped = np.flatnonzero(~is_priority[feed])[-missing:]
    kept = np.delete(feed, dropped)
    return np.concatenate([kept, forced]), np.arange(len(kept) + len(forced)) >= len(kept)


@register_mode
class PooledBoostRanker(NetworkSourcedRanker[PooledBoostConfig]):
    """REQ-POOLED-1 with in-network as the priority pool and out-of-network as the specific pool.

    Components: final = similarity + priority_boost (the boost actually applied, after the ceiling);
    forced_by_safety = 1 on the item the guarantee forced in; safety_fired, priority_count and
    specific_count describe the whole feed and repeat on each of its items.
    """

    config_model = PooledBoostConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        specific = self.out_of_network_candidates(views, now)
        return [self._rank_one(view, now, pool) for view, pool in zip(views, specific)]

    def _rank_one(
        self, view: AgentView, now: datetime, specific: tuple[np.ndarray, np.ndarray]
    ) -> list[RankedCandidate]:
        cfg = self.config
        p_rows, p_sim, p_via = self.in_network_candidates(view, now)
        rows, similarity, score, is_priority = pooled_scores(
            p_rows, p_sim, specific[0], specific[1], boost=cfg.priority_boost, ceiling=cfg.score_ceiling
        )
        feed, forced = apply_safety_guarantee(
            descending_order(score, rows), is_priority, self.feed_size, cfg.min_priority_items
        )
        via_of = dict(zip(p_rows.tolist(), p_via))
        via = [via_of[int(rows[i])] if is_priority[i] else None for i in feed]
        in_network = is_priority[feed]
        priority_count = float(in_network.sum())
        n = len(feed)
        components = {
            "similarity": similarity[feed],
            "priority_boost": score[feed] - similarity[feed],
            "forced_by_safety": forced.astype(np.float64),
            "safety_fired": np.full(n, float(forced.any())),
            "priority_count": np.full(n, priority_count),
            "specific_count": np.full(n, n - priority_count),
        }
        sources = [(IN_NETWORK_RESHARE if v else IN_NETWORK) if p else OUT_OF_NETWORK for p, v in zip(in_network, via)]
        return self.candidates(
            view, rows[feed], similarity[feed], score[feed], sources, components, in_network=in_network, via=via
        )
