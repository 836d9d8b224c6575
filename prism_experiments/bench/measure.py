"""Measuring tools: percentiles, wall-clock timing, resident memory, and timed child processes."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from prism_experiments.memory import current_rss_bytes, peak_rss_bytes  # noqa: F401 (re-exported)

T = TypeVar("T")


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between order statistics (numpy's default)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("values: need at least one value for a percentile")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q: must be within [0, 100], got {q}")
    return float(np.percentile(data, q))


def timed(call: Callable[[], T]) -> tuple[T, float]:
    """(result, seconds) of one call, by `time.perf_counter`."""
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def timed_in_turns(calls: Sequence[Callable[[], object]], repeats: int) -> list[list[float]]:
    """Seconds of `repeats` calls of each of `calls`, taken in turns (first, second, ..., first, second, ...).

    Paired comparisons (two stores, two commits) then meet the same load on a shared machine: a busy minute slows
    both sides instead of whichever ran in it.
    """
    seconds: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, times in zip(calls, seconds):
            times.append(timed(call)[1])
    return seconds


def freeze_live_objects() -> None:
    """Collect garbage, then move every object still alive out of the cyclic collector's sight (`gc.freeze`).

    A full collection that falls inside a timed call then walks only what the call allocated, not what the process
    holds: after the bench's sections 1-2 (the model, torch, the world: about 550,000 objects) one full collection
    took 290 ms, three times a whole `rank_many` call, and landed in whichever call crossed the collector's
    threshold (docs/history/bench.md). The simulation's entry point freezes its long-lived objects the same way.
    """
    gc.collect()
    gc.freeze()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """`freeze_live_objects` on entry (call it again to freeze what was built since); on exit what was frozen
    goes back under the collector, unless something had frozen objects before (they stay frozen then)."""
    frozen_before = gc.get_freeze_count() > 0
    freeze_live_objects()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def latencies(call: Callable[[int], object], n: int) -> np.ndarray:
    """Seconds of `call(i)` for i in range(n), each timed on its own."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        started = time.perf_counter()
        call(i)
        out[i] = time.perf_counter() - started
    return out


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: its wall time, its own peak RSS and where its output went."""

    command: list[str]
    returncode: int
    wall_s: float
    peak_rss_bytes: int
    log_path: Path
    #: user + system CPU seconds of the child and the descendants it waited for (`os.wait4`): on a shared machine
    #: it moves less with the load than the wall time
    cpu_s: float = 0.0

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def run_child(
    command: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> ChildRun:
    """Run a command to completion, stdout+stderr into `log_path`.

    `os.wait4` returns the rusage of exactly this child (and the descendants it waited for), so
    the peak RSS is the run's own, not the benchmark's or an earlier child's.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command), stdout=log, stderr=subprocess.STDOUT, env=dict(env) if env is not None else None, cwd=cwd
        )
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:
            process.kill()
            process.wait()
            raise
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    maxrss = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    cpu = usage.ru_utime + usage.ru_stime
    return ChildRun(list(command), process.returncode, wall, int(maxrss), log_path, cpu)


def load_average() -> float:
    """The 1-minute load average (what the figures were measured beside)."""
    return os.getloadavg()[0]
