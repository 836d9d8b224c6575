"""A gate that keeps a sweep's jobs RUNNING until a test lets them go: the embedding cache's folder lock.

A job whose cache is empty encodes its corpus inside its RUNNING run, under that lock
(prism_experiments/embeddings/cache.py `exclusive()`): while a test holds it, every such job waits there, however
fast or slow the machine. The sweep must not embed before fan-out (`NO_UPFRONT_EMBEDDING`), else its driver waits
at the gate before any run exists."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prism_experiments.embeddings.embedder import cache_directory
from prism_experiments.embeddings.model import DEFAULT_MODEL

#: the override that leaves every embedding to the jobs (the gate then holds them, not the driver)
NO_UPFRONT_EMBEDDING = "hydra.callbacks.prism_sweep.embed_before_fanout=false"


@contextmanager
def encoding_held(cache_dir: Path) -> Iterator[Path]:
    """Hold the lock of `cache_dir`'s embedding folder (the default model, torch) until the block ends."""
    folder = cache_directory(cache_dir, DEFAULT_MODEL)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
