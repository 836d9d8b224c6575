"""Validated configuration of the initial follow graph (`conf/network/`). Rationale: docs/model.md."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class NetworkConfig(BaseModel):
    """Out-degree distribution, interest homophily and preferential attachment of the follow graph."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: mean accounts each agent follows; lognormal mean, clipped to [0, n_agents - 1]
    mean_out_degree: float = Field(default=20.0, ge=0.0)
    #: lognormal sigma of out-degree across agents; following counts are heavy-tailed (Kwak et al. 2010)
    out_degree_sigma: float = Field(default=0.8, ge=0.0)
    #: weight multiplier for a followee sharing >= 1 interest (1 = none); homophily (McPherson et al. 2001):
    #: ~0.72 of edges share an interest vs ~0.38 at 1
    homophily: float = Field(default=5.0, ge=1.0)
    #: exponent on (in_degree + offset) (0 = none, 1 = linear, Barabási & Albert 1999)
    preferential_attachment: float = Field(default=1.0, ge=0.0)
    #: initial attractiveness added to in-degree, so new accounts can be followed (Dorogovtsev et al. 2000)
    attachment_offset: float = Field(default=1.0, gt=0.0)
