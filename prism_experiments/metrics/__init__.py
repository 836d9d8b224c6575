"""Metrics: pure functions of the event log (per-step series and the run summary).

The run summary's metrics register themselves (`registry.py`, one module each in `summary_metrics/`);
definitions, formulas and sources: docs/metrics.md.
"""

from prism_experiments.metrics.cascades import cascade_table, ccdf, structural_virality
from prism_experiments.metrics.engagement import engagement_rate_by_format
from prism_experiments.metrics.entropy import shannon_entropy
from prism_experiments.metrics.feeds import feed_jaccard_mean
from prism_experiments.metrics.inequality import gini
from prism_experiments.metrics.registry import (
    METRICS,
    Metric,
    headline_metric_names,
    metric_label,
    optional_metric_names,
    primary_metric_names,
    register_metric,
    registered_metrics,
    summary_metric_names,
)
from prism_experiments.metrics.run_tables import RunTables
from prism_experiments.metrics.series import STEP_SERIES_COLUMNS, step_series
from prism_experiments.metrics.summary import summarize

__all__ = [
    "METRICS",
    "STEP_SERIES_COLUMNS",
    "Metric",
    "RunTables",
    "cascade_table",
    "ccdf",
    "engagement_rate_by_format",
    "feed_jaccard_mean",
    "gini",
    "headline_metric_names",
    "metric_label",
    "optional_metric_names",
    "primary_metric_names",
    "register_metric",
    "registered_metrics",
    "shannon_entropy",
    "step_series",
    "structural_virality",
    "summarize",
    "summary_metric_names",
]
