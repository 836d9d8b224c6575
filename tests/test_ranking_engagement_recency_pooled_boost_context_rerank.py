"""engagement_recency, pooled_boost and context_rerank (REQ-RETRIEVAL, REQ-POOLED, REQ-RERANK): formulas by hand, config
validation, and rank_many on a real store."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from prism_experiments.agents import AgentsConfig, SocialAgent, generate_population
from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus
from prism_experiments.domain import Post
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.network import DictSocialGraph, NetworkConfig, generate_follow_graph, with_following
from prism_experiments.ranking import (
    KNOWN_MODES,
    RankedCandidate,
    Ranker,
    RankerInputs,
    ReshareLog,
    build_ranker,
    ranking_config,
)
from prism_experiments.ranking.modes.context_rerank import ContextRerankConfig, ContextRerankRanker, sampled_for_debug
from prism_experiments.ranking.modes.engagement_recency import (
    engagement_scores,
    performance_scores,
    recency_decay,
)
from prism_experiments.ranking.modes.pooled_boost import apply_safety_guarantee, pooled_scores
from prism_experiments.ranking.rerank_boosts import (
    archetype_boost,
    archetype_confidence,
    dominant_archetype,
    generic_boost,
    has_keyword,
    interest_hashtags,
    post_text,
)

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


def ranker(
    mode: str,
    retriever: FeedRetriever,
    graph: DictSocialGraph,
    rng: np.random.Generator | None = None,
    reshares: ReshareLog | None = None,
    agents: AgentsConfig | None = None,
    **fields: Any,
) -> Ranker:
    """The registry's ranker for `mode` with `fields` set, on `retriever` and `graph`."""
    context = RankerInputs(retriever, graph, rng, reshares or ReshareLog(), agents)
    return build_ranker(ranking_config(mode, **fields), context)


def store(embedder: Any, posts: list[Post], feed_size: int = 5) -> FeedRetriever:
    """A fresh in-memory store (Chroma's in-memory clients share state, so every name is new)."""
    config = FeedStoreConfig(collection_name=f"modes-extra-{uuid.uuid4().hex[:12]}", feed_size=feed_size)
    retriever = FeedRetriever(config, embedder=embedder)
    retriever.add_posts(posts)
    return retriever


# ============================================================ engagement_recency (REQ-RETRIEVAL-1 ... REQ-RETRIEVAL-5)
def test_performance_is_the_weighted_sum_of_counters() -> None:
    performance = performance_scores(np.array([3, 0, 1]), np.array([1, 0, 2]), np.array([0, 0, 1]), 1.0, 2.0, 0.5)
    np.testing.assert_allclose(performance, [5.0, 0.0, 5.5])


def test_engagement_score_divides_by_the_max() -> None:
    np.testing.assert_allclose(engagement_scores(np.array([2.0, 4.0, 0.0, 1.0])), [0.5, 1.0, 0.0, 0.25])


def test_cold_start_scores_every_post_one_half() -> None:
    np.testing.assert_allclose(engagement_scores(np.zeros(3)), [0.5, 0.5, 0.5])
    np.testing.assert_allclose(engagement_scores(np.zeros(2), cold_start_weight=0.3), [0.3, 0.3])
    assert engagement_scores(np.zeros(0)).shape == (0,)


def test_recency_decay_reproduces_the_seed_table() -> None:
    # REQ-RETRIEVAL-4's values at a 14-day half-life
    decay = recency_decay(np.array([0.0, 7.0, 14.0, 28.0, 56.0]), 14.0)
    np.testing.assert_allclose(np.round(decay, 3), [1.000, 0.707, 0.500, 0.250, 0.063])
    # one simulated day of hourly steps at the default half-life
    assert recency_decay(np.array([1.0]), 14.0)[0] == pytest.approx(math.exp(-0.693 / 14.0))


