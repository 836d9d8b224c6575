"""Section 9 (`--sections scale`): the research world at 1K, 10K, 100K and 1M agents.

Each point is `experiment=ranking_modes_10k` (x_algo, seed 0, 48 steps) with `agents.n_agents=N` and
`corpus.n_posts=2N`, run through the real entry point in a child process on a warm text-pool cache: wall
time, time per agent-step of the step loop (agents x steps simulated, active or not) and peak RSS, with the
engine's phase timings and a log-log figure of all points.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prism_experiments.bench.measure import load_average
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.bench.simulation import ENGINE_PEAKS, ENGINE_TIMINGS
from prism_experiments.locations import RunLayout

SECTION = 9
POSTS_PER_AGENT = 2
#: REQ-PERF-4: the 1M-agent point fits on one 24 GB machine
RSS_TARGET = Target(op="<=", threshold=24.0, source="REQ-PERF-4")
#: REQ-PERF-4: time per agent-step grows by at most 2x from 10K to 1M agents
GROWTH_TARGET = Target(op="<=", threshold=2.0, source="REQ-PERF-4")


def warm_pool(overrides: Sequence[str], show_progress: bool) -> int:
    """Embed the whole text pool of the config's corpus into its cache; returns the texts encoded now."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.corpus.templates import pooled_texts
    from prism_experiments.simulation.starting_world import corpus_topics
    from prism_experiments.simulation.stores import rag_embedder

    cfg = compose_experiment(list(overrides))
    embedder = rag_embedder(cfg.rag, cfg.cache_dir)
    before = embedder.encoded_count
    texts = pooled_texts(corpus_topics(cfg.corpus), cfg.corpus.hashtag_fraction, cfg.corpus.text_pool_size)
    embedder.encode(texts, show_progress=show_progress)
    return embedder.encoded_count - before


def scale_point(inputs: SectionInputs, n_agents: int) -> list[Figure]:
    from prism_experiments.bench.simulation import timed_run
    from prism_experiments.composition import compose_experiment
    from prism_experiments.locations import artifact_root, sqlite_tracking_uri
    from prism_experiments.tracking.store import ensure_experiment

    work = inputs.work_dir / f"scale-{n_agents}"
    work.mkdir(parents=True, exist_ok=True)
    overrides = [
        "experiment=ranking_modes_10k",
        "seed=0",
        "ranking=x_algo",
        f"agents.n_agents={n_agents}",
        f"corpus.n_posts={POSTS_PER_AGENT * n_agents}",
        f"paths.runs_dir={work}",
        f"rag.cache_dir={inputs.cache_dir}",
        "simulation.show_progress=false",
    ]
    cfg = compose_experiment(overrides)
    ensure_experiment(sqlite_tracking_uri(work), cfg.experiment_name, artifact_root(work))
    load = load_average()
    prefix = f"scale.{n_agents}"
    figures = timed_run(inputs, overrides, work, "run", prefix, None, RSS_TARGET if n_agents >= 10**6 else None, "")
    values = {f.name: f.value for f in figures}
    loop = sum(values.get(f"{prefix}.{key}") or 0.0 for key in ("rank_s", "decide_s", "index_new_s"))
    agent_steps = n_agents * cfg.simulation.n_steps
    keep = {f"{prefix}.{key}" for key in ("wall_s", "peak_rss_gb", "agent_steps", *ENGINE_TIMINGS, *ENGINE_PEAKS)}
    return [
        figure(SECTION, f"{prefix}.load_avg_start", load, "", note="1-minute load average"),
        *(f.model_copy(update={"section": SECTION}) for f in figures if f.name in keep),
        figure(
            SECTION,
            f"{prefix}.us_per_agent_step",
            1e6 * loop / agent_steps,
            "us",
            note="step loop (rank + decide + index new posts) / (agents x steps)",
        ),
        figure(
            SECTION, f"{prefix}.wall_us_per_agent_step", 1e6 * (values[f"{prefix}.wall_s"] or 0.0) / agent_steps, "us"
        ),
    ]


def scale_plot(figures: list[Figure], scale_agents: Sequence[int], path: Path) -> Path:
    """Wall time and time per agent-step against agents, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = {f.name: f.value for f in figures}
    agents = [n for n in scale_agents if values.get(f"scale.{n}.wall_s")]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    axes[0].loglog(agents, [values[f"scale.{n}.wall_s"] for n in agents], "o-", label="wall")
    axes[0].loglog(
        agents,
        [values.get(f"scale.{n}.simulate_s") or values[f"scale.{n}.total_s"] for n in agents],
        "s--",
        label="engine",
    )
    axes[0].set_xlabel("agents")
    axes[0].set_ylabel("seconds")
    axes[0].legend()
    axes[1].loglog(agents, [values[f"scale.{n}.us_per_agent_step"] for n in agents], "o-")
    axes[1].set_xlabel("agents")
    axes[1].set_ylabel("µs per agent-step (step loop)")
    fig.suptitle("research world, 2 posts per agent, 48 steps, x_algo")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def scale_section(inputs: SectionInputs) -> list[Figure]:
    warm_pool(["experiment=ranking_modes_10k", f"rag.cache_dir={inputs.cache_dir}"], inputs.show_progress)
    figures: list[Figure] = []
    for n_agents in inputs.scale_agents:
        figures += scale_point(inputs, n_agents)
    values = {f.name: f.value for f in figures}
    small, large = values.get("scale.10000.us_per_agent_step"), values.get("scale.1000000.us_per_agent_step")
    if small and large:
        figures.append(
            figure(SECTION, "scale.growth_10k_to_1m", large / small, "x", GROWTH_TARGET, note="time per agent-step")
        )
    if len([n for n in inputs.scale_agents if values.get(f"scale.{n}.wall_s")]) > 1:
        scale_plot(
            figures, inputs.scale_agents, RunLayout(inputs.runs_dir).bench_dir / f"scale-{inputs.work_dir.name}.png"
        )
    return figures
