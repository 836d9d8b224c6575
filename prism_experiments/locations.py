"""Where the project's things are: the `conf/` directory, the runs directory, the tracking store.

Each rule is written here once and every entry point reads it from here:
- runs directory: a `paths.runs_dir=` override, else `$PRISM_RUNS_DIR`, else `./runs`;
- cache directory (embeddings, LLM answers): `rag.cache_dir=`, else `$PRISM_CACHE_DIR` (a node's own cache on a
  cluster, read where the run runs), else `<runs dir>/cache`;
- tracking URI: an explicit URI (`tracking.uri=`, `--tracking-uri`), else `$MLFLOW_TRACKING_URI`, else the
  absolute sqlite store `<runs dir>/mlflow.db`;
- Hydra's output folder of a run or a sweep: `<runs dir>/hydra/<experiment>/<start time>_<folder token>`
  (`conf/config.yaml`), one per process that starts one, whatever the second it starts in.
"""

from __future__ import annotations

import os
import secrets
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


def absolute_runs_dir(value: Path | str) -> Path:
    """A runs directory as the config holds it (`paths.runs_dir`): absolute, `~` expanded, links resolved."""
    return Path(value).expanduser().resolve()


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


#: the OmegaConf resolver that names Hydra's run and sweep folders (`conf/config.yaml`, registered in composition.py)
FOLDER_TOKEN_RESOLVER = "prism.folder_token"


def folder_token() -> str:
    """8 random hex digits, drawn once per composed config (the resolver caches it, and Hydra copies that cache into
    every job's config): two sweeps of one experiment started in the same second, or on two machines sharing a
    runs dir, get two folders, and never share a sweep file or a job's outcome file."""
    return secrets.token_hex(4)


def sweep_interrupted_marker(sweep_dir: Path | str) -> Path:
    """The file a sweep's driver writes when it is interrupted: a job of the sweep that starts later does not run."""
    return Path(sweep_dir) / "prism_interrupted"


def job_process_file(sweep_dir: Path | str, job_num: int) -> Path:
    """Where a job records the host and process it runs in, for a driver that must signal it (`<job folder>/...`)."""
    return Path(sweep_dir) / str(job_num) / "prism_job_process"