def engagement_posts() -> list[Post]:
    """Six posts by x, 1..6 days old, likes 0, 10, 5, 0, 1, 20 -> scores 0, .5, .25, 0, .05, 1."""
    likes = [0, 10, 5, 0, 1, 20]
    topics = ["crypto", "food", "travel", "music", "sports", "science"]
    return [
        Post(
            id=f"e{i}",
            author_id="x",
            text=f"A post about {topics[i]} number {i}",
            timestamp=NOW - timedelta(days=i + 1),
            likes=likes[i],
        )
        for i in range(6)
    ]


def weight(score: float, days: float) -> float:
    return score * math.exp(-0.693 * days / 14.0)


def feed_ids(feed: list[RankedCandidate]) -> list[str]:
    return [c.post.id for c in feed]


@pytest.mark.integration
def test_engagement_recency_ranks_by_weight_and_backfills_by_recency(embedder: Any) -> None:
    own = Post(id="mine", author_id="me", text="My own crypto post", timestamp=NOW - timedelta(hours=1), likes=50)
    future = Post(id="later", author_id="x", text="A post from tomorrow", timestamp=NOW + timedelta(days=1), likes=1000)
    retriever = store(embedder, [*engagement_posts(), own, future])
    me = SocialAgent(id="me", interests=["crypto"])
    # the own post is excluded from the feed but counts toward the max (it is a published post):
    # max = 50, so scores are likes / 50
    feed = ranker("engagement_recency", retriever, DictSocialGraph(["me", "x"])).rank(me, NOW)
    # qualifying (score >= 0.1): e1 (0.2), e5 (0.4); e2 is 0.1 exactly and qualifies too
    assert feed_ids(feed) == ["e5", "e1", "e2", "e0", "e3"]
    np.testing.assert_allclose([c.final_score for c in feed[:3]], [weight(0.4, 6), weight(0.2, 2), weight(0.1, 3)])
    assert [c.components["cold_start"] for c in feed] == [0, 0, 0, 1, 1]
    assert [c.source for c in feed] == ["recent"] * 3 + ["backfill"] * 2
    assert [c.final_score for c in feed[3:]] == [0.5, 0.5]


@pytest.mark.integration
def test_engagement_recency_candidate_limit_and_exclusion(embedder: Any) -> None:
    retriever = store(embedder, engagement_posts())
    me = SocialAgent(id="me", interests=["crypto"])
    graph = DictSocialGraph(["me", "x"])
    # max = 20: scores 0, .5, .25, 0, .05, 1; only the 2 newest qualifying posts (e1, e2) are candidates
    feed = ranker("engagement_recency", retriever, graph, candidate_limit=2).rank(me, NOW)
    assert feed_ids(feed) == ["e1", "e2", "e0", "e3", "e4"]
    np.testing.assert_allclose([c.final_score for c in feed[:2]], [weight(0.5, 2), weight(0.25, 3)])
    # every qualifying post already seen: the cold-start fallback serves the newest others at 0.5
    fallback = ranker("engagement_recency", retriever, graph).rank(me, NOW, exclude={"e1", "e2", "e5"})
    assert feed_ids(fallback) == ["e0", "e3", "e4"]
    assert all(c.final_score == 0.5 and c.components["cold_start"] == 1 for c in fallback)


@pytest.mark.integration
def test_engagement_recency_cold_start_is_newest_first_at_half_weight(embedder: Any) -> None:
    posts = [post.model_copy(update={"likes": 0}) for post in engagement_posts()]
    retriever = store(embedder, posts)
    feed = ranker("engagement_recency", retriever, DictSocialGraph()).rank(
        SocialAgent(id="me", interests=["food"]), NOW
    )
    assert feed_ids(feed) == ["e0", "e1", "e2", "e3", "e4"]
    np.testing.assert_allclose([c.final_score for c in feed], [weight(0.5, d) for d in (1, 2, 3, 4, 5)])
    assert all(c.components["cold_start"] == 1 and c.components["engagement_score"] == 0.5 for c in feed)


