"""A loaded follow graph beside what the generator draws for the same accounts (docs/world_files.md).

The generator's graph is drawn over the run's own agents (their ids and interests) with the run's network knobs
and seed, so the two columns differ only in where the follows came from: how far the generated world is from
the researcher's. The moments are `network/edge_stats.GRAPH_MOMENTS`, which `make calibrate` can take as targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from prism_experiments.agents import SocialAgent
from prism_experiments.network import NetworkConfig, generate_follow_graph, with_following
from prism_experiments.network.edge_stats import GRAPH_MOMENTS, agents_graph_moments
from prism_experiments.random_streams import Stream, component_seed

FILE, GENERATOR = "file", "generator"
#: above this many accounts the generator's graph is not drawn for the comparison: it is O(accounts²)
#: (docs/history/bench.md, "the follow graph is built in O(agents²)"); the loaded graph's moments are still given
GENERATOR_MAX_ACCOUNTS = 20_000


def graph_comparison(agents: Sequence[SocialAgent], network: NetworkConfig, seed: int) -> pd.DataFrame:
    """Rows GRAPH_MOMENTS, columns `file` (the agents' follows) and `generator` (drawn for the same agents)."""
    loaded = agents_graph_moments(agents)
    if len(agents) <= GENERATOR_MAX_ACCOUNTS:
        graph = generate_follow_graph(agents, network, component_seed(seed, Stream.NETWORK))
        generated = agents_graph_moments(with_following(agents, graph))
    else:
        generated = dict.fromkeys(GRAPH_MOMENTS, math.nan)
    return pd.DataFrame({FILE: loaded, GENERATOR: generated}).rename_axis("moment")


def comparison_text(comparison: pd.DataFrame, n_accounts: int) -> str:
    """The side-by-side table, for the run's log."""
    width = max(len(moment) for moment in comparison.index)
    lines = [f"follow graph: the file's vs the generator's for the same {n_accounts:,} accounts"]
    lines.append(f"  {'moment':<{width}}  {FILE:>10}  {GENERATOR:>10}")
    for moment, row in comparison.iterrows():
        lines.append(f"  {moment:<{width}}  {row[FILE]:>10.4g}  {row[GENERATOR]:>10.4g}")
    if len(comparison) and comparison[GENERATOR].isna().all():
        lines.append(f"  (generator not drawn above {GENERATOR_MAX_ACCOUNTS:,} accounts)")
    return "\n".join(lines)
