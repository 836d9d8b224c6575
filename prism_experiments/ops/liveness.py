"""Which RUNNING runs are alive: heartbeats, process ids, claims on a config, and the reaper.

A run is alive while its process (`prism.pid` on `prism.host`) exists and its heartbeat
(`prism.heartbeat`, unix seconds, rewritten every `HEARTBEAT_SECONDS`) is fresh. A RUNNING run
that is neither was left by a killed process or a dead server: `reap_stale_runs` marks it KILLED.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_experiments.ops.processes import process_alive
from prism_experiments.tracking.tags import CONFIG_HASH_TAG, ERROR_TAG, HEARTBEAT_TAG, HOST_TAG, PID_TAG, tag_equals

if TYPE_CHECKING:
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

#: How often a live run rewrites its heartbeat, and how old a heartbeat may get before the run
#: counts as dead (four missed beats: a busy sqlite store can delay one write by seconds).
HEARTBEAT_SECONDS = 30.0
STALE_AFTER_SECONDS = 4 * HEARTBEAT_SECONDS


def this_host() -> str:
    return socket.gethostname()


def liveness_tags(now: float | None = None) -> dict[str, str]:
    """Tags a run is created with: who runs it, and its first heartbeat."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: this_host(), HEARTBEAT_TAG: f"{now or time.time():.0f}"}


@dataclass(frozen=True)
class Liveness:
    alive: bool
    reason: str


def run_liveness(
    tags: dict[str, str], start_time_ms: int, now: float, stale_after: float = STALE_AFTER_SECONDS
) -> Liveness:
    """Alive or not, and why, from a RUNNING run's tags (pure: `now` in unix seconds)."""
    pid, host = tags.get(PID_TAG), tags.get(HOST_TAG)
    if pid and host == this_host() and pid.isdigit():
        # on this machine the process table is authoritative: a long logging phase beats no heartbeat
        if process_alive(int(pid)):
            return Liveness(True, f"its process {pid} is running")
        return Liveness(False, f"its process {pid} on {host} no longer exists")
    beat = tags.get(HEARTBEAT_TAG)
    last = float(beat) if beat else start_time_ms / 1000.0
    age = now - last
    if age > stale_after:
        what = "heartbeat" if beat else "start (no heartbeat)"
        return Liveness(
            False, f"no heartbeat for {age:.0f} s (last {what} at {time.strftime('%H:%M:%S', time.localtime(last))})"
        )
    return Liveness(True, f"heartbeat {age:.0f} s ago")


def reap_stale_runs(
    client: MlflowClient,
    experiment_ids: Iterable[str],
    *,
    now: float | None = None,
    stale_after: float = STALE_AFTER_SECONDS,
) -> list[str]:
    """Mark every dead RUNNING run KILLED (with the reason in `prism.error`); returns their ids."""
    now = time.time() if now is None else now
    reaped = []
    for run in client.search_runs(
        list(experiment_ids), filter_string="attributes.status = 'RUNNING'", max_results=10_000
    ):
        verdict = run_liveness(run.data.tags, run.info.start_time, now, stale_after)
        if verdict.alive:
            continue
        client.set_tag(run.info.run_id, ERROR_TAG, f"reaped: left RUNNING, {verdict.reason}")
        client.set_terminated(run.info.run_id, "KILLED")
        reaped.append(run.info.run_id)
        log.warning("run %s was left RUNNING (%s): marked KILLED", run.info.run_id, verdict.reason)
    return reaped


def live_holder(
    client: MlflowClient, experiment_id: str, digest: str, own_run_id: str, *, now: float | None = None
) -> Any | None:
    """The live RUNNING run that holds this config hash before `own_run_id`, if any.

    Every job creates its RUNNING run first and then looks: of two jobs that start together, both
    see both runs, and the one created later (start time, then run id) gives way.
    """
    now = time.time() if now is None else now
    runs = _running_with_hash(client, experiment_id, digest)
    live = [
        run
        for run in runs
        if run.info.run_id == own_run_id
        or (not _this_process(run.data.tags) and run_liveness(run.data.tags, run.info.start_time, now).alive)
    ]
    live.sort(key=lambda run: (run.info.start_time, run.info.run_id))
    if live and live[0].info.run_id != own_run_id:
        return live[0]
    return None