@pytest.mark.integration
def test_engagement_recency_reads_live_counters(embedder: Any) -> None:
    retriever = store(embedder, engagement_posts())
    live = ranker("engagement_recency", retriever, DictSocialGraph())
    me = SocialAgent(id="me", interests=["music"])
    assert live.rank(me, NOW)[0].post.id == "e5"
    retriever.get_post("e3").likes = 100  # the engine updates counters in place
    assert live.rank(me, NOW)[0].post.id == "e3"


# ================================================================= pooled_boost (REQ-POOLED-1 ... REQ-POOLED-3)
def test_pooled_scores_boost_cap_and_deduplication() -> None:
    rows, similarity, score, is_priority = pooled_scores(
        np.array([1, 2, 5]),
        np.array([0.5, 0.95, 0.2]),
        np.array([3, 2, 4, 5]),
        np.array([0.65, 0.99, 0.1, 0.4]),
        boost=0.1,
        ceiling=1.0,
    )
    # row 2: priority min(1, 1.05) = 1.0 beats its specific copy 0.99; row 5: specific 0.4 beats 0.3
    assert rows.tolist() == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(score, [0.6, 1.0, 0.65, 0.1, 0.4])
    np.testing.assert_allclose(similarity, [0.5, 0.95, 0.65, 0.1, 0.4])
    assert is_priority.tolist() == [True, True, False, False, False]


def test_pooled_scores_tie_keeps_the_priority_copy() -> None:
    rows, _, score, is_priority = pooled_scores(
        np.array([7]), np.array([0.5]), np.array([7]), np.array([0.75]), boost=0.25
    )
    assert rows.tolist() == [7] and score.tolist() == [0.75] and is_priority.tolist() == [True]


def test_safety_guarantee_one_priority_plus_rest_specific() -> None:
    # five specific items outscore both priority items: the lowest specific (index 4) makes room
    # for the best priority item (index 5)
    scores = np.array([0.9, 0.85, 0.8, 0.75, 0.7, 0.3, 0.2])
    is_priority = np.array([False] * 5 + [True, True])
    feed, forced = apply_safety_guarantee(np.argsort(-scores), is_priority, feed_size=5, min_priority_items=1)
    assert feed.tolist() == [0, 1, 2, 3, 5]
    assert forced.tolist() == [False, False, False, False, True]
    assert int(is_priority[feed].sum()) == 1


def test_safety_guarantee_silent_when_not_needed() -> None:
    ranked = np.array([0, 1, 2, 3])
    feed, forced = apply_safety_guarantee(ranked, np.array([False, True, False, True]), 3)
    assert feed.tolist() == [0, 1, 2] and not forced.any()
    # no priority pool, a disabled guarantee, a feed that holds every candidate: nothing forced
    for is_priority, size, minimum in [
        ([False] * 4, 3, 1),
        ([False, False, False, True], 3, 0),
        ([False, False, False, True], 4, 1),
    ]:
        feed, forced = apply_safety_guarantee(ranked, np.array(is_priority), size, minimum)
        assert feed.tolist() == ranked[:size].tolist() and not forced.any()


def test_safety_guarantee_with_two_required_items() -> None:
    is_priority = np.array([False, False, False, True, False, True, True])
    feed, forced = apply_safety_guarantee(np.arange(7), is_priority, feed_size=4, min_priority_items=2)
    # index 3 made it; index 2 (lowest specific) gives way to index 5
    assert feed.tolist() == [0, 1, 3, 5] and forced.tolist() == [False, False, False, True]
    feed, forced = apply_safety_guarantee(np.arange(7), is_priority, feed_size=4, min_priority_items=3)
    assert feed.tolist() == [0, 3, 5, 6] and forced.tolist() == [False, False, True, True]


