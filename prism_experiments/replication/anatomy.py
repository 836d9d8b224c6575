"""`python -m prism_experiments.replication.anatomy`: the cascade anatomy of a world's runs, as markdown tables.

Simulates the given seeds in this process (the research world's x_algo run by default) and prints, from
`metrics/cascade_anatomy.py`: every cascade of >= 100 accounts, the size bands, reshares by exposure path and depth,
and the starting follower-count distribution beside the published figures it is read against (docs/validation.md,
"Why large cascades are as viral as random trees").
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from prism_experiments.analysis.report import markdown_table
from prism_experiments.command_line import EXIT_OK, command_main, usage_error
from prism_experiments.machine import cpu_model
from prism_experiments.metrics.cascade_anatomy import (
    EXPOSURE_PATHS,
    anatomy_by_band,
    cascade_anatomy,
    follower_distribution,
    path_depths,
    reshare_paths,
    top_decile_median_ratio,
)
from prism_experiments.metrics.moments import LARGE_CASCADE_SIZE, top_share

PROGRAM = "python -m prism_experiments.replication.anatomy"
#: the research world's x_algo run (`replicate_goel2016`'s arm)
RESEARCH_RUN: tuple[str, ...] = (
    "world=x2023_10k_tail",
    "agents.n_agents=10000",
    "corpus.n_posts=20000",
    "simulation.n_steps=48",
    "ranking=x_algo",
)
#: published follower-count figures the world's distribution is read against (docs/validation.md gives the quotes)
PUBLISHED = {
    "Bruner 2013, active accounts: p50": 61.0,
    "Bruner 2013: p96": 1000.0,
    "Bruner 2013: p99": 3000.0,
    "Pew 2019: median followers, top 10% by tweets / bottom 90%": 387.0 / 19.0,
}


@dataclass(frozen=True)
class SeedTables:
    """What the anatomy of one run reads: its event tables and its accounts' starting follower counts."""

    seed: int
    cascade_edges: pd.DataFrame
    engagements: pd.DataFrame
    posts: pd.DataFrame
    #: account id -> followers in the starting graph
    followers: pd.Series
    #: account id -> post rate (the propensity to write an original post)
    post_rate: pd.Series


