"""Validated configuration of the initial follow graph (`conf/network/`). Rationale: docs/model.md."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the largest followee post-rate elasticity accepted (fitted: 0.251; 5 makes a few posters hold every follower)
MAX_POST_RATE_ELASTICITY = 5.0


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
    #: exponent k of the followee's post rate in its follow weight, (post_rate / mean post rate)^k: accounts that
    #: post more draw more followers (Pew Research Center 2019); None = off, the graph as before, bit for bit
    followee_post_rate_elasticity: float | None = None

    @field_validator("followee_post_rate_elasticity", mode="before")
    @classmethod
    def _elasticity_in_range(cls, value: object) -> object:
        # one message for every bad value, a word or a number out of range, naming what is allowed
        if value is None:
            return value
        allowed = f"must be null (off) or a number in [0, {MAX_POST_RATE_ELASTICITY:g}]"
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(allowed)
        try:
            number = float(value)
        except ValueError:
            raise ValueError(allowed) from None
        if not 0.0 <= number <= MAX_POST_RATE_ELASTICITY:
            raise ValueError(allowed)
        return number
