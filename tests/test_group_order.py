"""Grouped best-first orders (prism_experiments/group_order.py): the same permutation as `np.lexsort`, ties included."""

from __future__ import annotations

import numpy as np
import pytest

import prism_experiments.group_order as group_order
from prism_experiments.group_order import best_first_by_group, best_of_each_group, rank_within, top_of_each_group

#: scores that tie often, -0.0 with 0.0 among them (lexsort counts them equal)
TIED_SCORES = np.array([0.0, -0.0, 1e-300, 0.25, 1 / 3, 0.5, 0.75, 1.0])


def _cases(seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(group, score, row) triples, half of them with many tied scores, groups ascending."""
    rng = np.random.default_rng(seed)
    cases = []
    for case in range(count):
        n = int(rng.integers(1, 300))
        group = np.sort(rng.integers(0, int(rng.integers(1, 20)), n))
        score = rng.choice(TIED_SCORES, n) if case % 2 else rng.random(n)
        row = rng.integers(0, int(rng.integers(1, 40)), n)
        cases.append((group, score, row))
    return cases


def test_best_first_by_group_is_lexsort_with_ties_and_signed_zeros() -> None:
    for group, score, row in _cases(1, 400):
        shuffled = np.random.default_rng(len(score)).permutation(len(score))  # any input order
        group, score, row = group[shuffled], score[shuffled], row[shuffled]
        assert best_first_by_group(group, score, row).tolist() == np.lexsort((row, -score, group)).tolist()


def test_best_first_by_group_falls_back_to_lexsort_when_the_key_would_overflow() -> None:
    group = np.array([0, 1 << 40, 1 << 40, 0])
    row = np.array([1 << 30, 3, 2, 0])
    score = np.array([0.5, 0.25, 0.25, 0.5])
    assert best_first_by_group(group, score, row).tolist() == [3, 0, 2, 1]


@pytest.mark.parametrize("grid_cells", [1, 7, 1 << 23])
def test_each_groups_best_are_lexsorts_first_entries_ties_to_the_earlier(
    grid_cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the grids' size (one group per grid, a few, all of them in one)."""
    monkeypatch.setattr(group_order, "GRID_CELLS", grid_cells)
    for case, (group, score, _) in enumerate(_cases(2, 300)):
        limit = 1 + case % 12
        order = np.lexsort((np.arange(len(score)), -score, group))
        expected = order[rank_within(group[order]) < limit]
        assert top_of_each_group(group, score, limit).tolist() == expected.tolist()
        assert np.flatnonzero(best_of_each_group(group, score, limit)).tolist() == sorted(expected.tolist())


def test_a_tie_at_the_limit_goes_to_the_earlier_entries() -> None:
    group = np.array([0, 0, 0, 0, 1, 1])
    score = np.array([0.5, 0.9, 0.5, 0.5, 0.1, 0.2])
    assert best_of_each_group(group, score, 2).tolist() == [True, True, False, False, True, True]
    assert top_of_each_group(group, score, 2).tolist() == [1, 0, 5, 4]
    assert not best_of_each_group(group, score, 0).any()
    assert len(top_of_each_group(group[:0], score[:0], 3)) == 0


def test_rank_within_counts_from_each_groups_start() -> None:
    assert rank_within(np.array([3, 3, 5, 5, 5, 0])).tolist() == [0, 1, 0, 1, 2, 0]
