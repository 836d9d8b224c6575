"""A user's corpus file (.csv, .parquet, .jsonl) -> list[Post], and back.

Required columns: id, author_id, text, timestamp. Optional: every other `Post`
field; an empty or missing value takes the field's default (`has_media`
defaults to "media_type is image/video/gif", `format` to
`classify_tweet_format(text)`). Columns that are not `Post` fields are ignored.
Timestamps are ISO 8601 strings or epoch seconds; naive ones are read as UTC.
`parent_id` need not name a post in the file (a sample of a larger dataset),
but must not name the post itself. A text may hold at most `MAX_TEXT_CHARS`
characters, and a file must hold at least one post.

Every row is validated before anything is returned. The first problem raises
`CorpusFileError` with one line naming the file, the 1-based data row (header
excluded; for .jsonl the line number) and the column.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from prism_experiments.corpus.formats import REPLY_ARCHETYPES, TWEET_FORMATS, classify_tweet_format
from prism_experiments.domain import MEDIA_TYPES, Post, as_utc
from prism_experiments.table_files import SUFFIXES as SUFFIXES
from prism_experiments.table_files import CellError, cell_identifier, is_missing, read_records, table_suffix

REQUIRED_COLUMNS: tuple[str, ...] = ("id", "author_id", "text", "timestamp")
COLUMNS: tuple[str, ...] = tuple(Post.model_fields)
FORMAT_LABELS: tuple[str, ...] = TWEET_FORMATS + REPLY_ARCHETYPES
#: The longest post X accepts (25,000 characters, X Premium's long posts; help.x.com "About X Premium").
#: all-MiniLM-L6-v2 reads only the first 256 word pieces, so a longer text is almost surely a broken file.
MAX_TEXT_CHARS = 25_000

_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


class CorpusFileError(ValueError):
    """A corpus file that cannot become posts; the message names file, row and column."""


_CellError = CellError
_is_missing = is_missing
_identifier = cell_identifier


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _CellError(f"must be a string, got {value!r}")
    return value


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value.to_pydatetime() if isinstance(value, pd.Timestamp) else value
        return as_utc(moment)
    if isinstance(value, bool):
        raise _CellError(f"must be an ISO 8601 string or epoch seconds, got {value!r}")
    if isinstance(value, Real):
        return _from_epoch(float(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            return _from_epoch(float(text))
        except ValueError:
            pass
        try:
            return as_utc(datetime.fromisoformat(text))
        except ValueError:
            pass
    raise _CellError(f"must be an ISO 8601 string or epoch seconds, got {value!r}")


def _from_epoch(seconds: float) -> datetime:
    if not math.isfinite(seconds):
        raise _CellError(f"epoch seconds must be finite, got {seconds!r}")
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise _CellError(f"epoch seconds out of range, got {seconds!r}") from None


def _boolean(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Real) and float(value) in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _CellError(f"must be true or false (or 1/0, yes/no), got {value!r}")


def _count(value: Any) -> int:
    number: float | int
    if isinstance(value, (bool, np.bool_)):
        raise _CellError(f"must be an integer >= 0, got {value!r}")
    if isinstance(value, Integral):
        number = int(value)
    elif isinstance(value, (Real, str)):
        try:
            number = float(value)
        except ValueError:
            raise _CellError(f"must be an integer >= 0, got {value!r}") from None
        if not math.isfinite(number) or not number.is_integer():
            raise _CellError(f"must be an integer >= 0, got {value!r}")
        number = int(number)
    else:
        raise _CellError(f"must be an integer >= 0, got {value!r}")
    if number < 0:
        raise _CellError(f"must be an integer >= 0, got {value!r}")
    return number


def _rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, str)):
        raise _CellError(f"must be a finite number >= 0, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise _CellError(f"must be a finite number >= 0, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise _CellError(f"must be a finite number >= 0, got {value!r}")
    return number


def _bounded(low: float, high: float) -> Callable[[Any], float]:
    """A parser of a number in [low, high] (a political column, REQ-POL-5)."""

    def parse(value: Any) -> float:
        allowed = f"must be a number in [{low:g}, {high:g}]"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, str)):
            raise _CellError(f"{allowed}, got {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise _CellError(f"{allowed}, got {value!r}") from None
        if not math.isfinite(number) or not low <= number <= high:
            raise _CellError(f"{allowed}, got {value!r}")
        return number

    return parse


def _media_type(value: Any) -> str:
    label = _string(value).strip().lower()
    if label not in MEDIA_TYPES:
        raise _CellError(f"must be one of {', '.join(MEDIA_TYPES)}, got {value!r}")
    return label


def _format_label(value: Any) -> str:
    label = _string(value).strip().lower()
    if label not in FORMAT_LABELS:
        raise _CellError(f"must be one of {', '.join(FORMAT_LABELS)}, got {value!r}")
    return label


def _nonempty_text(value: Any) -> str:
    text = _string(value)
    if not text.strip():
        raise _CellError("must be a non-empty string")
    if len(text) > MAX_TEXT_CHARS:
        raise _CellError(f"must be at most {MAX_TEXT_CHARS:,} characters, got {len(text):,}")
    return text


_OPTIONAL_PARSERS: dict[str, Callable[[Any], Any]] = {
    "topic": lambda value: _string(value).strip(),
    "media_type": _media_type,
    "has_media": _boolean,
    "media_description": _string,
    "likes": _count,
    "reshares": _count,
    "replies": _count,
    "velocity": _rate,
    "parent_id": _identifier,
    "format": _format_label,
    # politics (REQ-POL-5, docs/politics.md): read by a world with agents.politics.enabled
    "political": _boolean,
    "slant": _bounded(-1.0, 1.0),
    "animosity": _bounded(0.0, 1.0),
    "moral_emotion": _bounded(0.0, 1.0),
}
_REQUIRED_PARSERS: dict[str, Callable[[Any], Any]] = {
    "id": _identifier,
    "author_id": _identifier,
    "text": _nonempty_text,
    "timestamp": _timestamp,
}


def _fail(path: Path, row: int, column: str, problem: str) -> CorpusFileError:
    return CorpusFileError(f"{path}: row {row}, column {column!r}: {problem}")


def _post_fields(path: Path, row: int, record: dict[str, Any]) -> dict[str, Any]:
    """The Post keyword arguments of one record (raises CorpusFileError on a bad cell)."""
    fields: dict[str, Any] = {}
    for column, parse in (*_REQUIRED_PARSERS.items(), *_OPTIONAL_PARSERS.items()):
        value = record.get(column)
        if _is_missing(value):
            if column in _REQUIRED_PARSERS:
                raise _fail(path, row, column, "missing value (required)")
            continue
        try:
            fields[column] = parse(value)
        except _CellError as error:
            raise _fail(path, row, column, str(error)) from None
    media_type = fields.get("media_type", "none")
    fields.setdefault("has_media", media_type != "none")
    if fields["has_media"] and media_type == "none":
        raise _fail(path, row, "media_type", "must be image, video or gif when has_media is true")
    if not fields["has_media"] and media_type != "none":
        raise _fail(path, row, "media_type", f"must be 'none' or empty when has_media is false, got {media_type!r}")
    if fields.get("parent_id") == fields["id"]:
        raise _fail(path, row, "parent_id", f"a post cannot reply to itself ({fields['id']!r})")
    fields.setdefault("format", classify_tweet_format(fields["text"]))
    return fields


def _posts_from_records(
    path: Path, columns: Iterable[str], records: Iterable[tuple[int, dict[str, Any]]]
) -> list[Post]:
    """Validated posts from (row number, record) pairs read from `path` (used by every reader)."""
    records = list(records)
    if not records:
        raise CorpusFileError(f"{path}: no posts (the file has no data rows)")
    missing = [column for column in REQUIRED_COLUMNS if column not in set(columns)]
    if missing:
        raise CorpusFileError(
            f"{path}: header: missing required column {missing[0]!r}; required: {', '.join(REQUIRED_COLUMNS)}"
        )
    posts: list[Post] = []
    first_row_of_id: dict[str, int] = {}
    for row, record in records:
        fields = _post_fields(path, row, record)
        if fields["id"] in first_row_of_id:
            first = first_row_of_id[fields["id"]]
            raise _fail(path, row, "id", f"duplicate id {fields['id']!r} (first seen in row {first})")
        first_row_of_id[fields["id"]] = row
        try:
            posts.append(Post(**fields))
        except ValidationError as error:
            detail = error.errors()[0]
            column = str(detail["loc"][0]) if detail["loc"] else "?"
            raise _fail(path, row, column, detail["msg"]) from None
    return posts


def _suffix(path: Path) -> str:
    return table_suffix(path, CorpusFileError)


def load_posts(path: str | Path) -> list[Post]:
    """All posts of a .csv, .parquet or .jsonl file, or CorpusFileError (nothing partial)."""
    path = Path(path)
    _suffix(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such corpus file")
    columns, records = read_records(path, CorpusFileError)
    return _posts_from_records(path, columns, records)


def save_posts(posts: Iterable[Post], path: str | Path) -> Path:
    """Write posts as .csv, .parquet or .jsonl (by suffix), readable by `load_posts`; returns the path."""
    path = Path(path)
    suffix = _suffix(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    posts = list(posts)
    if suffix == ".jsonl":
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(post.model_dump_json() + "\n" for post in posts)
        return path
    if suffix == ".csv":
        frame = pd.DataFrame([post.model_dump(mode="json") for post in posts], columns=list(COLUMNS))
        frame.to_csv(path, index=False)
        return path
    frame = pd.DataFrame([post.model_dump() for post in posts], columns=list(COLUMNS))
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    for column in ("id", "author_id", "text", "topic", "media_type", "media_description", "parent_id", "format"):
        frame[column] = frame[column].astype(object)
    frame.to_parquet(path, index=False)
    return path
