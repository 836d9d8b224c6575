"""`hydra/launcher=prism_joblib`: Hydra's joblib launcher, surviving the death of a worker process.

When one loky worker dies (SIGKILL, the out-of-memory killer), joblib kills every other worker and
raises `TerminatedWorkerError`, dropping the queued jobs. Here the jobs whose process died are marked
FAILED (and listed by the sweep callback), and the jobs that never finished run in a fresh pool.
"""

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_joblib_launcher._core import process_joblib_cfg
from hydra_plugins.hydra_joblib_launcher.config import JobLibLauncherConf
from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher
from joblib import Parallel, delayed, effective_n_jobs
from joblib._parallel_backends import LokyBackend
from joblib.externals.loky.process_executor import BrokenProcessPool

from hydra_plugins.prism_launcher.job_returns import died_job, execute_job_safely, jobs_not_finished
from prism_experiments.memory_limit import MemoryPlan

log = logging.getLogger(__name__)


@dataclass
class PrismJoblibLauncherConf(JobLibLauncherConf):
    _target_: str = "hydra_plugins.prism_launcher.prism_joblib_launcher.PrismJoblibLauncher"
    #: one job per core of this 2-core machine (joblib's own default, -1, would be the same here)
    n_jobs: int = 2
    #: how many times a pool broken by a dead worker is replaced before the sweep gives up
    max_pool_restarts: int = 3
    #: forkserver: workers are forked from one server process that imported the job's modules once (a worker
    #: starts in milliseconds, not the ~2 CPU-s of its imports; docs/bench.md); loky: each worker is a fresh
    #: interpreter importing them itself (joblib's default)
    start_method: str = "forkserver"


ConfigStore.instance().store(
    group="hydra/launcher", name="prism_joblib", node=PrismJoblibLauncherConf, provider="prism_experiments"
)


