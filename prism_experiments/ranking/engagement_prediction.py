"""Predicted engagement for the `engagement` mode: the weighted score, the oracle, and a learned predictor.

X's home timeline scores a candidate by sum_a w_a * P(a | user, post) (twitter/the-algorithm-ml,
projects/home/recap/README.md, weights "as of April 5, 2023"); here the actions are the ones the
simulation has: like, reshare, reply and follow-after-engaging.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from prism_experiments.agents import AgentsConfig, engagement_probabilities, follow_probability, format_affinity_for
from prism_experiments.agents.archetypes import POST_FORMATS

#: the actions the simulation has, in the order of every (n, 4) probability array here
PREDICTED_ACTIONS: tuple[str, ...] = ("like", "reshare", "reply", "follow")
#: the features a ranker may see at serving time (position is not one: it is decided by the ranking)
FEATURE_NAMES: tuple[str, ...] = (
    "similarity",
    "in_network",
    "has_media",
    "age_hours",
    "log1p_likes",
    "log1p_reshares",
    "log1p_author_followers",
    *(f"format_{name}" for name in POST_FORMATS),
)


def weighted_engagement_score(probabilities: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """sum_a w_a * P(a) per candidate; `probabilities` is (n, len(weights)) in PREDICTED_ACTIONS order."""
    return np.asarray(probabilities, dtype=np.float64) @ np.asarray(weights, dtype=np.float64)


def oracle_probabilities(
    similarity: np.ndarray,
    has_media: np.ndarray,
    likes: np.ndarray,
    in_network: np.ndarray,
    author_followed: np.ndarray,
    biases: Sequence[float],
    archetype_weights: Sequence[float],
    formats: Sequence[str],
    agents: AgentsConfig,
    appeal: np.ndarray | None = None,
    politics: np.ndarray | None = None,
) -> np.ndarray:
    """(n, 4): the behaviour model's own P(like), P(reshare), P(reply) of a looked-at post for this agent, and
    P(follow) = follow_probability * P(any of the three) for an author the agent does not follow yet.

    Conditional on a look: P(look) depends only on the position, which the ranking decides. `appeal` is each
    post's log-appeal, the rule model's per-post logit term (None: appeal off); `politics` the (n, 3) political
    like, reshare and reply logit terms (`politics.behaviour.engagement_offsets`; None: politics off).
    """
    n = len(similarity)
    like_bias, reshare_bias, reply_bias = (np.asarray(bias, dtype=np.float64) for bias in biases[:3])
    if appeal is not None:  # skipped when off, so that the probabilities stay bit-identical
        like_bias, reshare_bias, reply_bias = like_bias + appeal, reshare_bias + appeal, reply_bias + appeal
    if politics is not None:  # likewise skipped when off
        like_bias, reshare_bias, reply_bias = (
            like_bias + politics[:, 0],
            reshare_bias + politics[:, 1],
            reply_bias + politics[:, 2],
        )
    affinity = format_affinity_for(agents, np.tile(np.asarray(archetype_weights, dtype=float), (n, 1)), formats)
    p = engagement_probabilities(
        similarity,
        has_media,
        likes,
        in_network,
        like_bias,
        reshare_bias,
        reply_bias,
        agents.behaviour,
        format_affinity=affinity,
    )
    engaged = 1.0 - (1.0 - p["like"]) * (1.0 - p["reshare"]) * (1.0 - p["reply"])
    follow = follow_probability(agents.behaviour) * engaged * ~np.asarray(author_followed, dtype=bool)
    return np.column_stack([p["like"], p["reshare"], p["reply"], follow])


def candidate_features(
    similarity: np.ndarray,
    in_network: np.ndarray,
    has_media: np.ndarray,
    age_hours: np.ndarray,
    likes: np.ndarray,
    reshares: np.ndarray,
    author_followers: np.ndarray,
    formats: Sequence[str],
) -> np.ndarray:
    """(n, len(FEATURE_NAMES)) serving-time features: counts as log1p, the format one-hot."""
    one_hot = np.array([[fmt == name for name in POST_FORMATS] for fmt in formats], dtype=float).reshape(
        len(formats), len(POST_FORMATS)
    )
    return np.column_stack(
        [
            np.asarray(similarity, float),
            np.asarray(in_network, float),
            np.asarray(has_media, float),
            np.asarray(age_hours, float),
            np.log1p(np.asarray(likes, float)),
            np.log1p(np.asarray(reshares, float)),
            np.log1p(np.asarray(author_followers, float)),
            one_hot,
        ]
    )


def predictor_quality(predicted: np.ndarray, observed: np.ndarray) -> dict[str, float]:
    """AUC (NaN unless both classes occur) and calibration ratio mean(predicted) / mean(observed) (NaN if none)."""
    from sklearn.metrics import roc_auc_score  # here, not at import: see LearnedEngagementModel.fit

    labels = np.asarray(observed, dtype=bool)
    auc = float(roc_auc_score(labels, predicted)) if 0 < labels.sum() < len(labels) else float("nan")
    rate = labels.mean() if len(labels) else 0.0
    return {"auc": auc, "calibration": float(np.mean(predicted) / rate) if rate > 0 else float("nan")}


@dataclass
class LearnedEngagementModel:
    """One logistic regression per action on standardised serving features, refit on everything logged so far.

    scikit-learn's `LogisticRegression` (lbfgs, L2, C=1) on one BLAS thread, so a refit is deterministic
    whatever the machine's thread count. An action whose labels are still all one class has no model.
    """

    max_iter: int = 500
    features: list[np.ndarray] = field(default_factory=list)
    labels: list[np.ndarray] = field(default_factory=list)
    models: dict[int, object] = field(default_factory=dict)

    def add(self, features: np.ndarray, labels: np.ndarray) -> None:
        """Log one step's served impressions: features (n, f) and labels (n, 4) in PREDICTED_ACTIONS order."""
        self.features.append(np.asarray(features, dtype=np.float64))
        self.labels.append(np.asarray(labels, dtype=bool))

    @property
    def n_rows(self) -> int:
        return sum(len(f) for f in self.features)

    def fit(self) -> None:
        """Refit every action with both classes in the log on all rows logged so far."""
        if not self.features:
            return
        # imported here: scikit-learn (with scipy.stats) costs ~1 s of start-up that only learned-predictor
        # runs need, and every run imports this module through the ranking registry (docs/bench.md, start-up)
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from threadpoolctl import threadpool_limits

        x, y = np.vstack(self.features), np.vstack(self.labels)
        with threadpool_limits(1):
            for action in range(y.shape[1]):
                if 0 < y[:, action].sum() < len(y):
                    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=self.max_iter))
                    self.models[action] = model.fit(x, y[:, action])

    def predict(self, features: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """(n, 4) P(action); an action without a model yet takes the `prior` column (the cold start)."""
        out = np.array(prior, dtype=np.float64, copy=True)
        if len(features) == 0:
            return out
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            for action, model in self.models.items():
                out[:, action] = model.predict_proba(features)[:, 1]  # type: ignore[attr-defined]
        return out
