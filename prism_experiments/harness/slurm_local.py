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
import logging
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from submitit.slurm.slurm import SlurmInfoWatcher

from prism_experiments.daemons import (
    DaemonError,
    StateFile,
    free_port,
    port_open,
    run_daemon_cli,
    start_in_session,
    wait_until,
)
from prism_experiments.processes import process_alive, stop_process_group

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
NODE = "localhost"
PARTITION = "local"
#: a higher-priority partition on the same node: its jobs preempt (requeue) the sweep jobs of PARTITION
URGENT_PARTITION = "urgent"
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
    return runs_dir.resolve() / "slurm-local"


def state_file(home: Path) -> StateFile[SlurmLocalState]:
    return StateFile(home / STATE_FILE, SlurmLocalState)


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


def node_memory_mb() -> int:
    """The machine's memory in MB (slurm.conf's RealMemory), from /proc/meminfo."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return max(1, int(line.split()[1]) // 1024)
    return 1


def slurm_conf(home: Path, runtime: Path, ctld_port: int, slurmd_port: int, cpus: int) -> str:
    user = pwd.getpwuid(os.geteuid()).pw_name
    settings = {
        "ClusterName": "prism-local",
        "SlurmctldHost": f"{NODE}(127.0.0.1)",
        "SlurmctldPort": ctld_port,
        "SlurmdPort": slurmd_port,
        "SlurmUser": user,
        "SlurmdUser": user,
        "AuthType": "auth/munge",
        "CredType": "cred/munge",
        # cred_expire: a requeued (preempted) job waits this long before it may start again (120 s by default)
        "AuthInfo": f"socket={runtime / 'munge.socket'},cred_expire=30",
        "StateSaveLocation": home / "state",
        "SlurmdSpoolDir": runtime / "spool",
        "SlurmctldPidFile": runtime / "slurmctld.pid",
        "SlurmdPidFile": runtime / "slurmd.pid",
        "ProctrackType": "proctrack/linuxproc",
        "TaskPlugin": "task/none",
        "JobAcctGatherType": "jobacct_gather/none",
        "AccountingStorageType": "accounting_storage/none",
        "JobCompType": "jobcomp/none",
        "SelectType": "select/cons_tres",
        "SelectTypeParameters": "CR_CPU",
        "SchedulerType": "sched/backfill",
        "MpiDefault": "none",
        "SwitchType": "switch/none",
        "MailProg": "/bin/true",
        "ReturnToService": 2,
        "SlurmdParameters": "config_overrides",
        "KillWait": 10,
        "CommunicationParameters": "NoCtldInAddrAny,NoInAddrAny",
        "PreemptType": "preempt/partition_prio",
        "PreemptMode": "REQUEUE",
    }
    lines = ["# written by `make slurm-local` (prism_experiments/harness/slurm_local.py); rewritten at each start"]
    lines += [f"{key}={value}" for key, value in settings.items()]
    lines += [
        f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={node_memory_mb()} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP PriorityTier=1",
        f"PartitionName={URGENT_PARTITION} Nodes={NODE} MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF",
    ]
    return "\n".join(lines) + "\n"


#: no cgroup plugin is configured (proctrack/linuxproc, task/none); slurmd still reads this file, and must not
#: mount cgroup filesystems of its own
CGROUP_CONF = "# written by `make slurm-local`: no cgroup plugin is used\nCgroupAutomount=no\n"


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


def export_line(state: SlurmLocalState) -> str:
    return "export " + " ".join(f"{key}={shlex.quote(value)}" for key, value in state.client_env().items())


#: at most this many seconds between two questions to SLURM about a sweep's jobs (submitit's default: 600)
SLURM_STATE_SECONDS = 10
#: the state given to a job that `squeue` no longer knows (purged after SLURM's MinJobAge) and that left no result
NOT_IN_QUEUE = "ENDED (no longer in squeue)"


class SlurmStateWatcher(SlurmInfoWatcher):
    """submitit's job-state watcher for `prism_submitit_slurm`: `sacct` where the cluster keeps accounting (as
    submitit does), else `squeue --states=all`. Without slurmdbd `sacct` fails, and submitit would keep a job that
    died without a result (`scancel`, a time limit) UNKNOWN, so the sweep would wait for it forever."""

    def __init__(self, delay_s: int = SLURM_STATE_SECONDS) -> None:
        super().__init__(delay_s=delay_s)
        self.accounting: bool | None = None  # unknown until sacct was asked once

    def update(self) -> None:
        command = self._make_command()
        if command is None:
            return
        self._num_calls += 1
        output = self._sacct(command) if self.accounting is not False else None
        if self.accounting is False:
            output = self._squeue(sorted({job_id.split("_")[0] for job_id in self._registered - self._finished}))
        if output is not None:
            self._info_dict.update(self.read_info(output))
        self._last_status_check = time.time()
        for job_id in self._registered - self._finished:
            if self.is_done(job_id, mode="cache"):
                self._finished.add(job_id)

    def _sacct(self, command: list[str]) -> str | None:
        done = _ask(command)
        if done is None:
            return None
        if done.returncode == 0:
            self.accounting = True
            return done.stdout
        if "accounting storage is disabled" in done.stderr:
            self.accounting = False
            log.info("this SLURM cluster keeps no accounting (sacct): job states come from squeue")
            return None
        log.warning("sacct: %s; job states may lag", (done.stderr.strip() or f"exit {done.returncode}")[:200])
        return None

    def _squeue(self, main_ids: list[str]) -> str | None:
        """`sacct --parsable2`'s format from `squeue`; a registered job squeue no longer knows is NOT_IN_QUEUE."""
        done = _ask(
            ["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T|%N", "--jobs", ",".join(main_ids)]
        )
        if done is None:
            return None
        if done.returncode != 0 and "Invalid job id" not in done.stderr:
            log.warning("squeue: %s; job states may lag", (done.stderr.strip() or f"exit {done.returncode}")[:200])
            return None
        lines = done.stdout.splitlines() if done.returncode == 0 else []
        listed = {line.split("|", 1)[0] for line in lines}
        lines += [
            f"{job_id}|{NOT_IN_QUEUE}|"
            for job_id in sorted(self._registered - self._finished)
            if job_id not in listed and job_id.split("_")[0] not in listed
        ]
        return "\n".join(["JobID|State|NodeList", *lines])


