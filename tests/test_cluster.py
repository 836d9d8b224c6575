"""Sweeps beyond joblib, on real parts: a two-node Ray cluster (`make ray-head` and `make ray-node`'s code, each
node with its own embedding cache), submitit's local executor, and an MLflow server on a real PostgreSQL started by
`prism_experiments.ops.tracking_server` (127.0.0.1, stopped by PID)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from process_helpers import (
    CacheLock,
    all_runs,
    forked,
    forked_run,
    free_port,
    gone_or_zombie,
    killed_if_left_running,
    nan_comparable,
    postgres_tracking_server,
    prism,
)

from prism_experiments.metrics import summary_metric_names
from prism_experiments.ops import ray_head, tracking_server
from prism_experiments.ops.daemons import DaemonError
from prism_experiments.tracking.tags import CACHE_DIR_TAG, CONFIG_HASH_TAG, PARENT_RUN_TAG, SWEEP_KIND, tag_equals

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def postgres_mlflow() -> Iterator[tuple[str, Path]]:
    with postgres_tracking_server() as server:
        yield server


@pytest.fixture(scope="module")
def shared_cache(warm_smoke_cache: Path) -> Iterator[Path]:
    """The session's embedding cache, warm for every smoke sweep here, as every sweep's (and the head node's)
    `$PRISM_CACHE_DIR`: no sweep here embeds a text another test already embedded."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRISM_CACHE_DIR", str(warm_smoke_cache))
        yield warm_smoke_cache


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
    output = process.stdout + process.stderr
    assert "View run" not in output, "MLflow's run links (one per run ended) stay out of the sweep's output"
    return output


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
        (run.data.params["seed"], run.data.params["ranking.mode"]): nan_comparable(
            {name: run.data.metrics[name] for name in summary_metric_names()}
        )
        for run in children
    }


@pytest.fixture(scope="module")
def joblib_four_workers(
    postgres_mlflow: tuple[str, Path], shared_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], dict[str, float]]:
    """6 jobs, 4 at once, into PostgreSQL: the reference the other launchers must equal."""
    uri, _ = postgres_mlflow
    sweep(uri, tmp_path_factory.mktemp("joblib") / "runs", "smoke_joblib", "seed=0,1,2", "hydra.launcher.n_jobs=4")
    return finished_children(uri, "smoke_joblib")


def test_four_concurrent_workers_lose_and_duplicate_no_run_in_postgres(joblib_four_workers) -> None:
    assert set(joblib_four_workers) == {(seed, mode) for seed in "012" for mode in ("x_algo", "random")}


@dataclass(frozen=True)
class TwoNodes:
    head: ray_head.RayHeadState
    node: ray_head.RayNodeState
    shared_cache: Path


@pytest.fixture(scope="module")
def ray_cluster(
    tmp_path_factory: pytest.TempPathFactory, shared_cache: Path, joblib_four_workers: dict
) -> Iterator[TwoNodes]:
    """A Ray head and a second node, 1 CPU each, started as `make ray-head` and `make ray-node` start them
    (loopback, token auth); the head's workers use the shared cache, the node's a copy of it (made after the
    joblib reference warmed it); stopped by their PIDs."""
    runs_dir = tmp_path_factory.mktemp("ray-head")
    head = ray_head.start(runs_dir, port=free_port(), num_cpus=1)
    try:
        node = ray_head.add_node(ray_head.state_dir(runs_dir), num_cpus=1, seed_cache=shared_cache)
        assert Path(node.cache_dir) != shared_cache and any(Path(node.cache_dir, "embeddings").iterdir())
        yield TwoNodes(head, node, shared_cache)
    finally:
        assert ray_head.stop(runs_dir)
        assert gone_or_zombie(head.pid)
        assert not ray_head.session_dir(head.port).exists()
        assert not (ray_head.state_dir(runs_dir) / ray_head.NODES_DIR / "1").exists()


def simulation_runs(uri: str, experiment_name: str) -> list:
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(experiment_name).experiment_id
    return client.search_runs([experiment_id], tag_equals("prism.kind", "simulation"), max_results=1000)


