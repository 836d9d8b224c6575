"""`hydra/launcher=prism_submitit_local` / `prism_submitit_slurm`: hydra-submitit-launcher with the
failure handling of `prism_joblib` and `prism_ray` (docs/cluster.md).

The stock launcher collects results with `job.results()` in submission order, which raises as soon
as one job died (a killed process, a lost SLURM node, a time limit): the sweep ends with a traceback,
the other jobs' results are dropped and the sweep callback never reports. Here jobs are collected
as they finish; a job that died is marked FAILED in the store (when it ran on this host; another
node's run is reaped by the next sweep), reported, and re-run by the next sweep.

submitit learns a SLURM job's state from `sacct` alone, which needs the cluster's accounting database
(slurmdbd). On a cluster without one (`make slurm-local`, many small installations) `sacct` fails, a job
that died without a result (`scancel`) stays UNKNOWN and the sweep would wait for it forever: there the
state comes from `squeue` (`ops/slurm_queue.py`, `SlurmStateWatcher`).

A job over its time limit fails naming the limit (`hydra.launcher.timeout_min`), in its run and in the sweep's
list: submitit's own reason reads only "timed-out too many times", and a killed job's only "state: TIMEOUT". It is
not requeued (`max_num_timeout` 0): a seeded run that timed out would time out again.
"""

import logging
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, LocalQueueConf, SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import BaseSubmititLauncher
from omegaconf import OmegaConf

from hydra_plugins.prism_launcher.job_returns import died_job, jobs_not_finished, run_safely
from prism_experiments.memory_limit import MemoryLimit, MemoryPlan, slurm_memory_bytes

if TYPE_CHECKING:
    from prism_experiments.harness.progress import SweepProgress

log = logging.getLogger(__name__)
#: seconds between polls of the jobs' states (submitit's default, 10 s, would delay every progress line)
POLL_SECONDS = 1.0


@dataclass
class PrismSubmititLocalConf(LocalQueueConf):
    _target_: str = "hydra_plugins.prism_launcher.prism_submitit_launcher.PrismSubmititLocalLauncher"


@dataclass
class PrismSubmititSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.prism_launcher.prism_submitit_launcher.PrismSubmititSlurmLauncher"


ConfigStore.instance().store(
    group="hydra/launcher", name="prism_submitit_local", node=PrismSubmititLocalConf, provider="prism_experiments"
)
ConfigStore.instance().store(
    group="hydra/launcher", name="prism_submitit_slurm", node=PrismSubmititSlurmConf, provider="prism_experiments"
)


class JobTimeLimit(Exception):
    """The scheduler's warning that a job reached its time limit; the run ends FAILED with this reason."""


def time_limit_reason(timeout_min: object) -> str:
    return f"over its time limit, hydra.launcher.timeout_min={timeout_min} (raise it, or split the sweep)"


def name_the_time_limit(timeout_min: object) -> None:
    """Wrap submitit's handler of the scheduler's warning signal (SIGUSR2): a timed-out job that is not requeued
    raises JobTimeLimit naming its limit instead of submitit's "Job not requeued because: timed-out ..."."""
    from submitit.core.utils import UncompletedJobError

    submitits = signal.getsignal(signal.SIGUSR2)
    if not callable(submitits):
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            submitits(signum, frame)
        except UncompletedJobError as error:
            if "timed-out" not in str(error):
                raise
            # SLURM's SIGTERM follows at the limit (SLURM may send the warning as late as that): ignored, so that it
            # cannot cut the marking of the run short; SIGKILL still comes KillWait later
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            raise JobTimeLimit(time_limit_reason(timeout_min)) from None

    signal.signal(signal.SIGUSR2, handler)


