"""Rule-based behaviour: pure, vectorised probabilities (docs/model.md, "Agent behaviour").

The engine draws the Bernoulli outcomes from its own keyed streams; these functions
only turn plain arrays into probabilities. Defaults and sources: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from prism_experiments.agents.archetypes import ARCHETYPES, format_affinity_matrix, format_indices
from prism_experiments.agents.config import AgentsConfig, BehaviourConfig, EngagementCoefficients

ENGAGEMENT_ACTIONS: tuple[str, ...] = ("like", "reshare", "reply")

#: The input at which the default coefficients are calibrated (docs/model.md, "Behaviour").
REFERENCE_POINT: dict[str, float] = {
    "similarity": 0.6,
    "has_media": 0.0,
    "likes": 2.0,
    "in_network": 0.0,
    "bias": 0.0,
    "format_affinity": 0.0,
}
#: Target engagement probabilities per looked-at post at REFERENCE_POINT (inclusive ranges).
CALIBRATION_TARGETS: dict[str, tuple[float, float]] = {
    "like": (0.08, 0.12),
    "reshare": (0.015, 0.03),
    "reply": (0.01, 0.02),
}


def attention_probability(positions: ArrayLike, cfg: BehaviourConfig) -> np.ndarray:
    """P(look at feed position i), i 0-based: look_top * attention_decay**i.

    Geometric examination curve: the cascade model of Craswell et al. (2008, "An
    experimental comparison of click position-bias models", WSDM) with a constant
    continuation probability and no stop after an engagement.
    """
    pos = np.asarray(positions)
    if pos.size and (not np.issubdtype(pos.dtype, np.integer) or pos.min() < 0):
        raise ValueError("positions: must be integers >= 0 (0 = top of the feed)")
    return cfg.look_top * np.power(cfg.attention_decay, pos.astype(float))


def engagement_logit(
    coefficients: EngagementCoefficients,
    similarity: np.ndarray,
    has_media: np.ndarray,
    likes: np.ndarray,
    in_network: np.ndarray,
    bias: np.ndarray,
    format_affinity: np.ndarray,
) -> np.ndarray:
    """Linear predictor of one action (the logit of its probability)."""
    c = coefficients
    return (
        c.intercept
        + c.w_similarity * similarity
        + c.w_media * has_media
        + c.w_social * np.log1p(likes)
        + c.w_in_network * in_network
        + c.w_format * format_affinity
        + bias
    )


def engagement_probabilities(
    similarity: ArrayLike,
    has_media: ArrayLike,
    likes: ArrayLike,
    in_network: ArrayLike,
    like_bias: ArrayLike,
    reshare_bias: ArrayLike,
    reply_bias: ArrayLike,
    cfg: BehaviourConfig,
    format_affinity: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """P(like), P(reshare), P(reply) of a looked-at post: logistic of a linear predictor.

    Inputs broadcast together (one entry per agent x post). `similarity` is interest
    similarity in [0, 1] (REQ-XALGO-2: 1 - cosine_distance / 2); `likes` the post's like
    count (social proof enters as log1p); `format_affinity` in [-1, 1] (see
    `format_affinity`), omitted = 0. Each action is its own Bernoulli draw.
    """
    sim = np.asarray(similarity, dtype=float)
    if not np.all(np.isfinite(sim)):
        raise ValueError("similarity: must be finite")
    like_counts = np.asarray(likes, dtype=float)
    if np.any(like_counts < 0):
        raise ValueError("likes: must be >= 0")
    affinity = np.zeros(()) if format_affinity is None else np.asarray(format_affinity, dtype=float)
    media = np.asarray(has_media, dtype=float)
    network = np.asarray(in_network, dtype=float)
    biases = {"like": like_bias, "reshare": reshare_bias, "reply": reply_bias}
    shape = np.broadcast_shapes(
        sim.shape,
        media.shape,
        like_counts.shape,
        network.shape,
        affinity.shape,
        *(np.shape(b) for b in biases.values()),
    )
    return {
        action: np.broadcast_to(
            expit(
                engagement_logit(
                    getattr(cfg, action),
                    sim,
                    media,
                    like_counts,
                    network,
                    np.asarray(biases[action], dtype=float),
                    affinity,
                )
            ),
            shape,
        ).copy()
        for action in ENGAGEMENT_ACTIONS
    }


def probabilities_at_reference_point(cfg: BehaviourConfig, **changes: float) -> dict[str, float]:
    """P(like), P(reshare), P(reply) at REFERENCE_POINT, the point the coefficients are calibrated at, with some
    of its inputs changed."""
    point = {**REFERENCE_POINT, **changes}
    probabilities = engagement_probabilities(
        point["similarity"],
        point["has_media"],
        point["likes"],
        point["in_network"],
        point["bias"],
        point["bias"],
        point["bias"],
        cfg,
        format_affinity=point["format_affinity"],
    )
    return {action: float(p) for action, p in probabilities.items()}


def follow_probability(cfg: BehaviourConfig) -> float:
    """P(follow the author of an out-of-network post the agent engaged with)."""
    return cfg.follow_probability


def format_affinity(
    archetype_weights: ArrayLike,
    formats: Sequence[str],
    preferred: Mapping[str, Sequence[str]],
    disliked: Mapping[str, Sequence[str]],
) -> np.ndarray:
    """Affinity in [-1, 1] of each (agent, post) pair: archetype weight on the post's
    format's preferring archetypes minus weight on its disliking archetypes.

    `archetype_weights` is (n_pairs, len(ARCHETYPES)) or one row broadcast to all
    formats; `formats` has one entry per pair.
    """
    weights = np.asarray(archetype_weights, dtype=float)
    if weights.shape[-1] != len(ARCHETYPES):
        raise ValueError(f"archetype_weights: last axis must have {len(ARCHETYPES)} entries (ARCHETYPES order)")
    columns = format_affinity_matrix(preferred, disliked)[:, format_indices(formats)]
    if weights.ndim == 1:
        return weights @ columns
    if weights.ndim != 2 or weights.shape[0] != len(formats):
        raise ValueError("archetype_weights: must be one row or one row per format (n_pairs, n_archetypes)")
    return np.einsum("na,an->n", weights, columns)


def format_affinity_for(config: AgentsConfig, archetype_weights: ArrayLike, formats: Sequence[str]) -> np.ndarray:
    """`format_affinity` with the tables of `config`."""
    return format_affinity(
        archetype_weights, formats, config.archetype_preferred_formats, config.archetype_disliked_formats
    )
