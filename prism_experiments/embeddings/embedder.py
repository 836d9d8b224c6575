"""Text -> L2-normalised vectors, through the on-disk cache, with the model loaded lazily."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from prism_experiments.embeddings.backends import DEFAULT_BACKEND, backend_runner, check_backend
from prism_experiments.embeddings.cache import EmbeddingCache, text_digest
from prism_experiments.embeddings.model import (
    DEFAULT_MODEL,
    EMBEDDINGS_FOLDER,
    is_loaded,
    load_model,
    model_cache_key,
    resolve_model_path,
)
from prism_experiments.locations import cache_dir as default_cache_dir

log = logging.getLogger(__name__)

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2
#: texts per model call; every call has this many rows, blanks filling the last (`Embedder._encode_with_model`)
BATCH_SIZE = 32
#: Bumped whenever the way vectors are computed changes, so old caches are never mixed in.
ENCODING_VERSION = "fixed-shape-avx2-1"  # AVX2 numerics pinned: prism_experiments/numerics.py


def encoding_version(backend: str = DEFAULT_BACKEND) -> str:
    """The cache folder's version: torch's is ENCODING_VERSION (today's caches), another backend's names it."""
    return ENCODING_VERSION if backend == DEFAULT_BACKEND else f"fixed-shape-{check_backend(backend)}-1"


def cache_directory(root: Path, model_name: str, backend: str = DEFAULT_BACKEND) -> Path:
    """`<root>/embeddings/<model key>/<version>` for torch; `<model key>@<backend>/<version>` for another
    backend, so vectors of two backends never share a folder (embeddings/backends.py)."""
    key = model_cache_key(model_name)
    if backend != DEFAULT_BACKEND:
        key = f"{key}@{check_backend(backend)}"
    return root / EMBEDDINGS_FOLDER / key / encoding_version(backend)


class Embedder:
    """Embeds texts once: a text seen before (by any process sharing the cache) is never re-encoded."""

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        cache_dir: Path | str | None = None,
        batch_size: int = BATCH_SIZE,
        backend: str = DEFAULT_BACKEND,
    ) -> None:
        resolve_model_path(model_name)  # fail early with the install hint
        self.model_name = model_name
        self.backend = check_backend(backend)  # fail early: unknown value, or its packages missing
        self.root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache = EmbeddingCache(cache_directory(self.root, model_name, backend))
        self.batch_size = batch_size
        self.encoded_count = 0  # texts this embedder sent to the model

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        if len(texts) == 0:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        digests = [text_digest(text) for text in texts]
        rows = self.cache.rows(digests)
        if (rows < 0).any():
            # One process encodes at a time: a sweep's workers start on the same corpus, and without
            # the lock each would encode it (measured: 3,057 duplicate encodes in a 20-run sweep).
            with self.cache.exclusive():
                self.cache.refresh()  # another worker may have embedded them meanwhile
                rows = self.cache.rows(digests)
                missing: dict[bytes, str] = {}
                for index in np.flatnonzero(rows < 0):
                    missing.setdefault(digests[int(index)], texts[int(index)])
                if missing:
                    if not is_loaded(self.model_name):  # importing torch and loading take seconds
                        log.info(
                            "embedding: %d of %d texts are not in the cache; loading %s to encode them",
                            len(missing),
                            len(texts),
                            self.model_name,
                        )
                    vectors = self._encode_with_model(list(missing.values()), show_progress)
                    self.cache.add(list(missing.keys()), vectors)
                    rows = self.cache.rows(digests)
        return self.cache.matrix()[rows]

    def _encode_with_model(self, texts: list[str], show_progress: bool) -> np.ndarray:
        """Encode in fixed-shape batches so that a text's vector depends on the text alone.

        sentence-transformers pads each batch to its longest text; the padded length changes the
        float32 accumulation order and so the last bits of every vector (seen: 1.4e-7), which made
        two runs sharing the cache differ depending on who embedded a text first. Here every batch
        is `batch_size` texts (blanks fill the last one) padded to a power-of-two length bucket:
        identical shapes give identical vectors, whatever the batchmates or the thread count.
        """
        import torch

        model = load_model(self.model_name)  # torch's, or (another backend) for its tokenizer
        tokenizer = model.tokenizer
        runner = None if self.backend == DEFAULT_BACKEND else backend_runner(self.backend, self.model_name, self.root)
        max_length = int(model.max_seq_length or 512)  # all-MiniLM-L6-v2 sets 256
        lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]]
        buckets = [min(max_length, _bucket(length)) for length in lengths]
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        by_bucket: dict[int, list[int]] = {}
        for index, bucket in enumerate(buckets):
            by_bucket.setdefault(bucket, []).append(index)
        batches = [
            members[i : i + self.batch_size]
            for _, members in sorted(by_bucket.items())
            for i in range(0, len(members), self.batch_size)
        ]
        for batch in tqdm(batches, desc="embedding", unit="batch", disable=not show_progress or len(batches) < 2):
            length = buckets[batch[0]]
            padded = [texts[i] for i in batch] + [""] * (self.batch_size - len(batch))
            if runner is not None:  # another backend: the same fixed shapes, numpy in and out
                features = tokenizer(
                    padded, padding="max_length", truncation=True, max_length=length, return_tensors="np"
                )
                out[batch] = normalize_rows(runner(dict(features))[: len(batch)])
                continue
            features = tokenizer(padded, padding="max_length", truncation=True, max_length=length, return_tensors="pt")
            with torch.inference_mode():
                vectors = model.forward(dict(features))["sentence_embedding"][: len(batch)]
            out[batch] = torch.nn.functional.normalize(vectors, dim=1).numpy()
        self.encoded_count += len(texts)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def _bucket(length: int) -> int:
    """The padded length of a text of `length` tokens: the next power of two, at least 16."""
    return max(16, 1 << (max(length, 1) - 1).bit_length())
