"""Embed the starting corpora of every pending job of a sweep once, in the driver, before fan-out.

Without this, the first worker to reach a seed embeds that seed's corpus while every other worker
on it waits for the cache's lock (embeddings/embedder.py), one seed at a time. Here the driver
builds each distinct world once, collects every starting text, and sends the ones the cache lacks
to the model in one batched pass with a progress bar; the workers then only read the cache.

When the corpora come from a text pool and the runs take many steps (`pool_worth_embedding`), the pass
embeds the whole pool: the runs' new posts and replies are drawn from it too, and each step that meets a
text not yet cached sends its few new texts to the model as a full batch of blank-padded rows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from prism_experiments.corpus.templates import pooled_texts
from prism_experiments.embeddings.embedder import BATCH_SIZE
from prism_experiments.simulation.settings import RunSettings
from prism_experiments.simulation.starting_world import corpus_topics
from prism_experiments.simulation.stores import shared_embedder
from prism_experiments.simulation.world_cache import shared_starting_world, world_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpfrontEmbedding:
    """What the up-front pass did: distinct worlds built, distinct texts seen (starting corpora and whole text
    pools), texts sent to the model, and how many of the texts seen came from a pool beyond the corpora."""

    worlds: int
    texts: int
    encoded: int
    seconds: float
    pooled: int = 0


#: where vectors go: (embedding model, cache dir, encoder backend), `shared_embedder`'s arguments
CacheKey = tuple[str, Path, str]


def cache_key(cfg: RunSettings) -> CacheKey:
    """Where a run's vectors go."""
    return (cfg.rag.embedding_model, cfg.cache_dir, cfg.rag.encoder_backend)


def starting_texts_by_cache(
    configs: Sequence[RunSettings], show_progress: bool = True, worlds_dir: Path | None = None
) -> tuple[dict[CacheKey, list[str]], int]:
    """Distinct starting-corpus texts per (embedding model, cache dir, encoder backend), and how many distinct
    worlds gave them; each world is kept in `worlds_dir` for the sweep's runs (simulation/world_cache.py)."""
    worlds = {world_key(cfg): cfg for cfg in configs}
    texts: dict[CacheKey, dict[str, None]] = {}
    for cfg in tqdm(
        list(worlds.values()),
        desc="building starting worlds",
        unit="world",
        disable=not show_progress or len(worlds) < 2,
    ):
        bucket = texts.setdefault(cache_key(cfg), {})
        bucket.update(dict.fromkeys(post.text for post in shared_starting_world(cfg, worlds_dir).corpus))
    return {key: list(bucket) for key, bucket in texts.items()}, len(worlds)


def pool_worth_embedding(pool_texts: int, steps: int, batch_size: int) -> bool:
    """Whether the up-front pass embeds a whole text pool: when the sweep's runs take at least as many steps as
    the pool fills batches.

    Embedding the rest R of a pool of P texts up front costs R / batch_size batches. In the runs, a step whose
    new texts include one not yet cached costs a whole batch (fixed shapes: embeddings/embedder.py); a step
    draws at least one pooled text, missing with probability R / P, so the runs spend about steps × R / P
    batches or more. The pool is worth it when steps × R / P >= R / batch_size, i.e. steps × batch_size >= P."""
    return steps * batch_size >= pool_texts


def sweep_pools(configs: Sequence[RunSettings], batch_size: int) -> dict[CacheKey, list[str]]:
    """Per `cache_key`: the texts of every text pool that `pool_worth_embedding` finds worth embedding before
    fan-out, counting the steps of every pending run that draws from it."""
    steps: dict[tuple[CacheKey, tuple[str, ...], float, int], int] = {}
    for cfg in configs:
        if cfg.corpus.text_pool_size > 0:
            key = (
                cache_key(cfg),
                tuple(corpus_topics(cfg.corpus)),
                cfg.corpus.hashtag_fraction,
                cfg.corpus.text_pool_size,
            )
            steps[key] = steps.get(key, 0) + cfg.simulation.n_steps
    pools: dict[CacheKey, list[str]] = {}
    for (cache, topics, hashtag_fraction, size), n_steps in steps.items():
        texts = pooled_texts(topics, hashtag_fraction, size)
        if pool_worth_embedding(len(texts), n_steps, batch_size):
            pools.setdefault(cache, []).extend(texts)
    return pools


def embed_starting_corpora(
    configs: Sequence[RunSettings], show_progress: bool = True, worlds_dir: Path | None = None
) -> UpfrontEmbedding:
    """Put every pending job's starting corpus in the embedding cache, and the whole text pool when the runs take
    enough steps (`sweep_pools`); the model loads only if a text is missing. The worlds built for it are kept in
    `worlds_dir`, where the runs then load them."""
    started = time.perf_counter()
    by_cache, n_worlds = starting_texts_by_cache(configs, show_progress, worlds_dir)
    pools = sweep_pools(configs, BATCH_SIZE)  # shared_embedder's batches
    n_texts = encoded = pooled = 0
    for cache in {**by_cache, **pools}:
        starting = by_cache.get(cache, [])
        texts = list(dict.fromkeys([*starting, *pools.get(cache, [])]))
        pooled += len(texts) - len(starting)
        embedder = shared_embedder(*cache)
        before = embedder.encoded_count
        embedder.encode(texts, show_progress=show_progress)
        n_texts += len(texts)
        encoded += embedder.encoded_count - before
    outcome = UpfrontEmbedding(n_worlds, n_texts, encoded, time.perf_counter() - started, pooled)
    log.info(
        "starting corpora of %d worlds: %d distinct texts (%d more from the text pool their runs draw from), "
        "%d embedded now (%.1f s), the rest cached",
        outcome.worlds,
        outcome.texts,
        outcome.pooled,
        outcome.encoded,
        outcome.seconds,
    )
    return outcome
