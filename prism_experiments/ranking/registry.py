"""build_ranker: one name per mode, one class per name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.rag.retriever import FeedRetriever
from prism_experiments.ranking.base import Ranker
from prism_experiments.ranking.config import KNOWN_MODES, RankingConfig
from prism_experiments.ranking.modes.simple import ChronologicalRanker, PreferenceRanker, RandomRanker
from prism_experiments.ranking.modes.x_algo import XAlgorithmRanker
from prism_experiments.ranking.reshares import ReshareLog

if TYPE_CHECKING:
    from prism_experiments.network import SocialGraph

RANKERS: dict[str, type[Ranker]] = {
    cls.mode: cls for cls in (XAlgorithmRanker, PreferenceRanker, RandomRanker, ChronologicalRanker)
}
assert set(RANKERS) == set(KNOWN_MODES), "every known mode needs a ranker class"


def build_ranker(
    config: RankingConfig,
    retriever: FeedRetriever,
    graph: "SocialGraph",
    rng: np.random.Generator | None = None,
    reshares: ReshareLog | None = None,
) -> Ranker:
    """The ranker for `config.mode`."""
    try:
        cls = RANKERS[config.mode]
    except KeyError:
        raise ValueError(f"ranking.mode: unknown mode {config.mode!r}; known modes: {', '.join(RANKERS)}") from None
    return cls(config, retriever, graph, rng, reshares)
