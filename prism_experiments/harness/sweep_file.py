"""What a job knows about the sweep it belongs to (written by the sweep callback before workers start)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from prism_experiments.deprecation import renamed

SWEEP_FILE_ENV = "PRISM_SWEEP_FILE"
SWEEP_FILE_NAME = "prism_sweep.json"


@dataclass
class SweepFile:
    """The sweep's id, store, experiment, parent run and varying override keys, shared with every job."""

    sweep_id: str
    tracking_uri: str
    experiment_id: str
    parent_run_id: str | None
    varying_keys: list[str] = field(default_factory=list)
    n_jobs: int = 0
    #: the process that runs the sweep: a job in another process stops when it disappears
    driver_pid: int = 0
    #: job number (a string: JSON) -> overrides of the jobs whose config had a FINISHED run when the sweep
    #: started: the launchers start no process for them (the callback wrote their SKIPPED outcome)
    finished_jobs: dict[str, list[str]] = field(default_factory=dict)

    def save(self, path: Path) -> Path:
        """Write atomically (workers may read while the callback writes)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> SweepFile:
        """Read a sweep file written by `save`."""
        return cls(**json.loads(path.read_text()))


def jobs_to_start(
    sweep: SweepFile | None, numbered: list[tuple[int, list[str]]]
) -> tuple[list[tuple[int, list[str]]], list[int]]:
    """The (number, overrides) jobs a launcher starts, and the numbers it need not start: FINISHED before the
    sweep began, with the very overrides the callback saw (anything else starts, and the job itself checks)."""
    finished = sweep.finished_jobs if sweep else {}
    start = [(num, overrides) for num, overrides in numbered if finished.get(str(num)) != overrides]
    started = {num for num, _ in start}
    return start, [num for num, _ in numbered if num not in started]


def current_sweep(sweep_dir: Path | None) -> SweepFile | None:
    """The sweep file of this job: `$PRISM_SWEEP_FILE`, else `<sweep dir>/prism_sweep.json`."""
    candidates = [Path(p) for p in (os.environ.get(SWEEP_FILE_ENV),) if p]
    if sweep_dir is not None:
        candidates.append(sweep_dir / SWEEP_FILE_NAME)
    for path in candidates:
        if path.is_file():
            return SweepFile.load(path)
    return None


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"SweepContext": SweepFile})
