"""`make ray-head`: a Ray cluster head on this machine (127.0.0.1), under `<runs_dir>/ray-head`.

Started as `ray start --head --block` in its own session, so `stop` ends it and every process it
spawned (GCS, raylet, workers) through its PID's process group, never by name. Four settings come
from failures measured against Ray 2.60 (docs/cluster.md "A Ray cluster"):
- token authentication is on by default: the token is generated here, kept 0600 in the state
  directory, and passed to both sides with `RAY_AUTH_MODE=token` and `RAY_AUTH_TOKEN_PATH`;
- `--node-ip-address=127.0.0.1` alone still listens on every interface and makes clients dial the
  machine's external address: `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` (both sides) keeps Ray on loopback;
- no dashboard, no usage statistics.

`add-node` joins a worker node to that head (`ray start --address`, 127.0.0.1, its own session), as a second
machine would: its state under `<runs_dir>/ray-head/nodes/<n>/` and an embedding cache of its own there, seeded
by copying the shared one (`$PRISM_CACHE_DIR` in its workers' environment; docs/cluster.md "Shared caches").
`stop` stops the nodes first, then the head.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.locations import CACHE_DIR_ENV
from prism_experiments.ops.cli import ServerCommands, Status
from prism_experiments.ops.daemons import DaemonError, port_open, require_free_port, start_in_session, wait_until
from prism_experiments.ops.processes import process_alive, stop_process_group
from prism_experiments.ops.state import StateFile, export_line, server_home

TOKEN_FILE = "auth_token"
NODES_DIR = "nodes"


class RayHeadError(DaemonError):
    """A one-line reason the Ray head could not start."""


@dataclass(frozen=True)
class RayHeadState:
    address: str
    pid: int
    token_path: str
    num_cpus: int

    @property
    def port(self) -> int:
        """The GCS port, which also names the head's session directory (`session_dir`)."""
        return int(self.address.rsplit(":", 1)[1])

    def client_env(self) -> dict[str, str]:
        """What a driver on this machine needs to join the cluster (`make sweep` reads RAY_ADDRESS)."""
        return {
            "RAY_ADDRESS": self.address,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": self.token_path,
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_USAGE_STATS_ENABLED": "0",
        }


@dataclass(frozen=True)
class RayNodeState:
    """A worker node `add-node` joined to the head: its `ray start` PID, CPUs and own cache directory."""

    pid: int
    num_cpus: int
    cache_dir: str
    head_address: str


def state_dir(runs_dir: Path) -> Path:
    return server_home(runs_dir, "ray-head")


def session_dir(port: int) -> Path:
    """The head's `--temp-dir` (session logs and sockets): under /tmp, since unix socket paths must stay under
    ~107 bytes; removed when the head stops."""
    return Path(f"/tmp/prism-ray-{port}")


def state_file(home: Path) -> StateFile[RayHeadState]:
    return StateFile.in_home(home, RayHeadState)


def read_state(runs_dir: Path) -> RayHeadState | None:
    return state_file(state_dir(runs_dir)).read()


def start(runs_dir: Path, port: int = 6379, num_cpus: int | None = None, timeout_s: float = 120) -> RayHeadState:
    """Start `make ray-head`'s head under `<runs_dir>/ray-head` (or return the running one)."""
    return start_head(state_dir(runs_dir), port=port, num_cpus=num_cpus, timeout_s=timeout_s)


def start_head(
    home: Path,
    port: int,
    num_cpus: int | None = None,
    timeout_s: float = 120,
    object_store_bytes: int | None = None,
    tied_to_this_process: bool = False,
) -> RayHeadState:
    """Start a head whose token, log and state live in `home` (or return the one running there), and wait until
    a client can connect: RayHeadError after `timeout_s`. A head `tied_to_this_process` stops when this process
    dies, even by SIGKILL (a sweep's private instance)."""
    running = state_file(home).read()
    if running is not None and process_alive(running.pid):
        return running
    require_free_port(port)
    home.mkdir(parents=True, exist_ok=True)
    token = home / TOKEN_FILE
    if not token.exists():
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
    temp_dir = session_dir(port)
    shutil.rmtree(temp_dir, ignore_errors=True)
    cpus = num_cpus or os.cpu_count() or 1
    state = RayHeadState(f"127.0.0.1:{port}", 0, str(token), cpus)
    env = os.environ | state.client_env()
    env.pop("RAY_ADDRESS")
    command = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        "--block",
        "--port",
        str(port),
        "--num-cpus",
        str(cpus),
        "--node-ip-address",
        "127.0.0.1",
        "--include-dashboard",
        "false",
        "--disable-usage-stats",
        "--temp-dir",
        str(temp_dir),
    ]
    if object_store_bytes is not None:
        command += ["--object-store-memory", str(object_store_bytes)]
    log_path = home / "ray-head.log"
    process = start_in_session(command, log_path, env, tied_to_this_process)
    try:
        wait_until(
            lambda: port_open(port) and (temp_dir / "ray_current_cluster").exists(),
            process,
            timeout_s,
            f"ray start --head on 127.0.0.1:{port}",
            log_path,
        )
    except DaemonError as error:
        stop_process_group(process.pid)
        raise RayHeadError(str(error)) from None
    state = RayHeadState(state.address, process.pid, state.token_path, cpus)
    state_file(home).write(state)
    return state


def node_state_file(node_home: Path) -> StateFile[RayNodeState]:
    return StateFile.in_home(node_home, RayNodeState)


