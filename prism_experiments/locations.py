"""Where the project's things are: the checkout, the `conf/` directory, and the run folder's layout.

This module is the layout's one home; every entry point, launcher and bench asks it instead of building a path:
- runs directory: a `paths.runs_dir=` override, else `$PRISM_RUNS_DIR`, else `./runs`;
- under it (`RunLayout`): the MLflow store `mlflow.db` (its absolute sqlite URI, built and parsed here), its
  artifacts `mlartifacts/`, Hydra's outputs `hydra/`, `reports/`, `bench/`, the local Ray instances `ray/`;
- cache directory (embeddings, LLM answers): `rag.cache_dir=`, else `$PRISM_CACHE_DIR` (a node's own cache on a
  cluster, read where the run runs), else `<runs dir>/cache`;
- tracking URI: an explicit URI (`tracking.uri=`, `--tracking-uri`), else `$MLFLOW_TRACKING_URI`, else the
  absolute sqlite store `<runs dir>/mlflow.db`;
- Hydra's output folder of a run or a sweep: `<runs dir>/hydra/<experiment>/<start time>_<folder token>`
  (`conf/config.yaml` asks the `prism.output_dir` resolver), one per process that starts one, whatever the second
  it starts in; a sweep's job `<job num>` below it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the checkout: this package's parent (git commands, the bench's clones and worktrees)
PROJECT_ROOT = Path(__file__).resolve().parents[1]
#: the Hydra config directory of this checkout
CONFIG_DIR = PROJECT_ROOT / "conf"
#: the documentation of this checkout (pages generated from the code: docs/metrics.md's metric table)
DOCS_DIR = PROJECT_ROOT / "docs"
RUNS_DIR_ENV = "PRISM_RUNS_DIR"
CACHE_DIR_ENV = "PRISM_CACHE_DIR"
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"
RUNS_DIR_OVERRIDE = "paths.runs_dir"
#: a run's Hydra output folder, when a command line moves it out of the layout
RUN_DIR_OVERRIDE = "hydra.run.dir"
#: MLflow's sqlite URIs are `sqlite:///` and an absolute path (four slashes in all)
SQLITE_URI_PREFIX = "sqlite:///"
#: the format of a Hydra output folder's start time (the `${now:}` argument in conf/config.yaml)
START_TIME_FORMAT = "%Y-%m-%d_%H-%M-%S"
#: Hydra's outputs under the runs directory
HYDRA_FOLDER = "hydra"


@dataclass(frozen=True)
class RunLayout:
    """Everything a run writes, under one runs directory (docs/usage.md, "Where results go")."""

    runs_dir: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs_dir", absolute_runs_dir(self.runs_dir))

    @classmethod
    def of_config(cls, config: Any) -> RunLayout:
        """The layout of a composed config (a DictConfig or an ExperimentConfig): its `paths.runs_dir`, whatever
        `hydra.run.dir` or `hydra.sweep.dir` say."""
        return cls(Path(str(config.paths.runs_dir)))

    @property
    def tracking_db(self) -> Path:
        return self.runs_dir / "mlflow.db"

    @property
    def tracking_uri(self) -> str:
        """The absolute sqlite URI of the project's MLflow store."""
        return sqlite_uri(self.tracking_db)

    @property
    def artifacts_dir(self) -> Path:
        return self.runs_dir / "mlartifacts"

    @property
    def hydra_dir(self) -> Path:
        return self.runs_dir / HYDRA_FOLDER

    @property
    def reports_dir(self) -> Path:
        return self.runs_dir / "reports"

    @property
    def bench_dir(self) -> Path:
        return self.runs_dir / "bench"

    @property
    def calibration_dir(self) -> Path:
        """`make calibrate`'s Optuna studies (`<name>.db`) and reports (`<name>/`)."""
        return self.runs_dir / "calibration"

    @property
    def chaos_dir(self) -> Path:
        """`make chaos`'s sessions, one folder each."""
        return self.runs_dir / "chaos"

    @property
    def test_session_file(self) -> Path:
        """What tests/conftest.py records about the last full test session (`make bench` section 7 reads it)."""
        return self.bench_dir / "test-session.json"

    @property
    def ray_dir(self) -> Path:
        """The local Ray instances a launcher starts (`ray/local-<pid>`)."""
        return self.runs_dir / "ray"

    @property
    def worlds_dir(self) -> Path:
        """Starting worlds kept for the other conditions of their seed (simulation/world_cache.py)."""
        return self.runs_dir / "worlds"

    @property
    def cache_dir(self) -> Path:
        """`$PRISM_CACHE_DIR` (read in the process that runs), else `<runs_dir>/cache`."""
        own = os.environ.get(CACHE_DIR_ENV)
        return Path(own).expanduser().resolve() if own else self.runs_dir / "cache"

    def experiment_outputs(self, experiment: str) -> Path:
        """The folder holding every Hydra output folder of `experiment` (one per run or sweep)."""
        return self.hydra_dir / experiment

    def output_dir(self, experiment: str, started: str, token: str) -> Path:
        """A run's or a sweep's Hydra output folder (`started`: in `START_TIME_FORMAT`)."""
        return self.runs_dir / relative_output_dir(experiment, started, token)

    def parents_inside(self, folder: Path | str) -> list[Path]:
        """`folder`'s parents strictly inside the runs directory, nearest first (none for a folder outside it):
        the folders a command may remove when it removes `folder` and they are left empty."""
        folder = Path(folder).resolve()
        if not folder.is_relative_to(self.runs_dir):
            return []
        return [parent for parent in folder.parents if parent != self.runs_dir and parent.is_relative_to(self.runs_dir)]


