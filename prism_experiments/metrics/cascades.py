"""Reshare cascades: size, depth, breadth and structural virality of each tree.

Every cascade is processed at once with numpy (pointer jumping for depths, level-by-level
accumulation for subtree sizes), so thousands of trees cost O(N log depth) in total.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import require_columns

CASCADE_TABLE_COLUMNS: tuple[str, ...] = (
    "root_post_id",
    "size",
    "depth",
    "max_breadth",
    "structural_virality",
    "first_step",
)


@dataclass(frozen=True)
class CascadeForest:
    """Per-cascade statistics of a forest of reshare trees (arrays aligned with `cascade_ids`)."""

    cascade_ids: np.ndarray
    size: np.ndarray
    depth: np.ndarray
    max_breadth: np.ndarray
    structural_virality: np.ndarray


def _node_depths(parent: np.ndarray) -> np.ndarray:
    """Distance of every node to its tree's root; parent[i] = -1 marks a root.

    Pointer jumping (Wyllie 1979): after k rounds each node points 2**k ancestors up, so
    ceil(log2(n)) + 1 rounds suffice for any tree; a node still not at a root means a cycle.
    """
    n = parent.size
    has_parent = parent >= 0
    jump = np.where(has_parent, parent, np.arange(n))
    depth = has_parent.astype(np.int64)
    for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
        if not (parent[jump] >= 0).any():
            return depth
        depth = depth + depth[jump]
        jump = jump[jump]
    if (parent[jump] >= 0).any():
        raise ValueError("cascade_edges: the parent -> child edges contain a cycle")
    return depth


def _subtree_sizes(parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Number of nodes in each node's subtree, accumulated from the deepest level upwards."""
    size = np.ones(parent.size, dtype=np.int64)
    order = np.argsort(-depth, kind="stable")
    level_starts = np.flatnonzero(np.diff(depth[order], prepend=-1))
    level_ends = np.append(level_starts[1:], order.size)
    for start, end in zip(level_starts, level_ends):
        level = order[start:end]
        if depth[level[0]] == 0:
            break
        np.add.at(size, parent[level], size[level])
    return size


@dataclass(frozen=True)
class _ForestNodes:
    """The nodes of a forest of reshare trees, numbered: each edge's child node, every node's parent and tree."""

    cascade_ids: np.ndarray
    child_codes: np.ndarray
    parent: np.ndarray
    node_cascade: np.ndarray


def _forest_nodes(roots: np.ndarray, parents: np.ndarray, children: np.ndarray) -> _ForestNodes:
    """Number the (cascade, user) nodes of aligned edge arrays and check that each cascade is one tree."""
    n_edges = roots.size
    cascade_codes, cascade_ids = pd.factorize(roots, sort=True)
    if (cascade_codes < 0).any():
        raise ValueError("cascade_edges: root_post_id must not be missing")
    node_keys = pd.DataFrame(
        {
            "cascade": np.concatenate([cascade_codes, cascade_codes]),
            "user": np.concatenate([np.asarray(parents, dtype=object), np.asarray(children, dtype=object)]),
        }
    )
    if node_keys["user"].isna().any():
        raise ValueError("cascade_edges: parent_id and child_id must not be missing")
    node_codes = node_keys.groupby(["cascade", "user"], sort=False).ngroup().to_numpy()
    parent_codes, child_codes = node_codes[:n_edges], node_codes[n_edges:]
    n_nodes = int(node_codes.max()) + 1

    if (np.bincount(child_codes, minlength=n_nodes) > 1).any():
        raise ValueError("cascade_edges: each child_id must appear at most once per root_post_id")
    parent = np.full(n_nodes, -1, dtype=np.int64)
    parent[child_codes] = parent_codes
    node_cascade = np.empty(n_nodes, dtype=np.int64)
    node_cascade[node_codes] = node_keys["cascade"].to_numpy()
    roots_per_cascade = np.bincount(node_cascade[parent < 0], minlength=cascade_ids.size)
    if (roots_per_cascade != 1).any():
        bad = cascade_ids[np.flatnonzero(roots_per_cascade != 1)[0]]
        raise ValueError(
            f"cascade_edges: root_post_id {bad!r} is not one tree (needs exactly one node that is never a child)"
        )
    return _ForestNodes(np.asarray(cascade_ids), child_codes, parent, node_cascade)


def edge_depths(roots: np.ndarray, parents: np.ndarray, children: np.ndarray) -> np.ndarray:
    """The depth of each edge's child in its tree (a child of the root: 1), aligned with the edges."""
    if roots.size == 0:
        return np.zeros(0, dtype=np.int64)
    nodes = _forest_nodes(roots, parents, children)
    return _node_depths(nodes.parent)[nodes.child_codes]


