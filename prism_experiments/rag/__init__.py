"""Deprecated: the feed store moved to `prism_experiments.feed_store`; this name re-exports it for old imports."""

import sys
import warnings

from prism_experiments.feed_store import (
    FeedRetriever,
    FeedStoreConfig,
    StoreError,
    config,
    format_feed_for_prompt,
    relative_time,
    rendering,
    retriever,
    similarity_from_distance,
    similarity_from_dot,
    store,
)

warnings.warn(
    "prism_experiments.rag is deprecated: import prism_experiments.feed_store instead", DeprecationWarning, stacklevel=2
)

#: the config model's name before the move
RAGConfig = FeedStoreConfig

# `from prism_experiments.rag.retriever import FeedRetriever` keeps working: the old submodules are the new ones
for _module in (config, rendering, retriever, store):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module

__all__ = [
    "FeedRetriever",
    "FeedStoreConfig",
    "RAGConfig",
    "StoreError",
    "format_feed_for_prompt",
    "relative_time",
    "similarity_from_distance",
    "similarity_from_dot",
]
