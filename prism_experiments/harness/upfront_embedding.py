"""Embed the starting corpora of every pending job of a sweep once, in the driver, before fan-out.

Without this, the first worker to reach a seed embeds that seed's corpus while every other worker
on it waits for the cache's lock (embeddings/embedder.py), one seed at a time. Here the driver
builds each distinct world once, collects every starting text, and sends the ones the cache lacks
to the model in one batched pass with a progress bar; the workers then only read the cache.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from prism_experiments.simulation.settings import RunSettings
from prism_experiments.simulation.starting_world import build_starting_world
from prism_experiments.simulation.stores import shared_embedder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpfrontEmbedding:
    """What the up-front pass did: distinct worlds built, distinct texts seen, texts sent to the model."""

    worlds: int
    texts: int
    encoded: int
    seconds: float


def world_key(cfg: RunSettings) -> str:
    """Identity of a starting world: the seed and the three groups it is built from (not the ranker)."""
    parts = {
        "seed": cfg.seed,
        "agents": cfg.agents.model_dump(mode="json"),
        "network": cfg.network.model_dump(mode="json"),
        "corpus": cfg.corpus.model_dump(mode="json", exclude=set()),
    }
    return json.dumps(parts, sort_keys=True, default=str)


def starting_texts_by_cache(
    configs: Sequence[RunSettings], show_progress: bool = True
) -> tuple[dict[tuple[str, Path], list[str]], int]:
    """Distinct starting-corpus texts per (embedding model, cache dir), and how many distinct worlds gave them."""
    worlds = {world_key(cfg): cfg for cfg in configs}
    texts: dict[tuple[str, Path], dict[str, None]] = {}
    for cfg in tqdm(
        list(worlds.values()),
        desc="building starting worlds",
        unit="world",
        disable=not show_progress or len(worlds) < 2,
    ):
        bucket = texts.setdefault((cfg.rag.embedding_model, cfg.cache_dir), {})
        bucket.update(dict.fromkeys(post.text for post in build_starting_world(cfg).corpus))
    return {key: list(bucket) for key, bucket in texts.items()}, len(worlds)


def embed_starting_corpora(configs: Sequence[RunSettings], show_progress: bool = True) -> UpfrontEmbedding:
    """Put every pending job's starting corpus in the embedding cache; the model loads only if a text is missing."""
    started = time.perf_counter()
    by_cache, n_worlds = starting_texts_by_cache(configs, show_progress)
    n_texts = encoded = 0
    for (model_name, cache_dir), texts in by_cache.items():
        embedder = shared_embedder(model_name, cache_dir)
        before = embedder.encoded_count
        embedder.encode(texts, show_progress=show_progress)
        n_texts += len(texts)
        encoded += embedder.encoded_count - before
    outcome = UpfrontEmbedding(n_worlds, n_texts, encoded, time.perf_counter() - started)
    log.info(
        "starting corpora of %d worlds: %d distinct texts, %d embedded now (%.1f s), the rest cached",
        outcome.worlds,
        outcome.texts,
        outcome.encoded,
        outcome.seconds,
    )
    return outcome
