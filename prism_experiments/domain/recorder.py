"""Records a run's events as column lists and turns them into the event-log tables once, at the end."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from prism_experiments.domain.event_log import (
    COMPONENT_PREFIX,
    EXPOSURE_SOURCES,
    SERVING_CANDIDATES,
    SERVING_CANDIDATES_COLUMNS,
    TABLE_COLUMNS,
    TARGET_PREFIX,
    is_object_column,
    typed,
)
from prism_experiments.domain.post import Post

#: array typecode -> numpy dtype
_DTYPES = {"b": np.int8, "i": np.int32, "q": np.int64, "d": np.float64}


def _view(values: array) -> np.ndarray:
    """A numpy view of a typed array's values (while it lives, the typed array cannot grow: a `BufferError`)."""
    return np.frombuffer(values, dtype=_DTYPES[values.typecode])


def object_array(values: Sequence) -> np.ndarray:
    """An object array of `values` (ids, labels) to gather from by index."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _object_column(values: np.ndarray) -> pd.Series:
    """An object column as `typed(pd.DataFrame(...))` leaves it under pandas 3, holding the strings given.

    That round trip infers `str` for a column of strings (and Nones), copies it into Arrow, and `astype(object)`
    makes a new Python string per row (1.7 GB at the huge preset's 4.2 million exposures: docs/history/bench.md);
    its only other effect, a None among strings turned into NaN, is made here.
    """
    if pd.api.types.infer_dtype(values, skipna=True) == "string":
        missing = pd.isna(values)
        if missing.any():
            values = values.copy()
            values[missing] = np.nan
    return pd.Series(values, dtype=object, copy=False)


class SparseFloatColumns:
    """Rows of {name: number} kept as one float64 array per name, NaN where a row lacks the name.

    What `DataFrame.from_records(rows).astype(float)` would give, at 8 bytes a value instead of a
    dict per row (4 million exposure rows held 1.7 GB of dicts in the huge preset, docs/bench.md).
    """

    def __init__(self) -> None:
        self._columns: dict[str, array] = {}  # in order of first appearance
        self._rows = 0

    def append(self, row: Mapping[str, float]) -> None:
        for name, column in self._columns.items():
            column.append(float(row[name]) if name in row else np.nan)
        for name, value in row.items():
            if name not in self._columns:  # a new name: NaN in every earlier row
                self._columns[name] = array("d", [np.nan]) * self._rows
                self._columns[name].append(float(value))
        self._rows += 1

    def extend_columns(self, columns: Mapping[str, np.ndarray], n: int) -> None:
        """`n` rows given as a column per name (a name absent here is NaN in them)."""
        for name in columns:
            if name not in self._columns:  # a new name: NaN in every earlier row
                self._columns[name] = array("d", [np.nan]) * self._rows
        for name, column in self._columns.items():
            values = columns.get(name)
            column.frombytes(
                np.full(n, np.nan).tobytes()
                if values is None
                else np.ascontiguousarray(values, dtype=np.float64).tobytes()
            )
        self._rows += n

    def __len__(self) -> int:
        return self._rows

    def columns(self) -> dict[str, np.ndarray]:
        """Name -> float64 values, names in order of first appearance."""
        return {name: values.copy() for name, values in self.views().items()}

    def views(self) -> dict[str, np.ndarray]:
        """`columns()` without copies: views of the stored values, which take no more rows while one of them lives."""
        return {name: _view(column) for name, column in self._columns.items()}


def _typed_table(columns: Mapping[str, list], name: str) -> pd.DataFrame:
    """`typed(pd.DataFrame(columns), name)`, its object columns built as `_object_column`s (no string copies)."""
    return typed(
        pd.DataFrame(
            {
                column: _object_column(object_array(values)) if is_object_column(name, column) else values
                for column, values in columns.items()
            }
        ),
        name,
    )


#: an exposure row as stored: typed arrays (agent index, store row, codes) resolved to ids when the table is built
_EXPOSURE_ARRAYS: dict[str, str] = {
    "step": "q",  # int64, the table's dtype: the table views it instead of a copy (8 bytes a row less in all)
    "agent": "i",
    "row": "q",
    "position": "q",
    "base_score": "d",
    "final_score": "d",
    "in_network": "b",
    "source": "b",
    "interest_similarity": "d",
}


class EventRecorder:
    """Appends events; `tables()` builds the five tables of `EventLog`.

    Exposures, a step's impressions at once, are kept as typed arrays of agent indices, store rows and codes (86
    bytes a row with a ranker's four score parts, not a dozen Python objects): their ids, topic, media and format
    are joined from the agents and posts when the table is built. The other events are column lists, appended a row
    at a time.
    """

    def __init__(self, starting_post_ids: Iterable[str]) -> None:
        self._columns: dict[str, dict[str, list]] = {
            name: {column: [] for column in TABLE_COLUMNS[name]} for name in ("engagements", "follows", "cascade_edges")
        }
        self._exposures = {column: array(code) for column, code in _EXPOSURE_ARRAYS.items()}
        self._components = SparseFloatColumns()  # one row per exposure row
        self._serving = SparseFloatColumns()  # one row per exposure row; no columns without serving
        self._politics = SparseFloatColumns()  # one row per exposure row; no columns without politics (REQ-POL-8)
        self._candidates: dict[str, list] = {column: [] for column in SERVING_CANDIDATES_COLUMNS}
        self._candidate_targets = SparseFloatColumns()
        self._created_step: dict[str, int] = {post_id: -1 for post_id in starting_post_ids}
        self._built = False  # `tables()` was called

    def _append(self, table: str, values: Sequence[object]) -> None:
        for column, value in zip(TABLE_COLUMNS[table], values, strict=True):
            self._columns[table][column].append(value)

    def created(self, post: Post, step: int) -> None:
        """`post` was written at `step` (the starting corpus counts as step -1)."""
        self._created_step[post.id] = step

    def exposures(
        self,
        step: int,
        agents: np.ndarray,
        rows: np.ndarray,
        positions: np.ndarray,
        base_scores: np.ndarray,
        final_scores: np.ndarray,
        in_network: np.ndarray,
        sources: np.ndarray,
        similarity: np.ndarray,
        components: Mapping[str, np.ndarray],
        serving: Mapping[str, np.ndarray] | None = None,
        politics: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        """A step's impressions: each one's agent (index into `tables`' agent ids), store row (into its posts), feed
        position, scores, in-network flag, source (code into `SOURCES`) and interest similarity; `components` are the
        ranker's score parts, stored as `comp_<name>` columns; `serving` the propensity columns (stochastic serving);
        `politics` the political columns (`politics.behaviour.impression_columns`; None: politics off)."""
        n = len(rows)
        values = {
            "step": np.full(n, step),
            "agent": agents,
            "row": rows,
            "position": positions,
            "base_score": base_scores,
            "final_score": final_scores,
            "in_network": in_network,
            "source": sources,
            "interest_similarity": similarity,
        }
        for column, code in _EXPOSURE_ARRAYS.items():
            self._exposures[column].frombytes(np.ascontiguousarray(values[column], dtype=_DTYPES[code]).tobytes())
        self._components.extend_columns(components, n)
        self._serving.extend_columns(serving or {}, n)
        self._politics.extend_columns(politics or {}, n)

    def serving_candidate(
        self,
        step: int,
        agent_id: str,
        post: Post,
        position: int,
        similarity: float,
        in_network: bool,
        propensity: float,
        targets: Mapping[str, float],
    ) -> None:
        """A (feed, candidate, position) cell some policy could fill: P_A and each target's P_B of it."""
        values = (step, agent_id, post.id, position, similarity, in_network, post.has_media, propensity)
        for column, value in zip(SERVING_CANDIDATES_COLUMNS, values, strict=True):
            self._candidates[column].append(value)
        self._candidate_targets.append({f"{TARGET_PREFIX}{name}": p for name, p in targets.items()})

    def engagement(
        self, step: int, agent_id: str, post: Post, action: str, via_agent_id: str | None, in_network: bool
    ) -> None:
        """A like, reshare or reply; `via_agent_id` is the followee a reshared post was seen through."""
        self._append(
            "engagements",
            (step, agent_id, post.id, action, via_agent_id, in_network, post.author_id, post.has_media, post.format),
        )

    def follow(self, step: int, follower_id: str, followee_id: str, post_id: str) -> None:
        """`follower_id` followed the author of `post_id`."""
        self._append("follows", (step, follower_id, followee_id, post_id))

    def cascade_edge(self, root_post_id: str, parent_id: str, child_id: str, step: int) -> None:
        """`child_id` reshared `root_post_id`, seen through `parent_id`."""
        self._append("cascade_edges", (root_post_id, parent_id, child_id, step))

    def tables(
        self,
        posts: Sequence[Post],
        agent_ids: Sequence[str] = (),
        author_positions: Mapping[str, float | None] | None = None,
    ) -> dict[str, pd.DataFrame]:
        """The five event-log tables, built once at the end of a run; `posts` are every post of the run by store row
        with their final counters, `agent_ids` the ids of the agents by index, `author_positions` (politics on) each
        agent's position, for the posts table's `author_position` column.

        The tables view or take over what was recorded, and what they do not hold is released (the exposures' agent
        indices, store rows and sources, the other events' column lists: about 0.1 GB of the 100,000-agent world,
        docs/history/bench.md), so the recorder takes no more events and a second call is an error."""
        if self._built:
            raise RuntimeError("EventRecorder.tables: the tables are built once, at the end of a run")
        self._built = True
        tables = {
            "posts": self._posts_table(posts, author_positions),
            "exposures": typed(self._exposures_table(posts, agent_ids), "exposures"),
        }
        for name in ("engagements", "follows", "cascade_edges"):
            tables[name] = _typed_table(self._columns[name], name)
            self._columns[name] = {column: [] for column in TABLE_COLUMNS[name]}
        return tables

    def _exposures_table(self, posts: Sequence[Post], agent_ids: Sequence[str]) -> pd.DataFrame:
        """The exposures table; its numeric columns are views of the recorded arrays, not copies (41 bytes a row, and 8
        more per score part: 0.3 GB of the 100,000-agent world's 4.2 million rows, docs/history/bench.md)."""
        stored = {column: _view(values) for column, values in self._exposures.items()}
        rows = stored["row"]

        def per_post(values: list) -> pd.Series:
            return _object_column(object_array(values)[rows])

        columns: dict[str, np.ndarray | pd.Series] = {
            "step": stored["step"],
            "agent_id": _object_column(object_array(agent_ids)[stored["agent"]]),
            "post_id": per_post([p.id for p in posts]),
            "position": stored["position"],
            "base_score": stored["base_score"],
            "final_score": stored["final_score"],
            "in_network": stored["in_network"].view(bool),  # 0 or 1
            "source": _object_column(object_array(EXPOSURE_SOURCES)[stored["source"]]),
            "author_id": per_post([p.author_id for p in posts]),
            "topic": per_post([p.topic for p in posts]),
            "has_media": np.asarray([p.has_media for p in posts], dtype=bool)[rows],
            "format": per_post([p.format for p in posts]),
            "interest_similarity": stored["interest_similarity"],
        }
        components = self._components.views()
        for name in sorted(components):  # absent in a row -> NaN
            columns[f"{COMPONENT_PREFIX}{name}"] = components[name]
        columns |= self._serving.views()  # propensity, propensity_conditional, target_<name>...
        columns |= self._politics.views()  # reader_position, post_slant, satisfaction... (politics on)
        for column in ("agent", "row", "source"):  # only read to build the id columns above: freed on return
            self._exposures[column] = array(self._exposures[column].typecode)
        # one DataFrame over every column (copy=False keeps the views): a column set afterwards would be copied
        return pd.DataFrame(columns, copy=False)

    def serving_candidates(self) -> pd.DataFrame:
        """The `serving_candidates` table (no rows without stochastic serving)."""
        table = pd.DataFrame(self._candidates)
        for name, values in self._candidate_targets.columns().items():
            table[name] = values
        return typed(table, SERVING_CANDIDATES)

    def _posts_table(
        self, posts: Sequence[Post], author_positions: Mapping[str, float | None] | None = None
    ) -> pd.DataFrame:
        table = self._plain_posts_table(posts)
        if author_positions is None:  # politics off: the table as it always was
            return table
        position = {author: (np.nan if value is None else value) for author, value in author_positions.items()}
        table["author_position"] = np.array([position.get(p.author_id, np.nan) for p in posts], dtype=float)
        for column in ("political", "slant", "animosity", "moral_emotion"):
            values = [getattr(p, column) for p in posts]
            table[column] = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        return table

    def _plain_posts_table(self, posts: Sequence[Post]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "post_id": [p.id for p in posts],
                "author_id": [p.author_id for p in posts],
                "text": [p.text for p in posts],
                "timestamp": pd.to_datetime([p.timestamp for p in posts], utc=True),
                "topic": [p.topic for p in posts],
                "has_media": [p.has_media for p in posts],
                "media_type": [p.media_type for p in posts],
                "format": [p.format for p in posts],
                "parent_id": [p.parent_id for p in posts],
                "created_step": [self._created_step[p.id] for p in posts],
                "likes": [p.likes for p in posts],
                "reshares": [p.reshares for p in posts],
                "replies": [p.replies for p in posts],
            }
        )
