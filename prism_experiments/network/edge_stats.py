"""Moments of a follow graph over plain arrays: degree percentiles, reciprocity, interest homophily, clustering.

The same numbers describe a loaded graph and a generated one (`simulation/world_comparison.py` prints them side
by side) and are calibration moments (`metrics/moments.py`), so `make calibrate` can fit the generator's knobs
to a loaded graph (docs/world_files.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from prism_experiments.agents.social_agent import SocialAgent

#: percentiles of the in- and out-degree distributions (numpy's linear interpolation)
PERCENTILES: tuple[int, ...] = (50, 90, 99)
GRAPH_MOMENTS: tuple[str, ...] = (
    "graph_mean_out_degree",
    *(f"graph_out_degree_p{q}" for q in PERCENTILES),
    "graph_out_degree_max",
    *(f"graph_in_degree_p{q}" for q in PERCENTILES),
    "graph_in_degree_max",
    "graph_reciprocity",
    "graph_shared_interest_share",
    "graph_clustering",
)


def agents_edge_arrays(agents: Sequence[SocialAgent]) -> tuple[int, np.ndarray, np.ndarray]:
    """(n, follower, followee) positions of the agents' `following` sets (accounts outside `agents` left out)."""
    position = {agent.id: index for index, agent in enumerate(agents)}
    pairs = [(i, position[j]) for i, agent in enumerate(agents) for j in agent.following if j in position]
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return len(agents), edges[:, 0], edges[:, 1]


def interest_masks(agents: Sequence[SocialAgent]) -> np.ndarray:
    """One bit per topic (numbered over the agents' topics) per agent, as object ints: any number of topics."""
    bit = {topic: index for index, topic in enumerate(sorted({t for agent in agents for t in agent.interests}))}
    return np.array([sum(1 << bit[topic] for topic in agent.interests) for agent in agents], dtype=object)


def reciprocity(n: int, follower: np.ndarray, followee: np.ndarray) -> float:
    """Share of follows returned (networkx's `overall_reciprocity`: mutual edges / edges); NaN without edges."""
    if follower.size == 0:
        return float("nan")
    keys = np.sort(follower * n + followee)
    reverse = followee * n + follower
    at = np.searchsorted(keys, reverse).clip(0, keys.size - 1)
    return float(np.mean(keys[at] == reverse))


def average_clustering(n: int, follower: np.ndarray, followee: np.ndarray) -> float:
    """Mean local clustering coefficient of the undirected graph, 0 for accounts of degree < 2 (Watts & Strogatz
    1998; networkx's `average_clustering` of `to_undirected()`): c_i = triangles_i / (k_i (k_i - 1) / 2)."""
    if n == 0:
        return float("nan")
    adjacency = sp.csr_array(
        (np.ones(2 * follower.size), (np.concatenate([follower, followee]), np.concatenate([followee, follower]))),
        shape=(n, n),
    )
    adjacency.data[:] = 1.0  # a mutual follow is one undirected edge
    adjacency.setdiag(0)
    adjacency.eliminate_zeros()
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    triangles = np.asarray((adjacency @ adjacency).multiply(adjacency).sum(axis=1)).ravel() / 2.0
    pairs = degree * (degree - 1) / 2.0
    local = np.divide(triangles, pairs, out=np.zeros(n), where=pairs > 0)
    return float(local.mean())


def graph_moments(n: int, follower: np.ndarray, followee: np.ndarray, masks: np.ndarray) -> dict[str, float]:
    """GRAPH_MOMENTS of the graph with `n` accounts and these follows; `masks`: each account's interest bits."""
    out_degree = np.bincount(follower, minlength=n).astype(float)
    in_degree = np.bincount(followee, minlength=n).astype(float)
    moments = {"graph_mean_out_degree": follower.size / n if n else float("nan")}
    for name, degrees in (("out", out_degree), ("in", in_degree)):
        for q in PERCENTILES:
            moments[f"graph_{name}_degree_p{q}"] = float(np.percentile(degrees, q)) if n else float("nan")
        moments[f"graph_{name}_degree_max"] = float(degrees.max()) if n else float("nan")
    shared = [bool(a & b) for a, b in zip(masks[follower].tolist(), masks[followee].tolist(), strict=True)]
    moments["graph_reciprocity"] = reciprocity(n, follower, followee)
    moments["graph_shared_interest_share"] = float(np.mean(shared)) if shared else float("nan")
    moments["graph_clustering"] = average_clustering(n, follower, followee)
    return {name: moments[name] for name in GRAPH_MOMENTS}


def agents_graph_moments(agents: Sequence[SocialAgent]) -> dict[str, float]:
    """GRAPH_MOMENTS of the follow graph the agents' `following` sets make."""
    n, follower, followee = agents_edge_arrays(agents)
    return graph_moments(n, follower, followee, interest_masks(agents))
