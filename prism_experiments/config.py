"""The whole experiment's configuration, validated before any work starts.

Hydra composes `conf/`; `ExperimentConfig.from_dictconfig` checks every group against these
models, so a bad value fails with the field's dotted name before a run is created.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prism_experiments.agents.file_config import PopulationFileOptions
from prism_experiments.corpus.appeal import PostAppealConfig
from prism_experiments.corpus.synthetic import SyntheticCorpusConfig
from prism_experiments.deciders import DecidingAgentsConfig
from prism_experiments.deciders import config_models as decider_models
from prism_experiments.feed_store import FeedStoreConfig
from prism_experiments.file_digest import checked_sha256
from prism_experiments.llm import backend_config_models
from prism_experiments.locations import RUNS_DIR_ENV, TRACKING_URI_ENV, RunLayout, absolute_runs_dir, default_runs_dir
from prism_experiments.network.file_config import NetworkGroupConfig
from prism_experiments.ranking import DEFAULT_MODE, KNOWN_MODES, RankingConfig, ranking_config
from prism_experiments.ranking.serving_config import ServingConfig
from prism_experiments.simulation.config import SimulationConfig


class ConfigError(ValueError):
    """A configuration value is out of range; the message is one line naming the field."""


class CorpusConfig(SyntheticCorpusConfig):
    """The starting corpus: synthetic (authored by the agents) or a user's CSV/Parquet/JSONL file."""

    #: synthetic: written by the agents on their interests; file: `path` (docs/corpus.md)
    source: Literal["synthetic", "file"] = "synthetic"
    #: a CSV / Parquet / JSONL file (columns id, author_id, text, timestamp), required when source is file
    path: Path | None = None
    #: sha256 of the file, filled in when the config is validated; when set, the file must still have it
    sha256: str | None = None
    #: each post's latent appeal on the engagement logits (off by default; docs/model.md, "Post appeal")
    appeal: PostAppealConfig = Field(default_factory=PostAppealConfig)
    #: who wrote the synthetic starting corpus: uniform (every agent alike, as before) or authoring_rate (each agent
    #: in proportion to the original posts it writes per step in the run, activity x post_rate; docs/corpus.md)
    author_weights: Literal["uniform", "authoring_rate"] = "uniform"

    @model_validator(mode="after")
    def _file_needs_path(self) -> CorpusConfig:
        if self.source == "file" and self.path is None:
            raise ValueError("path: required when source is 'file'")
        return self


class AgentsGroupConfig(PopulationFileOptions, DecidingAgentsConfig):
    """The agents group: the population's distributions and who decides, or a population file (`agents=file`)."""


