"""Where the follow graph comes from: the generator's knobs (`NetworkConfig`), or a user's file (`network=file`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from prism_experiments.input_file import InputFileOptions
from prism_experiments.network.config import NetworkConfig


class EdgeFileOptions(InputFileOptions):
    """How a follow-graph file is read, sampled and joined with the population (docs/world_files.md)."""

    GROUP: ClassVar[str] = "network"
    WHAT: ClassVar[str] = "graph"

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

    @model_validator(mode="after")
    def _sample_needs_a_file(self) -> EdgeFileOptions:
        if self.source == "generated" and self.sample_nodes is not None:
            raise ValueError("sample_nodes: samples a graph file; choose network=file")
        return self


class NetworkGroupConfig(EdgeFileOptions, NetworkConfig):
    """The network group: the generator's knobs, or a follow-graph file and how to read it."""
