"""Who reshared what: the in-network path of a reshared post ("reshared by someone you follow")."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class ReshareLog:
    """Append-only record of reshares, read by rankers, written by the simulation engine."""

    def __init__(self) -> None:
        self._rows_by_resharer: dict[str, dict[int, int]] = {}
        self._count = 0  # asked once per agent per step: kept, not recounted
        # every (resharer, row, step) in record order: what a whole-step ranker reads as arrays
        self._resharers: list[str] = []
        self._rows: list[int] = []
        self._steps: list[int] = []

    def record(self, resharer_id: str, row: int, step: int) -> None:
        rows = self._rows_by_resharer.setdefault(resharer_id, {})
        if row not in rows:
            rows[row] = step
            self._count += 1
            self._resharers.append(resharer_id)
            self._rows.append(row)
            self._steps.append(step)

    def entries(self, start: int = 0) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(resharer ids, rows, steps) of the reshares recorded from the `start`-th on, in record order."""
        return (
            self._resharers[start:],
            np.asarray(self._rows[start:], dtype=np.int64),
            np.asarray(self._steps[start:], dtype=np.int64),
        )

    def reshared_by(self, resharer_ids: Iterable[str]) -> dict[int, str]:
        """Store row -> the resharer who reshared it most recently, over the given resharers.

        Ties on the step go to the smallest resharer id, so the answer never depends on set order.
        """
        best: dict[int, tuple[int, str]] = {}
        rows_by = self._rows_by_resharer
        # ascending: on a tie the first (smallest) id stays; only resharers with reshares are visited
        for resharer in sorted(r for r in resharer_ids if r in rows_by):
            for row, step in rows_by[resharer].items():
                current = best.get(row)
                if current is None or step > current[0]:
                    best[row] = (step, resharer)
        return {row: resharer for row, (_, resharer) in best.items()}

    def __len__(self) -> int:
        return self._count
