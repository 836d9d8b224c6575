"""Seeded initial follow graph: lognormal out-degrees, interest homophily, preferential attachment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prism_experiments.agents.seeding import Seed, stream_rng
from prism_experiments.agents.social_agent import SocialAgent
from prism_experiments.network.config import NetworkConfig
from prism_experiments.network.graph import DictSocialGraph, SocialGraph

_NAMESPACE = "network.follow_graph"
_DEGREES, _ORDER, _FOLLOWEES = range(3)
_WORD_BITS = 64


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


def weighted_sample_without_replacement(rng: np.random.Generator, weights: np.ndarray, k: int) -> np.ndarray:
    """k distinct indices by successive sampling (each draw ∝ weight among those not yet drawn).

    Sparse case: draw with replacement from the CDF and keep first occurrences, which
    has exactly the successive-sampling distribution. Dense case (k >= a quarter of the
    candidates): Gumbel-top-k (Kool et al. 2019), same distribution, no rejection.
    """
    n_positive = int(np.count_nonzero(weights > 0))
    if k > n_positive:
        raise ValueError(f"k: must be <= the number of positive weights ({n_positive}), got {k}")
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if 4 * k >= n_positive:
        with np.errstate(divide="ignore"):
            keys = np.log(weights) + rng.gumbel(size=weights.shape[0])
        top = np.argpartition(-keys, k - 1)[:k]
        return top[np.argsort(-keys[top], kind="stable")].astype(np.int64)
    cdf = np.cumsum(weights)
    chosen: list[int] = []
    taken: set[int] = set()
    while len(chosen) < k:
        draws = np.searchsorted(cdf, rng.random(2 * (k - len(chosen)) + 8) * cdf[-1], side="right")
        # Rounding can land past the end or on a zero-weight slot; discard those draws.
        draws = draws[draws < weights.shape[0]]
        for index in draws[weights[draws] > 0].tolist():
            if index not in taken:
                taken.add(index)
                chosen.append(index)
                if len(chosen) == k:
                    break
    return np.asarray(chosen, dtype=np.int64)


def generate_follow_graph(agents: Sequence[SocialAgent], config: NetworkConfig, seed: Seed) -> DictSocialGraph:
    """Initial follow graph over `agents`, deterministic in `seed`.

    Agents are visited in a seeded random order; each follows out_degree others drawn
    without replacement with weight
        homophily^[shares >= 1 interest] * (in_degree + attachment_offset)^preferential_attachment,
    in-degrees updated after each agent (directed preferential attachment with initial
    attractiveness: Price 1976; Dorogovtsev, Mendes & Samukhin 2000; exponent as in
    Krapivsky, Redner & Leyvraz 2000). No self-follows.
    """
    ids = [agent.id for agent in agents]
    if len(set(ids)) != len(ids):
        raise ValueError("agents: ids must be unique")
    graph = DictSocialGraph(ids)
    n = len(ids)
    if n < 2:
        return graph
    degrees = draw_out_degrees(stream_rng(seed, _NAMESPACE, _DEGREES), config, n)
    order = stream_rng(seed, _NAMESPACE, _ORDER).permutation(n)
    rng = stream_rng(seed, _NAMESPACE, _FOLLOWEES)
    bits = interest_bitsets(agents)
    in_degree = np.zeros(n)
    attractiveness = (in_degree + config.attachment_offset) ** config.preferential_attachment
    attractiveness_shared = attractiveness * config.homophily
    for i in order.tolist():
        k = int(degrees[i])
        if k == 0:
            continue
        shared = np.any(bits & bits[i], axis=1)
        weights = np.where(shared, attractiveness_shared, attractiveness)
        weights[i] = 0.0
        followees = weighted_sample_without_replacement(rng, weights, k)
        in_degree[followees] += 1.0
        attractiveness[followees] = (in_degree[followees] + config.attachment_offset) ** config.preferential_attachment
        attractiveness_shared[followees] = attractiveness[followees] * config.homophily
        for j in followees.tolist():
            graph.follow(ids[i], ids[j])
    return graph


def with_following(agents: Sequence[SocialAgent], graph: SocialGraph) -> list[SocialAgent]:
    """Copies of `agents` whose `following` is their follow set in `graph`."""
    return [agent.model_copy(update={"following": set(graph.following(agent.id))}, deep=True) for agent in agents]
