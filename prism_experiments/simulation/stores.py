"""Per-process caches of what repeats across runs: the embedder (and its model) and the indexed
starting corpus. A sweep worker builds each once and forks the index for every run."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from prism_experiments.domain import Post
from prism_experiments.embeddings import Embedder
from prism_experiments.embeddings.backends import DEFAULT_BACKEND
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig

log = logging.getLogger(__name__)
MAX_BASE_STORES = 2  # a worker alternates between at most a couple of corpora (seeds) in a sweep

_EMBEDDERS: dict[tuple[str, str, str], Embedder] = {}
_BASE_STORES: OrderedDict[str, FeedRetriever] = OrderedDict()
_INDEX_FIELDS = (
    "embedding_model",
    "client",
    "persist_directory",
    "host",
    "port",
    "hnsw_ef_search",
    "hnsw_ef_construction",
    "hnsw_max_neighbors",
)


def shared_embedder(model_name: str, cache_dir: Path, backend: str = DEFAULT_BACKEND) -> Embedder:
    """One embedder per (model, cache, encoder backend) per process: its in-memory cache and the model are reused."""
    key = (model_name, str(cache_dir), backend)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = Embedder(model_name, cache_dir, backend=backend)
    return _EMBEDDERS[key]


def rag_embedder(rag: FeedStoreConfig, cache_dir: Path) -> Embedder:
    """The shared embedder of a run's store settings: its model and encoder backend, on `cache_dir`."""
    return shared_embedder(rag.embedding_model, cache_dir, rag.encoder_backend)


def corpus_fingerprint(posts: Sequence[Post], rag: FeedStoreConfig) -> str:
    """Identity of an index: every post's content and the settings that shape the index."""
    digest = hashlib.sha256(rag.model_dump_json(include=set(_INDEX_FIELDS)).encode())
    if rag.encoder_backend != DEFAULT_BACKEND:  # torch's fingerprints stay those of before the option
        digest.update(rag.encoder_backend.encode())
    for post in posts:
        digest.update(post.model_dump_json().encode())
    return digest.hexdigest()[:16]


def base_store(
    rag: FeedStoreConfig, corpus: Sequence[Post], embedder: Embedder, show_progress: bool = False
) -> FeedRetriever:
    """The starting corpus indexed once per process (and once per persistent directory); never written to."""
    key = corpus_fingerprint(corpus, rag)
    if key in _BASE_STORES:
        _BASE_STORES.move_to_end(key)
        log.info("reusing the indexed starting corpus %s (%d posts)", key, len(corpus))
        return _BASE_STORES[key]
    store = FeedRetriever(
        rag.model_copy(update={"collection_name": f"{rag.collection_name}-base-{key}"}), embedder=embedder
    )
    if len(store) not in (0, len(corpus)):  # a half-written persistent collection: rebuild it
        store.drop_collection()
        store = FeedRetriever(store.config, embedder=embedder)
    if len(store) == 0:
        store.add_posts(corpus, show_progress=show_progress)
        store.share_posts()  # the caller's posts: a change goes to a copy
    _BASE_STORES[key] = store
    while len(_BASE_STORES) > MAX_BASE_STORES:
        _, evicted = _BASE_STORES.popitem(last=False)
        if evicted.config.client == "ephemeral":
            evicted.drop_collection()
    return store


def run_store(
    rag: FeedStoreConfig,
    cache_dir: Path,
    corpus: Sequence[Post],
    embedder: Embedder | None = None,
    show_progress: bool = False,
) -> FeedRetriever:
    """The store one run writes into: a fork of the shared starting index; the caller drops it after the run."""
    rag = rag.model_copy(update={"cache_dir": cache_dir})
    embedder = embedder or rag_embedder(rag, cache_dir)
    base = base_store(rag, corpus, embedder, show_progress=show_progress)
    # the run writes (new posts, counters) into its own fork; the base index serves the next run
    return base.fork(f"{rag.collection_name}-run-{uuid.uuid4().hex[:12]}")
