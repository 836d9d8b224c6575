"""What a run on the user's own world files logs beside its metrics: the files' tags, and the loaded graph next to
the generator's (printed, as `file/<moment>` and `generator/<moment>` metrics, and as artifacts under `world/`)."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from mlflow.entities import Metric

from prism_experiments.agents import SocialAgent
from prism_experiments.agents.population_file import PopulationTable
from prism_experiments.config import ExperimentConfig
from prism_experiments.harness.graph_targets import graph_target_set, graph_targets_yaml
from prism_experiments.simulation.starting_world import corpus_topics
from prism_experiments.simulation.world_comparison import FILE, GENERATOR, comparison_text, graph_comparison
from prism_experiments.simulation.world_files import edge_options, population_options, world_accounts
from prism_experiments.tracking.tags import AGENTS_FILE_COLUMNS_TAG, INPUT_FILE_TAG_PREFIX

log = logging.getLogger("prism_experiments")
WORLD_DIR = "world"


def comparison_metrics(comparison: pd.DataFrame, timestamp_ms: int) -> list[Metric]:
    """`file/<moment>` and `generator/<moment>` as MLflow metrics (NaN left out)."""
    return [
        Metric(f"{column}/{moment}", float(value), timestamp_ms, 0)
        for column in (FILE, GENERATOR)
        for moment, value in comparison[column].items()
        if not math.isnan(float(value))
    ]


def input_file_tags(groups: dict[str, object], table: PopulationTable | None) -> dict[str, str]:
    """`prism.input.<group>.path` / `.sha256` for each group that reads a file, and the population file's columns."""
    tags: dict[str, str] = {}
    for name, group in groups.items():
        path, sha256 = getattr(group, "path", None), getattr(group, "sha256", None)
        if getattr(group, "source", None) == "file" and path is not None:
            tags[f"{INPUT_FILE_TAG_PREFIX}{name}.path"] = str(path)
            tags[f"{INPUT_FILE_TAG_PREFIX}{name}.sha256"] = str(sha256)
    if table is not None:
        tags[AGENTS_FILE_COLUMNS_TAG] = ",".join(table.file_attributes()) or "none"
    return tags


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
