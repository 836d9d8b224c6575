"""A sweep interrupted (Ctrl-C, SIGTERM) while its jobs run in processes that are not the driver's children.

Ray's workers are children of its raylet: a terminal's Ctrl-C does not reach them, the driver's own forwarding of
SIGTERM does not either, and a worker that is free again takes the next queued job. So the driver marks the sweep
folder interrupted, then passes its signal on to every job of the sweep that started on this machine (each job
records its process before it looks for the mark: whichever comes first, a job either sees the mark and does not
run, or is signalled), and gives them a few seconds to mark their runs KILLED.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from pathlib import Path

from prism_experiments.harness.recovery import read_outcome
from prism_experiments.locations import job_process_file, sweep_interrupted_marker
from prism_experiments.ops.liveness import this_host
from prism_experiments.ops.processes import interrupt_name

#: how long an interrupted driver waits for its signalled jobs to mark their runs before it stops their processes
JOB_STOP_WAIT_S = 10.0


def job_may_start(sweep_dir: Path, job_num: int) -> bool:
    """In the job's process, first: record it for the driver; False when the sweep was interrupted (do not run)."""
    path = job_process_file(sweep_dir, job_num)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{this_host()} {os.getpid()}\n")
    return not sweep_interrupted_marker(sweep_dir).exists()


def signal_of(interrupt: KeyboardInterrupt) -> signal.Signals:
    """The signal a job is sent for the driver's interrupt: SIGTERM for SIGTERM, else SIGINT (Ctrl-C)."""
    return signal.SIGTERM if interrupt_name(interrupt) == "SIGTERM" else signal.SIGINT


def interrupt_started_jobs(sweep_dir: Path, job_nums: Iterable[int], signum: int) -> list[int]:
    """In the driver: mark the sweep interrupted, then send `signum` to the process of each job of `job_nums` that
    started on this machine and has not ended (no outcome file); returns the process ids signalled."""
    marker = sweep_interrupted_marker(sweep_dir)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{signal.Signals(signum).name}\n")
    signalled = []
    for num in job_nums:
        try:
            host, pid = job_process_file(sweep_dir, num).read_text().split()
        except (OSError, ValueError):  # not started (it will see the mark), or not yet recorded
            continue
        if host != this_host() or read_outcome(sweep_dir, num) is not None:
            continue
        try:
            os.kill(int(pid), signum)
            signalled.append(int(pid))
        except ProcessLookupError:
            pass
    return signalled
