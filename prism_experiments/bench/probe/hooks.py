"""The probe's wrappers: model loads, texts sent to the model, and base-index builds (posts added to an empty store)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _writer(log_dir: str) -> Callable[[dict[str, Any]], None]:
    path = Path(log_dir) / f"{os.getpid()}.jsonl"

    def write(event: dict[str, Any]) -> None:
        # one short append per event: lines from one process never interleave
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(event | {"pid": os.getpid()}) + "\n")

    return write


def corpus_digest(texts: Sequence[str]) -> str:
    """Identity of a corpus by content (post ids repeat across seeds; texts do not)."""
    digest = hashlib.sha1()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def install(log_dir: str) -> None:
    from prism_experiments.embeddings import embedder as embedder_module
    from prism_experiments.embeddings import model as model_module
    from prism_experiments.embeddings.cache import text_digest
    from prism_experiments.feed_store.retriever import FeedRetriever

    write = _writer(log_dir)
    load_model = embedder_module.load_model
    encode = embedder_module.Embedder._encode_with_model
    add_posts = FeedRetriever.add_posts

    @functools.wraps(load_model)
    def probed_load_model(name: str) -> Any:
        before = len(model_module._LOADED)
        started = time.perf_counter()
        model = load_model(name)
        if len(model_module._LOADED) > before:
            write({"event": "model_load", "seconds": time.perf_counter() - started})
        return model

    @functools.wraps(encode)
    def probed_encode(self: Any, texts: list[str], show_progress: bool) -> Any:
        started = time.perf_counter()
        vectors = encode(self, texts, show_progress)
        write(
            {
                "event": "encode",
                "n": len(texts),
                "seconds": time.perf_counter() - started,
                "digests": [text_digest(text).hex() for text in texts],
            }
        )
        return vectors

    @functools.wraps(add_posts)
    def probed_add_posts(self: Any, posts: Sequence[Any], *args: Any, **kwargs: Any) -> None:
        # posts added to an empty store build a base index; adds to a filled (or forked) one are new posts
        building = len(self) == 0 and len(posts) > 0
        started = time.perf_counter()
        add_posts(self, posts, *args, **kwargs)
        if building:
            write(
                {
                    "event": "index_build",
                    "n": len(posts),
                    "seconds": time.perf_counter() - started,
                    "corpus": corpus_digest([post.text for post in posts]),
                }
            )

    embedder_module.load_model = probed_load_model
    # the probe replaces methods in the child process it measures, on purpose
    embedder_module.Embedder._encode_with_model = probed_encode  # type: ignore[method-assign]
    FeedRetriever.add_posts = probed_add_posts  # type: ignore[method-assign]
