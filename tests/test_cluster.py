"""Sweeps beyond joblib, on real parts: a Ray cluster head (`make ray-head`'s code), submitit's local executor,
and an MLflow server on a real PostgreSQL started by `prism_experiments.tracking.server` (127.0.0.1, stopped by PID)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from process_helpers import free_port, gone_or_zombie, postgres_tracking_server, prism

from prism_experiments.daemons import DaemonError
from prism_experiments.harness import ray_head
from prism_experiments.metrics import SUMMARY_METRICS
from prism_experiments.tracking import server as tracking_server
from prism_experiments.tracking.tags import CONFIG_HASH_TAG, PARENT_RUN_TAG, SWEEP_KIND, tag_equals

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def postgres_mlflow() -> Iterator[tuple[str, Path]]:
    with postgres_tracking_server() as server:
        yield server


def sweep(uri: str, runs_dir: Path, experiment_name: str, *overrides: str, env: dict[str, str] | None = None) -> str:
    """The sweep's output (Hydra logs the driver to stdout)."""
    process = prism(
        "-m",
        "experiment=smoke",
        f"experiment_name={experiment_name}",
        "tracking=server",
        f"tracking.uri={uri}",
        *overrides,
        runs_dir=runs_dir,
        env={"RAY_USAGE_STATS_ENABLED": "0"} | (env or {}),
    )
    assert process.returncode == 0, process.stderr[-3000:]
    return process.stdout + process.stderr


def finished_children(uri: str, experiment_name: str) -> dict[tuple[str, str], dict[str, float]]:
    """(seed, mode) -> summary metrics of the experiment's simulation runs, all FINISHED under one parent."""
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(experiment_name).experiment_id
    parents = client.search_runs([experiment_id], tag_equals("prism.kind", SWEEP_KIND))
    children = client.search_runs([experiment_id], tag_equals("prism.kind", "simulation"), max_results=1000)
    assert len(parents) == 1 and {run.info.status for run in children} == {"FINISHED"}
    assert {run.data.tags[PARENT_RUN_TAG] for run in children} == {parents[0].info.run_id}
    hashes = [run.data.tags[CONFIG_HASH_TAG] for run in children]
    assert len(hashes) == len(set(hashes)), "a job was logged twice"
    return {
        (run.data.params["seed"], run.data.params["ranking.mode"]): {
            name: run.data.metrics[name] for name in SUMMARY_METRICS
        }
        for run in children
    }


@pytest.fixture(scope="module")
def joblib_four_workers(
    postgres_mlflow: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], dict[str, float]]:
    """6 jobs, 4 at once, into PostgreSQL: the reference the other launchers must equal."""
    uri, _ = postgres_mlflow
    sweep(uri, tmp_path_factory.mktemp("joblib") / "runs", "smoke_joblib", "seed=0,1,2", "hydra.launcher.n_jobs=4")
    return finished_children(uri, "smoke_joblib")


def test_four_concurrent_workers_lose_and_duplicate_no_run_in_postgres(joblib_four_workers) -> None:
    assert set(joblib_four_workers) == {(seed, mode) for seed in "012" for mode in ("x_algo", "random")}


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ray_head.RayHeadState]:
    """A Ray head with 2 CPUs started as `make ray-head` starts it (loopback, token auth), stopped by its PID."""
    runs_dir = tmp_path_factory.mktemp("ray-head")
    state = ray_head.start(runs_dir, port=free_port(), num_cpus=2)
    try:
        yield state
    finally:
        assert ray_head.stop(runs_dir)
        assert gone_or_zombie(state.pid)


def test_the_ray_launcher_on_a_ray_cluster_gives_the_joblib_metrics_bit_for_bit(
    postgres_mlflow, joblib_four_workers, ray_cluster: ray_head.RayHeadState, tmp_path: Path
) -> None:
    uri, _ = postgres_mlflow
    output = sweep(uri, tmp_path / "runs", "smoke_ray", "hydra/launcher=prism_ray", env=ray_cluster.client_env())
    assert f"Ray: connecting to {ray_cluster.address}" in output
    assert "sweep progress: 1/4 jobs done, 0 failed" in output and "sweep progress: 4/4 jobs done, 0 failed" in output
    on_ray = finished_children(uri, "smoke_ray")
    assert set(on_ray) == {(seed, mode) for seed in "01" for mode in ("x_algo", "random")}
    for key, metrics in on_ray.items():
        assert metrics == joblib_four_workers[key], key
    assert listening_beyond_loopback(ray_cluster.pid) == []


def listening_beyond_loopback(group: int) -> list[str]:
    """`ss` lines of TCP listeners owned by the process group `group` and bound beyond 127.0.0.1."""
    members = {entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit() and _group_of(entry) == group}
    lines = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout.splitlines()
    owned = [line for line in lines if any(f"pid={pid}," in line for pid in members)]
    assert owned, "the head's processes listen somewhere"
    loopback = ("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")
    return [line for line in owned if not line.split()[3].startswith(loopback)]


def _group_of(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, ValueError, IndexError):
        return None


def test_submitit_local_runs_the_same_sweep(postgres_mlflow, joblib_four_workers, tmp_path: Path) -> None:
    uri, _ = postgres_mlflow
    # one seed: submitit starts a fresh interpreter (and model) per job
    sweep(uri, tmp_path / "runs", "smoke_submitit", "hydra/launcher=prism_submitit_local", "seed=0")
    on_submitit = finished_children(uri, "smoke_submitit")
    assert set(on_submitit) == {("0", mode) for mode in ("x_algo", "random")}
    for key, metrics in on_submitit.items():
        assert metrics == joblib_four_workers[key], key


def test_a_taken_port_is_one_line_and_the_password_stays_out_of_state_and_argv(postgres_mlflow) -> None:
    _, home = postgres_mlflow
    state = tracking_server.read_state(home)
    assert state is not None
    with pytest.raises(DaemonError, match=r"^--port: 127\.0\.0\.1:\d+ is in use"):
        tracking_server.start(home / "other", mlflow_port=state.mlflow_port)
    password_file = home / "tracking-server" / "db_password"
    assert oct(password_file.stat().st_mode & 0o777) == "0o600"
    password = password_file.read_text().strip()
    assert password not in (home / "tracking-server" / "state.json").read_text()
    assert password not in Path(f"/proc/{state.mlflow_pid}/cmdline").read_text()


def test_stop_then_start_keeps_every_run(postgres_mlflow, joblib_four_workers) -> None:
    """Last in the module: the server comes back on a new port over the same database."""
    _, home = postgres_mlflow
    first = tracking_server.read_state(home)
    assert first is not None and tracking_server.stop(home)
    assert gone_or_zombie(first.mlflow_pid) and gone_or_zombie(first.postgres_pid)
    again = tracking_server.start(home, mlflow_port=free_port())
    assert again.mlflow_pid != first.mlflow_pid
    assert finished_children(again.tracking_uri, "smoke_joblib") == joblib_four_workers
