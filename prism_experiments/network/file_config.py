"""Where the follow graph comes from: the generator's knobs (`NetworkConfig`), or a user's file (`network=file`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prism_experiments.network.config import NetworkConfig


class EdgeFileOptions(BaseModel):
    """How a follow-graph file is read, sampled and joined with the population (docs/world_files.md)."""

    model_config = ConfigDict(extra="forbid")

    #: generated: drawn by the generator from the knobs above; file: read from `path` (network=file)
    source: Literal["generated", "file"] = "generated"
    #: CSV or Parquet (follower_id, followee_id), or a whitespace edge list (.txt, .edges, .edgelist, .tsv; # comments;
    #: .gz allowed); required when source is file
    path: Path | None = None
    #: false: each line is a mutual follow (two edges)
    directed: bool = True
    #: drop: self-follows are dropped and counted; error: a self-follow is a data error
    self_loops: Literal["drop", "error"] = "drop"
    #: null: every account of the file; N: the subgraph induced by N accounts sampled by sample_method
    sample_nodes: int | None = Field(default=None, ge=2)
    #: snowball: breadth-first waves from a random account (keeps local structure); uniform: N accounts at random
    sample_method: Literal["snowball", "uniform"] = "snowball"
    #: null: the sample follows the run's seed; N: one sample for every seed
    sample_seed: int | None = Field(default=None, ge=0)
    #: accounts the graph names that agents.path lacks: error; drop (them and their follows); add (drawn attributes)
    missing_accounts: Literal["error", "drop", "add"] = "error"
    #: sha256 of the file, filled in when the config is validated; when set, the file must still have it
    #: (make reproduce refuses a changed file)
    sha256: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        """Absolute, so that a worker in another directory and `make reproduce` read the same file."""
        return None if value is None else Path(value).expanduser().resolve()

    @model_validator(mode="after")
    def _source_and_path(self) -> EdgeFileOptions:
        if self.source == "file" and self.path is None:
            raise ValueError("path: required when source is 'file' (network=file network.path=...)")
        if self.source == "generated" and self.path is not None:
            raise ValueError("path: set, but the graph is generated; choose network=file to read it")
        if self.source == "generated" and self.sample_nodes is not None:
            raise ValueError("sample_nodes: samples a graph file; choose network=file")
        return self


class NetworkGroupConfig(EdgeFileOptions, NetworkConfig):
    """The network group: the generator's knobs, or a follow-graph file and how to read it."""