def simulate(overrides: Sequence[str], seed: int) -> SeedTables:
    """Run one seed of `overrides` in this process and keep what the anatomy reads."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation import run_simulation
    from prism_experiments.simulation.starting_world import build_starting_world

    cfg = compose_experiment([*overrides, f"seed={seed}", "simulation.show_progress=false"])
    world = build_starting_world(cfg)
    ids = [agent.id for agent in world.agents]
    followers = pd.Series([len(world.graph.followers(i)) for i in ids], index=ids, dtype=float)
    post_rate = pd.Series([agent.post_rate for agent in world.agents], index=ids, dtype=float)
    result = run_simulation(cfg, world=world)
    return SeedTables(seed, result.cascade_edges, result.engagements, result.posts, followers, post_rate)


def _number(value: float) -> str:
    if not np.isfinite(value):
        return "–"
    return f"{value:.0f}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.3g}"


def report(runs: Sequence[SeedTables]) -> str:
    """The anatomy tables of `runs` (one per seed), pooled over seeds where a table says so."""
    from prism_experiments.replication.findings.goel2016 import random_recursive_tree_virality

    anatomies, paths = [], []
    for run in runs:
        seed_paths = reshare_paths(run.cascade_edges, run.engagements)
        anatomy = cascade_anatomy(seed_paths, run.posts, run.followers)
        anatomies.append(anatomy.assign(seed=run.seed))
        large_roots = set(anatomy.loc[anatomy["size"] >= LARGE_CASCADE_SIZE, "root_post_id"])
        paths.append(seed_paths.assign(large=seed_paths["root_post_id"].isin(large_roots)))
    anatomy, path = pd.concat(anatomies, ignore_index=True), pd.concat(paths, ignore_index=True)
    parts = []

    large = anatomy.loc[anatomy["size"] >= LARGE_CASCADE_SIZE].sort_values(["seed", "size"])
    benchmark = random_recursive_tree_virality(large["size"].to_numpy()) if len(large) else np.zeros(0)
    headers = ["seed", "size", "virality", "random tree", "depth", "root followers", "root's children",
               "root or its children", "largest broadcast", "its share", *EXPOSURE_PATHS]  # fmt: skip
    rows = [
        [
            int(row.seed),
            int(row.size),
            f"{row.structural_virality:.2f}",
            f"{bench:.2f}",
            int(row.depth),
            _number(row.root_followers),
            int(row.root_children),
            f"{row.root_or_children_share:.3f}",
            int(row.largest_broadcast),
            f"{row.largest_broadcast_share:.3f}",
            *(f"{getattr(row, f'{p}_share'):.3f}" for p in EXPOSURE_PATHS),
        ]
        for row, bench in zip(large.itertuples(), benchmark)
    ]
    parts += [f"## Cascades of >= {LARGE_CASCADE_SIZE} accounts ({len(large)})", markdown_table(headers, rows)]
    if len(large):
        parts.append(
            f"mean virality {large['structural_virality'].mean():.2f}, random recursive trees of the same sizes "
            f"{benchmark.mean():.2f}: difference {large['structural_virality'].mean() - benchmark.mean():+.2f}"
        )

    bands = anatomy_by_band(anatomy)
    parts += [
        "## By size (pooled over seeds; means over cascades, medians where named)",
        markdown_table(["band", *bands.columns], [[band, *map(_number, values)] for band, values in bands.iterrows()]),
    ]
    for label, subset in (("every cascade", path), (f"cascades of >= {LARGE_CASCADE_SIZE}", path[path["large"]])):
        table = path_depths(subset)
        parts += [
            f"## Reshares by exposure path and depth: {label} (depth 8 = 8 or deeper)",
            markdown_table(["path", *map(str, table.columns)], [[p, *row] for p, row in table.iterrows()]),
        ]

    stats = pd.DataFrame([follower_distribution(run.followers.to_numpy()) for run in runs])
    ratios = [
        top_decile_median_ratio(run.followers.to_numpy(), run.post_rate.reindex(run.followers.index).to_numpy())
        for run in runs
    ]
    stats["top_decile_post_rate_median_ratio"] = ratios
    # who wrote the posts: the top tenth's share of the starting corpus and of what was written in the run
    for label, starting in (("starting_corpus", True), ("run", False)):
        stats[f"{label}_top_decile_authorship"] = [
            top_share(
                run.posts.loc[(run.posts["created_step"] < 0) == starting, "author_id"]
                .value_counts()
                .reindex(run.followers.index, fill_value=0)
                .to_numpy()
            )
            for run in runs
        ]
    parts += [
        "## Starting follower counts and authorship (mean over seeds, each seed's graph)",
        markdown_table(["statistic", "value"], [[name, _number(float(stats[name].mean()))] for name in stats.columns]),
        "published: " + "; ".join(f"{name} {value:.3g}" for name, value in PUBLISHED.items()),
    ]
    return "\n\n".join(parts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="Simulate seeds of a world in this process and print the anatomy of its reshare cascades.",
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="seeds to simulate (default 0 1 2)")
    parser.add_argument("--save", type=Path, default=None, help="also write every cascade's anatomy as CSV here")
    parser.add_argument("overrides", nargs="*", help=f"Hydra overrides (default: {' '.join(RESEARCH_RUN)})")
    return parser


def run(args: argparse.Namespace) -> int:
    """Simulate, measure, print."""
    from prism_experiments.config import ConfigError

    overrides = list(args.overrides) or list(RESEARCH_RUN)
    started = time.perf_counter()
    try:
        runs = [simulate(overrides, seed) for seed in args.seeds]
    except ConfigError as exc:
        return usage_error(PROGRAM, str(exc))
    text = report(runs)
    print(f"overrides: {' '.join(overrides)}; seeds {' '.join(map(str, args.seeds))}")
    print(f"CPU: {cpu_model()}; {time.perf_counter() - started:.0f} s wall\n")
    print(text)
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)
        for run_ in runs:
            paths = reshare_paths(run_.cascade_edges, run_.engagements)
            cascade_anatomy(paths, run_.posts, run_.followers).to_csv(args.save / f"anatomy_seed{run_.seed}.csv")
    return EXIT_OK


main = command_main(build_parser, run)

if __name__ == "__main__":
    sys.exit(main())
