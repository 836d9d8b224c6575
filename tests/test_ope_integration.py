"""Stochastic serving and OPE on the real stack (Chroma, all-MiniLM-L6-v2), at smoke size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.domain import EXPOSURES_COLUMNS, FEED_KEYS
from prism_experiments.metrics import summarize
from prism_experiments.ope import impression_rewards, ope_inputs
from prism_experiments.ope.validation import validate_seed
from prism_experiments.simulation import run_simulation

pytestmark = pytest.mark.integration

TARGETS = [
    {"name": "same"},
    {"name": "sharper", "temperature": 0.5},
    {"name": "chrono", "policy": "deterministic", "ranking": {"mode": "chronological"}},
]


def smoke(cache: Path, seed: int = 1, **extra: object) -> ExperimentConfig:
    """experiment=smoke's sizes."""
    return ExperimentConfig.from_mapping(
        {
            "seed": seed,
            "agents": {"n_agents": 30},
            "network": {"mean_out_degree": 6},
            "corpus": {"n_posts": 300, "span_hours": 24},
            "simulation": {"n_steps": 6, "show_progress": False},
            "rag": {"cache_dir": str(cache)},
            "paths": {"runs_dir": str(cache.parent / "runs")},
            **extra,
        }
    )


@pytest.fixture(scope="module")
def deterministic(session_cache_dir: Path):
    return run_simulation(smoke(session_cache_dir))


@pytest.fixture(scope="module")
def logged(session_cache_dir: Path):
    return run_simulation(smoke(session_cache_dir, serving={"policy": "softmax", "targets": TARGETS}))


def test_deterministic_serving_logs_no_propensities(deterministic) -> None:
    assert list(deterministic.exposures.columns[: len(EXPOSURES_COLUMNS)]) == list(EXPOSURES_COLUMNS)
    assert not {"propensity", "propensity_conditional"} & set(deterministic.exposures.columns)
    assert deterministic.serving_candidates.empty


def test_temperature_to_zero_reproduces_the_deterministic_feed_exactly(session_cache_dir: Path, deterministic) -> None:
    cold = run_simulation(smoke(session_cache_dir, serving={"policy": "softmax", "temperature": 1e-12}))
    shared = list(deterministic.exposures.columns)
    pd.testing.assert_frame_equal(cold.exposures[shared], deterministic.exposures)
    assert summarize(cold) == summarize(deterministic)
    assert (cold.exposures["propensity_conditional"] == 1.0).all()


@pytest.mark.parametrize("mode", ["chronological", "engagement_recency"])  # ties; scores not sorted (filler)
def test_temperature_to_zero_keeps_the_feeds_of_modes_with_ties_and_unsorted_scores(
    session_cache_dir: Path, mode: str
) -> None:
    keys = [*FEED_KEYS, "post_id", "position"]
    plain = run_simulation(smoke(session_cache_dir, ranking={"mode": mode}))
    cold = run_simulation(smoke(session_cache_dir, ranking={"mode": mode}, serving={"temperature": 1e-12}))
    pd.testing.assert_frame_equal(cold.exposures[keys], plain.exposures[keys])


def test_position_propensities_sum_to_one_over_the_candidates_of_each_position(logged) -> None:
    cells = logged.serving_candidates
    for column in ("propensity", "target_same", "target_sharper", "target_chrono"):
        sums = cells.groupby([*FEED_KEYS, "position"])[column].sum()
        np.testing.assert_allclose(sums.to_numpy(), 1.0, atol=1e-9, err_msg=column)
    exposures = logged.exposures
    assert (exposures["propensity"] > 0).all() and (exposures["propensity"] <= 1).all()
    assert (exposures["propensity_conditional"] > 0).all()
    # a logged exposure's propensity is its cell's in the candidates table
    joined = exposures.merge(cells, on=[*FEED_KEYS, "post_id", "position"], suffixes=("", "_cell"))
    assert len(joined) == len(exposures)
    np.testing.assert_array_equal(joined["propensity"], joined["propensity_cell"])


def test_serving_draws_nothing_from_shared_streams_and_is_reproducible(session_cache_dir: Path, logged) -> None:
    again = run_simulation(smoke(session_cache_dir, serving={"policy": "softmax", "targets": TARGETS}))
    pd.testing.assert_frame_equal(again.exposures, logged.exposures)
    # the targets' shadow rankers change nothing the served policy does
    alone = run_simulation(smoke(session_cache_dir, serving={"policy": "softmax"}))
    shared = list(alone.exposures.columns)
    pd.testing.assert_frame_equal(logged.exposures[shared], alone.exposures)


def test_ips_where_the_target_is_the_logging_policy_returns_the_logged_rate(logged) -> None:
    inputs = ope_inputs(logged.exposures, logged.engagements, logged.serving_candidates, "same")
    assert (inputs.weight == 1.0).all()
    estimates = inputs.estimates(200)
    rate = summarize(logged)["engagement_rate"]
    assert impression_rewards(logged.exposures, logged.engagements).mean() == rate
    assert estimates["ips"].value == rate and estimates["snips"].value == rate


def test_estimates_cover_the_on_policy_truth_of_a_supported_target(session_cache_dir: Path) -> None:
    cfg = smoke(
        session_cache_dir, seed=1, serving={"policy": "softmax", "targets": [{"name": "sharper", "temperature": 0.5}]}
    )
    (row,) = validate_seed(cfg, n_boot=500)
    assert row.unsupported == 0.0
    assert row.truth != row.logged  # B's own run differs from A's: the check is not vacuous
    for name in ("ips", "snips", "dr"):
        estimate = row.estimates[name]
        assert estimate.covers(row.truth), (name, estimate, row.truth)
        assert estimate.high - estimate.low < 0.15


def test_a_target_with_another_mode_puts_mass_outside_the_logged_candidates(logged) -> None:
    cells = logged.serving_candidates
    outside = cells.loc[cells["propensity"] == 0, "target_chrono"].sum() / cells["target_chrono"].sum()
    assert outside > 0  # chronological's feed is not within x_algo's top `depth`: no estimator sees that mass


@pytest.mark.parametrize(
    ("serving", "message"),
    [
        ({"depth": 5}, "serving.depth: must be >= rag.feed_size (10)"),
        ({"policy": "thompson"}, "serving.policy: Input should be 'deterministic', 'softmax' or 'epsilon_greedy'"),
        ({"temperature": 0}, "serving.temperature: Input should be greater than 0"),
        ({"targets": [{"name": "a"}, {"name": "a"}]}, "serving.targets: names must be unique"),
        (
            {"targets": [{"name": "b", "ranking": {"mode": "engagement", "predictor": "learned"}}]},
            "serving.targets.0.ranking: a target's ranker must not learn",
        ),
    ],
)
def test_bad_serving_config_is_one_line_naming_the_field(tmp_path: Path, serving: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        smoke(tmp_path, serving=serving)
    assert message in str(error.value) and "\n" not in str(error.value)
