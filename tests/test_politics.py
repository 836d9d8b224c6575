"""Politics in the world (REQ-POL-*, docs/politics.md): identity, homophily, posts, behaviour, metrics, rankers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.agents import AgentsConfig, generate_population
from prism_experiments.agents.population_file import PopulationFileError, read_population_file
from prism_experiments.corpus import generate_corpus
from prism_experiments.corpus.loader import CorpusFileError, load_posts
from prism_experiments.corpus.synthetic import SyntheticCorpusConfig
from prism_experiments.network import NetworkConfig, generate_follow_graph
from prism_experiments.politics import MAX_TERMS, PoliticsConfig, measures
from prism_experiments.politics.behaviour import engagement_offsets, satisfaction
from prism_experiments.politics.content import SIDE_TERMS, politicized
from prism_experiments.politics.identity import fit_homophily, pooled_exposure_shares, sides
from prism_experiments.ranking.bridging_model import fit_bridging

TOPICS = ["technology", "travel", "crypto", "sports", "food", "music"]
ON = PoliticsConfig(enabled=True)


def political_population(n: int, seed: int) -> list:
    return generate_population(AgentsConfig(n_agents=n, politics=ON), TOPICS, seed)


def test_positions_follow_the_survey_shares() -> None:
    positions = np.array([np.nan if a.position is None else a.position for a in political_population(20_000, 0)])
    side = sides(positions)
    assert abs(np.mean(side == -1) - ON.left_share) < 0.01
    assert abs(np.mean(side == 1) - ON.right_share) < 0.01
    strong_left = np.mean(positions[side == -1] < -2 / 3)
    assert abs(strong_left - ON.strong_left) < 0.02
    assert np.nanmax(np.abs(positions)) <= 1.0 and np.nanmin(np.abs(positions)) >= 0.1


def test_follow_homophily_meets_its_input_targets() -> None:
    """The fitted multipliers meet the input exactly in expectation, and the generated graphs' follows of political
    agents within 0.05 on the mean of 5 seeds (interest homophily and preferential attachment move them)."""
    fitted = fit_homophily(ON)
    expected = pooled_exposure_shares(fitted.same, fitted.neutral, (ON.left_share, ON.right_share, 0.43))
    assert expected[:2] == pytest.approx([ON.like_minded_target, ON.cross_cutting_target], abs=1e-4)
    got = []
    for seed in range(5):
        agents = political_population(1500, seed)
        graph = generate_follow_graph(agents, NetworkConfig(mean_out_degree=7.347), seed, politics=ON)
        position = {a.id: np.nan if a.position is None else a.position for a in agents}
        pairs = [(position[a.id], position[b]) for a in agents for b in graph.following(a.id)]
        reader, author = np.array(pairs).T
        shares = measures.class_shares(measures.exposure_class(reader, author))
        assert shares is not None
        got.append([shares["like_minded"], shares["cross_cutting"]])
    mean = np.mean(got, axis=0)
    assert mean == pytest.approx([ON.like_minded_target, ON.cross_cutting_target], abs=0.05)


def test_a_population_file_gives_positions_and_rejects_them_off_the_axis(tmp_path: Path) -> None:
    good = tmp_path / "people.csv"
    good.write_text("agent_id,position\na,-0.5\nb,\nc,1\n")
    table = read_population_file(good, TOPICS)
    assert table.numbers["position"][0] == -0.5 and table.given["position"].tolist() == [True, False, True]
    bad = tmp_path / "bad.csv"
    bad.write_text("agent_id,position\na,1.5\n")
    with pytest.raises(PopulationFileError, match=r"row 1, column 'position': must be a number in \[-1, 1\]"):
        read_population_file(bad, TOPICS)


def test_political_posts_carry_their_words() -> None:
    agents = political_population(200, 1)
    corpus = generate_corpus(SyntheticCorpusConfig(n_posts=3000), 1, {a.id: a.interests for a in agents})
    position = {a.id: np.nan if a.position is None else a.position for a in agents}
    posts = politicized(corpus, [position[p.author_id] for p in corpus], 1, ON)
    political = [p for p in posts if p.political]
    assert 0.08 < len(political) / len(posts) < 0.18  # Pew 2019's 13%, drawn
    assert all(position[p.author_id] == position[p.author_id] for p in political)  # only political authors
    for post in political:
        side = 1 if post.slant >= 0 else -1
        outgroup = sum(post.text.lower().count(term.lower()) for term in SIDE_TERMS[-side])
        assert outgroup >= round(post.animosity * MAX_TERMS)
        if post.animosity == 0:
            assert any(term.lower() in post.text.lower() for term in SIDE_TERMS[side])
    assert all(p.text == c.text for p, c in zip(posts, corpus) if not p.political)
    again = politicized(corpus, [position[p.author_id] for p in corpus], 1, ON)
    assert [p.text for p in again] == [p.text for p in posts]  # keyed by post id: the same under every ranker


def test_a_corpus_file_gives_political_columns_and_rejects_bad_ones(tmp_path: Path) -> None:
    good = tmp_path / "posts.csv"
    good.write_text(
        "id,author_id,text,timestamp,political,slant,animosity\n"
        "p1,a,hello,2024-01-01T00:00:00,true,-0.4,0.33\np2,a,hi,2024-01-01T00:00:00,false,,\n"
    )
    posts = load_posts(good)
    assert posts[0].political is True and posts[0].slant == -0.4 and posts[1].slant is None
    bad = tmp_path / "bad.csv"
    bad.write_text("id,author_id,text,timestamp,slant\np1,a,hello,2024-01-01T00:00:00,left\n")
    with pytest.raises(CorpusFileError, match=r"row 1, column 'slant': must be a number in \[-1, 1\]"):
        load_posts(bad)


def test_engagement_terms_are_the_published_odds() -> None:
    left = np.array([-0.8])
    one_term = engagement_offsets(left, np.array([1.0]), np.array([-0.8]), np.array([1 / MAX_TERMS]), [0.0], ON)
    none = engagement_offsets(left, np.array([1.0]), np.array([-0.8]), np.array([0.0]), [0.0], ON)
    assert math.exp(one_term[0, 1] - none[0, 1]) == pytest.approx(1.67)  # Rathje et al. 2021
    moral = engagement_offsets(left, np.array([1.0]), np.array([-0.8]), np.array([0.0]), [1 / MAX_TERMS], ON)
    assert math.exp(moral[0, 1] - none[0, 1]) == pytest.approx(1.20)  # Brady et al. 2017
    other_side = engagement_offsets(np.array([0.8]), [1.0], [-0.8], [1 / MAX_TERMS], [0.0], ON)
    assert other_side[0, 1] == pytest.approx(-ON.alignment_log_odds * 0.64)  # no out-group bonus for its targets
    assert np.all(engagement_offsets([np.nan], [np.nan], [np.nan], [np.nan], [np.nan], ON) == 0)


def test_satisfaction_never_rewards_animosity() -> None:
    grid = np.linspace(0, 1, 11)
    for reader in (-0.9, -0.2, np.nan, 0.5):
        values = satisfaction(np.full(11, 0.7), np.full(11, reader), np.ones(11), np.full(11, -0.6), grid, ON)
        assert np.all(np.diff(values) <= 0)
        assert np.all((values >= -1) & (values <= 1))


def test_politics_leaves_the_other_draws_alone() -> None:
    plain = generate_population(AgentsConfig(n_agents=300), TOPICS, 3)
    political = political_population(300, 3)
    assert all(a.position is None for a in plain)
    assert [a.model_dump(exclude={"position"}) for a in plain] == [
        a.model_dump(exclude={"position"}) for a in political
    ]
    graph = generate_follow_graph(plain, NetworkConfig(), 3)
    off = generate_follow_graph(plain, NetworkConfig(), 3, politics=PoliticsConfig())
    assert all(graph.following(a.id) == off.following(a.id) for a in plain)


def hand_made_run() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    posts = pd.DataFrame(
        {
            "post_id": ["l", "r", "n"],
            "author_id": ["L", "R", "N"],
            "author_position": [-0.5, 0.7, np.nan],
            "animosity": [1 / 3, 0.0, np.nan],
        }
    )
    exposures = pd.DataFrame(
        {
            "agent_id": ["L2", "L2", "L2", "R2", "N2"],
            "post_id": ["l", "r", "n", "r", "l"],
            "author_id": ["L", "R", "N", "R", "L"],
            "reader_position": [-0.4, -0.4, -0.4, 0.9, np.nan],
            "author_position": [-0.5, 0.7, np.nan, 0.7, -0.5],
            "post_political": [1.0, 1.0, 0.0, 1.0, 1.0],
            "post_animosity": [1 / 3, 0.0, np.nan, 0.0, 1 / 3],
            "satisfaction": [0.2, -0.1, 0.0, 0.3, 0.1],
        }
    )
    engagements = pd.DataFrame({"agent_id": ["L2", "R2"], "post_id": ["l", "r"], "action": ["reshare", "reshare"]})
    return exposures, engagements, posts


def test_measures_on_a_hand_made_run() -> None:
    exposures, engagements, posts = hand_made_run()
    assert measures.impression_class_shares(exposures) == pytest.approx(
        {"like_minded": 2 / 4, "cross_cutting": 1 / 4, "neutral": 1 / 4}
    )
    assert measures.engagement_class_shares(exposures, engagements, posts) == {
        "like_minded": 1.0,
        "cross_cutting": 0.0,
        "neutral": 0.0,
    }
    assert measures.animosity_shares(exposures, posts) == pytest.approx((2 / 5, 1 / 3))
    assert measures.political_share(exposures) == pytest.approx(4 / 5)
    assert measures.side_reach(exposures, posts, -1) == 2.0
    assert measures.huszar_amplification(3.0, 2.0) == pytest.approx(0.5)
    assert measures.reshare_assortativity(exposures, engagements, posts) != measures.reshare_assortativity(
        exposures, engagements.iloc[:0], posts
    )
    plain = exposures.drop(columns=["reader_position"])
    assert measures.impression_class_shares(plain) is None and measures.political_share(plain) is None


def test_the_bridging_intercept_prefers_approval_across_sides() -> None:
    """A third of the items are approved by both sides (0.6), a third by the left only and a third by the right only
    (1.0 and 0.2: 0.6 on average too): the intercept ranks the bridging items first, and the one-sided items'
    approval goes to the factor (Community Notes' design)."""
    rng = np.random.default_rng(0)
    users, items, ratings = [], [], []
    for user in range(60):
        left = user < 30
        for item in range(30):
            kind = item % 3  # 0 both sides, 1 left, 2 right
            approve = 0.6 if kind == 0 else (1.0 if (kind == 1) == left else 0.2)
            for _ in range(2):
                users.append(user)
                items.append(item)
                ratings.append(float(rng.random() < approve))
    fit = fit_bridging(np.array(users), np.array(items), np.array(ratings), np.random.default_rng(1))
    assert fit is not None
    intercept = [fit.item_intercepts[kind::3].mean() for kind in range(3)]
    factor = [np.abs(fit.item_factors[kind::3]).mean() for kind in range(3)]
    assert intercept[0] > max(intercept[1:])
    assert factor[0] < min(factor[1:]) / 5


@pytest.mark.integration
def test_a_political_run_logs_its_metrics_and_a_plain_run_none(tmp_path: Path, warm_pool_cache: Path) -> None:
    from prism_experiments.composition import compose_experiment
    from prism_experiments.metrics import summarize
    from prism_experiments.metrics.registry import registered_metrics
    from prism_experiments.simulation import run_simulation

    political = {m.name for m in registered_metrics() if m.compute.__module__.endswith(".politics")}
    base = [f"paths.runs_dir={tmp_path}", f"rag.cache_dir={warm_pool_cache}", "experiment=smoke"]
    plain = summarize(run_simulation(compose_experiment([*base, "ranking=stated_preference"])))
    assert not political & set(plain)
    summaries = {}
    for mode in ("engagement", "stated_preference"):
        config = compose_experiment([*base, f"ranking={mode}", "agents.politics.enabled=true"])
        summaries[mode] = summarize(run_simulation(config))
        assert political <= set(summaries[mode])
    # the stated-preference timeline penalises hostility, the engagement one does not (Milli et al. 2025)
    sp, eng = summaries["stated_preference"], summaries["engagement"]
    assert sp["animosity_impression_share"] <= eng["animosity_impression_share"]
    assert sp["satisfaction_per_impression"] >= eng["satisfaction_per_impression"]


def test_like_minded_demotion_is_x_algo_s_validated_setting_off_by_default() -> None:
    from prism_experiments.config import ConfigError, ExperimentConfig

    assert ExperimentConfig.from_mapping({"ranking": {"mode": "x_algo"}}).ranking.like_minded_scale == 1.0
    assert ExperimentConfig.from_mapping({"ranking": {"mode": "x_algo", "like_minded_scale": 0.5}})
    for bad, field in (({"mode": "x_algo", "like_minded_scale": 1.5}, "less than or equal to 1"),
                       ({"mode": "x_algo", "like_minded_scale": -0.1}, "greater than or equal to 0"),
                       ({"mode": "engagement", "like_minded_scale": 0.5}, "x_algo's only")):  # fmt: skip
        with pytest.raises(ConfigError, match=field) as info:
            ExperimentConfig.from_mapping({"ranking": bad})
        assert "\n" not in str(info.value) and "like_minded_scale" in str(info.value)


def test_like_minded_demotion_scales_only_candidates_from_the_reader_s_side() -> None:
    from types import SimpleNamespace

    from prism_experiments.ranking.modes.x_algo import XAlgorithmRanker

    # authors by code: a (right), b (left), c (non-political), d (unknown); readers: right, left, non-political
    positions = {"a": 0.7, "b": -0.4, "c": None}
    ranker = SimpleNamespace(
        inputs=SimpleNamespace(positions=positions),
        retriever=SimpleNamespace(author_ids=lambda: ["a", "b", "c", "d"]),
        config=SimpleNamespace(like_minded_scale=0.5),
    )
    views = SimpleNamespace(agents=[SimpleNamespace(position=0.2), SimpleNamespace(position=-1.0),
                                    SimpleNamespace(position=None)])  # fmt: skip
    view = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    codes = np.array([0, 1, 2, 3, 0, 1, 0, 1])
    scale = XAlgorithmRanker.like_minded_scale(ranker, views, view, codes)  # type: ignore[arg-type]
    assert scale.tolist() == [0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0]
    ranker.inputs = SimpleNamespace(positions=None)  # politics off: nothing to demote
    assert XAlgorithmRanker.like_minded_scale(ranker, views, view, codes).tolist() == [1.0] * 8  # type: ignore[arg-type]
