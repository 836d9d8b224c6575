"""Section 5: a real 20-run Hydra multirun (joblib launcher, 2 workers), three times: cold, warm, resumed.

The first sweep starts from an empty runs directory (MLflow store created, every corpus embedded);
the second repeats it with `+force=true` on the cache the first filled; the third resumes it (every
job FINISHED: the launcher must start none). The probe counts model
loads, texts sent to the model and base-index builds in every worker; MLflow's `prism.timing.*`
tags give the per-run costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import mean

import numpy as np

from prism_experiments.bench.hydra_runs import LoggedRun, child_env, new_runs, run_entry_point, simulation_runs
from prism_experiments.bench.probe.log import read_probe
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.embeddings import Embedder
from prism_experiments.locations import RunLayout, sqlite_tracking_uri

SECTION = 5
N_JOBS = 2
SEEDS = 10
MODES = ("x_algo", "random")
EXPERIMENT = "smoke"
SWEEP_ARGUMENTS = (
    "-m",
    f"experiment={EXPERIMENT}",
    f"seed=range(0,{SEEDS})",
    f"ranking={','.join(MODES)}",
    f"hydra.launcher.n_jobs={N_JOBS}",
    "simulation.show_progress=false",
)
RUN_TIMINGS = ("world_s", "index_s", "simulate_s", "log_s", "total_s")
ZERO = Target(op="==", threshold=0)
#: docs/bench.md: a warm smoke run costs at most 2 s of worker time outside its simulation and logging
OVERHEAD_TARGET = Target(op="<=", threshold=2.0, source="docs/bench.md")

MODEL_LOAD_SCRIPT = """
import json, time
started = time.perf_counter()
from prism_experiments.embeddings import DEFAULT_MODEL, load_model
imported = time.perf_counter()
load_model(DEFAULT_MODEL)
print(json.dumps({"import_s": imported - started, "load_s": time.perf_counter() - imported}))
"""


def fresh_model_load() -> dict[str, float]:
    """Seconds to import the embeddings package and load the model in a new interpreter (a worker's cost).

    Without the probe, which would import the package before the timer starts.
    """
    done = subprocess.run(
        [sys.executable, "-c", MODEL_LOAD_SCRIPT], capture_output=True, text=True, check=True, env=child_env(None)
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def cached_texts(cache_dir: Path) -> int:
    """Distinct texts with a vector in the cache, read from the shard files themselves."""
    directory = Embedder(cache_dir=cache_dir).cache.directory
    digests: set[bytes] = set()
    for shard in directory.glob("*.npz"):
        with np.load(shard) as data:
            digests.update(shard_digests(data["keys"]))
    return len(digests)


def shard_digests(keys: np.ndarray) -> list[bytes]:
    """32-byte digests of a shard's keys: (n, 32) uint8 rows, or legacy "S32" strings, whose
    trailing NUL bytes numpy dropped and which are padded back here."""
    if keys.dtype == np.uint8:
        return [row.tobytes() for row in keys.reshape(-1, 32)]
    return [key.ljust(32, b"\0") for key in keys.tolist()]


def mean_timings(runs: list[LoggedRun]) -> dict[str, float]:
    return {
        key: mean(run.timings[key] for run in runs)
        for key in RUN_TIMINGS
        if runs and all(key in run.timings for run in runs)
    }


def latest_sweep_dir(runs_dir: Path) -> Path:
    """The newest sweep folder of the experiment (Hydra names them by their start time)."""
    return max(RunLayout(runs_dir).experiment_outputs(EXPERIMENT).iterdir())


def started_jobs(sweep_dir: Path) -> int:
    """Jobs of a sweep that a launcher started: Hydra writes `.hydra/` into a job's folder when it runs it."""
    return sum(1 for job in sweep_dir.iterdir() if (job / ".hydra").is_dir())


def sweep_section(inputs: SectionInputs) -> list[Figure]:
    work = Path(tempfile.mkdtemp(prefix="sweep-", dir=inputs.work_dir))
    arguments = [*SWEEP_ARGUMENTS, f"paths.runs_dir={work}"]
    uri = sqlite_tracking_uri(work)
    n_runs = SEEDS * len(MODES)

    cold = run_entry_point(arguments, work / "cold.log", work / "probe-cold", cwd=work)
    cold_probe = read_probe(work / "probe-cold")
    cold_runs = simulation_runs(uri, EXPERIMENT)
    texts_before = cached_texts(work / "cache")
    warm = run_entry_point([*arguments, "+force=true"], work / "warm.log", work / "probe-warm", cwd=work)
    warm_probe = read_probe(work / "probe-warm")
    warm_runs = new_runs(cold_runs, simulation_runs(uri, EXPERIMENT))
    texts_after = cached_texts(work / "cache")
    resume = run_entry_point(arguments, work / "resume.log", work / "probe-resume", cwd=work)
    load = fresh_model_load()
    timings = mean_timings(warm_runs)

    figures = [
        figure(
            SECTION,
            "sweep.runs",
            len(warm_runs),
            "runs",
            Target(op="==", threshold=n_runs),
            note=f"experiment={EXPERIMENT}, {SEEDS} seeds x {len(MODES)} modes, joblib n_jobs={N_JOBS}",
        ),
        figure(SECTION, "sweep.cold_wall_s", cold.wall_s, "s", note="empty runs dir: store created, corpora embedded"),
        figure(SECTION, "sweep.warm_wall_s", warm.wall_s, "s", note="identical sweep, +force=true, warm cache"),
        figure(SECTION, "sweep.warm_s_per_run", warm.wall_s / n_runs, "s"),
        figure(SECTION, "sweep.resume_wall_s", resume.wall_s, "s", note="the same sweep again: every job FINISHED"),
        figure(
            SECTION,
            "sweep.resume_started_jobs",
            started_jobs(latest_sweep_dir(work)),
            "jobs",
            ZERO,
            note="jobs the launcher started in that resumed sweep (a started job has Hydra's .hydra/ folder)",
        ),
    ]
    figures += [
        figure(SECTION, f"sweep.run_{key}", value, "s", note="mean over the warm sweep's runs")
        for key, value in timings.items()
    ]
    if "simulate_s" in timings and "log_s" in timings:
        overhead = warm.wall_s * N_JOBS / n_runs - timings["simulate_s"] - timings["log_s"]
        figures.append(
            figure(
                SECTION,
                "sweep.overhead_per_run_s",
                overhead,
                "s",
                OVERHEAD_TARGET,
                note="worker time per run outside simulate + log: launcher, config, MLflow run, model load",
            )
        )
    figures += [
        figure(SECTION, "sweep.fresh_import_s", load["import_s"], "s", note="import prism_experiments.embeddings"),
        figure(SECTION, "sweep.fresh_model_load_s", load["load_s"], "s", note="load_model in a new process"),
        figure(
            SECTION,
            "sweep.model_loads",
            warm_probe.model_loads,
            "loads",
            Target(op="<=", threshold=N_JOBS),
            note=f"model loads in the warm sweep ({warm_probe.processes} processes logged)",
        ),
        figure(
            SECTION,
            "sweep.index_builds",
            warm_probe.index_builds,
            "builds",
            note=f"base-corpus index builds in the warm sweep ({warm_probe.distinct_corpora} distinct corpora, "
            f"{warm_probe.index_build_s:.1f} s in all)",
        ),
        figure(
            SECTION,
            "sweep.same_corpus_rebuilds",
            cold_probe.same_corpus_rebuilds + warm_probe.same_corpus_rebuilds,
            "builds",
            ZERO,
            note="index builds of a corpus the same worker had already indexed",
        ),
        figure(
            SECTION, "sweep.cold_encoded", cold_probe.encoded_texts, "texts", note="texts sent to the model, cold sweep"
        ),
        figure(
            SECTION,
            "sweep.cold_duplicate_encodes",
            cold_probe.duplicate_encodes,
            "texts",
            ZERO,
            note="texts the cold sweep sent to the model more than once (across workers)",
        ),
        figure(
            SECTION,
            "sweep.warm_encoded",
            warm_probe.encoded_texts,
            "texts",
            ZERO,
            note="texts the identical warm sweep sent to the model",
        ),
        figure(
            SECTION,
            "sweep.warm_new_cached_texts",
            texts_after - texts_before,
            "texts",
            ZERO,
            note="distinct texts added to the embedding cache during the warm sweep",
        ),
    ]
    return figures
