"""The metric registry: each run-summary metric registers itself once, with its name, a one-line description and its
formula's source. The run summary, the metrics compared by default (report.html), report.html's plain names, the
MLflow grouped view's columns and docs/metrics.md's table are all read from it (docs/extending.md, "Metrics")."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from prism_experiments.metrics.run_tables import RunTables
from prism_experiments.registries import Registry

#: the package whose modules define the metrics; importing it registers them all
METRIC_PACKAGE = "prism_experiments.metrics.summary_metrics"
#: what a metric computes: a float from the run's tables, or None when the metric does not apply to the run
MetricFunction = Callable[[RunTables], float | None]
FunctionT = TypeVar("FunctionT", bound=MetricFunction)


@dataclass(frozen=True)
class Metric:
    """One metric of the run summary: its MLflow name, what it measures, and how it is shown."""

    #: the key in the summary and MLflow's metric name; stable: runs, fixtures and reports are keyed by it
    name: str
    #: one line: what the value is (docs/metrics.md's table)
    description: str
    #: where the formula comes from: a paper, a library function, or "count" / "share" for plain arithmetic
    source: str
    #: the event-log columns it reads (`table.column`, comma-separated)
    columns: str
    compute: MetricFunction
    #: plain-English name report.html puts before the key ("in-network share"); empty: the key alone
    label: str = ""
    #: compared by default (prism-compare without --metrics, hence report.html)
    primary: bool = False
    #: a column of the MLflow grouped view and of each sweep's per-condition means
    headline: bool = False
    #: in the summary only when `compute` returns a value (it returns None for runs it does not apply to)
    optional: bool = False

    @property
    def origin(self) -> str:
        """The function that computes it, as `module.name` (named in a registered-twice error)."""
        return f"{self.compute.__module__}.{self.compute.__qualname__}"


#: every metric, filled by `register_metric` as the modules of METRIC_PACKAGE are imported
METRICS: Registry[Metric] = Registry("metric", "metric", "metrics")


def register_metric(
    name: str,
    *,
    description: str,
    source: str,
    columns: str,
    label: str = "",
    primary: bool = False,
    headline: bool = False,
    optional: bool = False,
) -> Callable[[FunctionT], FunctionT]:
    """Function decorator: register the function as the metric `name` (the fields are `Metric`'s)."""

    def register(compute: FunctionT) -> FunctionT:
        METRICS.add(name, Metric(name, description, source, columns, compute, label, primary, headline, optional))
        return compute

    return register


def registered_metrics() -> tuple[Metric, ...]:
    """Every metric, in registration order (the order of the summary), after importing the metric modules."""
    importlib.import_module(METRIC_PACKAGE)
    return tuple(METRICS.values())


def summary_metric_names() -> tuple[str, ...]:
    """The keys every run summary has (the optional metrics left out), in summary order."""
    return tuple(metric.name for metric in registered_metrics() if not metric.optional)


def primary_metric_names() -> tuple[str, ...]:
    """The metrics compared when none are named, in summary order."""
    return tuple(metric.name for metric in registered_metrics() if metric.primary)


def optional_metric_names() -> tuple[str, ...]:
    """The metrics a run's summary has only when they apply to it (the political ones), in summary order."""
    return tuple(metric.name for metric in registered_metrics() if metric.optional)


def headline_metric_names() -> tuple[str, ...]:
    """The MLflow grouped view's metric columns, in summary order."""
    return tuple(metric.name for metric in registered_metrics() if metric.headline)


def metric_label(name: str) -> str:
    """The plain-English name of a registered metric; "" for an unregistered name or a metric without one."""
    registered_metrics()
    metric = METRICS.get(name)
    return metric.label if metric else ""
