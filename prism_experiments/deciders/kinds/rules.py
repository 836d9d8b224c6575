"""The rule decider: what agents do with the feeds they are shown (look, like, reshare, reply, follow) as keyed coin
flips against the behaviour model's probabilities (docs/model.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.agents import (
    AgentsConfig,
    attention_probability,
    engagement_probabilities,
    follow_probability,
    format_affinity_for,
)
from prism_experiments.corpus.appeal import PostAppeal
from prism_experiments.deciders.base import BaseDeciderConfig, DeciderInputs, Decisions, Impressions, StepActions
from prism_experiments.deciders.registry import register_decider
from prism_experiments.politics.behaviour import engagement_offsets, post_columns
from prism_experiments.random_streams import BEHAVIOUR_SLOTS, FOLLOW, LIKE, LOOK, REPLY, RESHARE, Stream, keyed_uniforms
from prism_experiments.ranking.step_feeds import StepFeeds


def rule_decisions(
    seed: int,
    step: int,
    active: np.ndarray,
    impressions: Impressions,
    biases: np.ndarray,
    archetypes: np.ndarray,
    agents: AgentsConfig,
    feed_size: int,
    appeal: np.ndarray | None = None,
    politics: np.ndarray | None = None,
) -> Decisions:
    """Each impression's looks and engagements, from the behaviour model and the (step, agent, slot) uniforms.

    `active` are the step's active agents in ascending order; `biases` and `archetypes` have one row per agent;
    `appeal` is each impression's post log-appeal, added to the three engagement logits (None: no appeal term);
    `politics` each impression's (like, reshare, reply) political logit terms (None: politics off, REQ-POL-6).
    """
    agent_idx, positions, posts = impressions.agent_idx, impressions.positions, impressions.posts
    behaviour = agents.behaviour
    like_bias, reshare_bias, reply_bias = biases[agent_idx, 0], biases[agent_idx, 1], biases[agent_idx, 2]
    if appeal is not None:  # skipped when off, so that the logits stay bit-identical
        like_bias, reshare_bias, reply_bias = like_bias + appeal, reshare_bias + appeal, reply_bias + appeal
    if politics is not None:  # likewise skipped when off
        like_bias, reshare_bias, reply_bias = (
            like_bias + politics[:, 0],
            reshare_bias + politics[:, 1],
            reply_bias + politics[:, 2],
        )
    probabilities = engagement_probabilities(
        impressions.similarity,
        np.array([p.has_media for p in posts]),
        np.array([p.likes for p in posts]),
        impressions.in_network,
        like_bias,
        reshare_bias,
        reply_bias,
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


class RulesDeciderConfig(BaseDeciderConfig):
    """Every agent decides by the rule model (`agents.behaviour`)."""

    kind: Literal["rules"] = "rules"


@register_decider
class RulesDecider:
    """The logistic rule model with keyed uniforms (`rule_decisions`)."""

    config_model = RulesDeciderConfig

    def __init__(self, config: RulesDeciderConfig, inputs: DeciderInputs) -> None:
        self.inputs = inputs
        self.appeal = PostAppeal(inputs.seed, inputs.appeal)

    def decide_step(
        self, step: int, now: datetime, active: np.ndarray, feeds: StepFeeds, impressions: Impressions
    ) -> StepActions:
        inputs = self.inputs
        return StepActions(
            rule_decisions(
                inputs.seed,
                step,
                active,
                impressions,
                inputs.arrays.biases,
                inputs.arrays.archetypes,
                inputs.agents,
                inputs.feed_size,
                # the ids only when appeal is on: `of` answers None otherwise
                self.appeal.of([post.id for post in impressions.posts]) if self.appeal.config.enabled else None,
                self._politics(impressions),
            )
        )

    def _politics(self, impressions: Impressions) -> np.ndarray | None:
        """The impressions' political logit terms; None when politics is off."""
        config, positions = self.inputs.agents.politics, self.inputs.arrays.positions
        if not config.enabled or positions is None:
            return None
        political, slant, animosity, moral = post_columns(impressions.posts)
        return engagement_offsets(positions[impressions.agent_idx], political, slant, animosity, moral, config)

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        return np.ones(len(active), dtype=bool)

    def llm_agents(self) -> np.ndarray:
        return np.zeros(len(self.inputs.population), dtype=bool)

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        return {}, []

    def model_identity(self) -> str | None:
        return None
