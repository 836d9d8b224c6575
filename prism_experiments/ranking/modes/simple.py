"""The three baselines: preference (seed 001), random (seed 001), chronological."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from prism_experiments.domain import epoch_microseconds
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.sourcing import age_hours, nearest_visible, newest_first


class PreferenceRanker(Ranker):
    """Similarity to the agent's interests only: the RAG retriever's order (seed 001, FR-5.2)."""

    mode = "preference"

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        queries = np.stack([view.interest_vector for view in views])
        nearest = nearest_visible(
            self.retriever, queries, self.feed_size,
            keep=lambda index, rows: self.visible(views[index], rows, now),
            first_fetch=2 * self.feed_size,
        )
        return [
            self.candidates(view, rows, scores, scores, ["similarity"] * len(rows), {"similarity": scores})
            for view, (rows, scores) in zip(views, nearest)
        ]


class RandomRanker(Ranker):
    """A uniform sample of recent posts (seed 001, FR-5.3); draws keyed by (agent, time).

    final_score is the uniform key that ordered the feed; base_score is still the similarity.
    """

    mode = "random"

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        feeds = []
        for view in views:
            rng = self.agent_rng(view.agent_id, now)
            rows = self.retriever.random_rows(
                self.feed_size, now, self.config.recent_window_hours, rng, exclude_rows=view.excluded_rows
            )
            keys = np.sort(rng.random(len(rows)))[::-1]
            base = self.similarities(view, rows)
            feeds.append(self.candidates(view, rows, base, keys, ["random"] * len(rows),
                                         {"similarity": base, "random_key": keys}))
        return feeds


class ChronologicalRanker(Ranker):
    """Newest first from followed accounts (and followees' reshares), backfilled with the newest
    posts overall: the reverse-chronological baseline of every peer simulator.

    final_score = 1 / (1 + age in hours), so newer is higher; `backfill` marks the filler.
    """

    mode = "chronological"

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
        return self.candidates(view, rows, base, final, sources,
                               {"similarity": base, "age_hours": ages, "backfill": is_backfill.astype(float)})
