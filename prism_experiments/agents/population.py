"""Seeded generation of the agent population (vectorised draws, one stream per attribute)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prism_experiments.agents.archetypes import ARCHETYPES
from prism_experiments.agents.config import AgentsConfig
from prism_experiments.agents.seeding import Seed, stream_rng
from prism_experiments.agents.social_agent import MAX_INTERESTS, SocialAgent
from prism_experiments.politics.identity import draw_positions

_NAMESPACE = "agents.population"
# One stream per attribute: changing e.g. archetype_concentration leaves interests unchanged.
_INTERESTS, _ACTIVITY, _POST_RATE, _PROPENSITY, _ARCHETYPES, _POSITIONS = range(6)


def agent_id_width(n_agents: int) -> int:
    """Digits of zero-padded ids: enough for n_agents - 1, at least 4."""
    return max(4, len(str(n_agents - 1)))


def agent_ids(n_agents: int) -> list[str]:
    width = agent_id_width(n_agents)
    return [f"agent_{i:0{width}d}" for i in range(n_agents)]


def topic_popularity(n_topics: int, exponent: float) -> np.ndarray:
    """Zipf weights p_k ∝ (k+1)^-exponent over topics in the given order (0 = uniform)."""
    weights = (np.arange(n_topics) + 1.0) ** -exponent
    return weights / weights.sum()


def draw_interests(
    rng: np.random.Generator, n_agents: int, n_topics: int, count_probs: Sequence[float], exponent: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per agent: a topic ranking (n_agents, n_topics) and how many of its first topics it holds.

    Weighted sampling without replacement by the Gumbel-top-k trick (Kool et al. 2019,
    "Stochastic Beams and Where to Find Them"): the order of log p + Gumbel noise is a
    draw of successive weighted sampling without replacement.
    """
    max_count = min(MAX_INTERESTS, n_topics)
    probs = np.asarray(count_probs[:max_count], dtype=float)
    if probs.sum() <= 0:
        raise ValueError(f"interest_count_weights: no weight on counts <= {max_count} (the number of topics)")
    counts = rng.choice(np.arange(1, max_count + 1), size=n_agents, p=probs / probs.sum())
    keys = np.log(topic_popularity(n_topics, exponent))[None, :] + rng.gumbel(size=(n_agents, n_topics))
    return np.argsort(-keys, axis=1, kind="stable"), counts


def draw_activity(rng: np.random.Generator, config: AgentsConfig, n_agents: int) -> np.ndarray:
    """Lognormal(log median, sigma) clipped to [activity_min, activity_max]: heavy-tailed participation."""
    raw = config.activity_median * np.exp(config.activity_sigma * rng.standard_normal(n_agents))
    return np.clip(raw, config.activity_min, config.activity_max)


def draw_propensities(rng: np.random.Generator, config: AgentsConfig, n_agents: int) -> np.ndarray:
    """(n_agents, 3) logit offsets for like, reshare, reply.

    Each is sigma * (sqrt(rho) z_shared + sqrt(1 - rho) z_action): marginal sd sigma,
    pairwise correlation rho between an agent's three offsets.
    """
    rho = config.propensity_correlation
    shared = rng.standard_normal((n_agents, 1))
    own = rng.standard_normal((n_agents, 3))
    return config.propensity_sigma * (np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * own)


def reply_talkativeness_offset(post_rate: np.ndarray, config: AgentsConfig) -> np.ndarray:
    """Reply logit offset elasticity * log(post_rate / mean post rate), the mean of Beta(alpha, beta) being
    alpha / (alpha + beta): at small reply probabilities the odds scale as (post_rate / mean)^elasticity."""
    elasticity = config.reply_post_rate_elasticity or 0.0
    mean = config.post_rate_alpha / (config.post_rate_alpha + config.post_rate_beta)
    # a Beta draw can underflow to 0 at small alpha: floor it where the log would be -inf
    return elasticity * np.log(np.maximum(post_rate, np.finfo(float).tiny) / mean)


def draw_archetype_weights(rng: np.random.Generator, concentration: float, n_agents: int) -> np.ndarray:
    """(n_agents, len(ARCHETYPES)) rows of a symmetric Dirichlet(concentration)."""
    weights = rng.dirichlet(np.full(len(ARCHETYPES), concentration), size=n_agents)
    return weights / weights.sum(axis=1, keepdims=True)


