"""Population config, SocialAgent validation and seeded population generation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError
from validation_helpers import assert_refused

from prism_experiments.agents import (
    ARCHETYPES,
    POST_FORMATS,
    AgentsConfig,
    SocialAgent,
    agent_ids,
    archetype_matrix,
    generate_population,
    topic_popularity,
)
from prism_experiments.agents.population import reply_talkativeness_offset
from prism_experiments.domain import TOPICS


@pytest.fixture(scope="module")
def big_population() -> list[SocialAgent]:
    return generate_population(AgentsConfig(n_agents=6000), TOPICS, 7)


# --- config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field", "allowed"),
    [
        ({"n_agents": 0}, "n_agents", "greater than or equal to 1"),
        ({"interest_count_weights": [-1, 1, 1]}, "interest_count_weights", "non-negative"),
        ({"interest_count_weights": [0, 0, 0]}, "interest_count_weights", "positive sum"),
        ({"interest_count_weights": [1, 1]}, "interest_count_weights", "Field required"),
        ({"topic_popularity_exponent": -0.1}, "topic_popularity_exponent", "greater than or equal to 0"),
        ({"activity_median": 0.0}, "activity_median", "greater than 0"),
        ({"activity_median": 1.5}, "activity_median", "less than or equal to 1"),
        ({"activity_sigma": -1.0}, "activity_sigma", "greater than or equal to 0"),
        ({"activity_min": -0.1}, "activity_min", "greater than or equal to 0"),
        ({"activity_max": 1.1}, "activity_max", "less than or equal to 1"),
        ({"activity_min": 0.5, "activity_max": 0.4}, "activity_min", "<= activity_max"),
        ({"post_rate_alpha": 0.0}, "post_rate_alpha", "greater than 0"),
        ({"post_rate_beta": -1.0}, "post_rate_beta", "greater than 0"),
        ({"propensity_sigma": -0.1}, "propensity_sigma", "greater than or equal to 0"),
        ({"propensity_sigma": float("nan")}, "propensity_sigma", "finite number"),
        ({"propensity_correlation": 1.5}, "propensity_correlation", "less than or equal to 1"),
        ({"archetype_concentration": 0.0}, "archetype_concentration", "greater than 0"),
        ({"n_agnets": 10}, "n_agnets", "Extra inputs are not permitted"),
        ({"behaviour": {"look_top": 1.5}}, "look_top", "less than or equal to 1"),
        ({"behaviour": {"attention_decay": 0.0}}, "attention_decay", "greater than 0"),
        ({"behaviour": {"follow_probability": -0.1}}, "follow_probability", "greater than or equal to 0"),
        ({"behaviour": {"media_post_probability": 2}}, "media_post_probability", "less than or equal to 1"),
        (
            {
                "behaviour": {
                    "like": {
                        "intercept": 0,
                        "w_similarity": -1,
                        "w_media": 0,
                        "w_social": 0,
                        "w_in_network": 0,
                        "w_format": 0,
                    }
                }
            },
            "w_similarity",
            "greater than or equal to 0",
        ),
        (
            {
                "behaviour": {
                    "reshare": {
                        "intercept": float("inf"),
                        "w_similarity": 1,
                        "w_media": 0,
                        "w_social": 0,
                        "w_in_network": 0,
                        "w_format": 0,
                    }
                }
            },
            "intercept",
            "finite number",
        ),
        ({"behaviour": {"reply": {"intercept": 0}}}, "w_similarity", "Field required"),
        ({"behaviour": {"speed": 1}}, "speed", "Extra inputs are not permitted"),
    ],
)
def test_bad_config_values_are_rejected_naming_the_field(overrides: dict, field: str, allowed: str) -> None:
    assert_refused(AgentsConfig, overrides, field, allowed)


def _table(name: str) -> dict[str, list[str]]:
    return {k: list(v) for k, v in getattr(AgentsConfig(), name).items()}


@pytest.mark.parametrize(
    ("name", "edit", "allowed"),
    [
        ("format_archetype_bias", lambda t: t.pop("tip"), "keys must be exactly"),
        ("format_archetype_bias", lambda t: t.__setitem__("tip", ["wizard"]), "unknown ['wizard']"),
        ("format_archetype_bias", lambda t: t.__setitem__("tip", list(ARCHETYPES[:4])), "1 to 3 distinct"),
        ("format_archetype_bias", lambda t: t.__setitem__("tip", []), "1 to 3 distinct"),
        ("archetype_preferred_formats", lambda t: t.__setitem__("analyst", ["list", "list"]), "1 to 2 distinct"),
        ("archetype_preferred_formats", lambda t: t.__setitem__("oracle", ["list"]), "keys must be exactly"),
        ("archetype_disliked_formats", lambda t: t.__setitem__("analyst", ["rant"]), "unknown ['rant']"),
        ("archetype_disliked_formats", lambda t: t.__setitem__("analyst", ["list"]), "also listed as preferred"),
    ],
)
def test_bad_format_tables_are_rejected_naming_the_field(name: str, edit, allowed: str) -> None:
    table = _table(name)
    edit(table)
    assert_refused(AgentsConfig, {name: table}, name, allowed)


def test_default_format_tables_are_consistent() -> None:
    config = AgentsConfig()
    assert set(config.format_archetype_bias) == set(POST_FORMATS)
    for archetype in ARCHETYPES:
        for fmt in config.archetype_preferred_formats[archetype]:
            assert archetype in config.format_archetype_bias[fmt]
        for fmt in config.archetype_disliked_formats[archetype]:
            assert archetype not in config.format_archetype_bias[fmt]
    # Every archetype is favoured by some format, so REQ-RERANK-4's boost can reach each one.
    assert {a for archs in config.format_archetype_bias.values() for a in archs} == set(ARCHETYPES)


def test_interest_count_probabilities_are_normalised() -> None:
    assert AgentsConfig(interest_count_weights=(1, 1, 2)).interest_count_probabilities() == (0.25, 0.25, 0.5)


# --- SocialAgent ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"interests": []}, "interests"),
        ({"interests": ["a", "b", "c", "d"]}, "interests"),
        ({"interests": ["a", "a"]}, "interests"),
        ({"activity": 1.5}, "activity"),
        ({"post_rate": -0.1}, "post_rate"),
        ({"like_bias": float("nan")}, "like_bias"),
        ({"archetype_weights": {"analyst": 0.5, "skeptic": 0.4}}, "archetype_weights"),
        ({"archetype_weights": {"analyst": 1.5, "skeptic": -0.5}}, "archetype_weights"),
        ({"archetype_weights": {"wizard": 1.0}}, "archetype_weights"),
        ({"id": ""}, "id"),
        ({"karma": 3}, "karma"),
    ],
)
def test_bad_agent_fields_are_rejected(fields: dict, field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        SocialAgent(**{"id": "a", "interests": ["music"], **fields})


def test_agent_archetype_weights_are_completed_in_archetype_order() -> None:
    agent = SocialAgent(id="a", interests=["music"], archetype_weights={"skeptic": 0.25, "analyst": 0.75})
    assert list(agent.archetype_weights) == list(ARCHETYPES)
    assert agent.archetype_vector() == [0.75, 0.0, 0.25, 0.0, 0.0]


# --- generation -----------------------------------------------------------------------------


def test_population_is_deterministic_in_the_seed() -> None:
    config = AgentsConfig(n_agents=50)
    assert generate_population(config, TOPICS, 3) == generate_population(config, TOPICS, 3)
    assert generate_population(config, TOPICS, 3) != generate_population(config, TOPICS, 4)


def test_seed_sequence_is_accepted_and_not_mutated() -> None:
    config = AgentsConfig(n_agents=20)
    sequence = np.random.SeedSequence(99)
    first = generate_population(config, TOPICS, sequence)
    assert sequence.n_children_spawned == 0
    assert generate_population(config, TOPICS, sequence) == first
    assert generate_population(config, TOPICS, 99) == first


def test_each_attribute_has_its_own_stream() -> None:
    """Common random numbers: changing archetype concentration leaves interests and activity alone."""
    base = generate_population(AgentsConfig(n_agents=40), TOPICS, 5)
    other = generate_population(AgentsConfig(n_agents=40, archetype_concentration=3.0), TOPICS, 5)
    assert [a.interests for a in base] == [a.interests for a in other]
    assert [a.activity for a in base] == [a.activity for a in other]
    assert [a.archetype_weights for a in base] != [a.archetype_weights for a in other]


def test_bad_seed_and_topics_are_rejected() -> None:
    with pytest.raises(ValueError, match="seed"):
        generate_population(AgentsConfig(n_agents=3), TOPICS, -1)
    with pytest.raises(ValueError, match="topics"):
        generate_population(AgentsConfig(n_agents=3), ["music", "music"], 1)
    with pytest.raises(ValueError, match="topics"):
        generate_population(AgentsConfig(n_agents=3), [], 1)


def test_agent_ids_are_zero_padded_to_at_least_four_digits() -> None:
    assert agent_ids(3) == ["agent_0000", "agent_0001", "agent_0002"]
    assert agent_ids(10_001)[-1] == "agent_10000"
    assert agent_ids(10_001)[0] == "agent_00000"
    agents = generate_population(AgentsConfig(n_agents=12), TOPICS, 0)
    assert [a.id for a in agents] == agent_ids(12)
    assert all(a.following == set() for a in agents)


def test_interests_are_one_to_three_distinct_known_topics(big_population: list[SocialAgent]) -> None:
    counts = np.array([len(a.interests) for a in big_population])
    assert set(counts) == {1, 2, 3}
    assert all(len(set(a.interests)) == len(a.interests) for a in big_population)
    assert {t for a in big_population for t in a.interests} <= set(TOPICS)
    shares = np.bincount(counts, minlength=4)[1:] / counts.size
    np.testing.assert_allclose(shares, AgentsConfig().interest_count_probabilities(), atol=0.025)


def test_single_interest_follows_the_zipf_popularity(big_population: list[SocialAgent]) -> None:
    singles = [a.interests[0] for a in big_population if len(a.interests) == 1]
    observed = np.array([singles.count(t) for t in TOPICS]) / len(singles)
    expected = (np.arange(1, 13) ** -0.8) / (np.arange(1, 13) ** -0.8).sum()
    np.testing.assert_allclose(topic_popularity(12, 0.8), expected)
    np.testing.assert_allclose(observed, expected, atol=0.03)
    assert observed[0] > 4 * observed[-1]


def test_zero_exponent_gives_uniform_topics() -> None:
    agents = generate_population(AgentsConfig(n_agents=3000, topic_popularity_exponent=0.0), TOPICS, 2)
    topic_counts = np.array([sum(t in a.interests for a in agents) for t in TOPICS])
    assert topic_counts.max() / topic_counts.min() < 1.3


def test_fewer_topics_than_three_caps_the_interest_count() -> None:
    agents = generate_population(AgentsConfig(n_agents=200), ["music", "food"], 1)
    assert {len(a.interests) for a in agents} == {1, 2}
    with pytest.raises(ValueError, match="interest_count_weights"):
        generate_population(AgentsConfig(n_agents=5, interest_count_weights=(0, 0, 1)), ["music"], 1)


def test_activity_is_heavy_tailed_and_clipped(big_population: list[SocialAgent]) -> None:
    activity = np.array([a.activity for a in big_population])
    median = np.median(activity)
    assert activity.min() >= 0.01 and activity.max() <= 1.0
    assert median == pytest.approx(0.1, rel=0.08)
    assert activity.mean() > 1.3 * median
    assert activity.max() / median > 8
    # Top 10% of agents carry a disproportionate share of activity (participation inequality).
    top_decile_share = np.sort(activity)[-len(activity) // 10 :].sum() / activity.sum()
    assert top_decile_share > 0.3


def test_zero_sigma_gives_everyone_the_median_activity() -> None:
    agents = generate_population(AgentsConfig(n_agents=30, activity_sigma=0.0, activity_median=0.2), TOPICS, 1)
    assert {a.activity for a in agents} == {0.2}


def test_post_rate_follows_its_beta(big_population: list[SocialAgent]) -> None:
    post_rate = np.array([a.post_rate for a in big_population])
    assert post_rate.mean() == pytest.approx(0.8 / 4.8, abs=0.01)
    assert np.median(post_rate) < post_rate.mean()


def test_propensities_have_the_configured_spread_and_correlation(big_population: list[SocialAgent]) -> None:
    biases = np.array([[a.like_bias, a.reshare_bias, a.reply_bias] for a in big_population])
    np.testing.assert_allclose(biases.std(axis=0), 0.5, rtol=0.05)
    np.testing.assert_allclose(biases.mean(axis=0), 0.0, atol=0.03)
    correlation = np.corrcoef(biases.T)[np.triu_indices(3, 1)]
    np.testing.assert_allclose(correlation, 0.5, atol=0.05)


def test_archetype_weights_are_distributions_with_configured_concentration(
    big_population: list[SocialAgent],
) -> None:
    weights = archetype_matrix(big_population)
    assert weights.shape == (6000, 5)
    assert (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(weights.mean(axis=0), 0.2, atol=0.015)
    # Symmetric Dirichlet(alpha): Var(w_k) = (1/K)(1 - 1/K) / (K alpha + 1); K = 5, alpha = 0.5 -> 0.16 / 3.5.
    np.testing.assert_allclose(weights.var(axis=0), 0.16 / 3.5, rtol=0.1)
    spread = generate_population(AgentsConfig(n_agents=2000, archetype_concentration=20.0), TOPICS, 7)
    assert archetype_matrix(spread).max(axis=1).mean() < weights.max(axis=1).mean() - 0.2


def test_ten_thousand_agents_are_generated() -> None:
    agents = generate_population(AgentsConfig(n_agents=10_000), TOPICS, 11)
    assert len({a.id for a in agents}) == 10_000
    assert agents[-1].id == "agent_9999"
    assert math.isclose(sum(agents[123].archetype_weights.values()), 1.0, abs_tol=1e-9)


def test_reply_talkativeness_offset_is_the_log_post_rate_ratio_times_the_elasticity() -> None:
    # Beta(1, 4): mean post rate 0.2; an agent at 0.4 gets 1.5 * log 2 on its reply logit, one at 0.1 -1.5 * log 2
    config = AgentsConfig(post_rate_alpha=1.0, post_rate_beta=4.0, reply_post_rate_elasticity=1.5)
    offsets = reply_talkativeness_offset(np.array([0.4, 0.2, 0.1, 0.0]), config)
    assert offsets[:3] == pytest.approx([1.5 * math.log(2), 0.0, -1.5 * math.log(2)])
    assert np.isfinite(offsets[3]) and offsets[3] < -900  # a post rate of 0: never -inf


def test_replies_follow_the_post_rate_only_when_the_elasticity_is_set() -> None:
    topics = ["a", "b", "c"]
    plain = generate_population(AgentsConfig(n_agents=50), topics, 3)
    coupled = generate_population(AgentsConfig(n_agents=50, reply_post_rate_elasticity=1.0), topics, 3)
    assert [a.like_bias for a in plain] == [a.like_bias for a in coupled]
    assert [a.post_rate for a in plain] == [a.post_rate for a in coupled]
    mean = 0.8 / (0.8 + 4.0)
    expected = [a.reply_bias + math.log(a.post_rate / mean) for a in plain]
    assert [a.reply_bias for a in coupled] == pytest.approx(expected)
