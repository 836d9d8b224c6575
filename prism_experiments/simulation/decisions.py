"""What agents do with the feeds they are shown: look, like, reshare, reply, follow, as keyed coin flips."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prism_experiments.agents import (
    AgentsConfig,
    attention_probability,
    engagement_probabilities,
    follow_probability,
    format_affinity_for,
)
from prism_experiments.domain import Post
from prism_experiments.simulation.streams import BEHAVIOUR_SLOTS, FOLLOW, LIKE, LOOK, REPLY, RESHARE, Stream, keyed_uniforms


@dataclass(frozen=True)
class Impressions:
    """A step's (agent, feed position, post) pairs, feeds one after another; arrays are aligned."""

    agent_idx: np.ndarray
    positions: np.ndarray
    posts: Sequence[Post]
    in_network: np.ndarray
    similarity: np.ndarray


@dataclass(frozen=True)
class Decisions:
    """Per impression: which actions the agent takes (likes and reshares before the once-only rule)."""

    liked: np.ndarray
    reshared: np.ndarray
    replied: np.ndarray
    follows: np.ndarray


def decide(seed: int, step: int, active: np.ndarray, impressions: Impressions, biases: np.ndarray,
           archetypes: np.ndarray, agents: AgentsConfig, feed_size: int) -> Decisions:
    """Each impression's looks and engagements, from the behaviour model and the (step, agent, slot) uniforms.

    `active` are the step's active agents in ascending order; `biases` and `archetypes` have one row per agent.
    """
    agent_idx, positions, posts = impressions.agent_idx, impressions.positions, impressions.posts
    behaviour = agents.behaviour
    probabilities = engagement_probabilities(
        impressions.similarity,
        np.array([p.has_media for p in posts]),
        np.array([p.likes for p in posts]),
        impressions.in_network,
        biases[agent_idx, 0], biases[agent_idx, 1], biases[agent_idx, 2],
        behaviour,
        format_affinity=format_affinity_for(agents, archetypes[agent_idx], [p.format for p in posts]),
    )
    draws = keyed_uniforms(seed, Stream.BEHAVIOUR, step, active, np.arange(BEHAVIOUR_SLOTS * feed_size))
    draw_row = np.searchsorted(active, agent_idx)

    def coin(slot: int) -> np.ndarray:
        return draws[draw_row, BEHAVIOUR_SLOTS * positions + slot]

    looked = coin(LOOK) < attention_probability(positions, behaviour)
    liked = looked & (coin(LIKE) < probabilities["like"])
    reshared = looked & (coin(RESHARE) < probabilities["reshare"])
    replied = looked & (coin(REPLY) < probabilities["reply"])
    follows = (liked | reshared | replied) & (coin(FOLLOW) < follow_probability(behaviour))
    return Decisions(liked=liked, reshared=reshared, replied=replied, follows=follows)
