"""Post vectors as a table of distinct vectors and a row index into it: posts that share a text share one vector.

A pooled corpus (docs/corpus.md "Text pools") repeats texts: the huge preset's million posts hold about 96,000
distinct ones, so one float32 row per post (1.5 GB, then as much again in a run's fork) becomes one row per text
(150 MB) and an integer per post (docs/history/bench.md "The huge preset in less memory"). A post's vector is the
same bits either way: the embedder's cached vector of its text, normalised row by row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from prism_experiments.embeddings.embedder import EMBEDDING_DIM

#: bits of a store or vector-table row in an int64 key (rows stay below 2**32; the rest of the key holds an agent,
#: a query or an action)
ROW_BITS = 32
#: the row part of such a key
ROW_MASK = (1 << ROW_BITS) - 1


class VectorTable:
    """Distinct unit vectors, appended only; `share()` makes the next append copy them first (a fork reads the same
    array until either side writes)."""

    def __init__(self, capacity: int = 1024) -> None:
        self._array = np.zeros((capacity, EMBEDDING_DIM), dtype=np.float32)
        self._len = 0
        self._shared = False

    def __len__(self) -> int:
        return self._len

    @property
    def array(self) -> np.ndarray:
        """The vectors so far (a read-only view)."""
        view = self._array[: self._len]
        view.flags.writeable = False
        return view

    def append(self, vectors: np.ndarray) -> np.ndarray:
        """Add rows; returns their indices."""
        first, needed = self._len, self._len + len(vectors)
        if self._shared or needed > len(self._array):
            capacity = max(needed, 2 * len(self._array)) if needed > len(self._array) else len(self._array)
            grown = np.zeros((capacity, EMBEDDING_DIM), dtype=np.float32)
            grown[:first] = self._array[:first]
            self._array, self._shared = grown, False
        self._array[first:needed] = vectors
        self._len = needed
        return np.arange(first, needed, dtype=np.int64)

    def share(self) -> VectorTable:
        """A table over the same array; the first of the two to append copies it."""
        other = VectorTable.__new__(VectorTable)
        other._array, other._len, other._shared = self._array, self._len, True
        self._shared = True
        return other


class RowVectors:
    """Read-only per-row vectors: row r is `table[index[r]]`, gathered when asked.

    Indexing (an int, a slice, an array of rows) gathers those rows only; `np.asarray` (and `copy`, `astype`, `T`)
    builds the dense (rows, dim) matrix, for small stores and tests.
    """

    def __init__(self, table: np.ndarray, index: np.ndarray) -> None:
        self._table = table
        self._index = index

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._index), self._table.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self._table.dtype

    @property
    def ndim(self) -> int:
        return 2

    def __len__(self) -> int:
        return len(self._index)

    @property
    def table(self) -> np.ndarray:
        """The distinct vectors (row r's vector is `table[table_rows(r)]`)."""
        return self._table

    def table_rows(self, rows: Any) -> np.ndarray:
        """The table row of each of these rows."""
        return self._index[rows]

    def __getitem__(self, key: Any) -> np.ndarray:
        return self._table[self._index[key]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self._table[self._index]
        return dense if dtype is None else dense.astype(dtype)

    def copy(self) -> np.ndarray:
        return self._table[self._index]

    def astype(self, dtype: Any) -> np.ndarray:
        return self._table[self._index].astype(dtype)

    @property
    def T(self) -> np.ndarray:
        return self._table[self._index].T
