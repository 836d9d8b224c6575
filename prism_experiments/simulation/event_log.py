"""The event log: tidy tables a run produces, and their Parquet round trip.

One row per post, exposure (impression), engagement, follow and cascade edge.
Metrics (`prism_experiments.metrics`) are pure functions of these tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: Columns of each table, in order. Exposures also carry one float column
#: `comp_<name>` per score component a ranker reported (NaN where absent).
POSTS_COLUMNS: tuple[str, ...] = (
    "post_id", "author_id", "text", "timestamp", "topic", "has_media", "media_type",
    "format", "parent_id", "created_step", "likes", "reshares", "replies",
)
EXPOSURES_COLUMNS: tuple[str, ...] = (
    "step", "agent_id", "post_id", "position", "base_score", "final_score", "in_network",
    "source", "author_id", "topic", "has_media", "format", "interest_similarity",
)
ENGAGEMENTS_COLUMNS: tuple[str, ...] = (
    "step", "agent_id", "post_id", "action", "via_agent_id", "in_network", "author_id",
    "has_media", "format",
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
COMPONENT_PREFIX = "comp_"
ACTIONS: tuple[str, ...] = ("like", "reshare", "reply")


def empty_table(name: str) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series(dtype="object") for column in TABLE_COLUMNS[name]})


@dataclass
class EventLog:
    """The five tables of a run. `created_step` is -1 for the starting corpus."""

    posts: pd.DataFrame = field(default_factory=lambda: empty_table("posts"))
    exposures: pd.DataFrame = field(default_factory=lambda: empty_table("exposures"))
    engagements: pd.DataFrame = field(default_factory=lambda: empty_table("engagements"))
    follows: pd.DataFrame = field(default_factory=lambda: empty_table("follows"))
    cascade_edges: pd.DataFrame = field(default_factory=lambda: empty_table("cascade_edges"))

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLE_COLUMNS}

    def to_parquet(self, directory: Path | str) -> list[Path]:
        """Write `<table>.parquet` files into `directory`; returns their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables().items():
            path = out / f"{name}.parquet"
            tmp = path.with_suffix(".parquet.tmp")
            table.to_parquet(tmp, index=False)
            tmp.replace(path)
            written.append(path)
        return written

    @classmethod
    def from_parquet(cls, directory: Path | str) -> "EventLog":
        src = Path(directory)
        return cls(**{name: pd.read_parquet(src / f"{name}.parquet") for name in TABLE_COLUMNS})