def _checked_topics(topics: Sequence[str]) -> list[str]:
    topic_list = list(topics)
    if not topic_list or any(not t for t in topic_list) or len(set(topic_list)) != len(topic_list):
        raise ValueError(f"topics: must be a non-empty sequence of distinct non-empty strings, got {topic_list}")
    return topic_list


def generate_population(config: AgentsConfig, topics: Sequence[str], seed: Seed) -> list[SocialAgent]:
    """`config.n_agents` agents, deterministic in `seed`; `following` is left empty (given, so that every agent
    shares one fields set: `SocialAgent._share_complete_fields_set`).

    With fewer than 3 topics, interest counts above len(topics) are dropped and the
    remaining count weights renormalised.
    """
    topic_list = _checked_topics(topics)
    n = config.n_agents
    ranking, counts = draw_interests(
        stream_rng(seed, _NAMESPACE, _INTERESTS),
        n,
        len(topic_list),
        config.interest_count_probabilities(),
        config.topic_popularity_exponent,
    )
    activity = draw_activity(stream_rng(seed, _NAMESPACE, _ACTIVITY), config, n)
    post_rate = stream_rng(seed, _NAMESPACE, _POST_RATE).beta(config.post_rate_alpha, config.post_rate_beta, n)
    biases = draw_propensities(stream_rng(seed, _NAMESPACE, _PROPENSITY), config, n)
    if config.reply_post_rate_elasticity is not None:
        biases[:, 2] += reply_talkativeness_offset(post_rate, config)
    archetypes = draw_archetype_weights(stream_rng(seed, _NAMESPACE, _ARCHETYPES), config.archetype_concentration, n)
    # politics draws from a stream of its own, only when on: every other attribute is the same either way (REQ-POL-1)
    positions = (
        draw_positions(stream_rng(seed, _NAMESPACE, _POSITIONS), config.politics, n)
        if config.politics.enabled
        else np.full(n, np.nan)
    )
    return [
        SocialAgent(
            id=agent_id,
            interests=[topic_list[j] for j in ranking[i, : counts[i]]],
            following=frozenset(),
            activity=float(activity[i]),
            post_rate=float(post_rate[i]),
            like_bias=float(biases[i, 0]),
            reshare_bias=float(biases[i, 1]),
            reply_bias=float(biases[i, 2]),
            archetype_weights=dict(zip(ARCHETYPES, archetypes[i].tolist())),
            position=None if np.isnan(positions[i]) else float(positions[i]),
        )
        for i, agent_id in enumerate(agent_ids(n))
    ]


def archetype_matrix(agents: Sequence[SocialAgent]) -> np.ndarray:
    """(len(agents), len(ARCHETYPES)) archetype weights, rows in agent order."""
    return np.array([agent.archetype_vector() for agent in agents], dtype=float).reshape(len(agents), len(ARCHETYPES))


@dataclass(frozen=True)
class PopulationArrays:
    """What the step loop and the deciders read of each agent, one row per agent, computed once per run."""

    activity: np.ndarray
    post_rate: np.ndarray
    #: (n, 3): like, reshare and reply logit offsets
    biases: np.ndarray
    #: (n, n_archetypes): archetype weights (`archetype_matrix`)
    archetypes: np.ndarray
    #: (n,): left-right positions, NaN for the non-political (REQ-POL-1); None: no agent has one
    positions: np.ndarray | None = None


def population_arrays(agents: Sequence[SocialAgent]) -> PopulationArrays:
    """The per-agent arrays of a population."""
    return PopulationArrays(
        activity=np.array([a.activity for a in agents], dtype=float),
        post_rate=np.array([a.post_rate for a in agents], dtype=float),
        biases=np.array([[a.like_bias, a.reshare_bias, a.reply_bias] for a in agents], dtype=float).reshape(-1, 3),
        archetypes=archetype_matrix(agents),
        positions=agent_positions(agents) if any(a.position is not None for a in agents) else None,
    )


def agent_positions(agents: Sequence[SocialAgent]) -> np.ndarray:
    """(n,) positions, NaN for an agent without one."""
    return np.array([np.nan if a.position is None else a.position for a in agents], dtype=float)
