"""Where the population comes from: drawn from `AgentsConfig`'s distributions, or a user's file (`agents=file`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from prism_experiments.input_file import InputFileOptions


class PopulationFileOptions(InputFileOptions):
    """The population's source (docs/world_files.md); what a file leaves out is drawn with the run's seed."""

    GROUP: ClassVar[str] = "agents"
    WHAT: ClassVar[str] = "population"

    #: CSV / Parquet / JSONL with agent_id and any of interests, activity, post_rate, like_bias, reshare_bias,
    #: reply_bias, archetype_<name>, position (docs/politics.md); required when source is file
    path: Path | None = None
