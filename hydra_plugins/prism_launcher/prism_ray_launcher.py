"""`hydra/launcher=prism_ray`: hydra-ray-launcher with this project's defaults and its failure handling.

Local mode (a Ray instance started for the sweep) unless `hydra.launcher.ray.init.address` or
`RAY_ADDRESS` names a cluster (`ray start --head`). Differences from `hydra/launcher=ray`, each from a
measured failure (docs/cluster.md):
- no dashboard and no usage statistics;
- `object_store_memory` is left to Ray when connecting to a cluster (the plugin's hidden 75 MB default
  is refused by an existing cluster), and kept for local mode (small /dev/shm in containers);
- a task is not retried by Ray when its worker dies (`max_retries: 0`): a retried job would leave
  the dead attempt's run behind; the job is marked FAILED instead and the next sweep re-runs it;
- a job that fails, or whose worker dies, does not abort the sweep (as with `prism_joblib`);
- a local instance is a head this launcher starts itself (`ray start --head` on a free loopback port, its
  token and log under `<runs_dir>/ray/`), given `start_timeout_s` per attempt and `start_attempts`
  attempts: `ray.init()`'s own local start gives the node 30 s, which a loaded 2-core machine misses.
  It starts before the sweep's parent run exists, so a Ray that does not come up is one line, exit 2.
"""

import atexit
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, configure_log, filter_overrides, setup_globals
from hydra_plugins.hydra_ray_launcher._config import RayConf
from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher
from omegaconf import OmegaConf

from hydra_plugins.prism_launcher.job_returns import died_job, ended_job, execute_job_safely, jobs_not_finished
from prism_experiments.locations import RunLayout
from prism_experiments.memory_limit import MemoryPlan

log = logging.getLogger(__name__)

#: hydra-ray-launcher's own default for local mode (ray-project/ray#11966)
LOCAL_OBJECT_STORE_BYTES = 78_643_200


def _init_defaults() -> dict[str, Any]:
    return {
        "address": "${oc.env:RAY_ADDRESS,null}",
        "include_dashboard": False,
        "num_cpus": None,
        "object_store_memory": None,
    }


@dataclass
class PrismRayConf(RayConf):
    init: dict[str, Any] = field(default_factory=_init_defaults)
    remote: dict[str, Any] = field(default_factory=lambda: {"max_retries": 0})
    #: seconds a local instance may take to come up, per attempt (measured under load: docs/cluster.md)
    start_timeout_s: float = 180.0
    #: attempts at starting a local instance before the sweep stops with one line
    start_attempts: int = 2


class RayStartError(RuntimeError):
    """One line: why Ray could not be started or reached."""


@dataclass
class PrismRayLauncherConf:
    _target_: str = "hydra_plugins.prism_launcher.prism_ray_launcher.PrismRayLauncher"
    ray: PrismRayConf = field(default_factory=PrismRayConf)


ConfigStore.instance().store(
    group="hydra/launcher", name="prism_ray", node=PrismRayLauncherConf, provider="prism_experiments"
)


def ray_init_arguments(init: dict[str, Any]) -> dict[str, Any]:
    """`ray.init` keyword arguments: unset keys left to Ray; the small object store only in local mode."""
    arguments = {key: value for key, value in init.items() if value is not None}
    if "address" not in arguments:
        arguments.setdefault("object_store_memory", LOCAL_OBJECT_STORE_BYTES)
    return arguments


def on_loopback(address: Any) -> bool:
    """A local instance (no address), or a head on this machine's loopback interface."""
    if not address:
        return True
    host = str(address).removeprefix("ray://").rsplit(":", 1)[0]
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


def start_local_instance(home: Path, init: dict[str, Any], timeout_s: float, attempts: int) -> dict[str, Any]:
    """Start a private head for this sweep (stopped at exit, by its PID) and return `ray.init` arguments that
    connect to it; RayStartError when every attempt failed."""
    from prism_experiments.ops import ray_head
    from prism_experiments.ops.daemons import DaemonError, free_port
    from prism_experiments.ops.processes import STOPPED_BY_OWNER

    reasons = []
    for attempt in range(1, attempts + 1):
        try:
            state = ray_head.start_head(
                home,
                port=free_port(),
                num_cpus=init.get("num_cpus"),
                timeout_s=timeout_s,
                object_store_bytes=init.get("object_store_memory"),
                tied_to_this_process=True,
            )
            break
        except DaemonError as error:
            reasons.append(str(error))
            if attempt < attempts:
                log.warning(
                    "Ray: the local instance did not start (attempt %d of %d): %s; trying again",
                    attempt,
                    attempts,
                    error,
                )
    else:
        raise RayStartError(
            f"hydra.launcher.ray: a local Ray instance did not start in {attempts} attempts of "
            f"{timeout_s:g} s (start_timeout_s) on this machine: {reasons[-1]}"
        )
    atexit.register(stop_local_instance, home)
    STOPPED_BY_OWNER.add(state.pid)  # on SIGTERM, the launcher stops its jobs through it before it stops it
    os.environ.update({k: v for k, v in state.client_env().items() if k != "RAY_ADDRESS"})
    log.info("Ray: local instance on %s (%d CPUs, pid %d)", state.address, state.num_cpus, state.pid)
    rest = {k: v for k, v in init.items() if k not in ("num_cpus", "object_store_memory")}
    return rest | {"address": state.address}


