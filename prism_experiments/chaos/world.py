"""What the chaos rounds run against: the stores (sqlite on disk, sqlite on a small tmpfs, the tracking server on
PostgreSQL), a Ray head, the embedding cache, the fault-free reference metrics, and the sweeps themselves.

Every server is started here from the project's own code (`make tracking-server`'s, `make ray-head`'s) on 127.0.0.1
and stopped by its recorded PIDs."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prism_experiments.chaos.schedule import (
    LAUNCHER_OVERRIDES,
    REPLICATION_FINDING,
    REPLICATION_SEEDS,
    Round,
    SweepPlan,
)
from prism_experiments.locations import CONFIG_DIR, sqlite_tracking_uri

#: the experiment every chaos sweep logs to (its rounds' configs differ by seed)
EXPERIMENT = "chaos"
#: how long a sweep may run before it counts as hung (a violation), and how long orphaned jobs may take to end
SWEEP_TIMEOUT_S = 600.0
ORPHAN_TIMEOUT_S = 180.0
#: the tracking server's request budget in chaos sweeps: a dead server fails a job in seconds, not 40
SERVER_OVERRIDES = ("tracking.http_timeout_s=5", "tracking.http_max_retries=1")
#: the harness's own requests to a tracking server: one attempt, 5 s (a killed server must not hold the harness for
#: MLflow's default 7 retries); its sweeps keep their own budget (SERVER_OVERRIDES)
HARNESS_HTTP_BUDGET = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}
#: the tmpfs a full-disk round fills (small: it fills in a moment)
DISK_SIZE = "64m"
#: the example world a file_world round's jobs run on (`python -m prism_experiments.example_world`): as many
#: accounts as the tests' file worlds, so that a job costs about a smoke job
WORLD_FILE_NODES, WORLD_FILE_EDGES = 40, 200


@dataclass
class Stores:
    """Where each store's runs go, and the servers behind them."""

    work: Path
    cache: Path
    server_home: Path | None = None
    server_uri: str | None = None
    server_port: int = 0
    disk: Path | None = None
    ray_home: Path | None = None
    ray_env: dict[str, str] = field(default_factory=dict)
    #: (seed, mode) -> the fault-free run's summary metrics, for every round so far
    references: dict[tuple[int, str], dict[str, float]] = field(default_factory=dict)
    #: the folder of the file_world rounds' edges.txt and population.csv (None: no such round)
    world_files: Path | None = None
    #: the fault-free replication suite, run once a schedule when its first replication round starts
    replication: ReplicationReference | None = None

    def target_overrides(self, round_: Round) -> list[str]:
        """What the round's target adds to every job of the round (its references, sweeps and final re-run)."""
        if round_.target == "file_world":
            assert self.world_files is not None
            return [
                "network=file",
                f"network.path={self.world_files / 'edges.txt'}",
                "agents=file",
                f"agents.path={self.world_files / 'population.csv'}",
            ]
        if round_.target == "ranking_schedule":
            return [schedule_override(round_.n_steps)]
        return []

    def runs_dir(self, store: str) -> Path:
        if store == "disk":
            assert self.disk is not None
            return self.disk / "runs"
        return self.work / f"runs-{store}"

    def tracking_uri(self, store: str) -> str:
        if store == "server":
            assert self.server_uri is not None
            return self.server_uri
        return sqlite_tracking_uri(self.runs_dir(store))

    def overrides(self, store: str) -> list[str]:
        server = ["tracking=server", f"tracking.uri={self.server_uri}", *SERVER_OVERRIDES] if store == "server" else []
        return [f"paths.runs_dir={self.runs_dir(store)}", f"rag.cache_dir={self.cache}", *server]


