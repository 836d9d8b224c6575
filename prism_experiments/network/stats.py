"""Descriptive statistics of a follow graph (for tests and for logging the initial graph)."""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

from prism_experiments.agents.social_agent import SocialAgent
from prism_experiments.network.graph import DictSocialGraph


def shared_interest_edge_share(graph: DictSocialGraph, agents: Sequence[SocialAgent]) -> float:
    """Share of follow edges whose two ends share at least one interest (NaN without edges)."""
    interests = {agent.id: set(agent.interests) for agent in agents}
    edges = graph.edges()
    if not edges:
        return float("nan")
    return sum(bool(interests.get(a, set()) & interests.get(b, set())) for a, b in edges) / len(edges)


def graph_stats(graph: DictSocialGraph, agents: Sequence[SocialAgent]) -> dict[str, float]:
    """Size, degree spread (coefficient of variation of in-degree), reciprocity and homophily share."""
    nx_graph = graph.to_networkx()
    in_degrees = np.array([d for _, d in nx_graph.in_degree()], dtype=float)
    n_edges = nx_graph.number_of_edges()
    mean_in = in_degrees.mean() if in_degrees.size else 0.0
    return {
        "n_nodes": float(nx_graph.number_of_nodes()),
        "n_edges": float(n_edges),
        "mean_out_degree": n_edges / nx_graph.number_of_nodes() if nx_graph.number_of_nodes() else 0.0,
        "max_in_degree": float(in_degrees.max()) if in_degrees.size else 0.0,
        "in_degree_cv": float(in_degrees.std() / mean_in) if mean_in > 0 else 0.0,
        "reciprocity": float(nx.overall_reciprocity(nx_graph)) if n_edges else 0.0,
        "shared_interest_edge_share": shared_interest_edge_share(graph, agents),
    }
