"""chronological: the reverse-chronological baseline of every peer simulator."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.domain import epoch_microseconds
from prism_experiments.group_order import rank_within
from prism_experiments.ranking.flat import Pairs, pair_keys, pair_similarities
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.sourcing import age_hours, concat_rows, in_sorted, newest_first, sorted_union
from prism_experiments.ranking.step_feeds import SOURCE_CODES, StepFeeds
from prism_experiments.ranking.whole_step import StepViews, WholeStepRanker


class ChronologicalConfig(ModeConfig):
    """No knobs: every followed post is eligible however old, newest first."""

    mode: Literal["chronological"] = "chronological"


@register_mode
class ChronologicalRanker(WholeStepRanker[ChronologicalConfig]):
    """Newest first from followed accounts (and followees' reshares), backfilled with the newest
    posts overall: the reverse-chronological baseline of every peer simulator.

    final_score = 1 / (1 + age in hours), so newer is higher; `backfill` marks the filler.
    """

    config_model = ChronologicalConfig

    def _rank_step(self, views: StepViews, now: datetime) -> StepFeeds:
        retriever, size = self.retriever, self.feed_size
        count, stamps = len(retriever), retriever.timestamps_us
        filters = views.filters
        # followed authors' posts and followees' reshares, visible, newest first (ties: later row first)
        network = views.in_network_pairs(retriever)
        order = np.lexsort((-network.row, -stamps[network.row], network.view))
        network = network.take(order[rank_within(network.view[order]) < size])
        # backfill: the newest posts overall not already in the feed nor excluded, for views left short
        short = np.bincount(network.view, minlength=len(views))
        newest = self._newest_overall(now)
        taken = sorted_union(pair_keys(network.view, network.row, count), filters.excluded)
        fill_view, fill_row = [], []
        for v in np.flatnonzero(short < size).tolist():
            need = size - int(short[v])
            # the first need + (taken rows of this view) newest posts always hold `need` untaken ones, if any
            mine = taken[np.searchsorted(taken, v * count) : np.searchsorted(taken, (v + 1) * count)]
            head = newest[: need + len(mine)]
            head = head[~in_sorted(pair_keys(np.full(len(head), v), head, count), mine)][:need]
            fill_view.append(np.full(len(head), v))
            fill_row.append(head)
        backfill = Pairs(concat_rows(fill_view), concat_rows(fill_row))
        view = np.concatenate([network.view, backfill.view])
        order = np.argsort(view, kind="stable")  # per view: its network posts, then its backfill
        pairs = Pairs(view[order], np.concatenate([network.row, backfill.row])[order])
        is_backfill = (np.arange(len(view)) >= len(network))[order]
        ages = age_hours(retriever, pairs.row, now)
        final = 1.0 / (1.0 + ages)
        base = pair_similarities(retriever.vectors, views.queries, pairs)
        source = np.where(is_backfill, SOURCE_CODES["backfill"], SOURCE_CODES["recent"]).astype(np.int8)
        components = {"similarity": base, "age_hours": ages, "backfill": is_backfill.astype(float)}
        return self.step_feeds(views, pairs, base, final, source, components, similarity=base)

    def _newest_overall(self, now: datetime) -> np.ndarray:
        stamps = self.retriever.timestamps_us
        rows = np.flatnonzero(stamps <= epoch_microseconds(now))
        return newest_first(self.retriever, rows)
