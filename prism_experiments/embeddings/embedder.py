"""Text -> L2-normalised vectors, through the on-disk cache, with the model loaded lazily."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from prism_experiments.embeddings.cache import EmbeddingCache, text_digest
from prism_experiments.embeddings.model import DEFAULT_MODEL, load_model, model_cache_key, resolve_model_path
from prism_experiments.paths import cache_dir as default_cache_dir

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2


class Embedder:
    """Embeds texts once: a text seen before (by any process sharing the cache) is never re-encoded."""

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        cache_dir: Path | str | None = None,
        batch_size: int = 64,
    ) -> None:
        resolve_model_path(model_name)  # fail early with the install hint
        self.model_name = model_name
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache = EmbeddingCache(root / "embeddings" / model_cache_key(model_name))
        self.batch_size = batch_size
        self.encoded_count = 0  # texts this embedder sent to the model

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        if len(texts) == 0:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        digests = [text_digest(text) for text in texts]
        rows = self.cache.rows(digests)
        if (rows < 0).any():
            self.cache.refresh()  # another worker may have embedded them meanwhile
            rows = self.cache.rows(digests)
        if (rows < 0).any():
            missing: dict[bytes, str] = {}
            for index in np.flatnonzero(rows < 0):
                missing.setdefault(digests[index], texts[index])
            vectors = self._encode_with_model(list(missing.values()), show_progress)
            self.cache.add(list(missing.keys()), vectors)
            rows = self.cache.rows(digests)
        return self.cache.matrix()[rows]

    def _encode_with_model(self, texts: list[str], show_progress: bool) -> np.ndarray:
        model = load_model(self.model_name)
        vectors = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress and len(texts) > self.batch_size,
        )
        self.encoded_count += len(texts)
        return np.asarray(vectors, dtype=np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