def analyse_forest(roots: np.ndarray, parents: np.ndarray, children: np.ndarray) -> CascadeForest:
    """Statistics of each cascade from aligned arrays of edges (cascade id, parent user, child user).

    Structural virality = 2 W / (n (n - 1)) with the tree's Wiener index W = sum over edges of
    s (n - s), s the size of the subtree below the edge (Goel, Anderson, Hofman & Watts 2016).
    """
    nodes = _forest_nodes(roots, parents, children)
    cascade_ids, parent, node_cascade = nodes.cascade_ids, nodes.parent, nodes.node_cascade
    n_cascades = cascade_ids.size

    depth = _node_depths(parent)
    subtree = _subtree_sizes(parent, depth)
    size = np.bincount(node_cascade, minlength=n_cascades).astype(np.int64)
    non_root = parent >= 0
    edge_weight = subtree[non_root] * (size[node_cascade[non_root]] - subtree[non_root])
    wiener = np.zeros(n_cascades, dtype=np.int64)
    np.add.at(wiener, node_cascade[non_root], edge_weight)
    virality = 2.0 * wiener / (size * (size - 1.0))

    max_depth = np.zeros(n_cascades, dtype=np.int64)
    np.maximum.at(max_depth, node_cascade, depth)
    level_counts = pd.Series(1, index=pd.MultiIndex.from_arrays([node_cascade[non_root], depth[non_root]]))
    breadth = level_counts.groupby(level=[0, 1]).size().groupby(level=0).max()
    max_breadth = np.zeros(n_cascades, dtype=np.int64)
    max_breadth[breadth.index.to_numpy()] = breadth.to_numpy()
    return CascadeForest(np.asarray(cascade_ids), size, max_depth, max_breadth, virality)


def structural_virality(edges: Iterable[tuple[Hashable, Hashable]]) -> float:
    """Mean shortest-path distance over all node pairs of one tree = 2 W / (n (n - 1)).

    Goel, Anderson, Hofman & Watts 2016, "The Structural Virality of Online Diffusion".
    Star of n nodes -> 2 (n - 1) / n, chain of n nodes -> (n + 1) / 3, one edge -> 1.0.
    """
    pairs = list(edges)
    if not pairs:
        raise ValueError("edges: a cascade tree needs at least one (parent, child) edge")
    parents, children = zip(*pairs)
    forest = analyse_forest(
        np.zeros(len(pairs), dtype=np.int64), np.asarray(parents, dtype=object), np.asarray(children, dtype=object)
    )
    return float(forest.structural_virality[0])


def cascade_table(cascade_edges: pd.DataFrame) -> pd.DataFrame:
    """One row per cascade (root_post_id, sorted): size, depth, max_breadth, structural_virality, first_step.

    size counts users including the root author (= edges + 1); depth is the largest distance from
    the root; max_breadth is the most nodes on one depth level >= 1; first_step is the first reshare.
    """
    require_columns(cascade_edges, "cascade_edges", ("root_post_id", "parent_id", "child_id", "step"))
    if cascade_edges.empty:
        return pd.DataFrame(
            {
                "root_post_id": pd.Series(dtype=object),
                "size": pd.Series(dtype=np.int64),
                "depth": pd.Series(dtype=np.int64),
                "max_breadth": pd.Series(dtype=np.int64),
                "structural_virality": pd.Series(dtype=np.float64),
                "first_step": pd.Series(dtype=np.int64),
            }
        )
    forest = analyse_forest(
        cascade_edges["root_post_id"].to_numpy(),
        cascade_edges["parent_id"].to_numpy(),
        cascade_edges["child_id"].to_numpy(),
    )
    first_step = pd.to_numeric(cascade_edges["step"]).groupby(cascade_edges["root_post_id"].to_numpy()).min()
    return pd.DataFrame(
        {
            "root_post_id": forest.cascade_ids,
            "size": forest.size,
            "depth": forest.depth,
            "max_breadth": forest.max_breadth,
            "structural_virality": forest.structural_virality,
            "first_step": first_step.reindex(forest.cascade_ids).to_numpy().astype(np.int64),
        }
    )


def ccdf(values: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """Empirical complementary CDF P(X >= x) at each distinct value x, ascending."""
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("values: must be finite numbers")
    if x.size == 0:
        return np.array([]), np.array([])
    distinct, counts = np.unique(x, return_counts=True)
    at_least = np.cumsum(counts[::-1])[::-1]
    return distinct, at_least / x.size
