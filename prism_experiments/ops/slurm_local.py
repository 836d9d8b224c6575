"""`make slurm-local`: a real single-node SLURM on this machine (127.0.0.1), under `<runs_dir>/slurm-local`.

Debian's `slurm-wlm` and `munge` packages: `munged`, `slurmctld` and one `slurmd` (node `localhost`, one CPU
per job slot), each started in its own session with its own key, socket, state, spool, PID and log paths, and
stopped by the PIDs recorded at start, never by name. Clients (`sbatch`, `squeue`, `scancel`, and the
`prism_submitit_slurm` launcher through them) find this cluster through `SLURM_CONF` alone: the munge socket is
named in its `AuthInfo`. Settings chosen for a container without cgroup delegation (docs/cluster.md "SLURM on
one machine"):
- `ProctrackType=proctrack/linuxproc`, `TaskPlugin=task/none`: no cgroup plugin, so no cgroup filesystem is needed;
- `SelectType=select/cons_tres` with `CR_CPU`: jobs share the node by CPU (memory is not a consumable resource:
  with `CR_CPU_Memory` a job without `--mem` would take the whole node's memory and the jobs would run one at a time);
- `SlurmdParameters=config_overrides`: the node is what slurm.conf says, whatever slurmd counts (sockets, cores);
- no accounting database (slurmdbd needs MySQL): `sacct` does not work, and the launcher asks `squeue` instead;
- `KillWait=10`: `scancel` sends SIGTERM, then SIGKILL 10 s later (the default is 30 s);
- `CommunicationParameters=NoCtldInAddrAny,NoInAddrAny`: slurmctld, slurmd and srun listen on 127.0.0.1 only;
- `PreemptType=preempt/partition_prio`, `PreemptMode=REQUEUE` and a second partition, `urgent` (higher
  `PriorityTier`): a job sent there preempts sweep jobs, which SLURM requeues, as on a shared cluster;
- `AuthInfo=...,cred_expire=30`: a requeued job may start again after 30 s instead of 120 s (a job step's
  credential lives as long, ample for a local node).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.ops.cli import ServerCommands, Status
from prism_experiments.ops.daemons import DaemonError, free_port, port_open, start_in_session, wait_until
from prism_experiments.ops.processes import process_alive, stop_process_group
from prism_experiments.ops.slurm_conf import CGROUP_CONF, NODE, PARTITION, slurm_conf
from prism_experiments.ops.slurm_conf import URGENT_PARTITION as URGENT_PARTITION  # where clients send urgent jobs
from prism_experiments.ops.state import StateFile, export_line, server_home

APT_INSTALL = "apt-get install -y slurm-wlm munge"
#: the programs `start` runs, and the ones a sweep needs on its PATH
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
#: where Debian puts the daemons: not on a non-root user's PATH
SBIN = ("/usr/sbin", "/sbin")


class SlurmLocalError(DaemonError):
    """A one-line reason the local SLURM could not start."""


@dataclass(frozen=True)
class SlurmLocalState:
    conf: str
    munge_socket: str
    munged_pid: int
    slurmctld_pid: int
    slurmd_pid: int
    slurmctld_port: int
    slurmd_port: int
    cpus: int
    runtime_dir: str

    def client_env(self) -> dict[str, str]:
        """What `sbatch`, `squeue`, `scancel` and a sweep's launcher need to use this cluster."""
        return {"SLURM_CONF": self.conf}

    def pids(self) -> tuple[int, int, int]:
        return self.slurmd_pid, self.slurmctld_pid, self.munged_pid


def state_dir(runs_dir: Path) -> Path:
    return server_home(runs_dir, "slurm-local")


def state_file(home: Path) -> StateFile[SlurmLocalState]:
    return StateFile.in_home(home, SlurmLocalState)


def read_state(runs_dir: Path) -> SlurmLocalState | None:
    return state_file(state_dir(runs_dir)).read()


def running(state: SlurmLocalState | None) -> bool:
    return state is not None and all(process_alive(pid) for pid in state.pids())


