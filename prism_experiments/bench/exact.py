"""The exact reference for the ranking benchmark: FeedRetriever with brute-force numpy similarity search."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prism_experiments.domain import Post
from prism_experiments.embeddings.embedder import EMBEDDING_DIM, normalize_rows
from prism_experiments.feed_store.retriever import FeedRetriever, Where, similarity_from_dot


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each query, (rows, (1 + cos)/2) of the k most similar unit vectors, best first, ties by row."""
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
    n = min(int(k), len(vectors))
    if n <= 0 or len(queries) == 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in range(len(queries))]
    dots = queries @ vectors.T  # (queries, posts), one BLAS call for the whole batch
    out = []
    for row_dots in dots:
        if n < len(row_dots):
            # a value tied with the k-th must be able to enter by row order: take every such tie
            kth = np.partition(row_dots, len(row_dots) - n)[len(row_dots) - n]
            candidates = np.flatnonzero(row_dots >= kth)
        else:
            candidates = np.arange(len(row_dots))
        order = np.lexsort((candidates, -row_dots[candidates]))[:n]
        rows = candidates[order].astype(np.int64)
        out.append((rows, np.asarray(similarity_from_dot(row_dots[rows]), dtype=np.float64)))
    return out


class ExactRetriever(FeedRetriever):
    """Same posts, vectors and answers as FeedRetriever, but `query_rows` is an exact numpy scan.

    Posts are kept in memory only (the Chroma collection stays empty), so the ranking benchmark
    can run every mode on this and on the Chroma-backed store and compare speed and feeds.
    """

    def add_posts(
        self, posts: Sequence[Post], embeddings: np.ndarray | None = None, show_progress: bool = False
    ) -> None:
        if not posts:
            return
        ids = [post.id for post in posts]
        if len(set(ids)) != len(ids) or any(self.has_post(i) for i in ids):
            raise ValueError("post id: already in the store or repeated in the batch")
        if embeddings is None:
            embeddings = self.embedder.encode([post.text for post in posts], show_progress=show_progress)
        vectors = normalize_rows(np.asarray(embeddings, dtype=np.float32))
        if vectors.shape != (len(posts), EMBEDDING_DIM):
            raise ValueError(f"embeddings: expected shape ({len(posts)}, {EMBEDDING_DIM}), got {vectors.shape}")
        self._remember(posts, vectors)

    def query_rows(
        self, query_embeddings: np.ndarray, n_results: int, where: Where | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        if where is not None:
            raise ValueError("where: ExactRetriever answers unfiltered queries only (got a where filter)")
        return exact_top_k(self.dense_vectors(), query_embeddings, n_results)  # a view: each post has its vector
