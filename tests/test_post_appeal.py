"""Post appeal (corpus.appeal): a keyed lognormal per post on its own stream, added to the engagement logits."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats
from test_decisions import FEED, N_AGENTS, impressions

from prism_experiments.agents import ARCHETYPES, AgentsConfig
from prism_experiments.corpus.appeal import (
    WU_HUBERMAN_2007_SIGMA,
    PostAppeal,
    PostAppealConfig,
    log_appeal,
    standard_normal_by_post,
)
from prism_experiments.deciders import rule_decisions
from prism_experiments.random_streams import Stream, keyed_uniforms

LOGNORMAL = PostAppealConfig(distribution="lognormal")
IDS = [f"s{step:04d}-agent_{agent:05d}" for step in range(20) for agent in range(1000)]


def test_log_appeal_is_normal_with_the_configured_sigma() -> None:
    values = log_appeal(0, IDS, LOGNORMAL)
    n = len(values)
    assert abs(values.mean()) < 4 * WU_HUBERMAN_2007_SIGMA / np.sqrt(n)
    assert values.std() == pytest.approx(WU_HUBERMAN_2007_SIGMA, rel=0.03)
    assert stats.kstest(values / WU_HUBERMAN_2007_SIGMA, "norm").pvalue > 0.01
    # the odds multiplier exp(a) is lognormal with median 1
    assert np.median(np.exp(values)) == pytest.approx(1.0, abs=0.03)
    assert np.all(np.isfinite(values))


def test_sigma_scales_the_same_draws() -> None:
    wide = log_appeal(0, IDS[:50], PostAppealConfig(distribution="lognormal", sigma=2.0))
    np.testing.assert_allclose(wide, 2.0 * standard_normal_by_post(0, IDS[:50]))


def test_a_posts_appeal_is_fixed_by_seed_and_id_whatever_else_is_drawn() -> None:
    alone = log_appeal(3, IDS[7:8], LOGNORMAL)
    among_others = log_appeal(3, list(reversed(IDS[:100])), LOGNORMAL)
    assert among_others[100 - 1 - 7] == alone[0]
    np.testing.assert_array_equal(log_appeal(3, IDS[:100], LOGNORMAL), log_appeal(3, IDS[:100], LOGNORMAL))
    assert not np.array_equal(log_appeal(3, IDS[:100], LOGNORMAL), log_appeal(4, IDS[:100], LOGNORMAL))


def test_appeal_has_its_own_stream() -> None:
    assert Stream.APPEAL.name == "APPEAL", "a value shared with another stream would make APPEAL its alias"
    keys = np.arange(1000, dtype=np.uint64)
    appeal = keyed_uniforms(0, Stream.APPEAL, 0, keys, np.zeros(1, dtype=np.uint64))[:, 0]
    behaviour = keyed_uniforms(0, Stream.BEHAVIOUR, 0, keys, np.zeros(1, dtype=np.uint64))[:, 0]
    assert abs(stats.pearsonr(appeal, behaviour).statistic) < 0.1


def test_off_is_no_term_and_the_cache_repeats_the_draws() -> None:
    assert PostAppeal(0, PostAppealConfig()).of(IDS[:3]) is None
    np.testing.assert_array_equal(log_appeal(0, IDS[:3], PostAppealConfig()), np.zeros(3))
    cached = PostAppeal(0, LOGNORMAL)
    first = cached.of(["b", "a", "b"])
    assert first is not None and first[0] == first[2]
    np.testing.assert_array_equal(first, log_appeal(0, ["b", "a", "b"], LOGNORMAL))
    np.testing.assert_array_equal(cached.of(["a"]), first[1:2])


@pytest.mark.parametrize("sigma", [0.0, -0.5, 3.01])
def test_sigma_out_of_range_names_the_range(sigma: float) -> None:
    with pytest.raises(ValidationError, match=r"must be in \(0, 3\]"):
        PostAppealConfig(distribution="lognormal", sigma=sigma)


def decide(appeal: np.ndarray | None):
    agents = [0, 1, 2]
    biases = np.full((N_AGENTS, 3), -1.0)
    archetypes = np.full((N_AGENTS, len(ARCHETYPES)), 1.0 / len(ARCHETYPES))
    return rule_decisions(4, 7, np.array(agents), impressions(agents), biases, archetypes, AgentsConfig(), FEED, appeal)


def test_appeal_raises_engagement_on_the_same_coins() -> None:
    """The coins are the behaviour stream's, whatever the appeal: a higher logit can only add engagements."""
    plain, zero = decide(None), decide(np.zeros(FEED * 3))
    boosted = decide(np.full(FEED * 3, 3.0))
    for name in ("liked", "reshared", "replied"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(zero, name))
        assert np.all(getattr(boosted, name) >= getattr(plain, name))
    assert boosted.liked.sum() > plain.liked.sum()
    np.testing.assert_array_equal(decide(np.full(FEED * 3, -30.0)).reshared, np.zeros(FEED * 3, dtype=bool))


def test_the_oracle_knows_each_posts_appeal() -> None:
    """The engagement mode's oracle predicts the rule model's own probabilities: the appeal term included."""
    from prism_experiments.ranking.engagement_prediction import oracle_probabilities

    def predict(appeal: np.ndarray | None) -> np.ndarray:
        return oracle_probabilities(
            np.full(2, 0.6),
            np.zeros(2, dtype=bool),
            np.full(2, 2),
            np.zeros(2, dtype=bool),
            np.zeros(2, dtype=bool),
            (0.0, 0.0, 0.0),
            np.full(len(ARCHETYPES), 1.0 / len(ARCHETYPES)),
            ["list", "list"],
            AgentsConfig(),
            appeal,
        )

    plain, appealing = predict(None), predict(np.array([0.0, 1.0]))
    np.testing.assert_array_equal(plain, predict(np.zeros(2)))
    np.testing.assert_array_equal(appealing[0], plain[0])
    assert np.all(appealing[1, :3] > plain[1, :3])
    # the odds of each action are multiplied by e^1
    odds = lambda p: p / (1 - p)  # noqa: E731
    np.testing.assert_allclose(odds(appealing[1, :3]) / odds(plain[1, :3]), np.e)
