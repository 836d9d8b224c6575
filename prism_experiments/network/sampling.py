"""Seeded node samples of a large follow graph and the subgraph they induce, over plain edge arrays.

Uniform: N accounts drawn without replacement, all edges among them kept (induced subgraph sampling,
Kolaczyk 2009, "Statistical Analysis of Network Data", section 5.3): unbiased for node attributes, but a
small sample of a sparse graph keeps few edges. Snowball: breadth-first waves from a random account over
follows in either direction, the last wave subsampled to reach N exactly, restarting from another random
account when a component runs out (Goodman 1961, "Snowball sampling"; Leskovec & Faloutsos 2006, "Sampling
from large graphs", KDD: BFS-type samples keep degree and clustering far better than uniform node samples).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp

SampleMethod = Literal["snowball", "uniform"]


def uniform_sample(n_nodes: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct node positions drawn uniformly, sorted."""
    _check_size(n_nodes, k)
    return np.sort(rng.choice(n_nodes, size=k, replace=False)).astype(np.int64)


def undirected_adjacency(n_nodes: int, follower: np.ndarray, followee: np.ndarray) -> sp.csr_array:
    """CSR adjacency with an entry each way per follow (duplicates summed, values unused)."""
    rows = np.concatenate([follower, followee])
    cols = np.concatenate([followee, follower])
    return sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n_nodes, n_nodes))


def snowball_sample(
    n_nodes: int, follower: np.ndarray, followee: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """k distinct node positions reached by seeded breadth-first waves over follows either way, sorted."""
    _check_size(n_nodes, k)
    adjacency = undirected_adjacency(n_nodes, follower, followee)
    indptr, indices = adjacency.indptr, adjacency.indices
    visited = np.zeros(n_nodes, dtype=bool)
    taken = 0
    frontier = np.empty(0, dtype=np.int64)
    while taken < k:
        if frontier.size == 0:  # a new start: the first, or the component ran out
            unvisited = np.flatnonzero(~visited)
            frontier = rng.choice(unvisited, size=1)
        else:
            neighbours = np.concatenate([indices[indptr[u] : indptr[u + 1]] for u in frontier.tolist()])
            frontier = np.unique(neighbours[~visited[neighbours]]).astype(np.int64)
            if frontier.size == 0:
                continue
        if frontier.size > k - taken:
            frontier = np.sort(rng.choice(frontier, size=k - taken, replace=False))
        visited[frontier] = True
        taken += frontier.size
    return np.flatnonzero(visited).astype(np.int64)


def sample_nodes(
    n_nodes: int, follower: np.ndarray, followee: np.ndarray, k: int, method: SampleMethod, rng: np.random.Generator
) -> np.ndarray:
    """`snowball_sample` or `uniform_sample`."""
    if method == "uniform":
        return uniform_sample(n_nodes, k, rng)
    return snowball_sample(n_nodes, follower, followee, k, rng)


def induced_edges(
    n_nodes: int, follower: np.ndarray, followee: np.ndarray, nodes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The edges with both ends in `nodes`, as positions into `nodes` (order kept)."""
    position = np.full(n_nodes, -1, dtype=np.int64)
    position[nodes] = np.arange(nodes.size)
    keep = (position[follower] >= 0) & (position[followee] >= 0)
    return position[follower[keep]], position[followee[keep]]


def _check_size(n_nodes: int, k: int) -> None:
    if not 1 <= k <= n_nodes:
        raise ValueError(f"sample_nodes: must be between 1 and the graph's {n_nodes:,} accounts, got {k:,}")
