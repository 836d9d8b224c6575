"""RankedCandidate: a post in a feed with every part of its score (REQ-XALGO-6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prism_experiments.domain import Post
from prism_experiments.domain.event_log import EXPOSURE_SOURCES

#: Where a candidate came from (the exposure table's `source` labels, EXPOSURE_SOURCES).
IN_NETWORK = "in_network"  # its author is followed
IN_NETWORK_RESHARE = "in_network_reshare"  # a followee reshared it
OUT_OF_NETWORK = "out_of_network"
SOURCES: tuple[str, ...] = EXPOSURE_SOURCES


@dataclass(slots=True)
class RankedCandidate:
    """A ranked post. `components` holds every multiplier or boost applied, so that
    `final_score` can be recomputed from `base_score` and its parts and logged."""

    post: Post
    base_score: float
    final_score: float
    in_network: bool
    source: str
    components: dict[str, float] = field(default_factory=dict)
    row: int = -1  # the post's row in the store's index
    via_agent_id: str | None = None  # the followee whose reshare made it in-network
