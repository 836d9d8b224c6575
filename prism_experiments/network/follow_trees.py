"""Follow draws in O(log n) each: sum trees of attractiveness, one over every agent and one per topic.

Agent i weighs j != i by w_ij = A_j x (h if they share an interest, else 1), A_j = (in_degree_j + a)^gamma. Its
total is G + (h - 1) x (mass of the agents sharing an interest with i), and the shared set is a union over i's
topics, so a draw proposes from the mixture "every agent by A_j (mass G), or topic t of i's by A_j among t's
holders (mass (h - 1) T_t)", which weighs j by A_j x (1 + (h - 1) c_ij) with c_ij the number of i's topics j holds,
and accepts with probability (1 + (h - 1) [c_ij >= 1]) / (1 + (h - 1) c_ij) (rejection sampling from a union of
sets, Karp & Luby 1983): an accepted j has probability exactly w_ij / sum_j w_ij. Self-draws and repeats are
rejected (first occurrences of a stream of draws with replacement: the successive-sampling law); when a first
round falls short, the drawn followees and i leave the trees until i's draws end, so a hub that holds most of the
mass cannot stall the rejection.

Trees are B-ary (B = 32: four levels up to a million agents), one row per tree in each level's array; a batch of
draws descends them together (log_B(n) numpy steps per batch, not per draw in Python) and an update adds each
change along the leaf's path in every tree it sits in. Sums of attractiveness at the defaults (gamma = 1, a = 1)
are integers, so exact in float64; otherwise a node can be off by rounding, and a draw landing on an empty leaf is
rejected. Same law as the scan in `generate.py`, not the same draws.
Written here because no maintained library found does this: sum-tree packages on PyPI (starr, sumtree, rltrees,
dynamic-random-sampler) keep one tree and draw with their own generator, not a caller's keyed numpy stream, and
none descends many trees sharing one leaf array in a batch.
"""

from __future__ import annotations

import numpy as np

from prism_experiments.network.config import NetworkConfig
from prism_experiments.network.successive import take_first_occurrences, weighted_sample_without_replacement

FANOUT = 32
#: proposals beyond the ones still needed in a first round (duplicates, self-draws and rejections eat a few)
_OVERDRAW = 8
_WORD_BITS = 64


def follow_attractiveness(
    in_degree: np.ndarray, config: NetworkConfig, fitness: np.ndarray | None = None
) -> np.ndarray:
    """A_j = fitness_j x (in_degree_j + attachment_offset)^preferential_attachment (Price 1976; Krapivsky et al.
    2000; a fitness per node as in Bianconi & Barabasi 2001); without `fitness`, every fitness is 1."""
    attractiveness = (in_degree + config.attachment_offset) ** config.preferential_attachment
    # no multiplication without a fitness: the graphs drawn before it existed stay bit for bit
    return attractiveness if fitness is None else attractiveness * fitness


def post_rate_fitness(post_rates: np.ndarray, config: NetworkConfig) -> np.ndarray | None:
    """Each account's fitness (post_rate / mean post rate)^k, k = `followee_post_rate_elasticity` (Pew Research
    Center 2019: the top tenth of users by tweets have a median of 387 followers, the other nine tenths 19);
    None when k is unset (or no account posts)."""
    elasticity = config.followee_post_rate_elasticity
    rates = np.asarray(post_rates, dtype=float)
    if elasticity is None or rates.size == 0 or rates.mean() <= 0:
        return None
    return (rates / rates.mean()) ** elasticity


