"""Activity that responds to the feed: an agent's chance to come back follows the reward its past feeds gave it.

Average-reward reinforcement learning of response vigour (Niv, Daw, Joel & Dayan 2007, "Tonic dopamine: opportunity
costs and the control of response vigor", Psychopharmacology 191:507-520): an agent that pays a vigour cost C/tau
for acting after latency tau and an opportunity cost R_bar * tau (the average reward rate forgone while waiting)
acts at the optimal latency tau* = sqrt(C / R_bar), so its response rate 1/tau* grows as R_bar ** 0.5. Lindström et
al. 2021 ("A computational reward learning account of social media engagement", Nat. Commun. 12:1311) fit this
model to over a million posts on several platforms: people space their visits by the average reward they get.

Here the reward of a visit is what the feed gave the agent: the engagements (likes, reshares, replies) it made on it.
Each agent's average reward is the sample mean of its visits' rewards (the delta rule with step 1/(n+1), Sutton &
Barto 2018 section 2.4) with one prior visit at `reference`: the engagements per feed the behaviour model gives a
feed of posts at its calibration point (`REFERENCE_POINT`), an input pattern rather than a fitted value. The
activation threshold is the agent's activity times (R_bar / reference) ** strength, clipped to the population's
activity range; strength 0.5 is Niv et al.'s optimum, 0 today's fixed activity. The activation draws stay the
engine's keyed uniforms: only the threshold moves, so every ranker sees the same coin flips (common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from prism_experiments.agents.behaviour import (
    ENGAGEMENT_ACTIONS,
    attention_probability,
    probabilities_at_reference_point,
)
from prism_experiments.agents.config import AgentsConfig, BehaviourConfig

#: the strength Niv et al. (2007)'s optimal latency tau* = sqrt(C / R_bar) gives: response rate ∝ R_bar ** 0.5
NIV_RATE_EXPONENT = 0.5


def reference_reward(behaviour: BehaviourConfig, feed_size: int) -> float:
    """Expected engagements on one feed of `feed_size` posts at the behaviour model's calibration point:
    sum over positions of P(look at i) times the summed P(like), P(reshare), P(reply) at `REFERENCE_POINT`."""
    probabilities = probabilities_at_reference_point(behaviour)
    per_look = sum(probabilities[action] for action in ENGAGEMENT_ACTIONS)
    looks = float(attention_probability(np.arange(feed_size), behaviour).sum())
    return looks * per_look


def activation_thresholds(
    activity: np.ndarray,
    reward_sum: np.ndarray,
    visits: np.ndarray,
    reference: float,
    strength: float,
    bounds: tuple[float, float],
) -> np.ndarray:
    """P(active) per agent: activity * (R_bar / reference) ** strength, clipped to `bounds`, where
    R_bar = (reference + reward_sum) / (1 + visits) is the mean reward over the agent's visits and one prior visit."""
    average = (reference + reward_sum) / (1.0 + visits)
    return np.clip(activity * np.power(average / reference, strength), *bounds)


@dataclass
class FeedResponsiveActivity:
    """Each agent's activation threshold, moved by the rewards of its visits (see the module's docstring)."""

    activity: np.ndarray
    strength: float
    reference: float
    bounds: tuple[float, float]
    reward_sum: np.ndarray = field(init=False)
    visits: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.reward_sum = np.zeros(len(self.activity))
        self.visits = np.zeros(len(self.activity))

    @classmethod
    def of(cls, activity: np.ndarray, agents: AgentsConfig, feed_size: int) -> FeedResponsiveActivity:
        bounds = (agents.activity_min, agents.activity_max)
        return cls(activity, agents.activity_response, reference_reward(agents.behaviour, feed_size), bounds)

    def thresholds(self) -> np.ndarray:
        """P(active) of every agent in the coming step; at strength 0 the fixed activity itself (bit-identical)."""
        if self.strength == 0.0:
            return self.activity
        return activation_thresholds(
            self.activity, self.reward_sum, self.visits, self.reference, self.strength, self.bounds
        )

    def visited(self, active: np.ndarray, agent_idx: np.ndarray, engaged: np.ndarray) -> None:
        """Record one visit for each `active` agent, rewarded by its engagements: impression i (of agent
        `agent_idx[i]`) counts `engaged[i]` actions."""
        if self.strength == 0.0:
            return
        self.visits[active] += 1.0
        if len(agent_idx):
            self.reward_sum += np.bincount(agent_idx, weights=engaged, minlength=len(self.activity))
