"""Post, FeedStoreConfig and rendering: no model, no store."""

from __future__ import annotations

import importlib
import sys
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from pydantic import ValidationError

from prism_experiments import feed_store
from prism_experiments.domain import Post
from prism_experiments.feed_store import FeedStoreConfig, format_feed_for_prompt, relative_time
from prism_experiments.feed_store.retriever import FeedRetriever

NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)


def make_post(i: int = 0, **fields) -> Post:
    base = dict(id=f"p{i}", author_id=f"a{i}", text=f"post number {i}", timestamp=NOW - timedelta(hours=3))
    return Post(**(base | fields))


def test_naive_timestamp_is_read_as_utc_and_aware_input_is_converted() -> None:
    naive = make_post(timestamp=datetime(2026, 1, 1, 10, 0))
    assert naive.timestamp == datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    plus_two = timezone(timedelta(hours=2))
    converted = make_post(timestamp=datetime(2026, 1, 1, 12, 0, tzinfo=plus_two))
    assert converted.timestamp.utcoffset() == timedelta(0)
    assert converted.timestamp.hour == 10


def test_post_defaults_match_seed_fields() -> None:
    post = make_post()
    assert (post.likes, post.reshares, post.replies, post.velocity) == (0, 0, 0, 0.0)
    assert post.format == "storytelling"
    assert post.parent_id is None and post.topic is None
    assert (post.has_media, post.media_type) == (False, "none")


@pytest.mark.parametrize(
    "fields, field_name",
    [
        ({"likes": -1}, "likes"),
        ({"media_type": "audio", "has_media": True}, "media_type"),
        ({"has_media": True}, "media_type"),
        ({"media_type": "image"}, "media_type"),
        ({"id": ""}, "id"),
    ],
)
def test_post_rejects_bad_values_naming_the_field(fields: dict, field_name: str) -> None:
    with pytest.raises(ValidationError, match=field_name):
        make_post(**fields)


@pytest.mark.parametrize(
    "fields, field_name, allowed",
    [
        ({"feed_size": 0}, "feed_size", "greater than or equal to 1"),
        ({"feed_size": 21}, "feed_size", "less than or equal to 20"),
        ({"retrieval_mode": "trending"}, "retrieval_mode", "'preference' or 'random'"),
        ({"client": "cloud"}, "client", "'ephemeral', 'persistent' or 'http'"),
        ({"encoder_backend": "onnx-int8"}, "encoder_backend", "'torch' or 'onnx'"),
        ({"client": "persistent"}, "persist_directory", "required"),
        ({"retrieval_window_hours": 0}, "retrieval_window_hours", "greater than 0"),
        ({"collection_name": "x"}, "collection_name", "pattern"),
        ({"port": 0}, "port", "greater than or equal to 1"),
    ],
)
def test_feed_store_config_rejects_bad_values(fields: dict, field_name: str, allowed: str) -> None:
    with pytest.raises(ValidationError) as info:
        FeedStoreConfig(**fields)
    message = str(info.value)
    assert field_name in message and allowed in message


def test_feed_store_config_defaults() -> None:
    config = FeedStoreConfig()
    assert (config.feed_size, config.retrieval_mode, config.client, config.embedding_model) == (
        10,
        "preference",
        "ephemeral",
        "all-MiniLM-L6-v2",
    )


@pytest.mark.parametrize(
    "age, expected",
    [
        (timedelta(seconds=0), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=-5), "just now"),
        (timedelta(minutes=5), "5m ago"),
        (timedelta(hours=3, minutes=59), "3h ago"),
        (timedelta(hours=23, minutes=59), "23h ago"),
        (timedelta(days=2, hours=5), "2d ago"),
    ],
)
def test_relative_time(age: timedelta, expected: str) -> None:
    assert relative_time(NOW - age, NOW) == expected


