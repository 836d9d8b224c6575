"""RankingConfig: the mode and every knob of every mode, validated in one place (seed 000)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Every mode the registry knows; `build_ranker` and the config validation share this list.
KNOWN_MODES: tuple[str, ...] = ("x_algo", "preference", "random", "chronological")


class RankingConfig(BaseModel):
    """Scale factors and limits of seed 000's `RankingConfig`, plus the choice of mode."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "x_algo"
    #: seed 000: out-of-network candidates x 0.75
    out_of_network_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: seed 000: replies (parent_id set) x 0.75
    reply_scale: float = Field(default=0.75, ge=0.0, le=1.0)
    #: seed 000: score *= max(floor, decay^occurrence)
    author_diversity_decay: float = Field(default=0.5, gt=0.0, le=1.0)
    author_diversity_floor: float = Field(default=0.25, ge=0.0, le=1.0)
    #: `seed`: max(floor, decay^k); `home_mixer`: (1 - floor) * decay^k + floor
    #: (twitter/the-algorithm, home-mixer DiversityDiscountProvider)
    author_diversity_formula: Literal["seed", "home_mixer"] = "seed"
    in_network_limit: int = Field(default=50, ge=1)
    out_of_network_limit: int = Field(default=50, ge=1)
    #: random and chronological: how far back "recent" reaches
    recent_window_hours: float = Field(default=24.0, gt=0.0)

    @field_validator("mode")
    @classmethod
    def _mode_is_known(cls, mode: str) -> str:
        if mode not in KNOWN_MODES:
            raise ValueError(f"unknown ranking mode {mode!r}; known modes: {', '.join(KNOWN_MODES)}")
        return mode