def pooled_world(embedder: Any) -> tuple[FeedRetriever, DictSocialGraph, SocialAgent]:
    """`me` likes crypto and follows only `f`, who writes about sports (best similarity 0.56 + 0.1 < the
    fifth-best crypto post, 0.68); about 40 crypto posts by others."""
    authors = {"f": ["sports"], **{f"c{i}": ["crypto"] for i in range(4)}}
    posts = generate_corpus(
        SyntheticCorpusConfig(n_posts=48, reply_fraction=0.0, reference_time=NOW), seed=3, authors=authors
    )
    graph = DictSocialGraph(["me", "f", "c0", "c1", "c2", "c3"])
    graph.follow("me", "f")
    return store(embedder, posts), graph, SocialAgent(id="me", interests=["crypto"])


@pytest.mark.integration
def test_pooled_boost_forces_one_in_network_post_into_a_specific_feed(embedder: Any) -> None:
    retriever, graph, me = pooled_world(embedder)
    feed = ranker("pooled_boost", retriever, graph).rank(me, NOW)
    assert len(feed) == 5
    assert [c.in_network for c in feed] == [False] * 4 + [True]
    forced = feed[-1]
    assert forced.post.author_id == "f" and forced.source == "in_network"
    assert [c.components["forced_by_safety"] for c in feed] == [0, 0, 0, 0, 1]
    assert all(c.components["safety_fired"] == 1 for c in feed)
    assert all(c.components["priority_count"] == 1 and c.components["specific_count"] == 4 for c in feed)
    # the forced post carries its boosted score; every score = similarity + priority_boost
    assert forced.components["priority_boost"] == pytest.approx(0.1)
    for c in feed:
        assert c.final_score == pytest.approx(c.base_score + c.components["priority_boost"])
    assert [c.final_score for c in feed] == sorted((c.final_score for c in feed), reverse=True)
    # without the guarantee the feed is all specific
    plain = ranker("pooled_boost", retriever, graph, min_priority_items=0).rank(me, NOW)
    assert not any(c.in_network for c in plain)
    assert feed_ids(plain)[:4] == feed_ids(feed)[:4]
    assert all(c.components["safety_fired"] == 0 for c in plain)


@pytest.mark.integration
def test_pooled_boost_reshared_post_is_priority_via_the_resharer(embedder: Any) -> None:
    retriever, graph, me = pooled_world(embedder)
    crypto_row = next(r for r, p in enumerate(retriever.posts) if p.author_id == "c0")
    reshares = ReshareLog()
    reshares.record("f", crypto_row, step=0)
    feed = ranker("pooled_boost", retriever, graph, reshares=reshares).rank(me, NOW)
    reshared = [c for c in feed if c.row == crypto_row]
    assert len(reshared) == 1
    assert reshared[0].source == "in_network_reshare" and reshared[0].via_agent_id == "f"
    assert reshared[0].components["priority_boost"] == pytest.approx(0.1)


# =============================================================== context_rerank (REQ-RERANK-1 ... REQ-RERANK-6)
def signals(n: int = 1, **on: bool) -> dict[str, np.ndarray]:
    names = (
        "primary_topic",
        "other_topic",
        "followed",
        "mutual",
        "hashtag",
        "keyword",
        "preferred_format",
        "disliked_format",
    )
    return {name: np.full(n, on.get(name, False)) for name in names}


@pytest.mark.parametrize(
    "on, expected",
    [
        ({}, 0.0),
        ({"primary_topic": True, "followed": True, "hashtag": True}, 0.10 + 0.12 + 0.05),
        (
            {"other_topic": True, "followed": True, "mutual": True, "keyword": True, "preferred_format": True},
            0.06 + 0.15 + 0.03 + 0.06,
        ),
        ({"disliked_format": True}, -0.06),
        ({"primary_topic": True, "disliked_format": True}, 0.04),
    ],
)
def test_generic_boost_by_hand(on: dict[str, bool], expected: float) -> None:
    assert generic_boost(**signals(**on), config=ContextRerankConfig())[0] == pytest.approx(expected)


