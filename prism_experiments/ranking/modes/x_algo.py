"""x_algo: seed 000's X-algorithm ranking.

1. in-network candidates (followed authors, and posts reshared by a followee), scored by similarity;
2. out-of-network candidates: a similarity query excluding followed authors and the agent's own posts;
3. similarity = 1 - distance/2; 4. OON x out_of_network_scale, reply x reply_scale;
5. author diversity by occurrence order; 6. sort by final score, take feed_size.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import IN_NETWORK, IN_NETWORK_RESHARE, OUT_OF_NETWORK, RankedCandidate
from prism_experiments.ranking.rescoring import descending_order, x_algo_scores
from prism_experiments.ranking.sourcing import nearest_visible, top_k


class XAlgorithmRanker(Ranker):
    mode = "x_algo"

    def in_network_candidates(self, view: AgentView, now: datetime) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Posts by followed authors plus posts reshared by followees, best `in_network_limit` by similarity.

        Scored exactly from the store's vectors: the same posts Chroma's `where author_id $in`
        query returns, without a 15-30 ms filtered query per agent.
        """
        by_author = self.retriever.rows_by_authors(sorted(view.following))
        reshared = np.fromiter(view.reshared.keys(), dtype=np.int64, count=len(view.reshared))
        rows = self.visible(view, np.union1d(by_author, reshared), now)
        rows, scores = top_k(rows, self.similarities(view, rows), self.config.in_network_limit)
        posts = self.retriever.posts
        via = [None if posts[row].author_id in view.following else view.reshared[int(row)] for row in rows]
        return rows, scores, via

    def out_of_network_candidates(self, views: list[AgentView], now: datetime
                                  ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per view, the best `out_of_network_limit` posts by similarity that are not in-network."""
        posts = self.retriever.posts
        limit = self.config.out_of_network_limit

        def keep(index: int, rows: np.ndarray) -> np.ndarray:
            view = views[index]
            rows = self.visible(view, rows, now)
            # followed authors and followees' reshares belong to the in-network source
            return np.array(
                [r for r in rows if posts[r].author_id not in view.following and int(r) not in view.reshared],
                dtype=np.int64,
            )

        queries = np.stack([view.interest_vector for view in views])
        return nearest_visible(self.retriever, queries, limit, keep, first_fetch=2 * limit)

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        out_of_network = self.out_of_network_candidates(views, now)
        return [self._rank_one(view, now, oon) for view, oon in zip(views, out_of_network)]

    def _rank_one(self, view: AgentView, now: datetime, oon: tuple[np.ndarray, np.ndarray]) -> list[RankedCandidate]:
        inn_rows, inn_scores, inn_via = self.in_network_candidates(view, now)
        oon_rows, oon_scores = oon
        fresh = ~np.isin(oon_rows, inn_rows)  # a post from both sources counts once, as in-network
        rows = np.concatenate([inn_rows, oon_rows[fresh]])
        base = np.concatenate([inn_scores, oon_scores[fresh]])
        is_oon = np.concatenate([np.zeros(len(inn_rows), bool), np.ones(int(fresh.sum()), bool)])
        via = inn_via + [None] * int(fresh.sum())
        posts = self.retriever.posts
        is_reply = np.array([posts[r].parent_id is not None for r in rows], dtype=bool)
        cfg = self.config
        final, parts = x_algo_scores(
            base, is_oon, is_reply, [posts[r].author_id for r in rows], rows,
            oon_scale=cfg.out_of_network_scale, reply_scale=cfg.reply_scale,
            decay=cfg.author_diversity_decay, floor=cfg.author_diversity_floor,
            formula=cfg.author_diversity_formula,
        )
        order = descending_order(final, rows)[: self.feed_size]
        sources = [
            OUT_OF_NETWORK if is_oon[i] else (IN_NETWORK_RESHARE if via[i] else IN_NETWORK) for i in order
        ]
        parts = {"similarity": base} | parts
        return self.candidates(
            view, rows[order], base[order], final[order], sources,
            {name: values[order] for name, values in parts.items()},
            in_network=~is_oon[order], via=[via[i] for i in order],
        )
