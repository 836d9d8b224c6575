"""The run folder's layout has one home (prism_experiments/locations.py): moving `paths.runs_dir` or `hydra.sweep.dir`
in one place moves every consumer that reads it (Hydra's output folders, the tracking store, the Ray launcher's
local instance, the bench, what a config error removes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf
from process_helpers import prism

from prism_experiments.__main__ import remove_output_dir
from prism_experiments.composition import compose_dictconfig, experiment_config, hydra_context
from prism_experiments.locations import (
    START_TIME_FORMAT,
    RunLayout,
    artifact_root,
    cache_dir,
    job_dir,
    sqlite_path,
    sqlite_tracking_uri,
    sqlite_uri,
    tracking_uri_for,
)
from prism_experiments.tracking.store import resolve_tracking_uri
from prism_experiments.tracking.tags import KIND_TAG, SIMULATION_KIND, tag_equals


@pytest.fixture
def compose() -> Iterator:
    with hydra_context():
        yield lambda *overrides: compose_dictconfig(list(overrides), return_hydra_config=True)


def folder_parts(cfg: DictConfig, key: str) -> tuple[str, str]:
    """(start time, token) of a composed output folder's name."""
    started, _, token = Path(str(cfg.hydra[key].dir)).name.rpartition("_")
    return started, token


def test_hydra_output_folders_are_the_layouts_under_the_configured_runs_dir(compose, tmp_path: Path) -> None:
    runs_dir = tmp_path / "elsewhere" / "runs"
    cfg = compose("experiment=smoke", f"paths.runs_dir={runs_dir}")
    started, token = folder_parts(cfg, "run")
    assert len(token) == 8 and int(token, 16) >= 0
    layout = RunLayout.of_config(cfg)
    assert layout.runs_dir == runs_dir
    for key in ("run", "sweep"):
        assert Path(str(cfg.hydra[key].dir)) == layout.output_dir("smoke", started, token)
    assert layout.output_dir("smoke", started, token) == runs_dir / "hydra" / "smoke" / f"{started}_{token}"
    # a sweep's job folder: `hydra.sweep.subdir`, the job's number, as locations.job_dir names it
    assert OmegaConf.to_container(cfg.hydra.sweep)["subdir"] == "${hydra.job.num}"  # type: ignore[index]
    assert job_dir(cfg.hydra.sweep.dir, 3) == layout.output_dir("smoke", started, token) / "3"
    # the start time is Hydra's own `now`, in the layout's format
    from datetime import datetime

    assert datetime.strptime(started, START_TIME_FORMAT).strftime(START_TIME_FORMAT) == started


def test_a_moved_sweep_dir_moves_hydras_outputs_and_nothing_else(compose, tmp_path: Path) -> None:
    runs_dir, sweep_dir = tmp_path / "runs", tmp_path / "sweeps" / "mine"
    cfg = compose("experiment=smoke", f"paths.runs_dir={runs_dir}", f"hydra.sweep.dir={sweep_dir}")
    assert Path(str(cfg.hydra.sweep.dir)) == sweep_dir
    assert Path(str(cfg.hydra.run.dir)).parent == runs_dir / "hydra" / "smoke"  # run.dir stays in the layout
    experiment = experiment_config(cfg)
    # every consumer of the runs dir reads paths.runs_dir, never a parent of the sweep folder
    layout = RunLayout.of_config(cfg)
    assert layout == RunLayout.of_config(experiment) == RunLayout(runs_dir)
    assert resolve_tracking_uri(experiment) == f"sqlite:///{runs_dir}/mlflow.db" == layout.tracking_uri
    assert experiment.paths.artifacts_dir == runs_dir / "mlartifacts" == artifact_root(runs_dir)
    assert experiment.paths.reports_dir == runs_dir / "reports"
    assert layout.bench_dir == runs_dir / "bench" and layout.test_session_file.parent == layout.bench_dir


def test_the_ray_launcher_finds_the_runs_dir_from_the_config_not_the_sweep_folder(compose, tmp_path: Path) -> None:
    from hydra_plugins.prism_launcher.prism_ray_launcher import local_instance_home

    runs_dir, sweep_dir = tmp_path / "runs", tmp_path / "a" / "b" / "c" / "sweep"
    cfg = compose("experiment=smoke", "hydra/launcher=prism_ray", f"paths.runs_dir={runs_dir}",
                  f"hydra.sweep.dir={sweep_dir}")  # fmt: skip
    found = RunLayout.of_config(cfg).runs_dir  # what PrismRayLauncher.launch asks
    assert found == runs_dir and found != Path(str(cfg.hydra.sweep.dir)).parents[2]
    home = local_instance_home(found)
    assert home.parent == runs_dir / "ray" and home.name.startswith("local-")


def test_the_sqlite_uri_round_trips(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "runs")
    assert layout.tracking_uri == f"sqlite:///{tmp_path}/runs/mlflow.db" == sqlite_tracking_uri(tmp_path / "runs")
    assert sqlite_path(layout.tracking_uri) == layout.tracking_db == tmp_path / "runs" / "mlflow.db"
    assert sqlite_path(sqlite_uri(tmp_path / "x.db") + "?timeout=20") == tmp_path / "x.db"
    assert sqlite_path("http://127.0.0.1:5000") is None and sqlite_path("postgresql://h/db") is None
    # a relative runs dir gives an absolute URI (MLflow 3 needs one)
    assert sqlite_path(RunLayout(Path("runs")).tracking_uri).is_absolute()  # type: ignore[union-attr]


