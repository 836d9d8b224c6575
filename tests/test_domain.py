"""The neutral domain package: timestamps, the event-log schema and the recorder that fills it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from prism_experiments.domain import (
    EPOCH,
    EVENT_TABLES,
    EXPOSURE_SOURCES,
    TABLE_COLUMNS,
    TOPIC_VOCABULARIES,
    TOPICS,
    EventLog,
    EventRecorder,
    Post,
    TopicVocabulary,
    as_utc,
    epoch_microseconds,
    from_epoch_microseconds,
    topics,
)

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def post(post_id: str, author: str = "a1", **fields) -> Post:
    return Post(id=post_id, author_id=author, text=f"text of {post_id}", timestamp=T0, topic="music", **fields)


# --- timestamps ---------------------------------------------------------------------------------


def test_epoch_microseconds_are_exact_and_round_trip() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 891_234, tzinfo=UTC)
    assert epoch_microseconds(EPOCH + timedelta(microseconds=1)) == 1
    # a float timestamp loses the last digit here; the integer keeps it
    assert epoch_microseconds(moment) % 10 == 4
    assert from_epoch_microseconds(epoch_microseconds(moment)) == moment


def test_as_utc_reads_naive_as_utc_and_converts_aware() -> None:
    assert as_utc(datetime(2026, 1, 1, 12)) == T0
    plus_two = timezone(timedelta(hours=2))
    converted = as_utc(datetime(2026, 1, 1, 14, tzinfo=plus_two))
    assert converted == T0 and converted.tzinfo == UTC


# --- schema -------------------------------------------------------------------------------------


def test_event_tables_are_the_schema_tables_in_order() -> None:
    assert EVENT_TABLES == ("posts", "exposures", "engagements", "follows", "cascade_edges")
    assert tuple(TABLE_COLUMNS) == EVENT_TABLES
    assert tuple(EventLog().tables()) == EVENT_TABLES


# --- recorder -----------------------------------------------------------------------------------


@pytest.fixture()
def recorded() -> tuple[EventLog, list[Post]]:
    start, reply = post("p1"), post("r0002-a2-0", author="a2", parent_id="p1")
    start.likes, start.reshares, start.replies = 4, 1, 1
    recorder = EventRecorder([start.id])
    recorder.exposures(  # agents a2 and a3 (indices 0, 1) are shown the post of row 0 at positions 0 and 1
        2,
        np.array([0, 1]),
        np.array([0, 0]),
        np.array([0, 1]),
        np.array([0.5, 0.6]),
        np.array([0.4, 0.6]),
        np.array([False, True]),
        np.array([EXPOSURE_SOURCES.index("out_of_network"), EXPOSURE_SOURCES.index("in_network")]),
        np.array([0.75, 0.25]),
        {"similarity": np.array([0.5, 0.6]), "oon_scale": np.array([0.8, np.nan])},
    )
    recorder.engagement(2, "a2", start, "reshare", "a3", False)
    recorder.engagement(2, "a2", start, "reply", None, False)
    recorder.follow(2, "a2", "a1", start.id)
    recorder.cascade_edge(start.id, "a1", "a2", 2)
    recorder.created(reply, 2)
    return EventLog(**recorder.tables([start, reply], ["a2", "a3"])), [start, reply]


def test_recorded_tables_follow_the_schema(recorded) -> None:
    log, _ = recorded
    for name, table in log.tables().items():
        assert tuple(table.columns[: len(TABLE_COLUMNS[name])]) == TABLE_COLUMNS[name], name
    assert [len(table) for table in log.tables().values()] == [2, 2, 2, 1, 1]


def test_exposure_rows_carry_post_fields_and_components(recorded) -> None:
    exposures = recorded[0].exposures
    first = exposures.iloc[0]
    assert (first["agent_id"], first["post_id"], first["author_id"], first["topic"]) == ("a2", "p1", "a1", "music")
    assert first["interest_similarity"] == 0.75 and first["source"] == "out_of_network"
    assert list(exposures.columns[-2:]) == ["comp_oon_scale", "comp_similarity"]
    assert exposures["comp_similarity"].tolist() == [0.5, 0.6]
    assert exposures["comp_oon_scale"].iloc[0] == 0.8 and np.isnan(exposures["comp_oon_scale"].iloc[1])
    assert exposures["step"].dtype == np.int64 and exposures["in_network"].dtype == bool
    assert exposures["final_score"].dtype == np.float64


def test_posts_table_marks_the_starting_corpus_and_keeps_final_counters(recorded) -> None:
    posts = recorded[0].posts.set_index("post_id")
    assert posts.loc["p1", "created_step"] == -1 and posts.loc["r0002-a2-0", "created_step"] == 2
    assert posts.loc["r0002-a2-0", "parent_id"] == "p1"
    assert posts.loc["p1", ["likes", "reshares", "replies"]].tolist() == [4, 1, 1]
    assert str(posts["timestamp"].dt.tz) == "UTC"


def test_engagement_follow_and_cascade_rows(recorded) -> None:
    log, _ = recorded
    via = log.engagements["via_agent_id"]
    assert via.iloc[0] == "a3" and via.isna().tolist() == [False, True]
    assert log.engagements["action"].tolist() == ["reshare", "reply"]
    assert log.follows.iloc[0].tolist() == [2, "a2", "a1", "p1"]
    assert log.cascade_edges.iloc[0].tolist() == ["p1", "a1", "a2", 2]


def test_tables_are_built_once_and_keep_their_rows_after_the_recorder_releases_its_columns() -> None:
    """The tables view or take over what was recorded; the recorder then refuses a second build."""
    start = post("p1")
    recorder = EventRecorder([start.id])
    recorder.exposures(
        0, np.array([1, 0]), np.array([0, 0]), np.array([0, 1]), np.array([0.5, 0.6]), np.array([0.4, 0.6]),
        np.array([True, False]), np.array([0, 1]), np.array([0.75, 0.25]), {"similarity": np.array([0.5, 0.6])},
    )  # fmt: skip
    recorder.follow(0, "a1", "a0", start.id)
    tables = recorder.tables([start], ["a0", "a1"])
    assert tables["exposures"]["agent_id"].tolist() == ["a1", "a0"]
    assert tables["exposures"]["in_network"].tolist() == [True, False]
    assert tables["exposures"]["step"].dtype == np.int64 and tables["exposures"]["position"].tolist() == [0, 1]
    assert tables["follows"]["follower_id"].tolist() == ["a1"]
    with pytest.raises(RuntimeError, match="built once"):
        recorder.tables([start], ["a0", "a1"])


def test_a_post_the_recorder_was_never_told_about_is_an_error() -> None:
    with pytest.raises(KeyError):
        EventRecorder([]).tables([post("p1")])


def test_empty_recording_gives_typed_empty_tables_that_round_trip(tmp_path: Path) -> None:
    log = EventLog(**EventRecorder([]).tables([]))
    assert all(table.empty for table in log.tables().values())
    assert log.exposures["position"].dtype == np.int64 and log.engagements["in_network"].dtype == bool
    log.to_parquet(tmp_path)
    back = EventLog.from_parquet(tmp_path)
    for name, table in log.tables().items():
        pd.testing.assert_frame_equal(getattr(back, name), table, check_dtype=name != "posts", check_index_type=False)


def test_a_table_written_in_slices_reads_back_as_one_written_whole(tmp_path: Path) -> None:
    """`write_parquet` converts a slice of rows at a time; the file reads back as `to_parquet`'s, a column of Nones
    in the first slice typed by its strings later."""
    from prism_experiments.domain.event_log import write_parquet

    n = 1000
    table = pd.DataFrame(
        {
            "step": np.arange(n),
            "agent_id": pd.Series([f"agent_{i % 7}" for i in range(n)], dtype=object),
            "topic": pd.Series([None] * 400 + ["music"] * 600, dtype=object),
            "score": np.linspace(0, 1, n),
            "in_network": np.arange(n) % 3 == 0,
        }
    )
    table.to_parquet(tmp_path / "whole.parquet", index=False)
    write_parquet(table, tmp_path / "sliced.parquet", rows_per_slice=300)
    import pyarrow.parquet as pq

    assert pq.ParquetFile(tmp_path / "sliced.parquet").metadata.num_row_groups == 4
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "sliced.parquet"), pd.read_parquet(tmp_path / "whole.parquet")
    )


def test_sparse_float_columns_are_what_from_records_gives() -> None:
    """Score components kept as float arrays, not a dict per row, give the same table."""
    from prism_experiments.domain.recorder import SparseFloatColumns

    rows = [{"b": 1.5, "a": np.float64(2.0)}, {}, {"a": 3, "c": True}, {"b": -0.25}]
    columns = SparseFloatColumns()
    for row in rows:
        columns.append(row)
    got = columns.columns()
    expected = pd.DataFrame.from_records(rows).astype(float)
    assert list(got) == ["b", "a", "c"] == list(expected.columns)  # first appearance
    for name in expected.columns:
        np.testing.assert_array_equal(got[name], expected[name].to_numpy())
    assert len(columns) == 4


def test_object_columns_are_what_the_pandas_round_trip_gives_and_share_the_strings() -> None:
    """Exposure id columns built as object columns: the values and dtype `typed(pd.DataFrame(...))` gives (its
    `astype(object)`: a None among strings becomes NaN, a column of Nones stays), holding the strings given rather
    than copies of them."""
    from prism_experiments.domain.recorder import _object_column

    for values in (["music", None, "sports"], [None, None], ["a", "b"], []):
        column = np.empty(len(values), dtype=object)
        column[:] = values
        old = pd.DataFrame({"topic": column})["topic"].astype(object)
        new = _object_column(column)
        assert new.dtype == old.dtype == object
        assert [v if isinstance(v, str) or v is None else "nan" for v in new] == [
            v if isinstance(v, str) or v is None else "nan" for v in old
        ]
    text = "".join(["shared", "-id"])  # a string object of its own
    column = np.empty(2, dtype=object)
    column[:] = [text, text]
    assert _object_column(column).iloc[1] is text
    assert pd.DataFrame({"topic": column})["topic"].astype(object).iloc[1] is not text  # what it saves


def test_posts_given_every_field_share_one_fields_set_and_copies_keep_sharing_it() -> None:
    every = dict(has_media=False, media_type="none", media_description=None, likes=0, reshares=0)
    every |= dict(replies=0, velocity=0.0, parent_id=None, format="list")
    every |= dict(political=None, slant=None, animosity=None, moral_emotion=None)  # REQ-POL-4's fields
    a, b = post("p1", **every), post("p2", **every)
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__ and a.model_fields_set == set(Post.model_fields)
    partial = post("p3")
    assert partial.__pydantic_fields_set__ is not a.__pydantic_fields_set__ and "likes" not in partial.model_fields_set
    copy = a.changeable_copy()
    copy.likes += 3
    assert copy.__pydantic_fields_set__ is a.__pydantic_fields_set__ and (a.likes, copy.likes) == (0, 3)
    assert b.model_fields_set == set(Post.model_fields) and copy == a.model_copy(update={"likes": 3})


# --- topic vocabularies: the data file --------------------------------------------------------------------------

#: sha256 of the canonical JSON of every vocabulary (below), computed from the Python literals topics.py held before
#: the words moved to topics.json: any changed, added, removed or reordered word or topic changes it
VOCABULARY_DIGEST = "d0bd0aaf3b9919eef67c805904be2cd92c37ca4c21530b478011a7c4f6760b29"


def test_vocabularies_are_the_recorded_words_in_the_recorded_order() -> None:
    canonical = json.dumps(
        [dataclasses.asdict(TOPIC_VOCABULARIES[topic]) for topic in TOPICS],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert hashlib.sha256(canonical.encode("utf-8")).hexdigest() == VOCABULARY_DIGEST
    for vocabulary in TOPIC_VOCABULARIES.values():
        for field in dataclasses.fields(TopicVocabulary)[1:]:
            assert type(getattr(vocabulary, field.name)) is tuple, (vocabulary.topic, field.name)


def _topics_text(edit: Callable[[list[dict[str, Any]]], object]) -> str:
    """The package's topics.json with `edit` applied to its parsed list."""
    data = json.loads(resources.files("prism_experiments.domain").joinpath(topics.DATA_FILE).read_text("utf-8"))
    edit(data)
    return json.dumps(data)


