"""Which posts each agent was shown: one sorted array of (agent, store row) keys for the whole run."""

from __future__ import annotations

import numpy as np

from prism_experiments.feed_store.vector_table import ROW_BITS, ROW_MASK
from prism_experiments.group_order import group_bounds, ranges


class SeenRows:
    """Every (agent index, store row) an agent was shown, as sorted `agent << 32 | row` keys.

    A step reads its active agents' rows and adds its impressions with a few array operations, instead of a
    sorted-array union per agent and a dict entry per agent that was ever active.
    """

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._keys)

    def rows_of(self, agents: np.ndarray) -> list[np.ndarray]:
        """Per agent (ascending indices), the rows it was shown, ascending."""
        agents = np.asarray(agents, dtype=np.int64)
        if len(agents) == 0:
            return []
        starts = np.searchsorted(self._keys, agents << ROW_BITS)
        ends = np.searchsorted(self._keys, (agents + 1) << ROW_BITS)
        _, index = ranges(starts, ends)
        rows = self._keys[index] & ROW_MASK
        return np.split(rows, np.cumsum(ends - starts)[:-1])

    def add(self, agents: np.ndarray, rows: np.ndarray) -> None:
        """Agent `agents[i]` was shown row `rows[i]`."""
        if len(rows) == 0:
            return
        new = np.sort((np.asarray(agents, dtype=np.int64) << ROW_BITS) | np.asarray(rows, dtype=np.int64))
        merged = np.concatenate([self._keys, new])
        merged.sort(kind="stable")  # two sorted runs: a merge
        keep = group_bounds(merged)[0]  # the first of each run of equal keys
        self._keys = merged if keep.all() else merged[keep]