@contextlib.contextmanager
def stores_for(work: Path, cache: Path, rounds: list[Round]) -> Iterator[Stores]:
    """The stores and servers `rounds` need, stopped at the end (by PID) whatever happened."""
    from prism_experiments.ops import ray_head, tracking_server
    from prism_experiments.ops.daemons import free_port

    stores = Stores(work, cache)
    try:
        if any(r.store == "server" for r in rounds):
            # PostgreSQL's user must reach its data: a folder of its own under the system's temp dir
            stores.server_home = Path(tempfile.mkdtemp(prefix="prism-chaos-pg-"))
            stores.server_home.chmod(0o755)
            stores.server_port = free_port()
            state = tracking_server.start(stores.server_home, mlflow_port=stores.server_port)
            stores.server_uri = state.tracking_uri
        if any(r.store == "disk" for r in rounds):
            stores.disk = mount_small_disk(work / "disk")
        if any(r.target == "file_world" for r in rounds):
            stores.world_files = write_world_files(work / "world")
        if any(s.launcher == "ray" for r in rounds for s in r.sweeps):
            stores.ray_home = work / "ray-head"
            head = ray_head.start_head(stores.ray_home, port=free_port(), num_cpus=2, timeout_s=300)
            stores.ray_env = head.client_env()
        yield stores
    finally:
        if stores.ray_home is not None:
            ray_head.stop_head(stores.ray_home, grace_s=0)
        if stores.server_home is not None:
            tracking_server.stop(stores.server_home)
            shutil.rmtree(stores.server_home, ignore_errors=True)
        if stores.disk is not None:
            subprocess.run(["umount", "-l", str(stores.disk)], check=False, capture_output=True)


def mount_small_disk(mount_point: Path) -> Path | None:
    """A DISK_SIZE tmpfs at `mount_point`; None where this process may not mount one (not root)."""
    mount_point.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE}", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    return mount_point if mounted.returncode == 0 else None


def disk_available(work: Path) -> bool:
    """Whether a small tmpfs can be mounted here (tried and unmounted)."""
    probe = mount_small_disk(work / "disk-probe")
    if probe is None:
        return False
    subprocess.run(["umount", "-l", str(probe)], check=False, capture_output=True)
    return True


def write_world_files(folder: Path) -> Path:
    """The example world's edges.txt and population.csv in `folder` (the file_world rounds' world)."""
    from prism_experiments.example_world import main as example_world

    code = example_world(["--out", str(folder), "--nodes", str(WORLD_FILE_NODES), "--edges", str(WORLD_FILE_EDGES)])
    if code != 0:
        raise RuntimeError(f"the example world could not be written to {folder} (exit {code})")
    return folder


def schedule_override(n_steps: int) -> str:
    """A ranking schedule for a run of `n_steps`: x_algo with a halved out-of-network scale from step 0, whatever the
    run's own mode (so a random run switches ranker at once), then chronological from half-way (a second switch,
    which every ranker observes the feedback before: simulation/schedule.py)."""
    entries = ["{step:0,mode:x_algo,out_of_network_scale:0.5}"]
    if n_steps >= 2:
        entries.append(f"{{step:{n_steps // 2},mode:chronological}}")
    return f"simulation.schedule=[{','.join(entries)}]"


# ------------------------------------------------------------------------------------------- fault-free references
def job_overrides(seed: int, mode: str, n_steps: int, extra: list[str] | None = None) -> list[str]:
    """One chaos job's config, as its sweep composes it (`experiment=smoke` at `n_steps`, then the round target's
    `extra` overrides)."""
    return [
        "experiment=smoke",
        f"experiment_name={EXPERIMENT}",
        f"simulation.n_steps={n_steps}",
        "simulation.show_progress=false",
        "tracking.log_figures=false",
        *(extra or []),
        f"seed={seed}",
        f"ranking={mode}",
    ]


def reference_metrics(round_: Round, stores: Stores, scratch: Path) -> dict[tuple[int, str], dict[str, float]]:
    """(seed, mode) -> summary metrics of a fault-free in-process run of each config of the round (this also puts
    every text the round's sweeps embed into the cache)."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.metrics import summarize
    from prism_experiments.simulation import run_simulation

    references = {}
    for seed, mode in sorted(round_.configs):
        overrides = job_overrides(seed, mode, round_.n_steps, stores.target_overrides(round_))
        cfg = compose_experiment([*overrides, f"paths.runs_dir={scratch}", f"rag.cache_dir={stores.cache}"])
        references[(seed, mode)] = summarize(run_simulation(cfg))
    return references


@dataclass(frozen=True)
class ReplicationReference:
    """The fault-free quick suite of the replication rounds: its verdicts.csv rows, and its runs' metrics by config."""

    verdicts: list[dict[str, str]]
    metrics: dict[tuple[int, str], dict[str, float]]


