"""What every decider shares: a step's impressions, the decisions and texts it returns, how it is built and asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from prism_experiments.agents import AgentsConfig, PopulationArrays, SocialAgent
from prism_experiments.corpus.appeal import PostAppealConfig
from prism_experiments.deprecation import renamed
from prism_experiments.domain import Post
from prism_experiments.ranking.step_feeds import StepFeeds


@dataclass(frozen=True)
class Impressions:
    """A step's (agent, feed position, post) pairs, feeds one after another; arrays are aligned. `rows` are the posts'
    store rows (per-post arrays of the store index by them)."""

    agent_idx: np.ndarray
    positions: np.ndarray
    posts: Sequence[Post]
    in_network: np.ndarray
    similarity: np.ndarray
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass(frozen=True)
class Decisions:
    """Per impression: which actions the agent takes (likes and reshares before the once-only rule)."""

    liked: np.ndarray
    reshared: np.ndarray
    replied: np.ndarray
    follows: np.ndarray


@dataclass(frozen=True)
class StepActions:
    """A step's decisions and the texts a model wrote."""

    decisions: Decisions
    #: impression index -> the reply text a model wrote (others' replies are written from templates)
    reply_texts: dict[int, str] = field(default_factory=dict)
    #: agent index -> the new post a model wrote
    new_posts: dict[int, str] = field(default_factory=dict)


class BaseDeciderConfig(BaseModel):
    """One decider's settings; each decider's subclass narrows `kind` to a Literal of its name."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: who decides what an agent does with its feed (`agents/decider=<kind>`); selects the config model
    kind: str

    def token_prices(self) -> tuple[float, float]:
        """Price per 1,000 input and output tokens of the model this decider asks (0, 0 without one)."""
        return 0.0, 0.0


@dataclass(frozen=True)
class DeciderInputs:
    """What a decider is built from: the run's seed, its agents and their arrays, the feed and prompt sizes."""

    seed: int
    agents: AgentsConfig
    population: Sequence[SocialAgent]
    arrays: PopulationArrays
    feed_size: int
    prompt_max_chars: int | None
    cache_dir: Path
    show_progress: bool = False
    #: the posts' latent appeal on the rule model's logits (corpus.appeal; off by default)
    appeal: PostAppealConfig = field(default_factory=PostAppealConfig)


class Decider(Protocol):
    """Turns a step's feeds into actions; registered under its config model's `kind` (`register_decider`)."""

    config_model: ClassVar[type[BaseDeciderConfig]]

    def decide_step(
        self, step: int, now: datetime, active: np.ndarray, feeds: StepFeeds, impressions: Impressions
    ) -> StepActions: ...

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        """Per active agent: does the rule authoring model decide whether it writes a post."""
        ...

    def llm_agents(self) -> np.ndarray:
        """Per agent: does it decide by asking a model (logged with the run's agents table)."""
        ...

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        """Run totals and one row per step of the model calls (empty without a model)."""
        ...

    def model_identity(self) -> str | None:
        """The identity of the model it asks (as in the response-cache keys), None without one."""
        ...


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"DeciderContext": DeciderInputs})
