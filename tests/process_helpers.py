"""Process and server helpers shared by the real-stack tests (fault injection, sweeps)."""

from __future__ import annotations

import fcntl
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Self, Union

from mlflow.tracking import MlflowClient

from prism_experiments.ops.daemons import free_port, port_open
from prism_experiments.ops.processes import process_alive
from prism_experiments.tracking.store import mlflow_server_env, seed_sqlite_store

ROOT = Path(__file__).resolve().parents[1]
#: a started process: a new interpreter (`subprocess.Popen`) or a fork of the tests' fork server (`ForkedProcess`)
Process = Union[subprocess.Popen, "ForkedProcess"]


def gone_or_zombie(pid: int) -> bool:
    """True once the process has exited (a zombie waiting for a reaper counts as exited)."""
    return not process_alive(pid)


def wait_for_port(port: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not port_open(port):
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing opened port {port}")
        time.sleep(0.3)


def start_mlflow_server(backend_db: Path, artifacts: Path, port: int) -> subprocess.Popen:
    """A real `mlflow server` on 127.0.0.1:`port` in its own process group (stopped by `stop_server`); a new
    backend starts from the migrated template, as the project's own stores do."""
    seed_sqlite_store(f"sqlite:///{backend_db}")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            f"sqlite:///{backend_db}",
            "--artifacts-destination",
            str(artifacts),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=mlflow_server_env(),
    )
    wait_for_port(port)
    return server


def stop_server(server: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Signal the server's whole process group (by its PID) and wait for it; SIGKILL after 30 s.

    A loaded machine can take longer than 30 s to run uvicorn's graceful shutdown."""
    if server.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(server.pid, sig)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)


def prism(
    *args: str, runs_dir: Path, cwd: Path | None = None, timeout: int = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`python -m prism_experiments <args>` into `runs_dir`, no progress bars, offline."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR")}
    environment |= {"HF_HUB_OFFLINE": "1"} | (env or {})
    argv = [
        sys.executable,
        "-m",
        "prism_experiments",
        *args,
        f"paths.runs_dir={runs_dir}",
        "simulation.show_progress=false",
    ]
    return forked_run(argv, env=environment, cwd=cwd or ROOT, timeout=timeout)


#: smoke, made long enough (about 5-10 s per job) to kill a job while it runs
LONG_SMOKE = ("-m", "experiment=smoke", "simulation.n_steps=40", "simulation.show_progress=false")
#: the smoke sweep, 4 jobs: on a held cache (`HeldEncoding`) each job stays RUNNING until the test releases it
SMOKE_SWEEP = ("-m", "experiment=smoke", "simulation.show_progress=false")


def nan_comparable(metrics: Mapping[str, float]) -> dict[str, float | str]:
    """The metrics with each NaN as the string "nan", so that `==` compares two runs bit for bit: a metric undefined
    in both (the virality of large cascades in a run that has none) is equal, where NaN != NaN."""
    return {name: "nan" if isinstance(value, float) and math.isnan(value) else value for name, value in metrics.items()}


#: the smoke sweep at one seed: 2 jobs (one per mode) that run side by side. For fault tests that need no queued
#: job: each job of a Ray or submitit sweep is an interpreter importing the project, seconds of CPU per job
TWO_JOB_SWEEP = (*SMOKE_SWEEP, "seed=0")
#: every launcher a sweep can use on one machine, as overrides
LAUNCHERS: dict[str, tuple[str, ...]] = {
    "prism_joblib": (),
    "prism_ray": ("hydra/launcher=prism_ray",),
    "prism_submitit_local": ("hydra/launcher=prism_submitit_local",),
}


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, their children, ...), from /proc."""
    from prism_experiments.ops.processes import child_pids

    found, frontier = [], [pid]
    while frontier:
        children = child_pids(frontier.pop())
        found += children
        frontier += children
    return found


def python_module(module: str, *args: str) -> list[str]:
    """The command line `python -m module args` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def command(*args: str, runs_dir: Path, cache_dir: Path) -> list[str]:
    return python_module("prism_experiments", *args, f"paths.runs_dir={runs_dir}", f"rag.cache_dir={cache_dir}")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR")}
    return env | {"HF_HUB_OFFLINE": "1"}


