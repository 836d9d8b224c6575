"""A step's feeds as aligned arrays, one entry per impression, feeds one after another.

What the whole-step rankers produce and the engine, the event log and the deciders read: a step's ~10,000
impressions as a dozen arrays instead of a `RankedCandidate` and a components dict each (docs/bench.md, REQ-PERF).
`candidates` turns them back into `RankedCandidate` lists where a caller wants objects (`Ranker.rank_many`,
stochastic serving), `from_candidates` the other way (modes that rank agent by agent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from prism_experiments.domain import Post
from prism_experiments.ranking.candidate import SOURCES, RankedCandidate

#: a source label's code in `StepFeeds.source` (its index in `SOURCES`)
SOURCE_CODES: dict[str, int] = {name: code for code, name in enumerate(SOURCES)}
NO_VIA = -1


def source_codes(labels: Sequence[str]) -> np.ndarray:
    """The codes of source labels (`SOURCES`)."""
    return np.fromiter((SOURCE_CODES[label] for label in labels), dtype=np.int8, count=len(labels))


@dataclass(frozen=True)
class StepFeeds:
    """Feed f is entries `bounds[f]:bounds[f + 1]`, best first. `via` is the author code (`FeedRetriever.author_codes`)
    of the followee whose reshare made an entry in-network, -1 for none; `components` hold every score part, NaN
    where an entry's ranker did not report it; `similarity`, when the ranker has it, each entry's interest similarity
    (`FeedRetriever.interest_similarities` of the feed's agent), which the engine then need not compute again."""

    bounds: np.ndarray
    rows: np.ndarray
    base: np.ndarray
    final: np.ndarray
    in_network: np.ndarray
    source: np.ndarray
    via: np.ndarray
    components: dict[str, np.ndarray] = field(default_factory=dict)
    similarity: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def n_feeds(self) -> int:
        return len(self.bounds) - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.bounds)

    def feed_of_entry(self) -> np.ndarray:
        """Each entry's feed index."""
        return np.repeat(np.arange(self.n_feeds), self.lengths())

    def positions(self) -> np.ndarray:
        """Each entry's position in its feed."""
        return np.arange(len(self.rows)) - np.repeat(self.bounds[:-1], self.lengths())

    def feed_rows(self, feed: int) -> np.ndarray:
        return self.rows[self.bounds[feed] : self.bounds[feed + 1]]

    @classmethod
    def empty(cls, n_feeds: int) -> StepFeeds:
        no_floats = np.zeros(0)
        return cls(
            np.zeros(n_feeds + 1, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            no_floats,
            no_floats,
            np.zeros(0, dtype=bool),
            np.zeros(0, dtype=np.int8),
            np.zeros(0, dtype=np.int64),
        )

    @classmethod
    def grouped(
        cls,
        n_feeds: int,
        feed: np.ndarray,
        rows: np.ndarray,
        base: np.ndarray,
        final: np.ndarray,
        in_network: np.ndarray,
        source: np.ndarray,
        via: np.ndarray,
        components: Mapping[str, np.ndarray],
        similarity: np.ndarray | None = None,
    ) -> StepFeeds:
        """From entries already grouped by feed in ascending feed order (`feed` is each entry's feed index)."""
        bounds = np.searchsorted(feed, np.arange(n_feeds + 1)).astype(np.int64)
        return cls(
            bounds,
            np.asarray(rows, dtype=np.int64),
            np.asarray(base, dtype=np.float64),
            np.asarray(final, dtype=np.float64),
            np.asarray(in_network, dtype=bool),
            np.asarray(source, dtype=np.int8),
            np.asarray(via, dtype=np.int64),
            {name: np.asarray(values, dtype=np.float64) for name, values in components.items()},
            similarity,
        )

    @classmethod
    def from_candidates(cls, feeds: Sequence[Sequence[RankedCandidate]], code_of: Mapping[str, int]) -> StepFeeds:
        """The arrays of `RankedCandidate` feeds; `code_of` gives a resharer's author code."""
        shown = [cand for feed in feeds for cand in feed]
        n = len(shown)
        bounds = np.zeros(len(feeds) + 1, dtype=np.int64)
        np.cumsum([len(feed) for feed in feeds], out=bounds[1:])
        names: dict[str, None] = {}  # in order of first appearance
        for cand in shown:
            names.update(dict.fromkeys(cand.components))
        components = {
            name: np.fromiter((cand.components.get(name, np.nan) for cand in shown), dtype=np.float64, count=n)
            for name in names
        }
        return cls(
            bounds,
            np.fromiter((cand.row for cand in shown), dtype=np.int64, count=n),
            np.fromiter((cand.base_score for cand in shown), dtype=np.float64, count=n),
            np.fromiter((cand.final_score for cand in shown), dtype=np.float64, count=n),
            np.fromiter((cand.in_network for cand in shown), dtype=bool, count=n),
            source_codes([cand.source for cand in shown]),
            np.fromiter(
                (NO_VIA if cand.via_agent_id is None else code_of[cand.via_agent_id] for cand in shown),
                dtype=np.int64,
                count=n,
            ),
            components,
        )

    def candidates(self, posts: Sequence[Post], author_ids: Sequence[str]) -> list[list[RankedCandidate]]:
        """`RankedCandidate` feeds of these entries (`author_ids[code]` names a resharer)."""
        names = list(self.components)
        columns = [self.components[name].tolist() for name in names]
        parts = [
            {name: value for name, value in zip(names, values) if value == value}  # NaN: not reported
            for values in zip(*columns)
        ]
        if not names:
            parts = [{} for _ in range(len(self.rows))]
        labels = [SOURCES[code] for code in self.source.tolist()]
        via = [None if code == NO_VIA else author_ids[code] for code in self.via.tolist()]
        entries = [
            RankedCandidate(posts[row], b, f, n, source, part, row, v)
            for row, b, f, n, source, part, v in zip(
                self.rows.tolist(),
                self.base.tolist(),
                self.final.tolist(),
                self.in_network.tolist(),
                labels,
                parts,
                via,
            )
        ]
        bounds = self.bounds.tolist()
        return [entries[start:end] for start, end in pairwise(bounds)]
