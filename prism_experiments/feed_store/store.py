"""The ChromaDB side of the feed store: client, collection, and Post <-> metadata (REQ-FEED-3, REQ-FEED-4.2)."""

from __future__ import annotations

from typing import Any

from prism_experiments.domain import Post, epoch_microseconds, from_epoch_microseconds
from prism_experiments.feed_store.config import FeedStoreConfig


class StoreError(RuntimeError):
    """ChromaDB could not be reached or the collection could not be created."""


def _location(config: FeedStoreConfig) -> str:
    if config.client == "persistent":
        return f"persistent directory {config.persist_directory}"
    if config.client == "http":
        return f"server http://{config.host}:{config.port}"
    return "in-memory (ephemeral)"


def open_collection(config: FeedStoreConfig) -> Any:
    """Create or open the cosine-space collection named in the config."""
    import chromadb

    try:
        if config.client == "persistent":
            assert config.persist_directory is not None
            config.persist_directory.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=str(config.persist_directory))
        elif config.client == "http":
            client = chromadb.HttpClient(host=config.host, port=config.port)
        else:
            client = chromadb.EphemeralClient()
        return client.get_or_create_collection(
            config.collection_name,
            configuration={
                "hnsw": {
                    "space": "cosine",
                    "ef_search": config.hnsw_ef_search,
                    "ef_construction": config.hnsw_ef_construction,
                    "max_neighbors": config.hnsw_max_neighbors,
                }
            },
        )
    except Exception as exc:
        raise StoreError(
            f"ChromaDB ({config.client} client, {_location(config)}) failed to open collection "
            f"{config.collection_name!r}: {exc}"
        ) from exc


def max_batch_size(collection: Any) -> int:
    try:
        return int(collection._client.get_max_batch_size())
    except Exception:  # older/remote clients: Chroma's documented SQLite limit
        return 5000


def post_to_metadata(post: Post) -> dict[str, str | int | float | bool]:
    """Chroma metadata for filtering (REQ-FEED-4.2) and for a lossless round trip; None values are left out."""
    metadata: dict[str, str | int | float | bool] = {
        "author_id": post.author_id,
        "timestamp": epoch_microseconds(post.timestamp) // 1_000_000,
        "timestamp_us": epoch_microseconds(post.timestamp),
        "has_media": post.has_media,
        "media_type": post.media_type,
        "format": post.format,
        "likes": post.likes,
        "reshares": post.reshares,
        "replies": post.replies,
        "velocity": float(post.velocity),
    }
    for key in ("topic", "media_description", "parent_id", "political", "slant", "animosity", "moral_emotion"):
        value = getattr(post, key)
        if value is not None:
            metadata[key] = value
    return metadata


def metadata_to_post(post_id: str, document: str, metadata: dict[str, Any]) -> Post:
    timestamp = from_epoch_microseconds(int(metadata["timestamp_us"]))
    return Post(
        id=post_id,
        author_id=str(metadata["author_id"]),
        text=document,
        timestamp=timestamp,
        topic=metadata.get("topic"),
        has_media=bool(metadata.get("has_media", False)),
        media_type=metadata.get("media_type", "none"),
        media_description=metadata.get("media_description"),
        likes=int(metadata.get("likes", 0)),
        reshares=int(metadata.get("reshares", 0)),
        replies=int(metadata.get("replies", 0)),
        velocity=float(metadata.get("velocity", 0.0)),
        parent_id=metadata.get("parent_id"),
        format=str(metadata.get("format", "storytelling")),
        political=metadata.get("political"),
        slant=metadata.get("slant"),
        animosity=metadata.get("animosity"),
        moral_emotion=metadata.get("moral_emotion"),
    )
