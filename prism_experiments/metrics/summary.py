"""The run summary: one float per registered metric (metrics/registry.py), under the names MLflow logs them."""

from __future__ import annotations

from prism_experiments.metrics._tables import require_columns
from prism_experiments.metrics.feeds import DEFAULT_MAX_FEEDS_FOR_JACCARD
from prism_experiments.metrics.moments import POSTER_FOLLOWER_RATIO, poster_follower_ratio
from prism_experiments.metrics.registry import registered_metrics
from prism_experiments.metrics.run_tables import RunTables
from prism_experiments.network.edge_stats import agents_graph_moments


def summarize(result: object, *, max_feeds_for_jaccard: int = DEFAULT_MAX_FEEDS_FOR_JACCARD) -> dict[str, float]:
    """Every registered metric's value for a run, in registration order; an optional metric only when it applies.

    `result` is an EventLog or any object with the five event-log DataFrames as attributes.
    Ratios and means over an empty set are NaN; counts and cascade statistics are 0.0.
    """
    tables = RunTables.of(result, max_feeds_for_jaccard)
    require_columns(tables.exposures, "exposures", ["topic", "in_network", "interest_similarity"])
    summary: dict[str, float] = {}
    for metric in registered_metrics():
        value = metric.compute(tables)
        if value is None and not metric.optional:
            raise TypeError(f"metric {metric.name}: {metric.origin} returned None; only an optional metric may")
        if value is not None:
            summary[metric.name] = value
    return summary


def calibration_moments(result: object) -> dict[str, float]:
    """The run summary (the authorship and cascade-shape moments included) plus the starting graph's moments
    (`network/edge_stats.py`, and the followers of the most prolific posters: `moments.poster_follower_ratio`);
    `result` carries the event log and `agents`, whose `following` is the initial graph."""
    agents = getattr(result, "agents", [])
    return summarize(result) | agents_graph_moments(agents) | {POSTER_FOLLOWER_RATIO: poster_follower_ratio(agents)}
