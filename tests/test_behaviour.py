"""Behaviour probabilities: attention, logit-linear engagement, follow, format affinity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prism_experiments.agents import (
    ARCHETYPES,
    CALIBRATION_TARGETS,
    POST_FORMATS,
    AgentsConfig,
    BehaviourConfig,
    EngagementCoefficients,
    attention_probability,
    engagement_probabilities,
    follow_probability,
    format_affinity,
    format_affinity_for,
)
from prism_experiments.agents.behaviour import probabilities_at_reference_point

CFG = BehaviourConfig()


def _at(**changes: float) -> dict[str, float]:
    """Engagement probabilities at the calibration reference point with some inputs changed."""
    return probabilities_at_reference_point(CFG, **changes)


# --- attention ------------------------------------------------------------------------------


def test_attention_decays_strictly_from_look_top() -> None:
    p = attention_probability(np.arange(20), CFG)
    assert p[0] == 0.95
    assert p[3] == pytest.approx(0.95 * 0.85**3)
    assert (np.diff(p) < 0).all()
    assert ((p > 0) & (p <= 1)).all()


def test_attention_without_decay_is_flat() -> None:
    flat = attention_probability(np.arange(5), BehaviourConfig(attention_decay=1.0, look_top=0.5))
    np.testing.assert_array_equal(flat, np.full(5, 0.5))


@pytest.mark.parametrize("positions", [np.array([-1, 0]), np.array([0.5])])
def test_attention_rejects_bad_positions(positions: np.ndarray) -> None:
    with pytest.raises(ValueError, match="positions"):
        attention_probability(positions, CFG)


# --- engagement -----------------------------------------------------------------------------


def test_hand_computed_logistic_value() -> None:
    coefficients = EngagementCoefficients(
        intercept=-2.0, w_similarity=1.0, w_media=0.5, w_social=1.0, w_in_network=0.5, w_format=2.0
    )
    cfg = BehaviourConfig(like=coefficients)
    # likes = e - 1 makes log1p(likes) = 1: logit = -2 + 0.5 + 0.5 + 1 + 0.5 + 2*0.25 + 0.3 = 1.3
    probs = engagement_probabilities(0.5, True, math.e - 1, True, 0.3, 0.0, 0.0, cfg, format_affinity=0.25)
    assert float(probs["like"]) == pytest.approx(1 / (1 + math.exp(-1.3)), rel=1e-12)
    assert float(probs["like"]) == pytest.approx(0.785834983, rel=1e-8)


def test_default_calibration_targets_hold_at_the_reference_point() -> None:
    reference = _at()
    for action, (low, high) in CALIBRATION_TARGETS.items():
        assert low <= reference[action] <= high, action
    assert reference["like"] > reference["reshare"] > reference["reply"]


def test_probabilities_are_in_unit_interval_for_extreme_inputs() -> None:
    rng = np.random.default_rng(0)
    n = 10_000
    probs = engagement_probabilities(
        rng.uniform(-5, 5, n),
        rng.random(n) < 0.5,
        rng.integers(0, 10**9, n),
        rng.random(n) < 0.5,
        rng.normal(0, 30, n),
        rng.normal(0, 30, n),
        rng.normal(0, 30, n),
        CFG,
        format_affinity=rng.uniform(-1, 1, n),
    )
    for p in probs.values():
        assert p.shape == (n,)
        assert np.isfinite(p).all() and ((p >= 0) & (p <= 1)).all()


@settings(max_examples=60, deadline=None)
@given(
    low=st.floats(0.0, 1.0),
    delta=st.floats(0.01, 1.0),
    likes=st.integers(0, 10_000),
    media=st.booleans(),
    network=st.booleans(),
    bias=st.floats(-3, 3),
)
def test_engagement_is_monotone_in_similarity(
    low: float, delta: float, likes: int, media: bool, network: bool, bias: float
) -> None:
    probs = engagement_probabilities([low, low + delta], media, likes, network, bias, bias, bias, CFG)
    for p in probs.values():
        assert p[1] > p[0]


def test_similarity_grid_is_increasing() -> None:
    grid = np.linspace(0, 1, 11)
    for p in engagement_probabilities(grid, False, 2, False, 0, 0, 0, CFG).values():
        assert (np.diff(p) > 0).all()


def test_media_raises_reshare_more_than_like() -> None:
    """Visual virality hypothesis: larger relative and absolute lift for reshares."""
    plain, media = _at(), _at(has_media=1.0)
    assert media["like"] > plain["like"]
    assert media["reshare"] / plain["reshare"] > 1.5 * (media["like"] / plain["like"])
    assert media["reshare"] - plain["reshare"] > media["like"] - plain["like"]


def test_in_network_and_social_proof_raise_every_action_a_little() -> None:
    plain = _at()
    for changed in (_at(in_network=1.0), _at(likes=20.0)):
        for action in plain:
            assert plain[action] < changed[action] < 2 * plain[action]


def test_agent_bias_moves_only_its_own_action() -> None:
    probs = engagement_probabilities(0.6, False, 2, False, np.array([0.0, 1.0]), 0.0, 0.0, CFG)
    assert probs["like"][1] > probs["like"][0]
    assert probs["reshare"][1] == probs["reshare"][0]
    assert probs["reply"][1] == probs["reply"][0]


def test_inputs_broadcast_agents_against_posts() -> None:
    similarity = np.full((3, 4), 0.6)
    agent_bias = np.array([[-1.0], [0.0], [1.0]])
    probs = engagement_probabilities(similarity, False, np.zeros(4), False, agent_bias, agent_bias, 0.0, CFG)
    assert probs["like"].shape == (3, 4) and probs["reply"].shape == (3, 4)
    assert (np.diff(probs["like"][:, 0]) > 0).all()


def test_missing_format_affinity_means_neutral() -> None:
    without = engagement_probabilities(0.6, False, 2, False, 0, 0, 0, CFG)
    neutral = engagement_probabilities(0.6, False, 2, False, 0, 0, 0, CFG, format_affinity=0.0)
    liked = engagement_probabilities(0.6, False, 2, False, 0, 0, 0, CFG, format_affinity=1.0)
    assert all(without[action] == neutral[action] for action in without)
    assert all(liked[action] > without[action] for action in without)


@pytest.mark.parametrize(("similarity", "likes", "message"), [(float("nan"), 0, "similarity"), (0.5, -1, "likes")])
def test_bad_engagement_inputs_are_rejected(similarity: float, likes: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        engagement_probabilities(similarity, False, likes, False, 0, 0, 0, CFG)


def test_follow_probability_comes_from_the_config() -> None:
    assert follow_probability(CFG) == 0.1
    assert follow_probability(BehaviourConfig(follow_probability=0.35)) == 0.35


# --- format affinity ------------------------------------------------------------------------


def test_format_affinity_hand_computed() -> None:
    config = AgentsConfig()
    analyst = np.eye(len(ARCHETYPES))[ARCHETYPES.index("analyst")]
    affinity = format_affinity_for(config, analyst, ["list", "most_people_think_x", "tip"])
    np.testing.assert_array_equal(affinity, [1.0, -1.0, 0.0])
    # Half analyst (prefers list), half storyteller (dislikes list): they cancel; storytelling +0.5.
    mixed = np.zeros(len(ARCHETYPES))
    mixed[[ARCHETYPES.index("analyst"), ARCHETYPES.index("storyteller")]] = 0.5
    np.testing.assert_allclose(format_affinity_for(config, mixed, ["list", "storytelling"]), [0.0, 0.5])
    per_pair = format_affinity_for(config, np.vstack([analyst, mixed]), ["list", "storytelling"])
    np.testing.assert_allclose(per_pair, [1.0, 0.5])


def test_format_affinity_is_bounded_for_any_weights() -> None:
    config = AgentsConfig()
    weights = np.random.default_rng(3).dirichlet(np.ones(len(ARCHETYPES)), size=len(POST_FORMATS) * 50)
    affinity = format_affinity_for(config, weights, list(POST_FORMATS) * 50)
    assert ((affinity >= -1) & (affinity <= 1)).all()


def test_format_affinity_rejects_bad_input() -> None:
    config = AgentsConfig()
    with pytest.raises(ValueError, match="format: unknown"):
        format_affinity_for(config, np.full(5, 0.2), ["limerick"])
    with pytest.raises(ValueError, match="archetype_weights"):
        format_affinity(
            np.full(4, 0.25), ["list"], config.archetype_preferred_formats, config.archetype_disliked_formats
        )
