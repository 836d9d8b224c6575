"""What every prism launcher returns for a job that did not run to its end (finished before the sweep, could not
start, failed, its process died), so that Hydra never aborts the other jobs: a COMPLETED `JobReturn` the sweep
callback reports from the run store."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn, JobStatus
from hydra_plugins.hydra_joblib_launcher._core import execute_job

from prism_experiments.tracking.errors import error_line
from prism_experiments.tracking.store import quiet_store_tracebacks

log = logging.getLogger(__name__)


def jobs_not_finished(
    config: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
) -> tuple[list[tuple[int, list[str]]], dict[int, JobReturn]]:
    """The (number, overrides) of the jobs to start, and a return for each job not to start: its config was
    FINISHED when the sweep began (the sweep callback's `SweepFile.finished_jobs`). Every launcher's first step."""
    from prism_experiments.harness.sweep_file import current_sweep, jobs_to_start

    numbered = [(initial_job_idx + offset, list(overrides)) for offset, overrides in enumerate(job_overrides)]
    start, finished = jobs_to_start(current_sweep(Path(str(config.hydra.sweep.dir))), numbered)
    overrides_of = dict(numbered)
    return start, {num: ended_job(num, overrides_of[num], f"job {num} (FINISHED before the sweep)") for num in finished}


def execute_job_safely(index: int, overrides: Sequence[str], *args: Any) -> JobReturn:
    """Hydra's `execute_job` through `run_safely`."""
    return run_safely(index, overrides, lambda: execute_job(index, overrides, *args))


def run_safely(index: int, overrides: Sequence[str], run: Callable[[], JobReturn]) -> JobReturn:
    """A launcher's job body, never raising: Hydra writes the job's config files before our task runs, and
    an exception there (a full disk) would abort the whole sweep with a traceback. A job that could not
    run is returned COMPLETED and reported by the sweep callback (it has no FINISHED run or outcome)."""
    quiet_store_tracebacks()
    try:
        ret = run()
    except Exception as error:  # Hydra's own set-up of the job: nothing of ours ran
        log.error("job %d could not start: %s", index, error_line(error))
        return ended_job(index, list(overrides), f"job {index} (could not start)")
    if ret.status == JobStatus.FAILED:  # the task raised past run_job: recorded in the store, listed at the end
        log.error("job %d failed: %s", index, error_line(ret._return_value))
        return ended_job(index, list(overrides), f"job {index} (failed)")
    return ret


def ended_job(index: int, overrides: list[str], task_name: str) -> JobReturn:
    """A COMPLETED return named `task_name`: the sweep callback reports the job from the store, Hydra goes on."""
    ret = JobReturn()
    ret.status = JobStatus.COMPLETED  # Hydra's sweeper re-raises a FAILED job's exception and aborts the rest
    ret.return_value = None
    ret.overrides = overrides
    ret.working_dir = ""
    ret.task_name = task_name
    return ret


def died_job(index: int) -> JobReturn:
    """Recorded as FAILED in MLflow; Hydra must not abort the other batches."""
    return ended_job(index, [], f"job {index} (process died)")
