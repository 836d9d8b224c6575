"""The follow graph: the `SocialGraph` protocol (REQ-XALGO-7) and an implementation over node indices."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

import networkx as nx
import numpy as np

from prism_experiments.deprecation import caller_stacklevel
from prism_experiments.domain.recorder import object_array
from prism_experiments.group_order import ranges

_S = TypeVar("_S")


@runtime_checkable
class SocialGraph(Protocol):
    """Who follows whom (REQ-XALGO-7). Edges point follower -> followee."""

    def following(self, agent_id: str) -> AbstractSet[str]: ...

    def followers(self, agent_id: str) -> AbstractSet[str]: ...

    def follow(self, follower_id: str, followee_id: str) -> bool: ...

    def is_following(self, follower_id: str, followee_id: str) -> bool: ...

    # len(following(agent_id)), kept by an implementation without building the set; a graph without it (written
    # before the protocol had it) still ranks for one release, through `out_degree_of`
    def out_degree(self, agent_id: str) -> int: ...

    def agent_ids(self) -> list[str]: ...


def out_degree_of(graph: SocialGraph) -> Callable[[str], int]:
    """`graph.out_degree`; for a graph written before the protocol had it, `len(graph.following(agent_id))` with a
    DeprecationWarning (the fallback is kept for one release)."""
    method: Callable[[str], int] | None = getattr(graph, "out_degree", None)
    if method is not None:
        return method
    warnings.warn(
        f"{type(graph).__name__} has no out_degree(agent_id), a member of the SocialGraph protocol: counting "
        "following(agent_id) instead is deprecated; add out_degree to the class",
        DeprecationWarning,
        stacklevel=caller_stacklevel(),
    )
    return lambda agent_id: len(graph.following(agent_id))


def _csr(n: int, rows: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) of the distinct (row, column) pairs: each row's columns ascending, int32."""
    keys = rows.astype(np.int64) * n + columns
    keys.sort()
    if keys.size:
        distinct = np.empty(keys.size, dtype=bool)
        distinct[0] = True
        np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
        if not distinct.all():
            keys = keys[distinct]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // n, minlength=n), out=indptr[1:])
    indices = (keys % n).astype(np.int32)
    indptr.flags.writeable = indices.flags.writeable = False  # shared by copies
    return indptr, indices


class _Direction:
    """One direction of the graph: the starting edges as CSR rows over node indices (never changed, shared by
    copies) and the edges added since as a set of node indices per node."""

    __slots__ = ("added", "indices", "indptr")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, added: dict[int, set[int]] | None = None) -> None:
        self.indptr, self.indices = indptr, indices
        self.added: dict[int, set[int]] = added if added is not None else {}

    def starting(self, node: int) -> np.ndarray:
        if not 0 <= node < self.indptr.shape[0] - 1:  # no node, or one added after the starting edges
            return self.indices[:0]
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def has(self, node: int, other: int) -> bool:
        if other in self.added.get(node, ()):
            return True
        row = self.starting(node)
        at = int(row.searchsorted(other))
        return at < row.shape[0] and int(row[at]) == other

    def degree(self, node: int) -> int:
        return self.starting(node).shape[0] + len(self.added.get(node, ()))

    def neighbours(self, node: int) -> Iterator[int]:
        yield from self.starting(node).tolist()
        yield from self.added.get(node, ())

    def copy(self) -> _Direction:
        return _Direction(self.indptr, self.indices, {node: set(others) for node, others in self.added.items()})


@dataclass(frozen=True)
class _StartingRows:
    """A graph's starting follows (one direction) with the ids to read them as: what `FollowSet`s share."""

    index: dict[str, int]
    ids: np.ndarray
    rows: _Direction


