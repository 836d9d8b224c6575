"""`hydra/launcher=prism_ray`: hydra-ray-launcher with this project's defaults and its failure handling.

Local mode (a Ray instance started for the sweep) unless `hydra.launcher.ray.init.address` or
`RAY_ADDRESS` names a cluster (`ray start --head`). Differences from `hydra/launcher=ray`, each from a
measured failure (docs/cluster.md):
- no dashboard and no usage statistics;
- `object_store_memory` is left to Ray when connecting to a cluster (the plugin's hidden 75 MB default
  is refused by an existing cluster), and kept for local mode (small /dev/shm in containers);
- a task is not retried by Ray when its worker dies (`max_retries: 0`): a retried job would leave
  the dead attempt's run behind; the job is marked FAILED instead and the next sweep re-runs it;
- a job that fails, or whose worker dies, does not abort the sweep (as with `prism_joblib`).
"""


import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, configure_log, filter_overrides, setup_globals
from hydra_plugins.hydra_ray_launcher._config import RayConf
from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher
from omegaconf import OmegaConf

from hydra_plugins.prism_launcher.prism_joblib_launcher import _died, execute_job_safely

log = logging.getLogger(__name__)

#: hydra-ray-launcher's own default for local mode (ray-project/ray#11966)
LOCAL_OBJECT_STORE_BYTES = 78_643_200


def _init_defaults() -> Dict[str, Any]:
    return {"address": "${oc.env:RAY_ADDRESS,null}", "include_dashboard": False, "num_cpus": None,
            "object_store_memory": None}


@dataclass
class PrismRayConf(RayConf):
    init: Dict[str, Any] = field(default_factory=_init_defaults)
    remote: Dict[str, Any] = field(default_factory=lambda: {"max_retries": 0})


@dataclass
class PrismRayLauncherConf:
    _target_: str = "hydra_plugins.prism_launcher.prism_ray_launcher.PrismRayLauncher"
    ray: PrismRayConf = field(default_factory=PrismRayConf)


ConfigStore.instance().store(group="hydra/launcher", name="prism_ray", node=PrismRayLauncherConf,
                             provider="prism_experiments")


def ray_init_arguments(init: Dict[str, Any]) -> Dict[str, Any]:
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


class PrismRayLauncher(RayLauncher):
    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        setup_globals()
        assert self.config is not None and self.hydra_context is not None and self.task_function is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        init = ray_init_arguments(OmegaConf.to_container(self.ray_cfg.init, resolve=True))  # type: ignore[arg-type]
        if on_loopback(init.get("address")):
            # before Ray is imported: keeps a local instance on 127.0.0.1 (else it listens on every
            # interface), and lets a driver reach a head started by `make ray-head` (docs/cluster.md)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray

        if not ray.is_initialized():
            log.info("Ray: %s", f"connecting to {init['address']}" if "address" in init else "local instance")
            ray.init(**init)
        remote_options = OmegaConf.to_container(self.ray_cfg.remote, resolve=True) or {}
        run_remote = ray.remote(**remote_options)(_run_job)  # type: ignore[arg-type]
        pending = []
        for offset, overrides in enumerate(job_overrides):
            index = initial_job_idx + offset
            log.info("\t#%d : %s", index, " ".join(filter_overrides(overrides)))
            # the worker composes the job's config, as joblib's workers do (execute_job)
            pending.append((index, run_remote.remote(index, list(overrides), self.hydra_context, self.config,
                                                     self.task_function, Singleton.get_state())))
        from prism_experiments.harness.progress import SweepProgress
        from prism_experiments.harness.recovery import read_outcome

        progress = SweepProgress(len(pending), log.info)
        index_of = {reference: index for index, reference in pending}
        returns: dict[int, JobReturn] = {}
        waiting = [reference for _, reference in pending]
        while waiting:  # in the order jobs finish, so the progress line comes once per finished job
            (done,), waiting = ray.wait(waiting, num_returns=1)
            index = index_of[done]
            returns[index] = _result(ray, index, done, sweep_dir)
            outcome = read_outcome(sweep_dir, index)
            progress.finished(failed=outcome is None or outcome.status == "FAILED")
        return [returns[index] for index, _ in pending]


def _run_job(*args: Any) -> JobReturn:
    """In the Ray worker: Hydra's job through the same never-raising wrapper as the joblib launcher."""
    return execute_job_safely(*args)


def _result(ray: Any, index: int, reference: Any, sweep_dir: Path) -> JobReturn:
    """The job's return; a job whose worker died is marked FAILED in the store and reported, not raised."""
    try:
        return ray.get(reference)
    except ray.exceptions.RayError as error:
        from prism_experiments.harness.recovery import jobs_left_after_worker_death

        log.error("job %d: its Ray worker died (%s)", index, str(error).strip().splitlines()[0])
        # this host's dead worker: its RUNNING run becomes FAILED now; another node's is reaped by
        # the next sweep's liveness check (tracking/liveness.py)
        jobs_left_after_worker_death(sweep_dir, [index])
        return _died(index)
