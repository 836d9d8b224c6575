"""Politics in the world: the settings (`agents.politics`), off by default (REQ-POL-1).

Every default is a published input or a stated assumption (docs/politics.md has the table with each source):

- left_share 0.36, right_share 0.21: Pew Research Center 2019, "Sizing Up Twitter Users" (quoted source text at
  http://www.bessettepitney.net/2019/04/twitter-users.html): "36% [of adult Twitter users identify with the
  Democratic Party] ... 21% of adult Twitter users [as Republican]"; the rest (0.43: independents, 29%, and
  others) are the non-political agents.
- strong_left 0.238, strong_right 0.225: Gallup 2009 self-identification (quoted at
  http://freszzz.blogspot.com/2009/06/gallop-poll-conservatives-are-single.html): 40% conservative, 21% liberal,
  "9% ... 'very conservative' and 5% 'very liberal'": 5/21 of the left and 9/40 of the right are strong.
- like_minded_target 0.504, cross_cutting_target 0.147: Nyhan et al. 2023 (Nature 620:137), the median Facebook
  user's exposure by source, as a secondary summary gives it (fabiogiglietto/fg-zettelkasten
  vault/Papers/Nyhan2023-gb.md); the paper's abstract (source text) says only that like-minded content is "the
  majority". Follow homophily is fitted to these inputs (`politics.identity.fit_homophily`).
- political_post_share 0.13: Pew Research Center 2019 (quoted source text, fact-tank 2019/10/23): "Across all
  tweets from U.S. adults, just 13% focused on national politics".
- outgroup_log_odds ln(1.67): Rathje, Van Bavel & van der Linden 2021 (PNAS 118:e2024292118), abstract: "Each
  individual term referring to the political out-group increased the odds of a social media post being shared
  by 67%".
- moral_log_odds ln(1.20): Brady et al. 2017 (PNAS 114:7313), abstract: "moral-emotional words in messages
  increased their diffusion by a factor of 20% for each additional word".
- satisfaction_animosity_penalty 0.5: Milli et al. 2025 (PNAS Nexus; arXiv 2305.16941), the authors' code
  `add_stated_pref_labels` subtracts 0.5 from the stated preference (-1/0/+1) of a tweet the reader flagged for
  out-group animosity.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: the most out-group (and moral-emotional) terms a synthetic post carries: animosity = terms / MAX_TERMS
MAX_TERMS = 3


class PoliticsConfig(BaseModel):
    """Partisan agents, political posts and the behaviour that responds to them (REQ-POL-1..3); off by default."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: false: no politics (every existing world, bit-identical); true: the fields below apply
    enabled: bool = False
    #: share of agents on the left (Pew 2019: 36% of adult Twitter users are Democrats)
    left_share: float = Field(default=0.36, ge=0.0, le=1.0)
    #: share of agents on the right (Pew 2019: 21% Republicans); 1 - left - right are non-political
    right_share: float = Field(default=0.21, ge=0.0, le=1.0)
    #: share of left agents who are strong partisans, |position| in (2/3, 1] (Gallup 2009: 5% very liberal / 21%)
    strong_left: float = Field(default=5 / 21, ge=0.0, le=1.0)
    #: share of right agents who are strong partisans (Gallup 2009: 9% very conservative / 40% conservative)
    strong_right: float = Field(default=9 / 40, ge=0.0, le=1.0)
    #: follow weight multiplier for a same-side followee; null: fitted to the two targets below (`fit_homophily`)
    homophily: float | None = Field(default=None, ge=1.0, le=1000.0)
    #: median like-minded share of exposure (Nyhan et al. 2023, secondary summary): the homophily fit's input
    like_minded_target: float = Field(default=0.504, gt=0.0, lt=1.0)
    #: median cross-cutting share of exposure (Nyhan et al. 2023, secondary summary): the homophily fit's input
    cross_cutting_target: float = Field(default=0.147, gt=0.0, lt=1.0)
    #: share of all posts that are political (Pew 2019: 13% of US adults' tweets on national politics)
    political_post_share: float = Field(default=0.13, ge=0.0, le=1.0)
    #: sd of a post's slant around its author's position (assumption: slant stays on the author's side mostly)
    slant_noise_sd: float = Field(default=0.2, ge=0.0, le=1.0)
    #: mean out-group terms of a political post by a strong partisan (|position| 1), Poisson, capped at MAX_TERMS
    #: (assumption, scaled by |position|: stronger partisans write more about the out-group)
    outgroup_rate: float = Field(default=0.8, ge=0.0, le=float(MAX_TERMS))
    #: mean moral-emotional words of a political post, Poisson, capped at MAX_TERMS (assumption)
    moral_rate: float = Field(default=0.5, ge=0.0, le=float(MAX_TERMS))
    #: reshare log-odds per out-group term for a reader on the author's side (Rathje et al. 2021: ln 1.67)
    outgroup_log_odds: float = Field(default=math.log(1.67), ge=0.0, le=3.0)
    #: reshare log-odds per moral-emotional word (Brady et al. 2017: ln 1.20)
    moral_log_odds: float = Field(default=math.log(1.20), ge=0.0, le=3.0)
    #: like/reshare/reply log-odds per unit of alignment (reader position x post slant, in [-1, 1]); assumption,
    #: uncalibrated: pro-attitudinal content is engaged with more
    alignment_log_odds: float = Field(default=0.5, ge=0.0, le=5.0)
    #: stated-preference weight of alignment (assumption: Milli et al. 2025 find stated preferences favour
    #: pro-attitudinal content, qualitatively)
    satisfaction_alignment: float = Field(default=0.3, ge=0.0, le=1.0)
    #: stated-preference penalty of a fully hostile post (Milli et al. 2025's code: -0.5 for out-group animosity)
    satisfaction_animosity_penalty: float = Field(default=0.5, ge=0.0, le=2.0)

    @model_validator(mode="after")
    def _shares(self) -> PoliticsConfig:
        if self.left_share + self.right_share > 1.0:
            raise ValueError(
                f"left_share: left_share + right_share must be <= 1, got {self.left_share} + {self.right_share}"
            )
        if self.like_minded_target + self.cross_cutting_target >= 1.0:
            raise ValueError("like_minded_target: like_minded_target + cross_cutting_target must be < 1")
        return self

    @property
    def political_agent_share(self) -> float:
        return self.left_share + self.right_share
