"""The engagement mode: X's weighted scorer by hand, the oracle against the behaviour model, the learned
predictor's feedback loop on a real small run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.agents import AgentsConfig, engagement_probabilities, format_affinity_for
from prism_experiments.ranking.engagement_prediction import (
    FEATURE_NAMES,
    LearnedEngagementModel,
    candidate_features,
    oracle_probabilities,
    predictor_quality,
    weighted_engagement_score,
)
from prism_experiments.ranking.modes.engagement import EngagementConfig
from prism_experiments.ranking.rescoring import x_algo_scores


def test_weighted_score_then_oon_and_author_diversity_by_hand() -> None:
    # three candidates; P(like, reshare, reply, follow); X's weights 0.5, 1, 13.5, 12
    p = np.array([[0.2, 0.1, 0.01, 0.0], [0.4, 0.0, 0.02, 0.01], [0.1, 0.05, 0.03, 0.02]])
    score = weighted_engagement_score(p, (0.5, 1.0, 13.5, 12.0))
    by_hand = [
        0.5 * 0.2 + 1 * 0.1 + 13.5 * 0.01,
        0.5 * 0.4 + 13.5 * 0.02 + 12 * 0.01,
        0.5 * 0.1 + 1 * 0.05 + 13.5 * 0.03 + 12 * 0.02,
    ]
    assert score == pytest.approx(by_hand)
    # candidate 1 is out of network (x 0.75); candidates 0 and 2 share an author (second one x 0.5)
    final, parts = x_algo_scores(
        score,
        np.array([False, True, False]),
        np.zeros(3, bool),
        ["a", "b", "a"],
        np.arange(3),
        oon_scale=0.75,
        reply_scale=0.75,
        decay=0.5,
        floor=0.25,
        formula="spec",
    )
    # rescored: 0.335, 0.4425, 0.745 -> author a first seen at candidate 2 (0.745), then candidate 0 x 0.5
    assert final == pytest.approx([0.335 * 0.5, 0.59 * 0.75, 0.745])
    assert parts["author_diversity"].tolist() == [0.5, 1.0, 1.0]


def test_default_weights_are_xs_published_recap_weights() -> None:
    cfg = EngagementConfig()
    assert (cfg.like_weight, cfg.reshare_weight, cfg.reply_weight, cfg.follow_weight) == (0.5, 1.0, 13.5, 12.0)
    assert cfg.out_of_network_scale == 0.75 and cfg.predictor == "oracle"


def test_oracle_is_the_behaviour_models_probability_for_that_agent_and_post() -> None:
    agents = AgentsConfig()
    sim, media, likes, inn = np.array([0.8, 0.6]), np.array([True, False]), np.array([3, 0]), np.array([True, False])
    biases, formats = (0.3, -0.2, 0.1), ["list", "question"]
    archetypes = [0.6, 0.0, 0.0, 0.4, 0.0]  # ARCHETYPES order: analyst, ..., enthusiast
    oracle = oracle_probabilities(sim, media, likes, inn, np.array([True, False]), biases, archetypes, formats, agents)
    affinity = format_affinity_for(agents, np.tile(archetypes, (2, 1)), formats)
    direct = engagement_probabilities(sim, media, likes, inn, *biases, agents.behaviour, format_affinity=affinity)
    assert oracle[:, 0] == pytest.approx(direct["like"]) and oracle[:, 2] == pytest.approx(direct["reply"])
    engaged = 1 - (1 - direct["like"][1]) * (1 - direct["reshare"][1]) * (1 - direct["reply"][1])
    assert oracle[0, 3] == 0.0, "no follow of an author already followed"
    assert oracle[1, 3] == pytest.approx(agents.behaviour.follow_probability * engaged)


def test_features_are_log_counts_and_a_format_one_hot() -> None:
    x = candidate_features(
        np.array([0.5]),
        np.array([True]),
        np.array([False]),
        np.array([2.0]),
        np.array([3]),
        np.array([0]),
        np.array([7]),
        ["list"],
    )
    row = dict(zip(FEATURE_NAMES, x[0]))
    assert row["log1p_likes"] == pytest.approx(np.log(4)) and row["log1p_author_followers"] == pytest.approx(np.log(8))
    assert row["format_list"] == 1.0 and sum(v for k, v in row.items() if k.startswith("format_")) == 1.0


def test_learned_model_recovers_a_signal_and_keeps_the_prior_for_actions_without_both_classes() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 3))
    like = rng.random(4000) < 1 / (1 + np.exp(-(2 * x[:, 0] - 2)))
    labels = np.column_stack([like, np.zeros(4000, bool), np.zeros(4000, bool), np.zeros(4000, bool)])
    model = LearnedEngagementModel()
    model.add(x[:3000], labels[:3000])
    model.fit()
    prior = np.full((1000, 4), 0.123)
    predicted = model.predict(x[3000:], prior)
    assert predictor_quality(predicted[:, 0], like[3000:])["auc"] > 0.75
    assert (predicted[:, 1:] == 0.123).all(), "no model for an action never observed"


def test_predictor_quality_by_hand() -> None:
    quality = predictor_quality(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
    assert quality["auc"] == pytest.approx(0.75)
    assert quality["calibration"] == pytest.approx(np.mean([0.1, 0.4, 0.35, 0.8]) / 0.5)
    assert np.isnan(predictor_quality(np.array([0.2, 0.3]), np.array([0, 0]))["auc"])


def simulate(tmp_path: Path, cache_dir: Path, *overrides: str):
    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation import run_simulation

    return run_simulation(
        compose_experiment(
            [
                f"paths.runs_dir={tmp_path}",
                f"rag.cache_dir={cache_dir}",
                "experiment=smoke",
                "simulation.show_progress=false",
                *overrides,
            ]
        )
    )


def served_log_loss(result, action: str = "like") -> tuple[float, float]:
    """Log-loss on each step's impressions of the model's served predictions (trained on earlier steps only)
    and of a constant predictor at the rate of the earlier steps; steps 3 on."""
    exposures = result.exposures[["step", "agent_id", "post_id", f"comp_p_{action}"]]
    done = result.engagements[result.engagements["action"] == action][["step", "agent_id", "post_id"]]
    done = done.drop_duplicates().assign(label=1)
    rows = exposures.merge(done, on=["step", "agent_id", "post_id"], how="left").fillna({"label": 0})
    model_losses, constant_losses = [], []
    for step in sorted(rows["step"].unique()):
        if step < 3:
            continue
        now, before = rows[rows["step"] == step], rows[rows["step"] < step]
        rate = float(np.clip(before["label"].mean(), 1e-6, 1 - 1e-6))
        p = np.clip(now[f"comp_p_{action}"].to_numpy(float), 1e-6, 1 - 1e-6)
        y = now["label"].to_numpy(float)
        model_losses.append(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
        constant_losses.append(-np.mean(y * np.log(rate) + (1 - y) * np.log(1 - rate)))
    return float(np.mean(model_losses)), float(np.mean(constant_losses))


@pytest.mark.integration
def test_learned_predictor_beats_a_constant_on_held_out_impressions_and_is_deterministic(
    tmp_path: Path, session_cache_dir: Path
) -> None:
    # world=uncalibrated: the predictor needs the impressions of the models' default activity. In the calibrated
    # world x2023 (median activity 0.024 instead of 0.1) 10 steps hold about half as many, and the learned
    # predictor only ties the constant (log-loss 0.2633 against 0.2626, seed 0). Texts composed afresh: with
    # the default pooled texts many posts share a vector, and at 10 steps it ties too (0.2465 against 0.2456;
    # docs/ranking.md)
    args = (
        "world=uncalibrated",
        "corpus.text_pool_size=0",
        "ranking=engagement",
        "ranking.predictor=learned",
        "simulation.n_steps=10",
        "agents.n_agents=200",
    )
    first = simulate(tmp_path, session_cache_dir, *args)
    model_loss, constant_loss = served_log_loss(first)
    assert model_loss < constant_loss, (model_loss, constant_loss)
    assert set(first.ranker_series) >= {"predictor_auc_like", "predictor_calibration_like"}
    assert set(first.ranker_series["predictor_auc_like"]) <= set(range(1, 10)), "from the first refit on"
    again = simulate(tmp_path, session_cache_dir, *args)
    pd.testing.assert_frame_equal(first.exposures, again.exposures, check_exact=True)
    pd.testing.assert_frame_equal(
        pd.DataFrame(first.ranker_series), pd.DataFrame(again.ranker_series), check_exact=True
    )


@pytest.mark.integration
def test_oracle_serves_more_engagement_than_x_algo_on_the_same_world(tmp_path: Path, session_cache_dir: Path) -> None:
    """Same seed, same candidates: ordering by the true engagement probabilities must raise engagement."""
    from prism_experiments.metrics import summarize

    oracle = summarize(simulate(tmp_path, session_cache_dir, "ranking=engagement", "seed=0"))
    similarity = summarize(simulate(tmp_path, session_cache_dir, "ranking=x_algo", "seed=0"))
    assert oracle["engagement_rate"] > similarity["engagement_rate"]
