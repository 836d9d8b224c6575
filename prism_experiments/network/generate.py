"""Seeded initial follow graph: lognormal out-degrees, interest homophily, preferential attachment."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from prism_experiments.agents.seeding import Seed, stream_rng
from prism_experiments.agents.social_agent import SocialAgent
from prism_experiments.network.config import NetworkConfig
from prism_experiments.network.graph import DictSocialGraph, SocialGraph

_NAMESPACE = "network.follow_graph"
_DEGREES, _ORDER, _FOLLOWEES = range(3)
_WORD_BITS = 64
_MIN_BLOCK = 32  # rows per block of `_FollowWeights` (more at larger n: about sqrt(n / 16))
#: below this many agents a draw scans every agent's weight: cheaper than the blocks' fixed cost, and the same draws
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


def weighted_sample_without_replacement(
    rng: np.random.Generator, weights: np.ndarray, k: int, n_positive: int | None = None
) -> np.ndarray:
    """k distinct indices by successive sampling (each draw ∝ weight among those not yet drawn).

    Sparse case: draw with replacement from the CDF and keep first occurrences, which
    has exactly the successive-sampling distribution. Dense case (k >= a quarter of the
    candidates): Gumbel-top-k (Kool et al. 2019), same distribution, no rejection.
    """
    if n_positive is None:  # the caller may know it (`_FollowWeights` keeps the count)
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
        _take_first_occurrences(draws[weights[draws] > 0], chosen, taken, k)
    return np.asarray(chosen, dtype=np.int64)


def _take_first_occurrences(draws: np.ndarray, chosen: list[int], taken: set[int], k: int) -> None:
    """Append the draws not taken yet to `chosen`, in order, until it holds k (first occurrences of each)."""
    if len(draws) == 0:
        return
    _, first = np.unique(draws, return_index=True)
    fresh = draws[np.sort(first)].tolist()
    if taken:
        fresh = [index for index in fresh if index not in taken]
    fresh = fresh[: k - len(chosen)]
    chosen.extend(fresh)
    taken.update(fresh)


def interest_subsets(agents: Sequence[SocialAgent]) -> tuple[np.ndarray, np.ndarray, int]:
    """Per agent, the ids of every non-empty subset U of its interests and the inclusion-exclusion sign
    (-1)^(|U|+1) of each: [shares an interest with i] = sum over U of i's subsets of sign_U x [holds all of U].

    Returns (ids, signs, number of distinct subsets); rows are padded with the id n_subsets and sign 0.
    """
    ids: dict[tuple[str, ...], int] = {}
    rows: list[list[tuple[int, float]]] = []
    for agent in agents:
        topics = sorted(set(agent.interests))
        row = []
        for size in range(1, len(topics) + 1):
            for subset in combinations(topics, size):
                row.append((ids.setdefault(subset, len(ids)), 1.0 if size % 2 else -1.0))
        rows.append(row)
    width = max((len(row) for row in rows), default=1)
    subset_ids = np.full((len(rows), width), len(ids), dtype=np.int64)
    signs = np.zeros((len(rows), width))
    for r, row in enumerate(rows):
        subset_ids[r, : len(row)] = [i for i, _ in row]
        signs[r, : len(row)] = [sign for _, sign in row]
    return subset_ids, signs, len(ids)


class _FollowWeights:
    """Every agent's follow weights, kept so that one agent's draws cost O(n / b + draws x b), not O(n).

    Agent i weighs j != i by attractiveness_j x (homophily if they share an interest, else 1). Agents sit in blocks
    of `b` rows; a block keeps its total attractiveness and, per interest subset U, the attractiveness of its agents
    holding every topic of U. By inclusion-exclusion over the subsets of i's interests (at most 7 for 3 interests),
    the shared-interest mass of a block is a signed sum of a few of those columns, so a draw first finds its block
    from the block masses, then its row inside the block from the rows' own weights: the row the cumulative sum of
    every weight in row order (`weighted_sample_without_replacement`'s CDF) reaches, the same row whenever the two
    roundings of that sum agree (everywhere but a target within about 1e-13 of a boundary).
    """

    def __init__(self, agents: Sequence[SocialAgent], config: NetworkConfig):
        bits = interest_bitsets(agents)
        n = len(bits)
        self.n = n
        self.block = max(_MIN_BLOCK, int(np.sqrt(n / 16)))
        self.n_blocks = -(-n // self.block)
        self.offsets = np.arange(self.block)
        padded = self.n_blocks * self.block
        self.config = config
        self.bits = np.zeros((padded, bits.shape[1]), dtype=bits.dtype)
        self.bits[:n] = bits
        self.in_degree = np.zeros(n)
        self.attractiveness = np.zeros(padded)  # padding rows weigh 0
        self.attractiveness[:n] = (self.in_degree + config.attachment_offset) ** config.preferential_attachment
        self.attractiveness_shared = self.attractiveness * config.homophily
        self.positive = int(np.count_nonzero(self.attractiveness[:n] > 0))
        # below DIRECT_BELOW every draw scans all weights: no blocks to keep, and one shared-interest mask per
        # distinct interest set (at most a few thousand sets of n booleans)
        self.blocked = n >= DIRECT_BELOW
        self.masks: dict[bytes, np.ndarray] = {}
        if not self.blocked:
            return
        subsets, self.signs, n_subsets = interest_subsets(agents)
        self.subsets = subsets  # (n, m): subset ids (n_subsets = padding) and their signs
        blocks = self.attractiveness.reshape(self.n_blocks, self.block)
        self.block_total = blocks.sum(axis=1)
        self.block_subset = np.zeros((self.n_blocks, n_subsets + 1))
        rows = np.arange(n)
        np.add.at(
            self.block_subset,
            (np.repeat(rows // self.block, subsets.shape[1]), subsets.ravel()),
            np.repeat(self.attractiveness[:n], subsets.shape[1]),
        )
        self.block_subset[:, n_subsets] = 0.0

    def shares(self, rows: np.ndarray, i: int) -> np.ndarray:
        """Whether each of `rows` shares an interest with agent i."""
        if self.bits.shape[1] == 1:
            return (self.bits[rows, 0] & self.bits[i, 0]) != 0
        return np.any(self.bits[rows] & self.bits[i], axis=-1)

    def weights(self, i: int) -> np.ndarray:
        """Agent i's weight for every agent (itself 0): the dense case's input."""
        n = self.n
        if self.blocked:
            shared = self.shares(np.arange(n), i)
        else:
            key = self.bits[i].tobytes()
            if key not in self.masks:
                self.masks[key] = self.shares(np.arange(n), i)
            shared = self.masks[key]
        weights = np.where(shared, self.attractiveness_shared[:n], self.attractiveness[:n])
        weights[i] = 0.0
        return weights

    def sample(self, rng: np.random.Generator, i: int, k: int) -> np.ndarray:
        """k distinct followees of agent i, with `weighted_sample_without_replacement`'s draws."""
        n_positive = self.positive - int(self.attractiveness[i] > 0)
        if k > n_positive:
            raise ValueError(f"k: must be <= the number of positive weights ({n_positive}), got {k}")
        if 4 * k >= n_positive or not self.blocked:
            return weighted_sample_without_replacement(rng, self.weights(i), k, n_positive)
        b = self.block
        shared_mass = self.block_subset[:, self.subsets[i]] @ self.signs[i]
        masses = self.block_total + (self.config.homophily - 1.0) * shared_mass
        masses[i // b] -= self.attractiveness_shared[i]
        cumulative = np.cumsum(np.maximum(masses, 0.0))
        total = cumulative[-1]
        chosen: list[int] = []
        taken: set[int] = set()
        while len(chosen) < k:
            targets = rng.random(2 * (k - len(chosen)) + 8) * total
            blocks = np.searchsorted(cumulative, targets, side="right")
            inside = blocks < self.n_blocks
            blocks, targets = blocks[inside], targets[inside]
            residual = targets - np.where(blocks > 0, cumulative[np.maximum(blocks - 1, 0)], 0.0)
            rows = blocks[:, None] * b + self.offsets
            weights = np.where(self.shares(rows, i), self.attractiveness_shared[rows], self.attractiveness[rows])
            weights[rows == i] = 0.0
            offsets = np.minimum((np.cumsum(weights, axis=1) <= residual[:, None]).sum(axis=1), b - 1)
            draws = blocks * b + offsets
            _take_first_occurrences(draws[weights[np.arange(len(draws)), offsets] > 0], chosen, taken, k)
        return np.asarray(chosen, dtype=np.int64)

    def followed(self, followees: np.ndarray) -> None:
        """In-degrees, attractiveness and the block sums after `followees` gained a follower each."""
        cfg = self.config
        before = self.attractiveness[followees]
        self.in_degree[followees] += 1.0
        after = (self.in_degree[followees] + cfg.attachment_offset) ** cfg.preferential_attachment
        self.attractiveness[followees] = after
        self.attractiveness_shared[followees] = after * cfg.homophily
        self.positive += int(np.count_nonzero(after > 0)) - int(np.count_nonzero(before > 0))
        if not self.blocked:
            return
        delta = after - before
        blocks = followees // self.block
        np.add.at(self.block_total, blocks, delta)
        width = self.subsets.shape[1]
        np.add.at(
            self.block_subset, (np.repeat(blocks, width), self.subsets[followees].ravel()), np.repeat(delta, width)
        )
        self.block_subset[:, -1] = 0.0


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
    weights = _FollowWeights(agents, config)
    for i in order.tolist():
        k = int(degrees[i])
        if k == 0:
            continue
        followees = weights.sample(rng, i, k)
        weights.followed(followees)
        graph.follow_many(ids[i], [ids[j] for j in followees.tolist()])
    return graph


def with_following(agents: Sequence[SocialAgent], graph: SocialGraph) -> list[SocialAgent]:
    """Copies of `agents` whose `following` is their follow set in `graph`."""
    return [agent.model_copy(update={"following": set(graph.following(agent.id))}, deep=True) for agent in agents]
