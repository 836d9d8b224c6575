"""The feed store: posts, ChromaDB index, retrieval and rendering (REQ-FEED-1 ... REQ-FEED-6)."""

from prism_experiments.rag.config import RAGConfig
from prism_experiments.rag.rendering import format_feed_for_prompt, relative_time
from prism_experiments.rag.retriever import FeedRetriever, similarity_from_distance, similarity_from_dot
from prism_experiments.rag.store import StoreError

__all__ = [
    "FeedRetriever",
    "RAGConfig",
    "StoreError",
    "format_feed_for_prompt",
    "relative_time",
    "similarity_from_distance",
    "similarity_from_dot",
]
