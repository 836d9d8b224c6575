"""An invented follow graph and population for `network=file agents=file` (not a real dataset).

`python -m prism_experiments.example_world --out runs/example_world` writes `edges.txt` (a whitespace edge list
with `#` comments, SNAP-style integer ids) and `population.csv` (agent_id, interests, activity, post_rate; some
activity cells left empty, to be drawn). `--nodes 1000000 --edges 10000000 --no-population` writes the
benchmark's graph (docs/bench.md). The graph is built unlike the project's generator, so that the side-by-side
statistics of a run differ visibly: accounts fall in one community per topic, a share `within` of follows stay in
the follower's community, followees are picked with Zipf popularity within a community (heavy-tailed in-degree,
Kwak et al. 2010), followers with lognormal activity, and a share `reciprocity` of follows is returned.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from prism_experiments.domain import TOPICS

#: lines written per chunk (the benchmark's 10M-edge file is written in ten)
CHUNK_EDGES = 1_000_000


@dataclass(frozen=True)
class ExampleGraph:
    """The shape of the invented graph."""

    n_nodes: int = 60
    #: lines of the edge list (follows, the returned ones included); the benchmark writes 10 per account
    n_edges: int = 360
    seed: int = 0
    #: share of follows inside the follower's community (its topic)
    within: float = 0.8
    #: share of follows that are returned (a second line, the other way)
    reciprocity: float = 0.3
    #: Zipf exponent of followee popularity within a community
    popularity_exponent: float = 1.0
    #: lognormal sigma of how many accounts each follows
    activity_sigma: float = 1.0


def community(nodes: np.ndarray, n_communities: int) -> np.ndarray:
    """The community (topic index) of each node: round robin, so every community has the same rank structure."""
    return nodes % n_communities


def _draw_follows(
    graph: ExampleGraph, rng: np.random.Generator, m: int, popularity: np.ndarray, activity: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """About m * (1 + reciprocity) (follower, followee) node indices: m drawn follows plus the returned ones."""
    k, n = len(TOPICS), graph.n_nodes
    follower = np.searchsorted(activity, rng.random(m) * activity[-1], side="right").clip(0, n - 1)
    own = rng.random(m) < graph.within
    target_community = np.where(own, community(follower, k), rng.integers(0, k, m))
    rank = np.searchsorted(popularity, rng.random(m) * popularity[-1], side="right")
    followee = rank * k + target_community
    followee = np.where(followee < n, followee, rng.integers(0, n, m))
    returned = rng.random(m) < graph.reciprocity
    return np.concatenate([follower, followee[returned]]), np.concatenate([followee, follower[returned]])


def write_edge_list(path: Path, graph: ExampleGraph, *, clean: bool, show_progress: bool = True) -> int:
    """Write `graph` to `path`; returns the lines written. `clean` (the small example): exactly n_edges distinct
    follows, no self-follows, drawn until there are enough (the graph must hold them). Else streamed in chunks with
    self-follows and duplicates left in, as in a raw dump, for the loader to drop and count."""
    rng = np.random.default_rng(graph.seed)
    n = graph.n_nodes
    ranks = np.arange(-(-n // len(TOPICS)))
    popularity = np.cumsum((ranks + 1.0) ** -graph.popularity_exponent)
    activity = np.cumsum(np.exp(graph.activity_sigma * rng.standard_normal(n)))
    drawn_per_line = 1.0 / (1.0 + graph.reciprocity)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle, tqdm(
        total=graph.n_edges, unit="edge", unit_scale=True, desc=f"writing {path.name}", disable=not show_progress
    ) as bar:  # fmt: skip
        handle.write(
            f"# invented follow graph (prism_experiments.example_world, seed {graph.seed}): {n} accounts\n"
            "# follower followee\n"
        )
        if clean:
            if graph.n_edges > n * (n - 1) // 4:
                raise ValueError(f"n_edges: at most a quarter of n*(n-1) for a clean graph, got {graph.n_edges}")
            frame = pd.DataFrame({"a": np.empty(0, dtype=np.int64), "b": np.empty(0, dtype=np.int64)})
            while len(frame) < graph.n_edges:
                source, target = _draw_follows(graph, rng, graph.n_edges, popularity, activity)
                keep = source != target
                drawn = pd.DataFrame({"a": source[keep] + 1, "b": target[keep] + 1})
                frame = pd.concat([frame, drawn]).drop_duplicates()
            frame.head(graph.n_edges).to_csv(handle, sep=" ", header=False, index=False)
            bar.update(graph.n_edges)
            return graph.n_edges
        written = 0
        while written < graph.n_edges:
            m = max(1, round(min(CHUNK_EDGES, graph.n_edges - written) * drawn_per_line))
            source, target = _draw_follows(graph, rng, m, popularity, activity)
            lines = min(source.size, graph.n_edges - written)
            pd.DataFrame({"a": source[:lines] + 1, "b": target[:lines] + 1}).to_csv(
                handle, sep=" ", header=False, index=False
            )
            written += lines
            bar.update(lines)
    return written


def write_population(path: Path, graph: ExampleGraph, empty_activity_share: float = 0.2) -> None:
    """`population.csv`: each account's community topic plus, for some, a second topic; activity and post rate,
    with a share of activity cells left empty (drawn by the run)."""
    rng = np.random.default_rng(graph.seed + 1)
    nodes = np.arange(graph.n_nodes)
    topics = np.array(TOPICS, dtype=object)
    first = community(nodes, len(TOPICS))
    second = (first + rng.integers(1, len(TOPICS), graph.n_nodes)) % len(TOPICS)
    two = rng.random(graph.n_nodes) < 0.4
    interests = [f"{topics[a]}|{topics[b]}" if both else str(topics[a]) for a, b, both in zip(first, second, two)]
    activity = np.clip(0.1 * np.exp(rng.standard_normal(graph.n_nodes)), 0.01, 1.0).round(4)
    frame = pd.DataFrame(
        {
            "agent_id": nodes + 1,
            "interests": interests,
            "activity": np.where(rng.random(graph.n_nodes) < empty_activity_share, "", activity.astype(str)),
            "post_rate": rng.beta(0.8, 4.0, graph.n_nodes).round(4),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prism_experiments.example_world", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("runs/example_world"), help="directory to write into")
    parser.add_argument("--nodes", type=int, default=ExampleGraph.n_nodes)
    parser.add_argument("--edges", type=int, default=None, help="lines of the edge list (default: 6 per account)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-population", action="store_true", help="write the edge list only")
    parser.add_argument("--raw", action="store_true", help="leave self-follows and duplicate lines in")
    args = parser.parse_args(argv)
    if args.nodes < 2:
        print(f"--nodes: must be >= 2, got {args.nodes}", file=sys.stderr)
        return 2
    graph = ExampleGraph(n_nodes=args.nodes, n_edges=args.edges or 6 * args.nodes, seed=args.seed)
    edges = write_edge_list(args.out / "edges.txt", graph, clean=not args.raw)
    print(f"wrote {args.out / 'edges.txt'} ({edges:,} follows among {graph.n_nodes:,} accounts)")
    if not args.no_population:
        write_population(args.out / "population.csv", graph)
        print(f"wrote {args.out / 'population.csv'} ({graph.n_nodes:,} accounts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
