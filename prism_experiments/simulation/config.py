"""Settings of the step loop."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prism_experiments.simulation.schedule import ScheduleEntry, check_schedule


class SimulationConfig(BaseModel):
    """How long a run is and what the engine records."""

    model_config = ConfigDict(extra="forbid")

    #: 48 steps of 60 minutes: two simulated days
    n_steps: int = Field(default=48, ge=1)
    #: simulated minutes per step; timestamps and "3h ago" rendering use it (docs/model.md)
    step_minutes: float = Field(default=60.0, gt=0)
    #: velocity = engagements over the last `velocity_window` steps, per step
    velocity_window: int = Field(default=3, ge=1)
    #: agents are not shown posts they were already shown
    exclude_seen: bool = True
    #: feeds of this many sampled agents are rendered as text at `render_steps` steps (first, middle, last)
    render_agents: int = Field(default=3, ge=0)
    render_steps: int = Field(default=3, ge=0)
    show_progress: bool = True
    #: ranking schedule: [{step, mode, <ranking setting>: value}, ...], steps strictly increasing in [0, n_steps);
    #: from each step on that mode serves (a scale factor may change too); empty: `ranking` serves every step
    #: (prism_experiments/simulation/schedule.py, docs/model.md "Ranking schedules")
    schedule: list[ScheduleEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _schedule_within_the_run(self) -> SimulationConfig:
        check_schedule(self.schedule, self.n_steps)
        return self
