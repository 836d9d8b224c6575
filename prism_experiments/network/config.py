"""Validated configuration of the initial follow graph (`conf/network/`). Rationale: docs/model.md."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class NetworkConfig(BaseModel):
    """Out-degree distribution, interest homophily and preferential attachment of the follow graph."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    mean_out_degree: float = Field(default=20.0, ge=0.0)
    out_degree_sigma: float = Field(default=0.8, ge=0.0)
    homophily: float = Field(default=5.0, ge=1.0)
    preferential_attachment: float = Field(default=1.0, ge=0.0)
    attachment_offset: float = Field(default=1.0, gt=0.0)