def local_instance_home(runs_dir: Path) -> Path:
    """Where this driver's private Ray instance keeps its state."""
    return RunLayout(runs_dir).ray_dir / f"local-{os.getpid()}"


def stop_local_instance(home: Path, grace_s: float = 60) -> None:
    """Disconnect and stop this driver's private instance (no-op once stopped). At exit it may hold running
    jobs: their workers get `grace_s` to mark their runs."""
    import ray

    from prism_experiments.ops import ray_head

    ray.shutdown()
    ray_head.stop_head(home, grace_s=grace_s)


def connect(init: dict[str, Any], runs_dir: Path, timeout_s: float, attempts: int) -> None:
    """`ray.init` once per driver: to the cluster `init["address"]` names, else to a local instance started here."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if on_loopback(init.get("address")):
        # before Ray is imported: keeps a local instance on 127.0.0.1 (else it listens on every
        # interface), and lets a driver reach a head started by `make ray-head` (docs/cluster.md)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    if "ray" in sys.modules and sys.modules["ray"].is_initialized():
        return
    if "address" in init:
        log.info("Ray: connecting to %s", init["address"])
    else:  # before Ray is imported: it reads the token settings this sets once, at import
        init = start_local_instance(local_instance_home(runs_dir), init, timeout_s, attempts)
    import ray

    handler = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(**init)
    except Exception as error:
        raise RayStartError(
            f"hydra.launcher.ray.init.address: cannot connect to Ray at {init['address']} "
            f"({str(error).strip().splitlines()[0]})"
        ) from None
    finally:
        # ray.init replaces the driver's SIGTERM handler (sys.exit, and its core worker's abort): SIGTERM must
        # stop a sweep as Ctrl-C does, whatever the launcher
        if handler is not None:
            signal.signal(signal.SIGTERM, handler)


class PrismRayLauncher(RayLauncher):
    @staticmethod
    def prepare_sweep(config: Any, runs_dir: Path) -> None:
        """Called by the sweep callback before any run exists: Ray up, or RayStartError."""
        ray_cfg = config.hydra.launcher.ray
        init = ray_init_arguments(OmegaConf.to_container(ray_cfg.init, resolve=True))  # type: ignore[arg-type]
        connect(init, runs_dir, float(ray_cfg.start_timeout_s), int(ray_cfg.start_attempts))

    @staticmethod
    def memory_plan(launcher: Any, jobs: int) -> MemoryPlan:
        """The sweep's memory preflight: on this machine's instance, a job per CPU it has (`init.num_cpus`, else this
        machine's cores) over the CPUs a job asks (`remote.num_cpus`, 1 by default); a cluster's nodes are not this
        machine's, and are not checked."""
        init = OmegaConf.to_container(launcher.ray.init, resolve=True) or {}
        remote = OmegaConf.to_container(launcher.ray.remote, resolve=True) or {}
        assert isinstance(init, dict) and isinstance(remote, dict)
        if not on_loopback(init.get("address")):
            return MemoryPlan(jobs, f"a Ray cluster at {init.get('address')}", known=False)
        cpus = int(init.get("num_cpus") or os.cpu_count() or 1)
        per_job = max(1, int(remote.get("num_cpus") or 1))
        setting = f"hydra.launcher.ray.init.num_cpus={init.get('num_cpus') or f'{cpus} (this machine)'}"
        return MemoryPlan(max(1, min(jobs, cpus // per_job)), setting)

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        setup_globals()
        assert self.config is not None and self.hydra_context is not None and self.task_function is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        start, returns = jobs_not_finished(self.config, job_overrides, initial_job_idx)
        if not start:  # every job FINISHED before the sweep: no Ray at all
            return [returns[initial_job_idx + offset] for offset in range(len(job_overrides))]
        init = ray_init_arguments(OmegaConf.to_container(self.ray_cfg.init, resolve=True))  # type: ignore[arg-type]
        runs_dir = RunLayout.of_config(self.config).runs_dir  # as the sweep callback's prepare_sweep saw it
        connect(init, runs_dir, float(self.ray_cfg.start_timeout_s), int(self.ray_cfg.start_attempts))
        import ray

        remote_options = OmegaConf.to_container(self.ray_cfg.remote, resolve=True) or {}
        run_remote = ray.remote(**remote_options)(_run_job)  # type: ignore[arg-type]
        from prism_experiments.harness.progress import SweepProgress
        from prism_experiments.harness.recovery import read_outcome

        index_of: dict[Any, int] = {}
        waiting: list[Any] = []
        try:
            for index, overrides in start:
                log.info("\t#%d : %s", index, " ".join(filter_overrides(overrides)))
                # the worker composes the job's config, as joblib's workers do (execute_job)
                reference = run_remote.remote(
                    index,
                    overrides,
                    self.hydra_context,
                    self.config,
                    self.task_function,
                    Singleton.get_state(),
                    str(sweep_dir),
                )
                index_of[reference] = index
                waiting.append(reference)
            progress = SweepProgress(len(waiting), log.info)
            while waiting:  # in the order jobs finish, so the progress line comes once per finished job
                (done,), waiting = ray.wait(waiting, num_returns=1)
                index = index_of[done]
                returns[index] = _result(ray, index, done, sweep_dir)
                outcome = read_outcome(sweep_dir, index)
                progress.finished(failed=outcome is None or outcome.status == "FAILED")
        except KeyboardInterrupt as interrupt:
            _stop_jobs(ray, interrupt, sweep_dir, {index_of[reference]: reference for reference in waiting})
            if "address" not in init:  # the jobs have marked their runs: nothing left for Ray's graceful shutdown
                stop_local_instance(local_instance_home(runs_dir), grace_s=0)
            raise
        if "address" not in init:
            # every job has returned and the private instance holds nothing the sweep needs: stopped now, without
            # the ~30 s Ray's graceful shutdown takes (a later batch starts another one)
            stop_local_instance(local_instance_home(runs_dir), grace_s=0)
        return [returns[initial_job_idx + offset] for offset in range(len(job_overrides))]


def _run_job(index: int, overrides: Sequence[str], *args: Any) -> JobReturn:
    """In the Ray worker: Hydra's job through the same never-raising wrapper as the joblib launcher, unless the sweep
    was interrupted before it started; the driver's interrupt, passed on, ends it (its run marked KILLED)."""
    from prism_experiments.harness.interruption import job_may_start
    from prism_experiments.ops.processes import interrupts_raised

    *job_args, sweep_dir = args
    with interrupts_raised():
        try:
            if not job_may_start(Path(sweep_dir), index):
                return ended_job(index, list(overrides), f"job {index} (not started: the sweep was interrupted)")
            return execute_job_safely(index, overrides, *job_args)
        except KeyboardInterrupt:  # the driver's signal, passed on: the run, if one was made, is marked KILLED
            return ended_job(index, list(overrides), f"job {index} (interrupted)")


def _stop_jobs(ray: Any, interrupt: KeyboardInterrupt, sweep_dir: Path, waiting: dict[int, Any]) -> None:
    """The driver was interrupted: no queued job starts, every started job on this machine gets the signal and a
    few seconds to mark its run KILLED, and what is left (another node's) is cancelled."""
    from prism_experiments.harness.interruption import JOB_STOP_WAIT_S, interrupt_started_jobs, signal_of

    signum = signal_of(interrupt)
    signalled = interrupt_started_jobs(sweep_dir, waiting, signum)
    log.info("interrupted: passing %s on to %d running job(s)", signum.name, len(signalled))
    references = list(waiting.values())
    try:
        _, left = ray.wait(references, num_returns=len(references), timeout=JOB_STOP_WAIT_S)
        for reference in left:
            ray.cancel(reference)
    except Exception as error:  # Ray itself is going down: the driver's exit marks what is left
        log.warning("Ray: could not wait for the interrupted jobs (%s)", str(error).strip().splitlines()[0])


def _result(ray: Any, index: int, reference: Any, sweep_dir: Path) -> JobReturn:
    """The job's return; a job whose worker died is marked FAILED in the store and reported, not raised."""
    try:
        return ray.get(reference)
    except ray.exceptions.RayError as error:
        from prism_experiments.harness.recovery import jobs_left_after_worker_death

        log.error("job %d: its Ray worker died (%s)", index, str(error).strip().splitlines()[0])
        # this host's dead worker: its RUNNING run becomes FAILED now; another node's is reaped by
        # the next sweep's liveness check (ops/liveness.py)
        jobs_left_after_worker_death(sweep_dir, [index])
        return died_job(index)