def captured(argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    """`argv` run to its end from the repository root in `environment()`, its output captured as text; a Python
    entry point (`python -m ...`, `python -c ...`) is forked from the tests' fork server (`forked`)."""
    if argv[0] == sys.executable and argv[1:2] in (["-m"], ["-c"]):
        return forked_run(argv, timeout=timeout)
    return subprocess.run(argv, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=timeout)


def run(*args: str, runs_dir: Path, cache_dir: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return captured(command(*args, runs_dir=runs_dir, cache_dir=cache_dir), timeout)


def start(*args: str, runs_dir: Path, cache_dir: Path) -> ForkedProcess:
    """`prism-run <args>` started in the background (forked from the tests' fork server), its output in pipes."""
    return forked(command(*args, runs_dir=runs_dir, cache_dir=cache_dir))


@contextmanager
def killed_if_left_running(process: Process) -> Iterator[Process]:
    """`process`, killed on the way out when a step inside failed before it ended (no sweep outlives its test)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()


def all_runs(runs_dir: Path, kind: str = "simulation", store: str | None = None, experiment: str = "smoke") -> list:
    """The store's runs of one kind (`store`: a tracking URI, default the runs dir's sqlite store)."""
    client = MlflowClient(store or f"sqlite:///{runs_dir}/mlflow.db")
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    return client.search_runs([found.experiment_id], f"tags.`prism.kind` = '{kind}'", max_results=1000)


def wait_for_running_job(
    runs_dir: Path,
    sweep: Process,
    timeout: float = 120,
    store: str | None = None,
    experiment: str = "smoke",
) -> object:
    """Poll the store until a simulation run is RUNNING with its process id and its parameters (logged right before
    the simulation starts, so the job is past its start-up); fail at once if `sweep` ended first (every job ran
    between two polls: nothing left to act on)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sweep.poll() is not None:
            raise AssertionError(f"the sweep ended (exit {sweep.returncode}) before a job was seen RUNNING")
        # the sweep file is written after the driver initialised the store: opening it earlier would race that
        if list(runs_dir.glob(f"hydra/{experiment}/*/prism_sweep.json")) and (
            store is not None or sqlite_has_running_job(runs_dir / "mlflow.db", experiment)
        ):
            running = [
                r
                for r in all_runs(runs_dir, store=store, experiment=experiment)
                if r.info.status == "RUNNING" and "prism.pid" in r.data.tags and r.data.params
            ]
            if running:
                return running[0]
        time.sleep(0.2)
    raise AssertionError("no job started")


#: a RUNNING simulation run of the experiment with its process id and its parameters, in MLflow's sqlite schema
_RUNNING_JOB = """
SELECT 1 FROM runs r JOIN experiments e ON e.experiment_id = r.experiment_id
WHERE e.name = ? AND r.status = 'RUNNING' AND r.lifecycle_stage = 'active'
  AND EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = 'prism.kind' AND t.value = 'simulation')
  AND EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = 'prism.pid')
  AND EXISTS (SELECT 1 FROM params p WHERE p.run_uuid = r.run_uuid)
LIMIT 1
"""


def sqlite_has_running_job(database: Path, experiment: str) -> bool:
    """Whether the sqlite store shows a running job yet: a read-only query of about a millisecond, where a poll through
    a new MlflowClient costs 15-50 ms of the test's CPU, five times a second while a sweep starts. The run itself
    is then read through MLflow."""
    if not database.is_file():
        return False
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)) as db:
            return db.execute(_RUNNING_JOB, (experiment,)).fetchone() is not None
    except sqlite3.Error:  # busy, or its tables not made yet: look again at the next poll
        return False


def wait_for_run_status(
    runs_dir: Path,
    run_id: str,
    statuses: set[str],
    sweep: Process,
    timeout: float = 300,
    store: str | None = None,
) -> object:
    """Poll the store until run `run_id` has one of `statuses`; fail at once if `sweep` ended first."""
    client = MlflowClient(store or f"sqlite:///{runs_dir}/mlflow.db")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = None if store is not None else _sqlite_status(runs_dir / "mlflow.db", run_id)
        found = client.get_run(run_id) if status is None or status in statuses else None
        if found is not None and found.info.status in statuses:
            return found
        if sweep.poll() is not None:
            raise AssertionError(f"the sweep ended (exit {sweep.returncode}) with run {run_id} {found or status}")
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} never reached {sorted(statuses)}")