class PrismJoblibLauncher(JoblibLauncher):
    def __init__(self, max_pool_restarts: int = 3, start_method: str = "forkserver", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_pool_restarts = max_pool_restarts
        self.start_method = check_start_method(start_method)

    @staticmethod
    def prepare_sweep(config: Any, runs_dir: Path) -> None:
        """Called by the sweep callback before any run exists: a start method this launcher knows, or ValueError."""
        check_start_method(str(config.hydra.launcher.start_method))

    @staticmethod
    def memory_plan(launcher: Any, jobs: int) -> MemoryPlan:
        """The sweep's memory preflight: up to n_jobs jobs at once (as `_run_in_pool` starts them), on this machine."""
        n_jobs = launcher.get("n_jobs", -1)
        return MemoryPlan(min(effective_n_jobs(n_jobs), jobs), f"hydra.launcher.n_jobs={n_jobs}")

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from prism_experiments.harness.progress import SweepProgress
        from prism_experiments.harness.recovery import jobs_left_after_worker_death, read_outcome

        assert self.config is not None
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        start, returns = jobs_not_finished(self.config, job_overrides, initial_job_idx)
        overrides_of = dict(start)
        pending = list(overrides_of)
        progress = SweepProgress(len(pending), log.info)

        def finished(number: int) -> None:
            outcome = read_outcome(sweep_dir, number)
            progress.finished(failed=outcome is None or outcome.status == "FAILED")

        for restart in range(self.max_pool_restarts + 1):
            if not pending:
                break
            try:
                overrides = [overrides_of[i] for i in pending]
                for number, ret in self._run_in_pool(pending, overrides):
                    returns[number] = ret
                    finished(number)
                break
            except BrokenProcessPool as error:
                first_line = str(error).strip().splitlines()[0]
                unfinished = [i for i in pending if i not in returns]
                pending = jobs_left_after_worker_death(sweep_dir, unfinished)
                for number in sorted(set(unfinished) - set(pending)):  # died, or ended unreported
                    finished(number)
                log.error(
                    "a worker process died (%s); its jobs are marked FAILED; %d job(s) left run in a fresh pool",
                    first_line,
                    len(pending),
                )
                if pending and restart == self.max_pool_restarts:
                    log.error("the pool broke %d times; %d job(s) not run", restart + 1, len(pending))
        # jobs that died have no JobReturn: the sweep callback reports them from the store
        return [returns.get(i) or died_job(i) for i in range(initial_job_idx, initial_job_idx + len(job_overrides))]

    def _run_in_pool(
        self, numbers: list[int], job_overrides: Sequence[Sequence[str]]
    ) -> Iterator[tuple[int, JobReturn]]:
        """hydra_joblib_launcher._core.launch, with explicit job numbers (it numbers from one start), yielding
        (number, return) as each job finishes."""
        assert self.config is not None and self.hydra_context is not None and self.task_function is not None
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        joblib_cfg = dict(self.joblib)
        process_joblib_cfg(joblib_cfg)
        # loky starts every worker up front: no idle worker for a job that is not there
        joblib_cfg["n_jobs"] = min(effective_n_jobs(joblib_cfg.get("n_jobs", -1)), len(numbers))
        joblib_cfg["backend"] = loky_backend(self.start_method, joblib_cfg["n_jobs"])
        for number, overrides in zip(numbers, job_overrides):
            log.info("\t#%d : %s", number, " ".join(filter_overrides(overrides)))
        singleton_state = Singleton.get_state()
        yield from Parallel(**joblib_cfg, return_as="generator_unordered")(
            delayed(numbered_job)(
                number, overrides, self.hydra_context, self.config, self.task_function, singleton_state
            )
            for number, overrides in zip(numbers, job_overrides)
        )


#: the `start_method` values: how loky starts a worker process
START_METHODS = ("forkserver", "loky")
#: what the fork server imports before it forks a worker: everything a job imports, except torch and the other
#: native thread pools a job loads only when it needs them (the server must stay single-threaded to fork safely,
#: and torch is pinned before its first use: prism_experiments/numerics.py); tests/test_launcher_fork_server.py
WORKER_MODULES = (
    "prism_experiments.__main__",
    "prism_experiments.harness.job",
    "prism_experiments.simulation",
    "prism_experiments.plotting",
    "prism_experiments.tracking.store",
    "mlflow.store.tracking.sqlalchemy_store",
    "hydra_plugins.hydra_joblib_launcher._core",
)


def check_start_method(start_method: str) -> str:
    if start_method not in START_METHODS:
        raise ValueError(f"hydra.launcher.start_method: {start_method!r} is not one of {', '.join(START_METHODS)}")
    return start_method


def loky_backend(start_method: str, n_jobs: int) -> LokyBackend:
    """joblib's loky backend (the threading backend is incompatible with Hydra), each worker watching the driver
    from its start: a worker that is idle when the driver is killed must not outlive it either."""
    from prism_experiments.ops.liveness import watch_driver, watch_parent

    if start_method == "loky":
        return LokyBackend(initializer=watch_parent)
    backend = LokyBackend(initializer=watch_driver, initargs=(os.getpid(),))
    start_fork_server(backend._prepare_worker_env(n_jobs))  # private, but joblib's own rule for a worker's threads
    return backend


def start_fork_server(environment: dict[str, str]) -> None:
    """Start multiprocessing's fork server (once per driver) with WORKER_MODULES imported, and make it loky's.

    loky hands a worker the thread limits of `environment` (OMP_NUM_THREADS, ...: cpu count / n_jobs) only when it
    spawns one; a forked worker inherits the server's, so the server starts with them, before numpy's BLAS reads
    them. A server already running keeps the limits it started with.

    multiprocessing's resource tracker, started with the server, frees the locks of workers stopped by a Ctrl-C
    and warns about each ("leaked semaphore objects"): expected there, so that one warning is filtered."""
    import multiprocessing
    from multiprocessing import forkserver
    from unittest import mock

    from joblib.externals.loky.backend.context import set_start_method

    multiprocessing.set_forkserver_preload(list(WORKER_MODULES))
    warnings = ",".join(filter(None, (os.environ.get("PYTHONWARNINGS"), "ignore:resource_tracker:UserWarning")))
    with mock.patch.dict(os.environ, environment | {"PYTHONWARNINGS": warnings}):  # the driver's own, restored
        forkserver.ensure_running()
    set_start_method("forkserver", force=True)


def numbered_job(index: int, overrides: Sequence[str], *args: Any) -> tuple[int, JobReturn]:
    """`execute_job_safely` with its job number, for results that arrive in completion order."""
    return index, execute_job_safely(index, overrides, *args)
