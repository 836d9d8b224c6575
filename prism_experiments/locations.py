"""Where the project's things are: the `conf/` directory, the runs directory, the tracking store.

Each rule is written here once and every entry point reads it from here:
- runs directory: a `paths.runs_dir=` override, else `$PRISM_RUNS_DIR`, else `./runs`;
- cache directory (embeddings, LLM answers): `rag.cache_dir=`, else `$PRISM_CACHE_DIR` (a node's own cache on a
  cluster, read where the run runs), else `<runs dir>/cache`;
- tracking URI: an explicit URI (`tracking.uri=`, `--tracking-uri`), else `$MLFLOW_TRACKING_URI`, else the
  absolute sqlite store `<runs dir>/mlflow.db`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

#: the Hydra config directory of this checkout
CONFIG_DIR = Path(__file__).resolve().parents[1] / "conf"
#: the documentation of this checkout (pages generated from the code: docs/metrics.md's metric table)
DOCS_DIR = CONFIG_DIR.parent / "docs"
RUNS_DIR_ENV = "PRISM_RUNS_DIR"
CACHE_DIR_ENV = "PRISM_CACHE_DIR"
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"
RUNS_DIR_OVERRIDE = "paths.runs_dir"


def default_runs_dir() -> Path:
    """`$PRISM_RUNS_DIR`, else `./runs` (the project's git-ignored runs folder)."""
    return Path(os.environ.get(RUNS_DIR_ENV) or Path.cwd() / "runs").expanduser().resolve()


def runs_dir_from(overrides: Sequence[str]) -> Path:
    """The runs directory a command line selects: its `paths.runs_dir=` override, else `default_runs_dir()`."""
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+") == RUNS_DIR_OVERRIDE:
            return Path(value).expanduser().resolve()
    return default_runs_dir()


def sqlite_tracking_uri(runs_dir: Path | str) -> str:
    """Absolute sqlite URI of the project's MLflow store inside `runs_dir`."""
    return f"sqlite:///{Path(runs_dir).resolve() / 'mlflow.db'}"


def tracking_uri_for(explicit: str | None = None, runs_dir: Path | str | None = None) -> str:
    """`explicit`, else `$MLFLOW_TRACKING_URI`, else the sqlite store under `runs_dir` (or `default_runs_dir()`)."""
    return explicit or os.environ.get(TRACKING_URI_ENV) or sqlite_tracking_uri(runs_dir or default_runs_dir())


def artifact_root(runs_dir: Path | str) -> Path:
    return Path(runs_dir).resolve() / "mlartifacts"


def cache_dir(runs_dir: Path | str | None = None) -> Path:
    """`$PRISM_CACHE_DIR`, else `<runs_dir>/cache` (`rag.cache_dir=` overrides both, in the run's config)."""
    own = os.environ.get(CACHE_DIR_ENV)
    if own:
        return Path(own).expanduser().resolve()
    return Path(runs_dir or default_runs_dir()).resolve() / "cache"
