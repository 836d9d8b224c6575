"""Section 6 (opt-in, `--sections 6`): what the cluster path costs (docs/cluster.md).

Every sweep here is the real entry point on smoke runs with a warm embedding cache:
- per-launcher cost: one sweep each on `prism_joblib`, `prism_ray` (local instance) and `prism_submitit_local`;
- runs per minute with 1 and 2 joblib workers;
- N smoke runs into the sqlite store vs an MLflow server on PostgreSQL (`make tracking-server`'s code);
- with `--cold-sweep`, a cold `ranking_modes` sweep (empty cache) with and without the up-front
  embedding pass, the first-sweep-on-a-fresh-clone cost.
The scaling model in docs/cluster.md is checked against the 1- and 2-worker figures.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

from prism_experiments.bench.hydra_runs import LoggedRun, new_runs, run_entry_point, simulation_runs
from prism_experiments.bench.probe.log import read_probe
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.bench.sizes import Mode
from prism_experiments.locations import sqlite_tracking_uri
from prism_experiments.ops.daemons import free_port

SECTION = 6
EXPERIMENT = "smoke"
MODES = ("x_algo", "random")
LAUNCHERS: dict[str, tuple[str, ...]] = {
    "joblib": ("hydra/launcher=prism_joblib", "hydra.launcher.n_jobs=2"),
    "ray": ("hydra/launcher=prism_ray", "hydra.launcher.ray.init.num_cpus=2"),
    "submitit_local": ("hydra/launcher=prism_submitit_local",),
}


@dataclass(frozen=True)
class ClusterSizes:
    launcher_seeds: int  # x 2 modes: runs per launcher sweep
    worker_seeds: int  # x 2 modes: runs per 1- and 2-worker sweep
    store_seeds: int  # x 2 modes: runs into sqlite and into PostgreSQL
    cold_seeds: int  # x 4 modes: the cold ranking_modes sweep
    launchers: tuple[str, ...]


CLUSTER_SIZES: dict[Mode, ClusterSizes] = {
    "full": ClusterSizes(launcher_seeds=4, worker_seeds=10, store_seeds=50, cold_seeds=10, launchers=tuple(LAUNCHERS)),
    "quick": ClusterSizes(launcher_seeds=3, worker_seeds=5, store_seeds=10, cold_seeds=2, launchers=tuple(LAUNCHERS)),
    "tiny": ClusterSizes(launcher_seeds=1, worker_seeds=1, store_seeds=1, cold_seeds=1, launchers=("joblib",)),
}


@dataclass(frozen=True)
class SweepTiming:
    wall_s: float
    runs: list[LoggedRun]

    @property
    def n(self) -> int:
        return len(self.runs)

    def mean_timing(self, key: str) -> float:
        return mean(run.timings.get(key, float("nan")) for run in self.runs) if self.runs else float("nan")

    @property
    def span_s(self) -> float:
        """From the first run's start to the last run's end: the sweep without its start-up and shut-down."""
        return (
            max(run.end_time or run.start_time for run in self.runs) - min(run.start_time for run in self.runs)
        ) / 1000

    @property
    def startup_s(self) -> float:
        """Driver and worker start-up (interpreter, imports, validation, launcher) and shut-down."""
        return self.wall_s - self.span_s

    @property
    def runs_per_min(self) -> float:
        """Steady-state throughput, start-up excluded."""
        return 60 * self.n / self.span_s

    def overhead_per_run_s(self, workers: int) -> float:
        """Worker-seconds per run outside simulate + log, start-up excluded: config, MLflow run, store fork."""
        return self.span_s * workers / self.n - self.mean_timing("simulate_s") - self.mean_timing("log_s")


def predicted_runs_per_hour(
    workers: int, cores_per_worker: float, cores: float, run_s: float, serial_s_per_run: float
) -> float:
    """Throughput of `workers` independent workers (docs/cluster.md, "Scaling model").

    Each worker finishes a run every `run_s` seconds on one core; workers beyond the cores share them;
    work every run needs exclusively (the embedding cache's encode lock, the tracking server's writes)
    caps the whole cluster at 1 / `serial_s_per_run` runs per second, whatever the number of workers.
    """
    if workers < 1 or run_s <= 0 or cores <= 0 or cores_per_worker <= 0:
        raise ValueError("workers, run_s, cores and cores_per_worker: must be positive")
    busy = min(workers * cores_per_worker, cores) / cores_per_worker  # workers that progress at full speed
    parallel = 3600 * busy / run_s
    return parallel if serial_s_per_run <= 0 else min(parallel, 3600 / serial_s_per_run)


def smoke_sweep(
    work: Path, name: str, seeds: int, extra: Sequence[str], uri: str | None = None, cache_dir: Path | None = None
) -> SweepTiming:
    """One timed multirun of smoke jobs (seeds x MODES) into experiment `name`; its runs read back."""
    runs_dir = work / "runs"
    tracking = ("tracking=server", f"tracking.uri={uri}") if uri else ()
    arguments = [
        "-m",
        f"experiment={EXPERIMENT}",
        f"experiment_name={name}",
        f"seed=range(0,{seeds})",
        f"ranking={','.join(MODES)}",
        "simulation.show_progress=false",
        f"paths.runs_dir={runs_dir}",
        *(f"rag.cache_dir={cache_dir}",) * (cache_dir is not None),
        *tracking,
        *extra,
    ]
    store = uri or sqlite_tracking_uri(runs_dir)
    before = simulation_runs(store, name)
    run = run_entry_point(arguments, work / f"{name}.log", work / f"probe-{name}", cwd=work)
    return SweepTiming(run.wall_s, new_runs(before, simulation_runs(store, name)))


def launcher_figures(work: Path, sizes: ClusterSizes, cache_dir: Path) -> list[Figure]:
    figures = []
    for launcher in sizes.launchers:
        timing = smoke_sweep(work, f"bench_{launcher}", sizes.launcher_seeds, LAUNCHERS[launcher], cache_dir=cache_dir)
        concurrency = 2 if launcher != "submitit_local" else timing.n  # submitit_local starts every job at once
        figures += [
            figure(
                SECTION,
                f"cluster.{launcher}.startup_s",
                timing.startup_s,
                "s",
                note="sweep wall minus first-run-start to last-run-end: interpreters, imports, launcher",
            ),
            figure(
                SECTION,
                f"cluster.{launcher}.runs_per_min",
                timing.runs_per_min,
                "runs/min",
                note=f"{timing.n} smoke runs, start-up excluded",
            ),
            figure(
                SECTION,
                f"cluster.{launcher}.overhead_per_run_s",
                timing.overhead_per_run_s(concurrency),
                "s",
                note=f"span x {concurrency} concurrent / runs - mean(simulate_s + log_s)",
            ),
        ]
    return figures


def worker_figures(work: Path, sizes: ClusterSizes, cache_dir: Path, cores: int) -> list[Figure]:
    """Runs per minute on 1 and 2 workers, and the scaling model's 2-worker prediction from the 1-worker sweep."""
    figures = []
    per_run_1w = 0.0
    for workers in (1, 2):
        timing = smoke_sweep(
            work,
            f"bench_workers_{workers}",
            sizes.worker_seeds,
            ("hydra/launcher=prism_joblib", f"hydra.launcher.n_jobs={workers}"),
            cache_dir=cache_dir,
        )
        figures += [
            figure(
                SECTION,
                f"cluster.runs_per_min@{workers}w",
                timing.runs_per_min,
                "runs/min",
                note=f"{timing.n} smoke runs, joblib n_jobs={workers}, start-up ({timing.startup_s:.0f} s) excluded",
            ),
            figure(
                SECTION,
                f"cluster.run_s@{workers}w",
                timing.mean_timing("simulate_s") + timing.mean_timing("log_s"),
                "s",
                note="mean simulate_s + log_s of a run (the part a worker cannot share)",
            ),
        ]
        if workers == 1:
            per_run_1w = 60 / timing.runs_per_min
        else:
            predicted = predicted_runs_per_hour(2, 1.0, cores, per_run_1w, 0.0) / 60
            figures.append(
                figure(
                    SECTION,
                    "cluster.model_runs_per_min@2w",
                    predicted,
                    "runs/min",
                    note=f"scaling model from the 1-worker sweep ({per_run_1w:.2f} s/run, {cores} cores); "
                    f"measured / predicted = {timing.runs_per_min / predicted:.2f}",
                )
            )
    return figures