def test_generic_boost_clamps_at_both_ends() -> None:
    everything = signals(
        primary_topic=True, followed=True, mutual=True, hashtag=True, keyword=True, preferred_format=True
    )
    big = ContextRerankConfig(primary_interest_boost=0.3, mutual_follow_boost=0.3)  # raw 0.74
    assert generic_boost(**everything, config=big)[0] == pytest.approx(0.5)
    harsh = ContextRerankConfig(disliked_format_penalty=0.3)  # raw -0.3
    assert generic_boost(**signals(disliked_format=True), config=harsh)[0] == pytest.approx(-0.1)
    # the defaults cannot reach either clamp: 0.10 + 0.15 + 0.05 + 0.03 + 0.06 = 0.39
    assert generic_boost(**everything, config=ContextRerankConfig())[0] == pytest.approx(0.39)


def test_archetype_boost_by_hand() -> None:
    # analyst 0.5, storyteller 0.3: margin 0.2 -> confidence 1
    weights = np.array([0.5, 0.3, 0.1, 0.05, 0.05])
    bias = np.array(
        [
            [True, False, False, False, True],  # list: analyst + pragmatist -> alignment 0.55, specialisation 0.6
            [False, True, False, False, False],  # one key: alignment 0.3, specialisation 0.8
            [False] * 5,  # no keys
        ]
    )
    np.testing.assert_allclose(archetype_boost(weights, bias), [0.08 * 0.55 * 0.6, 0.08 * 0.3 * 0.8, 0.0])
    # margin 0.04 -> confidence 0.5
    mixed = np.array([0.3, 0.26, 0.2, 0.14, 0.1])
    assert archetype_confidence(mixed, 0.08) == pytest.approx(0.5)
    np.testing.assert_allclose(archetype_boost(mixed, bias[:1]), [0.08 * 0.4 * 0.6 * 0.5])
    # no margin, no boost
    assert archetype_boost(np.full(5, 0.2), bias[:1])[0] == 0.0


def test_archetype_boost_clamp() -> None:
    weights = np.array([0.5, 0.3, 0.1, 0.05, 0.05])
    bias = np.array([[True, False, False, False, True]])
    assert archetype_boost(weights, bias, k=1.0)[0] == pytest.approx(0.15)  # raw 0.33
    assert archetype_boost(weights, bias, k=1.0, max_boost=0.5)[0] == pytest.approx(0.33)


def test_text_signals() -> None:
    text = post_text("Crypto is back. #Bitcoin #HODL and #food")
    assert text.hashtags == {"#bitcoin", "#hodl", "#food"}
    assert "bitcoin" not in text.words and "crypto" in text.words
    assert has_keyword(text, ["crypto"]) and not has_keyword(text, ["food"])  # only a hashtag says food
    assert has_keyword(post_text("about climate change today"), ["climate change"])
    assert "#bitcoin" in interest_hashtags(["crypto"]) and "#quilting" in interest_hashtags(["quilting"])
    assert dominant_archetype({"analyst": 0.6, "skeptic": 0.4}) == "analyst"
    assert dominant_archetype({"analyst": 0.4, "skeptic": 0.4, "enthusiast": 0.2}) is None


def test_debug_sampling_is_a_hash_of_agent_and_time() -> None:
    decisions = [sampled_for_debug(f"agent_{i}", NOW, 0.3) for i in range(400)]
    assert decisions == [sampled_for_debug(f"agent_{i}", NOW, 0.3) for i in range(400)]
    assert 0.2 < np.mean(decisions) < 0.4
    assert not any(sampled_for_debug(f"agent_{i}", NOW, 0.0) for i in range(50))
    assert all(sampled_for_debug(f"agent_{i}", NOW, 1.0) for i in range(50))


