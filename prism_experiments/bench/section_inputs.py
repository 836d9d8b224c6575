"""What every section gets: sizes, where to write, and the shared embedder and world (built lazily, once)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from prism_experiments.bench.data import BenchWorld, build_bench_world
from prism_experiments.bench.sizes import BenchSizes, Mode
from prism_experiments.deprecation import renamed
from prism_experiments.embeddings import Embedder
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.locations import cache_dir


@dataclass
class SectionInputs:
    mode: Mode
    sizes: BenchSizes
    runs_dir: Path
    work_dir: Path  # scratch space for this invocation, removed at the end
    include_large: bool = False
    include_huge: bool = False
    #: section 6: also time a cold ranking_modes sweep with and without the up-front embedding pass
    cold_sweep: bool = False
    #: section 1: also time the encoder under ONNX Runtime and OpenVINO (prism_experiments/bench/encoder_backends.py)
    encoder_backends: bool = False
    #: section 7: also time `make setup` in a fresh clone
    setup: bool = False
    #: section 8: runs per mode and commit
    research_repeats: int = 1
    #: section 9: agent counts of the scale curve
    scale_agents: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    show_progress: bool = True
    _embedder: Embedder | None = field(default=None, repr=False)
    _world: BenchWorld | None = field(default=None, repr=False)

    @property
    def cache_dir(self) -> Path:
        """The persistent embedding cache (`<runs_dir>/cache`): a second bench run starts warm."""
        return cache_dir(self.runs_dir)

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(cache_dir=self.cache_dir)
        return self._embedder

    def world(self) -> BenchWorld:
        """The agents and embedded corpus sections 2 and 3 share."""
        if self._world is None:
            sizes = self.sizes
            self._world = build_bench_world(
                self.embedder(),
                sizes.agents,
                sizes.corpus_posts,
                sizes.world_posts,
                sizes.cold_cache_posts,
                show_progress=self.show_progress,
            )
        return self._world


def store_config(prefix: str) -> FeedStoreConfig:
    """An in-memory store of its own: ephemeral clients share one Chroma system per process."""
    return FeedStoreConfig(
        collection_name=f"bench-{prefix}-{uuid.uuid4().hex[:12]}", client="ephemeral", exact_search=False
    )


def drop_store(retriever: FeedRetriever) -> None:
    """Free the collection's memory (a FeedRetriever going out of scope leaves it in the shared system)."""
    retriever.drop_collection()


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"BenchContext": SectionInputs})
