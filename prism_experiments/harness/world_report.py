"""What a run on the user's own world files logs beside its metrics: the files' tags, and the loaded graph next to
the generator's (printed, as `file/<moment>` and `generator/<moment>` metrics, and as artifacts under `world/`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from mlflow.entities import Metric

from prism_experiments.agents import SocialAgent
from prism_experiments.calibration.graph_targets import graph_target_set, graph_targets_yaml
from prism_experiments.config import ExperimentConfig
from prism_experiments.simulation.starting_world import corpus_topics
from prism_experiments.simulation.world_comparison import FILE, comparison_metrics, comparison_text, graph_comparison
from prism_experiments.simulation.world_files import edge_options, input_file_tags, population_options, world_accounts

log = logging.getLogger("prism_experiments")
WORLD_DIR = "world"


def world_file_tags(cfg: ExperimentConfig) -> dict[str, str]:
    """The input files' paths and digests, and which population attributes came from a file."""
    accounts = world_accounts(cfg.network, cfg.agents, corpus_topics(cfg.corpus), cfg.seed)
    groups: dict[str, object] = {"corpus": cfg.corpus, "network": cfg.network, "agents": cfg.agents}
    return input_file_tags(groups, accounts.table if accounts is not None else None)


def report_loaded_graph(cfg: ExperimentConfig, agents: Sequence[SocialAgent], directory: Path) -> list[Metric]:
    """On `network=file`: print the loaded graph beside the generator's, write `world/graph_moments.csv` and
    `world/graph_targets.yaml` (`make calibrate TARGETS=...`) into `directory`; the metrics to log. Else nothing."""
    options = edge_options(cfg.network)
    if options is None or options.path is None:
        return []
    comparison = graph_comparison(agents, cfg.network, cfg.seed)
    log.info("%s", comparison_text(comparison, len(agents)))
    world_dir = directory / WORLD_DIR
    world_dir.mkdir(parents=True, exist_ok=True)
    comparison.to_csv(world_dir / "graph_moments.csv")
    population = population_options(cfg.agents)
    overrides = (
        ["agents=file", f"agents.path={population.path}"]
        if population is not None
        else [f"agents.n_agents={len(agents)}"]
    )
    target_set = graph_target_set(comparison[FILE].to_dict(), options.path, str(options.sha256), len(agents), overrides)
    (world_dir / "graph_targets.yaml").write_text(graph_targets_yaml(target_set))
    return comparison_metrics(comparison, int(time.time() * 1000))