# ================================================================================ config
@pytest.mark.parametrize(
    "mode, fields, name",
    [
        ("engagement_recency", {"like_weight": -1}, "like_weight"),
        ("engagement_recency", {"reshare_weight": -0.5}, "reshare_weight"),
        ("engagement_recency", {"reply_weight": -2}, "reply_weight"),
        ("engagement_recency", {"recency_half_life_days": 0}, "recency_half_life_days"),
        ("engagement_recency", {"min_engagement_score": 1.5}, "min_engagement_score"),
        ("engagement_recency", {"candidate_limit": 0}, "candidate_limit"),
        ("engagement_recency", {"cold_start_weight": -0.1}, "cold_start_weight"),
        ("engagement_recency", {"half_life": 3}, "half_life"),
        ("pooled_boost", {"priority_boost": 1.5}, "priority_boost"),
        ("pooled_boost", {"score_ceiling": 0}, "score_ceiling"),
        ("pooled_boost", {"min_priority_items": -1}, "min_priority_items"),
        ("pooled_boost", {"boost": 0.2}, "boost"),
        ("context_rerank", {"candidate_limit": 0}, "candidate_limit"),
        ("context_rerank", {"primary_interest_boost": -0.1}, "primary_interest_boost"),
        ("context_rerank", {"other_interest_boost": 2}, "other_interest_boost"),
        ("context_rerank", {"followed_author_boost": -1}, "followed_author_boost"),
        ("context_rerank", {"mutual_follow_boost": 1.1}, "mutual_follow_boost"),
        ("context_rerank", {"hashtag_boost": -0.05}, "hashtag_boost"),
        ("context_rerank", {"keyword_boost": 3}, "keyword_boost"),
        ("context_rerank", {"preferred_format_boost": -0.06}, "preferred_format_boost"),
        ("context_rerank", {"disliked_format_penalty": -0.06}, "disliked_format_penalty"),
        ("context_rerank", {"boost_min": 0.1}, "boost_min"),
        ("context_rerank", {"boost_max": -0.1}, "boost_max"),
        ("context_rerank", {"archetype_k": -0.08}, "archetype_k"),
        ("context_rerank", {"archetype_confidence_min": 0}, "archetype_confidence_min"),
        ("context_rerank", {"archetype_boost_max": -1}, "archetype_boost_max"),
        ("context_rerank", {"debug_sample_rate": 1.5}, "debug_sample_rate"),
        ("context_rerank", {"enable_rerank": "sometimes"}, "enable_rerank"),
        ("context_rerank", {"debug": "loud"}, "debug"),
        ("context_rerank", {"limit": 60}, "limit"),
    ],
)
def test_bad_mode_config_names_the_field(mode: str, fields: dict[str, Any], name: str) -> None:
    with pytest.raises(ValidationError) as info:
        ranking_config(mode, **fields)
    (error,) = info.value.errors()
    assert error["loc"] == (name,)


def test_range_is_stated_in_the_error() -> None:
    with pytest.raises(ValidationError, match="greater than 0"):
        ranking_config("engagement_recency", recency_half_life_days=-1)
    with pytest.raises(ValidationError, match="less than or equal to 1"):
        ranking_config("context_rerank", debug_sample_rate=2)


def test_a_knob_of_another_mode_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        ranking_config("pooled_boost", recency_half_life_days=1.0)
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [(("recency_half_life_days",), "extra_forbidden")]


# ============================================================== every new mode on a real store
@pytest.fixture(scope="module")
def world(embedder: Any) -> tuple[list[SocialAgent], DictSocialGraph, FeedRetriever]:
    agents = generate_population(AgentsConfig(n_agents=12), ["crypto", "food", "music", "science"], seed=1)
    graph = generate_follow_graph(agents, NetworkConfig(mean_out_degree=4.0), seed=1)
    agents = with_following(agents, graph)
    posts = generate_corpus(
        SyntheticCorpusConfig(n_posts=300, reference_time=NOW), seed=1, authors={a.id: a.interests for a in agents}
    )
    return agents, graph, store(embedder, posts, feed_size=10)