class FollowSet(AbstractSet[str]):
    """One account's starting followees as a read-only set of ids over its graph's starting rows: about 100 bytes an
    agent, where a set of its ~46 ids held 2 KB (the starting world's agents' `following`, docs/history/bench.md)."""

    __slots__ = ("_node", "_starting")

    def __init__(self, starting: _StartingRows, node: int) -> None:
        self._starting, self._node = starting, node

    def _row(self) -> np.ndarray:
        return self._starting.rows.starting(self._node)

    def __contains__(self, agent_id: object) -> bool:
        other = self._starting.index.get(agent_id) if isinstance(agent_id, str) else None
        if other is None:
            return False
        row = self._row()
        at = int(row.searchsorted(other))
        return at < row.shape[0] and int(row[at]) == other

    def __iter__(self) -> Iterator[str]:
        return iter(self._starting.ids[self._row()].tolist())

    def __len__(self) -> int:
        return self._row().shape[0]

    def __reduce__(self) -> tuple[type[FollowSet], tuple[_StartingRows, int]]:  # a tuple a view, not a state dict
        return FollowSet, (self._starting, self._node)

    @classmethod
    def _from_iterable(cls, values: Iterable[_S]) -> AbstractSet[_S]:  # what `|`, `&`, `-` of a FollowSet build
        return frozenset(values)

    def __repr__(self) -> str:
        return f"FollowSet({sorted(self)!r})"

    __hash__ = AbstractSet._hash


def follower_counts(follow_sets: Iterable[AbstractSet[str]]) -> Counter[str]:
    """How many of `follow_sets` hold each id. `FollowSet`s over one graph are counted from its rows in one
    `bincount` (a `Counter` over a million agents' 46 million ids as strings took minutes: docs/history/bench.md)."""
    counts: Counter[str] = Counter()
    views: dict[int, tuple[_StartingRows, list[int]]] = {}
    for follows in follow_sets:
        if isinstance(follows, FollowSet):
            views.setdefault(id(follows._starting), (follows._starting, []))[1].append(follows._node)
        else:
            counts.update(follows)
    for starting, node_list in views.values():
        indptr, indices = starting.rows.indptr, starting.rows.indices
        nodes = np.asarray(node_list, dtype=np.int64)
        nodes = nodes[(nodes >= 0) & (nodes < indptr.shape[0] - 1)]
        followed = np.bincount(indices[ranges(indptr[nodes], indptr[nodes + 1])[1]], minlength=len(starting.ids))
        held = np.flatnonzero(followed)
        counts.update(dict(zip(starting.ids[held].tolist(), followed[held].tolist())))
    return counts


