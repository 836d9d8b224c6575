"""Logging a run to MLflow through the client API, in batches (no fluent global state)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from prism_experiments.tracking.params import MAX_PARAM_LENGTH

STEP_PREFIX = "step/"
_PARAMS_PER_BATCH = 100  # mlflow/utils/validation.py MAX_PARAMS_TAGS_PER_BATCH
_METRICS_PER_BATCH = 1000  # MAX_METRICS_PER_BATCH
_TAG_LIMIT = 8000  # MAX_TAG_VAL_LENGTH


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def log_params(client: MlflowClient, run_id: str, params: Mapping[str, str]) -> None:
    entries = [Param(key, value[:MAX_PARAM_LENGTH]) for key, value in sorted(params.items())]
    for chunk in _chunks(entries, _PARAMS_PER_BATCH):
        client.log_batch(run_id, params=chunk)


def set_tags(client: MlflowClient, run_id: str, tags: Mapping[str, str]) -> None:
    entries = [RunTag(key, str(value)[:_TAG_LIMIT]) for key, value in sorted(tags.items())]
    for chunk in _chunks(entries, _PARAMS_PER_BATCH):
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
    for chunk in _chunks(entries, _METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=chunk)


def _numeric(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def log_files(client: MlflowClient, run_id: str, directory: Path) -> None:
    client.log_artifacts(run_id, str(directory))
