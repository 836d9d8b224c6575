"""Logging a run to MLflow through the client API, in batches (no fluent global state)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from prism_experiments.tracking.limits import MAX_METRICS_PER_BATCH, MAX_PARAMS_TAGS_PER_BATCH, fit_param, fit_tag

STEP_PREFIX = "step/"


def _chunks(items: list, size: int) -> list[list]:
    """`items` in consecutive slices of at most `size` (MLflow caps what one batch may carry)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def log_params(client: MlflowClient, run_id: str, params: Mapping[str, str]) -> None:
    """Log `params` in batches, each value cut to MLflow's param limit."""
    entries = [Param(key, fit_param(value)) for key, value in sorted(params.items())]
    for chunk in _chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
        client.log_batch(run_id, params=chunk)


def set_tags(client: MlflowClient, run_id: str, tags: Mapping[str, str]) -> None:
    """Set `tags` in batches, each value cut to MLflow's tag limit."""
    entries = [RunTag(key, fit_tag(value)) for key, value in sorted(tags.items())]
    for chunk in _chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
        client.log_batch(run_id, tags=chunk)


def log_metrics(client: MlflowClient, run_id: str, summary: Mapping[str, float], series: pd.DataFrame) -> None:
    """The summary (step 0) and every per-step series under `step/<name>` with `step=`, 1000 per call.

    The series are logged first so that the summary is the latest value of its own names.
    NaN (an undefined metric, e.g. a rate with no impressions) is logged as NaN, which MLflow stores.
    """
    now = int(time.time() * 1000)
    entries = [
        Metric(f"{STEP_PREFIX}{column}", float(value), now, int(step))
        for column in series.columns
        for step, value in series[column].items()
        if _numeric(value)
    ]
    entries += [Metric(name, float(value), now, 0) for name, value in summary.items() if _numeric(value)]
    log_metric_entries(client, run_id, entries)


def log_metric_entries(client: MlflowClient, run_id: str, entries: list[Metric]) -> None:
    """Log ready-made metric entities, `MAX_METRICS_PER_BATCH` per call."""
    for chunk in _chunks(entries, MAX_METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=chunk)


def _numeric(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def log_files(client: MlflowClient, run_id: str, directory: Path) -> None:
    """Upload everything under `directory` as the run's artifacts."""
    client.log_artifacts(run_id, str(directory))