class DictSocialGraph:
    """`SocialGraph` over node indices: a dict from account id to index, the starting follows in both directions
    as CSR int32 rows (4 bytes an edge each way, shared by copies), and the follows added since as sets of indices.

    A dict of id sets each way held about 150 bytes an edge (a million agents follow 46 million times: 7 GB).
    Nodes are accounts: the agents passed in, plus any account a `follow` names (e.g. the author of an imported
    post who is not an agent). `following` and `followers` return frozensets, so callers cannot change the graph
    by accident; an unknown id has no edges (empty set).
    """

    def __init__(self, agent_ids: Iterable[str] = ()) -> None:
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        for agent_id in agent_ids:
            self._add_node(agent_id)
        self._set_starting(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def _set_starting(self, followers: np.ndarray, followees: np.ndarray) -> None:
        n = len(self._ids)
        self._out = _Direction(*_csr(n, followers, followees))
        self._in = _Direction(*_csr(n, followees, followers))
        self._id_array = object_array(self._ids)
        self._starting = _StartingRows(self._index, self._id_array, self._out)

    def _add_node(self, agent_id: str) -> int:
        node = self._index.get(agent_id)
        if node is not None:
            return node
        if not isinstance(agent_id, str) or not agent_id:
            raise ValueError(f"agent_id: must be a non-empty string, got {agent_id!r}")
        self._index[agent_id] = node = len(self._ids)
        self._ids.append(agent_id)
        return node

    @classmethod
    def from_edges(cls, agent_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> DictSocialGraph:
        """Graph over `agent_ids` with (follower, followee) `edges`; duplicates collapse.

        Strict, unlike `follow`: an edge naming an id outside `agent_ids`, or a
        self-follow, is a data error.
        """
        graph = cls(agent_ids)
        index = graph._index
        followers: list[int] = []
        followees: list[int] = []
        for follower_id, followee_id in edges:
            for end in (follower_id, followee_id):
                if end not in index:
                    raise ValueError(f"edges: {end!r} in ({follower_id!r}, {followee_id!r}) is not in agent_ids")
            if follower_id == followee_id:
                raise ValueError(f"edges: self-follow ({follower_id!r}, {followee_id!r}) is not allowed")
            followers.append(index[follower_id])
            followees.append(index[followee_id])
        graph._set_starting(np.asarray(followers, dtype=np.int64), np.asarray(followees, dtype=np.int64))
        return graph

    @classmethod
    def from_followee_rows(cls, agent_ids: list[str], followees: list[np.ndarray]) -> DictSocialGraph:
        """Graph over `agent_ids` where agent r follows the rows `followees[r]` (distinct, not r)."""
        graph = cls(agent_ids)
        counts = np.fromiter((rows.shape[0] for rows in followees), dtype=np.int64, count=len(followees))
        if counts.sum():
            followers = np.repeat(np.arange(len(followees), dtype=np.int32), counts)
            graph._set_starting(followers, np.concatenate(followees).astype(np.int32))
        return graph

    def starting_following(self, agent_id: str) -> FollowSet:
        """The account's starting followees (the follows the graph was built with, none added by `follow`) as a
        read-only `FollowSet` sharing the graph's rows."""
        return FollowSet(self._starting, self._index.get(agent_id, -1))

    def _ids_of(self, direction: _Direction, agent_id: str) -> frozenset[str]:
        node = self._index.get(agent_id)
        if node is None:
            return frozenset()
        starting = self._id_array[direction.starting(node)].tolist()
        added = direction.added.get(node)
        return frozenset(starting + [self._ids[other] for other in added] if added else starting)

    def following(self, agent_id: str) -> frozenset[str]:
        return self._ids_of(self._out, agent_id)

    def followers(self, agent_id: str) -> frozenset[str]:
        return self._ids_of(self._in, agent_id)

    def follow(self, follower_id: str, followee_id: str) -> bool:
        """Add follower -> followee; False (and no change) for a self-follow or an existing edge."""
        if follower_id == followee_id:
            return False
        follower, followee = self._add_node(follower_id), self._add_node(followee_id)
        if self._out.has(follower, followee):
            return False
        self._out.added.setdefault(follower, set()).add(followee)
        self._in.added.setdefault(followee, set()).add(follower)
        return True

    def is_following(self, follower_id: str, followee_id: str) -> bool:
        follower, followee = self._index.get(follower_id), self._index.get(followee_id)
        return follower is not None and followee is not None and self._out.has(follower, followee)

    def agent_ids(self) -> list[str]:
        """Node ids in insertion order (agents first, then accounts added by `follow`)."""
        return list(self._ids)

    def out_degree(self, agent_id: str) -> int:
        node = self._index.get(agent_id)
        return 0 if node is None else self._out.degree(node)

    def in_degree(self, agent_id: str) -> int:
        node = self._index.get(agent_id)
        return 0 if node is None else self._in.degree(node)

    def number_of_edges(self) -> int:
        return self._out.indices.shape[0] + sum(len(others) for others in self._out.added.values())

    def edges(self) -> list[tuple[str, str]]:
        """All (follower, followee) pairs, sorted."""
        ids = self._ids
        return sorted((ids[node], ids[other]) for node in range(len(ids)) for other in self._out.neighbours(node))

    def copy(self) -> DictSocialGraph:
        """Independent copy: following on one never changes the other (the starting rows, never changed, shared)."""
        clone = DictSocialGraph.__new__(DictSocialGraph)
        clone._index, clone._ids, clone._id_array = dict(self._index), list(self._ids), self._id_array
        clone._out, clone._in, clone._starting = self._out.copy(), self._in.copy(), self._starting
        return clone

    def to_networkx(self) -> nx.DiGraph:
        """networkx DiGraph, nodes in `agent_ids()` order, edges follower -> followee."""
        graph = nx.DiGraph()
        graph.add_nodes_from(self._ids)
        graph.add_edges_from(self.edges())
        return graph

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DictSocialGraph):
            return NotImplemented
        return set(self._ids) == set(other._ids) and self.edges() == other.edges()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"DictSocialGraph(nodes={len(self._ids)}, edges={self.number_of_edges()})"
