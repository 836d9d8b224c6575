"""chronological: the reverse-chronological baseline of every peer simulator."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.domain import epoch_microseconds
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode
from prism_experiments.ranking.sourcing import age_hours, newest_first


class ChronologicalConfig(ModeConfig):
    """No knobs: every followed post is eligible however old, newest first."""

    mode: Literal["chronological"] = "chronological"


@register_mode
class ChronologicalRanker(Ranker[ChronologicalConfig]):
    """Newest first from followed accounts (and followees' reshares), backfilled with the newest
    posts overall: the reverse-chronological baseline of every peer simulator.

    final_score = 1 / (1 + age in hours), so newer is higher; `backfill` marks the filler.
    """

    config_model = ChronologicalConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        newest_overall = self._newest_overall(now)
        return [self._rank_one(view, now, newest_overall) for view in views]

    def _newest_overall(self, now: datetime) -> np.ndarray:
        stamps = self.retriever.timestamps_us
        rows = np.flatnonzero(stamps <= epoch_microseconds(now))
        return newest_first(self.retriever, rows)

    def _rank_one(self, view: AgentView, now: datetime, newest_overall: np.ndarray) -> list[RankedCandidate]:
        size = self.feed_size
        followed = self.retriever.rows_by_authors(sorted(view.following))
        reshared = np.fromiter(view.reshared.keys(), dtype=np.int64, count=len(view.reshared))
        network = newest_first(self.retriever, self.visible(view, np.union1d(followed, reshared), now))[:size]
        backfill: list[int] = []
        if len(network) < size:
            taken = set(network.tolist()) | set(view.excluded_rows.tolist())
            for row in newest_overall:  # newest first; stops as soon as the feed is full
                if int(row) not in taken:
                    backfill.append(int(row))
                    if len(network) + len(backfill) == size:
                        break
        rows = np.concatenate([network, np.asarray(backfill, dtype=np.int64)])
        ages = age_hours(self.retriever, rows, now)
        final = 1.0 / (1.0 + ages)
        is_backfill = np.arange(len(rows)) >= len(network)
        sources = ["backfill" if b else "recent" for b in is_backfill]
        base = self.similarities(view, rows)
        return self.candidates(
            view,
            rows,
            base,
            final,
            sources,
            {"similarity": base, "age_hours": ages, "backfill": is_backfill.astype(float)},
        )
