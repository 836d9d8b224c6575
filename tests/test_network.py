"""Follow graph: DictSocialGraph semantics, NetworkConfig validation, seeded generation."""

from __future__ import annotations

import itertools
import pickle
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from scipy import stats
from validation_helpers import assert_refused

from prism_experiments.agents import AgentsConfig, SocialAgent, generate_population
from prism_experiments.domain import TOPICS
from prism_experiments.network import (
    DictSocialGraph,
    NetworkConfig,
    SocialGraph,
    draw_out_degrees,
    follow_trees,
    generate,
    generate_follow_graph,
    graph_stats,
    shared_interest_edge_share,
    weighted_sample_without_replacement,
    with_following,
)
from prism_experiments.network.graph import follower_counts


@pytest.fixture(scope="module")
def agents() -> list[SocialAgent]:
    return generate_population(AgentsConfig(n_agents=400), TOPICS, 21)


# --- DictSocialGraph ------------------------------------------------------------------------


def test_dict_graph_satisfies_the_protocol() -> None:
    assert isinstance(DictSocialGraph(["a"]), SocialGraph)


def test_follow_is_idempotent_and_ignores_self_follows() -> None:
    graph = DictSocialGraph(["a", "b", "c"])
    assert graph.follow("a", "b") is True
    assert graph.follow("a", "b") is False
    assert graph.follow("c", "c") is False
    assert graph.edges() == [("a", "b")]
    assert graph.is_following("a", "b") and not graph.is_following("b", "a")
    assert graph.following("a") == {"b"} and graph.followers("b") == {"a"}
    assert graph.following("c") == set() and graph.followers("c") == set()


def test_follow_registers_accounts_that_are_not_agents() -> None:
    graph = DictSocialGraph(["a"])
    assert graph.follow("a", "external_author")
    assert graph.agent_ids() == ["a", "external_author"]
    assert graph.following("nobody") == frozenset()


def test_returned_sets_cannot_mutate_the_graph() -> None:
    graph = DictSocialGraph.from_edges(["a", "b"], [("a", "b")])
    followees = graph.following("a")
    with pytest.raises(AttributeError):
        followees.add("x")  # type: ignore[attr-defined]
    assert isinstance(graph.followers("b"), frozenset)
    assert graph.edges() == [("a", "b")]


def test_copy_is_isolated() -> None:
    graph = DictSocialGraph.from_edges(["a", "b", "c"], [("a", "b")])
    clone = graph.copy()
    assert clone == graph
    clone.follow("b", "c")
    graph.follow("c", "a")
    assert graph.edges() == [("a", "b"), ("c", "a")]
    assert clone.edges() == [("a", "b"), ("b", "c")]
    assert clone.followers("c") == {"b"} and graph.followers("c") == set()


def test_follower_counts_from_graph_rows_equal_a_counter_over_the_ids() -> None:
    rng = np.random.default_rng(3)
    ids = [f"u{i}" for i in range(60)]
    edges = [(ids[a], ids[b]) for a, b in rng.integers(0, 60, size=(400, 2)) if a != b]
    graph, other = DictSocialGraph.from_edges(ids, edges), DictSocialGraph.from_edges(ids[:5], [("u0", "u1")])
    graph.follow("u0", "imported_author")  # added later: not a starting follow
    follow_sets = [graph.starting_following(i) for i in ids[::2]] + [other.starting_following("u0")]
    follow_sets += [frozenset({"u1", "outside"}), graph.starting_following("nobody")]
    expected = Counter(followee for follows in follow_sets for followee in follows)
    assert follower_counts(follow_sets) == expected and expected["u1"] > 1


