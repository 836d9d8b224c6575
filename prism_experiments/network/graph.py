"""The follow graph: the `SocialGraph` protocol (REQ-XALGO-7) and a dict-of-sets implementation."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Protocol, runtime_checkable

import networkx as nx
import numpy as np


@runtime_checkable
class SocialGraph(Protocol):
    """Who follows whom (REQ-XALGO-7). Edges point follower -> followee."""

    def following(self, agent_id: str) -> AbstractSet[str]: ...

    def followers(self, agent_id: str) -> AbstractSet[str]: ...

    def follow(self, follower_id: str, followee_id: str) -> bool: ...

    def is_following(self, follower_id: str, followee_id: str) -> bool: ...

    def out_degree(self, agent_id: str) -> int: ...

    def agent_ids(self) -> list[str]: ...


class DictSocialGraph:
    """`SocialGraph` as dict[str, set[str]] in both directions.

    Nodes are accounts: the agents passed in, plus any account a `follow` names
    (e.g. the author of an imported post who is not an agent). `following` and
    `followers` return frozensets, so callers cannot change the graph by accident;
    an unknown id has no edges (empty set).
    """

    def __init__(self, agent_ids: Iterable[str] = ()) -> None:
        self._following: dict[str, set[str]] = {}
        self._followers: dict[str, set[str]] = {}
        for agent_id in agent_ids:
            self._add_node(agent_id)

    def _add_node(self, agent_id: str) -> None:
        if not isinstance(agent_id, str) or not agent_id:
            raise ValueError(f"agent_id: must be a non-empty string, got {agent_id!r}")
        if agent_id not in self._following:
            self._following[agent_id] = set()
            self._followers[agent_id] = set()

    @classmethod
    def from_edges(cls, agent_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> DictSocialGraph:
        """Graph over `agent_ids` with (follower, followee) `edges`; duplicates collapse.

        Strict, unlike `follow`: an edge naming an id outside `agent_ids`, or a
        self-follow, is a data error.
        """
        graph = cls(agent_ids)
        for follower_id, followee_id in edges:
            for end in (follower_id, followee_id):
                if end not in graph._following:
                    raise ValueError(f"edges: {end!r} in ({follower_id!r}, {followee_id!r}) is not in agent_ids")
            if follower_id == followee_id:
                raise ValueError(f"edges: self-follow ({follower_id!r}, {followee_id!r}) is not allowed")
            graph.follow(follower_id, followee_id)
        return graph

    def following(self, agent_id: str) -> frozenset[str]:
        return frozenset(self._following.get(agent_id, ()))

    def followers(self, agent_id: str) -> frozenset[str]:
        return frozenset(self._followers.get(agent_id, ()))

    def follow(self, follower_id: str, followee_id: str) -> bool:
        """Add follower -> followee; False (and no change) for a self-follow or an existing edge."""
        if follower_id == followee_id:
            return False
        self._add_node(follower_id)
        self._add_node(followee_id)
        if followee_id in self._following[follower_id]:
            return False
        self._following[follower_id].add(followee_id)
        self._followers[followee_id].add(follower_id)
        return True

    @classmethod
    def from_followee_rows(cls, agent_ids: list[str], followees: list[np.ndarray]) -> DictSocialGraph:
        """Graph over `agent_ids` where agent r follows the rows `followees[r]` (distinct, not r): each account's
        two sets built at once, not one insertion per edge (a million agents follow 46 million times)."""
        graph = cls(agent_ids)
        ids = np.asarray(agent_ids, dtype=object)
        counts = np.fromiter((rows.shape[0] for rows in followees), dtype=np.int64, count=len(followees))
        if not counts.sum():
            return graph
        # int32 rows and one pass per account: the temporary arrays stay small beside the sets they build
        followee_rows = np.concatenate(followees).astype(np.int32)
        order = np.argsort(followee_rows, kind="stable")
        starts = np.cumsum(np.bincount(followee_rows, minlength=ids.size))[:-1]
        del followee_rows
        by_followee = np.repeat(np.arange(len(followees), dtype=np.int32), counts)[order]
        del order
        for row, (agent_id, followers) in enumerate(zip(agent_ids, np.split(by_followee, starts), strict=True)):
            if counts[row]:
                graph._following[agent_id] = set(ids[followees[row]].tolist())
            if followers.size:
                graph._followers[agent_id] = set(ids[followers].tolist())
        return graph

    def is_following(self, follower_id: str, followee_id: str) -> bool:
        return followee_id in self._following.get(follower_id, ())

    def agent_ids(self) -> list[str]:
        """Node ids in insertion order (agents first, then accounts added by `follow`)."""
        return list(self._following)

    def out_degree(self, agent_id: str) -> int:
        return len(self._following.get(agent_id, ()))

    def in_degree(self, agent_id: str) -> int:
        return len(self._followers.get(agent_id, ()))

    def number_of_edges(self) -> int:
        return sum(len(followees) for followees in self._following.values())

    def edges(self) -> list[tuple[str, str]]:
        """All (follower, followee) pairs, sorted."""
        return sorted((a, b) for a, followees in self._following.items() for b in followees)

    def copy(self) -> DictSocialGraph:
        """Independent copy: following on one never changes the other."""
        clone = DictSocialGraph()
        clone._following = {a: set(b) for a, b in self._following.items()}
        clone._followers = {a: set(b) for a, b in self._followers.items()}
        return clone

    def to_networkx(self) -> nx.DiGraph:
        """networkx DiGraph, nodes in `agent_ids()` order, edges follower -> followee."""
        graph = nx.DiGraph()
        graph.add_nodes_from(self._following)
        graph.add_edges_from(self.edges())
        return graph

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DictSocialGraph):
            return NotImplemented
        return self._following == other._following

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"DictSocialGraph(nodes={len(self._following)}, edges={self.number_of_edges()})"
