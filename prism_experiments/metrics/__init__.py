"""Metrics: pure functions of the event log (per-step series and the run summary).

Definitions, formulas and sources: docs/metrics.md.
"""

from prism_experiments.metrics.cascades import cascade_table, ccdf, structural_virality
from prism_experiments.metrics.engagement import engagement_rate_by_format
from prism_experiments.metrics.entropy import shannon_entropy
from prism_experiments.metrics.feeds import feed_jaccard_mean
from prism_experiments.metrics.inequality import gini
from prism_experiments.metrics.series import STEP_SERIES_COLUMNS, step_series
from prism_experiments.metrics.summary import PRIMARY_METRICS, SUMMARY_METRICS, summarize

__all__ = [
    "PRIMARY_METRICS",
    "STEP_SERIES_COLUMNS",
    "SUMMARY_METRICS",
    "cascade_table",
    "ccdf",
    "engagement_rate_by_format",
    "feed_jaccard_mean",
    "gini",
    "shannon_entropy",
    "step_series",
    "structural_virality",
    "summarize",
]