def _ask(command: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("%s: %s; job states may lag", command[0], error)
        return None


def main(argv: list[str] | None = None) -> int:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--cpus", type=int, default=None, help="the node's CPUs (default: 2, or 1 on one core)")

    return run_daemon_cli("slurm-local", __doc__ or "", ["start", "stop", "status"], argv, options, _act)


def _act(action: str, args: argparse.Namespace, runs_dir: Path) -> int:
    if action == "start":
        state = start(runs_dir, cpus=args.cpus)
        print(
            f"SLURM on 127.0.0.1: slurmctld :{state.slurmctld_port} (pid {state.slurmctld_pid}), "
            f"slurmd :{state.slurmd_port} (pid {state.slurmd_pid}, node {NODE}, {state.cpus} CPUs, "
            f"partition {PARTITION}), munged (pid {state.munged_pid}). In the shell that sweeps:"
        )
        print(f"  {export_line(state)}")
        print('  make sweep EXPERIMENT=smoke ARGS="hydra/launcher=prism_submitit_slurm"')
        print("  make slurm-local-stop   stops it")
    elif action == "stop":
        print("stopped" if stop(runs_dir) else f"no SLURM recorded under {state_dir(runs_dir)}")
    else:
        recorded = read_state(runs_dir)
        if recorded is None or not running(recorded):
            print("no SLURM running (make slurm-local)", file=sys.stderr)
            return 1
        print(
            f"running: slurmctld pid {recorded.slurmctld_pid} :{recorded.slurmctld_port}, "
            f"slurmd pid {recorded.slurmd_pid} :{recorded.slurmd_port}, munged pid {recorded.munged_pid}"
        )
        print(export_line(recorded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
