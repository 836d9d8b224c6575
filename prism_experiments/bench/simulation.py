"""Section 4: the default run (`make run`) and the large preset, end to end through the real entry point.

Each preset is first warmed up (its starting corpus and interests embedded into the persistent
cache, its MLflow store and experiment created); then `python -m prism_experiments` runs in a
child process, timed from start to exit (model load, world, index, step loop and MLflow logging
included), its peak RSS read from `wait4`. The default run is then repeated with `+force=true`:
that rerun finds every text, new posts included, in the cache.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from prism_experiments.bench.hydra_runs import (
    active_agent_steps,
    new_runs,
    run_entry_point,
    simulation_runs,
)
from prism_experiments.bench.measure import timed
from prism_experiments.bench.probe.log import read_probe
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.composition import compose_experiment
from prism_experiments.embeddings import Embedder
from prism_experiments.locations import artifact_root, sqlite_tracking_uri
from prism_experiments.simulation import build_starting_world

SECTION = 4
PRESETS: dict[str, tuple[str, ...]] = {
    "default": (),
    "large": ("experiment=large",),
    "huge": ("experiment=huge",),
    # the default world ranked by the engagement mode's learned predictor: what the feedback loop costs
    "engagement_learned": ("ranking=engagement", "ranking.predictor=learned"),
    # the collaborative filter (ALS refit every 6 steps on the run's engagements), at 200 and at 10,000 agents
    "collaborative": ("ranking=collaborative",),
    "large_collaborative": ("experiment=large", "ranking=collaborative"),
    # politics on (docs/politics.md): x_algo as the reference, and the two modes of a political world (REQ-POL-11,
    # REQ-POL-12), at 200 and at 10,000 agents
    "politics": ("agents.politics.enabled=true",),
    "politics_bridging": ("agents.politics.enabled=true", "ranking=bridging"),
    "politics_stated_preference": ("agents.politics.enabled=true", "ranking=stated_preference"),
    "large_politics": ("experiment=large", "agents.politics.enabled=true"),
    "large_politics_bridging": ("experiment=large", "agents.politics.enabled=true", "ranking=bridging"),
    "large_politics_stated_preference": (
        "experiment=large",
        "agents.politics.enabled=true",
        "ranking=stated_preference",
    ),
}
#: the targets of docs/bench.md (tightened from a first 30 s and 900 s, both met: 12.5 s and 393 s)
WALL_TARGETS = {
    "default": Target(op="<=", threshold=8.0, source="docs/bench.md"),
    "large": Target(op="<=", threshold=200.0, source="docs/bench.md"),
    "huge": Target(op="<=", threshold=1800.0, source="docs/bench.md"),
}
RSS_TARGETS = {
    "large": Target(op="<=", threshold=8.0),
    "huge": Target(op="<=", threshold=8.0, source="REQ-PERF-2"),
}
ENGINE_TIMINGS = ("world_s", "index_s", "rank_s", "decide_s", "index_new_s", "total_s", "simulate_s", "log_s")
#: the process's peak RSS at the end of each phase (world built, store indexed, steps run, logged)
ENGINE_PEAKS = ("world_peak_gb", "index_peak_gb", "steps_peak_gb", "log_peak_gb")


def warm_up(overrides: Sequence[str], embedder: Embedder, show_progress: bool) -> tuple[int, float, int]:
    """Embed the preset's starting corpus and interests into the cache: (texts encoded, seconds, posts)."""
    cfg = compose_experiment(overrides)
    world = build_starting_world(cfg)
    texts = [post.text for post in world.corpus] + sorted({i for agent in world.agents for i in agent.interests})
    before = embedder.encoded_count
    _, seconds = timed(lambda: embedder.encode(texts, show_progress=show_progress))
    return embedder.encoded_count - before, seconds, len(world.corpus)


def timed_run(
    inputs: SectionInputs,
    overrides: Sequence[str],
    work: Path,
    label: str,
    prefix: str,
    wall_target: Target | None,
    rss_target: Target | None,
    note: str,
) -> list[Figure]:
    """One timed child run of the entry point and the figures read from its probe and its MLflow run."""
    cfg = compose_experiment(overrides)
    uri = sqlite_tracking_uri(work)
    before = simulation_runs(uri, cfg.experiment_name)
    probe_dir = work / f"probe-{label}"
    child = run_entry_point(overrides, work / f"{label}.log", probe_dir, cwd=work)
    probe = read_probe(probe_dir)
    runs = new_runs(before, simulation_runs(uri, cfg.experiment_name))
    if len(runs) != 1:
        raise RuntimeError(f"expected one new simulation run in {uri}, found {len(runs)}; log {child.log_path}")
    timings = runs[0].timings
    agent_steps = active_agent_steps(uri, runs[0], work / f"artifacts-{label}")
    loop_s = timings.get("rank_s", 0.0) + timings.get("decide_s", 0.0) + timings.get("index_new_s", 0.0)
    figures = [
        figure(SECTION, f"{prefix}.wall_s", child.wall_s, "s", wall_target, note=note),
        figure(SECTION, f"{prefix}.peak_rss_gb", child.peak_rss_bytes / 1e9, "GB", rss_target),
        figure(
            SECTION, f"{prefix}.agent_steps", agent_steps, "agent-steps", note="distinct (step, agent) feeds served"
        ),
        figure(
            SECTION,
            f"{prefix}.agent_steps_per_s",
            agent_steps / loop_s if loop_s else None,
            "agent-steps/s",
            note="over the step loop: rank_s + decide_s + index_new_s",
        ),
        figure(
            SECTION,
            f"{prefix}.step_s",
            loop_s / cfg.simulation.n_steps if loop_s else None,
            "s",
            note="the step loop per step: (rank_s + decide_s + index_new_s) / n_steps; a learning mode's refits are "
            "in decide_s",
        ),
        figure(SECTION, f"{prefix}.run_encoded", probe.encoded_texts, "texts", note="texts the run sent to the model"),
        figure(SECTION, f"{prefix}.model_load_s", probe.model_load_s, "s"),
    ]
    figures += [figure(SECTION, f"{prefix}.{key}", timings[key], "s") for key in ENGINE_TIMINGS if key in timings]
    return figures + [figure(SECTION, f"{prefix}.{key}", timings[key], "GB") for key in ENGINE_PEAKS if key in timings]


