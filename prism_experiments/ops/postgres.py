"""A PostgreSQL cluster of the machine's packages (Debian's `postgresql`; `$PRISM_PG_BIN` points at another bin
directory) in a directory of ours, on 127.0.0.1: initialise it, start it, make a database, stop it by its PID.
Under root its programs run as `$PRISM_PG_USER` (default `postgres`): PostgreSQL refuses to run as root."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.ops.daemons import DaemonError
from prism_experiments.ops.processes import process_alive

#: the user PostgreSQL runs as when we are root (postgres refuses to run as root)
DB_OS_USER = os.environ.get("PRISM_PG_USER", "postgres")


class PostgresError(DaemonError):
    """A one-line reason PostgreSQL could not be set up, started or stopped."""


def postgres_bin() -> Path:
    """The directory holding initdb/pg_ctl: $PRISM_PG_BIN, the PATH, or Debian's /usr/lib/postgresql/<v>/bin."""
    candidates = [os.environ.get("PRISM_PG_BIN", "")]
    on_path = shutil.which("pg_ctl")
    candidates.append(str(Path(os.path.realpath(on_path)).parent) if on_path else "")
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in filter(None, candidates):
        if (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    raise PostgresError(
        "PostgreSQL not found (initdb, pg_ctl): install Debian's postgresql package "
        "or set PRISM_PG_BIN to its bin directory"
    )


def as_db_user(command: list[str]) -> list[str]:
    """PostgreSQL's server binaries refuse root: run them as DB_OS_USER when we are root."""
    return ["runuser", "-u", DB_OS_USER, "--", *command] if os.geteuid() == 0 else command


def hand_to_db_user(path: Path) -> None:
    """Under root, give `path` and all in it to DB_OS_USER; PostgresError when that user cannot reach it."""
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam(DB_OS_USER)
    for item in [path, *path.rglob("*")]:
        os.chown(item, user.pw_uid, user.pw_gid)
    probe = subprocess.run(as_db_user(["test", "-w", str(path)]), check=False)
    if probe.returncode != 0:
        raise PostgresError(
            f"paths.runs_dir: PostgreSQL runs as user {DB_OS_USER}, which cannot reach "
            f"{path}; use a runs dir whose parents it can enter (chmod o+x)"
        )


def run_checked(command: list[str], what: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command`; PostgresError naming `what` with its output's last line when it fails."""
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise PostgresError(f"{what} failed: {detail[-1] if detail else f'exit {result.returncode}'}")
    return result


@dataclass(frozen=True)
class PostgresCluster:
    """The data directory `pgdata` of a cluster whose superuser is `role` (password auth), run by `binaries`."""

    binaries: Path
    pgdata: Path
    role: str

    def initialise(self, password: str, home: Path) -> None:
        """`initdb` once (a cluster whose PG_VERSION exists is left as it is); `home` is handed to DB_OS_USER."""
        if (self.pgdata / "PG_VERSION").exists():
            return
        self.pgdata.mkdir(exist_ok=True)
        self.pgdata.chmod(0o700)
        password_file = home / "initdb_password"
        password_file.write_text(password)
        hand_to_db_user(home)  # once, at initialisation: the data, socket and log directories
        try:
            command = [
                str(self.binaries / "initdb"),
                *("-D", str(self.pgdata), "-U", self.role, "--auth=scram-sha-256", f"--pwfile={password_file}"),
                *("--encoding=UTF8", "--no-instructions"),
            ]
            run_checked(as_db_user(command), "initdb")
        finally:
            password_file.unlink(missing_ok=True)

    def start(self, port: int, socket_dir: Path, log_path: Path) -> int:
        """`pg_ctl start` on 127.0.0.1:`port` (waits until it accepts connections); the postmaster's PID."""
        options = f"-h 127.0.0.1 -p {port} -k {socket_dir}"
        command = [str(self.binaries / "pg_ctl"), "-D", str(self.pgdata), "-l", str(log_path), "-w", "-t", "60"]
        run_checked(as_db_user([*command, "-o", options, "start"]), "pg_ctl start")
        return int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])

    def ensure_database(self, name: str, port: int, password: str) -> None:
        """Create database `name` unless it exists."""
        env = os.environ | {"PGPASSWORD": password}
        connect = ["-h", "127.0.0.1", "-p", str(port), "-U", self.role]
        query = f"SELECT 1 FROM pg_database WHERE datname = '{name}'"
        exists = subprocess.run(
            [str(self.binaries / "psql"), *connect, "-d", "postgres", "-tAc", query],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if exists.stdout.strip() != "1":
            run_checked([str(self.binaries / "createdb"), *connect, name], "createdb", env=env)

    def stop(self) -> None:
        """`pg_ctl stop -m fast`, waiting for it."""
        command = [str(self.binaries / "pg_ctl"), "-D", str(self.pgdata), "-m", "fast", "-w", "stop"]
        run_checked(as_db_user(command), "pg_ctl stop")


def stop_postmaster(pid: int, timeout_s: float = 60) -> None:
    """PostgreSQL's "fast" shutdown (SIGINT to the postmaster) by its recorded PID, waiting up to `timeout_s`."""
    if not process_alive(pid):
        return
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process_alive(pid):
        time.sleep(0.2)
