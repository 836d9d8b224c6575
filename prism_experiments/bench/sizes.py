"""How big each benchmark section is, per mode (full `make bench`, `--quick`, `--tiny` for tests)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["full", "quick", "tiny"]


class BenchSizes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: section 1: texts encoded on a cold cache (model load is timed separately)
    cold_texts: int = Field(ge=1)
    #: sections 2-3: posts generated for the bench corpus; every store is a nested subset of it, so
    #: quick runs reuse the embeddings a full run cached
    corpus_posts: int = Field(ge=1)
    #: section 2: store sizes whose feed latency, memory and add throughput are measured
    store_posts: tuple[int, ...]
    #: section 3: posts in the store the ranking modes run on
    ranking_posts: int = Field(ge=1)
    #: agents (corpus authors) whose feeds are ranked
    agents: int = Field(ge=2)
    #: timed single-feed queries per latency figure
    latency_queries: int = Field(ge=1)
    #: timed `rank_many` calls per mode and store (the median is reported)
    ranking_repeats: int = Field(ge=1)
    #: with a cold embedding cache, shrink every corpus to this many posts (None: embed them all)
    cold_cache_posts: int | None = None
    #: section 1 with --encoder-backends: posts whose top-10 lists are compared, and timed rounds per backend
    encoder_corpus_posts: int = Field(default=3_000, ge=10)
    encoder_repeats: int = Field(default=3, ge=1)

    @property
    def world_posts(self) -> int:
        """Posts sections 2-3 need embedded: the largest store either uses."""
        return max(*self.store_posts, self.ranking_posts)


SIZES: dict[Mode, BenchSizes] = {
    "full": BenchSizes(
        cold_texts=512,
        corpus_posts=50_000,
        store_posts=(10_000, 50_000),
        ranking_posts=10_000,
        agents=200,
        latency_queries=200,
        ranking_repeats=3,
    ),
    "quick": BenchSizes(
        cold_texts=128,
        corpus_posts=50_000,
        store_posts=(2_000,),
        ranking_posts=2_000,
        agents=200,
        latency_queries=100,
        ranking_repeats=5,
        cold_cache_posts=600,
        encoder_corpus_posts=1_000,
        encoder_repeats=1,
    ),
    "tiny": BenchSizes(
        cold_texts=16,
        corpus_posts=300,
        store_posts=(300,),
        ranking_posts=300,
        agents=20,
        latency_queries=10,
        ranking_repeats=1,
        encoder_corpus_posts=100,
        encoder_repeats=1,
    ),
}