def store_figures(work: Path, sizes: ClusterSizes, cache_dir: Path) -> list[Figure]:
    from prism_experiments.ops import tracking_server

    sqlite = smoke_sweep(work, "bench_sqlite", sizes.store_seeds, LAUNCHERS["joblib"], cache_dir=cache_dir)
    # in the system's temp dir: as root, PostgreSQL runs as `postgres`, which must enter every parent
    home = Path(tempfile.mkdtemp(prefix="prism-bench-pg-"))
    home.chmod(0o755)
    try:
        state = tracking_server.start(home, mlflow_port=free_port())
        try:
            postgres = smoke_sweep(
                work,
                "bench_postgres",
                sizes.store_seeds,
                LAUNCHERS["joblib"],
                uri=state.tracking_uri,
                cache_dir=cache_dir,
            )
        finally:
            tracking_server.stop(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    figures = []
    for name, timing in (("sqlite", sqlite), ("postgres", postgres)):
        figures += [
            figure(
                SECTION,
                f"cluster.{name}.wall_s@{timing.n}",
                timing.wall_s,
                "s",
                note=f"{timing.n} smoke runs, joblib n_jobs=2, start-up included",
            ),
            figure(SECTION, f"cluster.{name}.runs_per_min", timing.runs_per_min, "runs/min", note="start-up excluded"),
            figure(
                SECTION,
                f"cluster.{name}.log_s",
                timing.mean_timing("log_s"),
                "s",
                note="mean seconds a run spends logging (params, metrics, tables, figures)",
            ),
        ]
    return figures


def cold_sweep_figures(work: Path, sizes: ClusterSizes) -> list[Figure]:
    """A `ranking_modes` sweep on an empty cache, without then with the up-front embedding pass."""
    figures = []
    for upfront in (False, True):
        name = f"cold_{'upfront' if upfront else 'in_workers'}"
        folder = work / name
        folder.mkdir()
        arguments = [
            "-m",
            "experiment=ranking_modes",
            f"experiment_name={name}",
            f"seed=range(0,{sizes.cold_seeds})",
            "simulation.show_progress=false",
            f"paths.runs_dir={folder / 'runs'}",
            f"hydra.callbacks.prism_sweep.embed_before_fanout={str(upfront).lower()}",
        ]
        run = run_entry_point(arguments, folder / "sweep.log", folder / "probe", cwd=folder)
        probe = read_probe(folder / "probe")
        figures += [
            figure(
                SECTION,
                f"cluster.cold_ranking_modes_s.{name}",
                run.wall_s,
                "s",
                note=f"{sizes.cold_seeds} seeds x 4 modes, empty cache; {probe.encoded_texts} texts encoded, "
                f"{probe.duplicate_encodes} twice",
            ),
            # a count, the same on every machine: the default text pool bounds it at 2 x 12 x 400 post texts
            # however many seeds (53,448 at 10 seeds before the pool; docs/corpus.md "Text pools")
            figure(
                SECTION,
                f"cluster.cold_ranking_modes_texts_encoded.{name}",
                probe.encoded_texts,
                "texts",
                Target(op="<=", threshold=10_000),
                note=f"{sizes.cold_seeds} seeds x 4 modes, empty cache",
            ),
        ]
    return figures


def cluster_section(inputs: SectionInputs) -> list[Figure]:
    sizes = CLUSTER_SIZES[inputs.mode]
    work = Path(tempfile.mkdtemp(prefix="cluster-", dir=inputs.work_dir))
    # every timed sweep repeats configs of this untimed one: none of them embeds a text (a fair comparison)
    smoke_sweep(
        work,
        "bench_warmup",
        max(sizes.launcher_seeds, sizes.worker_seeds, sizes.store_seeds),
        LAUNCHERS["joblib"],
        cache_dir=inputs.cache_dir,
    )
    figures = launcher_figures(work, sizes, inputs.cache_dir)
    figures += worker_figures(work, sizes, inputs.cache_dir, os.cpu_count() or 1)
    figures += store_figures(work, sizes, inputs.cache_dir)
    if inputs.cold_sweep:
        figures += cold_sweep_figures(work, sizes)
    return figures
