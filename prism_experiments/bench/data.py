"""The benchmark's world: agents, their follow graph, and a corpus they wrote, embedded through the cache.

The corpus is generated once at its largest size; smaller stores are nested seeded subsets of it, so
one cold `make bench` fills the persistent cache for every later run (quick ones included).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from prism_experiments.agents import AgentsConfig, SocialAgent, generate_population
from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus
from prism_experiments.domain import TOPICS, Post
from prism_experiments.embeddings import Embedder, text_digest
from prism_experiments.network import DictSocialGraph, NetworkConfig, generate_follow_graph, with_following

#: the seed of every benchmark world; fixed so the embedding cache is reused across runs
BENCH_SEED = 8
_SUBSET_SEED = 80


@dataclass(frozen=True)
class BenchWorld:
    agents: list[SocialAgent]
    graph: DictSocialGraph
    posts: list[Post]
    vectors: np.ndarray  # unit vectors, row i for posts[i]
    encoded: int  # texts the model had to encode to build this world (0 on a warm cache)
    embed_s: float

    @property
    def now(self) -> datetime:
        """The newest post's time: every post is visible."""
        return max(post.timestamp for post in self.posts)

    def subset(self, n: int) -> BenchWorld:
        """`n` of the posts (see `subset_rows`), with their vectors."""
        if n >= len(self.posts):
            return self
        keep = subset_rows(len(self.posts), n)
        return BenchWorld(
            self.agents, self.graph, [self.posts[i] for i in keep], self.vectors[keep], encoded=0, embed_s=0.0
        )


def subset_rows(total: int, n: int) -> np.ndarray:
    """A seeded choice of `n` of `total` rows, ascending; a smaller subset is part of every larger one."""
    return np.sort(np.random.default_rng(_SUBSET_SEED).permutation(total)[: min(n, total)])


def bench_agents(n_agents: int) -> tuple[list[SocialAgent], DictSocialGraph]:
    population = generate_population(AgentsConfig(n_agents=n_agents), TOPICS, BENCH_SEED)
    graph = generate_follow_graph(population, NetworkConfig(), BENCH_SEED)
    return with_following(population, graph), graph


def bench_corpus(n_posts: int, agents: list[SocialAgent]) -> list[Post]:
    """`n_posts` synthetic posts authored by `agents` on their interests, each text composed afresh (unpooled, as
    the bench's figures have been measured since before text pools became the default)."""
    return generate_corpus(
        SyntheticCorpusConfig(n_posts=n_posts, text_pool_size=0),
        BENCH_SEED,
        authors={agent.id: agent.interests for agent in agents},
    )


def uncached_count(embedder: Embedder, texts: list[str]) -> int:
    """How many distinct texts the embedder would send to the model."""
    embedder.cache.refresh()
    digests = list({text_digest(text) for text in texts})
    return int((embedder.cache.rows(digests) < 0).sum())


def build_bench_world(
    embedder: Embedder,
    n_agents: int,
    corpus_posts: int,
    use_posts: int,
    cold_cache_posts: int | None = None,
    show_progress: bool = False,
) -> BenchWorld:
    """Agents, graph and `use_posts` posts of the `corpus_posts`-post bench corpus, embedded through the cache.

    With a cold cache (over 10% of the texts never embedded) and `cold_cache_posts`, only that many.
    """
    agents, graph = bench_agents(n_agents)
    corpus = bench_corpus(corpus_posts, agents)
    posts = [corpus[i] for i in subset_rows(len(corpus), use_posts)]
    if (
        cold_cache_posts is not None
        and cold_cache_posts < len(posts)
        and uncached_count(embedder, [post.text for post in posts]) > 0.1 * len(posts)
    ):
        posts = [corpus[i] for i in subset_rows(len(corpus), cold_cache_posts)]
    before = embedder.encoded_count
    started = time.perf_counter()
    vectors = embedder.encode([post.text for post in posts], show_progress=show_progress)
    return BenchWorld(
        agents, graph, posts, vectors, encoded=embedder.encoded_count - before, embed_s=time.perf_counter() - started
    )


#: a seed no other section's corpus uses, so none of the texts of `distinct_texts` is in any cache
TEXTS_SEED = 801


def distinct_texts(n: int, seed: int = TEXTS_SEED) -> list[str]:
    """`n` different realistic post texts from the synthetic generator."""
    size = n
    while True:
        texts = list(
            dict.fromkeys(
                post.text for post in generate_corpus(SyntheticCorpusConfig(n_posts=size, text_pool_size=0), seed)
            )
        )
        if len(texts) >= n:
            return texts[:n]
        size *= 2