def test_starting_following_is_a_read_only_view_of_the_starting_follows() -> None:
    """An agent's `FollowSet` reads the graph's starting rows: the same ids as `following` at the start, unchanged
    by later follows, equal to the set of its ids, picklable with its graph, and `|` gives a plain frozenset."""
    graph = DictSocialGraph.from_edges(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "a"), ("a", "b")])
    view = graph.starting_following("a")
    assert view == {"b", "c"} == graph.following("a") and len(view) == 2
    assert "b" in view and "a" not in view and "nobody" not in view and 3 not in view
    graph.follow("c", "a")
    graph.follow("b", "c")
    graph.follow("a", "imported_author")
    assert view == {"b", "c"} and graph.following("a") == {"b", "c", "imported_author"}
    assert graph.starting_following("c") == set() and graph.starting_following("imported_author") == set()
    assert graph.starting_following("nobody") == set()
    assert view | {"z"} == frozenset({"b", "c", "z"})
    assert pickle.loads(pickle.dumps(view)) == view
    agent = SocialAgent(id="a", interests=["tech"]).model_copy(update={"following": view})
    assert agent.following == {"b", "c"}
    assert SocialAgent(id="d", interests=["tech"], following=["a"]).following == {"a"}


def test_from_followee_rows_matches_from_edges_and_shares_rows_with_copies() -> None:
    rows = [np.array([2, 1]), np.array([], dtype=np.int64), np.array([0])]
    graph = DictSocialGraph.from_followee_rows(["a", "b", "c"], rows)
    assert graph == DictSocialGraph.from_edges(["a", "b", "c"], [("a", "c"), ("a", "b"), ("c", "a")])
    assert graph.followers("a") == {"c"} and graph.in_degree("b") == 1 and graph.out_degree("a") == 2
    clone = graph.copy()
    clone.follow("b", "a")
    assert clone.is_following("b", "a") and not graph.is_following("b", "a")
    assert clone.number_of_edges() == 4 and graph.number_of_edges() == 3


def test_from_edges_is_strict() -> None:
    with pytest.raises(ValueError, match="edges: 'z'"):
        DictSocialGraph.from_edges(["a"], [("a", "z")])
    with pytest.raises(ValueError, match="self-follow"):
        DictSocialGraph.from_edges(["a"], [("a", "a")])
    with pytest.raises(ValueError, match="agent_id"):
        DictSocialGraph([""])
    graph = DictSocialGraph.from_edges(["a", "b"], [("b", "a"), ("b", "a")])
    assert graph.number_of_edges() == 1


def test_edges_are_sorted_and_networkx_agrees() -> None:
    ids = ["c", "a", "b", "d"]
    edges = [("c", "a"), ("a", "b"), ("b", "a"), ("a", "c"), ("d", "a")]
    graph = DictSocialGraph.from_edges(ids, edges)
    assert graph.edges() == sorted(edges)
    assert graph.agent_ids() == ids
    nx_graph = graph.to_networkx()
    assert list(nx_graph.nodes) == ids
    assert sorted(nx_graph.edges) == sorted(edges)
    assert {n: d for n, d in nx_graph.in_degree()} == {n: len(graph.followers(n)) for n in ids}
    assert {n: graph.in_degree(n) for n in ids} == {"a": 3, "b": 1, "c": 1, "d": 0}
    assert graph.out_degree("a") == 2


# --- config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field", "allowed"),
    [
        ({"mean_out_degree": -1}, "mean_out_degree", "greater than or equal to 0"),
        ({"out_degree_sigma": -0.1}, "out_degree_sigma", "greater than or equal to 0"),
        ({"homophily": 0.5}, "homophily", "greater than or equal to 1"),
        ({"preferential_attachment": -1}, "preferential_attachment", "greater than or equal to 0"),
        ({"attachment_offset": 0}, "attachment_offset", "greater than 0"),
        ({"mean_out_degree": float("inf")}, "mean_out_degree", "finite number"),
        ({"reciprocity": 0.5}, "reciprocity", "Extra inputs are not permitted"),
        (
            {"followee_post_rate_elasticity": -0.5},
            "followee_post_rate_elasticity",
            "must be null (off) or a number in [0, 5]",
        ),
        (
            {"followee_post_rate_elasticity": 6.0},
            "followee_post_rate_elasticity",
            "must be null (off) or a number in [0, 5]",
        ),
    ],
)
def test_bad_network_config_values_are_rejected(overrides: dict, field: str, allowed: str) -> None:
    assert_refused(NetworkConfig, overrides, field, allowed)


# --- sampling -------------------------------------------------------------------------------


