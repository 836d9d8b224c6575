"""Process and server helpers shared by the real-stack tests (fault injection, sweeps)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gone_or_zombie(pid: int) -> bool:
    """True once the process has exited (a zombie waiting for a reaper counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (closed again before it is returned)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise TimeoutError(f"mlflow server did not open port {port}")


def start_mlflow_server(backend_db: Path, artifacts: Path, port: int) -> subprocess.Popen:
    """A real `mlflow server` on 127.0.0.1:`port` in its own process group (stopped by `stop_server`)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{backend_db}",
         "--artifacts-destination", str(artifacts), "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(port)
    return server


def stop_server(server: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Signal the server's whole process group (by its PID) and wait for it."""
    if server.poll() is None:
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            pass
    server.wait(timeout=30)


def prism(*args: str, runs_dir: Path, cwd: Path | None = None, timeout: int = 600,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m prism_experiments <args>` into `runs_dir`, no progress bars, offline."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR")}
    environment |= {"HF_HUB_OFFLINE": "1"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "prism_experiments", *args, f"paths.runs_dir={runs_dir}",
         "simulation.show_progress=false"],
        cwd=cwd or ROOT, env=environment, capture_output=True, text=True, timeout=timeout,
    )
