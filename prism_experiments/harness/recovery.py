"""What a sweep knows after a worker process died: which jobs ended, which died, which never ran.

Every job writes `<sweep dir>/<job number>/prism_outcome.json` when it ends (FINISHED, FAILED,
SKIPPED). A job with no outcome file either died with its process (its run is RUNNING with a dead
pid: marked FAILED here) or never started (run again by the launcher).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prism_experiments.harness.sweep_file import SweepFile, current_sweep
from prism_experiments.locations import job_dir as job_folder
from prism_experiments.ops.liveness import this_host
from prism_experiments.ops.processes import process_alive
from prism_experiments.tracking.store import client_for
from prism_experiments.tracking.tags import (
    CONFIG_HASH_TAG,
    ERROR_TAG,
    HOST_TAG,
    JOB_NUM_TAG,
    OVERRIDES_TAG,
    PID_TAG,
    SWEEP_ID_TAG,
    tag_equals,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger("prism_experiments")
OUTCOME_FILE = "prism_outcome.json"
EXIT_WAIT_S = 15.0  # at most this long, in all, for processes of jobs reported dead to finish exiting
DIED = (
    "the job's process died (killed by a signal or by the out-of-memory killer); when one joblib worker dies, "
    "joblib kills the jobs running in the other workers too"
)

INTERRUPTED = "the sweep was interrupted (Ctrl-C or SIGTERM) while this job ran"


@dataclass
class JobRecord:
    status: str  # FINISHED | FAILED | SKIPPED
    run_id: str | None
    error: str | None = None


def outcome_path(sweep_dir: Path, job_num: int) -> Path:
    return job_folder(sweep_dir, job_num) / OUTCOME_FILE


def write_outcome(job_dir: Path, record: JobRecord) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    tmp = job_dir / f".{OUTCOME_FILE}.tmp"
    tmp.write_text(json.dumps(asdict(record)))
    tmp.replace(job_dir / OUTCOME_FILE)


def read_outcome(sweep_dir: Path, job_num: int) -> JobRecord | None:
    """The job's outcome file, or None when it wrote none (died, never started, or its disk was full)."""
    try:
        return JobRecord(**json.loads(outcome_path(sweep_dir, job_num).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def failure_lines(children: list[Any] | None, outcomes: dict[int, JobRecord | None], sweep_dir: Path) -> list[str]:
    """One line per failed job of a sweep: its runs that did not FINISH (`children`, None when the store is
    unreachable), then the jobs with no run in the store whose outcome is FAILED or missing. A run whose config
    FINISHED in a later attempt of the same sweep (a job the scheduler preempted and requeued) is not a failure."""
    lines, with_runs = [], set()
    finished = {run.data.tags.get(CONFIG_HASH_TAG) for run in children or [] if run.info.status == "FINISHED"} - {None}
    for run in children or []:
        tags = run.data.tags
        if tags.get(JOB_NUM_TAG, "").isdigit():
            with_runs.add(int(tags[JOB_NUM_TAG]))
        if run.info.status != "FINISHED" and tags.get(CONFIG_HASH_TAG) not in finished:
            lines.append(f"{tags.get(OVERRIDES_TAG, run.info.run_id)} -> {run.info.status}: {tags.get(ERROR_TAG, '')}")
    for num, outcome in sorted(outcomes.items()):
        if num in with_runs or (outcome is not None and outcome.status != "FAILED"):
            continue
        if outcome is None:
            lines.append(
                f"job {num} -> no run and no outcome file: it could not start or write "
                f"(see {job_folder(sweep_dir, num)})"
            )
        else:
            lines.append(f"job {num} -> FAILED: {outcome.error or ''}")
    return lines


def _wait_for_exit(pid: int, deadline: float) -> None:
    """Until the process is gone or `deadline`: a launcher can hear of a death (a closed socket) before the
    kernel has finished the exit, when the process still looks alive (seen with Ray under load)."""
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)


def close_interrupted_jobs(client: MlflowClient, sweep: SweepFile, wait_s: float = 20.0) -> list[str]:
    """After the driver was interrupted: the sweep's RUNNING runs on this machine whose process is gone (given up
    to `wait_s` to close their own runs) are marked KILLED; returns their ids."""
    deadline = time.monotonic() + wait_s
    while True:
        runs = client.search_runs(
            [sweep.experiment_id],
            filter_string=(f"{tag_equals(SWEEP_ID_TAG, sweep.sweep_id)} and attributes.status = 'RUNNING'"),
            max_results=10_000,
        )
        local = [
            run
            for run in runs
            if run.data.tags.get(HOST_TAG) == this_host() and run.data.tags.get(PID_TAG, "").isdigit()
        ]
        dead = [run for run in local if not process_alive(int(run.data.tags[PID_TAG]))]
        if len(dead) == len(local) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    for run in dead:
        client.set_tag(run.info.run_id, ERROR_TAG, INTERRUPTED)
        client.set_terminated(run.info.run_id, "KILLED")
    return [run.info.run_id for run in dead]


def jobs_left_after_worker_death(
    sweep_dir: Path, unfinished: list[int], reasons: Mapping[int, str] | None = None
) -> list[int]:
    """Mark the runs of jobs whose process died FAILED, with the launcher's reason for a job where it knows one
    (a scheduler's job state), else DIED; return the jobs that never started."""
    sweep = current_sweep(sweep_dir)
    died: dict[int, str] = {}
    reasons = reasons or {}
    deadline = time.monotonic() + EXIT_WAIT_S
    if sweep is not None:
        client = client_for(sweep.tracking_uri)
        runs = client.search_runs(
            [sweep.experiment_id],
            filter_string=(f"{tag_equals(SWEEP_ID_TAG, sweep.sweep_id)} and attributes.status = 'RUNNING'"),
            max_results=10_000,
        )
        for run in runs:
            tags = run.data.tags
            pid, num = tags.get(PID_TAG, ""), tags.get(JOB_NUM_TAG, "")
            if tags.get(HOST_TAG) != this_host() or not pid.isdigit() or not num.isdigit():
                continue
            if int(num) in unfinished:  # the launcher saw it die: give the kernel time to finish the exit
                _wait_for_exit(int(pid), deadline)
            if process_alive(int(pid)):
                if int(num) in unfinished:
                    log.warning(
                        "job %s (run %s): its process %s still exists; the next sweep's reaper will judge its run",
                        num,
                        run.info.run_id,
                        pid,
                    )
                continue
            reason = reasons.get(int(num), DIED)
            client.set_tag(run.info.run_id, ERROR_TAG, reason)
            client.set_terminated(run.info.run_id, "FAILED")
            died[int(num)] = run.info.run_id
            log.error("job %s (run %s) FAILED: %s", num, run.info.run_id, reason)
    for job, run_id in died.items():
        write_outcome(job_folder(sweep_dir, job), JobRecord("FAILED", run_id, reasons.get(job, DIED)))
    return [num for num in unfinished if num not in died and read_outcome(sweep_dir, num) is None]


def relabel_ended_job(sweep_dir: Path, job_num: int, reason: str) -> str | None:
    """A job whose run ended KILLED or FAILED by what its process saw (SLURM's SIGTERM at a time limit reads as any
    SIGTERM) re-marked FAILED with what the scheduler knows; returns the run's id, None when it has no such run."""
    sweep = current_sweep(sweep_dir)
    if sweep is None:
        return None
    client = client_for(sweep.tracking_uri)
    runs = client.search_runs(
        [sweep.experiment_id],
        filter_string=(
            f"{tag_equals(SWEEP_ID_TAG, sweep.sweep_id)} and {tag_equals(JOB_NUM_TAG, str(job_num))} "
            "and attributes.status != 'FINISHED' and attributes.status != 'RUNNING'"
        ),
        max_results=10,
    )
    if not runs:
        return None
    run_id = runs[0].info.run_id
    client.set_tag(run_id, ERROR_TAG, reason)
    client.set_terminated(run_id, "FAILED")
    write_outcome(job_folder(sweep_dir, job_num), JobRecord("FAILED", run_id, reason))
    return run_id
