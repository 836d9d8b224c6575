"""A run and a sweep on a loaded follow graph and population, for real: joblib and Ray, compare, reproduce."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from process_helpers import environment, forked_run, nan_comparable, prism

from prism_experiments.example_world import main as example_world
from prism_experiments.file_digest import file_sha256
from prism_experiments.network.edge_stats import GRAPH_MOMENTS

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's invented example: 40 accounts, 200 follows, a population file with gaps."""
    directory = tmp_path_factory.mktemp("world")
    assert example_world(["--out", str(directory), "--nodes", "40", "--edges", "200"]) == 0
    return directory


def world_args(world: Path) -> tuple[str, ...]:
    """The loaded world, and 3 steps instead of smoke's 6: what is tested is the world, not the step loop."""
    return (
        "network=file",
        f"network.path={world / 'edges.txt'}",
        "agents=file",
        f"agents.path={world / 'population.csv'}",
        "simulation.n_steps=3",
    )


def simulation_runs(uri: str, experiment: str) -> list:
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    return client.search_runs([found.experiment_id], "tags.`prism.kind` = 'simulation'", max_results=100)


@pytest.fixture(scope="module")
def joblib_sweep(world: Path, warm_smoke_cache: Path, tmp_path_factory: pytest.TempPathFactory):
    """experiment=smoke (2 modes x 2 seeds) on the loaded world, joblib launcher, a fresh store."""
    runs_dir = tmp_path_factory.mktemp("joblib") / "runs"
    process = prism(
        "-m", "experiment=smoke", *world_args(world), f"rag.cache_dir={warm_smoke_cache}", runs_dir=runs_dir
    )
    return runs_dir, process


def test_a_sweep_on_a_loaded_world_names_its_files_and_digests(joblib_sweep, world: Path) -> None:
    runs_dir, process = joblib_sweep
    assert process.returncode == 0, process.stderr[-3000:]
    runs = simulation_runs(f"sqlite:///{runs_dir}/mlflow.db", "smoke")
    assert len(runs) == 4 and {run.info.status for run in runs} == {"FINISHED"}
    edges, population = world / "edges.txt", world / "population.csv"
    for run in runs:
        tags, params, metrics = run.data.tags, run.data.params, run.data.metrics
        assert tags["prism.input.network.path"] == params["network.path"] == str(edges)
        assert tags["prism.input.network.sha256"] == params["network.sha256"] == file_sha256(edges)
        assert tags["prism.input.agents.path"] == str(population)
        assert tags["prism.input.agents.sha256"] == params["agents.sha256"] == file_sha256(population)
        assert tags["prism.agents_file_columns"] == "interests,activity,post_rate"
        assert params["agents.n_agents"] == "40"
        assert {f"file/{m}" for m in GRAPH_MOMENTS} <= set(metrics) and f"generator/{GRAPH_MOMENTS[0]}" in metrics
        assert metrics["file/graph_mean_out_degree"] == 200 / 40
    # the loaded graph is the same for every run; the side-by-side table is printed
    assert len({run.data.metrics["file/graph_clustering"] for run in runs}) == 1
    assert "follow graph: the file's vs the generator's for the same 40 accounts" in process.stdout + process.stderr
    artifacts = MlflowClient(f"sqlite:///{runs_dir}/mlflow.db").list_artifacts(runs[0].info.run_id, "world")
    assert {Path(a.path).name for a in artifacts} == {"graph_moments.csv", "graph_targets.yaml"}


def test_compare_works_unchanged_on_the_loaded_world(joblib_sweep, tmp_path: Path) -> None:
    runs_dir, process = joblib_sweep
    assert process.returncode == 0, process.stderr[-3000:]
    compare = forked_run(
        [sys.executable, "-m", "prism_experiments.analysis.cli", "--experiment", "smoke",
         "--tracking-uri", f"sqlite:///{runs_dir}/mlflow.db", "--out", str(tmp_path / "report"), "--no-cascades"],
        env=environment(), timeout=600,
    )  # fmt: skip
    assert compare.returncode == 0, compare.stderr[-3000:]
    assert "prism-compare: smoke: 4 runs, 2 conditions" in compare.stdout + compare.stderr


def test_the_ray_launcher_gives_the_joblib_metrics_on_the_loaded_world(
    joblib_sweep, world: Path, warm_smoke_cache: Path, tmp_path: Path
) -> None:
    runs_dir, process = joblib_sweep
    assert process.returncode == 0, process.stderr[-3000:]
    ray_runs_dir = tmp_path / "runs"
    ray = prism(
        "-m", "experiment=smoke", "seed=0", *world_args(world), f"rag.cache_dir={warm_smoke_cache}",
        "hydra/launcher=prism_ray", runs_dir=ray_runs_dir, timeout=900,
    )  # fmt: skip
    assert ray.returncode == 0, ray.stderr[-3000:]
    on_ray = {
        r.data.tags["prism.condition"]: r for r in simulation_runs(f"sqlite:///{ray_runs_dir}/mlflow.db", "smoke")
    }
    on_joblib = {
        r.data.tags["prism.condition"]: r
        for r in simulation_runs(f"sqlite:///{runs_dir}/mlflow.db", "smoke")
        if r.data.tags["prism.seed"] == "0"
    }
    assert set(on_ray) == set(on_joblib) == {"x_algo", "random"}
    for condition, run in on_ray.items():
        assert run.info.status == "FINISHED"
        assert run.data.tags["prism.config_hash"] == on_joblib[condition].data.tags["prism.config_hash"]
        assert run.data.tags["prism.input.network.sha256"] == file_sha256(world / "edges.txt")
        assert nan_comparable(run.data.metrics) == nan_comparable(on_joblib[condition].data.metrics)


def test_reproduce_agrees_and_then_refuses_a_changed_file_in_one_line(joblib_sweep, world: Path) -> None:
    runs_dir, process = joblib_sweep
    assert process.returncode == 0, process.stderr[-3000:]
    run = next(
        r for r in simulation_runs(f"sqlite:///{runs_dir}/mlflow.db", "smoke") if r.data.tags["prism.seed"] == "0"
    )

    def reproduce() -> subprocess.CompletedProcess:
        return forked_run(
            [sys.executable, "-m", "prism_experiments.harness.reproduce", run.info.run_id,
             "--tracking-uri", f"sqlite:///{runs_dir}/mlflow.db"], env=environment(), timeout=600,
        )  # fmt: skip

    same = reproduce()
    assert same.returncode == 0, same.stdout + same.stderr[-3000:]
    edges = world / "edges.txt"
    original = edges.read_bytes()
    try:
        edges.write_bytes(original + b"1 2\n")
        changed = reproduce()
    finally:
        edges.write_bytes(original)
    errors = [line for line in changed.stderr.splitlines() if "error" in line.lower()]
    assert changed.returncode == 2 and len(errors) == 1, changed.stderr[-3000:]
    assert f"network.sha256: {edges} has changed" in errors[0] and "Traceback" not in changed.stderr