def find_binary(name: str) -> str | None:
    """`name` on PATH, or in /usr/sbin and /sbin (where Debian installs the daemons)."""
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN]))


def missing_binaries() -> list[str]:
    """The SLURM and munge programs this machine lacks (empty when `apt-get install slurm-wlm munge` was run)."""
    return [name for name in (*DAEMONS, *CLIENTS) if find_binary(name) is None]


def runtime_dir_for(home: Path) -> Path:
    """Where the unix sockets go (munge's, slurmd's spool with slurmstepd's): a short path under /tmp, because a
    socket's path must fit in 107 bytes (`sun_path`), which a runs directory under a home does not guarantee."""
    return Path("/tmp") / f"prism-slurm-{hashlib.sha256(str(home).encode()).hexdigest()[:12]}"


def start(runs_dir: Path, cpus: int | None = None, timeout_s: float = 120) -> SlurmLocalState:
    """Start `make slurm-local`'s cluster under `<runs_dir>/slurm-local` (or return the running one)."""
    return start_cluster(state_dir(runs_dir), cpus=cpus, timeout_s=timeout_s)


def start_cluster(home: Path, cpus: int | None = None, timeout_s: float = 120) -> SlurmLocalState:
    """munged, slurmctld and one slurmd whose files live in `home`; returns once the node takes jobs (idle in
    `sinfo`), else SlurmLocalError naming the daemon and its log's last line. A cluster already running there is
    returned as it is; what is left of a partly dead one is stopped first."""
    missing = missing_binaries()
    if missing:
        raise SlurmLocalError(f"SLURM is not installed ({', '.join(missing)} missing): run `{APT_INSTALL}`")
    recorded = state_file(home).read()
    if running(recorded):
        assert recorded is not None
        return recorded
    if recorded is not None:
        stop_cluster(home)
    cpus = cpus or min(2, os.cpu_count() or 1)
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)  # munged refuses a key in a directory others may write to
    (home / "state").mkdir(exist_ok=True)
    runtime = runtime_dir_for(home)
    shutil.rmtree(runtime, ignore_errors=True)
    (runtime / "spool").mkdir(parents=True)
    runtime.chmod(0o755)  # munged: every user must reach its socket
    key = home / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    ctld_port = free_port()
    slurmd_port = free_port()
    while slurmd_port == ctld_port:
        slurmd_port = free_port()
    conf = home / "slurm.conf"
    conf.write_text(slurm_conf(home, runtime, ctld_port, slurmd_port, cpus))
    (home / "cgroup.conf").write_text(CGROUP_CONF)
    env = os.environ | {"SLURM_CONF": str(conf)}
    socket = runtime / "munge.socket"
    started: list[int] = []
    try:
        munged = _start(
            "munged",
            [
                "--foreground",
                "--force",
                f"--socket={socket}",
                f"--key-file={key}",
                f"--pid-file={runtime / 'munged.pid'}",
                f"--seed-file={home / 'munged.seed'}",
            ],
            home,
            env,
            started,
            socket.exists,
            timeout_s,
        )
        # -c: a fresh cluster, no jobs or node states recovered from a previous start
        slurmctld = _start("slurmctld", ["-D", "-c", "-f", str(conf)], home, env, started, _port(ctld_port), timeout_s)
        slurmd = _start(
            "slurmd", ["-D", "-f", str(conf), "-N", NODE], home, env, started, lambda: _node_idle(env), timeout_s
        )
    except DaemonError as error:
        for pid in reversed(started):
            stop_process_group(pid, timeout_s=15)
        shutil.rmtree(runtime, ignore_errors=True)
        raise SlurmLocalError(str(error)) from None
    state = SlurmLocalState(
        conf=str(conf),
        munge_socket=str(socket),
        munged_pid=munged,
        slurmctld_pid=slurmctld,
        slurmd_pid=slurmd,
        slurmctld_port=ctld_port,
        slurmd_port=slurmd_port,
        cpus=cpus,
        runtime_dir=str(runtime),
    )
    state_file(home).write(state)
    return state


