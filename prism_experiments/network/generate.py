"""Seeded initial follow graph: lognormal out-degrees, interest homophily, preferential attachment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prism_experiments.agents.population import agent_positions
from prism_experiments.agents.seeding import Seed, stream_rng
from prism_experiments.agents.social_agent import SocialAgent
from prism_experiments.network.config import NetworkConfig
from prism_experiments.network.follow_trees import FollowTrees, follow_attractiveness, post_rate_fitness
from prism_experiments.network.graph import DictSocialGraph, SocialGraph
from prism_experiments.network.successive import weighted_sample_without_replacement
from prism_experiments.politics.config import PoliticsConfig
from prism_experiments.politics.identity import fit_homophily, follow_multipliers, sides

_NAMESPACE = "network.follow_graph"
_DEGREES, _ORDER, _FOLLOWEES = range(3)
_WORD_BITS = 64
#: below this many agents a draw scans every agent's weight (the graphs every calibrated world was fitted on);
#: from it on, `FollowTrees` draws from the same law in O(log n) per draw (not the same draws)
DIRECT_BELOW = 16_384


def draw_out_degrees(rng: np.random.Generator, config: NetworkConfig, n_agents: int) -> np.ndarray:
    """Lognormal out-degrees with mean `mean_out_degree`, clipped to [0, n_agents - 1].

    median = mean * exp(-sigma^2 / 2) makes the lognormal's mean the configured one;
    stochastic rounding (floor(x + U)) keeps it when converting to integers.
    """
    if n_agents < 2:
        return np.zeros(n_agents, dtype=np.int64)
    sigma = config.out_degree_sigma
    median = config.mean_out_degree * np.exp(-0.5 * sigma**2)
    raw = median * np.exp(sigma * rng.standard_normal(n_agents))
    return np.clip(np.floor(raw + rng.random(n_agents)), 0, n_agents - 1).astype(np.int64)


def interest_bitsets(agents: Sequence[SocialAgent]) -> np.ndarray:
    """(n_agents, n_words) uint64 bitsets of each agent's interests (one bit per topic)."""
    topic_bit = {topic: bit for bit, topic in enumerate(sorted({t for a in agents for t in a.interests}))}
    n_words = max(1, -(-len(topic_bit) // _WORD_BITS))
    bits = np.zeros((len(agents), n_words), dtype=np.uint64)
    for row, agent in enumerate(agents):
        for topic in agent.interests:
            bit = topic_bit[topic]
            bits[row, bit // _WORD_BITS] |= np.uint64(1) << np.uint64(bit % _WORD_BITS)
    return bits


class _FollowWeights:
    """Every agent's follow weights for a scan of all n per draw (below `DIRECT_BELOW` agents).

    Agent i weighs j != i by attractiveness_j x (homophily if they share an interest, else 1); one
    shared-interest mask per distinct interest set (at most a few thousand sets of n booleans).
    """

    def __init__(
        self,
        agents: Sequence[SocialAgent],
        config: NetworkConfig,
        fitness: np.ndarray | None = None,
        political: dict[int, np.ndarray] | None = None,
    ):
        self.bits = interest_bitsets(agents)
        #: politics on: a political follower's side -> every followee's weight multiplier (REQ-POL-2); None: off
        self.political = political
        self.sides = sides(agent_positions(agents)) if political is not None else None
        self.n = len(self.bits)
        self.config = config
        self.fitness = fitness
        self.in_degree = np.zeros(self.n)
        self.attractiveness = follow_attractiveness(self.in_degree, config, fitness)
        self.attractiveness_shared = self.attractiveness * config.homophily
        self.positive = int(np.count_nonzero(self.attractiveness > 0))
        self.masks: dict[bytes, np.ndarray] = {}

    def shares(self, rows: np.ndarray, i: int) -> np.ndarray:
        """Whether each of `rows` shares an interest with agent i."""
        if self.bits.shape[1] == 1:
            return (self.bits[rows, 0] & self.bits[i, 0]) != 0
        return np.any(self.bits[rows] & self.bits[i], axis=-1)

    def weights(self, i: int) -> np.ndarray:
        """Agent i's weight for every agent (itself 0)."""
        key = self.bits[i].tobytes()
        if key not in self.masks:
            self.masks[key] = self.shares(np.arange(self.n), i)
        weights = np.where(self.masks[key], self.attractiveness_shared, self.attractiveness)
        # multiplied only when politics is on: without it the weights (and the draws) are the same as ever
        if self.political is not None and self.sides is not None and self.sides[i] != 0:
            weights = weights * self.political[int(self.sides[i])]
        weights[i] = 0.0
        return weights

    def sample(self, rng: np.random.Generator, i: int, k: int) -> np.ndarray:
        """k distinct followees of agent i by `weighted_sample_without_replacement` over its weights."""
        n_positive = self.positive - int(self.attractiveness[i] > 0)
        return weighted_sample_without_replacement(rng, self.weights(i), k, n_positive)

    def followed(self, followees: np.ndarray) -> None:
        """In-degrees and attractiveness after `followees` gained a follower each."""
        before = self.attractiveness[followees]
        self.in_degree[followees] += 1.0
        fitness = None if self.fitness is None else self.fitness[followees]
        after = follow_attractiveness(self.in_degree[followees], self.config, fitness)
        self.attractiveness[followees] = after
        self.attractiveness_shared[followees] = after * self.config.homophily
        self.positive += int(np.count_nonzero(after > 0)) - int(np.count_nonzero(before > 0))


def generate_follow_graph(
    agents: Sequence[SocialAgent],
    config: NetworkConfig,
    seed: Seed,
    *,
    direct_below: int = DIRECT_BELOW,
    politics: PoliticsConfig | None = None,
) -> DictSocialGraph:
    """Initial follow graph over `agents`, deterministic in `seed`.

    Agents are visited in a seeded random order; each follows out_degree others drawn
    without replacement with weight
        homophily^[shares >= 1 interest] * (in_degree + attachment_offset)^preferential_attachment
        [* (post_rate / mean post rate)^followee_post_rate_elasticity, when set],
    in-degrees updated after each agent (directed preferential attachment with initial
    attractiveness: Price 1976; Dorogovtsev, Mendes & Samukhin 2000; exponent as in
    Krapivsky, Redner & Leyvraz 2000; the post-rate factor a fitness as in Bianconi & Barabasi 2001). No
    self-follows. Below `direct_below` agents each draw scans every
    weight; from it on, sum trees draw from the same law in O(log n) (`follow_trees.py`).

    `politics` (enabled): a political follower's weights are also multiplied by the fitted homophily
    (`politics.identity.fit_homophily`: same side x same, non-political x neutral), REQ-POL-2; every draw then scans
    all weights (the sum trees do not know sides).
    """
    ids = [agent.id for agent in agents]
    if len(set(ids)) != len(ids):
        raise ValueError("agents: ids must be unique")
    n = len(ids)
    if n < 2:
        return DictSocialGraph(ids)
    degrees = draw_out_degrees(stream_rng(seed, _NAMESPACE, _DEGREES), config, n)
    order = stream_rng(seed, _NAMESPACE, _ORDER).permutation(n)
    rng = stream_rng(seed, _NAMESPACE, _FOLLOWEES)
    fitness = post_rate_fitness(np.array([agent.post_rate for agent in agents]), config)
    political = None
    if politics is not None and politics.enabled:
        political = follow_multipliers(agent_positions(agents), fit_homophily(politics))
    weights: _FollowWeights | FollowTrees = (
        _FollowWeights(agents, config, fitness, political)
        if n < direct_below or political is not None
        else FollowTrees(interest_bitsets(agents), config, fitness=fitness)
    )
    followees = [np.empty(0, dtype=np.int64)] * n
    for i in order.tolist():
        k = int(degrees[i])
        if k == 0:
            continue
        followees[i] = weights.sample(rng, i, k)
        weights.followed(followees[i])
    return DictSocialGraph.from_followee_rows(ids, followees)


def with_following(agents: Sequence[SocialAgent], graph: SocialGraph) -> list[SocialAgent]:
    """Copies of `agents` whose `following` is their follow set in `graph`."""
    return [agent.model_copy(update={"following": set(graph.following(agent.id))}, deep=True) for agent in agents]
