"""Where a run writes: everything lives under one runs directory."""

from __future__ import annotations

import os
from pathlib import Path

RUNS_DIR_ENV = "PRISM_RUNS_DIR"


def default_runs_dir() -> Path:
    """`$PRISM_RUNS_DIR`, else `./runs` (the project's git-ignored runs folder)."""
    return Path(os.environ.get(RUNS_DIR_ENV) or Path.cwd() / "runs").resolve()


def sqlite_tracking_uri(runs_dir: Path | str) -> str:
    """Absolute sqlite URI of the project's MLflow store inside `runs_dir`."""
    return f"sqlite:///{Path(runs_dir).resolve() / 'mlflow.db'}"


def default_tracking_uri(runs_dir: Path | str | None = None) -> str:
    """`$MLFLOW_TRACKING_URI` when set, else the sqlite store under the runs directory."""
    return os.environ.get("MLFLOW_TRACKING_URI") or sqlite_tracking_uri(runs_dir or default_runs_dir())


def artifact_root(runs_dir: Path | str) -> Path:
    return Path(runs_dir).resolve() / "mlartifacts"


def cache_dir(runs_dir: Path | str | None = None) -> Path:
    return Path(runs_dir or default_runs_dir()).resolve() / "cache"
