"""Post appeal: a per-post latent appeal on the engagement logits (docs/model.md, "Post appeal").

Each post gets log-appeal a ~ Normal(0, sigma), added to the logit of like, reshare and reply of every agent who
looks at it, so its engagement odds are multiplied by exp(a), a lognormal factor with median 1. The default
sigma is the spread of log-popularity of Digg's 29,864 front-page stories of 2006 (Wu & Huberman 2007, PNAS
104(45):17599, "Novelty and collective attention": log(N_inf) normal with standard deviation 0.6626).

The draw is keyed by (seed, post id) on its own stream (Stream.APPEAL): a post has the same appeal under every
ranker, and no other stream's draws move when appeal is switched on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator
from scipy.special import ndtri

from prism_experiments.random_streams import Stream, keyed_uniforms

#: Wu & Huberman 2007: the standard deviation of log(N_inf), the final digg counts of 2006's front-page stories
WU_HUBERMAN_2007_SIGMA = 0.6626
#: the largest sigma accepted: exp(3 * 2.33) ~ 1,100x odds at the 99th percentile is already beyond any source
MAX_SIGMA = 3.0
#: half a step of keyed_uniforms' 2**-53 grid: the uniform stays inside (0, 1), so every normal is finite
_HALF_STEP = 2.0**-54


class PostAppealConfig(BaseModel):
    """Per-post latent appeal on the engagement logits (docs/model.md, "Post appeal")."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: none: every post of a topic, format and media flag is equally appealing (as before appeal was modelled);
    #: lognormal: each post's engagement odds are multiplied by exp(Normal(0, sigma)), drawn per post
    distribution: Literal["none", "lognormal"] = "none"
    #: standard deviation of log-appeal, in (0, 3]; 0.6626 = Wu & Huberman 2007's spread of log final diggs
    sigma: float = WU_HUBERMAN_2007_SIGMA

    @field_validator("sigma")
    @classmethod
    def _sigma_in_range(cls, value: float) -> float:
        if not 0.0 < value <= MAX_SIGMA:
            raise ValueError(f"must be in (0, {MAX_SIGMA:g}]")
        return value

    @property
    def enabled(self) -> bool:
        return self.distribution != "none"


def post_keys(post_ids: Sequence[str]) -> np.ndarray:
    """A stable 64-bit key per post id (BLAKE2b, so it does not change with Python's string hash seed)."""
    return np.array(
        [int.from_bytes(hashlib.blake2b(post_id.encode(), digest_size=8).digest(), "little") for post_id in post_ids],
        dtype=np.uint64,
    )


def standard_normal_by_post(seed: int, post_ids: Sequence[str]) -> np.ndarray:
    """One standard normal per post id, fixed by (seed, post id): the inverse normal CDF of a keyed uniform."""
    if not post_ids:
        return np.zeros(0)
    uniforms = keyed_uniforms(seed, Stream.APPEAL, 0, post_keys(post_ids), np.zeros(1, dtype=np.uint64))[:, 0]
    return np.asarray(ndtri(uniforms + _HALF_STEP), dtype=np.float64)


def log_appeal(seed: int, post_ids: Sequence[str], config: PostAppealConfig) -> np.ndarray:
    """Each post's log-appeal (its term in the engagement logits): 0 when appeal is off."""
    if not config.enabled:
        return np.zeros(len(post_ids))
    return config.sigma * standard_normal_by_post(seed, post_ids)


class PostAppeal:
    """The log-appeal of the posts a run shows, drawn once per post id (a post is shown many times)."""

    def __init__(self, seed: int, config: PostAppealConfig) -> None:
        self.seed, self.config = seed, config
        self._drawn: dict[str, float] = {}

    def of(self, post_ids: Sequence[str]) -> np.ndarray | None:
        """Log-appeal per entry of `post_ids`; None when appeal is off (the logits are left untouched)."""
        if not self.config.enabled:
            return None
        new = sorted({post_id for post_id in post_ids if post_id not in self._drawn})
        self._drawn.update(zip(new, log_appeal(self.seed, new, self.config).tolist()))
        return np.array([self._drawn[post_id] for post_id in post_ids], dtype=np.float64)
