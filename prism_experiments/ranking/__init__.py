"""Ranking modes behind one interface (seeds 000-004 and the design's mode table)."""

from prism_experiments.network import DictSocialGraph, SocialGraph
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.config import (
    KNOWN_MODES,
    ContextRerankConfig,
    EngagementRecencyConfig,
    PooledBoostConfig,
    RankingConfig,
)
from prism_experiments.ranking.modes.context_rerank import ContextRerankRanker
from prism_experiments.ranking.modes.engagement_recency import EngagementRecencyRanker
from prism_experiments.ranking.modes.pooled_boost import PooledBoostRanker
from prism_experiments.ranking.modes.simple import ChronologicalRanker, PreferenceRanker, RandomRanker
from prism_experiments.ranking.modes.x_algo import XAlgorithmRanker
from prism_experiments.ranking.registry import RANKERS, build_ranker
from prism_experiments.ranking.reshares import ReshareLog

__all__ = [
    "AgentView",
    "ChronologicalRanker",
    "ContextRerankConfig",
    "ContextRerankRanker",
    "DictSocialGraph",
    "EngagementRecencyConfig",
    "EngagementRecencyRanker",
    "KNOWN_MODES",
    "PooledBoostConfig",
    "PooledBoostRanker",
    "PreferenceRanker",
    "RANKERS",
    "RandomRanker",
    "RankedCandidate",
    "RankingConfig",
    "Ranker",
    "ReshareLog",
    "SocialGraph",
    "XAlgorithmRanker",
    "build_ranker",
]
