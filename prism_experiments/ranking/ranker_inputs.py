"""RankerInputs: everything a ranker is built from besides its own config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.deprecation import renamed
from prism_experiments.feed_store.retriever import FeedRetriever
from prism_experiments.ranking.reshares import ReshareLog

if TYPE_CHECKING:
    from prism_experiments.agents import AgentsConfig
    from prism_experiments.corpus.appeal import PostAppeal
    from prism_experiments.network import SocialGraph


@dataclass(frozen=True)
class RankerInputs:
    """The store, the follow graph, the ranker's random stream, the reshare log and the agents' tables.

    `rng` None means a fixed stream (seed 0); `agents` None means `AgentsConfig()`'s tables; `depth` is how
    many candidates a ranker returns per agent (None: `rag.feed_size`; stochastic serving samples from more).
    """

    retriever: FeedRetriever
    graph: SocialGraph
    rng: np.random.Generator | None = None
    reshares: ReshareLog = field(default_factory=ReshareLog)
    agents: AgentsConfig | None = None
    depth: int | None = None
    #: the posts' latent appeal (corpus.appeal), for a predictor that knows the behaviour model (the oracle)
    appeal: PostAppeal | None = None
    #: each agent's political position by id (None: non-political) when politics is on, else None: x_algo's
    #: like-minded demotion reads the authors' sides from it (REQ-POL-13)
    positions: Mapping[str, float | None] | None = None


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"RankerContext": RankerInputs})
