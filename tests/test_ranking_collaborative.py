"""The collaborative mode: Hu et al.'s confidences and least squares by hand, the retraining counter, the cold start,
and the mode on a real store and in a real run (determinism)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.ranking.collaborative_model import EngagementLog, confidence_matrix, fit_factors
from prism_experiments.ranking.feedback import ServedFeedback
from prism_experiments.ranking.modes.collaborative import FACTORS_TABLE, PAIRS_TABLE, CollaborativeConfig


def test_confidence_is_one_plus_alpha_times_the_summed_engagements() -> None:
    # (user 0, item 1) logged twice (1 + 2 engagements), (user 1, item 0) once, a zero count carries no preference
    matrix = confidence_matrix(
        np.array([0, 0, 1, 1]), np.array([1, 1, 0, 1]), np.array([1, 2, 1, 0]), 2, 2, alpha=40.0
    ).toarray()
    assert matrix.tolist() == [[0.0, 1 + 40 * 3], [1 + 40 * 1, 0.0]]


def test_defaults_come_from_the_sources() -> None:
    cfg = CollaborativeConfig()
    assert (cfg.alpha, cfg.regularization, cfg.iterations, cfg.factors) == (40.0, 0.01, 15, 20)
    assert cfg.retrain_every_steps == 6


def test_factors_solve_hu_et_al_least_squares_and_repeat_for_a_seed() -> None:
    rng = np.random.default_rng(3)
    users, items = rng.integers(0, 12, 60), rng.integers(100, 130, 60)
    counts = rng.integers(0, 3, 60)
    ids = [f"u{i}" for i in range(12)]
    kwargs = {"factors": 4, "regularization": 0.1, "alpha": 40.0, "iterations": 5}
    fit = fit_factors(ids, users, items, counts, rng=np.random.default_rng(7), **kwargs)
    again = fit_factors(ids, users, items, counts, rng=np.random.default_rng(7), **kwargs)
    other = fit_factors(ids, users, items, counts, rng=np.random.default_rng(8), **kwargs)
    assert fit is not None and again is not None and other is not None
    assert np.array_equal(fit.users, again.users) and np.array_equal(fit.items, again.items)
    assert not np.array_equal(fit.users, other.users)
    # only users and posts with an engagement get factors
    positive = counts > 0
    assert fit.user_ids == tuple(ids[u] for u in np.unique(users[positive]))
    assert fit.item_rows.tolist() == np.unique(items[positive]).tolist()
    # the last half-sweep solves each item's factors given the users' (Hu et al. 2008, eq. 5 for y_i):
    # y_i = (X^T C^i X + lambda I)^-1 X^T C^i p(i), with c = 1 + alpha * r where r > 0 and c = 1, p = 0 elsewhere
    x = fit.users
    r = np.zeros((len(fit.user_ids), len(fit.item_rows)))
    user_index = {u: k for k, u in enumerate(np.unique(users[positive]))}
    item_index = {i: k for k, i in enumerate(fit.item_rows.tolist())}
    for u, i, n in zip(users[positive], items[positive], counts[positive]):
        r[user_index[u], item_index[i]] += n
    for j in range(3):
        c, p = 1 + 40.0 * r[:, j], (r[:, j] > 0).astype(float)
        y = np.linalg.solve(x.T @ (c[:, None] * x) + 0.1 * np.eye(4), x.T @ (c * p))
        np.testing.assert_allclose(fit.items[j], y, rtol=1e-4, atol=1e-6)
    assert fit_factors(ids, users, items, np.zeros(60), rng=np.random.default_rng(7), **kwargs) is None


def test_the_log_keeps_engaged_impressions_and_numbers_users_as_first_seen() -> None:
    log = EngagementLog()
    log.add(["b", "a", "b"], np.array([5, 6, 7]), np.array([0, 2, 1]))
    log.add(["c"], np.array([5]), np.array([1]))
    users, rows, counts = log.arrays()
    assert log.user_ids == ["a", "b", "c"] and users.tolist() == [0, 1, 2]
    assert rows.tolist() == [6, 7, 5] and counts.tolist() == [2.0, 1.0, 1.0]


# ---------------------------------------------------------------------------------------------- on a real store


@pytest.fixture(scope="module")
def world(embedder):
    from prism_experiments.agents import AgentsConfig, generate_population
    from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus
    from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
    from prism_experiments.network import NetworkConfig, generate_follow_graph, with_following

    corpus = SyntheticCorpusConfig(n_posts=400, span_hours=24)
    agents = generate_population(AgentsConfig(n_agents=12), corpus.topics, seed=3)
    graph = generate_follow_graph(agents, NetworkConfig(mean_out_degree=3, out_degree_sigma=0.3), seed=3)
    agents = with_following(agents, graph)
    retriever = FeedRetriever(FeedStoreConfig(collection_name="ranking_collaborative"), embedder=embedder)
    retriever.add_posts(generate_corpus(corpus, seed=3, authors={a.id: a.interests for a in agents}))
    return agents, graph, retriever, corpus.reference_time


def ranker_for(world, mode: str = "collaborative", **fields):
    from prism_experiments.ranking import RankerInputs, build_ranker, ranking_config

    _agents, graph, retriever, _now = world
    return build_ranker(ranking_config(mode, **fields), RankerInputs(retriever, graph, np.random.default_rng(1)))


def feedback_of(step: int, feeds, agents) -> ServedFeedback:
    """Every agent likes the first three posts of its feed and replies to the first."""
    ids = [a.id for a, feed in zip(agents, feeds) for _ in feed]
    rows = np.array([c.row for feed in feeds for c in feed])
    positions = np.concatenate([np.arange(len(feed)) for feed in feeds])
    liked, replied = positions < 3, positions == 0
    none = np.zeros(len(rows), dtype=bool)
    return ServedFeedback(step, ids, rows, positions, liked, none, replied, none)


def trained(world, steps: int = 4, **fields):
    """A ranker that served `steps` steps to all but the last agent and learned from them."""
    agents, _, _, now = world
    ranker = ranker_for(world, **fields)
    for step in range(steps):
        feeds = ranker.rank_many(agents[:-1], now)
        ranker.observe(feedback_of(step, feeds, agents[:-1]))
    return ranker


@pytest.mark.integration
def test_cold_start_is_the_random_modes_feed(world) -> None:
    agents, _, _, now = world
    cold = ranker_for(world).rank_many(agents, now)
    randomly = ranker_for(world, "random").rank_many(agents, now)
    assert [[c.row for c in feed] for feed in cold] == [[c.row for c in feed] for feed in randomly]
    assert all(c.source == "random" for feed in cold for c in feed)


@pytest.mark.integration
def test_it_refits_every_k_observed_steps(world) -> None:
    ranker = trained(world, steps=5, retrain_every_steps=2)
    assert ranker.fits == 2  # after steps 2 and 4
    assert ranker.factors is not None and len(ranker.factors.user_ids) == len(world[0]) - 1


@pytest.mark.integration
def test_a_known_user_gets_the_models_picks_then_the_fallback_and_an_unseen_user_the_fallback(world) -> None:
    agents, _, retriever, now = world
    ranker = trained(world, retrain_every_steps=2, explore_slots=3)
    feeds = ranker.rank_many(agents, now)
    known, unseen = feeds[0], feeds[-1]
    assert [c.source for c in known] == ["collaborative"] * 7 + ["random"] * 3
    scores = [c.components["cf_score"] for c in known[:7]]
    assert scores == sorted(scores, reverse=True)
    assert all(c.row in set(ranker.factors.item_rows.tolist()) for c in known[:7])
    assert all(c.source == "random" for c in unseen) and len(unseen) == retriever.config.feed_size
    # x_u . y_i by hand
    u = ranker.factors.user_ids.index(agents[0].id)
    j = ranker.factors.item_rows.tolist().index(known[0].row)
    assert known[0].final_score == pytest.approx(float(ranker.factors.users[u] @ ranker.factors.items[j]))


@pytest.mark.integration
def test_same_seed_same_feeds_and_tables(world) -> None:
    agents, _, _, now = world
    first, second = trained(world, retrain_every_steps=2), trained(world, retrain_every_steps=2)
    assert [[c.row for c in f] for f in first.rank_many(agents, now)] == [
        [c.row for c in f] for f in second.rank_many(agents, now)
    ]
    for name in (FACTORS_TABLE, PAIRS_TABLE):
        pd.testing.assert_frame_equal(first.run_tables()[name], second.run_tables()[name], check_exact=True)
    # one agent alone gets the feed it gets in the step
    alone = first.rank(agents[1], now)
    assert [c.row for c in alone] == [c.row for c in first.rank_many(agents, now)[1]]


@pytest.mark.integration
def test_a_run_logs_the_factors_and_pairs_and_repeats_for_a_seed(tmp_path: Path, session_cache_dir: Path) -> None:
    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation import run_simulation

    overrides = [
        f"paths.runs_dir={tmp_path}",
        f"rag.cache_dir={session_cache_dir}",
        "experiment=smoke",
        "simulation.show_progress=false",
        "ranking=collaborative",
        "ranking.retrain_every_steps=2",
    ]
    first, again = (run_simulation(compose_experiment(overrides)) for _ in range(2))
    pd.testing.assert_frame_equal(first.exposures, again.exposures, check_exact=True)
    factors, pairs = first.ranker_tables[FACTORS_TABLE], first.ranker_tables[PAIRS_TABLE]
    assert len(factors) >= 2 and factors.shape[1] == 1 + CollaborativeConfig().factors
    assert pairs["agent_id"].tolist() == factors["agent_id"].tolist()
    assert (
        set(pairs["paired_agent_id"]) <= set(factors["agent_id"])
        and (pairs["agent_id"] != pairs["paired_agent_id"]).all()
    )
    assert (first.exposures["source"] == "collaborative").any()
    for name in (FACTORS_TABLE, PAIRS_TABLE):
        pd.testing.assert_frame_equal(first.ranker_tables[name], again.ranker_tables[name], check_exact=True)