def _start(
    name: str,
    arguments: list[str],
    home: Path,
    env: dict[str, str],
    started: list[int],
    ready: Callable[[], bool],
    timeout_s: float,
) -> int:
    binary = find_binary(name)
    assert binary is not None  # checked by missing_binaries
    log_path = home / f"{name}.log"
    process = start_in_session([binary, *arguments], log_path, env)
    started.append(process.pid)
    wait_until(ready, process, timeout_s, name, log_path)
    return process.pid


def _port(port: int) -> Callable[[], bool]:
    return lambda: port_open(port)


def _node_idle(env: dict[str, str]) -> bool:
    """Whether the node has registered and takes jobs."""
    sinfo = find_binary("sinfo") or "sinfo"
    done = subprocess.run(
        [sinfo, "--noheader", "--nodes", NODE, "--format=%t"], capture_output=True, text=True, env=env, timeout=30
    )
    return done.returncode == 0 and done.stdout.strip() in ("idle", "mix", "alloc")


def stop_cluster(home: Path) -> bool:
    """Cancel this cluster's jobs, then stop slurmd, slurmctld and munged by their recorded PIDs; False if none
    was recorded."""

    def stop_daemons(state: SlurmLocalState) -> None:
        if running(state):
            _cancel_all_jobs(state)
        for pid in state.pids():
            stop_process_group(pid, timeout_s=30)
        shutil.rmtree(state.runtime_dir, ignore_errors=True)

    return state_file(home).stop(stop_daemons)


def _cancel_all_jobs(state: SlurmLocalState, timeout_s: float = 30) -> None:
    """`scancel` every job of this cluster (a job's processes are not in slurmd's process group) and wait until
    the queue holds none, at most `timeout_s`."""
    env = os.environ | state.client_env()
    squeue = [find_binary("squeue") or "squeue", "--noheader", "--format=%A"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        listed = subprocess.run(squeue, capture_output=True, text=True, env=env, timeout=30)
        jobs = listed.stdout.split() if listed.returncode == 0 else []
        if not jobs:
            return
        subprocess.run([find_binary("scancel") or "scancel", *jobs], capture_output=True, env=env, timeout=30)
        time.sleep(1)


def stop(runs_dir: Path) -> bool:
    """Stop `make slurm-local`'s cluster, by its recorded PIDs; False if none was recorded."""
    return stop_cluster(state_dir(runs_dir))


def _start_lines(args: argparse.Namespace, runs_dir: Path) -> list[str]:
    state = start(runs_dir, cpus=args.cpus)
    return [
        f"SLURM on 127.0.0.1: slurmctld :{state.slurmctld_port} (pid {state.slurmctld_pid}), "
        f"slurmd :{state.slurmd_port} (pid {state.slurmd_pid}, node {NODE}, {state.cpus} CPUs, "
        f"partition {PARTITION}), munged (pid {state.munged_pid}). In the shell that sweeps:",
        f"  {export_line(state.client_env())}",
        '  make sweep EXPERIMENT=smoke ARGS="hydra/launcher=prism_submitit_slurm"',
        "  make slurm-local-stop   stops it",
    ]


def status(runs_dir: Path) -> Status:
    """Running: its daemons and the export line a sweep's shell needs."""
    recorded = read_state(runs_dir)
    if recorded is None or not running(recorded):
        return Status(False, ["no SLURM running (make slurm-local)"])
    return Status(
        True,
        [
            f"running: slurmctld pid {recorded.slurmctld_pid} :{recorded.slurmctld_port}, "
            f"slurmd pid {recorded.slurmd_pid} :{recorded.slurmd_port}, munged pid {recorded.munged_pid}",
            export_line(recorded.client_env()),
        ],
    )


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpus", type=int, default=None, help="the node's CPUs (default: 2, or 1 on one core)")


COMMANDS = ServerCommands("slurm-local", __doc__ or "", "SLURM", _start_lines, stop, status, _options)


main = COMMANDS.main


if __name__ == "__main__":
    sys.exit(main())