class PathsConfig(BaseModel):
    """Everything a run writes lives under `runs_dir`."""

    model_config = ConfigDict(extra="forbid")

    runs_dir: Path = Field(default_factory=default_runs_dir)

    @field_validator("runs_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return absolute_runs_dir(value)

    @property
    def layout(self) -> RunLayout:
        """Where each thing lives under `runs_dir` (prism_experiments/locations.py)."""
        return RunLayout(self.runs_dir)

    @property
    def cache_dir(self) -> Path:
        """`$PRISM_CACHE_DIR` (read in the process that runs), else `<runs_dir>/cache`."""
        return self.layout.cache_dir

    @property
    def artifacts_dir(self) -> Path:
        return self.layout.artifacts_dir

    @property
    def reports_dir(self) -> Path:
        return self.layout.reports_dir


class TrackingConfig(BaseModel):
    """Where runs are logged: the project's sqlite store, or a tracking server."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["sqlite", "server"] = "sqlite"
    #: explicit tracking URI; else $MLFLOW_TRACKING_URI; else sqlite under paths.runs_dir
    uri: str | None = None
    #: event-log tables as Parquet artifacts
    log_tables: bool = True
    log_figures: bool = True
    #: retries of one request to a tracking server (MLflow's own default, 7, gave up after 248 s)
    http_max_retries: int = Field(default=2, ge=0, le=10)
    #: urllib3 backoff between retries: factor * 2^(retry - 1) seconds
    http_backoff_factor: int = Field(default=1, ge=0, le=10)
    #: seconds one request may take; budget per request ~ (retries + 1) * timeout + backoff sleeps
    http_timeout_s: int = Field(default=10, ge=1, le=600)

    @model_validator(mode="after")
    def _server_needs_uri(self) -> TrackingConfig:
        if self.backend == "server" and not (self.uri or os.environ.get(TRACKING_URI_ENV)):
            raise ValueError("uri: required with tracking=server (or set MLFLOW_TRACKING_URI)")
        return self


class WorldConfig(BaseModel):
    """Which calibrated world a run uses and the population size it was fitted at (set by its world file)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    #: agents.n_agents of the calibration runs; the fitted values may not hold far from it
    fitted_n_agents: int = Field(ge=1)


#: a run whose population is more than this factor from its world's fitted size gets a warning
WORLD_SIZE_FACTOR = 2.0


def world_size_warning(world: WorldConfig | None, n_agents: int) -> str | None:
    """One line when `n_agents` is more than WORLD_SIZE_FACTOR times off the size `world` was fitted at."""
    if world is None:
        return None
    ratio = n_agents / world.fitted_n_agents
    if 1.0 / WORLD_SIZE_FACTOR <= ratio <= WORLD_SIZE_FACTOR:
        return None
    return (
        f"world={world.name} was fitted at agents.n_agents={world.fitted_n_agents}; this run has {n_agents} "
        f"({ratio:.3g}x): its calibrated values may not hold at this size "
        f"(fit one with prism-calibrate --n-agents {n_agents})"
    )


class ExperimentConfig(BaseModel):
    """One run: every group of `conf/`, plus the seed and the experiment's name."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(default=0, ge=0)
    experiment_name: str = Field(default="default", min_length=1)
    #: a label the simulation never reads: A/A checks run one config under two arms (conf/experiment/aa.yaml)
    arm: str | None = None
    force: bool = False
    #: `+force_memory=true`: run even when the run's estimated peak memory exceeds what this process may use
    #: (the memory preflight, prism_experiments/harness/preflight.py; docs/bench.md "Memory preflight")
    force_memory: bool = False
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)
    rag: FeedStoreConfig = Field(default_factory=FeedStoreConfig)
    agents: AgentsGroupConfig = Field(default_factory=AgentsGroupConfig)
    network: NetworkGroupConfig = Field(default_factory=NetworkGroupConfig)
    ranking: RankingConfig = Field(default_factory=lambda: ranking_config(DEFAULT_MODE))
    #: the calibrated world's name and fitted size (conf/world/); null for the uncalibrated model
    world: WorldConfig | None = None
    #: null: today's deterministic feed; else a stochastic policy logging propensities (conf/serving/, docs/ope.md)
    serving: ServingConfig | None = None
    simulation: SimulationConfig = Field(default_factory=SimulationConfig)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    paths: PathsConfig = Field(default_factory=PathsConfig)

    @model_validator(mode="after")
    def _depth_covers_the_feed(self) -> ExperimentConfig:
        if self.serving is not None and self.serving.depth < self.rag.feed_size:
            raise ValueError(
                f"serving.depth: must be >= rag.feed_size ({self.rag.feed_size}), got {self.serving.depth}"
            )
        if self.serving is not None and self.simulation.schedule:
            raise ValueError("simulation.schedule: must be empty with serving (a stochastic policy serves one mode)")
        return self

    @model_validator(mode="after")
    def _input_files(self) -> ExperimentConfig:
        """Digest each input file (or check the one a logged run names), then read and join the graph and
        population files: a bad file fails here, before any run or output folder exists (docs/world_files.md).
        The world's size is the files', so `agents.n_agents` is set from them."""
        for name, group in (("corpus", self.corpus), ("network", self.network), ("agents", self.agents)):
            if group.source != "file" or group.path is None:
                continue
            if name == "corpus" and group.sha256 is None and not Path(group.path).is_file():
                continue  # the corpus preflight (harness/preflight.py) names a missing corpus file
            group.sha256 = checked_sha256(f"{name}.sha256", Path(group.path), group.sha256)
        # simulation.* imports this module's dependencies: imported here, when a config is validated
        from prism_experiments.simulation.starting_world import corpus_topics
        from prism_experiments.simulation.world_files import EdgeFileError, PopulationFileError, world_accounts

        try:
            accounts = world_accounts(
                self.network, self.agents, corpus_topics(self.corpus), self.seed, self.simulation.show_progress
            )
        except EdgeFileError as error:
            raise ValueError(f"network.path: {error}") from None
        except PopulationFileError as error:
            raise ValueError(f"agents.path: {error}") from None
        if accounts is not None:
            self.agents.n_agents = len(accounts.ids)
        return self

    @property
    def cache_dir(self) -> Path:
        return self.rag.cache_dir or self.paths.cache_dir

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> ExperimentConfig:
        """Validate a plain dict; a bad value raises ConfigError with a one-line message."""
        try:
            return cls.model_validate({k: v for k, v in data.items() if k != "hydra"})
        except ValidationError as exc:
            raise ConfigError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """`config error: rag.feed_size: Input should be ... (got 0)`, one line, every problem joined by '; '."""
    parts = []
    union_tags = {"ranking": set(KNOWN_MODES), "decider": set(decider_models()), "llm": set(backend_config_models())}
    for error in exc.errors():
        # a discriminated union's tag (ranking.mode, agents.decider.kind, ...llm.backend) is not a level of keys
        loc = tuple(
            part
            for i, part in enumerate(error["loc"])
            if not (i and part in union_tags.get(str(error["loc"][i - 1]), ()))
        )
        location = ".".join(str(part) for part in loc)
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "union_tag_invalid":  # a discriminated union (ranking) got an unknown tag
            field = str(error["ctx"]["discriminator"]).strip("'()")  # the discriminator is named after its field
            expected = str(error["ctx"]["expected_tags"]).replace("'", "")
            message = f"{field}: unknown {field} {error['ctx']['tag']!r}; registered {field}s: {expected}"
        named = re.match(r"^([A-Za-z_]\w*): (.*)$", message)
        if named:  # a model-level check names its field in the message: fold it into the location
            field, message = named.groups()
            if not location.endswith(field):
                location = f"{location}.{field}" if location else field
        got = error.get("input")
        shown = "" if isinstance(got, dict) or got is None else f" (got {got!r})"
        parts.append(f"{location}: {message}{shown}" if location else f"{message}{shown}")
    return "config error: " + "; ".join(parts)


__all__ = [
    "RUNS_DIR_ENV",
    "AgentsGroupConfig",
    "ConfigError",
    "CorpusConfig",
    "ExperimentConfig",
    "PathsConfig",
    "TrackingConfig",
    "describe_validation_error",
]