def stop_local_jobs(jobs: Sequence[Any], grace_s: float = 10.0, killed_wait_s: float = 10.0) -> None:
    """After the driver was interrupted (it passed the signal on to the jobs' controllers): give each local job
    `grace_s` to close its run and exit, then SIGKILL the job processes left, so their controllers end too.

    A job that has not reached its function yet ignores SIGTERM (submitit's handler only logs it), and would
    otherwise open its run after the driver is gone and leave it RUNNING; the driver marks what it left.
    The job processes are killed rather than the controllers interrupted: a controller prints a traceback
    on SIGINT (submitit's LocalJob.cancel)."""
    from prism_experiments.ops.processes import child_pids

    controllers = [job._process for job in jobs if isinstance(getattr(job, "_process", None), subprocess.Popen)]
    deadline = time.monotonic() + grace_s
    while any(process.poll() is None for process in controllers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [process for process in controllers if process.poll() is None]
    for process in left:
        for task in child_pids(process.pid):
            try:
                os.kill(task, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + killed_wait_s
    for process in left:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.warning("submitit controller %s did not stop; its job's run is reaped by the next sweep", process.pid)


class _PrismSubmitit(BaseSubmititLauncher):
    def __call__(
        self, sweep_overrides: list[str], job_dir_key: str, job_num: int, job_id: str, singleton_state: dict[type, Any]
    ) -> JobReturn:
        """In the submitted job: the stock body, through the same never-raising wrapper as joblib's workers."""
        name_the_time_limit(self.params.get("timeout_min"))
        return run_safely(
            job_num,
            sweep_overrides,
            lambda: super(_PrismSubmitit, self).__call__(
                sweep_overrides, job_dir_key, job_num, job_id, singleton_state
            ),
        )

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from prism_experiments.harness.progress import SweepProgress
        from prism_experiments.ops.slurm_queue import SlurmStateWatcher

        assert self.config is not None
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        start, finished = jobs_not_finished(self.config, job_overrides, initial_job_idx)
        jobs = self._submit(start, sweep_dir) if start else []
        if self._EXECUTOR == "slurm":
            watcher = SlurmStateWatcher()
            for job in jobs:
                job.watcher = watcher  # this sweep's jobs only (submitit's own is a class attribute)
        index_of = {job.job_id: index for job, (index, _) in zip(jobs, start)}
        progress = SweepProgress(len(jobs), log.info)
        try:
            returns = self._collect(jobs, index_of, progress, sweep_dir) | finished
        except KeyboardInterrupt:
            if self._EXECUTOR == "local":  # SLURM's jobs are batch jobs: they finish their runs
                stop_local_jobs(jobs)
            raise
        return [returns[initial_job_idx + offset] for offset in range(len(job_overrides))]

    def _collect(
        self, jobs: list[Any], index_of: dict[str, int], progress: "SweepProgress", sweep_dir: Path
    ) -> dict[int, JobReturn]:
        """Each job's return as it finishes; a job whose process died is marked FAILED and listed."""
        import submitit

        from prism_experiments.harness.recovery import jobs_left_after_worker_death, read_outcome, relabel_ended_job

        returns: dict[int, JobReturn] = {}
        for job in submitit.helpers.as_completed(jobs, poll_frequency=POLL_SECONDS):
            index = index_of[job.job_id]
            try:
                returns[index] = job.results()[0]
            except Exception as error:  # the job's process died before it returned
                # submitit's first two lines name the job and its state (CANCELLED, TIMEOUT, ...)
                reason = " ".join(str(error).strip().splitlines()[:2]) or type(error).__name__
                timed_out = "TIMEOUT" in reason  # killed at the limit before its warning signal was handled
                if timed_out:
                    reason = f"{time_limit_reason(self.params.get('timeout_min'))}; {reason}"
                log.error("job %d: its submitit job %s died (%s)", index, job.job_id, reason)
                died = f"the job's process died: its submitit job {job.job_id} ended without a result ({reason})"
                jobs_left_after_worker_death(sweep_dir, [index], {index: died})
                if timed_out:  # its run may have ended KILLED by SLURM's SIGTERM, which the job cannot tell apart
                    relabel_ended_job(sweep_dir, index, died)
                returns[index] = died_job(index)
            outcome = read_outcome(sweep_dir, index)
            progress.finished(failed=outcome is None or outcome.status == "FAILED")
        return returns

    def _submit(self, numbered: list[tuple[int, list[str]]], sweep_dir: Path) -> list[Any]:
        """The stock launcher's submission (hydra-submitit-launcher 1.2.0, `launch`) of the (number, overrides)
        jobs, without its collection."""
        import submitit

        init_keys = {"submitit_folder", "max_num_timeout"}
        init_params = {"folder": self.params["submitit_folder"]}
        if "max_num_timeout" in self.params:
            init_params[f"{self._EXECUTOR}_max_num_timeout"] = self.params["max_num_timeout"]
        executor = submitit.AutoExecutor(cluster=self._EXECUTOR, **init_params)
        base = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(
            **{
                key if key in base else f"{self._EXECUTOR}_{key}": value
                for key, value in self.params.items()
                if key not in init_keys
            }
        )
        sweep_dir.mkdir(parents=True, exist_ok=True)
        job_params = []
        for index, overrides in numbered:
            log.info("\t#%d : %s", index, " ".join(filter_overrides(overrides)))
            job_params.append((overrides, "hydra.sweep.dir", index, f"job_id_for_{index}", Singleton.get_state()))
        return list(executor.map_array(self, *zip(*job_params)))


def slurm_job_memory(launcher: Any) -> MemoryLimit | None:
    """The memory a SLURM job asks for: `mem_gb` (submitit sends `--mem=<n>GB`, GiB to SLURM), else `mem_per_cpu` times
    `cpus_per_task`; None when it asks for none (the cluster's default then applies, which the driver cannot see)."""
    mem_gb = launcher.get("mem_gb")
    if mem_gb:
        return MemoryLimit(round(float(mem_gb) * (1 << 30)), f"hydra.launcher.mem_gb={mem_gb}")
    per_cpu = slurm_memory_bytes(launcher.get("mem_per_cpu"))
    if per_cpu is None:
        return None
    cpus = int(launcher.get("cpus_per_task") or 1)
    return MemoryLimit(
        per_cpu * cpus, f"hydra.launcher.mem_per_cpu={launcher.get('mem_per_cpu')} x cpus_per_task={cpus}"
    )


class PrismSubmititLocalLauncher(_PrismSubmitit):
    _EXECUTOR = "local"

    @staticmethod
    def memory_plan(launcher: Any, jobs: int) -> MemoryPlan:
        """The sweep's memory preflight: submitit's local executor starts every job at once, on this machine."""
        return MemoryPlan(jobs, "hydra/launcher=prism_submitit_local starts every job at once")


class PrismSubmititSlurmLauncher(_PrismSubmitit):
    _EXECUTOR = "slurm"

    @staticmethod
    def memory_plan(launcher: Any, jobs: int) -> MemoryPlan:
        """The sweep's memory preflight: each job within the memory it asks SLURM for; not checked when it asks for
        none."""
        limit = slurm_job_memory(launcher)
        return MemoryPlan(1, limit.source if limit else "a SLURM job", limit=limit, known=limit is not None)