def run_preset(inputs: SectionInputs, name: str, rerun: bool) -> list[Figure]:
    from prism_experiments.tracking.store import ensure_experiment

    work = Path(tempfile.mkdtemp(prefix=f"sim-{name}-", dir=inputs.work_dir))
    overrides = [
        *PRESETS[name],
        f"paths.runs_dir={work}",
        f"rag.cache_dir={inputs.cache_dir}",
        "simulation.show_progress=false",
    ]
    encoded, warm_s, n_posts = warm_up(overrides, inputs.embedder(), inputs.show_progress)
    cfg = compose_experiment(overrides)
    ensure_experiment(sqlite_tracking_uri(work), cfg.experiment_name, artifact_root(work))  # as on a 2nd `make run`
    size = f"{cfg.agents.n_agents:,} agents, {n_posts:,} posts, {cfg.simulation.n_steps} steps"
    figures = [
        figure(
            SECTION,
            f"sim.{name}.warmup_encoded",
            encoded,
            "texts",
            note="starting-corpus texts a first-ever run would embed on top (0 once cached)",
        ),
        figure(SECTION, f"sim.{name}.warmup_s", warm_s, "s"),
    ]
    figures += timed_run(
        inputs,
        overrides,
        work,
        "first",
        f"sim.{name}",
        WALL_TARGETS.get(name),
        RSS_TARGETS.get(name),
        note=f"corpus cached, new posts embedded during the run ({size})",
    )
    if rerun:
        figures += timed_run(
            inputs,
            [*overrides, "+force=true"],
            work,
            "rerun",
            f"sim.{name}.rerun",
            WALL_TARGETS[name],
            RSS_TARGETS.get(name),
            note="identical rerun: every text, new posts included, cached",
        )
    return figures


def simulation_section(inputs: SectionInputs) -> list[Figure]:
    figures = run_preset(inputs, "default", rerun=True)
    learned = run_preset(inputs, "engagement_learned", rerun=False)
    values = {f.name: f.value for f in figures + learned}
    default_rank, learned_rank = values.get("sim.default.rank_s"), values.get("sim.engagement_learned.rank_s")
    figures += [
        *learned,
        figure(
            SECTION,
            "sim.engagement_learned.rank_s_vs_x_algo",
            learned_rank / default_rank if default_rank and learned_rank else None,
            "x",
            note="ranking time of engagement (learned) / x_algo",
        ),
    ]
    collaborative = run_preset(inputs, "collaborative", rerun=False)
    collaborative_rank = {f.name: f.value for f in collaborative}.get("sim.collaborative.rank_s")
    figures += [
        *collaborative,
        figure(
            SECTION,
            "sim.collaborative.rank_s_vs_x_algo",
            collaborative_rank / default_rank if default_rank and collaborative_rank else None,
            "x",
            note="ranking time of collaborative (ALS refits included) / x_algo",
        ),
    ]
    figures += political_modes(inputs, "")
    if inputs.include_large:
        figures += run_preset(inputs, "large", rerun=False)
        figures += run_preset(inputs, "large_collaborative", rerun=False)
        figures += political_modes(inputs, "large_")
    if inputs.include_huge:
        figures += run_preset(inputs, "huge", rerun=False)
    return figures


def political_modes(inputs: SectionInputs, prefix: str) -> list[Figure]:
    """x_algo, bridging and stated_preference with politics on, and each mode's time over x_algo's (the target: within
    2x at 10,000 agents, docs/politics.md)."""
    reference = run_preset(inputs, f"{prefix}politics", rerun=False)
    figures = list(reference)
    reference_s = {f.name: f.value for f in reference}.get(f"sim.{prefix}politics.step_s")
    for mode in ("bridging", "stated_preference"):
        name = f"{prefix}politics_{mode}"
        runs = run_preset(inputs, name, rerun=False)
        step_s = {f.name: f.value for f in runs}.get(f"sim.{name}.step_s")
        figures += [
            *runs,
            figure(
                SECTION,
                f"sim.{name}.step_s_vs_x_algo",
                step_s / reference_s if step_s and reference_s else None,
                "x",
                note=f"step-loop time of {mode} / x_algo's, politics on",
            ),
        ]
    return figures
