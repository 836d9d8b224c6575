"""Simulation runs from the MLflow tracking store as plain records and tidy pandas tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from mlflow.entities import Run, ViewType
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.locations import sqlite_path
from prism_experiments.tracking.tags import (
    CONDITION_TAG,
    EMPTY_TAG,
    KIND_TAG,
    LLM_CHECK_TAG,
    LLM_MODEL_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    tag_equals,
)

SEED_PARAM = "seed"
FINISHED = "FINISHED"
SEARCH_PAGE_SIZE = 1000
INFO_COLUMNS: tuple[str, ...] = (
    "run_id", "status", "start_time", "sweep_id", "seed", "condition_tag", "llm_check", "empty",
)  # fmt: skip


@dataclass(frozen=True)
class RunRecord:
    """What the analysis reads of one MLflow run: identity, status, tags, params (str), metrics."""

    run_id: str
    status: str
    start_time: int
    tags: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RunTable:
    """Runs as three tables indexed by run_id: `info` (INFO_COLUMNS), `params` (str or NaN), `metrics` (float)."""

    info: pd.DataFrame
    params: pd.DataFrame
    metrics: pd.DataFrame


def record_from_run(run: Run) -> RunRecord:
    """The plain record of an MLflow `Run` (latest value of each metric, as `run.data.metrics` gives)."""
    return RunRecord(
        run_id=run.info.run_id,
        status=str(run.info.status),
        start_time=int(run.info.start_time or 0),
        tags=dict(run.data.tags),
        params=dict(run.data.params),
        metrics={key: float(value) for key, value in run.data.metrics.items()},
    )


def llm_check_line(tags: Mapping[str, str]) -> str | None:
    """`<model>: <verdict of its newest fitness check>` for a run whose agents asked a model, else None."""
    model = tags.get(LLM_MODEL_TAG)
    return f"{model}: {tags.get(LLM_CHECK_TAG, 'never checked: make llm-check')}" if model else None


def parse_seed(record: RunRecord) -> float:
    """Seed from tag `prism.seed`, else param `seed`; NaN when neither is an integer."""
    for raw in (record.tags.get(SEED_TAG), record.params.get(SEED_PARAM)):
        if raw is None:
            continue
        try:
            return float(int(str(raw).strip()))
        except ValueError:
            continue
    return np.nan


def runs_to_table(records: Sequence[RunRecord]) -> RunTable:
    """One row per run in each of `info`, `params` and `metrics` (missing params/metrics are NaN)."""
    run_ids = pd.Index([record.run_id for record in records], name="run_id")
    if run_ids.has_duplicates:
        raise ValueError("records: run ids must be unique")
    info = pd.DataFrame(
        {
            "status": [record.status for record in records],
            "start_time": pd.Series([record.start_time for record in records], dtype="int64"),
            "sweep_id": [record.tags.get(SWEEP_ID_TAG) for record in records],
            "seed": pd.Series([parse_seed(record) for record in records], dtype="float64"),
            "condition_tag": [record.tags.get(CONDITION_TAG) for record in records],
            "llm_check": [llm_check_line(record.tags) for record in records],
            # why a run gave no impression or no engagement (REQ-FAULT-2), None for a run with metrics
            "empty": [record.tags.get(EMPTY_TAG) for record in records],
        }
    )
    info.index = run_ids
    params = pd.DataFrame.from_records([dict(record.params) for record in records], index=run_ids)
    metrics = pd.DataFrame.from_records([dict(record.metrics) for record in records], index=run_ids)
    params = params.astype(object).reindex(columns=sorted(params.columns))
    metrics = metrics.astype("float64").reindex(columns=sorted(metrics.columns))
    return RunTable(info=info, params=params, metrics=metrics)


def require_existing_store(tracking_uri: str) -> None:
    """Refuse a sqlite URI whose file does not exist: reading must not create an empty store as a side effect."""
    path = sqlite_path(tracking_uri)
    if path is not None and not path.is_file():
        raise AnalysisInputError(
            f"tracking-uri: no MLflow store at {path}; run an experiment first or pass --tracking-uri"
        )


def simulation_filter(sweep_id: str | None = None) -> str:
    """MLflow filter string for simulation runs, optionally of one sweep."""
    clause = tag_equals(KIND_TAG, SIMULATION_KIND)
    if sweep_id is None:
        return clause
    if "'" in sweep_id or "`" in sweep_id:
        raise AnalysisInputError(f"sweep-id: must not contain quotes or backticks, got {sweep_id!r}")
    return f"{clause} AND {tag_equals(SWEEP_ID_TAG, sweep_id)}"


def search_all_runs(client: MlflowClient, experiment_id: str, filter_string: str) -> list[Run]:
    """Every active run matching `filter_string`, following MLflow's page tokens."""
    runs: list[Run] = []
    token: str | None = None
    while True:
        page = client.search_runs(
            [experiment_id],
            filter_string=filter_string,
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=SEARCH_PAGE_SIZE,
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def experiment_id_for(client: MlflowClient, experiment_name: str, tracking_uri: str) -> str:
    """The id of the experiment called `experiment_name`; AnalysisInputError listing the known names."""
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        names = sorted(e.name for e in client.search_experiments(view_type=ViewType.ACTIVE_ONLY))
        raise AnalysisInputError(
            f"experiment: no MLflow experiment named {experiment_name!r} at {tracking_uri}; "
            f"available: {', '.join(names) or '(none)'}"
        )
    return str(experiment.experiment_id)


def load_simulation_runs(client: MlflowClient, experiment_id: str, sweep_id: str | None = None) -> RunTable:
    """All simulation runs (any status) of an experiment, optionally of one sweep, as a RunTable."""
    runs = search_all_runs(client, experiment_id, simulation_filter(sweep_id))
    return runs_to_table([record_from_run(run) for run in runs])
