"""Processes this project starts and stops (servers, a Ray head): by PID, never by name."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def current_rss_bytes() -> int:
    """Resident set size now (VmRSS), else the peak from getrusage where /proc is missing."""
    kib = _status_kib("VmRSS")
    return kib * 1024 if kib is not None else peak_rss_bytes()


def peak_rss_bytes() -> int:
    """This process's peak resident set size (VmHWM; ru_maxrss is KiB on Linux, bytes on macOS)."""
    kib = _status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (signal 0 checks without sending); a zombie, killed
    but not yet reaped by its parent (a Ray worker until the raylet waits for it), is not alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _proc_state(pid) not in ("Z", "X")


def _proc_state(pid: int) -> str | None:
    """The state letter of /proc/<pid>/stat (proc(5)); None where /proc is not there."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "X" if Path("/proc/self/stat").exists() else None  # exited since the signal 0
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]  # the command name in parentheses may hold spaces


def stop_process_group(pid: int, timeout_s: float = 30) -> None:
    """SIGTERM the group of a process started in a new session (its PID is the group id), SIGKILL after `timeout_s`."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process_alive(pid):
        try:
            os.waitpid(pid, os.WNOHANG)  # our own child would stay a zombie otherwise
        except ChildProcessError:
            pass
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)  # also whatever the group's leader left behind
    except ProcessLookupError:
        pass


def save_state(path: Path, state: Any) -> None:
    """What a started server needs to be found and stopped later (its PIDs, ports), as JSON."""
    path.write_text(json.dumps(asdict(state)))


def load_state(path: Path, kind: type[T]) -> T | None:
    """The state `save_state` wrote, or None when nothing was started (or it was stopped)."""
    return kind(**json.loads(path.read_text())) if path.is_file() else None
