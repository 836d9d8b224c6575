"""FeedRetriever: embeds, indexes and retrieves posts (REQ-FEED-3 ... REQ-FEED-5).

ChromaDB holds the vectors and the metadata and answers similarity queries. Next to it the
retriever keeps the posts it indexed in memory, with their vectors, timestamps and authors as
arrays: recency windows, "posts by these authors" and live engagement counters are lookups there,
not Chroma scans.

With `rag.exact_search` on an in-memory (ephemeral) client, similarity queries are exact numpy
scans and Chroma is never asked, so its collection (and the HNSW build, most of a run's store
cost: docs/bench.md) is created only when something asks Chroma: a `where` filter, or code reading the
collection. It is then filled with every post so far and written through from there on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from itertools import chain, pairwise
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from prism_experiments.domain import Post, as_utc, epoch_microseconds, interest_query_text
from prism_experiments.embeddings.embedder import EMBEDDING_DIM, Embedder, normalize_rows
from prism_experiments.feed_store.config import FeedStoreConfig
from prism_experiments.feed_store.pair_similarity import SimilarityMemo, pair_dot_similarities, similarity_from_dot
from prism_experiments.feed_store.store import (
    max_batch_size,
    metadata_to_post,
    open_collection,
    post_to_metadata,
)
from prism_experiments.feed_store.vector_table import RowVectors, VectorTable
from prism_experiments.group_order import best_first_by_group

Where = dict[str, Any]


def similarity_from_distance(distance: np.ndarray | float) -> np.ndarray | float:
    """Cosine distance in [0, 2] -> similarity in [0, 1]: 1 - d/2 (REQ-XALGO-2).

    Clipped to [0, 1]: float32 rounding puts an identical text a hair past distance 0 (REQ-XALGO-2's
    "handle zero distances").
    """
    return np.clip(1.0 - np.asarray(distance, dtype=np.float64) / 2.0, 0.0, 1.0)


#: float32 dot products of unit vectors over 384 dimensions are off by far less (about 1e-7)
ROUGH_TOLERANCE = 1e-4
#: a query scanned again because it asked for more than was kept keeps this many times what it asked for
RESCAN_GROWTH = 4
ROUGH_BLOCK_VALUES = 2**25  # rough float32 scores held at once by an exact query (128 MB)


def exact_similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`similarity_from_dot` of unit rows to a unit query in float64, each row summed on its own (numpy's
    pairwise sum): a post's similarity is the same bits whatever rows are scored with it, however many
    BLAS threads and whichever CPU (a BLAS product's last bits move with all three)."""
    products = np.asarray(vectors, dtype=np.float64) * np.asarray(query, dtype=np.float64)
    return similarity_from_dot(products.sum(axis=1))