def absolute_runs_dir(value: Path | str) -> Path:
    """A runs directory as the config holds it (`paths.runs_dir`): absolute, `~` expanded, links resolved."""
    return Path(value).expanduser().resolve()


def default_runs_dir() -> Path:
    """`$PRISM_RUNS_DIR`, else `./runs` (the project's git-ignored runs folder)."""
    return absolute_runs_dir(os.environ.get(RUNS_DIR_ENV) or Path.cwd() / "runs")


def override_value(overrides: Sequence[str], wanted: str) -> str | None:
    """The value a command line's `wanted=` (or `+wanted=`) override sets, None without one."""
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+") == wanted:
            return value
    return None


def runs_dir_from(overrides: Sequence[str]) -> Path:
    """The runs directory a command line selects: its `paths.runs_dir=` override, else `default_runs_dir()`."""
    value = override_value(overrides, RUNS_DIR_OVERRIDE)
    return absolute_runs_dir(value) if value is not None else default_runs_dir()


def sqlite_uri(database: Path | str) -> str:
    """The absolute sqlite URI of the database file `database`."""
    return f"{SQLITE_URI_PREFIX}{Path(database).resolve()}"


def sqlite_path(uri: str) -> Path | None:
    """The database file of a sqlite URI (its `?query` dropped); None for any other URI."""
    if not uri.startswith(SQLITE_URI_PREFIX):
        return None
    return Path(uri.removeprefix(SQLITE_URI_PREFIX).split("?", 1)[0])


def sqlite_tracking_uri(runs_dir: Path | str) -> str:
    """Absolute sqlite URI of the project's MLflow store inside `runs_dir`."""
    return RunLayout(Path(runs_dir)).tracking_uri


def tracking_uri_for(explicit: str | None = None, runs_dir: Path | str | None = None) -> str:
    """`explicit`, else `$MLFLOW_TRACKING_URI`, else the sqlite store under `runs_dir` (or `default_runs_dir()`)."""
    return explicit or os.environ.get(TRACKING_URI_ENV) or sqlite_tracking_uri(runs_dir or default_runs_dir())


def artifact_root(runs_dir: Path | str) -> Path:
    return RunLayout(Path(runs_dir)).artifacts_dir


def cache_dir(runs_dir: Path | str | None = None) -> Path:
    """`$PRISM_CACHE_DIR`, else `<runs_dir>/cache` (`rag.cache_dir=` overrides both, in the run's config)."""
    return RunLayout(Path(runs_dir or default_runs_dir())).cache_dir


#: the OmegaConf resolvers that name Hydra's run and sweep folders (`conf/config.yaml`, registered in composition.py)
FOLDER_TOKEN_RESOLVER = "prism.folder_token"
OUTPUT_DIR_RESOLVER = "prism.output_dir"


def folder_token() -> str:
    """8 random hex digits, drawn once per composed config (the resolver caches it, and Hydra copies that cache into
    every job's config): two sweeps of one experiment started in the same second, or on two machines sharing a
    runs dir, get two folders, and never share a sweep file or a job's outcome file."""
    return secrets.token_hex(4)


def folder_name(started: str, token: str) -> str:
    """`<start time>_<folder token>`: the name of a run's or a sweep's Hydra output folder (the start time from
    Hydra's cached `${now:%Y-%m-%d_%H-%M-%S}`, which a test can pin)."""
    return f"{started}_{token}"


def relative_output_dir(experiment: str, started: str, token: str) -> Path:
    """A run's or a sweep's Hydra output folder relative to the runs directory: `hydra/<experiment>/<name>`."""
    return Path(HYDRA_FOLDER) / experiment / folder_name(started, token)


def hydra_output_dir(runs_dir: str, experiment: str, started: str, token: str) -> str:
    """The `prism.output_dir` resolver of `hydra.run.dir` and `hydra.sweep.dir`: `<runs_dir>/hydra/<experiment>/<name>`
    (relative when `paths.runs_dir` is: Hydra resolves it from the working directory, as it does `runs`)."""
    return str(Path(str(runs_dir)) / relative_output_dir(str(experiment), str(started), str(token)))


def job_dir(sweep_dir: Path | str, job_num: int) -> Path:
    """A sweep job's own folder (`hydra.sweep.subdir`: the job's number)."""
    return Path(sweep_dir) / str(job_num)


def sweep_interrupted_marker(sweep_dir: Path | str) -> Path:
    """The file a sweep's driver writes when it is interrupted: a job of the sweep that starts later does not run."""
    return Path(sweep_dir) / "prism_interrupted"


def job_process_file(sweep_dir: Path | str, job_num: int) -> Path:
    """Where a job records the host and process it runs in, for a driver that must signal it (`<job folder>/...`)."""
    return job_dir(sweep_dir, job_num) / "prism_job_process"
