"""A user's accounts from a file (.csv, .parquet, .jsonl) -> per-account values, each column with a mask of the
rows that give it; what a file leaves out is drawn by `generate_population` with the run's seed (`overlay`).

Required column: `agent_id` (a string or an integer, no whitespace, unique). Optional: `interests` (1 to 3
distinct topics of the run's topic list; in CSV separated by `|`, `;` or `,`, in JSONL/Parquet also a list),
`activity` and `post_rate` (in [0, 1]), `like_bias`, `reshare_bias`, `reply_bias` (finite logit offsets) and
`archetype_<name>` for each of `ARCHETYPES` (weights >= 0, normalised per row; an archetype column the file
lacks weighs 0 where a row gives any). An empty cell is drawn like a missing column. Other columns are ignored
(and named in the run's log). Every problem raises `PopulationFileError`: one line naming the file, the 1-based
data row (JSONL: the line) and the column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from prism_experiments.agents.archetypes import ARCHETYPES
from prism_experiments.agents.config import AgentsConfig
from prism_experiments.agents.population import reply_talkativeness_offset
from prism_experiments.agents.social_agent import MAX_INTERESTS, SocialAgent
from prism_experiments.table_files import CellError, cell_identifier, is_missing, read_records

ID_COLUMN = "agent_id"
INTERESTS = "interests"
#: numeric columns and their allowed range (None: any finite number)
NUMBERS: dict[str, tuple[float, float] | None] = {
    "activity": (0.0, 1.0),
    "post_rate": (0.0, 1.0),
    "like_bias": None,
    "reshare_bias": None,
    "reply_bias": None,
}
ARCHETYPE_PREFIX = "archetype_"
ARCHETYPE_COLUMNS: tuple[str, ...] = tuple(f"{ARCHETYPE_PREFIX}{name}" for name in ARCHETYPES)
#: the political position column (REQ-POL-3): a number on the left-right axis, -1 (left) to 1 (right); read by a
#: world with `agents.politics.enabled`; an empty cell keeps the drawn position (or none)
POSITION = "position"
POSITION_BOUNDS = (-1.0, 1.0)
#: what a population file may give, besides agent_id (the archetype weights count as one attribute)
ATTRIBUTES: tuple[str, ...] = (INTERESTS, *NUMBERS, "archetype_weights", POSITION)
_SEPARATORS = re.compile(r"[|;,]")
_WHITESPACE = re.compile(r"\s")


class PopulationFileError(ValueError):
    """A population file that cannot become accounts; the message names file, row and column."""


@dataclass(frozen=True)
class PopulationTable:
    """A validated population file: ids in file order, and per attribute its values and the rows that give them."""

    path: Path
    ids: list[str]
    interests: list[list[str] | None]
    numbers: dict[str, np.ndarray]
    #: attribute -> bool array: the row gives it (for archetype_weights: any archetype column)
    given: dict[str, np.ndarray]
    #: (n, len(ARCHETYPES)) weights normalised per row, rows without any left at 0
    archetypes: np.ndarray
    ignored_columns: tuple[str, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.ids)

    def file_attributes(self) -> tuple[str, ...]:
        """The attributes at least one row gives, in ATTRIBUTES order."""
        return tuple(name for name in ATTRIBUTES if self.given[name].any())

    def drawn_attributes(self) -> tuple[str, ...]:
        """The attributes drawn for every account (no row gives them)."""
        return tuple(name for name in ATTRIBUTES if not self.given[name].any())


def _account_id(value: Any) -> str:
    text = cell_identifier(value)
    if _WHITESPACE.search(text):
        raise CellError(f"id {text!r} contains whitespace; ids must not")
    return text


def _number(value: Any, bounds: tuple[float, float] | None) -> float:
    allowed = "a finite number" if bounds is None else f"a number in [{bounds[0]:g}, {bounds[1]:g}]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, str)):
        raise CellError(f"must be {allowed}, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise CellError(f"must be {allowed}, got {value!r}") from None
    if not math.isfinite(number) or (bounds is not None and not bounds[0] <= number <= bounds[1]):
        raise CellError(f"must be {allowed}, got {value!r}")
    return number


def _interests(value: Any, topics: Sequence[str]) -> list[str]:
    if isinstance(value, str):
        names = [part.strip() for part in _SEPARATORS.split(value) if part.strip()]
    elif isinstance(value, (list, tuple, np.ndarray)) and all(isinstance(item, str) for item in value):
        names = [str(item).strip() for item in value]
    else:
        raise CellError(f"must be topic names separated by '|' (or a list of them), got {value!r}")
    unknown = [name for name in names if name not in topics]
    if unknown:
        raise CellError(f"unknown topic {unknown[0]!r}; allowed: {', '.join(topics)}")
    if not 1 <= len(names) <= MAX_INTERESTS or len(set(names)) != len(names):
        raise CellError(f"must name 1 to {MAX_INTERESTS} distinct topics, got {names}")
    return names


def read_population_file(path: str | Path, topics: Sequence[str]) -> PopulationTable:
    """The accounts of `path`, validated against `topics` (PopulationFileError; FileNotFoundError if absent)."""
    path = Path(path)
    columns, records = read_records(path, PopulationFileError)
    if not records:
        raise PopulationFileError(f"{path}: no accounts (the file has no data rows)")
    if ID_COLUMN not in columns:
        raise PopulationFileError(
            f"{path}: header: missing required column {ID_COLUMN!r} (found: {', '.join(columns) or 'none'})"
        )
    n = len(records)
    ids: list[str] = []
    first_row_of: dict[str, int] = {}
    interests: list[list[str] | None] = [None] * n
    numbers = {name: np.full(n, np.nan) for name in (*NUMBERS, POSITION)}
    archetypes = np.zeros((n, len(ARCHETYPES)))
    given = {name: np.zeros(n, dtype=bool) for name in ATTRIBUTES}
    present_archetypes = [column for column in ARCHETYPE_COLUMNS if column in columns]
    for index, (row, record) in enumerate(records):

        def fail(column: str, problem: str, row: int = row) -> PopulationFileError:
            return PopulationFileError(f"{path}: row {row}, column {column!r}: {problem}")

        try:
            value = record.get(ID_COLUMN)
            if is_missing(value):
                raise CellError("missing value (required)")
            account = _account_id(value)
        except CellError as error:
            raise fail(ID_COLUMN, str(error)) from None
        if account in first_row_of:
            raise fail(ID_COLUMN, f"duplicate id {account!r} (first seen in row {first_row_of[account]})")
        first_row_of[account] = row
        ids.append(account)
        column = INTERESTS
        try:
            if not is_missing(value := record.get(INTERESTS)):
                interests[index] = _interests(value, topics)
                given[INTERESTS][index] = True
            for column, bounds in (*NUMBERS.items(), (POSITION, POSITION_BOUNDS)):
                if not is_missing(value := record.get(column)):
                    numbers[column][index] = _number(value, bounds)
                    given[column][index] = True
            for column in present_archetypes:
                if not is_missing(value := record.get(column)):
                    archetypes[index, ARCHETYPE_COLUMNS.index(column)] = _number(value, (0.0, math.inf))
                    given["archetype_weights"][index] = True
        except CellError as error:
            raise fail(column, str(error)) from None
        if given["archetype_weights"][index]:
            total = archetypes[index].sum()
            if total <= 0:
                raise fail(present_archetypes[0], "archetype weights must have a positive sum, got all 0")
            archetypes[index] /= total
    known = {ID_COLUMN, INTERESTS, *NUMBERS, *ARCHETYPE_COLUMNS, POSITION}
    return PopulationTable(
        path=path,
        ids=ids,
        interests=interests,
        numbers=numbers,
        given=given,
        archetypes=archetypes,
        ignored_columns=tuple(column for column in columns if column not in known),
    )


def overlay(
    drawn: Sequence[SocialAgent], table: PopulationTable, rows: np.ndarray, config: AgentsConfig
) -> list[SocialAgent]:
    """`drawn` (a generated population, one per account) with each account's file values put in: account i takes
    row `rows[i]` of `table` (-1: an account the file lacks keeps every drawn value).

    With `reply_post_rate_elasticity` set, a reply bias that is drawn follows the file's post rate: the drawn
    offset for the drawn post rate is swapped for the one of the file's (`reply_talkativeness_offset`).
    """
    agents = []
    for agent, row in zip(drawn, rows.tolist(), strict=True):
        if row < 0:
            agents.append(agent)
            continue
        update: dict[str, Any] = {}
        if table.given[INTERESTS][row]:
            update["interests"] = list(table.interests[row] or [])
        for name in (*NUMBERS, POSITION):
            if table.given[name][row]:
                update[name] = float(table.numbers[name][row])
        if table.given["archetype_weights"][row]:
            update["archetype_weights"] = dict(zip(ARCHETYPES, table.archetypes[row].tolist()))
        if config.reply_post_rate_elasticity is not None and "post_rate" in update and "reply_bias" not in update:
            swap = reply_talkativeness_offset(np.array([update["post_rate"], agent.post_rate]), config)
            update["reply_bias"] = agent.reply_bias + float(swap[0] - swap[1])
        agents.append(agent.model_copy(update=update) if update else agent)
    return agents


def column_report(table: PopulationTable, rows: np.ndarray) -> Mapping[str, tuple[int, int]]:
    """attribute -> (accounts whose value came from the file, accounts in the world), for the run's log."""
    used = rows[rows >= 0]
    return {name: (int(table.given[name][used].sum()), len(rows)) for name in ATTRIBUTES}
