"""`make ray-head`: a Ray cluster head on this machine (127.0.0.1), under `<runs_dir>/ray-head`.

Started as `ray start --head --block` in its own session, so `stop` ends it and every process it
spawned (GCS, raylet, workers) through its PID's process group, never by name. Four settings come
from failures measured against Ray 2.60 (issue 15, docs/cluster.md "A Ray cluster"):
- token authentication is on by default: the token is generated here, kept 0600 in the state
  directory, and passed to both sides with `RAY_AUTH_MODE=token` and `RAY_AUTH_TOKEN_PATH`;
- `--node-ip-address=127.0.0.1` alone still listens on every interface and makes clients dial the
  machine's external address: `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` (both sides) keeps Ray on loopback;
- no dashboard, no usage statistics.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.processes import die_with_parent, load_state, process_alive, save_state, stop_process_group

STATE_FILE = "state.json"
TOKEN_FILE = "auth_token"


class RayHeadError(RuntimeError):
    """A one-line reason the Ray head could not start."""


@dataclass(frozen=True)
class RayHeadState:
    address: str
    pid: int
    token_path: str
    num_cpus: int

    def client_env(self) -> dict[str, str]:
        """What a driver on this machine needs to join the cluster (`make sweep` reads RAY_ADDRESS)."""
        return {"RAY_ADDRESS": self.address, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": self.token_path,
                "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


def state_dir(runs_dir: Path) -> Path:
    return runs_dir.resolve() / "ray-head"


def read_state(runs_dir: Path) -> RayHeadState | None:
    return load_state(state_dir(runs_dir) / STATE_FILE, RayHeadState)


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start(runs_dir: Path, port: int = 6379, num_cpus: int | None = None, timeout_s: float = 120) -> RayHeadState:
    """Start `make ray-head`'s head under `<runs_dir>/ray-head` (or return the running one)."""
    return start_head(state_dir(runs_dir), port=port, num_cpus=num_cpus, timeout_s=timeout_s)


def start_head(home: Path, port: int, num_cpus: int | None = None, timeout_s: float = 120,
               object_store_bytes: int | None = None, tied_to_this_process: bool = False) -> RayHeadState:
    """Start a head whose token, log and state live in `home` (or return the one running there), and wait until
    a client can connect: RayHeadError after `timeout_s`. A head `tied_to_this_process` stops when this process
    dies, even by SIGKILL (a sweep's private instance)."""
    running = load_state(home / STATE_FILE, RayHeadState)
    if running is not None and process_alive(running.pid):
        return running
    if _port_open(port):
        raise RayHeadError(f"--port: 127.0.0.1:{port} is in use; choose another (PORT=...)")
    home.mkdir(parents=True, exist_ok=True)
    token = home / TOKEN_FILE
    if not token.exists():
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
    # Ray's session files hold unix sockets, whose paths must stay under ~107 bytes: not under runs/
    temp_dir = Path(f"/tmp/prism-ray-{port}")
    shutil.rmtree(temp_dir, ignore_errors=True)
    cpus = num_cpus or os.cpu_count() or 1
    state = RayHeadState(f"127.0.0.1:{port}", 0, str(token), cpus)
    env = os.environ | state.client_env()
    env.pop("RAY_ADDRESS")
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", "--port", str(port),
               "--num-cpus", str(cpus), "--node-ip-address", "127.0.0.1", "--include-dashboard", "false",
               "--disable-usage-stats", "--temp-dir", str(temp_dir)]
    if object_store_bytes is not None:
        command += ["--object-store-memory", str(object_store_bytes)]
    log_path = home / "ray-head.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                   preexec_fn=die_with_parent if tied_to_this_process else None)
    deadline = time.monotonic() + timeout_s
    while not _port_open(port) or not (temp_dir / "ray_current_cluster").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process_group(process.pid)
            raise RayHeadError(f"ray start --head did not come up on 127.0.0.1:{port} within {timeout_s:.0f} s "
                               f"({_last_line(log_path)}; log: {log_path})")
        time.sleep(0.5)
    state = RayHeadState(state.address, process.pid, state.token_path, cpus)
    save_state(home / STATE_FILE, state)
    return state


def _last_line(log_path: Path) -> str:
    """The log's last non-empty line (Ray's reason), or a placeholder."""
    lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def stop_head(home: Path) -> bool:
    """Stop the head recorded in `home` and everything it started, by its PID; False if none was recorded."""
    state = load_state(home / STATE_FILE, RayHeadState)
    if state is None:
        return False
    stop_process_group(state.pid, timeout_s=60)  # Ray's graceful shutdown takes 10-15 s
    (home / STATE_FILE).unlink(missing_ok=True)
    return True


def stop(runs_dir: Path) -> bool:
    """Stop `make ray-head`'s head, by its recorded PID; False if none was recorded."""
    return stop_head(state_dir(runs_dir))


def export_line(state: RayHeadState) -> str:
    return "export " + " ".join(f"{key}={shlex.quote(value)}" for key, value in state.client_env().items())


def main(argv: list[str] | None = None) -> int:
    from prism_experiments.locations import default_runs_dir

    parser = argparse.ArgumentParser(prog="ray-head", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "env"])
    parser.add_argument("--port", type=int, default=6379, help="the head's GCS port (127.0.0.1)")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs the head offers (default: all)")
    parser.add_argument("--runs-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    runs_dir = args.runs_dir or default_runs_dir()
    try:
        if args.action == "start":
            state = start(runs_dir, port=args.port, num_cpus=args.num_cpus)
            print(f"Ray head on {state.address} ({state.num_cpus} CPUs, pid {state.pid}). In the shell that sweeps:")
            print(f"  {export_line(state)}")
            print("  make sweep EXPERIMENT=smoke ARGS=\"hydra/launcher=prism_ray\"")
            print("  make ray-head-stop   stops it")
        elif args.action == "stop":
            print("stopped" if stop(runs_dir) else f"no Ray head recorded under {state_dir(runs_dir)}")
        else:
            state = read_state(runs_dir)
            if state is None or not process_alive(state.pid):
                print("no Ray head running (make ray-head)", file=sys.stderr)
                return 1
            print(export_line(state))
    except RayHeadError as error:
        print(f"ray-head: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
