"""The base models every mode's config extends, and the knobs several modes share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModeConfig(BaseModel):
    """One ranking mode's settings; each mode's subclass narrows `mode` to a Literal of its name."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: the ranking mode; selects the config model and the ranker (docs/ranking.md)
    mode: str


class CandidateSourcingConfig(ModeConfig):
    """The candidate sources (REQ-XALGO-1): in-network by followed author, out-of-network by similarity."""

    #: REQ-XALGO-1: in-network candidates per agent, best by similarity
    in_network_limit: int = Field(default=50, ge=1)
    #: REQ-XALGO-1: out-of-network candidates per agent (Chroma similarity query)
    out_of_network_limit: int = Field(default=50, ge=1)
