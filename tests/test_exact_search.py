"""Exact search over the store's vectors (`rag.exact_search`): the true top n by similarity, ties by row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from prism_experiments.domain import Post
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.feed_store.retriever import exact_similarities
from prism_experiments.ranking.flat import Pairs, pair_similarities


def _unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, 384)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _store(tmp_path: Path, vectors: np.ndarray) -> FeedRetriever:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    posts = [
        Post(id=f"p{i}", author_id=f"a{i % 7}", text=f"text {i}", timestamp=start + timedelta(seconds=i))
        for i in range(len(vectors))
    ]
    store = FeedRetriever(FeedStoreConfig(collection_name="exact_units", exact_search=True, cache_dir=tmp_path))
    store.add_posts(posts, embeddings=vectors)
    return store


def test_a_rows_similarity_does_not_depend_on_the_rows_scored_with_it() -> None:
    rng = np.random.default_rng(1)
    vectors, query = _unit_rows(rng, 2000), _unit_rows(rng, 1)[0]
    alone = np.array([exact_similarities(vectors[i : i + 1], query)[0] for i in range(0, 2000, 97)])
    order = rng.permutation(2000)
    together = exact_similarities(vectors[order], query)[np.argsort(order)]
    assert np.array_equal(alone, together[::97])


def test_exact_query_is_the_brute_force_top_n_even_with_many_tied_posts(tmp_path: Path) -> None:
    """Pooled texts give many posts the same vector: the answer is still the first rows of each tie."""
    rng = np.random.default_rng(2)
    distinct = _unit_rows(rng, 300)
    vectors = distinct[rng.integers(0, 300, size=3000)]  # each vector about 10 times, rows shuffled
    store = _store(tmp_path, vectors)
    queries = np.vstack([_unit_rows(rng, 12), distinct[:4], distinct[:4]])  # some queries hit ties exactly
    answers = store.query_rows(queries, 25)
    for query, (rows, scores) in zip(queries, answers):
        brute = exact_similarities(store.vectors, query)  # the store keeps its own normalised copy
        expected = np.lexsort((np.arange(len(vectors)), -brute))[:25]
        assert rows.tolist() == expected.tolist()
        assert np.array_equal(scores, brute[expected])
    assert all(a[0] is b[0] for a, b in zip(answers[12:16], answers[16:]))  # a repeated query is scanned once


def test_answers_kept_between_queries_follow_the_posts_added_since(tmp_path: Path) -> None:
    """A repeated query merges the new posts into its remembered answer; it must stay the full scan's."""
    rng = np.random.default_rng(3)
    distinct = _unit_rows(rng, 200)
    vectors = distinct[rng.integers(0, 200, size=2400)]
    store = _store(tmp_path, vectors[:1000])
    queries = np.vstack([_unit_rows(rng, 5), distinct[:3]])
    start = datetime(2026, 1, 2, tzinfo=UTC)
    for added, n in ((0, 20), (400, 20), (400, 35), (0, 10), (600, 60)):  # grow the store; ask for more, then less
        if added:
            first = len(store)
            store.add_posts(
                [
                    Post(
                        id=f"n{first + i}",
                        author_id="b",
                        text=f"new {first + i}",
                        timestamp=start + timedelta(seconds=i),
                    )
                    for i in range(added)
                ],
                embeddings=vectors[first : first + added],
            )
        for query, (rows, scores) in zip(queries, store.query_rows(queries, n)):
            brute = exact_similarities(store.vectors, query)
            expected = np.lexsort((np.arange(len(store)), -brute))[:n]
            assert rows.tolist() == expected.tolist() and np.array_equal(scores, brute[expected])
    assert len(store._nearest) == len(queries)


def test_a_kept_answer_holding_the_whole_store_takes_every_new_post_as_a_candidate(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    vectors = _unit_rows(rng, 40)
    store = _store(tmp_path, vectors[:10])
    query = _unit_rows(rng, 1)
    assert len(store.query_rows(query, 15)[0][0]) == 10  # every post: the kept answer is complete
    start = datetime(2026, 1, 2, tzinfo=UTC)
    store.add_posts(
        [
            Post(id=f"n{i}", author_id="b", text=f"new {i}", timestamp=start + timedelta(seconds=i))
            for i in range(10, 40)
        ],
        embeddings=vectors[10:],
    )
    for n in (15, 5, 30):
        rows, scores = store.query_rows(query, n)[0]
        brute = exact_similarities(store.vectors, query[0])
        expected = np.lexsort((np.arange(len(store)), -brute))[:n]
        assert rows.tolist() == expected.tolist() and np.array_equal(scores, brute[expected])


def test_a_batch_with_repeated_queries_answers_each_query_as_alone(tmp_path: Path) -> None:
    """Agents sharing an interest list ask with one vector, interleaved with others: each gets its own answer."""
    rng = np.random.default_rng(5)
    store = _store(tmp_path, _unit_rows(rng, 1500))
    distinct = _unit_rows(rng, 5)
    queries = distinct[[0, 0, 1, 2, 0, 3, 1, 4]]
    answers = store.query_rows(queries, 20)
    for query, (rows, _) in zip(queries, answers):
        expected = np.lexsort((np.arange(1500), -exact_similarities(store.vectors, query)))[:20]
        assert rows.tolist() == expected.tolist()


def test_remembered_pair_similarities_are_the_bits_of_a_fresh_product(tmp_path: Path) -> None:
    """`FeedRetriever.pair_similarities` scores each (query, vector) once and remembers it: the same bits as scoring
    the pairs afresh, whatever was asked before, posts added since or the memo full and started again."""
    rng = np.random.default_rng(6)
    vectors = _unit_rows(rng, 900)
    store = _store(tmp_path, vectors[:600])
    queries = _unit_rows(rng, 6)

    def ask(n: int) -> None:
        view, rows = rng.integers(0, len(queries), n), rng.integers(0, len(store), n)  # repeats included
        fresh = pair_similarities(store.vectors, queries[: view.max() + 1], Pairs(view, rows))
        assert store.pair_similarities(queries[: view.max() + 1], view, rows).tobytes() == fresh.tobytes()

    ask(2000)
    ask(3000)  # most pairs remembered, some new
    start = datetime(2026, 1, 2, tzinfo=UTC)
    store.add_posts(
        [Post(id=f"n{i}", author_id="b", text=f"new {i}", timestamp=start) for i in range(300)],
        embeddings=vectors[600:],
    )
    ask(3000)
    store._similarity_memo.max_pairs = 50  # full: it starts again from the pairs of each call
    ask(500)
    assert len(store._similarity_memo) <= 500
