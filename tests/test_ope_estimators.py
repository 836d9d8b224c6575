"""OPE estimators on synthetic logs whose target value is known exactly (item-position model)."""

from __future__ import annotations

import numpy as np
import pytest

from prism_experiments.ope.estimators import bootstrap_estimates, doubly_robust, importance_weights, ips, snips
from prism_experiments.ranking.serving_policy import PolicySpec, position_marginals, sample_slates

N_ITEMS, K = 6, 3
ATTENTION = np.array([0.9, 0.6, 0.4])
ATTRACT = np.array([0.5, 0.4, 0.3, 0.2, 0.15, 0.1])
LOGGING, TARGET = PolicySpec("softmax", temperature=1.0), PolicySpec("softmax", temperature=0.4)
SCORES = np.linspace(1.5, -1.5, N_ITEMS)


def marginals(spec: PolicySpec) -> np.ndarray:
    return position_marginals(sample_slates(spec, SCORES, K, np.random.default_rng(99), 100_000), N_ITEMS)


P_LOG, P_TARGET = marginals(LOGGING), marginals(TARGET)
EXPECTED = ATTRACT[:, None] * ATTENTION[None, :]  # E[reward | item at position]
TRUTH = float((P_TARGET * EXPECTED).sum() / K)  # the target's engagement per impression


def logged_feeds(n_feeds: int, seed: int) -> dict[str, np.ndarray]:
    """n feeds served by the logging policy, one row per impression, rewards from the position-based model."""
    rng = np.random.default_rng(seed)
    slates = sample_slates(LOGGING, SCORES, K, rng, n_feeds)
    items, positions = slates.reshape(-1), np.tile(np.arange(K), n_feeds)
    return {
        "groups": np.repeat(np.arange(n_feeds), K),
        "items": items,
        "positions": positions,
        "reward": (rng.random(len(items)) < EXPECTED[items, positions]).astype(float),
        "weight": importance_weights(P_TARGET[items, positions], P_LOG[items, positions]),
    }


def test_weights_of_the_logging_policy_itself_are_one_and_ips_is_the_logged_mean() -> None:
    data = logged_feeds(200, 0)
    weight = importance_weights(P_LOG[data["items"], data["positions"]], P_LOG[data["items"], data["positions"]])
    assert (weight == 1.0).all()
    assert ips(data["reward"], weight) == data["reward"].mean()
    assert snips(data["reward"], weight) == data["reward"].mean()


def test_a_logged_impression_without_propensity_is_refused() -> None:
    with pytest.raises(ValueError, match="propensity"):
        importance_weights(np.array([0.5]), np.array([0.0]))


def test_ips_snips_and_dr_are_close_to_the_targets_value_and_far_from_the_logged_one() -> None:
    data = logged_feeds(40_000, 1)
    logged_value = data["reward"].mean()
    assert abs(logged_value - TRUTH) > 0.02  # the target differs: an estimator returning the logged mean fails
    biased_q = 0.5 * EXPECTED  # a wrong direct model: DR must still be right (its IPS correction)
    predicted = biased_q[data["items"], data["positions"]]
    direct = (P_TARGET * biased_q).sum(axis=0)[data["positions"]]
    for value in (
        ips(data["reward"], data["weight"]),
        snips(data["reward"], data["weight"]),
        doubly_robust(data["reward"], data["weight"], predicted, direct),
    ):
        assert value == pytest.approx(TRUTH, abs=0.004)


def test_dr_with_the_true_reward_model_has_a_narrower_interval_than_ips() -> None:
    data = logged_feeds(3_000, 2)
    predicted = EXPECTED[data["items"], data["positions"]]
    direct = (P_TARGET * EXPECTED).sum(axis=0)[data["positions"]]
    estimates = bootstrap_estimates(data["groups"], data["reward"], data["weight"], predicted, direct, 500, seed=0)
    width = {name: e.high - e.low for name, e in estimates.items()}
    assert width["dr"] < width["ips"]
    for estimate in estimates.values():
        assert estimate.low <= estimate.value <= estimate.high
        assert estimate.covers(TRUTH)


def test_bootstrap_is_seeded_and_resamples_whole_feeds() -> None:
    data = logged_feeds(300, 3)
    args = (
        data["groups"],
        data["reward"],
        data["weight"],
        np.zeros(len(data["reward"])),
        np.zeros(len(data["reward"])),
    )
    assert bootstrap_estimates(*args, 200, seed=5) == bootstrap_estimates(*args, 200, seed=5)
    assert bootstrap_estimates(*args, 200, seed=5) != bootstrap_estimates(*args, 200, seed=6)
    # one feed holding every impression: every resample is that feed, so the interval collapses to the point
    single = bootstrap_estimates(np.zeros(len(data["reward"])), *args[1:], 50, seed=0)["ips"]
    assert single.low == pytest.approx(single.value) and single.high == pytest.approx(single.value)