def test_the_ray_launcher_on_two_ray_nodes_gives_the_joblib_metrics_bit_for_bit(
    postgres_mlflow, joblib_four_workers, ray_cluster: TwoNodes, tmp_path: Path
) -> None:
    uri, _ = postgres_mlflow
    output = sweep(uri, tmp_path / "runs", "smoke_ray", "hydra/launcher=prism_ray", env=ray_cluster.head.client_env())
    assert f"Ray: connecting to {ray_cluster.head.address}" in output
    assert "sweep progress: 1/4 jobs done, 0 failed" in output and "sweep progress: 4/4 jobs done, 0 failed" in output
    on_ray = finished_children(uri, "smoke_ray")
    assert set(on_ray) == {(seed, mode) for seed in "01" for mode in ("x_algo", "random")}
    for key, metrics in on_ray.items():
        assert metrics == joblib_four_workers[key], key
    # jobs ran on both nodes, each with its node's own cache
    used = {run.data.tags[CACHE_DIR_TAG] for run in simulation_runs(uri, "smoke_ray")}
    assert used == {str(ray_cluster.shared_cache), ray_cluster.node.cache_dir}
    assert listening_beyond_loopback(ray_cluster.head.pid) == []
    assert listening_beyond_loopback(ray_cluster.node.pid) == []


def raylet_of(node_pid: int) -> int:
    """The raylet process of the node `ray start` (`node_pid`, its own process group) runs."""
    raylets = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _group_of(entry) == node_pid and "raylet" in _command_of(entry)
    ]
    assert len(raylets) == 1, raylets
    return raylets[0]


