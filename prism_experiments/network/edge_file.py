"""A user's follow graph from a file, as plain arrays: (follower, followee) positions into a list of account ids.

Formats, by suffix:

* `.csv`: a header naming `follower_id` and `followee_id` (other columns are ignored); ids are strings or
  integers, surrounding spaces stripped.
* `.parquet`: columns `follower_id` and `followee_id` holding strings or integers.
* `.txt`, `.edges`, `.edgelist`, `.tsv`: a whitespace-separated edge list, "follower followee" per line,
  `#` starting a comment (the format of the SNAP follower-graph dumps, snap.stanford.edu/data).

CSV and edge lists may be gzip-compressed (`.gz` after the suffix). The file is read in chunks of
`CHUNK_ROWS` lines (pandas' C parser; Parquet by row batches), ids are mapped to integer positions chunk
by chunk, so a 10-million-edge list needs memory for its integer arrays and its distinct ids, not its text
(docs/world_files.md, docs/bench.md). Self-follows are dropped and counted (or an error), duplicate edges
deduplicated and counted. Every problem raises `EdgeFileError`: one line naming the file, the line (edge
lists) or 1-based data row (CSV, Parquet) and the field.

Nothing here knows the graph class: the result is arrays, and `simulation/world_files.py` builds the
graph through its public constructor.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

FOLLOWER, FOLLOWEE = "follower_id", "followee_id"
COLUMNS: tuple[str, str] = (FOLLOWER, FOLLOWEE)
EDGE_LIST_SUFFIXES: tuple[str, ...] = (".txt", ".edges", ".edgelist", ".tsv")
SUFFIXES: tuple[str, ...] = (".csv", ".parquet", *EDGE_LIST_SUFFIXES)
#: rows parsed per chunk: ~2 x 60 MB of Python strings at a time, whatever the file's size
CHUNK_ROWS = 1_000_000
_WHITESPACE = re.compile(r"\s")
_FIELD_SEPARATOR = re.compile(r"[ \t]+")

SelfLoops = Literal["drop", "error"]
Format = Literal["csv", "parquet", "edge_list"]


class EdgeFileError(ValueError):
    """A follow-graph file that cannot become edges; the message names file, line or row, and field."""


@dataclass(frozen=True)
class EdgeList:
    """A loaded follow graph: account ids (first appearance order) and deduplicated (follower, followee) edges as
    positions into `ids`, sorted by follower then followee."""

    ids: np.ndarray
    follower: np.ndarray
    followee: np.ndarray
    #: data lines (rows) read
    rows: int
    #: self-follows dropped
    self_loops: int
    #: duplicate edges dropped (after a mutual file's lines became two edges each)
    duplicates: int

    @property
    def n_nodes(self) -> int:
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        return len(self.follower)


def file_format(path: Path) -> Format:
    """csv, parquet or edge_list from the suffix (a trailing .gz is read through), else EdgeFileError."""
    suffixes = [s.lower() for s in path.suffixes]
    last = suffixes[-1] if suffixes else ""
    compressed = last == ".gz"
    inner = suffixes[-2] if compressed and len(suffixes) > 1 else ("" if compressed else last)
    if inner == ".csv":
        return "csv"
    if inner == ".parquet" and not compressed:
        return "parquet"
    if inner in EDGE_LIST_SUFFIXES:
        return "edge_list"
    shown = "".join(suffixes[-2:]) if compressed else last
    raise EdgeFileError(
        f"{path}: unsupported file type {shown or '(none)'!r}; allowed: {', '.join(SUFFIXES)} "
        f"(CSV and edge lists may end in .gz)"
    )


def _open_binary(path: Path) -> tuple[io.BufferedIOBase, io.BufferedReader]:
    """(the stream to parse, the raw file whose position tells the progress)."""
    raw = path.open("rb")
    if path.suffix.lower() == ".gz":
        return gzip.open(raw, "rb"), raw
    return raw, raw


def _text_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of every line, through gzip where the name says so."""
    stream, raw = _open_binary(path)
    with raw, stream:
        yield from enumerate(stream, start=1)