def _exact_pair_inclusion(weights: np.ndarray) -> np.ndarray:
    """P(i in a 2-draw successive sample), enumerated by hand: sum over ordered pairs."""
    total = weights.sum()
    inclusion = np.zeros(len(weights))
    for i, j in itertools.permutations(range(len(weights)), 2):
        p = weights[i] / total * weights[j] / (total - weights[i])
        inclusion[i] += p
        inclusion[j] += p
    return inclusion


@pytest.mark.parametrize("n_candidates", [12, 5])  # 12: rejection branch, 5: Gumbel-top-k branch
def test_weighted_sampling_matches_successive_sampling(n_candidates: int) -> None:
    weights = np.arange(n_candidates, dtype=float)  # index 0 has weight 0: never drawn
    rng = np.random.default_rng(0)
    reps = 20_000
    counts = np.zeros(n_candidates)
    for _ in range(reps):
        sample = weighted_sample_without_replacement(rng, weights, 2)
        assert len(set(sample.tolist())) == 2
        counts[sample] += 1
    assert counts[0] == 0
    np.testing.assert_allclose(counts / reps, _exact_pair_inclusion(weights), atol=0.015)


def test_sampling_more_than_the_candidates_is_rejected() -> None:
    with pytest.raises(ValueError, match="k: must be <= the number of positive weights \\(2\\)"):
        weighted_sample_without_replacement(np.random.default_rng(0), np.array([0.0, 1.0, 1.0]), 3)
    taken = weighted_sample_without_replacement(np.random.default_rng(0), np.array([0.0, 1.0, 1.0]), 2)
    assert sorted(taken.tolist()) == [1, 2]


def test_out_degrees_keep_the_mean_and_the_clip() -> None:
    rng = np.random.default_rng(1)
    degrees = draw_out_degrees(rng, NetworkConfig(mean_out_degree=20, out_degree_sigma=0.8), 100_000)
    assert degrees.mean() == pytest.approx(20, rel=0.02)
    assert np.median(degrees) == pytest.approx(20 * np.exp(-0.32), abs=1)
    exact = draw_out_degrees(rng, NetworkConfig(mean_out_degree=7.5, out_degree_sigma=0.0), 10_000)
    assert set(exact.tolist()) == {7, 8} and exact.mean() == pytest.approx(7.5, abs=0.05)
    clipped = draw_out_degrees(rng, NetworkConfig(mean_out_degree=1000), 30)
    assert clipped.max() <= 29


# --- generation -----------------------------------------------------------------------------


def test_graph_is_deterministic_in_the_seed(agents: list[SocialAgent]) -> None:
    config = NetworkConfig()
    first = generate_follow_graph(agents, config, 8)
    assert first.edges() == generate_follow_graph(agents, config, 8).edges()
    assert first.edges() != generate_follow_graph(agents, config, 9).edges()
    assert first.agent_ids() == [a.id for a in agents]


def test_graph_has_no_self_loops_and_the_configured_mean_degree(agents: list[SocialAgent]) -> None:
    graph = generate_follow_graph(agents, NetworkConfig(), 3)
    nx_graph = graph.to_networkx()
    assert nx.number_of_selfloops(nx_graph) == 0
    assert nx_graph.number_of_edges() / len(agents) == pytest.approx(20, rel=0.1)
    out_degrees = np.array([d for _, d in nx_graph.out_degree()])
    assert out_degrees.std() > 5  # lognormal spread, not everyone following 20


def test_constant_out_degree_without_spread(agents: list[SocialAgent]) -> None:
    graph = generate_follow_graph(agents, NetworkConfig(mean_out_degree=12, out_degree_sigma=0.0), 3)
    assert {graph.out_degree(a.id) for a in agents} == {12}


