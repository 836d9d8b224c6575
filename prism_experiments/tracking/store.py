"""The MLflow store: which URI, and a database and experiment initialised exactly once."""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from prism_experiments.locations import sqlite_path, sqlite_uri, tracking_uri_for
from prism_experiments.tracking.errors import shorten_retry_warnings

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

    from prism_experiments.config import ExperimentConfig


def resolve_tracking_uri(cfg: ExperimentConfig) -> str:
    """The run's tracking URI by the project's rule (`locations.tracking_uri_for`): `tracking.uri`, else
    `$MLFLOW_TRACKING_URI`, else the sqlite store under `paths.runs_dir`."""
    return tracking_uri_for(cfg.tracking.uri, cfg.paths.runs_dir)


#: MLflow's environment variables for its HTTP client (mlflow/environment_variables.py).
HTTP_ENV = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "http_max_retries",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "http_backoff_factor",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "http_timeout_s",
}


class _WithoutTraceback(logging.Filter):
    """Drops the error (with its SQL and traceback) MLflow's sqlite store logs just before it re-raises it
    to us: we report it in one line, and a full disk would otherwise flood the log with SQLAlchemy's stack."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None


def quiet_store_tracebacks() -> None:
    """Install `_WithoutTraceback` on MLflow's sqlite-store logger, and stop a log handler that cannot
    write (Hydra's job log on a full disk) from printing a traceback per record (the logging docs'
    production setting, `logging.raiseExceptions`); urllib3's retry warnings shortened. Once per process."""
    logging.raiseExceptions = False
    store_logger = logging.getLogger("mlflow.store.db.utils")
    if not any(isinstance(f, _WithoutTraceback) for f in store_logger.filters):
        store_logger.addFilter(_WithoutTraceback())
    shorten_retry_warnings()


def apply_http_budget(cfg: ExperimentConfig) -> None:
    """Bound how long a request to a dead tracking server retries (a variable the user set wins).

    Set in the driver before workers start, so every job process inherits it.
    """
    for variable, field in HTTP_ENV.items():
        os.environ.setdefault(variable, str(getattr(cfg.tracking, field)))


def mlflow_server_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an `mlflow server` / `mlflow ui` we start: `base` (default: ours) with MLflow's
    server-side job runner off unless the user set it.

    That runner (GenAI evaluation jobs, trace roll-ups; none of which this project uses) is a second process
    importing MLflow beside each server: 2.5 s of CPU per start, and a UI that answered in 11-20 s instead of
    6-7 s with a sweep on both cores (docs/review.md)."""
    return {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"} | dict(os.environ if base is None else base)


@contextmanager
def store_lock(uri: str, lock_dir: Path) -> Iterator[None]:
    """An exclusive lock around first-time initialisation (a fresh sqlite store corrupts under
    concurrent initialisation; docs/model.md, "Faults and recovery")."""
    path = sqlite_path(uri)
    folder = path.parent if path else lock_dir
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".mlflow-init.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def claim_lock(uri: str) -> Iterator[None]:
    """An exclusive lock, beside a sqlite store, around a job's claim of its config (create its run, look for a live
    holder or a FINISHED run). Without it a run whose creation waited on the store's write lock becomes visible
    after another job of the same config has looked and found no holder, and both run it (`make chaos`, two
    sweeps on one store). A server store has no shared folder to lock: the race stays possible there (faults.md)."""
    path = sqlite_path(uri)
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".prism-claims.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _written_atomically(target: Path) -> Iterator[Path]:
    """A temporary path beside `target`, moved onto it when the block ends without error and removed otherwise:
    a reader sees a whole file or none (a full disk, a crash, a concurrent writer of the same content)."""
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        yield partial
        os.replace(partial, target)
    finally:
        with suppress(OSError):  # its folder may be missing or not a folder: nothing was written
            partial.unlink(missing_ok=True)


def store_template(directory: Path | None = None) -> Path | None:
    """An empty sqlite store, every MLflow migration applied, built once per environment and MLflow version
    (in `directory`, default `<sys.prefix>/var/prism-experiments`); None where that folder is not writable.

    Without the default experiment, which MLflow creates at the first open with the store's own artifact root."""
    import mlflow
    from mlflow.store.db.utils import _initialize_tables
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    folder = directory or Path(sys.prefix) / "var" / "prism-experiments"
    template = folder / f"mlflow-{mlflow.__version__}-empty-store.db"
    if template.is_file():
        return template
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _written_atomically(template) as partial:
            engine = create_engine(sqlite_uri(partial))
            try:
                # MLflow's own first-open step (SqlAlchemyStore.__init__), minus the default experiment
                _initialize_tables(engine)
                with engine.begin() as connection:
                    connection.execute(text("DELETE FROM experiments"))
            finally:
                engine.dispose()
    except (OSError, OperationalError):  # a read-only environment: each new store migrates, as MLflow does
        return None
    return template


def seed_sqlite_store(uri: str) -> None:
    """Start a new sqlite store as a copy of `store_template()` rather than by migrating an empty file: MLflow's
    migrations (69 in MLflow 3.17) cost 0.85 s of CPU at each new store (docs/bench.md). Call it under `store_lock`."""
    path = sqlite_path(uri)
    if path is None or path.exists():
        return
    template = store_template()
    if template is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    # a copy that fails (a full disk) leaves no file, and MLflow then migrates or reports the disk itself
    with suppress(OSError), _written_atomically(path) as partial:
        shutil.copyfile(template, partial)


def client_for(uri: str) -> MlflowClient:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def ensure_experiment(uri: str, name: str, artifact_root: Path) -> str:
    """The experiment's id, creating the store and the experiment (artifacts under `artifact_root`) once."""
    with store_lock(uri, artifact_root.parent):
        seed_sqlite_store(uri)
        client = client_for(uri)
        experiment = client.get_experiment_by_name(name)
        if experiment is not None:
            if experiment.lifecycle_stage == "deleted":
                client.restore_experiment(experiment.experiment_id)
            return experiment.experiment_id
        location = None
        if sqlite_path(uri) is not None:
            artifact_root.mkdir(parents=True, exist_ok=True)
            location = (artifact_root / name).as_uri()
        return client.create_experiment(name, artifact_location=location)
