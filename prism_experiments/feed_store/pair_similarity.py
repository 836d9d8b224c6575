"""Exact similarities of (query, post vector) pairs, and a memo of them keyed by (query, vector).

`pair_dot_similarities` is the one kernel: float32 rows widened inside a float64 product with their query, each
product row summed on its own (numpy's pairwise sum), so a pair's value is the same bits whichever pairs are scored
with it. The memo keeps each (query, table row)'s value: a post's vector and an agent's interest vector never
change, and a research step asks again for most of the previous step's in-network pairs (x_algo at 10,000 agents:
3.5 million pairs over 48 steps, 0.4 million of them distinct; docs/history/bench.md).
"""

from __future__ import annotations

import numpy as np

from prism_experiments.feed_store.vector_table import ROW_BITS, ROW_MASK

#: pairs per gathered product (a few MB: stays in cache)
PAIR_CHUNK = 1024
#: remembered pairs at most (16 bytes each); past it the memo starts again from the pairs of the call
MEMO_MAX_PAIRS = 1 << 22


def similarity_from_dot(dot: np.ndarray) -> np.ndarray:
    """The similarity of unit vectors: distance = 1 - cos, so 1 - d/2 = (1 + cos) / 2, clipped to [0, 1]."""
    return np.clip((1.0 + np.asarray(dot, dtype=np.float64)) / 2.0, 0.0, 1.0)


def pair_dot_similarities(
    table: np.ndarray, table_rows: np.ndarray, queries64: np.ndarray, query_index: np.ndarray
) -> np.ndarray:
    """`similarity_from_dot` of `table[table_rows[i]]` with `queries64[query_index[i]]` for each pair i.

    In chunks of `PAIR_CHUNK`: `np.multiply(..., dtype=float64)` widens the float32 rows inside the product, as
    `np.asarray(rows, float64) * query` would, and each product row is summed alone, so a pair's value does not
    depend on its chunk.
    """
    out = np.empty(len(table_rows))
    for start in range(0, len(table_rows), PAIR_CHUNK):
        end = start + PAIR_CHUNK
        products = np.multiply(table[table_rows[start:end]], queries64[query_index[start:end]], dtype=np.float64)
        out[start:end] = products.sum(axis=1)
    return similarity_from_dot(out)


class SimilarityMemo:
    """`pair_dot_similarities` remembered per (query vector, table row): sorted int64 keys (query code << 32 | row)
    and their values. Valid for one append-only vector table (a row's vector never changes)."""

    def __init__(self, max_pairs: int = MEMO_MAX_PAIRS) -> None:
        self.max_pairs = max_pairs
        self._code_of: dict[bytes, int] = {}
        self._queries = np.zeros((0, 0))
        self._keys = np.zeros(0, dtype=np.int64)
        self._values = np.zeros(0)

    def __len__(self) -> int:
        return len(self._keys)

    def similarities(
        self, table: np.ndarray, table_rows: np.ndarray, queries: np.ndarray, query_index: np.ndarray
    ) -> np.ndarray:
        """`pair_dot_similarities(table, table_rows, queries, query_index)`, each distinct pair computed once ever."""
        if len(table_rows) == 0:
            return np.zeros(0)
        codes = self._query_codes(np.asarray(queries, dtype=np.float64))
        keys = (codes[query_index] << ROW_BITS) | np.asarray(table_rows, dtype=np.int64)
        order = np.argsort(keys)
        in_order = keys[order]
        first = np.empty(len(in_order), dtype=bool)
        first[0] = True
        np.not_equal(in_order[1:], in_order[:-1], out=first[1:])
        distinct = in_order[first]
        at = np.searchsorted(self._keys, distinct)
        known = at < len(self._keys)
        known[known] = self._keys[at[known]] == distinct[known]
        values = np.empty(len(distinct))
        values[known] = self._values[at[known]]
        new = np.flatnonzero(~known)
        if len(new):
            new_keys = distinct[new]
            values[new] = pair_dot_similarities(table, new_keys & ROW_MASK, self._queries, new_keys >> ROW_BITS)
            self._remember(at[new], new_keys, values[new])
        out = np.empty(len(keys))
        out[order] = values[np.cumsum(first) - 1]
        return out

    def _query_codes(self, queries64: np.ndarray) -> np.ndarray:
        """Each query's code (its bytes' order of first appearance), new queries remembered."""
        code_of, before = self._code_of, len(self._code_of)
        found = (code_of.setdefault(query.tobytes(), len(code_of)) for query in queries64)
        codes = np.fromiter(found, dtype=np.int64, count=len(queries64))
        if len(code_of) > before:
            fresh = np.flatnonzero(codes >= before)
            _, first = np.unique(codes[fresh], return_index=True)
            added = queries64[fresh[first]]  # codes before + 0, 1, ... in order
            self._queries = added if before == 0 else np.concatenate([self._queries, added])
        return codes

    def _remember(self, at: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
        if len(self._keys) + len(keys) > self.max_pairs:
            self._keys, self._values = keys, values
        else:
            self._keys, self._values = np.insert(self._keys, at, keys), np.insert(self._values, at, values)
