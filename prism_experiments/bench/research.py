"""Section 8: the research run (`experiment=ranking_modes_10k`, seed 0) at a baseline commit and at this checkout.

REQ-PERF-3's measure: one warm research run per baseline mode, the baseline commit's code (a temporary git worktree
of it, run with this checkout's virtual environment) and this checkout's, alternating A B A B on the same machine,
the same embedding cache and the same scratch MLflow stores. Each run is the real entry point in a child process,
timed from start to exit; its engine timings come from its MLflow run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from prism_experiments.bench.hydra_runs import child_env, new_runs, simulation_runs
from prism_experiments.bench.measure import ChildRun, load_average, run_child
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.locations import PROJECT_ROOT, sqlite_tracking_uri

SECTION = 8
#: the commit REQ-PERF-3 compares against
BASELINE_COMMIT = "db402cd"
RESEARCH_RUN = ("experiment=ranking_modes_10k", "seed=0")
MODES = ("x_algo", "preference", "random", "chronological")
#: REQ-PERF-3: x_algo >= 3x faster, each of the other baseline modes >= 2x
SPEEDUP_TARGETS = {
    mode: Target(op=">=", threshold=3.0 if mode == "x_algo" else 2.0, source="REQ-PERF-3") for mode in MODES
}
LOOP_TIMINGS = ("rank_s", "decide_s", "index_new_s")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def baseline_tree(commit: str, work: Path) -> Path:
    """A detached git worktree of `commit` under `work`, compiled (removed by `remove_tree`)."""
    tree = work / f"baseline-{commit}"
    subprocess.run(
        ["git", "-C", str(PROJECT_ROOT), "worktree", "add", "--detach", "--force", str(tree), commit],
        check=True,
        capture_output=True,
    )
    # its bytecode compiled now, as `make setup` compiles this checkout's: a first run does not pay for it
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "prism_experiments")], capture_output=True)
    return tree


def remove_tree(tree: Path) -> None:
    subprocess.run(["git", "-C", str(PROJECT_ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)


def timed_research_run(
    overrides: Sequence[str], work: Path, label: str, log_name: str, tree: Path | None
) -> tuple[ChildRun, dict[str, float]]:
    """One run of the entry point (the baseline tree's code when `tree` is given) and its engine timings."""
    runs_dir = work / label
    uri = sqlite_tracking_uri(runs_dir)
    before = simulation_runs(uri, "ranking_modes_10k")
    env = child_env(None)
    if tree is not None:  # its package shadows this checkout's (the editable install's finder comes last)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH", "")]))
    arguments = [*overrides, f"paths.runs_dir={runs_dir}", "simulation.show_progress=false", "+force=true"]
    child = run_child([sys.executable, "-m", "prism_experiments", *arguments], work / log_name, env, cwd=work)
    if child.returncode != 0:
        raise RuntimeError(f"{label} run exited with {child.returncode}; log {child.log_path}:\n{child.tail()}")
    runs = new_runs(before, simulation_runs(uri, "ranking_modes_10k"))
    return child, runs[-1].timings if runs else {}


def research_figures(
    mode: str, baseline: list[tuple[ChildRun, dict]], head: list[tuple[ChildRun, dict]]
) -> list[Figure]:
    """Medians of each side's runs and their ratio."""

    def loop(timings: dict) -> float:
        return sum(timings.get(key, 0.0) for key in LOOP_TIMINGS)

    old_wall, new_wall = median([c.wall_s for c, _ in baseline]), median([c.wall_s for c, _ in head])
    old_loop, new_loop = median([loop(t) for _, t in baseline]), median([loop(t) for _, t in head])
    old_cpu, new_cpu = median([c.cpu_s for c, _ in baseline]), median([c.cpu_s for c, _ in head])
    prefix = f"research.{mode}"
    return [
        figure(SECTION, f"{prefix}.baseline_wall_s", old_wall, "s", note=f"commit {BASELINE_COMMIT}, start to exit"),
        figure(SECTION, f"{prefix}.wall_s", new_wall, "s", note="this checkout, start to exit"),
        figure(
            SECTION,
            f"{prefix}.speedup",
            old_wall / new_wall,
            "x",
            SPEEDUP_TARGETS[mode],
            note="baseline wall / this wall (medians)",
        ),
        figure(SECTION, f"{prefix}.baseline_cpu_s", old_cpu, "s", note="user + system CPU of the run's process"),
        figure(SECTION, f"{prefix}.cpu_s", new_cpu, "s"),
        figure(SECTION, f"{prefix}.cpu_speedup", old_cpu / new_cpu if new_cpu else None, "x"),
        figure(SECTION, f"{prefix}.baseline_loop_s", old_loop, "s", note="rank_s + decide_s + index_new_s"),
        figure(SECTION, f"{prefix}.loop_s", new_loop, "s"),
        figure(SECTION, f"{prefix}.loop_speedup", old_loop / new_loop if new_loop else None, "x"),
        figure(SECTION, f"{prefix}.baseline_world_s", median([t.get("world_s", 0.0) for _, t in baseline]), "s"),
        figure(SECTION, f"{prefix}.world_s", median([t.get("world_s", 0.0) for _, t in head]), "s"),
        *overhead_figures(prefix, "baseline_", baseline),
        *overhead_figures(prefix, "", head),
        figure(SECTION, f"{prefix}.baseline_peak_rss_gb", max(c.peak_rss_bytes for c, _ in baseline) / 1e9, "GB"),
        figure(SECTION, f"{prefix}.peak_rss_gb", max(c.peak_rss_bytes for c, _ in head) / 1e9, "GB"),
    ]


def overhead_figures(prefix: str, side: str, runs: list[tuple[ChildRun, dict]]) -> list[Figure]:
    """A run's per-run overhead (all but its step loop) and its parts: start-up (imports, Hydra, the MLflow run,
    the summary), the starting world, the store's index of it, and writing and logging the run's files."""

    def overhead(child: ChildRun, timings: dict) -> float:
        return child.wall_s - sum(timings.get(key, 0.0) for key in LOOP_TIMINGS)

    parts = ("world_s", "index_s", "log_s")
    startup = [overhead(c, t) - sum(t.get(key, 0.0) for key in parts) for c, t in runs]
    return [
        figure(
            SECTION,
            f"{prefix}.{side}overhead_s",
            median([overhead(c, t) for c, t in runs]),
            "s",
            note="wall - step loop: start-up + world + index + logging",
        ),
        figure(SECTION, f"{prefix}.{side}startup_s", median(startup), "s", note="wall - loop - world - index - log"),
        figure(SECTION, f"{prefix}.{side}index_s", median([t.get("index_s", 0.0) for _, t in runs]), "s"),
        figure(SECTION, f"{prefix}.{side}log_s", median([t.get("log_s", 0.0) for _, t in runs]), "s"),
    ]


def keep_head_world(overrides: Sequence[str], runs_dir: Path) -> None:
    """The research world built once into this checkout's runs directory, as a sweep's driver does before its runs
    (simulation/world_cache.py): this checkout's runs load it; the baseline's code builds its own every run."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation.world_cache import shared_starting_world

    cfg = compose_experiment([*overrides, f"paths.runs_dir={runs_dir}"])
    shared_starting_world(cfg, cfg.paths.layout.worlds_dir)


def research_section(inputs: SectionInputs) -> list[Figure]:
    from prism_experiments.bench.scale import warm_pool

    work = inputs.work_dir / "research"
    work.mkdir(parents=True, exist_ok=True)
    overrides = [*RESEARCH_RUN, f"rag.cache_dir={inputs.cache_dir}"]
    warm_pool(overrides, inputs.show_progress)
    keep_head_world(overrides, work / "head")
    figures = [figure(SECTION, "research.load_avg_start", load_average(), "", note="1-minute load average")]
    tree = baseline_tree(BASELINE_COMMIT, work)
    try:
        for mode in MODES:
            sides: dict[str, list[tuple[ChildRun, dict]]] = {"baseline": [], "head": []}
            for repeat in range(inputs.research_repeats):
                for label, code in (("baseline", tree), ("head", None)):  # alternating: a drift hits both
                    log_name = f"{mode}-{label}-{repeat}.log"
                    sides[label].append(
                        timed_research_run([*overrides, f"ranking={mode}"], work, label, log_name, code)
                    )
            figures += research_figures(mode, sides["baseline"], sides["head"])
    finally:
        remove_tree(tree)
    return [*figures, figure(SECTION, "research.load_avg_end", load_average(), "", note="1-minute load average")]