def _command_of(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def test_a_killed_raylet_fails_only_its_nodes_jobs_and_a_rerun_finishes_every_config_once(
    postgres_mlflow, ray_cluster: TwoNodes, tmp_path: Path
) -> None:
    """Runs last in this module: the second node does not come back."""
    uri, _ = postgres_mlflow
    runs_dir, name = tmp_path / "runs", "ray_raylet_killed"
    # texts no cache holds (no text pool: each post's text is composed anew), so every job encodes, and the second
    # node's jobs wait on its cache's lock, held here, inside their RUNNING runs until its raylet is killed: however
    # fast the machine, one of them is running then
    args = (
        "-m",
        "experiment=smoke",
        "corpus.text_pool_size=0",
        "simulation.show_progress=false",
        "hydra/launcher=prism_ray",
        "tracking=server",
        f"tracking.uri={uri}",
        f"experiment_name={name}",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PRISM_RUNS_DIR")}
    env |= {"HF_HUB_OFFLINE": "1"} | ray_cluster.head.client_env()
    command = [sys.executable, "-m", "prism_experiments", *args, f"paths.runs_dir={runs_dir}"]
    started = forked(command, env=env)
    with CacheLock(Path(ray_cluster.node.cache_dir)) as node_cache, killed_if_left_running(started):
        deadline = time.monotonic() + 300
        while not [
            r
            for r in all_runs(runs_dir, store=uri, experiment=name)
            if r.info.status == "RUNNING" and r.data.tags.get(CACHE_DIR_TAG) == ray_cluster.node.cache_dir
        ]:
            assert time.monotonic() < deadline and started.poll() is None, "no job ran on the second node"
            time.sleep(0.5)
        os.kill(raylet_of(ray_cluster.node.pid), signal.SIGKILL)
        node_cache.release()
        stdout, stderr = started.communicate(timeout=600)
    output = stdout + stderr
    assert started.returncode == 1, output[-3000:]
    assert "its Ray worker died" in output and "Traceback" not in output, output[-3000:]
    runs = all_runs(runs_dir, store=uri, experiment=name)
    assert not [r for r in runs if r.info.status == "RUNNING"], output[-3000:]
    on_lost_node = [r for r in runs if r.data.tags.get(CACHE_DIR_TAG) == ray_cluster.node.cache_dir]
    assert on_lost_node and all(r.info.status in ("FAILED", "KILLED", "FINISHED") for r in on_lost_node)
    finished = Counter(r.data.tags[CONFIG_HASH_TAG] for r in runs if r.info.status == "FINISHED")
    assert max(finished.values(), default=1) == 1

    rerun = forked_run(command, env=env)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    after = all_runs(runs_dir, store=uri, experiment=name)
    finished = Counter(r.data.tags[CONFIG_HASH_TAG] for r in after if r.info.status == "FINISHED")
    assert len(finished) == 4 and set(finished.values()) == {1}, "every config FINISHED, none twice"
    assert not [
        r for r in after + all_runs(runs_dir, "sweep", store=uri, experiment=name) if r.info.status == "RUNNING"
    ]


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


def make_tracking_server(home: Path, port: int, action: str = "start") -> subprocess.CompletedProcess:
    """What `make tracking-server PORT=<port>` runs, with its runs dir at `home`."""
    return forked_run(
        [sys.executable, "-m", "prism_experiments.ops.tracking_server", action, f"--port={port}", f"--runs-dir={home}"]
    )


def test_make_tracking_server_says_it_runs_and_restarts_both_after_postgres_is_killed(
    postgres_mlflow, joblib_four_workers, tmp_path: Path
) -> None:
    """Started again while both run, it starts nothing; after `kill -9` of the postmaster (its MLflow server left
    answering 503 on the port), it stops what is left and starts both again on the same port and database."""
    _, home = postgres_mlflow
    state = tracking_server.read_state(home)
    assert state is not None
    again = make_tracking_server(home, state.mlflow_port)
    assert again.returncode == 0 and f"(already running): {state.tracking_uri}" in again.stdout, again.stdout
    assert tracking_server.read_state(home) == state, "nothing new was started"

    os.kill(state.postgres_pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not gone_or_zombie(state.postgres_pid):
        assert time.monotonic() < deadline, "the postmaster did not exit"
        time.sleep(0.2)
    half = make_tracking_server(home, state.mlflow_port, "status")
    assert half.returncode == 1 and "half stopped" in half.stdout, half.stdout
    # a sweep against the half: one short line naming the store and the cause, not urllib3's 300 characters
    stuck = prism(
        "-m",
        "experiment=smoke",
        "tracking=server",
        f"tracking.uri={state.tracking_uri}",
        "tracking.http_timeout_s=2",
        "tracking.http_max_retries=1",
        runs_dir=tmp_path / "runs",
    )
    output = stuck.stdout + stuck.stderr
    host = f"127.0.0.1:{state.mlflow_port}"
    assert stuck.returncode == 2, output[-3000:]
    # MLflow's server either hangs on its database (a worker restarting) or answers 503 (retried up to MLflow 3.17,
    # at once from 3.18 for a run's creation): each is named
    cause = r"\((no answer within 2 s|HTTP 503 to every attempt|HTTP 503: the server's database is unavailable)\)"
    assert re.search(rf"the sweep could not start: tracking store unreachable: {host} {cause}", output), output
    assert max(len(line) for line in output.splitlines()) < 200, output

    restarted = make_tracking_server(home, state.mlflow_port)
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr  # not "in use; choose another"
    assert "half stopped" in restarted.stdout and state.tracking_uri in restarted.stdout, restarted.stdout
    new = tracking_server.read_state(home)
    assert new is not None and new.mlflow_port == state.mlflow_port
    assert new.mlflow_pid != state.mlflow_pid and new.postgres_pid != state.postgres_pid
    assert gone_or_zombie(state.mlflow_pid), "the leftover MLflow server was stopped, not left beside the new one"
    assert finished_children(new.tracking_uri, "smoke_joblib") == joblib_four_workers, "the same database"


def test_stop_then_start_keeps_every_run(postgres_mlflow, joblib_four_workers) -> None:
    """Last in the module: the server comes back on a new port over the same database."""
    _, home = postgres_mlflow
    first = tracking_server.read_state(home)
    assert first is not None and tracking_server.stop(home)
    assert gone_or_zombie(first.mlflow_pid) and gone_or_zombie(first.postgres_pid)
    again = tracking_server.start(home, mlflow_port=free_port())
    assert again.mlflow_pid != first.mlflow_pid
    assert finished_children(again.tracking_uri, "smoke_joblib") == joblib_four_workers
