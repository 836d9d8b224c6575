"""The settings a run reads, as structural types: the engine never imports `prism_experiments.config`.

`ExperimentConfig` satisfies `RunSettings` without naming it, so `run_simulation(cfg)` takes one as
before, and `config.py` may import this package without closing an import loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from prism_experiments.agents import AgentsConfig
from prism_experiments.corpus.appeal import PostAppealConfig
from prism_experiments.deciders import DecidingAgentsConfig
from prism_experiments.feed_store import FeedStoreConfig
from prism_experiments.network import NetworkConfig
from prism_experiments.ranking import RankingConfig
from prism_experiments.simulation.config import SimulationConfig


class CorpusSettings(Protocol):
    """The corpus group: a synthetic generator's settings, or a file to load (`source`, `path`)."""

    @property
    def source(self) -> str: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def topics(self) -> Sequence[str]: ...
    @property
    def reference_time(self) -> datetime: ...
    @property
    def hashtag_fraction(self) -> float: ...
    @property
    def text_pool_size(self) -> int: ...
    @property
    def appeal(self) -> PostAppealConfig: ...
    @property
    def author_weights(self) -> str: ...
    def model_dump(self, *, mode: str = ..., exclude: set[str]) -> dict[str, Any]: ...


@runtime_checkable
class StartingWorldSettings(Protocol):
    """What the starting world is built from."""

    @property
    def seed(self) -> int: ...
    @property
    def corpus(self) -> CorpusSettings: ...
    @property
    def agents(self) -> AgentsConfig: ...
    @property
    def network(self) -> NetworkConfig: ...


@runtime_checkable
class RunSettings(StartingWorldSettings, Protocol):
    """Everything one simulation reads: the world's settings plus store, ranker, decider and step loop."""

    @property
    def agents(self) -> DecidingAgentsConfig: ...
    @property
    def rag(self) -> FeedStoreConfig: ...
    @property
    def ranking(self) -> RankingConfig: ...
    @property
    def simulation(self) -> SimulationConfig: ...
    @property
    def cache_dir(self) -> Path: ...


@dataclass(frozen=True)
class EngineSettings:
    """What the step loop itself reads; the store and the ranker come to it already built."""

    seed: int
    simulation: SimulationConfig
    agents: AgentsConfig
    #: the time of step 0
    start: datetime
    hashtag_fraction: float
    #: new posts' texts from the corpus's pool (0: composed afresh)
    text_pool_size: int
    prompt_max_chars: int | None
    #: shown on the progress bar
    label: str

    @classmethod
    def of(cls, run: RunSettings) -> EngineSettings:
        """The engine's share of a run's settings."""
        return cls(
            seed=run.seed,
            simulation=run.simulation,
            agents=run.agents,
            start=run.corpus.reference_time,
            hashtag_fraction=run.corpus.hashtag_fraction,
            text_pool_size=run.corpus.text_pool_size,
            prompt_max_chars=run.rag.prompt_max_chars,
            label=run.ranking.mode,
        )
