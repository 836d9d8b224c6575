"""A calibration target set from a loaded follow graph's moments: fit the generator's knobs to a researcher's graph.

A run on `network=file` logs `world/graph_targets.yaml` (docs/world_files.md, "Fitting the generator"):
`make calibrate TARGETS=<that file>` then searches the network knobs for the generated graph whose moments are
nearest the file's, each trial at the file's size and a one-step simulation (only the starting graph matters).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

#: the moments that become targets, with their distance unit: absolute for shares, relative (a tenth of the
#: value, at least 1) for degrees. The maxima are left out: one account's degree is too noisy to fit.
SHARE_SCALE = 0.02
TARGET_MOMENTS: tuple[str, ...] = (
    "graph_mean_out_degree",
    "graph_out_degree_p50",
    "graph_out_degree_p90",
    "graph_in_degree_p90",
    "graph_in_degree_p99",
    "graph_reciprocity",
    "graph_shared_interest_share",
    "graph_clustering",
)
#: the generator's knobs (network/config.py) and the ranges searched
PARAMETERS: dict[str, dict[str, Any]] = {
    "network.mean_out_degree": {"low": 1.0, "high": 200.0, "log": True},
    "network.out_degree_sigma": {"low": 0.1, "high": 2.5},
    "network.homophily": {"low": 1.0, "high": 50.0, "log": True},
    "network.preferential_attachment": {"low": 0.0, "high": 2.0},
    "network.attachment_offset": {"low": 0.1, "high": 10.0, "log": True},
}
#: each trial simulates one step on a small corpus: the graph moments come from the starting world
RUN_OVERRIDES: tuple[str, ...] = ("simulation.n_steps=1", "corpus.n_posts=200")


def _scale(moment: str, value: float) -> float:
    return SHARE_SCALE if "degree" not in moment else max(1.0, 0.1 * abs(value))


def graph_target_set(
    moments: Mapping[str, float],
    graph_path: Path,
    sha256: str,
    n_accounts: int,
    population_overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """The target set (a `conf/calibration/` mapping) whose targets are the file's moments."""
    name = "graph_" + re.sub(r"[^A-Za-z0-9_-]", "_", graph_path.name.split(".")[0])
    targets = {}
    for moment in TARGET_MOMENTS:
        value = float(moments[moment])
        if math.isnan(value):
            continue
        scale = _scale(moment, value)
        targets[moment.removeprefix("graph_")] = {
            "metric": moment,
            "value": round(value, 6),
            "scale": round(scale, 6),
            "tolerance": round(scale, 6),
            "weight": 1.0,
            "source": {
                "citation": f"the follow graph {graph_path} (sha256 {sha256})",
                "locator": f"{moment} (network/edge_stats.py) over {n_accounts:,} accounts",
                "statement": f"{moment} = {value:.6g}",
            },
        }
    return {
        "name": name,
        "description": f"the generator's knobs fitted to the moments of {graph_path.name}",
        "reference_ranking": "x_algo",
        "run_overrides": [*RUN_OVERRIDES, *population_overrides],
        "targets": targets,
        "parameters": {key: dict(value) for key, value in PARAMETERS.items()},
    }


def graph_targets_yaml(target_set: Mapping[str, Any]) -> str:
    """The target set as a targets file (`make calibrate TARGETS=<path>`)."""
    header = (
        "# Written by a network=file run (prism_experiments/harness/graph_targets.py): the loaded graph's\n"
        "# moments as calibration targets. Fit the generator to it with: make calibrate TARGETS=<this file>\n"
    )
    return header + yaml.safe_dump(dict(target_set), sort_keys=False, allow_unicode=True, width=120)
