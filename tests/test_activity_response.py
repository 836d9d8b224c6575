"""Feed-responsive activity (prism_experiments/simulation/activity.py): the activation rule on hand-computed arrays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from prism_experiments.agents.config import AgentsConfig, BehaviourConfig
from prism_experiments.simulation.activity import FeedResponsiveActivity, activation_thresholds, reference_reward


def test_reference_reward_is_the_calibration_points_engagements_per_feed() -> None:
    """Two positions looked at with 0.95 and 0.95 * 0.85; per look the three actions' probabilities at similarity 0.6,
    2 likes, out of network, no media: expit(-4.75 + 2.4 + 0.15 ln 3) + expit(-6.5 + 2.4 + 0.2 ln 3)
    + expit(-6.1 + 1.8 + 0.1 ln 3)."""
    per_look = expit(-2.35 + 0.15 * np.log(3)) + expit(-4.1 + 0.2 * np.log(3)) + expit(-4.3 + 0.1 * np.log(3))
    assert reference_reward(BehaviourConfig(), 2) == pytest.approx((0.95 + 0.95 * 0.85) * per_look, rel=1e-12)


def test_thresholds_follow_the_mean_reward_to_the_power_of_the_strength() -> None:
    """reference 1: an agent with no visit keeps its activity; 3 visits rewarded 7 in all: mean (1 + 7) / 4 = 2,
    so 0.1 * 2 ** 0.5; 1 visit rewarded 0: mean 0.5, 0.2 * 0.5 ** 0.5; a high mean is clipped at the upper bound."""
    got = activation_thresholds(
        np.array([0.1, 0.1, 0.2, 0.5]),
        reward_sum=np.array([0.0, 7.0, 0.0, 99.0]),
        visits=np.array([0.0, 3.0, 1.0, 1.0]),
        reference=1.0,
        strength=0.5,
        bounds=(0.01, 0.9),
    )
    np.testing.assert_allclose(got, [0.1, 0.1 * np.sqrt(2.0), 0.2 * np.sqrt(0.5), 0.9], rtol=1e-12)


def test_an_unrewarded_agent_falls_to_the_lower_bound_not_to_zero() -> None:
    got = activation_thresholds(np.array([0.05]), np.array([0.0]), np.array([10_000.0]), 1.0, 2.0, (0.01, 1.0))
    assert got.tolist() == [0.01]


def test_visits_add_each_agents_engagements_and_strength_zero_is_the_fixed_activity() -> None:
    activity = np.array([0.1, 0.3, 0.6])
    moved = FeedResponsiveActivity(activity, strength=1.0, reference=2.0, bounds=(0.0, 1.0))
    # agents 0 and 2 visit; impressions: two of agent 0 (1 and 2 engagements), one of agent 2 (none)
    moved.visited(np.array([0, 2]), np.array([0, 0, 2]), np.array([1.0, 2.0, 0.0]))
    assert moved.visits.tolist() == [1.0, 0.0, 1.0] and moved.reward_sum.tolist() == [3.0, 0.0, 0.0]
    # means (2 + 3) / 2 = 2.5, 2, (2 + 0) / 2 = 1 against reference 2
    np.testing.assert_allclose(moved.thresholds(), [0.1 * 1.25, 0.3, 0.6 * 0.5], rtol=1e-12)
    fixed = FeedResponsiveActivity(activity, strength=0.0, reference=2.0, bounds=(0.0, 1.0))
    fixed.visited(np.array([0, 2]), np.array([0, 0, 2]), np.array([1.0, 2.0, 0.0]))
    assert fixed.thresholds() is activity


def test_of_reads_the_strength_bounds_and_reference_from_the_config() -> None:
    agents = AgentsConfig(activity_response=0.5, activity_min=0.02, activity_max=0.8)
    built = FeedResponsiveActivity.of(np.array([0.1]), agents, feed_size=10)
    assert (built.strength, built.bounds) == (0.5, (0.02, 0.8))
    assert built.reference == pytest.approx(reference_reward(agents.behaviour, 10))
