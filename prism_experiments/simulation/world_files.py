"""A run's accounts and follow graph from a user's files (`network=file`, `agents=file`), joined consistently.

The one adapter between the file loaders, which give plain arrays (`network/edge_file.py`,
`agents/population_file.py`), and the world's objects: the graph is built through `DictSocialGraph.from_edges`,
the population by `generate_population` (every attribute drawn with the run's seed, as for a generated world)
with the file's values put in. How the two files meet (docs/world_files.md):

* graph file, generated population: one account per node of the graph (or of its sample), named by it;
* population file, generated graph: the file's accounts, the generator's follows among them;
* both: the graph's accounts that the population lacks follow `network.missing_accounts`; accounts of the
  population the graph never names are kept, following nobody; with `network.sample_nodes` the world is the
  sampled accounts.

Loads are cached per process on the file's (path, size, mtime, inode): the driver validates a sweep's jobs
with one read, and a run's world reuses the read its config's validation made.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from prism_experiments.agents import SocialAgent, generate_population
from prism_experiments.agents.config import AgentsConfig
from prism_experiments.agents.file_config import PopulationFileOptions
from prism_experiments.agents.population_file import (
    PopulationFileError,
    PopulationTable,
    column_report,
    overlay,
    read_population_file,
)
from prism_experiments.agents.seeding import stream_rng
from prism_experiments.domain import Post
from prism_experiments.file_digest import stat_key
from prism_experiments.network import DictSocialGraph, NetworkConfig, generate_follow_graph
from prism_experiments.network.edge_file import EdgeFileError, EdgeList, read_edge_file
from prism_experiments.network.file_config import EdgeFileOptions
from prism_experiments.network.sampling import induced_edges, sample_nodes
from prism_experiments.random_streams import Stream, component_seed

log = logging.getLogger(__name__)
_SAMPLE_NAMESPACE = "network.edge_file.sample"


class WorldFilesError(ValueError):
    """Graph and population files that cannot be joined; one line naming the option that decides."""


@dataclass(frozen=True)
class WorldAccounts:
    """The accounts of a world read from files, and where each one's values come from."""

    ids: list[str]
    #: (follower, followee) positions into `ids`; None: the generator draws the follows
    edges: tuple[np.ndarray, np.ndarray] | None
    #: the population file, and each account's row in it (-1: none, every value drawn); None without a file
    table: PopulationTable | None
    rows: np.ndarray | None
    #: the graph file as read (before any sample or join), for its counts
    edge_list: EdgeList | None
    #: what the join did, one line each, for the run's log
    notes: tuple[str, ...]


def edge_options(network: object) -> EdgeFileOptions | None:
    """The network group's file options when it reads a file."""
    return network if isinstance(network, EdgeFileOptions) and network.source == "file" else None


def population_options(agents: object) -> PopulationFileOptions | None:
    """The agents group's file options when it reads a file."""
    return agents if isinstance(agents, PopulationFileOptions) and agents.source == "file" else None


