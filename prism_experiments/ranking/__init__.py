"""Ranking modes behind one interface (docs/ranking.md; REQ-XALGO, REQ-FEED-5, REQ-RETRIEVAL, REQ-POOLED, REQ-RERANK).

Each mode is a module of `ranking/modes/` that registers its ranker class and config model;
`RankingConfig` and `KNOWN_MODES` are views of that registry (docs/ranking.md, "Adding a ranking mode").
"""

from typing import TYPE_CHECKING

from prism_experiments.deprecation import renamed
from prism_experiments.network import DictSocialGraph, SocialGraph
from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.config import KNOWN_MODES, RankingConfig, ranking_config
from prism_experiments.ranking.mode_config import CandidateSourcingConfig, ModeConfig
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.ranking.registry import DEFAULT_MODE, RANKING_MODES, build_ranker, config_models, register_mode
from prism_experiments.ranking.reshares import ReshareLog

__all__ = [
    "DEFAULT_MODE",
    "KNOWN_MODES",
    "RANKING_MODES",
    "AgentView",
    "CandidateSourcingConfig",
    "DictSocialGraph",
    "ModeConfig",
    "RankedCandidate",
    "Ranker",
    "RankerInputs",
    "RankingConfig",
    "ReshareLog",
    "SocialGraph",
    "build_ranker",
    "config_models",
    "ranking_config",
    "register_mode",
]


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"RankerContext": RankerInputs})