def _set(index: int, field: str, value: object) -> Callable[[list[dict[str, Any]]], object]:
    return lambda data: data[index].__setitem__(field, value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda data: data[1].pop("nouns"), "topic 'technology': field 'nouns' is missing"),
        (_set(0, "hashtags", ["#ok", 3]), "topic 'crypto': field 'hashtags': entry 1 must be a non-blank string"),
        (_set(2, "people", []), "topic 'politics': field 'people' must be a non-empty list of strings"),
        (_set(2, "people", "voters"), "topic 'politics': field 'people' must be a non-empty list of strings"),
        (_set(3, "actions", ["run", " "]), "topic 'sports': field 'actions': entry 1 must be a non-blank string"),
        (lambda data: data.append(data[0]), "topic 'crypto': appears twice"),
        (_set(4, "mood", ["x"]), "topic 'music': field 'mood' is unknown"),
        (_set(5, "topic", 7), "entry 5: field 'topic' must be a non-blank string"),
        (_set(6, "gif_descriptions", ["GIF of {noun}"]), "topic 'health': field 'gif_descriptions': entry 0 may hold"),
        (_set(6, "image_descriptions", ["a {broken"]), "topic 'health': field 'image_descriptions': entry 0:"),
        (lambda data: data.clear(), "must be a non-empty list of topic objects"),
    ],
)
def test_a_malformed_vocabulary_file_fails_in_one_line_naming_topic_and_field(
    edit: Callable[[list[dict[str, Any]]], object], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        topics.parse_vocabularies(_topics_text(edit), "topics.json")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("topics.json: ")


def test_a_repeated_key_or_bad_json_fails_in_one_line() -> None:
    text = _topics_text(lambda data: None)
    repeated = text.replace('"nouns": [', '"nouns": ["again"], "nouns": [', 1)
    with pytest.raises(ValueError, match=re.escape("topics.json: topic 'crypto': field 'nouns' appears twice")):
        topics.parse_vocabularies(repeated, "topics.json")
    with pytest.raises(ValueError, match=r"^topics.json: Unterminated string .* line 1 column \d+"):
        topics.parse_vocabularies(text[:-5], "topics.json")


def test_the_vocabulary_file_is_package_data_so_a_wheel_ships_it() -> None:
    """Every non-Python file of the package matches pyproject.toml's package-data (a wheel leaves out the rest)."""
    root = Path(__file__).resolve().parents[1]
    package_data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = root / "prism_experiments"
    data_files = [
        path
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    ]
    assert package / "domain" / topics.DATA_FILE in data_files
    for path in data_files:
        owner = ".".join(path.parent.relative_to(root).parts)
        assert any(path.match(pattern) for pattern in package_data.get(owner, [])), path
