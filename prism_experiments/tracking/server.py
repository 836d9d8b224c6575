"""`make tracking-server`: PostgreSQL and an MLflow server on it, on 127.0.0.1, under `<runs_dir>/tracking-server`.

PostgreSQL comes from the machine's packages (Debian's `postgresql`: `initdb`, `pg_ctl`, `createdb`);
`$PRISM_PG_BIN` points at another bin directory. The database password is generated at the first
start and kept in the state directory (mode 0600, never in a committed file). Both servers are
stopped by the PIDs recorded at start (`stop`), never by name. docs/cluster.md has the lab set-up.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.daemons import (
    DaemonError,
    StateFile,
    free_port,
    port_open,
    require_free_port,
    run_daemon_cli,
    start_in_session,
    wait_until,
)
from prism_experiments.processes import process_alive as pid_alive
from prism_experiments.processes import stop_process_group
from prism_experiments.tracking.store import mlflow_server_env

STATE_FILE = "state.json"
DB_NAME = "mlflow"
DB_ROLE = "prism"
#: the user PostgreSQL runs as when we are root (postgres refuses to run as root)
DB_OS_USER = os.environ.get("PRISM_PG_USER", "postgres")


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


def postgres_bin() -> Path:
    """The directory holding initdb/pg_ctl: $PRISM_PG_BIN, the PATH, or Debian's /usr/lib/postgresql/<v>/bin."""
    candidates = [os.environ.get("PRISM_PG_BIN", "")]
    on_path = shutil.which("pg_ctl")
    candidates.append(str(Path(os.path.realpath(on_path)).parent) if on_path else "")
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in filter(None, candidates):
        if (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    raise TrackingServerError(
        "PostgreSQL not found (initdb, pg_ctl): install Debian's postgresql package "
        "or set PRISM_PG_BIN to its bin directory"
    )


def _as_db_user(command: list[str]) -> list[str]:
    """PostgreSQL's server binaries refuse root: run them as DB_OS_USER when we are root."""
    return ["runuser", "-u", DB_OS_USER, "--", *command] if os.geteuid() == 0 else command


def _hand_to_db_user(path: Path) -> None:
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam(DB_OS_USER)
    for item in [path, *path.rglob("*")]:
        os.chown(item, user.pw_uid, user.pw_gid)
    probe = subprocess.run(_as_db_user(["test", "-w", str(path)]), check=False)
    if probe.returncode != 0:
        raise TrackingServerError(
            f"paths.runs_dir: PostgreSQL runs as user {DB_OS_USER}, which cannot reach "
            f"{path}; use a runs dir whose parents it can enter (chmod o+x)"
        )


def _run(command: list[str], what: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise TrackingServerError(f"{what} failed: {detail[-1] if detail else f'exit {result.returncode}'}")


def state_dir(runs_dir: Path) -> Path:
    return runs_dir.resolve() / "tracking-server"


def state_file(runs_dir: Path) -> StateFile[ServerState]:
    return StateFile(state_dir(runs_dir) / STATE_FILE, ServerState)


def read_state(runs_dir: Path) -> ServerState | None:
    return state_file(runs_dir).read()


def running_state(runs_dir: Path) -> ServerState | None:
    """The recorded servers when both still run and MLflow's port answers; None otherwise."""
    state = read_state(runs_dir)
    if state is None or not (pid_alive(state.mlflow_pid) and pid_alive(state.postgres_pid)):
        return None
    return state if port_open(state.mlflow_port) else None


def start(runs_dir: Path, mlflow_port: int = 5000, postgres_port: int | None = None) -> ServerState:
    """Start PostgreSQL (initialised at the first start) and `mlflow server` on it; both on 127.0.0.1. Servers
    recorded here that still run are returned as they are; a half (PostgreSQL killed, MLflow left answering 503,
    or the reverse) is stopped by its recorded PIDs first, and both start again."""
    running = running_state(runs_dir)
    if running is not None:
        return running
    left = read_state(runs_dir)
    if left is not None:
        _stop_servers(left)
        state_file(runs_dir).path.unlink(missing_ok=True)
    require_free_port(mlflow_port)
    home = state_dir(runs_dir)
    pgdata, logs, artifacts = home / "pgdata", home / "logs", home / "mlartifacts"
    for directory in (home, logs, artifacts):
        directory.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)  # the database user enters it; the password file inside stays 0600
    password_file = home / "db_password"
    if not password_file.exists():
        password_file.write_text(secrets.token_urlsafe(24))
        password_file.chmod(0o600)
    password = password_file.read_text().strip()
    binaries = postgres_bin()
    postgres_port = postgres_port or free_port()
    socket_dir = home / "socket"
    socket_dir.mkdir(exist_ok=True)
    if not (pgdata / "PG_VERSION").exists():
        pgdata.mkdir(exist_ok=True)
        pgdata.chmod(0o700)
        initdb_password = home / "initdb_password"
        initdb_password.write_text(password)
        _hand_to_db_user(home)  # once, at initialisation: the data, socket and log directories
        try:
            _run(
                _as_db_user(
                    [
                        str(binaries / "initdb"),
                        "-D",
                        str(pgdata),
                        "-U",
                        DB_ROLE,
                        "--auth=scram-sha-256",
                        f"--pwfile={initdb_password}",
                        "--encoding=UTF8",
                        "--no-instructions",
                    ]
                ),
                "initdb",
            )
        finally:
            initdb_password.unlink(missing_ok=True)
    postgres_log = logs / "postgres.log"
    _run(
        _as_db_user(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(pgdata),
                "-l",
                str(postgres_log),
                "-w",
                "-t",
                "60",
                "-o",
                f"-h 127.0.0.1 -p {postgres_port} -k {socket_dir}",
                "start",
            ]
        ),
        "pg_ctl start",
    )
    postgres_pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    env = os.environ | {"PGPASSWORD": password}
    exists = subprocess.run(
        [
            str(binaries / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(postgres_port),
            "-U",
            DB_ROLE,
            "-d",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if exists.stdout.strip() != "1":
        _run(
            [str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(postgres_port), "-U", DB_ROLE, DB_NAME],
            "createdb",
            env=env,
        )
    mlflow_log = logs / "mlflow.log"
    # the database URI (with its password) goes through the environment, not the command line (ps shows that)
    server_env = mlflow_server_env() | {
        "MLFLOW_BACKEND_STORE_URI": f"postgresql+psycopg://{DB_ROLE}:{password}@127.0.0.1:{postgres_port}/{DB_NAME}"
    }
    mlflow = start_in_session(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--artifacts-destination",
            str(artifacts),
            "--host",
            "127.0.0.1",
            "--port",
            str(mlflow_port),
            "--workers",
            "2",
        ],
        mlflow_log,
        server_env,
    )
    try:
        wait_until(lambda: port_open(mlflow_port), mlflow, 180, f"mlflow server on 127.0.0.1:{mlflow_port}", mlflow_log)
        time.sleep(0.5)
        if mlflow.poll() is not None:  # the port was taken between the check and the bind
            raise TrackingServerError(f"mlflow server exited at start (log: {mlflow_log})")
    except DaemonError:
        stop_process_group(mlflow.pid)
        _run(_as_db_user([str(binaries / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"]), "pg_ctl stop")
        raise
    state = ServerState(f"http://127.0.0.1:{mlflow_port}", mlflow.pid, postgres_pid, postgres_port, mlflow_port)
    state_file(runs_dir).write(state)
    return state


def stop(runs_dir: Path) -> bool:
    """Stop both servers by their recorded PIDs; False if nothing was recorded."""
    return state_file(runs_dir).stop(_stop_servers)


def _stop_servers(state: ServerState) -> None:
    stop_process_group(state.mlflow_pid)
    if pid_alive(state.postgres_pid):
        os.kill(state.postgres_pid, signal.SIGINT)  # PostgreSQL's "fast" shutdown
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and pid_alive(state.postgres_pid):
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--port", type=int, default=5000, help="the MLflow server's port (127.0.0.1)")

    return run_daemon_cli("tracking-server", __doc__ or "", ["start", "stop", "status"], argv, options, _act)


def _act(action: str, args: argparse.Namespace, runs_dir: Path) -> int:
    if action == "start":
        running = running_state(runs_dir)
        recorded = read_state(runs_dir)
        if running is None and recorded is not None:
            print(f"tracking server under {state_dir(runs_dir)} is half stopped: stopping the rest and starting both")
        state = running or start(runs_dir, mlflow_port=args.port)
        print(
            f"MLflow server on PostgreSQL{' (already running)' if running else ''}: {state.tracking_uri} "
            f"(PostgreSQL on 127.0.0.1:{state.postgres_port})"
        )
        print(f'  make sweep EXPERIMENT=smoke ARGS="tracking=server tracking.uri={state.tracking_uri}"')
        print("  make tracking-server-stop   stops both")
    elif action == "stop":
        print("stopped" if stop(runs_dir) else f"no tracking server recorded under {state_dir(runs_dir)}")
    else:
        running = running_state(runs_dir)
        recorded = read_state(runs_dir)
        if running is not None:
            print(f"running: {running.tracking_uri}")
        elif recorded is not None:
            print("half stopped: `make tracking-server` stops the rest and starts both again")
        else:
            print("not running")
        return 0 if running else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