def test_the_tracking_uri_and_the_cache_follow_the_runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("PRISM_CACHE_DIR", raising=False)
    assert tracking_uri_for(None, tmp_path) == RunLayout(tmp_path).tracking_uri
    assert cache_dir(tmp_path) == RunLayout(tmp_path).cache_dir == tmp_path / "cache"
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "node"))
    assert RunLayout(tmp_path).cache_dir == tmp_path / "node"


def test_remove_output_dir_removes_only_the_folders_it_made(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "runs")
    kept = layout.experiment_outputs("other") / "2026-01-01_00-00-00_00000000"
    kept.mkdir(parents=True)
    made = layout.output_dir("smoke", "2026-01-02_00-00-00", "0123abcd")
    (made / ".hydra").mkdir(parents=True)
    remove_output_dir(made, layout)
    assert not layout.experiment_outputs("smoke").exists(), "the experiment's folder it made, left empty"
    assert kept.is_dir() and layout.runs_dir.is_dir(), "another experiment's folder and the runs dir stay"
    # a folder outside the runs dir (hydra.run.dir= elsewhere): its parents are not the layout's to remove
    outside = tmp_path / "mine" / "empty" / "run"
    outside.mkdir(parents=True)
    remove_output_dir(outside, layout)
    assert not outside.exists() and (tmp_path / "mine" / "empty").is_dir()
    assert layout.parents_inside(outside) == [] and layout.parents_inside(made) == [
        layout.experiment_outputs("smoke"),
        layout.hydra_dir,
    ]


@pytest.mark.integration
@pytest.mark.slow
def test_a_sweep_with_moved_folders_writes_where_configured(tmp_path: Path) -> None:
    """A real one-job smoke sweep with `hydra.sweep.dir` outside the runs dir: Hydra's outputs go to the sweep dir,
    the store and artifacts to the runs dir, and nothing to the layout's Hydra folder."""
    runs_dir, sweep_dir = tmp_path / "runs", tmp_path / "sweeps" / "moved"
    done = prism(
        "-m",
        "experiment=smoke",
        "hydra.sweeper.params.seed=0",
        "hydra.sweeper.params.ranking=x_algo",
        "hydra.launcher.n_jobs=1",
        f"hydra.sweep.dir={sweep_dir}",
        runs_dir=runs_dir,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    layout = RunLayout(runs_dir)
    assert (sweep_dir / "0" / ".hydra").is_dir() and (sweep_dir / "prism_sweep.json").is_file()
    assert json.loads((sweep_dir / "0" / "prism_outcome.json").read_text())["status"] == "FINISHED"
    assert not layout.hydra_dir.exists(), "nothing under the layout's hydra/ when the sweep dir is moved"
    assert layout.tracking_db.is_file() and (layout.artifacts_dir / "smoke").is_dir()
    client = MlflowClient(layout.tracking_uri)
    experiment = client.get_experiment_by_name("smoke")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id], tag_equals(KIND_TAG, SIMULATION_KIND))
    assert run.info.status == "FINISHED"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["runs", "sweeps"], "nothing in the working dir"


@pytest.mark.integration
def test_a_config_error_leaves_no_folder_wherever_the_run_dir_is(tmp_path: Path) -> None:
    """`rag.feed_size=0` is refused after Hydra made the run's folder: the folders this command made go, in the
    layout (runs dir included, which did not exist) and outside it (a moved `hydra.run.dir`), and nothing else."""
    keep = tmp_path / "existing" / "keep"  # an empty folder the user made: not this command's to remove
    keep.mkdir(parents=True)
    for run_dir in (None, keep / "made" / "by" / "a" / "run"):
        runs_dir = tmp_path / "new" / "runs"
        moved = [f"hydra.run.dir={run_dir}"] if run_dir else []
        done = prism("experiment=smoke", "rag.feed_size=0", *moved, runs_dir=runs_dir, cwd=tmp_path)
        assert done.returncode == 2, done.stderr[-3000:]
        assert "feed_size" in done.stdout + done.stderr
        assert sorted(path.name for path in tmp_path.iterdir()) == ["existing"], (run_dir, list(tmp_path.rglob("*")))
        assert sorted(tmp_path.rglob("*")) == [keep.parent, keep]


@pytest.mark.integration
@pytest.mark.parametrize(
    "override, says",
    [
        ("simulation.schedule=[{step:0,mode:chronological},{step:48,mode:x_algo}]", "simulation.schedule: steps must"),
        ("simulation.schedule=[{step:24,mode:bogus}]", "simulation.schedule.0.mode: unknown mode 'bogus'; allowed:"),
    ],
)
def test_a_bad_schedule_is_one_line_exit_2_and_no_folder(tmp_path: Path, override: str, says: str) -> None:
    done = prism("experiment=smoke", override, runs_dir=tmp_path / "runs", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    errors = [line for line in (done.stdout + done.stderr).splitlines() if says in line]
    assert len(errors) == 1 and "config error" in errors[0], done.stderr[-3000:]
    assert list(tmp_path.iterdir()) == [], list(tmp_path.rglob("*"))