def topic_membership(bits: np.ndarray) -> np.ndarray:
    """(n_agents, n_topics) booleans from `interest_bitsets`' (n_agents, n_words) bitsets: agent holds topic."""
    columns = [
        (bits[:, bit // _WORD_BITS] >> np.uint64(bit % _WORD_BITS)) & np.uint64(1)
        for bit in range(_WORD_BITS * bits.shape[1])
    ]
    holds = np.stack(columns, axis=1).astype(bool)
    used = np.flatnonzero(holds.any(axis=0))
    return holds[:, : used[-1] + 1] if used.size else holds[:, :0]


class FollowTrees:
    """Every agent's follow weights as sum trees, so that a draw costs O(log n) and an update O(k log n)."""

    def __init__(
        self, bits: np.ndarray, config: NetworkConfig, fanout: int = FANOUT, fitness: np.ndarray | None = None
    ):
        n = bits.shape[0]
        topics = topic_membership(bits)
        n_topics = topics.shape[1]
        self.n, self.config, self.fanout = n, config, fanout
        self.n_trees = 1 + n_topics  # tree 0: every agent; tree 1 + t: the holders of topic t; row n_trees: scratch
        sizes = [n]
        while sizes[-1] > 1 or len(sizes) == 1:
            sizes.append(-(-sizes[-1] // fanout))
        self.depth = len(sizes) - 1
        holds = np.zeros((n, self.n_trees + 1), dtype=bool)
        holds[:, 0] = True
        holds[:, 1 : 1 + n_topics] = topics
        self.bits = np.zeros((sizes[1] * fanout, bits.shape[1]), dtype=bits.dtype)  # padding leaves: no topics
        self.bits[:n] = bits
        self.in_degree = np.zeros(n)
        self.fitness = fitness
        self.attractiveness = follow_attractiveness(self.in_degree, config, fitness)
        self.positive = int(np.count_nonzero(self.attractiveness > 0))
        # per agent, its trees: 0, then 1 + each of its topics, padded with the scratch row to one width
        width = 1 + int(topics.sum(axis=1).max(initial=0))
        rows, columns = np.nonzero(topics)
        rank = np.arange(rows.size) - np.searchsorted(rows, rows)
        self.trees_of = np.full((n, width), self.n_trees, dtype=np.int64)
        self.trees_of[:, 0] = 0
        self.trees_of[rows, 1 + rank] = 1 + columns
        # mixture factor of each tree in a draw: 1 for tree 0, h - 1 for a topic tree, 0 for the scratch row
        self.factor = np.full(self.n_trees + 1, config.homophily - 1.0)
        self.factor[0], self.factor[self.n_trees] = 1.0, 0.0
        self.offsets = np.arange(fanout)
        # levels[l][tree, node]: the attractiveness under node at level l of each tree; level 0 holds the leaves.
        # A level's rows are padded to whole groups of `fanout` children; `flat` are the same arrays raveled.
        self.levels: list[np.ndarray] = []
        below = self.attractiveness[:, None] * holds  # (n, trees)
        for level in range(self.depth + 1):
            padded = sizes[level + 1] * fanout if level < self.depth else 1
            values = np.zeros((self.n_trees + 1, padded))
            values[:, : sizes[level]] = below.T
            self.levels.append(values)
            if level < self.depth:
                below = values.T.reshape(sizes[level + 1], fanout, -1).sum(axis=1)
        self.flat = [values.ravel() for values in self.levels]
        self.row_length = [values.shape[1] for values in self.levels]

    def _add(self, agents: np.ndarray, delta: np.ndarray) -> None:
        """Add `delta` to `agents`' leaves and to every sum above them, in every tree they sit in."""
        width = self.trees_of.shape[1]
        trees = self.trees_of[agents].ravel()
        nodes = np.repeat(agents, width)
        change = np.repeat(delta, width)
        for level in range(self.depth + 1):
            np.add.at(self.flat[level], trees * self.row_length[level] + nodes, change)
            nodes = nodes // self.fanout

    def _descend(self, trees: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The leaf of each tree whose cumulative attractiveness first exceeds its target, and its weight there."""
        fanout = self.fanout
        nodes = np.zeros(targets.shape[0], dtype=np.int64)
        starts = np.arange(targets.shape[0]) * fanout
        weight = targets
        for level in range(self.depth - 1, -1, -1):
            sums = self.flat[level][(trees * self.row_length[level] + nodes * fanout)[:, None] + self.offsets]
            cumulative = sums.cumsum(axis=1)
            # a target at or past its node's last cumulative sum (rounding) goes to the last child, rejected if empty
            pick = np.minimum((cumulative <= targets[:, None]).sum(axis=1), fanout - 1)
            at = starts + pick
            weight = sums.ravel()[at]
            targets = targets - cumulative.ravel()[at] + weight
            nodes = nodes * fanout + pick
        return nodes, weight

    def _shared_topics(self, draws: np.ndarray, i: int) -> np.ndarray:
        """How many of agent i's interests each of `draws` holds."""
        if self.bits.shape[1] == 1:
            return np.bitwise_count(self.bits[draws, 0] & self.bits[i, 0]).astype(np.int64)
        return np.bitwise_count(self.bits[draws] & self.bits[i]).sum(axis=1)

    def sample(self, rng: np.random.Generator, i: int, k: int) -> np.ndarray:
        """k distinct followees of agent i by successive sampling with weights w_ij (the module docstring's law)."""
        n_positive = self.positive - int(self.attractiveness[i] > 0)
        if k > n_positive:
            raise ValueError(f"k: must be <= the number of positive weights ({n_positive}), got {k}")
        if 4 * k >= n_positive:  # dense: O(n) = O(k)
            return weighted_sample_without_replacement(rng, self.weights(i), k, n_positive)
        h = self.config.homophily
        trees = self.trees_of[i]
        factor = self.factor[trees]
        scale = np.where(factor > 0, factor, 1.0)
        chosen: list[int] = []
        taken: set[int] = set()
        removed: list[int] = []
        saved: list[float] = []
        while len(chosen) < k:
            need = k - len(chosen)
            size = need + need // 4 + _OVERDRAW if not removed else 2 * need + _OVERDRAW
            mass = self.levels[self.depth][trees, 0] * factor
            cumulative = np.cumsum(mass)
            points, accept_draws = rng.random((2, size))
            points *= cumulative[-1]
            component = np.minimum(np.searchsorted(cumulative, points, side="right"), trees.shape[0] - 1)
            # the target's position inside the chosen tree (component masses of 0: the scratch row, h = 1)
            targets = (points - cumulative[component] + mass[component]) / scale[component]
            draws, weight = self._descend(trees[component], targets)
            shared = self._shared_topics(draws, i)
            accept = accept_draws * (1.0 + (h - 1.0) * shared) < 1.0 + (h - 1.0) * (shared > 0)
            keep = accept & (weight > 0) & (mass[component] > 0) & (draws != i)
            take_first_occurrences(draws[keep], chosen, taken, k)
            if len(chosen) < k:  # out of the trees until i's draws end: i and what it drew (no more repeats)
                gone = set(removed)
                leaving = np.asarray([j for j in [i, *chosen] if j not in gone], dtype=np.int64)
                removed.extend(leaving.tolist())
                saved.extend(self.attractiveness[leaving].tolist())
                self._add(leaving, -self.attractiveness[leaving])
        if removed:
            self._add(np.asarray(removed, dtype=np.int64), np.asarray(saved))
        return np.asarray(chosen, dtype=np.int64)

    def weights(self, i: int) -> np.ndarray:
        """Agent i's weight for every agent (itself 0): the dense case's input."""
        shares = self._shared_topics(np.arange(self.n), i) > 0
        weights = np.where(shares, self.attractiveness * self.config.homophily, self.attractiveness)
        weights[i] = 0.0
        return weights

    def followed(self, followees: np.ndarray) -> None:
        """In-degrees, attractiveness and the trees after `followees` gained a follower each."""
        before = self.attractiveness[followees]
        self.in_degree[followees] += 1.0
        fitness = None if self.fitness is None else self.fitness[followees]
        after = follow_attractiveness(self.in_degree[followees], self.config, fitness)
        self.positive += int(np.count_nonzero(after > 0)) - int(np.count_nonzero(before > 0))
        self.attractiveness[followees] = after
        self._add(followees, after - before)