def test_homophily_is_measurable(agents: list[SocialAgent]) -> None:
    homophilous = generate_follow_graph(agents, NetworkConfig(homophily=5.0), 4)
    neutral = generate_follow_graph(agents, NetworkConfig(homophily=1.0), 4)
    # Baseline: share of ordered agent pairs that share an interest, what homophily=1 should reproduce.
    interests = [set(a.interests) for a in agents]
    pairs = [(i, j) for i in range(0, len(agents), 4) for j in range(len(agents)) if i != j]
    baseline = np.mean([bool(interests[i] & interests[j]) for i, j in pairs])
    assert shared_interest_edge_share(neutral, agents) == pytest.approx(baseline, abs=0.05)
    assert shared_interest_edge_share(homophilous, agents) > shared_interest_edge_share(neutral, agents) + 0.25


def test_preferential_attachment_is_measurable(agents: list[SocialAgent]) -> None:
    linear = graph_stats(generate_follow_graph(agents, NetworkConfig(preferential_attachment=1.0), 5), agents)
    none = graph_stats(generate_follow_graph(agents, NetworkConfig(preferential_attachment=0.0), 5), agents)
    assert linear["in_degree_cv"] > 2 * none["in_degree_cv"]
    assert linear["max_in_degree"] > 2 * none["max_in_degree"]


def test_degenerate_populations() -> None:
    one = [SocialAgent(id="solo", interests=["music"])]
    assert generate_follow_graph(one, NetworkConfig(), 1).edges() == []
    two = [SocialAgent(id="a", interests=["music"]), SocialAgent(id="b", interests=["food"])]
    assert generate_follow_graph(two, NetworkConfig(mean_out_degree=50), 1).edges() == [("a", "b"), ("b", "a")]
    assert generate_follow_graph(two, NetworkConfig(mean_out_degree=0), 1).edges() == []
    with pytest.raises(ValueError, match="agents: ids must be unique"):
        generate_follow_graph([two[0], two[0]], NetworkConfig(), 1)


def test_with_following_fills_copies(agents: list[SocialAgent]) -> None:
    graph = generate_follow_graph(agents[:50], NetworkConfig(mean_out_degree=5), 2)
    filled = with_following(agents[:50], graph)
    assert [a.following for a in filled] == [set(graph.following(a.id)) for a in agents[:50]]
    assert all(a.following == set() for a in agents[:50])
    filled[0].interests.append("extra")
    assert "extra" not in agents[0].interests


def test_graph_stats_agree_with_networkx() -> None:
    graph = DictSocialGraph.from_edges(["a", "b", "c"], [("a", "b"), ("b", "a"), ("c", "a")])
    people = [
        SocialAgent(id="a", interests=["x"]),
        SocialAgent(id="b", interests=["x"]),
        SocialAgent(id="c", interests=["y"]),
    ]
    stats = graph_stats(graph, people)
    assert stats["reciprocity"] == pytest.approx(2 / 3)
    assert stats["shared_interest_edge_share"] == pytest.approx(2 / 3)
    assert stats["max_in_degree"] == 2 and stats["mean_out_degree"] == 1.0


# --- the sum-tree sampler (from DIRECT_BELOW agents on) ----------------------------------------

#: topics of a small population: agent 0 (the follower) holds a and b, so agents holding both are counted once
_TREE_INTERESTS = [["a", "b"], ["a"], ["b"], ["a", "b"], ["c"], ["c", "a"], ["b", "c"], ["c"], ["a", "b", "c"], ["c"]]
#: extra followers per agent before the draws, so attractiveness differs (agent 4 a hub outside i's topics)
_TREE_IN_DEGREES = [0, 2, 0, 5, 9, 1, 3, 0, 4, 1]


def _tree_weights(homophily: float, attachment: float, union: bool = True) -> np.ndarray:
    """w_0j by hand: homophily^[shares] x (in_degree + 1)^attachment; `union=False` counts shared topics instead."""
    own = set(_TREE_INTERESTS[0])
    shared = np.array([len(own & set(topics)) for topics in _TREE_INTERESTS], dtype=float)
    factor = np.where(shared > 0, homophily, 1.0) if union else 1.0 + (homophily - 1.0) * shared
    weights = factor * (np.array(_TREE_IN_DEGREES, dtype=float) + 1.0) ** attachment
    weights[0] = 0.0
    return weights


