"""Where the population comes from: drawn from `AgentsConfig`'s distributions, or a user's file (`agents=file`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator


class PopulationFileOptions(BaseModel):
    """The population's source (docs/world_files.md); what a file leaves out is drawn with the run's seed."""

    model_config = ConfigDict(extra="forbid")

    #: generated: every account drawn from the distributions above; file: the accounts of `path` (agents=file)
    source: Literal["generated", "file"] = "generated"
    #: CSV / Parquet / JSONL with agent_id and any of interests, activity, post_rate, like_bias, reshare_bias,
    #: reply_bias, archetype_<name>; required when source is file
    path: Path | None = None
    #: sha256 of the file, filled in when the config is validated; when set, the file must still have it
    sha256: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        """Absolute, so that a worker in another directory and `make reproduce` read the same file."""
        return None if value is None else Path(value).expanduser().resolve()

    @model_validator(mode="after")
    def _source_and_path(self) -> PopulationFileOptions:
        if self.source == "file" and self.path is None:
            raise ValueError("path: required when source is 'file' (agents=file agents.path=...)")
        if self.source == "generated" and self.path is not None:
            raise ValueError("path: set, but the population is generated; choose agents=file to read it")
        return self
