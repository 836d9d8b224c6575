"""Ranking schedules: `simulation.schedule` switches the ranker (or one of its settings) at given steps of a run.

A schedule is a list of {step, mode, <ranking setting>: value, ...} entries, steps strictly increasing within
[0, n_steps); from an entry's step on, the run is served by that mode, with the run's `ranking.*` settings when the
mode is the run's own and the mode's defaults otherwise, and the entry's settings on top (e.g. a scale factor:
`{step: 24, mode: x_algo, out_of_network_scale: 0.5}`). Steps before the first entry are served by `ranking`.
Every ranker of a schedule is built before step 0, each drawing from the ranker stream as an unscheduled run of its
mode does (common random numbers), and every one observes every step's feedback, as a platform's models see all of
its logs.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prism_experiments.ranking import KNOWN_MODES, Ranker, RankerInputs, build_ranker, ranking_config
from prism_experiments.ranking.mode_config import ModeConfig


class ScheduleEntry(BaseModel):
    """From `step` on, the run is served by `mode`; any other key is a `ranking.*` setting of that mode."""

    model_config = ConfigDict(extra="allow")

    step: int = Field(ge=0)
    mode: str

    @model_validator(mode="after")
    def _a_known_mode_and_its_settings(self) -> ScheduleEntry:
        if self.mode not in KNOWN_MODES:
            raise ValueError(f"mode: unknown mode {self.mode!r}; allowed: {', '.join(sorted(KNOWN_MODES))}")
        try:
            ranking_config(self.mode, **self.settings)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{where}: {first['msg']} for mode {self.mode} (got {first.get('input')!r})") from None
        return self

    @property
    def settings(self) -> dict[str, Any]:
        """The entry's `ranking.*` settings (every key but step and mode)."""
        return dict(self.model_extra or {})


def check_schedule(schedule: Sequence[ScheduleEntry], n_steps: int) -> None:
    """ValueError naming `schedule` unless its steps are strictly increasing and within [0, n_steps)."""
    steps = [entry.step for entry in schedule]
    if any(later <= earlier for earlier, later in pairwise(steps)) or any(s >= n_steps for s in steps):
        raise ValueError(f"schedule: steps must be strictly increasing and within [0, n_steps={n_steps}), got {steps}")


def entry_config(run_ranking: ModeConfig, entry: ScheduleEntry) -> ModeConfig:
    """The ranking config serving from `entry.step` on: the run's own settings for its own mode, else the mode's
    defaults, with the entry's settings on top."""
    if entry.mode == run_ranking.mode:
        base = run_ranking.model_dump(exclude={"mode"})
        return ranking_config(entry.mode, **(base | entry.settings))
    return ranking_config(entry.mode, **entry.settings)


class ScheduledRankers:
    """The rankers of a run and which one serves each step; one ranker per distinct config, built in order."""

    def __init__(
        self, run_ranking: ModeConfig, schedule: Sequence[ScheduleEntry], inputs: RankerInputs, n_steps: int
    ) -> None:
        configs = [run_ranking, *(entry_config(run_ranking, entry) for entry in schedule)]
        start_rng = copy.deepcopy(inputs.rng)
        built: list[tuple[ModeConfig, Ranker]] = []
        serving: list[Ranker] = []
        for config in configs:
            found = next((ranker for known, ranker in built if known == config), None)
            if found is None:
                # each ranker draws from the ranker stream as the first ranker of a run does: a mode serves the same
                # feeds whether scheduled or not (common random numbers); the run's own ranker advances the stream
                own = inputs if not built else replace(inputs, rng=copy.deepcopy(start_rng))
                found = build_ranker(config, own)
                built.append((config, found))
            serving.append(found)
        self.rankers = [ranker for _, ranker in built]
        starts = np.array([0, *(entry.step for entry in schedule)], dtype=np.int64)
        #: index into `serving` of the ranker of each step (the last entry starting at or before it)
        which = np.searchsorted(starts, np.arange(n_steps), side="right") - 1
        self._entry_by_step = which.tolist()
        self._serving = serving
        self.scheduled = bool(schedule)

    @property
    def first(self) -> Ranker:
        """The run's own ranker (`ranking`)."""
        return self.rankers[0]

    def at(self, step: int) -> Ranker:
        return self._serving[self._entry_by_step[step]]

    def served(self) -> list[tuple[str, int]]:
        """(mode, schedule entry) of each step: entry 0 is `ranking`, i the schedule's i-th entry (1-based)."""
        return [(self._serving[i].mode, i) for i in self._entry_by_step]