def same_metric(logged: float | None, reference: float) -> bool:
    """Exactly equal, or both NaN."""
    if logged is None:
        return False
    return logged == reference or (math.isnan(logged) and math.isnan(reference))


# ------------------------------------------------------------------------------------------------------ the sweeps
@dataclass
class Sweep:
    """A running sweep: its plan, process and output file."""

    plan: SweepPlan
    process: subprocess.Popen[bytes]
    log: Path
    #: a replication suite (`prism-replicate`), whose sweeps are its children, one at a time
    suite: bool = False

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.is_file() else ""

    def driver_pid(self) -> int | None:
        """The sweep's driver: the process itself, or the suite's sweep in flight (None between its sweeps)."""
        if not self.suite:
            return self.process.pid
        from prism_experiments.ops.processes import child_pids

        for pid in child_pids(self.process.pid):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"prism_experiments" in command and b"-m" in command[2:]:
                return pid
        return None


def _terminal_signals() -> None:
    """In the sweep before exec: SIGINT and SIGTERM at their defaults and unblocked, as in a terminal."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_sweep(plan: SweepPlan, round_: Round, stores: Stores, log: Path) -> Sweep:
    """`python -m prism_experiments -m ...` for `plan`, in a process group of its own (a terminal's foreground job)."""
    extra = stores.target_overrides(round_)
    base = [a for a in job_overrides(0, "x_algo", round_.n_steps, extra) if not a.startswith(("seed=", "ranking="))]
    command = [
        sys.executable,
        "-m",
        "prism_experiments",
        "-m",
        *base,
        *plan.overrides(),
        *LAUNCHER_OVERRIDES[plan.launcher],
        *stores.overrides(round_.store_key),
    ]
    env = _sweep_environment() | (stores.ray_env if plan.launcher == "ray" else {})
    return Sweep(plan, _start(command, env, log), log)


def start_suite(round_: Round, stores: Stores, log: Path, report: Path) -> Sweep:
    """`prism-replicate --quick --only <finding> --seeds N` into the round's own store (`Round.store_key`), its report
    in `report`, in a process group of its own (`make replicate` in a terminal). No power simulation: it draws
    nothing the verdicts' numbers depend on and costs seconds per claim."""
    command = [
        sys.executable,
        "-m",
        "prism_experiments.replication.cli",
        "--quick",
        "--only",
        REPLICATION_FINDING,
        "--seeds",
        str(REPLICATION_SEEDS),
        "--power-replicates",
        "0",
        "--out",
        str(report),
    ]
    env = _sweep_environment() | {"PRISM_RUNS_DIR": str(stores.runs_dir(round_.store_key))}
    env["PRISM_CACHE_DIR"] = str(stores.cache)
    return Sweep(round_.sweeps[0], _start(command, env, log), log, suite=True)


def _sweep_environment() -> dict[str, str]:
    """This process's environment without the harness's own store, Ray and HTTP budget, and offline."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR", "RAY_ADDRESS", *HARNESS_HTTP_BUDGET)
    }
    return env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        return subprocess.Popen(
            command,
            cwd=CONFIG_DIR.parent,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_terminal_signals,
        )


def wait_for_group(pid: int, timeout_s: float = ORPHAN_TIMEOUT_S) -> bool:
    """Until no process of the group `pid` leads is left (a suite's sweep outlives a suite killed by a signal it
    does not handle); False if some still run after `timeout_s`, which are then killed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _group_members(pid):
            return True
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    return False


def _group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid`, from /proc (proc(5))."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def wait_for_exit(sweeps: list[Sweep], timeout_s: float = SWEEP_TIMEOUT_S) -> list[str]:
    """Wait for every sweep; one violation line for each that had to be killed."""
    deadline = time.monotonic() + timeout_s
    hung = []
    for sweep in sweeps:
        try:
            sweep.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(sweep.process.pid, signal.SIGKILL)
            sweep.process.wait()
            hung.append(f"a sweep ({sweep.plan}) did not exit within {timeout_s:g} s (log: {sweep.log})")
    return hung


def client(uri: str) -> Any:
    from prism_experiments.tracking.store import client_for

    return client_for(uri)