def test_rendering_shows_every_media_type_and_engagement_line() -> None:
    posts = [
        make_post(1, has_media=True, media_type="image", media_description="a chart of bitcoin"),
        make_post(2, has_media=True, media_type="video", media_description="a match highlight"),
        make_post(3, has_media=True, media_type="gif", media_description="a dancing cat"),
        make_post(4, likes=12, reshares=3, replies=5, parent_id="p1"),
    ]
    text = format_feed_for_prompt(posts, NOW)
    assert "1. @a1 \u00b7 3h ago" in text
    assert "[\N{CAMERA} IMAGE: a chart of bitcoin]" in text
    assert "[\N{CLAPPER BOARD} VIDEO: a match highlight]" in text
    assert "GIF: a dancing cat]" in text
    assert "\u2764\ufe0f 12  \N{CLOCKWISE RIGHTWARDS AND LEFTWARDS OPEN CIRCLE ARROWS} 3  \N{SPEECH BALLOON} 5" in text
    assert "reply to p1" in text
    # a post without media has no media block
    fourth = text.split("\n\n")[3]
    assert "[" not in fourth


def test_rendering_cap_never_cuts_a_post() -> None:
    posts = [make_post(i) for i in range(1, 6)]
    full = format_feed_for_prompt(posts, NOW)
    blocks = full.split("\n\n")
    two = len("\n\n".join(blocks[:2]))
    capped = format_feed_for_prompt(posts, NOW, max_chars=two + 5)
    assert capped == "\n\n".join(blocks[:2])
    assert format_feed_for_prompt(posts, NOW, max_chars=two) == capped
    assert format_feed_for_prompt(posts, NOW, max_chars=two - 1) == blocks[0]
    assert format_feed_for_prompt(posts, NOW, max_chars=3) == ""
    assert format_feed_for_prompt(posts, NOW, max_chars=len(full)) == full
    with pytest.raises(ValueError, match="max_chars"):
        format_feed_for_prompt(posts, NOW, max_chars=0)


def test_the_old_rag_import_still_works_and_warns_once_naming_the_new_module(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name.startswith("prism_experiments.rag")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.warns(
        DeprecationWarning, match=r"^prism_experiments\.rag is deprecated: import prism_experiments\.feed_store"
    ) as caught:
        old = importlib.import_module("prism_experiments.rag")
        old_retriever = importlib.import_module("prism_experiments.rag.retriever")
    assert len(caught) == 1
    assert old.RAGConfig is FeedStoreConfig and old.FeedRetriever is FeedRetriever
    assert all(getattr(old, name) is getattr(feed_store, name) for name in feed_store.__all__)
    assert old_retriever.FeedRetriever is FeedRetriever


def test_vector_table_is_shared_until_one_side_appends_and_row_vectors_gather() -> None:
    from prism_experiments.feed_store.vector_table import RowVectors, VectorTable

    rng = np.random.default_rng(0)
    first, second = rng.random((3, 384), dtype=np.float32), rng.random((2, 384), dtype=np.float32)
    parent = VectorTable(capacity=8)
    assert parent.append(first).tolist() == [0, 1, 2]
    child = parent.share()
    assert child.array.base is parent.array.base  # one array until a side writes
    assert child.append(second[:1]).tolist() == [3]  # room left, but the array is shared: the child copies it
    assert parent.append(second[1:]).tolist() == [3]  # and the parent too (the child's row 3 stays the child's)
    np.testing.assert_array_equal(child.array[3], second[0])
    np.testing.assert_array_equal(parent.array[3], second[1])
    np.testing.assert_array_equal(child.array[:3], parent.array[:3])
    assert child.append(np.repeat(first, 3, axis=0)).tolist() == list(range(4, 13))  # grows past its capacity
    np.testing.assert_array_equal(child.array[:3], first)
    index = np.array([2, 0, 0, 3])
    rows = RowVectors(child.array, index)
    assert rows.shape == (4, 384) and len(rows) == 4
    np.testing.assert_array_equal(rows[1:3], first[[0, 0]])
    np.testing.assert_array_equal(rows[np.array([3])], second[[0]])
    np.testing.assert_array_equal(np.asarray(rows), child.array[index])
    np.testing.assert_array_equal(rows.astype(np.float64), child.array[index].astype(np.float64))
    with pytest.raises(ValueError):
        child.array[0, 0] = 1.0  # read only
