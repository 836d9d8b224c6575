"""Records a run's events as column lists and turns them into the event-log tables once, at the end."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from prism_experiments.domain.event_log import (
    COMPONENT_PREFIX,
    SERVING_CANDIDATES,
    SERVING_CANDIDATES_COLUMNS,
    TABLE_COLUMNS,
    TARGET_PREFIX,
    typed,
)
from prism_experiments.domain.post import Post


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

    def extend(self, rows: Sequence[Mapping[str, float]]) -> None:
        """`append` of each row; rows naming exactly the columns so far (the usual case) go column by column."""
        names = tuple(self._columns)
        if all(len(row) == len(names) and tuple(row) == names for row in rows):
            for name, column in self._columns.items():
                column.extend([float(row[name]) for row in rows])
            self._rows += len(rows)
            return
        for row in rows:
            self.append(row)

    def __len__(self) -> int:
        return self._rows

    def columns(self) -> dict[str, np.ndarray]:
        """Name -> float64 values, names in order of first appearance."""
        return {name: np.frombuffer(column, dtype=np.float64).copy() for name, column in self._columns.items()}


class EventRecorder:
    """Appends one row per event; `tables()` builds the five tables of `EventLog`.

    Columns are lists, not DataFrames, because a run appends hundreds of thousands of rows one at a time.
    """

    def __init__(self, starting_post_ids: Iterable[str]) -> None:
        self._columns: dict[str, dict[str, list]] = {
            name: {column: [] for column in TABLE_COLUMNS[name]}
            for name in ("exposures", "engagements", "follows", "cascade_edges")
        }
        self._components = SparseFloatColumns()  # one row per exposure row
        self._serving = SparseFloatColumns()  # one row per exposure row; no columns without serving
        self._candidates: dict[str, list] = {column: [] for column in SERVING_CANDIDATES_COLUMNS}
        self._candidate_targets = SparseFloatColumns()
        self._created_step: dict[str, int] = {post_id: -1 for post_id in starting_post_ids}

    def _append(self, table: str, values: Sequence[object]) -> None:
        for column, value in zip(TABLE_COLUMNS[table], values, strict=True):
            self._columns[table][column].append(value)

    def created(self, post: Post, step: int) -> None:
        """`post` was written at `step` (the starting corpus counts as step -1)."""
        self._created_step[post.id] = step

    def exposure(
        self,
        step: int,
        agent_id: str,
        post: Post,
        position: int,
        base_score: float,
        final_score: float,
        in_network: bool,
        source: str,
        similarity: float,
        components: Mapping[str, float],
        serving: Mapping[str, float] | None = None,
    ) -> None:
        """One impression; `components` are the ranker's score parts, stored as `comp_<name>` columns; `serving`
        its propensity columns (stochastic serving only)."""
        self._append(
            "exposures",
            (
                step,
                agent_id,
                post.id,
                position,
                base_score,
                final_score,
                in_network,
                source,
                post.author_id,
                post.topic,
                post.has_media,
                post.format,
                similarity,
            ),
        )
        self._components.append(components)
        self._serving.append(serving or {})

    def exposures(
        self,
        step: int,
        agent_ids: Sequence[str],
        posts: Sequence[Post],
        positions: Sequence[int],
        base_scores: Sequence[float],
        final_scores: Sequence[float],
        in_network: Sequence[bool],
        sources: Sequence[str],
        similarity: Sequence[float],
        components: Sequence[Mapping[str, float]],
        serving: Sequence[Mapping[str, float]] | None = None,
    ) -> None:
        """`exposure` for many impressions at once: the same rows, appended column by column."""
        columns = self._columns["exposures"]
        values = {
            "step": [step] * len(posts),
            "agent_id": agent_ids,
            "post_id": [post.id for post in posts],
            "position": positions,
            "base_score": base_scores,
            "final_score": final_scores,
            "in_network": in_network,
            "source": sources,
            "author_id": [post.author_id for post in posts],
            "topic": [post.topic for post in posts],
            "has_media": [post.has_media for post in posts],
            "format": [post.format for post in posts],
            "interest_similarity": similarity,
        }
        for column in TABLE_COLUMNS["exposures"]:
            columns[column].extend(values[column])
        self._components.extend(components)
        self._serving.extend(serving if serving is not None else [{}] * len(posts))

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

    def tables(self, posts: Sequence[Post]) -> dict[str, pd.DataFrame]:
        """The five event-log tables; `posts` are every post of the run with their final counters."""
        exposures = pd.DataFrame(self._columns["exposures"])
        components = self._components.columns()
        for name in sorted(components):  # absent in a row -> NaN
            exposures[f"{COMPONENT_PREFIX}{name}"] = components[name]
        for name, values in self._serving.columns().items():  # propensity, propensity_conditional, target_<name>...
            exposures[name] = values
        return {
            "posts": self._posts_table(posts),
            "exposures": typed(exposures, "exposures"),
            **{
                name: typed(pd.DataFrame(self._columns[name]), name)
                for name in ("engagements", "follows", "cascade_edges")
            },
        }

    def serving_candidates(self) -> pd.DataFrame:
        """The `serving_candidates` table (no rows without stochastic serving)."""
        table = pd.DataFrame(self._candidates)
        for name, values in self._candidate_targets.columns().items():
            table[name] = values
        return typed(table, SERVING_CANDIDATES)

    def _posts_table(self, posts: Sequence[Post]) -> pd.DataFrame:
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