def _sqlite_status(database: Path, run_id: str) -> str | None:
    """A run's status read straight from the sqlite store (None if it cannot be read now): see
    `sqlite_has_running_job`."""
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)) as db:
            row = db.execute("SELECT status FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


@contextmanager
def postgres_tracking_server() -> Iterator[tuple[str, Path]]:
    """PostgreSQL + `mlflow server` from `make tracking-server`'s code, in a directory PostgreSQL's user can enter;
    yields (tracking URI, home) and stops both by PID."""
    from prism_experiments.ops import tracking_server

    home = Path(tempfile.mkdtemp(prefix="prism-pg-"))
    home.chmod(0o755)  # as root, PostgreSQL runs as `postgres`, which must reach its data directory
    state = tracking_server.start(home, mlflow_port=free_port())
    try:
        yield state.tracking_uri, home
    finally:
        assert tracking_server.stop(home)
        assert gone_or_zombie(state.mlflow_pid) and gone_or_zombie(state.postgres_pid)
        shutil.rmtree(home, ignore_errors=True)


class CacheLock:
    """The embedding cache folder's lock under `root`, held by the test: a job that must encode a text on that cache
    blocks in `flock` (embeddings/embedder.py), inside its RUNNING run, until `release()`. So a test acts on a
    running job by an event (the lock it holds), not by a step count that "should" outlast the test's next move;
    blocked in `flock`, the job still takes signals (SIGTERM, SLURM's warning signal, SIGKILL) at once."""

    def __init__(self, root: Path) -> None:
        from prism_experiments.embeddings import DEFAULT_MODEL
        from prism_experiments.embeddings.embedder import cache_directory

        self.root = root
        folder = cache_directory(root, DEFAULT_MODEL)
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = open(folder / ".lock", "w")  # noqa: SIM115  (held across the test, closed by release)
        fcntl.flock(self._lock, fcntl.LOCK_EX)

    def release(self) -> None:
        """Let the blocked jobs encode and go on (idempotent)."""
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class HeldEncoding(CacheLock):
    """A held cache (`CacheLock`) with every text of the default pool, so that corpora and new posts need no
    encoding, but not the topic descriptions that agents' interests are embedded through: every run encodes those
    when it builds its world, after its MLflow run exists, and so each job of a sweep waits there, RUNNING.

    `release()` first supplies what the session's warm cache holds beyond the pool (the topic descriptions among it):
    the released jobs then read them instead of each sweep loading the model to encode them again (about 5 CPU-s a
    sweep, in every test that holds one). The hold, the event the test acts on, is the same."""

    def __init__(self, root: Path, pool_cache: Path) -> None:
        from prism_experiments.config import ExperimentConfig
        from prism_experiments.corpus.templates import pooled_texts
        from prism_experiments.embeddings import DEFAULT_MODEL, Embedder, EmbeddingCache, text_digest
        from prism_experiments.embeddings.embedder import cache_directory

        corpus = ExperimentConfig().corpus
        texts = pooled_texts(corpus.topics, corpus.hashtag_fraction, corpus.text_pool_size)
        vectors = Embedder(cache_dir=pool_cache).encode(texts)  # read from the warm pool cache, no model
        EmbeddingCache(cache_directory(root, DEFAULT_MODEL)).add([text_digest(text) for text in texts], vectors)
        self._supply_from = cache_directory(pool_cache, DEFAULT_MODEL)
        super().__init__(root)

    def release(self) -> None:
        if not self._lock.closed:
            from prism_experiments.embeddings import DEFAULT_MODEL, EmbeddingCache
            from prism_experiments.embeddings.embedder import cache_directory

            # written while the lock is held (a shard is written atomically, `add` takes no lock): a job that takes
            # the lock next finds every text it waited to encode
            held, warm = EmbeddingCache(cache_directory(self.root, DEFAULT_MODEL)), EmbeddingCache(self._supply_from)
            missing = [(key, row) for key, row in warm._rows.items() if key not in held._rows]
            if missing:
                held.add([key for key, _ in missing], warm.matrix()[[row for _, row in missing]])
        super().release()


# ------------------------------------------------------------------ processes forked from the tests' fork server
class ForkedProcess:
    """A process forked by the tests' fork server (tests/zygote.py), with the parts of `subprocess.Popen` the tests
    use: pid, returncode, poll, wait, communicate, send_signal, terminate, kill, and the stdout / stderr pipes."""

    def __init__(
        self, args: list[str], *, env: Mapping[str, str], cwd: Path, stdout: object, stderr: object, text: bool,
        start_new_session: bool = False, stdin: object = None,
    ) -> None:  # fmt: skip
        import io
        import socket

        from zygote import send_message

        self.args, self.returncode, self._text = args, None, text
        self.stdin = self.stdout = self.stderr = None
        ends: list[int] = []  # the descriptors the process gets, closed here once sent
        if stdin is subprocess.PIPE:
            read, write = os.pipe()
            self.stdin = open(write, "w" if text else "wb")  # noqa: SIM115  (closed by communicate)
            sent = [read]
        else:
            sent = [os.open(os.devnull, os.O_RDONLY)]
        ends.append(sent[0])
        for name, target in (("stdout", stdout), ("stderr", stderr)):
            if target is subprocess.PIPE:
                read, write = os.pipe()
                stream = open(read, "rb")  # noqa: SIM115  (closed by communicate, or with the object)
                setattr(self, name, io.TextIOWrapper(stream, errors="replace") if text else stream)
                sent.append(write)
                ends.append(write)
            elif target is subprocess.STDOUT:
                sent.append(sent[1])
            elif target is None or target is subprocess.DEVNULL:
                sent.append(os.open(os.devnull, os.O_WRONLY))
                ends.append(sent[-1])
            else:
                sent.append(target.fileno())  # type: ignore[attr-defined]
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._pending = bytearray()  # the server's messages as read, not yet parsed (zygote.receive_message)
        self._socket.connect(str(_fork_server()))
        header = {"argv": args[1:], "env": dict(env), "cwd": str(cwd), "new_session": start_new_session}
        send_message(self._socket, header, tuple(sent))
        for fd in ends:
            os.close(fd)
        self.pid = int(self._receive()["pid"])  # type: ignore[call-overload]
        _log_forked(self.pid, args)

    def _receive(self) -> dict[str, object]:
        from zygote import receive_message

        message, _ = receive_message(self._socket, pending=self._pending)
        if message is None:
            raise RuntimeError("the tests' fork server closed the connection")
        return message

    def poll(self) -> int | None:
        if self.returncode is None:
            import select

            if select.select([self._socket], [], [], 0)[0]:
                self._ended()
        return self.returncode

    def _ended(self) -> None:
        status = int(self._receive()["status"])  # type: ignore[call-overload]
        self.returncode = os.waitstatus_to_exitcode(status)
        self._socket.close()

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            import select

            if not select.select([self._socket], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._ended()
        assert self.returncode is not None
        return self.returncode

    def communicate(
        self, input: str | bytes | None = None, timeout: float | None = None
    ) -> tuple[str | bytes | None, str | bytes | None]:
        """`input` written to stdin (then closed), both pipes read to their end (each in a thread, as `subprocess`
        does), then the exit status."""
        import threading

        deadline = None if timeout is None else time.monotonic() + timeout
        if self.stdin is not None:
            with suppress(BrokenPipeError):
                if input:
                    self.stdin.write(input)  # type: ignore[arg-type]
                self.stdin.close()
        results: dict[str, object] = {}
        readers = [
            threading.Thread(target=lambda n=name, s=stream: results.__setitem__(n, s.read()), daemon=True)
            for name, stream in (("stdout", self.stdout), ("stderr", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return results.get("stdout"), results.get("stderr")  # type: ignore[return-value]

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _log_forked(pid: int, argv: Sequence[str]) -> None:
    """With PRISM_TEST_CPU_LOG=<dir>, note the test a forked process belongs to: it shows the fork server's
    environment in /proc, not its test's (tests/cpu_table.py reads this)."""
    log_dir, test = os.environ.get("PRISM_TEST_CPU_LOG"), os.environ.get("PYTEST_CURRENT_TEST", "")
    if log_dir:
        with open(Path(log_dir) / f"forked-{os.getpid()}.pids", "a") as log:
            command = " ".join(" ".join(argv[:4]).split())  # one line: a `-c` program has newlines and tabs
            log.write(f"{pid}\t{test.split(' ')[0]}\t{command}\n")


#: this test process's fork server: (its process, its socket); started at the first use, stopped at exit
_FORK_SERVER: list[tuple[subprocess.Popen, Path]] = []


def _fork_server() -> Path:
    """The socket of this test process's fork server (tests/zygote.py), started on first use."""
    if _FORK_SERVER and _FORK_SERVER[0][0].poll() is None:
        return _FORK_SERVER[0][1]
    import atexit

    folder = Path(tempfile.mkdtemp(prefix="prism-zygote-"))
    path = folder / "socket"
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("zygote.py")), str(path)],
        cwd=ROOT,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdout.readline().strip() == "ready", "the fork server did not start"
    _FORK_SERVER[:] = [(server, path)]

    def stop() -> None:
        if server.stdin is not None:
            server.stdin.close()  # its end of the session: it exits
        with suppress(subprocess.TimeoutExpired):
            server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    return path


def forked(
    argv: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None, stdout: object = subprocess.PIPE,
    stderr: object = subprocess.PIPE, text: bool = True, start_new_session: bool = False, stdin: object = None,
) -> ForkedProcess:  # fmt: skip
    """`subprocess.Popen(argv, ...)` for `[python, -m module, ...]` or `[python, -c code, ...]`, forked from the tests'
    fork server (tests/zygote.py) instead of a new interpreter importing the project again."""
    if argv[0] != sys.executable or argv[1] not in ("-m", "-c"):
        raise ValueError(f"argv: [sys.executable, -m|-c, ...] expected, got {argv[:2]}")
    return ForkedProcess(
        argv, env=env if env is not None else environment(), cwd=cwd or ROOT, stdout=stdout, stderr=stderr, text=text,
        start_new_session=start_new_session, stdin=stdin,
    )  # fmt: skip


def forked_run(
    argv: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None, timeout: float = 600,
    input: str | None = None,
) -> subprocess.CompletedProcess:  # fmt: skip
    """`subprocess.run(argv, capture_output=True, text=True, timeout=..., input=...)` through the fork server
    (`forked`)."""
    process = forked(argv, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else None)
    try:
        out, err = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(argv, process.wait(), out, err)
