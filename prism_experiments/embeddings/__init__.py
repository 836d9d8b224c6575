"""Sentence embeddings (all-MiniLM-L6-v2, offline) with an on-disk cache."""

from prism_experiments.embeddings.cache import EmbeddingCache, text_digest
from prism_experiments.embeddings.embedder import EMBEDDING_DIM, Embedder, normalize_rows
from prism_experiments.embeddings.model import DEFAULT_MODEL, EmbeddingModelError, load_model, resolve_model_path

__all__ = [
    "DEFAULT_MODEL",
    "EMBEDDING_DIM",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingModelError",
    "load_model",
    "normalize_rows",
    "resolve_model_path",
    "text_digest",
]
