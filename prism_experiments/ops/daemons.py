"""Starting a server the project runs itself (PostgreSQL + an MLflow server, a Ray head, SLURM): on 127.0.0.1, in
a session of its own with its output in a log file, waited for until it answers. It is recorded in a state file
(`ops/state.py`) and stopped by the PIDs recorded there, never by name."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from prism_experiments.ops.processes import die_with_parent


class DaemonError(RuntimeError):
    """A one-line reason a server could not start or stop."""


def port_open(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (closed again before it is returned)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def require_free_port(port: int, option: str = "--port") -> None:
    """DaemonError naming `option` when 127.0.0.1:`port` is taken."""
    if port_open(port):
        raise DaemonError(f"{option}: 127.0.0.1:{port} is in use; choose another (PORT=...)")


def start_in_session(
    command: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None, tied_to_this_process: bool = False
) -> subprocess.Popen[bytes]:
    """`command` in a new session (its PID is its process group: `stop_process_group` ends all it spawns), output
    appended to `log_path`; `tied_to_this_process`: it gets SIGTERM when this process dies, even by SIGKILL."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(command),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env or os.environ),
            start_new_session=True,
            preexec_fn=die_with_parent if tied_to_this_process else None,
        )


def wait_until(
    ready: Callable[[], bool], process: subprocess.Popen[bytes] | None, timeout_s: float, what: str, log_path: Path
) -> None:
    """Poll `ready` until it holds; DaemonError (with the log's last line) when `process` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
            raise DaemonError(f"{what} did not come up within {timeout_s:g} s ({last_line(log_path)}; log: {log_path})")
        time.sleep(0.3)


def last_line(log_path: Path) -> str:
    """The log's last non-empty line (a server's reason), shortened, or a placeholder."""
    try:
        lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return lines[-1][:200] if lines else "no output"
