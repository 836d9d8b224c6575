"""Servers the project starts and stops itself (PostgreSQL + an MLflow server, a Ray head): on 127.0.0.1, each in a
session of its own with its output in a log file, recorded in a state file, and stopped by the PIDs recorded there,
never by name."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from prism_experiments.processes import die_with_parent

T = TypeVar("T")


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


@dataclass(frozen=True)
class StateFile(Generic[T]):
    """What a started server needs to be found and stopped later (its PIDs, ports), as JSON at `path`."""

    path: Path
    kind: type[T]

    def read(self) -> T | None:
        """The recorded state, or None when nothing was started (or it was stopped)."""
        return self.kind(**json.loads(self.path.read_text())) if self.path.is_file() else None

    def write(self, state: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(asdict(state)))

    def stop(self, stop_servers: Callable[[T], None]) -> bool:
        """Stop what the file records with `stop_servers` and forget it; False when nothing was recorded."""
        state = self.read()
        if state is None:
            return False
        stop_servers(state)
        self.path.unlink(missing_ok=True)
        return True


def run_daemon_cli(
    prog: str,
    doc: str,
    actions: Sequence[str],
    argv: list[str] | None,
    add_options: Callable[[argparse.ArgumentParser], None],
    act: Callable[[str, argparse.Namespace, Path], int],
) -> int:
    """The start/stop/status command line every server shares: `act(action, options, runs_dir)`; a DaemonError is
    one line on stderr and exit 2."""
    from prism_experiments.locations import default_runs_dir

    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("action", choices=list(actions))
    add_options(parser)
    parser.add_argument("--runs-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        return act(args.action, args, args.runs_dir or default_runs_dir())
    except DaemonError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
