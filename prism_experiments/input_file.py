"""What every group that can read a user's file has in common: `source`, `path` (made absolute) and `sha256`."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator


class InputFileOptions(BaseModel):
    """A group's source: generated, or a file (`<group>=file <group>.path=...`) whose digest the config records."""

    model_config = ConfigDict(extra="forbid")
    #: the group's name and what its file gives, for the messages
    GROUP: ClassVar[str] = "group"
    WHAT: ClassVar[str] = "values"

    #: generated: drawn with the run's seed; file: read from `path` (docs/world_files.md)
    source: Literal["generated", "file"] = "generated"
    #: the file, required when source is file (made absolute when the config is validated)
    path: Path | None = None
    #: sha256 of the file, filled in when the config is validated; when set, the file must still have it
    #: (make reproduce refuses a changed file)
    sha256: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        """Absolute, so that a worker in another directory and `make reproduce` read the same file."""
        return None if value is None else Path(value).expanduser().resolve()

    @model_validator(mode="after")
    def _source_and_path(self) -> InputFileOptions:
        if self.source == "file" and self.path is None:
            raise ValueError(f"path: required when source is 'file' ({self.GROUP}=file {self.GROUP}.path=...)")
        if self.source == "generated" and self.path is not None:
            raise ValueError(f"path: set, but the {self.WHAT} is generated; choose {self.GROUP}=file to read it")
        return self