def node_homes(home: Path) -> list[Path]:
    """The node directories of the head in `home`, in the order they were added."""
    nodes = home / NODES_DIR
    found = [path for path in nodes.iterdir() if path.name.isdigit()] if nodes.is_dir() else []
    return sorted(found, key=lambda path: int(path.name))


def add_node(home: Path, num_cpus: int = 1, seed_cache: Path | None = None, timeout_s: float = 120) -> RayNodeState:
    """Join a worker node to the head recorded in `home` (on 127.0.0.1), with its own cache directory seeded by
    copying `seed_cache` (the shared cache; none: an empty one); RayHeadError when there is no head or the node
    does not come up within `timeout_s`."""
    head = state_file(home).read()
    if head is None or not process_alive(head.pid):
        raise RayHeadError(f"no Ray head running under {home} (make ray-head)")
    homes = node_homes(home)
    node_home = home / NODES_DIR / str(int(homes[-1].name) + 1 if homes else 1)
    cache = node_home / "cache"
    if seed_cache is not None and (seed_cache / "embeddings").is_dir():
        shutil.copytree(seed_cache / "embeddings", cache / "embeddings", ignore=shutil.ignore_patterns("*.lock"))
    cache.mkdir(parents=True, exist_ok=True)
    # a joining node must see multi-node clusters enabled (the head's loopback setting refuses them); it keeps
    # 127.0.0.1 for itself and the head through ray_loopback_node, which stops Ray rewriting it
    env = os.environ | head.client_env() | {CACHE_DIR_ENV: str(cache), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
    env.pop("RAY_ADDRESS")
    command = [
        sys.executable,
        "-m",
        "prism_experiments.ops.ray_loopback_node",
        "start",
        "--address",
        head.address,
        "--block",
        "--num-cpus",
        str(num_cpus),
        "--node-ip-address",
        "127.0.0.1",
        "--disable-usage-stats",
    ]
    log_path = node_home / "ray-node.log"
    process = start_in_session(command, log_path, env)
    try:
        wait_until(
            lambda: "Ray runtime started" in log_path.read_text(errors="replace"),
            process,
            timeout_s,
            f"ray start --address {head.address} (a worker node)",
            log_path,
        )
    except DaemonError as error:
        stop_process_group(process.pid)
        shutil.rmtree(cache, ignore_errors=True)  # the log stays, for the reason; `stop` removes the directory
        raise RayHeadError(str(error)) from None
    state = RayNodeState(process.pid, num_cpus, str(cache), head.address)
    node_state_file(node_home).write(state)
    return state


def stop_node(node_home: Path) -> bool:
    """Stop the worker node recorded in `node_home` by its PID (its raylet and workers with it)."""
    return node_state_file(node_home).stop(lambda state: stop_process_group(state.pid, timeout_s=60))


def stop_head(home: Path, grace_s: float = 60) -> bool:
    """Stop the head recorded in `home`, its worker nodes first, and everything they started, by their PIDs, and
    remove its session directory; False if no head was recorded. After SIGTERM, Ray's own shutdown gets `grace_s`
    before SIGKILL: its GCS server lingers ~30 s (measured, Ray 2.60), while workers mark their runs at once."""
    for node_home in node_homes(home):
        stop_node(node_home)
        shutil.rmtree(node_home, ignore_errors=True)

    def stop_and_clean(state: RayHeadState) -> None:
        stop_process_group(state.pid, timeout_s=grace_s)
        shutil.rmtree(session_dir(state.port), ignore_errors=True)

    return state_file(home).stop(stop_and_clean)


def stop(runs_dir: Path) -> bool:
    """Stop `make ray-head`'s head, by its recorded PID; False if none was recorded."""
    return stop_head(state_dir(runs_dir))


def _start_lines(args: argparse.Namespace, runs_dir: Path) -> list[str]:
    state = start(runs_dir, port=args.port, num_cpus=args.num_cpus)
    return [
        f"Ray head on {state.address} ({state.num_cpus} CPUs, pid {state.pid}). In the shell that sweeps:",
        f"  {export_line(state.client_env())}",
        '  make sweep EXPERIMENT=smoke ARGS="hydra/launcher=prism_ray"',
        "  make ray-head-stop   stops it",
    ]


def _add_node_lines(args: argparse.Namespace, runs_dir: Path) -> tuple[list[str], int]:
    from prism_experiments.locations import cache_dir

    node = add_node(state_dir(runs_dir), num_cpus=args.num_cpus or 1, seed_cache=cache_dir(runs_dir))
    lines = [
        f"Ray worker node joined {node.head_address} ({node.num_cpus} CPUs, pid {node.pid})",
        f"  its embedding cache: {node.cache_dir} (a copy of the shared one)",
        "  make ray-head-stop   stops it with the head",
    ]
    return lines, 0


def status(runs_dir: Path) -> Status:
    """Running: the export line a sweep's shell needs."""
    recorded = read_state(runs_dir)
    if recorded is None or not process_alive(recorded.pid):
        return Status(False, ["no Ray head running (make ray-head)"])
    return Status(True, [export_line(recorded.client_env())])


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=6379, help="the head's GCS port (127.0.0.1)")
    parser.add_argument(
        "--num-cpus", type=int, default=None, help="CPUs the head (or the added node: 1) offers (default: all)"
    )


COMMANDS = ServerCommands(
    "ray-head", __doc__ or "", "Ray head", _start_lines, stop, status, _options, {"add-node": _add_node_lines}
)


main = COMMANDS.main


if __name__ == "__main__":
    sys.exit(main())
