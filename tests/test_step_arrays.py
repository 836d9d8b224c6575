"""The step loop's arrays: feeds as arrays and back, and the run's record of what each agent was shown."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from prism_experiments.domain import Post
from prism_experiments.ranking import RankedCandidate
from prism_experiments.ranking.step_feeds import StepFeeds
from prism_experiments.simulation.seen import SeenRows

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def posts(n: int) -> list[Post]:
    return [Post(id=f"p{i}", author_id=f"a{i % 3}", text=f"post {i}", timestamp=T0) for i in range(n)]


def test_feeds_survive_the_round_trip_through_arrays() -> None:
    store = posts(6)
    feeds = [
        [
            RankedCandidate(store[4], 0.9, 0.8, True, "in_network_reshare", {"similarity": 0.9}, 4, "a2"),
            RankedCandidate(store[1], 0.5, 0.4, False, "out_of_network", {"similarity": 0.5, "oon": 0.75}, 1),
        ],
        [],
        [RankedCandidate(store[0], 0.3, 0.3, True, "in_network", {}, 0)],
    ]
    arrays = StepFeeds.from_candidates(feeds, {"a0": 0, "a1": 1, "a2": 2})
    assert arrays.lengths().tolist() == [2, 0, 1] and arrays.positions().tolist() == [0, 1, 0]
    assert arrays.via.tolist() == [2, -1, -1] and arrays.feed_of_entry().tolist() == [0, 0, 2]
    assert np.isnan(arrays.components["oon"][[0, 2]]).all()
    assert arrays.candidates(store, ["a0", "a1", "a2"]) == feeds


def test_seen_rows_are_kept_per_agent_ascending_without_repeats() -> None:
    seen = SeenRows()
    assert [rows.tolist() for rows in seen.rows_of(np.array([0, 3]))] == [[], []]
    seen.add(np.array([3, 3, 0]), np.array([7, 2, 9]))
    seen.add(np.array([3, 1]), np.array([2, 2**31]))  # a row shown again is kept once; rows use all 32 bits
    assert [rows.tolist() for rows in seen.rows_of(np.array([0, 1, 2, 3]))] == [[9], [2**31], [], [2, 7]]
    assert len(seen) == 4 and seen.rows_of(np.array([], dtype=np.int64)) == []
