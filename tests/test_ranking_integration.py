"""Ranking modes on a real Chroma store with real embeddings (REQ-XALGO-8)."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from datetime import timedelta

import numpy as np
import pytest

from prism_experiments.agents import AgentsConfig, SocialAgent, generate_population
from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus
from prism_experiments.domain import Post, interest_query_text
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.network import DictSocialGraph, NetworkConfig, generate_follow_graph, with_following
from prism_experiments.ranking import KNOWN_MODES, RankerInputs, ReshareLog, build_ranker, ranking_config

pytestmark = pytest.mark.integration
CORPUS = SyntheticCorpusConfig(n_posts=500, span_hours=24)
NOW = CORPUS.reference_time


@pytest.fixture(scope="module")
def world(embedder):
    agents = generate_population(AgentsConfig(n_agents=10), CORPUS.topics, seed=5)
    graph = generate_follow_graph(agents, NetworkConfig(mean_out_degree=3, out_degree_sigma=0.3), seed=5)
    agents = with_following(agents, graph)
    posts = generate_corpus(CORPUS, seed=5, authors={a.id: a.interests for a in agents})
    retriever = FeedRetriever(FeedStoreConfig(collection_name="ranking_integration"), embedder=embedder)
    retriever.add_posts(posts)
    return agents, graph, retriever


def ranker_for(world, mode: str = "x_algo", reshares: ReshareLog | None = None, **fields):
    _agents, graph, retriever = world
    inputs = RankerInputs(retriever, graph, np.random.default_rng(1), reshares or ReshareLog())
    return build_ranker(ranking_config(mode, **fields), inputs)


def inn_share(feeds) -> float:
    flags = [c.in_network for feed in feeds for c in feed]
    return sum(flags) / len(flags)


def test_lower_oon_scale_raises_the_in_network_share(world) -> None:
    agents = world[0]
    assert all(agent.following for agent in agents)
    high = inn_share(ranker_for(world, out_of_network_scale=1.0).rank_many(agents, NOW))
    low = inn_share(ranker_for(world, out_of_network_scale=0.25).rank_many(agents, NOW))
    assert low > high


def test_in_network_candidates_equal_chromas_filtered_query(world) -> None:
    agents, graph, retriever = world
    ranker = ranker_for(world)
    for agent in agents:
        view = ranker._view(agent, ())
        rows, scores, _ = ranker.in_network_candidates(view, NOW)
        followed = sorted(graph.following(agent.id))
        chroma = retriever.query_with_scores(
            query_embedding=view.interest_vector, n_results=50, where={"author_id": {"$in": followed}}
        )
        assert [retriever.row_of(p.id) for p, _ in chroma][:10] == rows[:10].tolist()
        np.testing.assert_allclose([s for _, s in chroma][: len(rows)], scores[:50], atol=1e-5)


def test_agent_following_nobody_still_gets_a_full_feed(world) -> None:
    _agents, _, retriever = world
    loner = SocialAgent(id="loner", interests=["food"])
    for mode in KNOWN_MODES:
        feed = ranker_for(world, mode).rank(loner, NOW)
        assert len(feed) == retriever.config.feed_size, mode
        assert not any(c.in_network for c in feed), mode


@pytest.mark.parametrize("mode", KNOWN_MODES)
def test_batched_feeds_equal_single_feeds_and_never_show_own_posts(world, mode: str) -> None:
    agents = world[0]
    ranker = ranker_for(world, mode)
    batched = ranker.rank_many(agents, NOW)
    for agent, feed in zip(agents, batched):
        assert [c.post.id for c in feed] == [c.post.id for c in ranker_for(world, mode).rank(agent, NOW)]
        assert len(feed) == 10
        assert all(c.post.author_id != agent.id for c in feed)
        assert len({c.post.id for c in feed}) == len(feed)
        # backfill (engagement_recency's cold start, chronological's filler) follows the ranked part
        ranked = [c.final_score for c in feed if c.source != "backfill"]
        assert ranked == sorted(ranked, reverse=True)
        assert [c.source == "backfill" for c in feed] == sorted(c.source == "backfill" for c in feed)


@pytest.mark.parametrize("mode", KNOWN_MODES)
def test_rankers_never_modify_posts_agents_or_graph(world, mode: str) -> None:
    agents, graph, retriever = world
    posts_before = [p.model_dump() for p in retriever.posts]
    agents_before = [a.model_dump() for a in agents]
    edges_before = graph.edges()
    ranker_for(world, mode).rank_many(agents, NOW, {a.id: {retriever.posts[0].id} for a in agents})
    assert [p.model_dump() for p in retriever.posts] == posts_before
    assert [a.model_dump() for a in agents] == agents_before
    assert graph.edges() == edges_before


def test_excluded_posts_are_never_served(world) -> None:
    agents = world[0]
    ranker = ranker_for(world)
    first = ranker.rank(agents[0], NOW)
    seen = {c.post.id for c in first}
    second = ranker.rank(agents[0], NOW, exclude=seen)
    assert len(second) == 10 and not seen & {c.post.id for c in second}


def test_a_followees_reshare_is_in_network_with_its_resharer(world) -> None:
    agents, graph, retriever = world
    agent = agents[0]
    followee = sorted(graph.following(agent.id))[0]
    probe = ranker_for(world)
    strangers = np.array(
        [
            i
            for i, p in enumerate(retriever.posts)
            if p.author_id not in graph.following(agent.id) and p.author_id != agent.id and p.parent_id is None
        ]
    )
    # the stranger's post most similar to the agent: once reshared it is an in-network candidate at
    # full score, and with out-of-network posts scaled to 0 only followed authors' first posts
    # (author diversity halves the rest) can outscore it, far fewer than a feed's 10
    best = int(strangers[np.argmax(probe.similarities(probe._view(agent, ()), strangers))])
    reshares = ReshareLog()
    reshares.record(followee, best, step=0)
    pool = ranker_for(world, reshares=reshares, in_network_limit=500)
    rows, _, via = pool.in_network_candidates(pool._view(agent, ()), NOW)
    assert best in rows.tolist()
    assert via[rows.tolist().index(best)] == followee
    feed = ranker_for(world, reshares=reshares, in_network_limit=500, out_of_network_scale=0.0).rank(agent, NOW)
    (reshared,) = [c for c in feed if c.row == best]
    assert reshared.in_network and reshared.source == "in_network_reshare"
    assert reshared.via_agent_id == followee


def test_x_algo_handles_zero_distance_and_a_store_smaller_than_a_feed(embedder) -> None:
    retriever = FeedRetriever(FeedStoreConfig(collection_name="ranking_tiny"), embedder=embedder)
    exact = interest_query_text("music")
    retriever.add_posts(
        [
            Post(id="p1", author_id="a", text=exact, timestamp=NOW - timedelta(hours=1), topic="music"),
            Post(id="p2", author_id="a", text="A concert review of the new album tour.", timestamp=NOW, topic="music"),
            Post(id="p3", author_id="b", text="Stock markets fell on rate fears.", timestamp=NOW, topic="finance"),
        ]
    )
    graph = DictSocialGraph(["fan", "a", "b"])
    graph.follow("fan", "a")
    ranker = build_ranker(ranking_config(), RankerInputs(retriever, graph, np.random.default_rng(0)))
    feed = ranker.rank(SocialAgent(id="fan", interests=["music"]), NOW)
    assert next(c.post.id for c in feed) == "p1"
    assert feed[0].base_score == pytest.approx(1.0, abs=1e-5) and feed[0].final_score <= 1.0 + 1e-9
    assert len(feed) == 3  # fewer candidates than feed_size: all of them, once each
    by_id = {c.post.id: c for c in feed}
    assert by_id["p2"].components["author_diversity"] == 0.5  # the author's second post
    assert not by_id["p3"].in_network and by_id["p3"].components["oon_scale"] == 0.75


def test_chronological_is_newest_first_from_followees_then_backfilled(world) -> None:
    agents, graph, retriever = world
    agent = agents[0]
    followed = sorted(
        (p for p in retriever.posts if p.author_id in graph.following(agent.id)),
        key=lambda p: p.timestamp,
        reverse=True,
    )
    assert len(followed) > 10
    full = ranker_for(world, "chronological").rank(agent, NOW)
    assert [c.source for c in full] == ["recent"] * 10
    assert [c.post.id for c in full] == [p.id for p in followed[:10]]
    # hide all but 3 followed posts: 3 from the network, newest first, then 7 of the newest others
    hidden = {p.id for p in followed[3:]}
    feed = ranker_for(world, "chronological").rank(agent, NOW, exclude=hidden)
    assert [c.source for c in feed] == ["recent"] * 3 + ["backfill"] * 7
    assert [c.post.id for c in feed[:3]] == [p.id for p in followed[:3]]
    newest_other = sorted(
        (p for p in retriever.posts if p.author_id not in graph.following(agent.id) and p.author_id != agent.id),
        key=lambda p: p.timestamp,
        reverse=True,
    )
    assert [c.post.id for c in feed[3:]] == [p.id for p in newest_other[:7]]
    assert [c.components["backfill"] for c in feed] == [0.0] * 3 + [1.0] * 7


def test_random_is_reproducible_recent_and_differs_between_agents(world) -> None:
    agents = world[0]
    first = ranker_for(world, "random").rank_many(agents, NOW)
    again = ranker_for(world, "random").rank_many(list(reversed(agents)), NOW)[::-1]
    assert [[c.post.id for c in f] for f in first] == [[c.post.id for c in f] for f in again]
    assert len({tuple(c.post.id for c in f) for f in first}) == len(agents)
    window = timedelta(hours=ranking_config("random").recent_window_hours)
    assert all(NOW - window <= c.post.timestamp <= NOW for f in first for c in f)


def test_x_algos_step_at_once_equals_its_per_agent_steps(world) -> None:
    """The flat ranking of a whole step (ranking/flat.py) serves what the per-agent pool, rescoring and sort serve,
    with reshares in the graph and seen posts excluded."""
    from prism_experiments.ranking.modes.x_algo import rescored
    from prism_experiments.ranking.rescoring import descending_order

    agents, _graph, retriever = world
    reshares = ReshareLog()
    for step, agent in enumerate(agents[:6]):
        reshares.record(agent.id, 7 * step + 3, step)
    ranker = ranker_for(world, reshares=reshares)
    exclude = {agent.id: [p.id for p in retriever.posts[i::37]] for i, agent in enumerate(agents)}
    feeds = ranker.rank_many(agents, NOW, exclude)
    views = [ranker._view(agent, exclude[agent.id]) for agent in agents]
    for view, oon, feed in zip(views, ranker.out_of_network_candidates(views, NOW), feeds):
        pool = ranker.candidate_pool(view, NOW, oon)
        final, _ = rescored(pool.similarity, pool.is_oon, pool.rows, retriever, ranker.config)
        order = descending_order(final, pool.rows)[: ranker.feed_size]
        expected = [(int(pool.rows[i]), float(final[i]), not pool.is_oon[i], pool.via[i]) for i in order]
        assert [(c.row, c.final_score, c.in_network, c.via_agent_id) for c in feed] == expected
    assert any(c.via_agent_id for feed in feeds for c in feed)  # the reshare path was exercised


def test_step_views_equal_the_per_agent_views(world) -> None:
    """A whole step's views (ranking/whole_step.py) hold what `_view` gives each agent: excluded rows, followees'
    codes, and the reshared rows with their resharer, ties on the step to the smallest id (`reshared_by`)."""
    agents, _graph, retriever = world
    reshares = ReshareLog()
    for step, agent in enumerate(agents):
        reshares.record(agent.id, 11 * step + 2, step)
        reshares.record(agent.id, 40, 3)  # every agent reshares row 40 at step 3: a tie at every follower
    ranker = ranker_for(world, reshares=reshares)
    excluded = [np.arange(i, len(retriever), 29) for i in range(len(agents))]
    step = ranker.step_views(agents, NOW, excluded)
    for v, (agent, rows) in enumerate(zip(agents, excluded)):
        view = ranker._view(agent, rows)
        np.testing.assert_array_equal(step.excluded_rows()[v], view.excluded_rows)
        codes = step.filters.following[step.filters.following // step.filters.n_codes == v] % step.filters.n_codes
        np.testing.assert_array_equal(codes, view.following_codes)
        mine = step.filters.reshared // len(retriever) == v
        resharers = [retriever.author_ids()[code] for code in step.resharer[mine]]
        assert dict(zip((step.filters.reshared[mine] % len(retriever)).tolist(), resharers)) == view.reshared
    assert any(ranker._view(agent, ()).reshared for agent in agents)  # the reshare path was exercised


@pytest.mark.parametrize("mode", ["x_algo", "preference", "random", "chronological"])
def test_a_step_as_arrays_is_the_step_as_candidates(world, mode: str) -> None:
    """`rank_step`'s arrays are `rank_many`'s feeds, entry for entry, with the interest similarity the engine logs."""
    agents, _graph, retriever = world
    reshares = ReshareLog()
    for step, agent in enumerate(agents[:5]):
        reshares.record(agent.id, 5 * step + 1, step)
    ranker = ranker_for(world, mode, reshares=reshares)
    feeds = ranker.rank_step(agents, NOW)
    assert feeds.n_feeds == len(agents) and len(feeds) > 0
    assert feeds.candidates(retriever.posts, retriever.author_ids()) == ranker.rank_many(agents, NOW)
    assert feeds.similarity is not None
    for f, agent in enumerate(agents):
        part = slice(feeds.bounds[f], feeds.bounds[f + 1])
        expected = retriever.interest_similarities(agent.interests, feeds.rows[part])
        np.testing.assert_array_equal(feeds.similarity[part], expected)


class OldProtocolGraph:
    """A follow graph written against `SocialGraph` before it had `out_degree`: it delegates the other members."""

    def __init__(self, graph: DictSocialGraph) -> None:
        self._graph = graph

    def following(self, agent_id: str) -> AbstractSet[str]:
        return self._graph.following(agent_id)

    def followers(self, agent_id: str) -> AbstractSet[str]:
        return self._graph.followers(agent_id)

    def follow(self, follower_id: str, followee_id: str) -> bool:
        return self._graph.follow(follower_id, followee_id)

    def is_following(self, follower_id: str, followee_id: str) -> bool:
        return self._graph.is_following(follower_id, followee_id)

    def agent_ids(self) -> list[str]:
        return self._graph.agent_ids()


@pytest.mark.parametrize("mode", KNOWN_MODES)
def test_a_graph_without_out_degree_ranks_as_before_with_a_deprecation_warning(world, mode: str) -> None:
    agents, graph, retriever = world
    expected = ranker_for(world, mode).rank_many(agents, NOW)
    with pytest.warns(DeprecationWarning, match="OldProtocolGraph has no out_degree") as caught:
        inputs = RankerInputs(retriever, OldProtocolGraph(graph), np.random.default_rng(1), ReshareLog())
        ranker = build_ranker(ranking_config(mode), inputs)
    assert [warning.filename for warning in caught] == [
        __file__
    ]  # the caller's line, where the default filters show it
    assert ranker.rank_many(agents, NOW) == expected
