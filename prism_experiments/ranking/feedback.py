"""What the platform logs after serving a step's feeds: who was shown what, and what they did with it."""

from __future__ import annotations

from dataclasses import dataclass

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
