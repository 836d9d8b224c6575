"""`make tracking-server`: PostgreSQL and an MLflow server on it, on 127.0.0.1, under `<runs_dir>/tracking-server`.

PostgreSQL comes from the machine's packages (`ops/postgres.py`). The database password is generated at the
first start and kept in the state directory (mode 0600, never in a committed file). Both servers are
stopped by the PIDs recorded at start (`stop`), never by name. docs/cluster.md has the lab set-up.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.ops.cli import ServerCommands, Status
from prism_experiments.ops.daemons import (
    DaemonError,
    free_port,
    port_open,
    require_free_port,
    start_in_session,
    wait_until,
)
from prism_experiments.ops.postgres import PostgresCluster, postgres_bin, stop_postmaster
from prism_experiments.ops.processes import process_alive, stop_process_group
from prism_experiments.ops.state import StateFile, server_home
from prism_experiments.tracking.store import mlflow_server_env

DB_NAME = "mlflow"
DB_ROLE = "prism"


class TrackingServerError(DaemonError):
    """A one-line reason the tracking server could not start or stop."""


@dataclass(frozen=True)
class ServerState:
    """What `start` launched: enough for `stop` (PIDs) and for users (URI)."""

    tracking_uri: str
    mlflow_pid: int
    postgres_pid: int
    postgres_port: int
    mlflow_port: int


def state_dir(runs_dir: Path) -> Path:
    return server_home(runs_dir, "tracking-server")


def state_file(runs_dir: Path) -> StateFile[ServerState]:
    return StateFile.in_home(state_dir(runs_dir), ServerState)


def read_state(runs_dir: Path) -> ServerState | None:
    return state_file(runs_dir).read()


def running_state(runs_dir: Path) -> ServerState | None:
    """The recorded servers when both still run and MLflow's port answers; None otherwise."""
    state = read_state(runs_dir)
    if state is None or not (process_alive(state.mlflow_pid) and process_alive(state.postgres_pid)):
        return None
    return state if port_open(state.mlflow_port) else None


def start(runs_dir: Path, mlflow_port: int = 5000, postgres_port: int | None = None) -> ServerState:
    """Start PostgreSQL (initialised at the first start) and `mlflow server` on it; both on 127.0.0.1. Servers
    recorded here that still run are returned as they are; a half (PostgreSQL killed, MLflow left answering 503,
    or the reverse) is stopped by its recorded PIDs first, and both start again."""
    running = running_state(runs_dir)
    if running is not None:
        return running
    state_file(runs_dir).stop(_stop_servers)  # what is left of a half
    require_free_port(mlflow_port)
    home = state_dir(runs_dir)
    for directory in (home, home / "logs", home / "mlartifacts", home / "socket"):
        directory.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)  # the database user enters it; the password file inside stays 0600
    password = _database_password(home)
    database = PostgresCluster(postgres_bin(), home / "pgdata", DB_ROLE)
    database.initialise(password, home)
    postgres_port = postgres_port or free_port()
    postgres_pid = database.start(postgres_port, home / "socket", home / "logs" / "postgres.log")
    database.ensure_database(DB_NAME, postgres_port, password)
    backend_uri = f"postgresql+psycopg://{DB_ROLE}:{password}@127.0.0.1:{postgres_port}/{DB_NAME}"
    try:
        mlflow_pid = _start_mlflow(backend_uri, home, mlflow_port)
    except DaemonError:
        database.stop()
        raise
    state = ServerState(f"http://127.0.0.1:{mlflow_port}", mlflow_pid, postgres_pid, postgres_port, mlflow_port)
    state_file(runs_dir).write(state)
    return state


def _database_password(home: Path) -> str:
    """The database password, generated at the first start and kept 0600 in `home`."""
    password_file = home / "db_password"
    if not password_file.exists():
        password_file.write_text(secrets.token_urlsafe(24))
        password_file.chmod(0o600)
    return password_file.read_text().strip()


def _start_mlflow(backend_uri: str, home: Path, port: int) -> int:
    """`mlflow server` on 127.0.0.1:`port` over `backend_uri`, its artifacts in `home`; its PID once it answers
    (stopped again, and TrackingServerError, when it does not)."""
    log_path = home / "logs" / "mlflow.log"
    # the database URI (with its password) goes through the environment, not the command line (ps shows that)
    env = mlflow_server_env() | {"MLFLOW_BACKEND_STORE_URI": backend_uri}
    command = [sys.executable, "-m", "mlflow", "server", "--artifacts-destination", str(home / "mlartifacts")]
    mlflow = start_in_session([*command, "--host", "127.0.0.1", "--port", str(port), "--workers", "2"], log_path, env)
    try:
        wait_until(lambda: port_open(port), mlflow, 180, f"mlflow server on 127.0.0.1:{port}", log_path)
        time.sleep(0.5)
        if mlflow.poll() is not None:  # the port was taken between the check and the bind
            raise TrackingServerError(f"mlflow server exited at start (log: {log_path})")
    except DaemonError:
        stop_process_group(mlflow.pid)
        raise
    return mlflow.pid


def stop(runs_dir: Path) -> bool:
    """Stop both servers by their recorded PIDs; False if nothing was recorded."""
    return state_file(runs_dir).stop(_stop_servers)


def _stop_servers(state: ServerState) -> None:
    stop_process_group(state.mlflow_pid)
    stop_postmaster(state.postgres_pid)


def _start_lines(args: argparse.Namespace, runs_dir: Path) -> list[str]:
    running = running_state(runs_dir)
    if running is None and read_state(runs_dir) is not None:  # said before the minute a start takes
        print(f"tracking server under {state_dir(runs_dir)} is half stopped: stopping the rest and starting both")
    state = running or start(runs_dir, mlflow_port=args.port)
    return [
        f"MLflow server on PostgreSQL{' (already running)' if running else ''}: {state.tracking_uri} "
        f"(PostgreSQL on 127.0.0.1:{state.postgres_port})",
        f'  make sweep EXPERIMENT=smoke ARGS="tracking=server tracking.uri={state.tracking_uri}"',
        "  make tracking-server-stop   stops both",
    ]


def status(runs_dir: Path) -> Status:
    """Running, half stopped (one of the two died) or not running."""
    running = running_state(runs_dir)
    if running is not None:
        return Status(True, [f"running: {running.tracking_uri}"])
    if read_state(runs_dir) is not None:
        return Status(False, ["half stopped: `make tracking-server` stops the rest and starts both again"])
    return Status(False, ["not running"])


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=5000, help="the MLflow server's port (127.0.0.1)")


COMMANDS = ServerCommands("tracking-server", __doc__ or "", "tracking server", _start_lines, stop, status, _options)


main = COMMANDS.main


if __name__ == "__main__":
    sys.exit(main())
