"""The sweep driver's progress line, once per finished job: jobs done / total, failures so far, ETA."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


def format_duration(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def progress_line(done: int, total: int, failed: int, elapsed_s: float) -> str:
    """`sweep progress: 3/8 jobs done, 1 failed, ETA 2m10s` (ETA from the mean time per finished job so far)."""
    if total < 1 or not 0 <= done <= total:
        raise ValueError(f"done: must be between 0 and total ({total}), got {done}")
    if done == total:
        eta = f"finished in {format_duration(elapsed_s)}"
    elif done == 0:
        eta = "ETA unknown"
    else:
        eta = f"ETA {format_duration(elapsed_s / done * (total - done))}"
    return f"sweep progress: {done}/{total} jobs done, {failed} failed, {eta}"


@dataclass
class SweepProgress:
    """Counts finished jobs of one launch and reports each through `emit`."""

    total: int
    emit: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    failed: int = 0
    started: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def finished(self, failed: bool) -> str:
        """Record one finished job and emit the progress line."""
        self.done += 1
        self.failed += int(failed)
        line = progress_line(self.done, self.total, self.failed, self.clock() - self.started)
        self.emit(line)
        return line
