"""Stochastic serving policies: Plackett-Luce and epsilon-greedy slates, their exact and position propensities."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from prism_experiments.ranking.serving_policy import (
    TIE_BREAK,
    PolicySpec,
    conditional_probabilities,
    position_marginals,
    sample_slates,
    serving_scores,
)

SCORES = serving_scores(np.array([0.9, 0.7, 0.65, 0.3, 0.1]))
POLICIES = [PolicySpec("softmax", temperature=0.7), PolicySpec("epsilon_greedy", epsilon=0.3)]


def exact_marginals(spec: PolicySpec, scores: np.ndarray, k: int) -> np.ndarray:
    """P(candidate at position) by enumerating every slate and multiplying its chain-rule factors."""
    out = np.zeros((len(scores), k))
    for slate in itertools.permutations(range(len(scores)), k):
        probability = np.prod(conditional_probabilities(spec, scores, np.array(slate)))
        out[list(slate), np.arange(k)] += probability
    return out


@pytest.mark.parametrize("spec", POLICIES, ids=lambda s: s.policy)
def test_conditional_propensities_sum_to_one_over_the_remaining_candidates(spec: PolicySpec) -> None:
    prefix = [2, 0]
    remaining = [i for i in range(len(SCORES)) if i not in prefix]
    last = [conditional_probabilities(spec, SCORES, np.array([*prefix, i]))[-1] for i in remaining]
    assert sum(last) == pytest.approx(1.0, abs=1e-12)
    assert min(last) > 0


@pytest.mark.parametrize("spec", POLICIES, ids=lambda s: s.policy)
def test_position_propensities_sum_to_one_over_the_candidates_of_a_position(spec: PolicySpec) -> None:
    exact = exact_marginals(spec, SCORES, 3)
    np.testing.assert_allclose(exact.sum(axis=0), 1.0, atol=1e-12)
    estimated = position_marginals(sample_slates(spec, SCORES, 3, np.random.default_rng(1), 20_000), len(SCORES))
    np.testing.assert_allclose(estimated.sum(axis=0), 1.0, atol=1e-12)
    # the sampler draws from the distribution whose factors conditional_probabilities reports
    np.testing.assert_allclose(estimated, exact, atol=0.015)


def test_plackett_luce_first_position_is_the_softmax() -> None:
    spec = PolicySpec("softmax", temperature=0.5)
    softmax = np.exp(SCORES / 0.5) / np.exp(SCORES / 0.5).sum()
    np.testing.assert_allclose(exact_marginals(spec, SCORES, 1)[:, 0], softmax, rtol=1e-12)


def test_a_slate_is_drawn_without_replacement() -> None:
    slates = sample_slates(PolicySpec("softmax", temperature=5.0), SCORES, 4, np.random.default_rng(0), 500)
    assert all(len(set(row)) == 4 for row in slates.tolist())


@pytest.mark.parametrize(
    "final",
    [
        [0.9, 0.7, 0.65, 0.3, 0.1],
        [0.5, 0.5, 0.5, 0.2, 0.2],  # ties (equal timestamps, cold-start weights)
        [0.8, 0.3, 0.5, 0.5, 0.4],  # not sorted by score (engagement_recency's filler after ranked posts)
    ],
)
def test_temperature_to_zero_is_the_modes_order(final: list[float]) -> None:
    scores = serving_scores(np.array(final))
    slates = sample_slates(PolicySpec("softmax", temperature=1e-13), scores, 4, np.random.default_rng(3), 200)
    assert (slates == np.arange(4)).all()
    np.testing.assert_allclose(conditional_probabilities(PolicySpec("softmax", 1e-13), scores, np.arange(4)), 1.0)


def test_epsilon_zero_and_deterministic_policy_give_the_modes_order_with_propensity_one() -> None:
    for spec in (PolicySpec("epsilon_greedy", epsilon=0.0), PolicySpec("deterministic")):
        slates = sample_slates(spec, SCORES, 3, np.random.default_rng(0), 50)
        assert (slates == np.arange(3)).all()
        np.testing.assert_array_equal(conditional_probabilities(spec, SCORES, np.arange(3)), 1.0)


def test_serving_scores_are_standardised_running_minima_in_the_modes_order() -> None:
    scores = serving_scores(np.array([4.0, 2.0, 3.0, 0.0]))
    running_min = np.array([4.0, 2.0, 2.0, 0.0])
    expected = (running_min - running_min.mean()) / running_min.std() - TIE_BREAK * np.arange(4)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-15)
    assert np.all(np.diff(scores) < 0)
    np.testing.assert_allclose(serving_scores(np.full(3, 7.0)), -TIE_BREAK * np.arange(3))