class _Recent:
    """The last few values computed per key: loaded files and joined worlds, kept while a process reuses them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.values: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key in self.values:
            self.values.move_to_end(key)
            return self.values[key]
        value = self.values[key] = compute()
        while len(self.values) > self.size:
            self.values.popitem(last=False)
        return value


#: per process: a sweep's driver validates every job from one read, a run's world reuses its validation's read
_EDGE_LISTS, _POPULATIONS, _WORLDS = _Recent(2), _Recent(2), _Recent(8)


def load_edge_list(options: EdgeFileOptions, show_progress: bool = False) -> EdgeList:
    """The graph file of `options`, read once per version of the file (and reading options) in this process."""
    assert options.path is not None
    path = Path(options.path)
    return _EDGE_LISTS.get(
        _edge_key(options),
        lambda: read_edge_file(
            path, directed=options.directed, self_loops=options.self_loops, show_progress=show_progress
        ),
    )


def _edge_key(options: EdgeFileOptions) -> Hashable:
    return (stat_key(Path(str(options.path))), options.directed, options.self_loops)


def load_population(options: PopulationFileOptions, topics: Sequence[str]) -> PopulationTable:
    """The population file of `options` validated against `topics`, read once per version of the file."""
    assert options.path is not None
    path = Path(options.path)
    return _POPULATIONS.get((stat_key(path), tuple(topics)), lambda: read_population_file(path, topics))


def world_accounts(
    network: object, agents: object, topics: Sequence[str], seed: int, show_progress: bool = False
) -> WorldAccounts | None:
    """The accounts (and follows) a run's files give, or None when neither group reads a file.

    Raises EdgeFileError, PopulationFileError, WorldFilesError or FileNotFoundError, each one line.
    """
    graph_options, population_options_ = edge_options(network), population_options(agents)
    if graph_options is None and population_options_ is None:
        return None
    table = load_population(population_options_, topics) if population_options_ is not None else None
    if graph_options is None:
        assert table is not None
        return WorldAccounts(list(table.ids), None, table, np.arange(len(table)), None, ())
    edge_list = load_edge_list(graph_options, show_progress)
    key = (
        _edge_key(graph_options),
        stat_key(Path(str(population_options_.path))) if population_options_ is not None else None,
        tuple(topics),
        seed,
        graph_options.sample_nodes,
        graph_options.sample_method,
        graph_options.sample_seed,
        graph_options.missing_accounts,
    )
    return _WORLDS.get(key, lambda: _joined(graph_options, edge_list, table, seed))


def _joined(options: EdgeFileOptions, edge_list: EdgeList, table: PopulationTable | None, seed: int) -> WorldAccounts:
    notes = [
        f"network.path: {edge_list.n_nodes:,} accounts, {edge_list.n_edges:,} follows from {edge_list.rows:,} "
        f"{'lines' if options.directed else 'mutual lines'}"
        + (f"; {edge_list.self_loops:,} self-follows dropped" if edge_list.self_loops else "")
        + (f"; {edge_list.duplicates:,} duplicate follows dropped" if edge_list.duplicates else "")
    ]
    node_ids = edge_list.ids
    follower, followee = edge_list.follower, edge_list.followee
    if table is not None:
        in_population = pd.Index(table.ids).get_indexer(node_ids) >= 0
        missing = int((~in_population).sum())
        if missing and options.missing_accounts == "error":
            first = node_ids[int(np.flatnonzero(~in_population)[0])]
            raise WorldFilesError(
                f"network.missing_accounts: {options.path} names {missing:,} accounts that {table.path} lacks "
                f"(the first: {first!r}); network.missing_accounts=drop leaves them and their follows out, "
                f"=add draws their attributes"
            )
        if missing and options.missing_accounts == "drop":
            kept = np.flatnonzero(in_population)
            follower, followee = induced_edges(len(node_ids), follower, followee, kept)
            node_ids = node_ids[kept]
            notes.append(
                f"network.missing_accounts=drop: {missing:,} accounts agents.path lacks left out, with their follows"
            )
        elif missing:
            notes.append(
                f"network.missing_accounts=add: {missing:,} accounts agents.path lacks, their attributes drawn"
            )
    if options.sample_nodes is not None:
        if options.sample_nodes > len(node_ids):
            raise WorldFilesError(
                f"network.sample_nodes: {options.sample_nodes:,} is more than the graph's {len(node_ids):,} accounts"
            )
        sample_seed = seed if options.sample_seed is None else options.sample_seed
        rng = stream_rng(component_seed(sample_seed, Stream.NETWORK), _SAMPLE_NAMESPACE, 0)
        nodes = sample_nodes(len(node_ids), follower, followee, options.sample_nodes, options.sample_method, rng)
        follower, followee = induced_edges(len(node_ids), follower, followee, nodes)
        ids = [str(account) for account in node_ids[nodes]]
        notes.append(
            f"network.sample_nodes: {len(ids):,} accounts by {options.sample_method} sample (seed {sample_seed}), "
            f"{len(follower):,} follows among them"
        )
        positions = np.arange(len(ids))
    elif table is not None:
        in_table = set(table.ids)
        graph_only = [str(account) for account in node_ids if account not in in_table]
        ids = [*table.ids, *graph_only]
        positions = pd.Index(ids).get_indexer(node_ids)
        isolated = len(table) - (len(node_ids) - len(graph_only))
        if isolated:
            notes.append(f"agents.path: {isolated:,} accounts the graph never names, following nobody")
    else:
        ids = [str(account) for account in node_ids]
        positions = np.arange(len(ids))
    rows = pd.Index(table.ids).get_indexer(ids) if table is not None else None
    return WorldAccounts(ids, (positions[follower], positions[followee]), table, rows, edge_list, tuple(notes))


def population_and_graph(
    accounts: WorldAccounts, agents: AgentsConfig, network: NetworkConfig, topics: Sequence[str], seed: int
) -> tuple[list[SocialAgent], DictSocialGraph]:
    """The population (drawn with `seed`, the file's values put in) and follow graph of `accounts`."""
    config = agents.model_copy(update={"n_agents": len(accounts.ids)})
    drawn = generate_population(config, topics, component_seed(seed, Stream.POPULATION))
    population = [agent.model_copy(update={"id": account}) for agent, account in zip(drawn, accounts.ids, strict=True)]
    if accounts.table is not None and accounts.rows is not None:
        population = overlay(population, accounts.table, accounts.rows, agents)
    if accounts.edges is None:
        graph = generate_follow_graph(
            population, network, component_seed(seed, Stream.NETWORK), politics=agents.politics
        )
    else:
        ids = np.array(accounts.ids, dtype=object)
        follower, followee = accounts.edges
        graph = DictSocialGraph.from_edges(accounts.ids, zip(ids[follower].tolist(), ids[followee].tolist()))
    for note in accounts.notes:
        log.info("%s", note)
    if accounts.table is not None and accounts.rows is not None:
        log.info("%s", population_columns_line(accounts.table, accounts.rows, seed))
    return population, graph


def population_columns_line(table: PopulationTable, rows: np.ndarray, seed: int) -> str:
    """`agents.path: from the file: interests (60 of 60 accounts), activity (48 of 60); drawn with seed 0: ...`."""
    report = column_report(table, rows)
    from_file = [f"{name} ({given:,} of {total:,} accounts)" for name, (given, total) in report.items() if given]
    # a position no row gives is not named: a file without politics logs the line it always did
    drawn = [name for name, (given, _) in report.items() if not given and name != "position"]
    ignored = f"; columns ignored: {', '.join(table.ignored_columns)}" if table.ignored_columns else ""
    return (
        f"agents.path: from the file: {', '.join(from_file) or 'ids only'}; drawn with seed {seed}: "
        f"{', '.join(drawn) or 'nothing'} (and every value a row leaves empty){ignored}"
    )


def corpus_authors_line(agent_ids: Sequence[str], corpus: Sequence[Post]) -> str:
    """How many of a corpus file's authors are accounts of the world (matched by id)."""
    authors = {post.author_id for post in corpus}
    matched = len(authors & set(agent_ids))
    return f"corpus.path: {matched:,} of its {len(authors):,} authors are accounts of the world (matched by id)"


__all__ = [
    "EdgeFileError",
    "PopulationFileError",
    "WorldAccounts",
    "WorldFilesError",
    "corpus_authors_line",
    "population_and_graph",
    "world_accounts",
]