class FeedRetriever:
    """Owns one Chroma collection and the in-memory index of the posts in it."""

    def __init__(self, config: FeedStoreConfig, embedder: Embedder | None = None) -> None:
        self.config = config
        self.embedder = (
            embedder
            if embedder is not None
            else Embedder(config.embedding_model, config.cache_dir, backend=config.encoder_backend)
        )
        # where this retriever writes; None until first needed when Chroma is not queried (module doc)
        self._handle: Any | None = None if _lazy(config) else open_collection(config)
        self._synced = 0  # own posts (rows after the shared ones) already written into the collection
        # the retrievers this one was forked from and how many of their own posts it inherited: their
        # collections are read here, never written
        self._shared: list[FeedRetriever] = []
        self._shared_counts: list[int] = []
        self._posts: list[Post] = []
        # rows below this one hold Post objects shared with another store (a fork's parent, the caller's corpus): a
        # change to one goes to a copy made then (`own_post`), so no store copies every post up front
        self._shared_posts = 0
        self._owned: set[int] = set()  # shared rows copied since
        self._row_of: dict[str, int] = {}
        # float32 only: exact similarities convert the rows they need to float64 (the same values a
        # float64 copy would hold, without its 3 GB at a million posts: docs/bench.md). One vector per distinct
        # text the embedder gave (`_text_rows`), one per post given its own; row r's is `_table[_vector_rows[r]]`
        self._table = VectorTable()
        self._vector_rows = np.zeros(1024, dtype=np.int64)
        self._text_rows: dict[str, int] = {}
        self._rows_are_table = True  # row r's vector is table row r (no text shared): no gather needed
        self._timestamps_us = np.zeros(1024, dtype=np.int64)
        self._author_rows: dict[str, list[int]] = {}
        # per row, an integer code of its author and whether it is a reply: what rankers test for
        # every candidate, as arrays rather than a Post attribute lookup per row
        self._author_code_of: dict[str, int] = {}
        self._author_ids: list[str] = []  # by code: `author_ids()`
        self._author_codes = np.zeros(1024, dtype=np.int64)
        self._is_reply = np.zeros(1024, dtype=bool)
        self._rng = np.random.default_rng(config.random_seed)
        self._interest_vectors: dict[tuple[str, ...], np.ndarray] = {}
        # query vector bytes -> (its best rows, their similarities, store size they cover): _nearest_exact
        self._nearest: dict[bytes, tuple[np.ndarray, np.ndarray, int]] = {}
        self._window: tuple[int, int, int] | None = None
        self._window_answer = np.zeros(0, dtype=np.int64)
        self._by_code_key: tuple[int, int] | None = None
        self._by_code = (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
        self._similarity_memo = SimilarityMemo()
        if self._handle is not None and self._handle.count() > 0:
            self._load_existing()

    @property
    def _collection(self) -> Any:
        """This retriever's own Chroma collection, opened and filled with its own posts on first use."""
        if self._handle is None:
            self._handle = open_collection(self.config)
        first = sum(self._shared_counts) + self._synced
        if first < len(self._posts):
            own = slice(first, len(self._posts))
            self._write_to_collection(self._handle, self._posts[own], self._vectors_at(own))
            self._synced = len(self._posts) - sum(self._shared_counts)
        return self._handle

    def fork(self, collection_name: str) -> FeedRetriever:
        """A retriever over the same posts that writes into its own new collection.

        The child reads this retriever's collection without copying its index, gets the posts as they
        are now (engagement counters included: each side copies a post on its first change, `own_post`)
        and copies of the in-memory arrays; whatever it adds or changes never reaches this one. A sweep
        builds a corpus index once per process and forks it per run.
        """
        child = FeedRetriever.__new__(FeedRetriever)
        child.config = self.config.model_copy(update={"collection_name": collection_name})
        child.embedder = self.embedder
        child._handle = None if _lazy(child.config) else open_collection(child.config)
        child._synced = 0
        child._shared = [*self._shared, self]
        child._shared_counts = [*self._shared_counts, len(self) - sum(self._shared_counts)]
        child._posts = list(self._posts)
        child._shared_posts, child._owned = len(self._posts), set()
        self.share_posts()  # the parent's later changes must not reach the child either
        child._row_of = dict(self._row_of)
        child._table = self._table.share()  # the vectors are copied by the first side that adds one
        child._vector_rows = self._vector_rows.copy()
        child._text_rows = dict(self._text_rows)
        child._rows_are_table = self._rows_are_table
        child._timestamps_us = self._timestamps_us.copy()
        child._author_rows = {author: list(rows) for author, rows in self._author_rows.items()}
        child._author_code_of = dict(self._author_code_of)
        child._author_ids = list(self._author_ids)
        child._author_codes = self._author_codes.copy()
        child._is_reply = self._is_reply.copy()
        child._rng = np.random.default_rng(child.config.random_seed)
        child._interest_vectors = dict(self._interest_vectors)
        child._nearest = dict(self._nearest)  # valid for the child too: its rows extend these
        child._window, child._window_answer = None, np.zeros(0, dtype=np.int64)
        child._by_code_key, child._by_code = None, self._by_code
        child._similarity_memo = SimilarityMemo()  # its table rows past the fork are its own
        return child

    def drop_collection(self) -> None:
        """Delete this retriever's own collection (a forked run's additions); shared ones stay."""
        if self._handle is None:
            return  # never opened: nothing to free
        try:
            self._handle._client.delete_collection(self._handle.name)
        except Exception:  # already gone, or a client without delete: nothing to free
            pass
        # a later need (a fork still reading this store, say) opens and fills a new one
        self._handle, self._synced = None, 0

    # ----------------------------------------------------------------- the index
    def __len__(self) -> int:
        return len(self._posts)

    @property
    def posts(self) -> Sequence[Post]:
        return self._posts

    @property
    def vectors(self) -> RowVectors:
        """Unit vectors of every post, one row each, in insertion order (read only; indexing gathers rows)."""
        return RowVectors(self._table.array, self._vector_rows[: len(self._posts)])

    def dense_vectors(self) -> np.ndarray:
        """Every post's vector as one (rows, dim) array: a view when no post shares a vector, else a gathered copy."""
        count = len(self._posts)
        return self._table.array[:count] if self._rows_are_table else self._vectors_at(slice(0, count))

    def _vectors_at(self, rows: np.ndarray | slice) -> np.ndarray:
        """The vectors of these rows (a gathered copy)."""
        return self._table.array[self._vector_rows[rows]]

    @property
    def timestamps_us(self) -> np.ndarray:
        return self._timestamps_us[: len(self._posts)]

    @property
    def author_codes(self) -> np.ndarray:
        """Per row, its author's code (`author_codes_of`)."""
        return self._author_codes[: len(self._posts)]

    @property
    def is_reply(self) -> np.ndarray:
        """Per row, whether the post is a reply (has a parent)."""
        return self._is_reply[: len(self._posts)]

    @property
    def author_count(self) -> int:
        """How many distinct authors have posts here (grows only)."""
        return len(self._author_code_of)

    @property
    def author_code_of(self) -> Mapping[str, int]:
        """Author id -> its code (read only)."""
        return self._author_code_of

    def author_ids(self) -> list[str]:
        """Author ids by code (`author_ids()[code]`)."""
        if len(self._author_ids) != len(self._author_code_of):  # codes are only ever added, in dict order
            self._author_ids = list(self._author_code_of)
        return self._author_ids

    def register_authors(self, author_ids: Iterable[str]) -> None:
        """Give these authors their codes now, before their first post: a run registers its agents, so that an agent's
        followees' codes (`author_codes_of`) do not change as followees write their first posts."""
        for author_id in author_ids:
            self._author_code_of.setdefault(author_id, len(self._author_code_of))

    def author_codes_of(self, author_ids: Iterable[str]) -> np.ndarray:
        """The codes of the authors that have posts here, ascending (for `in_sorted`)."""
        code_of = self._author_code_of
        return np.sort(np.fromiter((code_of[a] for a in author_ids if a in code_of), dtype=np.int64))

    def get_post(self, post_id: str) -> Post:
        """The post, this store's own copy: a change to it stays here (`own_post`)."""
        return self.own_post(self._row_of[post_id])

    def own_post(self, row: int) -> Post:
        """The post at `row` to change (engagement counters): a post shared with another store is copied first."""
        if row < self._shared_posts and row not in self._owned:
            self._posts[row] = self._posts[row].changeable_copy()
            self._owned.add(row)
        return self._posts[row]

    def share_posts(self) -> None:
        """Treat every post so far as shared with another store: each is copied on its first change."""
        self._shared_posts, self._owned = len(self._posts), set()

    def has_post(self, post_id: str) -> bool:
        return post_id in self._row_of

    def row_of(self, post_id: str) -> int:
        return self._row_of[post_id]

    def rows_of(self, post_ids: Iterable[str]) -> np.ndarray:
        return np.fromiter((self._row_of[i] for i in post_ids), dtype=np.int64)

    def rows_by_authors(self, author_ids: Iterable[str]) -> np.ndarray:
        """Rows of every post written by any of the authors, ascending."""
        parts = [self._author_rows[a] for a in author_ids if a in self._author_rows]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]))

    def rows_by_author_code(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows grouped by author code, ascending within a code; pointers): code c's rows are
        `rows[pointers[c]:pointers[c + 1]]`. Rebuilt when the store has grown since it was last asked."""
        key = (len(self._posts), self.author_count)
        if self._by_code_key != key:
            codes = self.author_codes
            rows = np.argsort(codes, kind="stable")
            pointers = np.searchsorted(codes[rows], np.arange(self.author_count + 1))
            self._by_code_key, self._by_code = key, (rows.astype(np.int64), pointers.astype(np.int64))
        return self._by_code

    def interest_similarities(self, interests: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """`exact_similarities` of an interest list's vector to store rows: a gather of the few rows a
        feed needs (a column per interest list over every post was 11 GB at a million posts: docs/bench.md)."""
        return exact_similarities(self._vectors_at(np.asarray(rows, dtype=np.int64)), self.embed_interests(interests))

    def pair_similarities(self, queries: np.ndarray, query_index: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """`exact_similarities` of each row to its query (`queries[query_index]`), remembered per (query, vector):
        the same bits as scoring the pairs afresh, each distinct pair scored once (feed_store/pair_similarity.py)."""
        return self._similarity_memo.similarities(self._table.array, self._vector_rows[rows], queries, query_index)

    def rows_newer_than(self, cutoff: datetime) -> np.ndarray:
        return np.flatnonzero(self.timestamps_us >= epoch_microseconds(as_utc(cutoff)))

    def newest_timestamp(self) -> datetime:
        if not self._posts:
            raise ValueError("the store is empty: no posts have been added")
        return self._posts[int(np.argmax(self.timestamps_us))].timestamp

    # ------------------------------------------------------------------ storage
    def add_post(self, post: Post) -> None:
        """Embed and index one post (REQ-FEED-4.1)."""
        self.add_posts([post])

    def add_posts(
        self,
        posts: Sequence[Post],
        embeddings: np.ndarray | None = None,
        show_progress: bool = False,
    ) -> None:
        """Embed and index posts in a few large Chroma calls (REQ-FEED-4.3). Ids must be new and unique."""
        if not posts:
            return
        ids = [post.id for post in posts]
        duplicates = {i for i in ids if i in self._row_of} | _repeated(ids)
        if duplicates:
            raise ValueError(f"post id: already in the store or repeated in the batch: {sorted(duplicates)[:5]}")
        if embeddings is None:
            table_rows = self._text_vector_rows([post.text for post in posts], show_progress)
        else:
            vectors = normalize_rows(np.asarray(embeddings, dtype=np.float32))
            if vectors.shape != (len(posts), EMBEDDING_DIM):
                raise ValueError(f"embeddings: expected shape ({len(posts)}, {EMBEDDING_DIM}), got {vectors.shape}")
            table_rows = self._table.append(vectors)
        if self._handle is not None or not _lazy(self.config):  # written through; a lazy one is filled when opened
            collection = self._collection  # (caught up first on posts remembered before it was opened)
            self._write_to_collection(collection, posts, self._table.array[table_rows], show_progress)
            self._synced += len(posts)
        self._remember_rows(posts, table_rows)

    def _text_vector_rows(self, texts: list[str], show_progress: bool) -> np.ndarray:
        """The table row of each text's vector; texts not in the table yet are embedded (each distinct one once)."""
        missing = [text for text in dict.fromkeys(texts) if text not in self._text_rows]
        if missing:
            embedded = self.embedder.encode(missing, show_progress=show_progress)
            vectors = normalize_rows(np.asarray(embedded, dtype=np.float32))  # row by row: a text's bits alone
            for text, row in zip(missing, self._table.append(vectors).tolist()):
                self._text_rows[text] = row
        return np.fromiter((self._text_rows[text] for text in texts), dtype=np.int64, count=len(texts))

    @staticmethod
    def _write_to_collection(
        collection: Any, posts: Sequence[Post], vectors: np.ndarray, show_progress: bool = False
    ) -> None:
        """Posts and their unit vectors into Chroma in a few large calls (REQ-FEED-4.3)."""
        batch = max_batch_size(collection)
        starts = range(0, len(posts), batch)
        for start in tqdm(starts, desc="indexing posts", disable=not show_progress or len(starts) < 2):
            chunk = posts[start : start + batch]
            collection.add(
                ids=[post.id for post in chunk],
                embeddings=vectors[start : start + batch],
                documents=[post.text for post in chunk],
                metadatas=[post_to_metadata(post) for post in chunk],
            )

    def _remember(self, posts: Sequence[Post], vectors: np.ndarray) -> None:
        """Posts with a unit vector each (not shared with any other post)."""
        self._remember_rows(posts, self._table.append(vectors))

    def _remember_rows(self, posts: Sequence[Post], table_rows: np.ndarray) -> None:
        """Posts and the table rows of their vectors."""
        first = len(self._posts)
        needed = first + len(posts)
        if needed > len(self._vector_rows):
            capacity = max(needed, 2 * len(self._vector_rows))
            self._vector_rows = _grow(self._vector_rows, capacity)
            self._timestamps_us = _grow(self._timestamps_us, capacity)
            self._author_codes = _grow(self._author_codes, capacity)
            self._is_reply = _grow(self._is_reply, capacity)
        self._vector_rows[first:needed] = table_rows
        self._rows_are_table = self._rows_are_table and bool(np.array_equal(table_rows, np.arange(first, needed)))
        for offset, post in enumerate(posts):
            row = first + offset
            self._row_of[post.id] = row
            self._timestamps_us[row] = epoch_microseconds(post.timestamp)
            self._author_rows.setdefault(post.author_id, []).append(row)
            self._author_codes[row] = self._author_code_of.setdefault(post.author_id, len(self._author_code_of))
            self._is_reply[row] = post.parent_id is not None
        self._posts.extend(posts)

    def _load_existing(self) -> None:
        """Reopen a persistent collection: every post, its metadata and its vector come back."""
        total = self._collection.count()
        batch = max_batch_size(self._collection)
        records: list[tuple[int, str, Post, np.ndarray]] = []
        for offset in range(0, total, batch):
            got = self._collection.get(include=["embeddings", "documents", "metadatas"], limit=batch, offset=offset)
            for post_id, document, metadata, vector in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"]
            ):
                post = metadata_to_post(post_id, document or "", dict(metadata or {}))
                records.append((int(metadata["timestamp_us"]), post_id, post, np.asarray(vector)))
        records.sort(key=lambda record: (record[0], record[1]))
        if records:
            self._remember([r[2] for r in records], np.stack([r[3] for r in records]).astype(np.float32))
            self._synced = len(records)  # they came from the collection

    # ---------------------------------------------------------------- retrieval
    def embed_interests(self, interests: Sequence[str]) -> np.ndarray:
        """Unit vector of an interest list: the normalised mean of each interest's embedding.

        A known topic is embedded through its description (`interest_query_text`).
        """
        key = tuple(interests)
        if key not in self._interest_vectors:
            if not key:
                raise ValueError("interests: at least one interest is needed for a preference query")
            mean = self.embedder.encode([interest_query_text(i) for i in key]).mean(axis=0, keepdims=True)
            self._interest_vectors[key] = normalize_rows(mean)[0]
        return self._interest_vectors[key]

    def query_rows(
        self,
        query_embeddings: np.ndarray,
        n_results: int,
        where: Where | None = None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each query vector, (rows, similarities) of its nearest posts, best first, in ONE Chroma call.

        With `rag.exact_search` (and no `where`), an exact float64 scan of the store's vectors instead.
        Agents with the same interest list ask with the same vector: each distinct vector is answered once
        (both searches are deterministic for a given store, so its copies get the same answer).
        """
        queries = np.atleast_2d(np.asarray(query_embeddings, dtype=np.float32))
        n = min(int(n_results), len(self._posts))
        if n <= 0 or len(queries) == 0:
            return [(np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in range(len(queries))]
        distinct: dict[bytes, int] = {}  # query bytes -> its index among the distinct ones
        firsts: list[int] = []  # where each distinct query first appears
        inverse = []
        for position, query in enumerate(queries):
            index = distinct.setdefault(query.tobytes(), len(distinct))
            if index == len(firsts):
                firsts.append(position)
            inverse.append(index)
        answers = self._nearest_of_distinct(queries[firsts], n, where)
        return [answers[i] for i in inverse]

    def _nearest_of_distinct(
        self, queries: np.ndarray, n: int, where: Where | None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """`query_rows` for distinct query vectors: the exact scan, or one Chroma call per collection."""
        if self.config.exact_search and where is None:
            return self._nearest_exact(queries, n)
        own_count = len(self._posts) - sum(self._shared_counts)
        parts = [
            self._query_collection(source._collection, queries, min(n, count), where)
            for source, count in zip([*self._shared, self], [*self._shared_counts, own_count])
            if count > 0
        ]
        if len(parts) == 1:
            return parts[0]
        merged = []
        for answers in zip(*parts):  # per query: the best n over every collection, ties by row
            rows = np.concatenate([rows for rows, _ in answers])
            scores = np.concatenate([scores for _, scores in answers])
            order = np.lexsort((rows, -scores))[:n]
            merged.append((rows[order], scores[order]))
        return merged

    def _nearest_exact(self, queries: np.ndarray, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """`_exact_query`'s answers, kept per query vector and brought up to date from the posts added since.

        The store only grows, so the best m of all rows are among the best m remembered and the rows
        added after them: a step costs the new posts, not a scan of the whole store (docs/bench.md). A
        query asking for more than is remembered is scanned in full again.
        """
        count = len(self._posts)
        out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(queries)
        first_scan: list[int] = []
        rescan: list[int] = []  # remembered, but fewer than asked for
        behind: dict[int, list[int]] = {}  # store size a kept answer covers -> the queries it belongs to
        for i, query in enumerate(queries):
            kept = self._nearest.get(query.tobytes())
            if kept is None:
                first_scan.append(i)
            elif len(kept[0]) < n and kept[2] > len(kept[0]):
                rescan.append(i)
            elif kept[2] < count:
                behind.setdefault(kept[2], []).append(i)
            else:
                out[i] = (kept[0][:n], kept[1][:n])
        for seen, members in behind.items():
            for i, (rows, scores) in zip(members, self._merge_new_posts(queries[members], seen, n)):
                out[i] = (rows[:n], scores[:n])
        # a query asked again for more (`nearest_visible` doubles its fetch) is likely to be asked for more still
        for scan, size in ((first_scan, n), (rescan, min(RESCAN_GROWTH * n, count))):
            if scan:
                for i, (rows, scores) in zip(scan, self._exact_query(queries[scan], size)):
                    self._nearest[queries[i].tobytes()] = (rows, scores, count)
                    out[i] = (rows[:n], scores[:n])
        return [answer for answer in out if answer is not None]

    def _merge_new_posts(self, queries: np.ndarray, seen: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Kept answers of `queries` (all covering the first `seen` rows) brought up to date with the rows added
        since: one float32 product finds the new rows that could enter, exact scores decide, as `_exact_query`."""
        count = len(self._posts)
        rough = queries @ self._vectors_at(slice(seen, count)).T  # the new posts, one float32 product for the group
        kept = [self._nearest[query.tobytes()] for query in queries]
        # a kept answer holding every earlier post takes every new one; else a new post gets in only by beating
        # its last score (a tie loses: its row is larger)
        floors = np.array(
            [-np.inf if len(rows) == seen else 2.0 * scores[-1] - 1.0 - ROUGH_TOLERANCE for rows, scores, _ in kept]
        )
        which, fresh = np.nonzero(rough >= floors[:, None])
        fresh_rows = seen + fresh
        # `exact_similarities` per pair, in bounded chunks (the one kernel of feed_store/pair_similarity.py)
        fresh_scores = pair_dot_similarities(
            self._table.array, self._vector_rows[fresh_rows], np.asarray(queries, dtype=np.float64), which
        )
        out = [(rows, scores) for rows, scores, _ in kept]  # no new post beats it: the kept answer stands
        changed = which[np.flatnonzero(np.diff(which, prepend=-1))]  # `which` ascends (np.nonzero's row order)
        if len(changed):
            lengths = np.fromiter((len(out[q][0]) for q in changed), dtype=np.int64, count=len(changed))
            group = np.concatenate([np.repeat(changed, lengths), which])
            rows = np.concatenate([*(out[q][0] for q in changed), fresh_rows]).astype(np.int64)
            scores = np.concatenate([*(out[q][1] for q in changed), fresh_scores])
            order = best_first_by_group(group, scores, rows)
            starts = np.searchsorted(group[order], changed)
            ends = np.searchsorted(group[order], changed, side="right")
            for q, start, end, length in zip(changed.tolist(), starts.tolist(), ends.tolist(), lengths.tolist()):
                index = order[start : min(end, start + max(length, n))]
                out[q] = (rows[index], scores[index])
        for query, answer in zip(queries, out):
            self._nearest[query.tobytes()] = (*answer, count)
        return out

    def _exact_query(self, queries: np.ndarray, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Exact nearest posts by (1 + cos)/2 (`exact_similarities`), ties by row.

        A float32 product finds the n-th best rough score per query; every row within ROUGH_TOLERANCE
        of it is scored exactly (a true top-n row's rough score is at most twice the float32 error
        below). The answer is the true top n whatever the float32 product's last bits (BLAS threads,
        CPU) and however many posts tie (pooled texts).
        """
        count = len(self._posts)
        table, index = self._table.array, self._vector_rows[:count]
        chunk = max(1, min(256, ROUGH_BLOCK_VALUES // count))  # bounds the block of rough scores in memory
        out = []
        for start in range(0, len(queries), chunk):
            block = queries[start : start + chunk]
            # a product with each distinct vector once, spread to the rows that share it
            rough = block @ table[:count].T if self._rows_are_table else (block @ table.T)[:, index]
            cutoff = np.partition(rough, count - n, axis=1)[:, count - n] - ROUGH_TOLERANCE
            for query, scores32, floor in zip(block, rough, cutoff):
                rows = np.flatnonzero(scores32 >= floor)
                scores = exact_similarities(table[index[rows]], query)
                order = np.lexsort((rows, -scores))[:n]
                out.append((rows[order].astype(np.int64), scores[order]))
        return out

    def _query_collection(
        self, collection: Any, queries: np.ndarray, n: int, where: Where | None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        result = collection.query(query_embeddings=queries, n_results=n, where=where, include=["distances"])
        # every query's ids and distances converted at once, then sliced: a few array calls instead of a few per
        # query, the dict lookups in C (`map`) rather than a generator, slices rather than np.split's per-piece calls
        ids, distances = result["ids"], result["distances"]
        bounds = np.cumsum([0, *map(len, ids)]).tolist()
        rows = np.fromiter(map(self._row_of.__getitem__, chain.from_iterable(ids)), dtype=np.int64, count=bounds[-1])
        flat_distances = np.fromiter(chain.from_iterable(distances), dtype=np.float64, count=bounds[-1])
        scores = np.asarray(similarity_from_distance(flat_distances))
        return [(rows[start:end], scores[start:end]) for start, end in pairwise(bounds)]

    def query_many_with_scores(
        self,
        query_embeddings: np.ndarray,
        n_results: int,
        where: Where | None = None,
    ) -> list[list[tuple[Post, float]]]:
        """Batched `query_with_scores`: many query vectors, one Chroma call."""
        return [
            [(self._posts[row], float(score)) for row, score in zip(rows, scores)]
            for rows, scores in self.query_rows(query_embeddings, n_results, where)
        ]

    def query_with_scores(
        self,
        query_text: str | None = None,
        *,
        query_embedding: np.ndarray | None = None,
        n_results: int = 10,
        where: Where | None = None,
    ) -> list[tuple[Post, float]]:
        """Posts nearest to a text or a vector with similarity = 1 - distance/2 (REQ-XALGO-2)."""
        if (query_text is None) == (query_embedding is None):
            raise ValueError("query: pass exactly one of query_text or query_embedding")
        vector = self.embedder.encode_one(query_text) if query_text is not None else query_embedding
        return self.query_many_with_scores(np.asarray(vector)[None, :], n_results, where)[0]

    def random_rows(
        self,
        n: int,
        now: datetime,
        window_hours: float,
        rng: np.random.Generator,
        exclude_rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """A uniform sample without replacement of posts from the last `window_hours` before `now`, none of
        `exclude_rows` (ascending).

        When the window holds fewer than `n` posts it widens to the `n` newest ones (a feed is
        never short while the store has posts).
        """
        stamps = self.timestamps_us
        now_us = epoch_microseconds(as_utc(now))
        rows = self._window_rows(now_us, int(window_hours * 3_600_000_000))
        if exclude_rows is not None and len(exclude_rows):
            # a binary search into the sorted exclusions: np.isin sorts both arrays at every call (a step of
            # the random mode asks once per agent)
            found = np.minimum(np.searchsorted(exclude_rows, rows), len(exclude_rows) - 1)
            rows = rows[exclude_rows[found] != rows]
        if len(rows) < n:
            candidates = np.flatnonzero(stamps <= now_us)
            if exclude_rows is not None and len(exclude_rows):
                candidates = np.setdiff1d(candidates, exclude_rows)
            newest = candidates[np.lexsort((candidates, -stamps[candidates]))]
            rows = np.sort(newest[:n])
        if len(rows) <= n:
            return rows[rng.permutation(len(rows))]
        return rng.choice(rows, size=n, replace=False)

    def _window_rows(self, now_us: int, window_us: int) -> np.ndarray:
        """Rows stamped in [now - window, now], ascending; kept for the store size and moment it was asked for (a
        step asks once per agent)."""
        key = (len(self._posts), now_us, window_us)
        if self._window != key:
            stamps = self.timestamps_us
            self._window = key
            self._window_answer = np.flatnonzero((stamps <= now_us) & (stamps >= now_us - window_us))
        return self._window_answer

    def get_feed(
        self,
        interests: Sequence[str],
        mode: str | None = None,
        n: int | None = None,
        now: datetime | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[Post]:
        """A plain feed (REQ-FEED-5): by similarity to the interests, or a uniform sample of recent posts.

        `now` defaults to the newest post's time; random draws come from `rng`, else from the
        retriever's own generator seeded with `config.random_seed` (reproducible across processes).
        """
        mode = mode or self.config.retrieval_mode
        size = n if n is not None else self.config.feed_size
        if size < 1:
            raise ValueError(f"n: feed size must be at least 1, got {size}")
        if not self._posts:
            return []
        if mode == "preference":
            rows, _ = self.query_rows(self.embed_interests(interests)[None, :], size)[0]
        elif mode == "random":
            moment = now if now is not None else self.newest_timestamp()
            rows = self.random_rows(size, moment, self.config.retrieval_window_hours, rng or self._rng)
        else:
            raise ValueError(f"mode: {mode!r} is not one of 'preference', 'random'")
        return [self._posts[row] for row in rows]


def _lazy(config: FeedStoreConfig) -> bool:
    """Whether the collection waits until Chroma is asked: exact search on an in-memory client.

    A persistent or server collection is opened at once: it may hold posts to load, and what is
    written there must outlive the process.
    """
    return config.exact_search and config.client == "ephemeral"


def _grow(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _repeated(ids: list[str]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for i in ids:
        (repeated if i in seen else seen).add(i)
    return repeated