def _ordered_pair_probabilities(weights: np.ndarray) -> np.ndarray:
    """P(first draw j1, second draw j2) of successive sampling: w1 / W x w2 / (W - w1)."""
    total = weights.sum()
    return np.outer(weights / total, 1.0) * weights[None, :] / (total - weights[:, None]) * (1 - np.eye(len(weights)))


def _chi_square_p(counts: np.ndarray, probabilities: np.ndarray) -> float:
    """Pearson's goodness of fit over the cells expected >= 5 times (the rest pooled into one cell)."""
    expected = probabilities.ravel() * counts.sum()
    big = expected >= 5
    observed = np.append(counts.ravel()[big], counts.ravel()[~big].sum())
    expected = np.append(expected[big], expected[~big].sum())
    if expected[-1] == 0:  # no small cells
        observed, expected = observed[:-1], expected[:-1]
    return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)


@pytest.mark.parametrize("overdraw", [8, 0], ids=["one-round", "removal-rounds"])
def test_tree_draws_follow_the_successive_sampling_law(overdraw: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sum-tree sampler's ordered pairs of draws fit the exact law, and would not fit a law without
    homophily, without preferential attachment, or counting each shared topic (the union done wrong)."""
    monkeypatch.setattr(follow_trees, "_OVERDRAW", overdraw)  # 0: most agents need rounds with removals
    people = [SocialAgent(id=f"p{j}", interests=topics) for j, topics in enumerate(_TREE_INTERESTS)]
    config = NetworkConfig(homophily=6.0, preferential_attachment=1.0, attachment_offset=1.0)
    trees = follow_trees.FollowTrees(generate.interest_bitsets(people), config, fanout=2)  # 4 levels
    for j, times in enumerate(_TREE_IN_DEGREES):
        for _ in range(times):
            trees.followed(np.array([j]))
    rng = np.random.default_rng(41)
    counts = np.zeros((len(people), len(people)))
    for _ in range(12_000):
        first, second = trees.sample(rng, 0, 2)
        counts[first, second] += 1
    assert counts[0].sum() == 0 and counts[:, 0].sum() == 0  # never itself
    assert _chi_square_p(counts, _ordered_pair_probabilities(_tree_weights(6.0, 1.0))) > 1e-3
    for wrong in (_tree_weights(1.0, 1.0), _tree_weights(6.0, 0.0), _tree_weights(6.0, 1.0, union=False)):
        assert _chi_square_p(counts, _ordered_pair_probabilities(wrong)) < 1e-6
    # the trees are back to the in-degrees after the draws (removals restored)
    assert trees.levels[trees.depth][0, 0] == pytest.approx(sum(d + 1 for d in _TREE_IN_DEGREES))


def test_tree_draws_weigh_each_followee_by_its_post_rate_fitness() -> None:
    """With a fitness per agent the trees draw by fitness_j x homophily^[shares] x (in_degree_j + 1): the exact law
    with the fitness fits, the law without it does not."""
    people = [SocialAgent(id=f"p{j}", interests=topics) for j, topics in enumerate(_TREE_INTERESTS)]
    config = NetworkConfig(homophily=6.0, preferential_attachment=1.0, attachment_offset=1.0)
    fitness = np.array([1.0, 0.2, 3.0, 1.0, 0.5, 2.0, 1.0, 4.0, 0.1, 1.5])
    trees = follow_trees.FollowTrees(generate.interest_bitsets(people), config, fanout=2, fitness=fitness)
    for j, times in enumerate(_TREE_IN_DEGREES):
        for _ in range(times):
            trees.followed(np.array([j]))
    rng = np.random.default_rng(43)
    counts = np.zeros((len(people), len(people)))
    for _ in range(12_000):
        first, second = trees.sample(rng, 0, 2)
        counts[first, second] += 1
    assert _chi_square_p(counts, _ordered_pair_probabilities(fitness * _tree_weights(6.0, 1.0))) > 1e-3
    assert _chi_square_p(counts, _ordered_pair_probabilities(_tree_weights(6.0, 1.0))) < 1e-6


def test_post_rate_fitness_is_the_relative_post_rate_to_the_elasticity() -> None:
    rates = np.array([0.1, 0.2, 0.3])
    assert follow_trees.post_rate_fitness(rates, NetworkConfig()) is None
    assert follow_trees.post_rate_fitness(np.zeros(3), NetworkConfig(followee_post_rate_elasticity=1.0)) is None
    fitness = follow_trees.post_rate_fitness(rates, NetworkConfig(followee_post_rate_elasticity=2.0))
    assert fitness == pytest.approx([0.25, 1.0, 2.25])


@pytest.mark.parametrize("direct_below", [generate.DIRECT_BELOW, 0], ids=["scan", "trees"])
def test_elasticity_zero_draws_the_graph_without_it_and_a_positive_one_moves_followers_to_posters(
    agents: list[SocialAgent], direct_below: int
) -> None:
    """At 0 every fitness is 1: the same draws as without the setting (today's graphs, bit for bit). Above 0 the
    accounts that post most gain followers (Pew Research Center 2019's top tenth by tweets: 387 vs 19)."""
    varied = [a.model_copy(update={"post_rate": rate}) for a, rate in zip(agents, np.linspace(0.001, 0.5, len(agents)))]
    plain = generate_follow_graph(varied, NetworkConfig(), 7, direct_below=direct_below)
    zero = generate_follow_graph(varied, NetworkConfig(followee_post_rate_elasticity=0.0), 7, direct_below=direct_below)
    assert zero == plain
    tied = generate_follow_graph(varied, NetworkConfig(followee_post_rate_elasticity=1.0), 7, direct_below=direct_below)
    rates = np.array([a.post_rate for a in varied])
    top = rates >= np.quantile(rates, 0.9)
    before = np.array([len(plain.followers(a.id)) for a in varied])
    after = np.array([len(tied.followers(a.id)) for a in varied])
    assert after[top].mean() > 2 * before[top].mean()
    assert [tied.out_degree(a.id) for a in varied] == [plain.out_degree(a.id) for a in varied]


@pytest.mark.parametrize(
    "config",
    [
        NetworkConfig(),
        NetworkConfig(homophily=1.0, preferential_attachment=0.0),
        NetworkConfig(homophily=12.0, preferential_attachment=1.6, attachment_offset=0.3, mean_out_degree=35),
    ],
    ids=["default", "uniform", "strong"],
)
def test_tree_graphs_keep_the_scan_graphs_degrees(agents: list[SocialAgent], config: NetworkConfig) -> None:
    """Forced below its threshold, the sum-tree sampler gives every agent the scan's out-degree (the same
    degree stream), no self-follows, the same graph for the same seed, and the scan's statistics."""
    scan = generate_follow_graph(agents, config, 5)
    tree_graph = generate_follow_graph(agents, config, 5, direct_below=0)
    assert tree_graph == generate_follow_graph(agents, config, 5, direct_below=0)
    assert tree_graph != scan  # the same law, not the same draws
    assert [tree_graph.out_degree(a.id) for a in agents] == [scan.out_degree(a.id) for a in agents]
    assert nx.number_of_selfloops(tree_graph.to_networkx()) == 0
    ours, theirs = graph_stats(tree_graph, agents), graph_stats(scan, agents)
    assert ours["shared_interest_edge_share"] == pytest.approx(theirs["shared_interest_edge_share"], abs=0.04)
    assert ours["in_degree_cv"] == pytest.approx(theirs["in_degree_cv"], rel=0.25)


def test_tree_sampler_takes_every_candidate_when_dense() -> None:
    two = [SocialAgent(id="a", interests=["music"]), SocialAgent(id="b", interests=["food"])]
    graph = generate_follow_graph(two, NetworkConfig(mean_out_degree=50), 1, direct_below=0)
    assert graph.edges() == [("a", "b"), ("b", "a")]


def test_ten_thousand_agents() -> None:
    population = generate_population(AgentsConfig(n_agents=10_000), TOPICS, 1)
    graph = generate_follow_graph(population, NetworkConfig(), 1)
    assert graph.number_of_edges() / 10_000 == pytest.approx(20, rel=0.05)
    assert all(not graph.is_following(a.id, a.id) for a in population[:500])
