"""A step's candidates as flat arrays (ranking/flat.py, ranking/sourcing.py): the per-view results, by other means."""

from __future__ import annotations

import numpy as np

from prism_experiments.ranking.flat import Pairs, best_per_view, flat_keys, occurrence_by_score
from prism_experiments.ranking.rescoring import occurrence_in_order
from prism_experiments.ranking.sourcing import sorted_union, top_k


def test_sorted_union_is_union1d_for_sorted_unsorted_and_repeated_inputs() -> None:
    rng = np.random.default_rng(1)
    for case in range(600):
        a, b = rng.integers(0, 60, int(rng.integers(0, 40))), rng.integers(0, 60, int(rng.integers(0, 40)))
        if case % 3:
            a = np.unique(a)  # strictly ascending: merged without a sort
        if case % 2:
            b = np.unique(b)
        union = sorted_union(a, b)
        assert union.dtype == np.int64 and union.tolist() == np.union1d(a, b).tolist()


def test_flat_keys_are_sorted_whether_or_not_each_part_is() -> None:
    parts = [np.array([4, 9]), np.array([], dtype=np.int64), np.array([7, 1, 3])]
    assert flat_keys(parts, 10).tolist() == [4, 9, 21, 23, 27]
    assert flat_keys([np.array([1, 3]), np.array([0, 2])], 10).tolist() == [1, 3, 10, 12]


def test_best_per_view_holds_top_k_of_each_view() -> None:
    rng = np.random.default_rng(2)
    view = np.repeat(np.arange(30), rng.integers(0, 25, 30))
    row = np.concatenate([np.sort(rng.choice(500, (view == v).sum(), replace=False)) for v in range(30)])
    scores = rng.choice([0.1, 0.2, 0.3, 0.4], len(view))  # many ties: broken by row
    chosen = best_per_view(Pairs(view, row), scores, 7)
    for v in range(30):
        mine = view == v
        expected, _ = top_k(row[mine], scores[mine], 7)
        assert sorted(row[chosen][view[chosen] == v].tolist()) == sorted(expected.tolist())


def test_occurrence_by_score_counts_each_authors_better_candidates_per_view() -> None:
    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(1, 80))
        view, author = rng.integers(0, 4, n), rng.integers(0, 6, n)
        row, score = rng.permutation(n), rng.choice([0.25, 0.5, 0.75], n)
        got = occurrence_by_score(view * 6 + author, score, row)
        for v in range(4):
            mine = np.flatnonzero(view == v)
            order = np.lexsort((row[mine], -score[mine]))
            assert got[mine].tolist() == occurrence_in_order(author[mine].tolist(), order).tolist()