def _first_line(path: Path, problem: Callable[[list[str]], bool]) -> int:
    """The number of the first edge-list line whose fields (split on whitespace, `#` comments cut) show `problem`."""
    for number, raw in _text_lines(path):
        # split as pandas' C parser does (spaces and tabs only): an id may hold other whitespace, the error to find
        fields = _FIELD_SEPARATOR.split(raw.decode("utf-8", errors="replace").split("#", 1)[0].strip(" \t\r\n"))
        if fields != [""] and problem(fields):
            return number
    return 0  # not found again: the caller's message still names the field


def _undecodable(path: Path, fmt: Format) -> EdgeFileError:
    """The first line with bytes that are not UTF-8, named as a line (edge list) or a data row (CSV)."""
    for number, raw in _text_lines(path):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"line {number}" if fmt == "edge_list" else f"row {number - 1}" if number > 1 else "header"
            return EdgeFileError(
                f"{path}: {where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                f"ids must be UTF-8 text"
            )
    return EdgeFileError(f"{path}: not UTF-8 text; ids must be UTF-8 text")


class _Reader:
    """Chunks of (follower, followee) id strings with the 1-based row number of each chunk's first row."""

    def __init__(self, path: Path, fmt: Format, show_progress: bool) -> None:
        self.path, self.fmt, self.show_progress = path, fmt, show_progress

    def where(self, row: int, column: str) -> str:
        """`line N, field 'x'` for an edge list (N found again by content by the caller), `row N, column 'x'`."""
        return f"row {row}, column {column!r}"

    def chunks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        if self.fmt == "parquet":
            yield from self._parquet_chunks()
        else:
            yield from self._text_chunks()

    def _text_chunks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        path = self.path
        if path.stat().st_size == 0:
            raise EdgeFileError(f"{path}: the file is empty (expected {self._expected()})")
        stream, raw = _open_binary(path)
        options: dict[str, object] = {"dtype": object, "na_filter": False, "chunksize": CHUNK_ROWS, "encoding": "utf-8"}
        if self.fmt == "edge_list":
            options |= {"sep": r"\s+", "header": None, "names": list(COLUMNS), "comment": "#", "engine": "c"}
        else:
            options |= {"usecols": lambda name: str(name).strip() in COLUMNS}
        total = path.stat().st_size
        with (
            raw,
            stream,
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc=f"reading {path.name}",
                delay=1.0,
                disable=not self.show_progress,
            ) as bar,
        ):
            try:
                if self.fmt == "csv":
                    self._check_header(stream)
                    stream.seek(0)
                row = 1
                for frame in pd.read_csv(stream, **options):
                    frame.columns = [str(column).strip() for column in frame.columns]
                    bar.update(raw.tell() - bar.n)
                    yield row, frame[FOLLOWER].to_numpy(dtype=object), frame[FOLLOWEE].to_numpy(dtype=object)
                    row += len(frame)
            except UnicodeDecodeError:
                raise _undecodable(path, self.fmt) from None
            except pd.errors.EmptyDataError:
                raise EdgeFileError(f"{path}: no edges (the file holds only comments and blank lines)") from None
            except pd.errors.ParserError as exc:
                raise self._parser_error(exc) from None
            except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
                raise EdgeFileError(f"{path}: cannot be read ({exc})") from None

    def _check_header(self, stream: io.BufferedIOBase) -> None:
        try:
            header = pd.read_csv(stream, nrows=0, dtype=str, encoding="utf-8")
        except pd.errors.EmptyDataError:
            raise EdgeFileError(f"{self.path}: header: the file is empty (expected {self._expected()})") from None
        names = [str(name).strip() for name in header.columns]
        for column in COLUMNS:
            if column not in names:
                raise EdgeFileError(
                    f"{self.path}: header: missing column {column!r}; required: {', '.join(COLUMNS)} "
                    f"(found: {', '.join(names) or 'none'})"
                )

    def _expected(self) -> str:
        if self.fmt == "edge_list":
            return "one 'follower followee' pair per line"
        return f"a header row naming {', '.join(COLUMNS)}"

    def _parser_error(self, exc: pd.errors.ParserError) -> EdgeFileError:
        text = str(exc).splitlines()[0]
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
        if found and self.fmt == "edge_list":
            return EdgeFileError(
                f"{self.path}: line {found.group(2)}: expected 2 ids ('follower followee'), found {found.group(3)} "
                f"fields"
            )
        if found:
            return EdgeFileError(
                f"{self.path}: row {int(found.group(2)) - 1}: expected {found.group(1)} fields, found {found.group(3)}"
            )
        return EdgeFileError(f"{self.path}: not a readable {self.fmt.replace('_', ' ')} file ({text})")

    def _parquet_chunks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        path = self.path
        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise EdgeFileError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
        names = [str(name).strip() for name in parquet.schema_arrow.names]
        for column in COLUMNS:
            if column not in names:
                raise EdgeFileError(
                    f"{path}: header: missing column {column!r}; required: {', '.join(COLUMNS)} "
                    f"(found: {', '.join(names) or 'none'})"
                )
            kind = parquet.schema_arrow.field(column).type
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if not (pa.types.is_integer(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
                raise EdgeFileError(f"{path}: column {column!r}: must hold strings or integers, got {kind}")
        row = 1
        with tqdm(
            total=parquet.metadata.num_rows, unit="edge", unit_scale=True, desc=f"reading {path.name}", delay=1.0,
            disable=not self.show_progress,
        ) as bar:  # fmt: skip
            for batch in parquet.iter_batches(batch_size=CHUNK_ROWS, columns=list(COLUMNS)):
                ends = []
                for column in COLUMNS:
                    values = batch.column(column)
                    if values.null_count:
                        first = int(np.flatnonzero(np.asarray(values.is_null()))[0])
                        raise EdgeFileError(f"{path}: {self.where(row + first, column)}: missing value (required)")
                    ends.append(np.asarray(pc.cast(values, pa.string()).to_numpy(zero_copy_only=False), dtype=object))
                bar.update(batch.num_rows)
                yield row, ends[0], ends[1]
                row += batch.num_rows


def _id_problem(value: str) -> str | None:
    """Why an id cannot be an account's id, or None."""
    if value == "":
        return "missing value (required)"
    if _WHITESPACE.search(value) is not None:
        return f"id {value!r} contains whitespace; ids must not"
    return None


class _IdMap:
    """Account id -> position, numbered in the order the file first names them; checks each id once, when new."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}

    def encode(self, uniques: np.ndarray, skip: int | None = None) -> tuple[np.ndarray, int | None]:
        """(positions of `uniques`, the index in `uniques` of the first bad new id or None); `skip` (an index into
        `uniques` no edge uses) gets no position."""
        before = len(self.positions)
        lookup = self.positions.setdefault
        out = np.fromiter(
            (-1 if index == skip else lookup(value, len(self.positions)) for index, value in enumerate(uniques)),
            dtype=np.int64,
            count=len(uniques),
        )
        new = np.flatnonzero(out >= before)
        for index in new.tolist():
            if _id_problem(uniques[index]) is not None:
                return out, index
        return out, None

    def ids(self) -> np.ndarray:
        return np.array(list(self.positions), dtype=object)


def read_edge_file(
    path: str | Path, *, directed: bool = True, self_loops: SelfLoops = "drop", show_progress: bool = False
) -> EdgeList:
    """The follow graph in `path`, validated (EdgeFileError on the first problem; FileNotFoundError if absent).

    `directed=False` reads each line as a mutual follow (two edges). Self-follows are dropped and counted,
    or an error with `self_loops="error"`; duplicate edges are dropped and counted.
    """
    path = Path(path)
    fmt = file_format(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: is a directory, not a file")
    reader = _Reader(path, fmt, show_progress)
    id_map = _IdMap()
    followers: list[np.ndarray] = []
    followees: list[np.ndarray] = []
    rows = 0
    for first_row, follower, followee in reader.chunks():
        # interleaved, so that ids are numbered in the order the file first names them
        ends = np.empty(2 * len(follower), dtype=object)
        ends[0::2], ends[1::2] = follower, followee
        local, uniques = pd.factorize(ends)
        uniques = np.asarray(uniques, dtype=object)
        if fmt != "edge_list":  # surrounding spaces stripped; two spellings may become one id
            remap, uniques = pd.factorize(np.array([value.strip() for value in uniques], dtype=object))
            local, uniques = remap[local], np.asarray(uniques, dtype=object)
        pairs = local.reshape(-1, 2)
        skip = None
        if fmt == "edge_list" and (empty := np.flatnonzero(uniques == "")).size:
            # a line holding only an indented comment parses as two empty fields: not an edge
            pairs = pairs[~(pairs == empty[0]).all(axis=1)]
            skip = None if (pairs == empty[0]).any() else int(empty[0])
        positions, bad = id_map.encode(uniques, skip)
        if bad is not None:
            _raise_id_problem(path, fmt, first_row, pairs.ravel(), uniques, bad)
        codes = positions[pairs]
        followers.append(codes[:, 0])
        followees.append(codes[:, 1])
        rows += len(pairs)
    source = np.concatenate(followers) if followers else np.empty(0, dtype=np.int64)
    target = np.concatenate(followees) if followees else np.empty(0, dtype=np.int64)
    loops = source == target
    n_loops = int(loops.sum())
    if n_loops and self_loops == "error":
        first = int(np.flatnonzero(loops)[0])
        _raise_self_loop(path, fmt, first + 1, str(id_map.ids()[source[first]]))
    source, target = source[~loops], target[~loops]
    if source.size == 0:
        raise EdgeFileError(_no_edges(path, fmt, rows, n_loops))
    if not directed:
        source, target = np.concatenate([source, target]), np.concatenate([target, source])
    ids = id_map.ids()
    n_nodes = len(ids)
    keys = np.sort(source * n_nodes + target)  # a sort and a mask: numpy's hash-based unique is slower here
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    return EdgeList(
        ids=ids,
        follower=keys // n_nodes,
        followee=keys % n_nodes,
        rows=rows,
        self_loops=n_loops,
        duplicates=len(source) - len(keys),
    )


def _no_edges(path: Path, fmt: Format, rows: int, n_loops: int) -> str:
    if rows == 0:
        body = "only comments and blank lines" if fmt == "edge_list" else "a header and no data rows"
        return f"{path}: no edges (the file holds {body})"
    return f"{path}: no edges (all {rows:,} of its {'lines' if fmt == 'edge_list' else 'rows'} are self-follows)"


def _raise_id_problem(
    path: Path, fmt: Format, first_row: int, local: np.ndarray, uniques: np.ndarray, bad: int
) -> None:
    """EdgeFileError naming where the chunk's first bad id is (`bad`: its index in `uniques`)."""
    value = str(uniques[bad])
    problem = _id_problem(value)
    first = int(np.flatnonzero(local == bad)[0])
    column = COLUMNS[first % 2]
    if fmt == "edge_list":
        line = _first_line(path, lambda fields: len(fields) < 2 if value == "" else value in fields[:2])
        problem = "missing followee id (expected 2 ids per line)" if value == "" else problem
        raise EdgeFileError(f"{path}: line {line}, field {column!r}: {problem}")
    raise EdgeFileError(f"{path}: row {first_row + first // 2}, column {column!r}: {problem}")


def _raise_self_loop(path: Path, fmt: Format, row: int, account: str) -> None:
    if fmt == "edge_list":
        line = _first_line(path, lambda fields: len(fields) >= 2 and fields[0] == fields[1])
        where = f"line {line}, field {FOLLOWEE!r}"
    else:
        where = f"row {row}, column {FOLLOWEE!r}"
    raise EdgeFileError(
        f"{path}: {where}: self-follow ({account!r} follows itself); network.self_loops=drop drops them with a count"
    )
