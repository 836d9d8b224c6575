"""Section 2: the Chroma-backed store: feed latency, memory and add throughput at 10K and 50K posts."""

from __future__ import annotations

import functools

from prism_experiments.bench.data import BenchWorld
from prism_experiments.bench.measure import current_rss_bytes, latencies, percentile, timed
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs, drop_store, store_config
from prism_experiments.embeddings import Embedder
from prism_experiments.feed_store import FeedRetriever

SECTION = 2
#: REQ-FEED-PERF-1: retrieval < 200 ms for 10 posts from a 10K corpus
LATENCY_TARGET = Target(op="<", threshold=200.0, source="REQ-FEED-PERF-1")
LATENCY_TARGET_POSTS = 10_000
#: REQ-FEED-PERF-2: an in-memory collection supports 50K posts on 16 GB of RAM
MEMORY_TARGET = Target(op="<=", threshold=16_000.0, source="REQ-FEED-PERF-2")
MEMORY_TARGET_POSTS = 50_000
FEED_SIZE = 10


def build_store(world: BenchWorld, embedder: Embedder, prefix: str) -> FeedRetriever:
    """An in-memory FeedRetriever holding the world's posts, with their precomputed vectors."""
    retriever = FeedRetriever(store_config(prefix), embedder=embedder)
    retriever.add_posts(world.posts, embeddings=world.vectors)
    return retriever


def feed_latencies(retriever: FeedRetriever, world: BenchWorld, n_queries: int) -> tuple[float, float]:
    """(p50, p95) in ms of a 10-post preference feed, over the agents' interest lists in turn."""
    interests = [agent.interests for agent in world.agents]
    for interest in {tuple(i) for i in interests}:  # warm-up: interest vectors are cached by the store
        retriever.get_feed(list(interest), mode="preference", n=FEED_SIZE)
    seconds = latencies(
        lambda i: retriever.get_feed(interests[i % len(interests)], mode="preference", n=FEED_SIZE), n_queries
    )
    return 1e3 * percentile(seconds, 50), 1e3 * percentile(seconds, 95)


def store_section(inputs: SectionInputs) -> list[Figure]:
    world = inputs.world()
    figures = [
        figure(SECTION, "store.corpus_posts", len(world.posts), "posts"),
        figure(
            SECTION,
            "store.corpus_encoded",
            world.encoded,
            "texts",
            note="texts the model had to embed for the bench corpus (0 once the cache is warm)",
        ),
        figure(SECTION, "store.corpus_embed_s", world.embed_s, "s", note="embedding / cache lookup of the corpus"),
    ]
    # smallest first, every store kept until the end: each RSS delta is that store's own growth,
    # never shrunk by memory a dropped store handed back
    stores = []
    try:
        for size in sorted({min(n, len(world.posts)) for n in inputs.sizes.store_posts}):
            subset = world.subset(size)
            rss_before = current_rss_bytes()
            retriever, build_s = timed(functools.partial(build_store, subset, inputs.embedder(), f"store{size}"))
            stores.append(retriever)
            memory_mb = (current_rss_bytes() - rss_before) / 1e6
            p50, p95 = feed_latencies(retriever, world, inputs.sizes.latency_queries)
            latency_target = LATENCY_TARGET if size == LATENCY_TARGET_POSTS else None
            figures += [
                figure(
                    SECTION,
                    f"store.add_posts_per_s@{size}",
                    size / build_s,
                    "posts/s",
                    note="add_posts with precomputed embeddings: Chroma + in-memory index only",
                ),
                figure(
                    SECTION,
                    f"store.memory_mb@{size}",
                    memory_mb,
                    "MB",
                    MEMORY_TARGET if size == MEMORY_TARGET_POSTS else None,
                    note="RSS growth while building the store",
                ),
                figure(
                    SECTION,
                    f"store.feed_p50_ms@{size}",
                    p50,
                    "ms",
                    latency_target,
                    note="get_feed(interests, 'preference', n=10)",
                ),
                figure(SECTION, f"store.feed_p95_ms@{size}", p95, "ms", latency_target),
            ]
    finally:
        for retriever in stores:
            drop_store(retriever)
    return figures
