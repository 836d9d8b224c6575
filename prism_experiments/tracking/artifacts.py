"""A finished run's files: config, event-log tables, rendered feeds, figures, summaries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from prism_experiments.domain import SERVING_CANDIDATES
from prism_experiments.metrics import cascade_table, engagement_rate_by_format
from prism_experiments.network.graph import follower_counts
from prism_experiments.simulation import SimulationResult


def agents_table(result: SimulationResult) -> pd.DataFrame:
    """One row per agent: id, interests, activity, post rate, accounts followed and followers at the start, its
    dominant archetype (the largest of its archetype weights, the first on ties), who decided."""
    asks = set(result.llm_agent_ids)
    followers = follower_counts(a.following for a in result.agents)
    return pd.DataFrame(
        {
            "agent_id": [a.id for a in result.agents],
            "interests": [",".join(a.interests) for a in result.agents],
            "activity": [a.activity for a in result.agents],
            "post_rate": [a.post_rate for a in result.agents],
            "n_following_at_start": [len(a.following) for a in result.agents],
            "n_followers_at_start": [followers.get(a.id, 0) for a in result.agents],
            "archetype": [max(a.archetype_weights, key=a.archetype_weights.__getitem__) for a in result.agents],
            "decider": ["llm" if a.id in asks else "rules" for a in result.agents],
        }
    )


#: a scheduled run's per-step record of the mode that served it, under the run's tables/
SERVED_MODES_FILE = "served_modes.parquet"


def served_modes_table(served: Sequence[tuple[str, int]]) -> pd.DataFrame:
    """One row per step: the mode that served it and its schedule entry (0 = `ranking`, i = the i-th entry)."""
    return pd.DataFrame(
        {
            "step": range(len(served)),
            "mode": [mode for mode, _ in served],
            "schedule_entry": [entry for _, entry in served],
        }
    )


def write_run_files(
    directory: Path,
    resolved_config: Mapping[str, Any],
    overrides: Sequence[str],
    result: SimulationResult,
    summary: Mapping[str, float],
    series: pd.DataFrame,
    *,
    tables: bool = True,
    figures: bool = True,
    ranker_debug: list[dict[str, Any]] | None = None,
    label: str = "",
) -> Path:
    """Write everything a run logs as artifacts into `directory` (mirrors the artifact layout);
    `label` (condition and seed) ends every figure title."""
    (directory / "config").mkdir(parents=True, exist_ok=True)
    (directory / "config" / "resolved.yaml").write_text(yaml.safe_dump(dict(resolved_config), sort_keys=False))
    (directory / "config" / "overrides.yaml").write_text(yaml.safe_dump(list(overrides)))
    (directory / "summary.json").write_text(json.dumps(dict(summary), indent=2, sort_keys=True))
    tables_dir = directory / "tables"
    tables_dir.mkdir(exist_ok=True)
    cascades = cascade_table(result.cascade_edges)
    cascades.to_parquet(tables_dir / "cascades.parquet", index=False)
    engagement_rate_by_format(result).to_csv(tables_dir / "engagement_by_format.csv", index=False)
    series.to_csv(tables_dir / "step_series.csv")
    if result.served_modes:  # a ranking schedule: which mode served each step (docs/model.md, "Ranking schedules")
        served_modes_table(result.served_modes).to_parquet(tables_dir / SERVED_MODES_FILE, index=False)
    for name, table in result.ranker_tables.items():  # small (one row per user) and what a finding reads
        table.to_parquet(tables_dir / f"{name}.parquet", index=False)
    if tables:
        result.to_parquet(tables_dir)
        agents_table(result).to_parquet(tables_dir / "agents.parquet", index=False)
        if len(result.serving_candidates):  # stochastic serving only (docs/ope.md)
            result.serving_candidates.to_parquet(tables_dir / f"{SERVING_CANDIDATES}.parquet", index=False)
    if result.rendered_feeds:
        for key, text in result.rendered_feeds.items():
            path = directory / "feeds" / f"{key}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n", encoding="utf-8")
    if ranker_debug:
        (directory / "debug").mkdir(exist_ok=True)
        (directory / "debug" / "ranker_trace.json").write_text(json.dumps(ranker_debug, indent=1, default=str))
    if figures:
        # matplotlib's import is 0.35 s of CPU: paid by a process that draws, not by every sweep driver
        from prism_experiments.plotting import ccdf_figure, step_figure

        figures_dir = directory / "figures"
        figures_dir.mkdir(exist_ok=True)
        suffix = f" \u2014 {label}" if label else ""
        step_figure(
            series,
            "inn_share",
            figures_dir / "inn_share.png",
            "in-network share of impressions",
            f"In-network share over steps{suffix}",
        )
        step_figure(
            series,
            "feed_topic_entropy",
            figures_dir / "feed_topic_entropy.png",
            "mean feed topic entropy (bits)",
            f"Feed topic entropy over steps{suffix}",
        )
        ccdf_figure(
            cascades.assign(condition=label or "this run"),
            [label or "this run"],
            figures_dir / "cascade_size_ccdf.png",
            title=f"Cascade size CCDF{suffix}",
        )
    return directory
