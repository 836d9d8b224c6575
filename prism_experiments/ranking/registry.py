"""build_ranker: one name per mode, one class per name."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.agents import AgentsConfig
from prism_experiments.rag.retriever import FeedRetriever
from prism_experiments.ranking.base import Ranker
from prism_experiments.ranking.config import KNOWN_MODES, RankingConfig
from prism_experiments.ranking.modes.context_rerank import ContextRerankRanker
from prism_experiments.ranking.modes.engagement_recency import EngagementRecencyRanker
from prism_experiments.ranking.modes.pooled_boost import PooledBoostRanker
from prism_experiments.ranking.modes.simple import ChronologicalRanker, PreferenceRanker, RandomRanker
from prism_experiments.ranking.modes.x_algo import XAlgorithmRanker
from prism_experiments.ranking.reshares import ReshareLog

if TYPE_CHECKING:
    from prism_experiments.network import SocialGraph

RANKERS: dict[str, type[Ranker]] = {
    cls.mode: cls
    for cls in (
        XAlgorithmRanker, PreferenceRanker, RandomRanker, ChronologicalRanker,
        EngagementRecencyRanker, PooledBoostRanker, ContextRerankRanker,
    )
}
assert set(RANKERS) == set(KNOWN_MODES), "every known mode needs a ranker class"


def takes_agents_config(cls: type[Ranker]) -> bool:
    """Whether the mode reads the agents' tables (it then takes `agents_config` as a keyword)."""
    return "agents_config" in inspect.signature(cls).parameters


def build_ranker(
    config: RankingConfig,
    retriever: FeedRetriever,
    graph: "SocialGraph",
    rng: np.random.Generator | None = None,
    reshares: ReshareLog | None = None,
    *,
    agents_config: AgentsConfig | None = None,
) -> Ranker:
    """The ranker for `config.mode`; `agents_config` (default: AgentsConfig()) goes to modes that take it."""
    try:
        cls = RANKERS[config.mode]
    except KeyError:
        raise ValueError(f"ranking.mode: unknown mode {config.mode!r}; known modes: {', '.join(RANKERS)}") from None
    if takes_agents_config(cls):
        return cls(config, retriever, graph, rng, reshares,  # type: ignore[call-arg]
                   agents_config=agents_config if agents_config is not None else AgentsConfig())
    return cls(config, retriever, graph, rng, reshares)
