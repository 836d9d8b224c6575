"""The engine on the real stack (model + Chroma): determinism, common random numbers, spreading."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.domain import ACTIONS, EventLog
from prism_experiments.metrics import cascade_table, summarize
from prism_experiments.simulation import build_starting_world, run_simulation

pytestmark = pytest.mark.integration


def small_config(cache: Path, **overrides) -> ExperimentConfig:
    data = {
        "seed": 3,
        "agents": {"n_agents": 50, "activity_median": 0.4},
        "network": {"mean_out_degree": 8},
        "corpus": {"n_posts": 400, "span_hours": 24},
        "simulation": {"n_steps": 10, "show_progress": False},
        "rag": {"cache_dir": str(cache)},
        "paths": {"runs_dir": str(cache.parent / "runs")},
    }
    for dotted, value in overrides.items():
        group, _, key = dotted.partition("__")
        if key:
            data.setdefault(group, {})[key] = value
        else:
            data[group] = value
    return ExperimentConfig.from_mapping(data)


@pytest.fixture(scope="module")
def runs(session_cache_dir: Path) -> dict[str, object]:
    """x_algo twice, random once, and x_algo at two OON scales: one seed, one world."""
    return {
        "x_algo": run_simulation(small_config(session_cache_dir)),
        "x_algo_again": run_simulation(small_config(session_cache_dir)),
        "random": run_simulation(small_config(session_cache_dir, ranking__mode="random")),
        "oon_0.25": run_simulation(small_config(session_cache_dir, ranking__out_of_network_scale=0.25)),
        "oon_1.0": run_simulation(small_config(session_cache_dir, ranking__out_of_network_scale=1.0)),
    }


def test_same_config_and_seed_give_identical_tables_and_metrics(runs) -> None:
    first, second = runs["x_algo"], runs["x_algo_again"]
    for name, table in first.tables().items():
        pd.testing.assert_frame_equal(table, getattr(second, name), check_like=False)
    assert summarize(first) == pytest.approx(summarize(second), nan_ok=True)


def test_modes_share_world_activation_and_authoring(runs, session_cache_dir: Path) -> None:
    x_algo, random = runs["x_algo"], runs["random"]

    # identical starting corpus
    def start(r):
        return r.posts[r.posts["created_step"] == -1].drop(columns=["likes", "reshares", "replies"])

    pd.testing.assert_frame_equal(start(x_algo), start(random))

    # identical activation: the same agents were served a feed at every step
    def active(r):
        return r.exposures.groupby("step")["agent_id"].agg(lambda s: tuple(sorted(set(s))))

    pd.testing.assert_series_equal(active(x_algo), active(random))

    # identical original posts authored (text, author, step): authoring draws do not depend on the feed
    def authored(r):
        return r.posts[(r.posts["created_step"] >= 0) & r.posts["parent_id"].isna()][
            ["post_id", "author_id", "text", "created_step"]
        ].reset_index(drop=True)

    pd.testing.assert_frame_equal(authored(x_algo), authored(random))
    # identical agents and initial graph, rebuilt from the seed alone
    world_a = build_starting_world(small_config(session_cache_dir))
    world_b = build_starting_world(small_config(session_cache_dir, ranking__mode="random"))
    assert world_a.graph.edges() == world_b.graph.edges()
    assert [a.model_dump() for a in world_a.agents] == [a.model_dump() for a in world_b.agents]
    # but different feeds
    assert not x_algo.exposures["post_id"].equals(random.exposures["post_id"])


def test_content_spreads_through_reshares(runs) -> None:
    result = runs["x_algo"]
    assert (result.engagements["action"] == "reshare").sum() > 0
    cascades = cascade_table(result.cascade_edges)
    assert (cascades["depth"] > 1).any(), "some cascade should pass through a resharer"
    # a reshare via a followee makes the post in-network for the resharer's followers
    via = result.engagements.dropna(subset=["via_agent_id"])
    assert len(via) > 0
    assert via["in_network"].all()
    # every reshare is one cascade edge, its parent is the via agent or the post's author
    reshares = result.engagements[result.engagements["action"] == "reshare"]
    assert len(result.cascade_edges) == len(reshares)
    authors = result.posts.set_index("post_id")["author_id"]
    merged = result.cascade_edges.merge(
        reshares, left_on=["root_post_id", "child_id"], right_on=["post_id", "agent_id"]
    )
    expected_parent = merged["via_agent_id"].where(
        merged["via_agent_id"].notna(), authors.loc[merged["post_id"]].values
    )
    assert (merged["parent_id"] == expected_parent).all()


def test_lower_oon_scale_raises_in_network_share(runs) -> None:
    assert summarize(runs["oon_0.25"])["inn_share"] > summarize(runs["oon_1.0"])["inn_share"]


def test_no_agent_is_shown_its_own_post_or_a_post_twice(runs) -> None:
    for result in runs.values():
        exposures = result.exposures
        assert not (exposures["agent_id"] == exposures["author_id"]).any()
        assert not exposures.duplicated(["agent_id", "post_id"]).any()


def test_counters_and_replies_are_consistent_with_the_log(runs) -> None:
    result = runs["x_algo"]
    posts = result.posts.set_index("post_id")
    start = posts["created_step"] == -1
    counts = result.engagements.groupby(["post_id", "action"]).size().unstack(fill_value=0)
    assert sorted(counts.columns) == sorted(ACTIONS), "the run has every kind of engagement to check"
    for action, column in (("like", "likes"), ("reshare", "reshares"), ("reply", "replies")):
        gained = counts[action].reindex(posts.index, fill_value=0)
        initial = result.posts.set_index("post_id")[column] - gained
        assert (initial[~start] == 0).all(), f"new posts start with zero {column}"
    replies = posts[posts["parent_id"].notna() & ~start]
    assert len(replies) == (result.engagements["action"] == "reply").sum()
    assert replies["parent_id"].isin(posts.index).all()


def test_event_log_round_trips_through_parquet(runs, tmp_path: Path) -> None:
    result = runs["x_algo"]
    result.to_parquet(tmp_path)
    back = EventLog.from_parquet(tmp_path)
    for name, table in result.tables().items():
        pd.testing.assert_frame_equal(table.reset_index(drop=True), getattr(back, name), check_dtype=False)
    assert summarize(back) == pytest.approx(summarize(result), nan_ok=True)


def test_exposure_components_recompute_x_algo_scores(runs) -> None:
    exposures = runs["x_algo"].exposures
    recomputed = (
        exposures["comp_similarity"]
        * exposures["comp_oon_scale"]
        * exposures["comp_reply_scale"]
        * exposures["comp_author_diversity"]
    )
    np.testing.assert_allclose(recomputed, exposures["final_score"], rtol=1e-9)
    np.testing.assert_allclose(exposures["base_score"], exposures["interest_similarity"], atol=1e-4)


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"agents": {"n_agents": 0}}, "agents.n_agents"),
        ({"rag": {"feed_size": 0}}, "rag.feed_size"),
        ({"agents": {"activity_median": -0.5}}, "agents.activity_median"),
        ({"agents": {"behaviour": {"follow_probability": -0.1}}}, "agents.behaviour.follow_probability"),
        ({"simulation": {"n_steps": 0}}, "simulation.n_steps"),
        ({"ranking": {"mode": "bogus"}}, "ranking.mode"),
        ({"agents": {"activity_response": -1}}, "agents.activity_response"),
        ({"agents": {"activity_response": "often"}}, "agents.activity_response"),
        ({"simulation": {"schedule": [{"step": 48, "mode": "x_algo"}]}}, "simulation.schedule"),
    ],
)
def test_config_that_cannot_run_fails_before_any_work(overrides: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        ExperimentConfig.from_mapping(overrides)
    message = str(info.value)
    assert message.startswith("config error: ") and field in message and "\n" not in message


def test_the_starting_index_and_the_model_are_built_once_per_process(
    session_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prism_experiments.feed_store import FeedRetriever
    from prism_experiments.simulation import stores

    built: list[str] = []

    class CountingRetriever(FeedRetriever):
        def __init__(self, config, embedder=None) -> None:
            built.append(config.collection_name)
            super().__init__(config, embedder)

    monkeypatch.setattr(stores, "FeedRetriever", CountingRetriever)
    first = run_simulation(small_config(session_cache_dir, seed=21))
    embedder = stores.shared_embedder("all-MiniLM-L6-v2", session_cache_dir)
    encoded = embedder.encoded_count
    second = run_simulation(small_config(session_cache_dir, seed=21, ranking__mode="chronological"))
    assert len(built) == 1, "one index of the starting corpus for both runs"
    # the model encoded only texts it had never seen: the second run's new replies, not the corpus
    unseen = set(second.posts["text"]) - set(first.posts["text"])
    assert embedder.encoded_count - encoded <= len(unseen) < len(second.posts) // 10
    # and the run says so: its texts_encoded figure counts exactly what it sent to the model
    assert second.timings["texts_encoded"] == embedder.encoded_count - encoded

    # the second run started from pristine counters: the first run's engagement did not leak into it
    def start(r):
        return r.posts[r.posts["created_step"] == -1].set_index("post_id")["likes"]

    world = build_starting_world(small_config(session_cache_dir, seed=21))
    initial = pd.Series({p.id: p.likes for p in world.corpus})
    gained = second.engagements[second.engagements["action"] == "like"].groupby("post_id").size()
    expected = initial.add(gained, fill_value=0).reindex(start(second).index).astype(int)
    pd.testing.assert_series_equal(start(second), expected, check_names=False)


@pytest.mark.parametrize(
    "mode", ["engagement_recency", "pooled_boost", "context_rerank", "preference", "chronological"]
)
def test_every_mode_runs_a_short_real_simulation(session_cache_dir: Path, mode: str) -> None:
    fields = {"mode": mode}
    if mode == "context_rerank":
        fields |= {"debug": True, "debug_sample_rate": 0.5}
    result = run_simulation(
        small_config(session_cache_dir, ranking=fields, simulation={"n_steps": 4, "show_progress": False})
    )
    summary = summarize(result)
    assert summary["impressions_total"] > 0 and summary["engagement_rate"] > 0
    exposures = result.exposures
    assert not (exposures["agent_id"] == exposures["author_id"]).any()
    if mode == "pooled_boost":
        assert 0.0 <= summary["safety_override_rate"] <= 1.0
        recomputed = exposures["comp_similarity"] + exposures["comp_priority_boost"]
        np.testing.assert_allclose(recomputed, exposures["final_score"], rtol=1e-9)
    if mode == "context_rerank":
        recomputed = exposures["base_score"] + exposures["comp_boost"] + exposures["comp_archetype_boost"]
        np.testing.assert_allclose(recomputed, exposures["final_score"], rtol=1e-9)
        assert result.ranker_debug and {"agent_id", "items"} <= set(result.ranker_debug[0])
    if mode == "engagement_recency":
        recomputed = exposures["comp_engagement_score"] * exposures["comp_recency_decay"]
        np.testing.assert_allclose(recomputed, exposures["final_score"], rtol=1e-9)
    # only the pooled_boost guarantee reports whether it fired
    assert ("safety_override_rate" in summary) == (mode == "pooled_boost")


def test_any_object_shaped_like_the_config_runs_the_same_simulation(runs, session_cache_dir: Path) -> None:
    # the engine reads settings structurally (RunSettings), so it needs no ExperimentConfig
    cfg = small_config(session_cache_dir)
    settings = SimpleNamespace(
        seed=cfg.seed,
        corpus=cfg.corpus,
        rag=cfg.rag,
        agents=cfg.agents,
        network=cfg.network,
        ranking=cfg.ranking,
        simulation=cfg.simulation,
        cache_dir=cfg.cache_dir,
    )
    result = run_simulation(settings)
    for name, table in runs["x_algo"].tables().items():
        pd.testing.assert_frame_equal(table, getattr(result, name))


def test_a_ranking_schedule_switches_the_mode_at_its_steps_and_keeps_common_random_numbers(
    session_cache_dir: Path, tmp_path: Path
) -> None:
    """Chronological for steps 0-1, x_algo from step 2: the served modes are logged per step, the steps before the
    switch are the plain chronological run's, and a schedule of chronological alone is the plain chronological run
    even when the run's own ranking is another mode."""
    from prism_experiments.tracking.artifacts import SERVED_MODES_FILE, write_run_files

    four = {"n_steps": 4, "show_progress": False}
    plain = run_simulation(small_config(session_cache_dir, ranking={"mode": "chronological"}, simulation=four))
    switched = run_simulation(
        small_config(
            session_cache_dir,
            ranking={"mode": "chronological"},
            simulation=four | {"schedule": [{"step": 2, "mode": "x_algo"}]},
        )
    )
    assert switched.served_modes == [("chronological", 0)] * 2 + [("x_algo", 1)] * 2 and plain.served_modes == []
    columns = list(plain.exposures.columns)  # x_algo adds its score components' columns
    pd.testing.assert_frame_equal(
        plain.exposures.loc[plain.exposures["step"] < 2, columns].reset_index(drop=True),
        switched.exposures.loc[switched.exposures["step"] < 2, columns].reset_index(drop=True),
    )
    after = [set(t.loc[t["step"] >= 2, "post_id"]) for t in (plain.exposures, switched.exposures)]
    assert after[0] != after[1], "x_algo serves other posts than chronological after the switch"
    write_run_files(tmp_path, {}, [], switched, {}, pd.DataFrame(), tables=False, figures=False)
    logged = pd.read_parquet(tmp_path / "tables" / SERVED_MODES_FILE)
    assert logged.to_dict("list") == {
        "step": [0, 1, 2, 3],
        "mode": ["chronological", "chronological", "x_algo", "x_algo"],
        "schedule_entry": [0, 0, 1, 1],
    }

    only_chronological = run_simulation(
        small_config(session_cache_dir, simulation=four | {"schedule": [{"step": 0, "mode": "chronological"}]})
    )
    assert only_chronological.served_modes == [("chronological", 1)] * 4
    assert summarize(only_chronological) == pytest.approx(summarize(plain), nan_ok=True)
    pd.testing.assert_frame_equal(only_chronological.exposures, plain.exposures)
