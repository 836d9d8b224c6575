"""The feed store: posts, ChromaDB index, retrieval and rendering (REQ-FEED-1 ... REQ-FEED-6)."""

from prism_experiments.feed_store.config import FeedStoreConfig
from prism_experiments.feed_store.rendering import format_feed_for_prompt, relative_time
from prism_experiments.feed_store.retriever import FeedRetriever, similarity_from_distance, similarity_from_dot
from prism_experiments.feed_store.store import StoreError

__all__ = [
    "FeedRetriever",
    "FeedStoreConfig",
    "StoreError",
    "format_feed_for_prompt",
    "relative_time",
    "similarity_from_distance",
    "similarity_from_dot",
]
