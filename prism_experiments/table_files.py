"""Reading a user's table file (.csv, .parquet, .jsonl) into (columns, numbered records), with one-line errors.

Shared by the corpus loader (`corpus/loader.py`) and the population loader (`agents/population_file.py`):
each passes its own error class, so a message names the file, the 1-based data row (header excluded; for
.jsonl the line number) and, where there is one, the column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from numbers import Integral
from pathlib import Path
from typing import Any

import pandas as pd

Records = list[tuple[int, dict[str, Any]]]
ErrorFactory = Callable[[str], ValueError]


class CellError(ValueError):
    """A bad cell value; the caller adds file, row and column."""


def is_missing(value: Any) -> bool:
    """An empty cell: None, NaN, NaT or a blank string."""
    if value is None or value is pd.NaT:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip() == ""


def cell_identifier(value: Any) -> str:
    """An id cell (a string or an integer) as a string, surrounding spaces stripped."""
    if isinstance(value, bool) or not isinstance(value, (str, Integral)):
        raise CellError(f"must be a string or an integer, got {value!r}")
    return str(value).strip()


def undecodable_line(path: Path, error: ErrorFactory, header_lines: int) -> ValueError:
    """Name the line holding the first byte that is not UTF-8 (data rows are counted after the header).

    The file is read line by line here rather than trusting the reader's error, whose offset is within a chunk.
    """
    offset = 0
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                where = f"row {line_number - header_lines}" if line_number > header_lines else "header"
                return error(
                    f"{path}: {where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                    f"{offset + exc.start}); save the file as UTF-8"
                )
            offset += len(raw)
    return error(f"{path}: not UTF-8 text; save the file as UTF-8")


def read_csv_records(path: Path, error: ErrorFactory) -> tuple[list[str], Records]:
    """Every cell as a string (empty cells as ""), header names stripped."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise error(f"{path}: header: the file is empty (expected a header row)") from None
    except UnicodeDecodeError:
        raise undecodable_line(path, error, header_lines=1) from None
    except pd.errors.ParserError as exc:
        raise error(f"{path}: not a readable CSV file ({str(exc).splitlines()[0]})") from None
    frame.columns = [str(column).strip() for column in frame.columns]
    return list(frame.columns), list(enumerate(frame.to_dict("records"), start=1))


def read_parquet_records(path: Path, error: ErrorFactory) -> tuple[list[str], Records]:
    """Python values per cell (object dtype keeps ints and None instead of float NaN for integer columns with gaps)."""
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise error(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    frame.columns = [str(column).strip() for column in frame.columns]
    return list(frame.columns), list(enumerate(frame.astype(object).to_dict("records"), start=1))


def read_jsonl_records(path: Path, error: ErrorFactory) -> tuple[list[str], Records]:
    """One JSON object per line (blank lines skipped); columns in order of first appearance."""
    columns: dict[str, None] = {}
    records: Records = []
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(
                    f"{path}: row {line_number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} "
                    f"at column {exc.start + 1}); save the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise error(f"{path}: row {line_number}, column '-': {json_error(exc)}") from None
            if not isinstance(record, dict):
                raise error(f"{path}: row {line_number}, column '-': expected a JSON object per line")
            columns.update(dict.fromkeys(record))
            records.append((line_number, record))
    return list(columns), records


def json_error(error: json.JSONDecodeError) -> str:
    """json's message whole, with where on the line: its `msg` alone stops at "at" ("Invalid control character
    at"), the position being kept apart; a raw tab or line break inside a string gets how to fix it."""
    where = "the end of the line" if error.pos >= len(error.doc) else f"character {error.pos + 1}"
    message = f"invalid JSON ({error.msg.removesuffix(' at')} at {where})"
    if error.msg.startswith("Invalid control character"):
        message += r"; a tab or line break inside a string must be written \t or \n"
    return message


READERS: dict[str, Callable[[Path, ErrorFactory], tuple[list[str], Records]]] = {
    ".csv": read_csv_records,
    ".parquet": read_parquet_records,
    ".jsonl": read_jsonl_records,
}
SUFFIXES: tuple[str, ...] = tuple(sorted(READERS))


def table_suffix(path: Path, error: ErrorFactory) -> str:
    """The file's suffix if a reader exists for it, else `error` listing the allowed ones."""
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise error(f"{path}: unsupported file type {suffix or '(none)'!r}; allowed: {', '.join(SUFFIXES)}")
    return suffix


def read_records(path: Path, error: ErrorFactory) -> tuple[list[str], Records]:
    """(columns, [(row, record)]) of a .csv, .parquet or .jsonl file; FileNotFoundError if it is not a file."""
    reader = READERS[table_suffix(path, error)]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: is a directory, not a file")
    return reader(path, error)
