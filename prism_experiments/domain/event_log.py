"""The event log: tidy tables a run produces, their schema, dtypes and Parquet round trip.

One row per post, exposure (impression), engagement, follow and cascade edge. The engine writes
them (`domain.recorder`), metrics are pure functions of them, tracking logs them: all three read
table names and columns from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: Columns of each table, in order. Exposures also carry one float column
#: `comp_<name>` per score component a ranker reported (NaN where absent).
POSTS_COLUMNS: tuple[str, ...] = (
    "post_id",
    "author_id",
    "text",
    "timestamp",
    "topic",
    "has_media",
    "media_type",
    "format",
    "parent_id",
    "created_step",
    "likes",
    "reshares",
    "replies",
)
EXPOSURES_COLUMNS: tuple[str, ...] = (
    "step",
    "agent_id",
    "post_id",
    "position",
    "base_score",
    "final_score",
    "in_network",
    "source",
    "author_id",
    "topic",
    "has_media",
    "format",
    "interest_similarity",
)
#: Where an exposed post came from (the `source` column); a recorded exposure keeps the label's index here.
EXPOSURE_SOURCES: tuple[str, ...] = (
    "in_network",  # its author is followed
    "in_network_reshare",  # a followee reshared it
    "out_of_network",
    "similarity",
    "random",
    "recent",
    "backfill",
    "collaborative",  # a collaborative-filtering pick (ranking mode `collaborative`); appended: codes stay stable
)
ENGAGEMENTS_COLUMNS: tuple[str, ...] = (
    "step",
    "agent_id",
    "post_id",
    "action",
    "via_agent_id",
    "in_network",
    "author_id",
    "has_media",
    "format",
)
#: Exposure columns of a run with stochastic serving only (docs/ope.md): P_A(post at its position),
#: P_A(post at its position | the posts above it), then one `target_<name>` column per target policy B.
PROPENSITY_COLUMNS: tuple[str, ...] = ("propensity", "propensity_conditional")
TARGET_PREFIX = "target_"
#: Stochastic serving's candidates table (not one of the five event tables; empty without serving): one row
#: per (feed, candidate, position) that the served policy or a target could fill, with its P_A, then the
#: `target_<name>` columns; the direct-method inputs of doubly robust OPE.
SERVING_CANDIDATES_COLUMNS: tuple[str, ...] = (
    "step",
    "agent_id",
    "post_id",
    "position",
    "interest_similarity",
    "in_network",
    "has_media",
    "propensity",
)
FOLLOWS_COLUMNS: tuple[str, ...] = ("step", "follower_id", "followee_id", "post_id")
CASCADE_EDGES_COLUMNS: tuple[str, ...] = ("root_post_id", "parent_id", "child_id", "step")

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "posts": POSTS_COLUMNS,
    "exposures": EXPOSURES_COLUMNS,
    "engagements": ENGAGEMENTS_COLUMNS,
    "follows": FOLLOWS_COLUMNS,
    "cascade_edges": CASCADE_EDGES_COLUMNS,
}
EVENT_TABLES: tuple[str, ...] = tuple(TABLE_COLUMNS)
SERVING_CANDIDATES = "serving_candidates"
COMPONENT_PREFIX = "comp_"
ACTIONS: tuple[str, ...] = ("like", "reshare", "reply")
#: The columns that identify one feed (one agent's impressions at one step) in `exposures`.
FEED_KEYS: tuple[str, ...] = ("step", "agent_id")

_INT_COLUMNS = frozenset({"step", "position"})
_BOOL_COLUMNS = frozenset({"in_network", "has_media"})
_FLOAT_COLUMNS = frozenset({"base_score", "final_score", "interest_similarity", "propensity"})


def _columns(name: str) -> tuple[str, ...]:
    return SERVING_CANDIDATES_COLUMNS if name == SERVING_CANDIDATES else TABLE_COLUMNS[name]


def empty_table(name: str) -> pd.DataFrame:
    """The table `name` (an event table or `serving_candidates`) with its columns and no rows."""
    return pd.DataFrame({column: pd.Series(dtype="object") for column in _columns(name)})


def is_object_column(name: str, column: str) -> bool:
    """Whether `typed` makes this column of table `name` an object column (ids, labels)."""
    return column in _columns(name) and column not in _INT_COLUMNS | _BOOL_COLUMNS | _FLOAT_COLUMNS


def typed(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Stable dtypes for the schema columns of table `name`, also when empty (a Parquet round trip keeps them)."""
    for column in _columns(name):
        if column in _INT_COLUMNS:
            table[column] = table[column].astype("int64")
        elif column in _BOOL_COLUMNS:
            table[column] = table[column].astype(bool)
        elif column in _FLOAT_COLUMNS:
            table[column] = table[column].astype("float64")
        else:
            table[column] = table[column].astype(object)
    return table


#: rows converted to Arrow at a time by `write_parquet` (one row group each)
ROWS_PER_SLICE = 1 << 20


def write_parquet(table: pd.DataFrame, path: Path, rows_per_slice: int = ROWS_PER_SLICE) -> None:
    """`table.to_parquet(path, index=False)`, converted to Arrow a slice of rows at a time: the Arrow copy of a
    large table's string columns (0.5 GB at 4.2 million exposures, docs/history/bench.md) is never whole in memory.
    The schema is the first slice's, a column that slice holds only None of typed by its first value elsewhere."""
    if len(table) <= rows_per_slice:
        table.to_parquet(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    first = pa.Table.from_pandas(table.iloc[:rows_per_slice], preserve_index=False)
    schema = first.schema
    for position, arrow_field in enumerate(schema):
        if pa.types.is_null(arrow_field.type):
            values = table[arrow_field.name].dropna()
            if len(values):
                typed = pa.array(values.iloc[:1], from_pandas=True).type
                schema = schema.set(position, arrow_field.with_type(typed))
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, len(table), rows_per_slice):
            piece = table.iloc[start : start + rows_per_slice]
            writer.write_table(pa.Table.from_pandas(piece, schema=schema, preserve_index=False))


@dataclass
class EventLog:
    """The five tables of a run. `created_step` is -1 for the starting corpus."""

    posts: pd.DataFrame = field(default_factory=lambda: empty_table("posts"))
    exposures: pd.DataFrame = field(default_factory=lambda: empty_table("exposures"))
    engagements: pd.DataFrame = field(default_factory=lambda: empty_table("engagements"))
    follows: pd.DataFrame = field(default_factory=lambda: empty_table("follows"))
    cascade_edges: pd.DataFrame = field(default_factory=lambda: empty_table("cascade_edges"))

    def tables(self) -> dict[str, pd.DataFrame]:
        """Table name -> DataFrame, in schema order."""
        return {name: getattr(self, name) for name in EVENT_TABLES}

    def to_parquet(self, directory: Path | str) -> list[Path]:
        """Write `<table>.parquet` files into `directory`; returns their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables().items():
            path = out / f"{name}.parquet"
            tmp = path.with_suffix(".parquet.tmp")
            write_parquet(table, tmp)
            tmp.replace(path)
            written.append(path)
        return written

    @classmethod
    def from_parquet(cls, directory: Path | str) -> EventLog:
        """Read the tables `to_parquet` wrote."""
        src = Path(directory)
        return cls(**{name: pd.read_parquet(src / f"{name}.parquet") for name in EVENT_TABLES})
