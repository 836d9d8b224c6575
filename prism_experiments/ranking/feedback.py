"""What the platform logs after serving a step's feeds: who was shown what, and what they did with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ServedFeedback:
    """One step's impressions (feeds one after another) with each one's outcome; arrays are aligned.

    The outcomes are the agents' draws (a like of an already-liked post included): what a platform's
    logs would show a model trained on them.
    """

    step: int
    agent_ids: list[str]
    rows: np.ndarray
    positions: np.ndarray
    liked: np.ndarray
    reshared: np.ndarray
    replied: np.ndarray
    followed: np.ndarray

    def labels(self) -> np.ndarray:
        """(n, 4) bool: like, reshare, reply, follow (the order of `engagement_prediction.PREDICTED_ACTIONS`)."""
        return np.column_stack([self.liked, self.reshared, self.replied, self.followed]).astype(bool)


@dataclass
class FeedbackLog:
    """Every logged (user, store row, value) of the impressions a learning ranker served; users numbered as first
    seen (a bridging rating, a collaborative engagement count)."""

    user_ids: list[str] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)
    _users: list[np.ndarray] = field(default_factory=list)
    _rows: list[np.ndarray] = field(default_factory=list)
    _values: list[np.ndarray] = field(default_factory=list)

    def add(self, agent_ids: Sequence[str], rows: np.ndarray, values: np.ndarray) -> None:
        """One step's impressions, one value each (aligned arrays)."""
        for agent in agent_ids:
            if agent not in self._index:
                self._index[agent] = len(self.user_ids)
                self.user_ids.append(agent)
        self._users.append(np.fromiter((self._index[a] for a in agent_ids), dtype=np.int64, count=len(agent_ids)))
        self._rows.append(np.asarray(rows, dtype=np.int64))
        self._values.append(np.asarray(values, dtype=np.float64))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(users, rows, values) of everything logged."""
        if not self._users:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        return np.concatenate(self._users), np.concatenate(self._rows), np.concatenate(self._values)