def close_own_duplicates(
    client: MlflowClient, experiment_id: str, digest: str, own_run_id: str, *, now: float | None = None
) -> list[str]:
    """Mark KILLED the other RUNNING runs of this config that this run replaces, and return their ids: those made
    by this very process, and those whose process is gone.

    A process runs one job at a time, so a run of its own is a duplicate: MLflow's HTTP client retries a
    `create_run` whose answer timed out (a paused server), and the server may have made both. A dead one is an
    earlier attempt of this job: a scheduler that preempts and requeues a job (SLURM) starts it again from the
    beginning, and the killed attempt could not close its run.
    """
    now = time.time() if now is None else now
    closed = []
    for run in _running_with_hash(client, experiment_id, digest):
        if run.info.run_id == own_run_id:
            continue
        if _this_process(run.data.tags):
            reason = f"duplicate of run {own_run_id}: a create_run request retried after a timeout"
        else:
            verdict = run_liveness(run.data.tags, run.info.start_time, now)
            if verdict.alive:
                continue
            reason = f"an earlier attempt of this job ({verdict.reason}); run {own_run_id} runs it again"
        client.set_tag(run.info.run_id, ERROR_TAG, reason)
        client.set_terminated(run.info.run_id, "KILLED")
        log.warning("run %s KILLED: %s", run.info.run_id, reason)
        closed.append(run.info.run_id)
    return closed


def _running_with_hash(client: MlflowClient, experiment_id: str, digest: str) -> list[Run]:
    return client.search_runs(
        [experiment_id],
        filter_string=(f"{tag_equals(CONFIG_HASH_TAG, digest)} and attributes.status = 'RUNNING'"),
        max_results=100,
    )


def _this_process(tags: dict[str, str]) -> bool:
    return tags.get(PID_TAG) == str(os.getpid()) and tags.get(HOST_TAG) == this_host()


class ParentWatch:
    """One daemon thread per worker process: when the sweep driver that started it is gone (a driver killed with
    SIGKILL cannot stop its joblib workers), run the current job's handler and exit.

    Process-wide on purpose: an idle worker must die too, not only one inside a job.
    """

    _started_for: int | None = None
    _handler: Callable[[], None] | None = None

    @classmethod
    def ensure(cls, poll: float = 1.0, driver_pid: int | None = None) -> None:
        """Start watching `driver_pid` (a process on this machine), else this process's parent (once per process).

        A joblib worker forked by the fork server passes the driver's pid: its parent is the fork server, which
        lives as long as any worker does (multiprocessing hands every child its alive pipe), so it would never go.
        """
        if cls._started_for == os.getpid():
            return
        cls._started_for = os.getpid()
        watched = os.getppid() if driver_pid is None else driver_pid
        args = (watched, driver_pid is not None, poll)
        threading.Thread(target=cls._loop, args=args, name="prism-parent-watch", daemon=True).start()

    @classmethod
    def on_orphaned(cls, handler: Callable[[], None] | None) -> None:
        """What to do for the job running now (None between jobs)."""
        cls._handler = handler

    @classmethod
    def _loop(cls, watched: int, by_pid: bool, poll: float) -> None:
        # by pid: signal 0 and /proc, where a recycled pid could pass for the driver only if the kernel
        # reused it within one poll (pid_max is in the millions on Linux)
        while process_alive(watched) if by_pid else os.getppid() == watched:
            time.sleep(poll)
        log.error("the sweep driver (pid %s) is gone: stopping this worker", watched)
        try:
            if cls._handler is not None:
                cls._handler()
        finally:
            os._exit(3)


def watch_parent() -> None:
    """A joblib worker initializer: watch the sweep driver from the worker's first moment."""
    ParentWatch.ensure()


def watch_driver(driver_pid: int) -> None:
    """The initializer of a joblib worker forked by the fork server: watch the sweep driver by its pid."""
    ParentWatch.ensure(driver_pid=driver_pid)


class Heartbeat:
    """A daemon thread that rewrites a run's heartbeat every `interval` seconds while the run works."""

    def __init__(self, beat: Callable[[], object], *, interval: float = HEARTBEAT_SECONDS, poll: float = 1.0) -> None:
        self._beat, self._interval, self._poll = beat, interval, poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="prism-heartbeat", daemon=True)
        self.failures = 0

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self._poll):
            if time.monotonic() - last >= self._interval:
                last = time.monotonic()
                try:
                    self._beat()
                except Exception as error:  # a dead server must not kill the run: the reaper decides
                    self.failures += 1
                    log.warning("heartbeat failed (%s)", error)
