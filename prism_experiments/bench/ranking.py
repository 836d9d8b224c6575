"""Section 3: every ranking mode on the Chroma-backed store against an exact numpy reference.

Both stores hold the same posts and vectors; the agents, graph and ranker seed are shared, so
any difference in the feeds comes from Chroma's approximate (HNSW) similarity search.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from statistics import median

import numpy as np
from tqdm.auto import tqdm

from prism_experiments.agents import SocialAgent
from prism_experiments.bench.data import BENCH_SEED, BenchWorld
from prism_experiments.bench.exact import ExactRetriever
from prism_experiments.bench.measure import frozen_heap, latencies, percentile, timed_in_turns
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs, drop_store, store_config
from prism_experiments.bench.store import build_store
from prism_experiments.embeddings import Embedder
from prism_experiments.feed_store import FeedRetriever
from prism_experiments.network import SocialGraph
from prism_experiments.ranking import KNOWN_MODES, RankedCandidate, Ranker, RankerInputs, build_ranker, ranking_config

SECTION = 3
#: REQ-PERF-1: every mode within 3x of the exact numpy floor (the first requirement was 5x)
RATIO_TARGET = Target(op="<=", threshold=3.0, source="REQ-PERF-1")
RECALL_TARGET = Target(op=">=", threshold=0.95)
LATENCY_TARGET = Target(op="<=", threshold=10.0)
LATENCY_TARGET_POSTS = 10_000
RECALL_K = 10


def recall_at_k(found: Sequence[Sequence[str]], exact: Sequence[Sequence[str]], k: int = RECALL_K) -> float:
    """Mean over feeds of |found[:k] ∩ exact[:k]| / |exact[:k]|; feeds with an empty exact list are skipped."""
    if len(found) != len(exact):
        raise ValueError(f"found: {len(found)} feeds, but exact has {len(exact)}")
    shares = [len(set(f[:k]) & set(e[:k])) / len(e[:k]) for f, e in zip(found, exact) if len(e) > 0]
    return float(np.mean(shares)) if shares else float("nan")


def feed_ids(feeds: Sequence[Sequence[RankedCandidate]]) -> list[list[str]]:
    return [[candidate.post.id for candidate in feed] for feed in feeds]


def build_exact_store(world: BenchWorld, embedder: Embedder) -> ExactRetriever:
    retriever = ExactRetriever(store_config("exact"), embedder=embedder)
    retriever.add_posts(world.posts, embeddings=world.vectors)
    return retriever


def make_ranker(mode: str, retriever: FeedRetriever, graph: SocialGraph) -> Ranker:
    """The same seed for both stores: the random mode then draws the same posts on each."""
    return build_ranker(ranking_config(mode), RankerInputs(retriever, graph, np.random.default_rng(BENCH_SEED)))


def paired_throughput(
    rankers: Sequence[Ranker], agents: list[SocialAgent], now: datetime, repeats: int
) -> list[tuple[float, list[list[RankedCandidate]]]]:
    """Per ranker, (feeds/s of `rank_many` for all agents at once: agents / median of `repeats` timed calls; its feeds).

    Each ranker's first call is untimed (the warm-up: interest vectors are embedded and cached there). The timed
    calls then alternate between the rankers (`timed_in_turns`) on a frozen heap (`frozen_heap`): each store meets
    the same load, and no store pays for a full collection of what earlier sections left in the process.
    """
    feeds = [ranker.rank_many(agents, now) for ranker in rankers]
    with frozen_heap():
        seconds = timed_in_turns([functools.partial(ranker.rank_many, agents, now) for ranker in rankers], repeats)
    return [(len(agents) / median(times), feed) for times, feed in zip(seconds, feeds)]


def single_feed_latency(ranker: Ranker, agents: list[SocialAgent], now: datetime, n: int) -> tuple[float, float]:
    """(p50, p95) in ms of `rank(agent)`, one agent per call, agents in turn."""
    seconds = latencies(lambda i: ranker.rank(agents[i % len(agents)], now), n)
    return 1e3 * percentile(seconds, 50), 1e3 * percentile(seconds, 95)


def compare_mode(
    mode: str, chroma: FeedRetriever, exact: ExactRetriever, world: BenchWorld, repeats: int, size: int
) -> list[Figure]:
    rankers = [make_ranker(mode, store, world.graph) for store in (chroma, exact)]
    (chroma_fps, chroma_feeds), (exact_fps, exact_feeds) = paired_throughput(rankers, world.agents, world.now, repeats)
    return [
        figure(
            SECTION,
            f"rank.{mode}.feeds_per_s@{size}",
            chroma_fps,
            "feeds/s",
            note=f"rank_many for {len(world.agents)} agents, Chroma-backed store",
        ),
        figure(SECTION, f"rank.{mode}.exact_feeds_per_s@{size}", exact_fps, "feeds/s", note="numpy brute force"),
        figure(
            SECTION,
            f"rank.{mode}.slowdown@{size}",
            exact_fps / chroma_fps,
            "x",
            RATIO_TARGET,
            note="exact feeds/s / Chroma feeds/s: how many times slower the Chroma-backed ranking is",
        ),
        figure(
            SECTION,
            f"rank.{mode}.recall@{RECALL_K}",
            recall_at_k(feed_ids(chroma_feeds), feed_ids(exact_feeds)),
            "",
            RECALL_TARGET,
            note="Chroma feeds vs exact feeds, mean over agents",
        ),
    ]


def ranking_section(inputs: SectionInputs) -> list[Figure]:
    from threadpoolctl import ThreadpoolController

    world = inputs.world()
    world = world.subset(min(inputs.sizes.ranking_posts, len(world.posts)))
    size = len(world.posts)
    chroma = build_store(world, inputs.embedder(), "rank")
    exact = build_exact_store(world, inputs.embedder())
    figures = []
    # one OpenBLAS thread, as the simulation's step loop ranks (simulation/engine.py): on 2 cores shared with other
    # processes the exact scan's product on two BLAS threads took 24-40 ms instead of 1, so the floor, and every
    # slowdown, moved with the machine's load rather than with the ranking (docs/bench.md); the heap frozen once here
    # makes each mode's own freeze (`paired_throughput`) cheap
    try:
        with ThreadpoolController().select(internal_api="openblas").limit(limits=1), frozen_heap():
            for mode in tqdm(KNOWN_MODES, desc="ranking modes", disable=not inputs.show_progress):
                figures += compare_mode(mode, chroma, exact, world, inputs.sizes.ranking_repeats, size)
            ranker = make_ranker("x_algo", chroma, world.graph)
            with frozen_heap():
                p50, p95 = single_feed_latency(ranker, world.agents, world.now, inputs.sizes.latency_queries)
        target = LATENCY_TARGET if size == LATENCY_TARGET_POSTS else None
        figures += [
            figure(SECTION, f"rank.x_algo.feed_p50_ms@{size}", p50, "ms", target, note="rank(agent), one agent a call"),
            figure(SECTION, f"rank.x_algo.feed_p95_ms@{size}", p95, "ms"),
        ]
    finally:
        drop_store(chroma)
        drop_store(exact)
    return figures