def recomputed(mode: str, c: RankedCandidate) -> float:
    parts = c.components
    if mode == "engagement_recency":
        return parts["engagement_score"] * parts["recency_decay"]
    if mode == "pooled_boost":
        return parts["similarity"] + parts["priority_boost"]
    return c.base_score + parts["boost"] + parts["archetype_boost"]


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["engagement_recency", "pooled_boost", "context_rerank"])
def test_rank_many_on_a_real_store(world: Any, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    agents, graph, retriever = world
    reshares = ReshareLog()
    reshares.record(agents[0].id, 5, step=0)
    mode_ranker = ranker(mode, retriever, graph, np.random.default_rng(0), reshares)
    newest = [retriever.posts[r] for r in np.argsort(-retriever.timestamps_us)]
    # each agent has already seen the 20 newest posts by others
    exclude = {a.id: set([p.id for p in newest if p.author_id != a.id][:20]) for a in agents}
    queries: list[int] = []
    original = retriever.query_rows
    monkeypatch.setattr(retriever, "query_rows", lambda *a, **k: queries.append(1) or original(*a, **k))
    feeds = mode_ranker.rank_many(agents, NOW, exclude)
    assert len(queries) <= 3  # batched: a few Chroma queries for the whole step
    monkeypatch.undo()
    vectors = retriever.vectors
    for agent, feed in zip(agents, feeds):
        assert len(feed) == 10
        ids = feed_ids(feed)
        assert len(set(ids)) == 10
        assert not any(c.post.author_id == agent.id for c in feed)
        assert not set(ids) & exclude[agent.id]
        assert all(c.post.timestamp <= NOW for c in feed)
        for c in feed:
            assert c.final_score == pytest.approx(recomputed(mode, c), abs=1e-9)
            followed = c.post.author_id in agent.following
            assert c.in_network == (followed or c.via_agent_id is not None)
            exact = (1.0 + float(vectors[c.row] @ retriever.embed_interests(agent.interests))) / 2.0
            assert c.components["similarity"] == pytest.approx(exact, abs=1e-5)
    # batching changes nothing: one agent alone gets the same feed
    alone = mode_ranker.rank(agents[3], NOW, exclude[agents[3].id])
    assert feed_ids(alone) == feed_ids(feeds[3])


@pytest.mark.integration
def test_context_rerank_switch_off_is_similarity_order(world: Any) -> None:
    agents, graph, retriever = world
    feeds = ranker("context_rerank", retriever, graph, enable_rerank=False).rank_many(agents, NOW)
    preference = ranker("preference", retriever, graph).rank_many(agents, NOW)
    for feed, expected in zip(feeds, preference):
        assert feed_ids(feed) == feed_ids(expected)
        assert all(c.components["boost"] == 0 and c.components["archetype_boost"] == 0 for c in feed)
        assert all(c.final_score == c.base_score for c in feed)
    on = ranker("context_rerank", retriever, graph).rank_many(agents, NOW)
    assert any(feed_ids(a) != feed_ids(b) for a, b in zip(on, feeds))
    for feed in on:
        finals = [c.final_score for c in feed]
        assert finals == sorted(finals, reverse=True)


@pytest.mark.integration
def test_context_rerank_boosts_follow_the_agents_context(world: Any) -> None:
    agents, graph, retriever = world
    rerank = ranker("context_rerank", retriever, graph)
    assert isinstance(rerank, ContextRerankRanker)
    agent = next(a for a in agents if a.following and len(a.interests) >= 1)
    view = rerank._view(agent, ())
    rows = np.arange(len(retriever))
    boost, archetype = rerank.boosts(view, rows)
    posts = retriever.posts
    on_primary = np.array([p.topic == agent.interests[0] for p in posts])
    followed = np.array([p.author_id in agent.following for p in posts])
    off_topic = np.array([p.topic not in agent.interests for p in posts])
    # every primary-topic post gets at least +0.10 - 0.06 (a disliked format), off-topic unfollowed posts
    # at most the hashtag + keyword + format boosts
    assert np.all(boost[on_primary] >= 0.04 - 1e-12)
    assert np.all(boost[off_topic & ~followed] <= 0.05 + 0.03 + 0.06 + 1e-12)
    assert np.all(boost[followed] >= 0.12 - 0.06 - 1e-12)
    assert np.all((archetype >= 0) & (archetype <= 0.08 * 0.8 + 1e-12))


@pytest.mark.integration
def test_context_rerank_debug_records(world: Any) -> None:
    agents, graph, retriever = world
    traced = ranker("context_rerank", retriever, graph, debug=True, debug_sample_rate=1.0)
    feeds = traced.rank_many(agents, NOW)
    records = traced.debug_records()  # type: ignore[attr-defined]
    assert [r["agent_id"] for r in records] == [a.id for a in agents]
    for record, feed in zip(records, feeds):
        assert record["now"] == NOW.isoformat()
        items = record["items"]
        assert [i["post_id"] for i in items] == feed_ids(feed)
        assert [i["final_rank"] for i in items] == list(range(1, 11))
        for item, c in zip(items, feed):
            assert item["final"] == pytest.approx(item["base"] + item["boost"] + item["archetype_boost"])
            assert item["final"] == c.final_score and item["base"] == c.base_score
            assert item["movement"] == item["similarity_rank"] - item["final_rank"]
    # sampling depends on (agent, time) only: another order, another batching, the same agents
    sampled = {"debug": True, "debug_sample_rate": 0.5}
    forward = ranker("context_rerank", retriever, graph, **sampled)
    backward = ranker("context_rerank", retriever, graph, **sampled)
    forward.rank_many(agents, NOW)
    for agent in reversed(agents):
        backward.rank(agent, NOW)
    chosen = {r["agent_id"] for r in forward.debug_records()}  # type: ignore[attr-defined]
    assert chosen == {r["agent_id"] for r in backward.debug_records()}  # type: ignore[attr-defined]
    assert chosen == {a.id for a in agents if sampled_for_debug(a.id, NOW, 0.5)}
    # off by default
    quiet = ranker("context_rerank", retriever, graph)
    quiet.rank_many(agents, NOW)
    assert quiet.debug_records() == []  # type: ignore[attr-defined]


@pytest.mark.integration
def test_context_rerank_reads_the_agents_tables_from_the_context(world: Any) -> None:
    agents, graph, retriever = world
    tables = AgentsConfig(
        archetype_preferred_formats={
            "analyst": ["tip"],
            "storyteller": ["tip"],
            "skeptic": ["tip"],
            "enthusiast": ["tip"],
            "pragmatist": ["tip"],
        },
        archetype_disliked_formats={
            "analyst": ["list"],
            "storyteller": ["list"],
            "skeptic": ["list"],
            "enthusiast": ["list"],
            "pragmatist": ["list"],
        },
    )
    tabled = ranker("context_rerank", retriever, graph, agents=tables)
    assert isinstance(tabled, ContextRerankRanker) and tabled.agents_config is tables
    default = ranker("context_rerank", retriever, graph)
    assert isinstance(default, ContextRerankRanker) and default.agents_config == AgentsConfig()
    # the tables reach the boosts: only the format term differs (no clamp binds at these weights)
    agent = agents[0]
    dominant = dominant_archetype(agent.archetype_weights)
    assert dominant is not None
    rows = np.arange(len(retriever))
    difference = tabled.boosts(tabled._view(agent, ()), rows)[0] - default.boosts(default._view(agent, ()), rows)[0]

    def format_term(config: AgentsConfig, fmt: str) -> float:
        return 0.06 * (fmt in config.archetype_preferred_formats[dominant]) - 0.06 * (
            fmt in config.archetype_disliked_formats[dominant]
        )

    expected = [format_term(tables, p.format) - format_term(AgentsConfig(), p.format) for p in retriever.posts]
    np.testing.assert_allclose(difference, expected, atol=1e-12)
    for mode in KNOWN_MODES:  # every mode is built from the same context, the tables included
        assert ranker(mode, retriever, graph, agents=tables).mode == mode
    # a candidate limit below the feed size is refused, naming the field
    with pytest.raises(ValueError, match=r"ranking\.candidate_limit: must be >= rag\.feed_size \(10\), got 5"):
        ranker("context_rerank", retriever, graph, candidate_limit=5)
