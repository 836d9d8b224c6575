"""What a run returns: its event log plus the agents, final graph, rendered feeds and timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from prism_experiments.agents import SocialAgent
from prism_experiments.domain import SERVING_CANDIDATES, EventLog, empty_table
from prism_experiments.network import DictSocialGraph


@dataclass
class SimulationResult(EventLog):
    """The event log of a run, plus what produced it."""

    agents: list[SocialAgent] = field(default_factory=list)
    #: the follow graph at the end of the run (its sorted edge list is `final_graph_edges`, built when asked for:
    #: sorting 461,000 edges of a 10,000-agent world costs about half a second that most runs never need)
    final_graph: DictSocialGraph = field(default_factory=DictSocialGraph)
    rendered_feeds: dict[str, str] = field(default_factory=dict)
    ranker_debug: list[dict[str, Any]] = field(default_factory=list)
    #: per-step figures of the ranker (name -> step -> value), e.g. a learned predictor's AUC
    ranker_series: dict[str, dict[int, float]] = field(default_factory=dict)
    #: the ranker's own end-of-run tables (name -> table), e.g. a collaborative filter's user factors
    ranker_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: with a ranking schedule, one (mode, schedule entry) per step: the entry is 0 for `ranking`, i for the i-th
    #: entry of `simulation.schedule`; empty without a schedule
    served_modes: list[tuple[str, int]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    #: LLM decision figures of the run (calls, tokens, cache hits, malformed answers); empty for rules
    decider_stats: dict[str, float] = field(default_factory=dict)
    #: the same figures per step
    decider_series: list[dict[str, float]] = field(default_factory=list)
    #: the agents that decided by asking a model (llm: all, hybrid: a seeded share, rules: none)
    llm_agent_ids: list[str] = field(default_factory=list)
    #: the identity of the model they asked (as in the response-cache keys), None when no agent asked one
    llm_model: str | None = None
    #: stochastic serving's candidate cells and their propensities (no rows without it; docs/ope.md)
    serving_candidates: pd.DataFrame = field(default_factory=lambda: empty_table(SERVING_CANDIDATES))

    @property
    def final_graph_edges(self) -> list[tuple[str, str]]:
        """Every (follower, followee) of the final graph, sorted."""
        return self.final_graph.edges()
