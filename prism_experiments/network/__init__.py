"""The follow graph: `SocialGraph` protocol, `DictSocialGraph`, its config and seeded generation."""

from prism_experiments.network.config import NetworkConfig
from prism_experiments.network.generate import (
    draw_out_degrees,
    generate_follow_graph,
    interest_bitsets,
    with_following,
)
from prism_experiments.network.graph import DictSocialGraph, SocialGraph
from prism_experiments.network.stats import graph_stats, shared_interest_edge_share
from prism_experiments.network.successive import weighted_sample_without_replacement

__all__ = [
    "DictSocialGraph",
    "NetworkConfig",
    "SocialGraph",
    "draw_out_degrees",
    "generate_follow_graph",
    "graph_stats",
    "interest_bitsets",
    "shared_interest_edge_share",
    "weighted_sample_without_replacement",
    "with_following",
]
