"""What a sweep's parent run carries when the sweep ends: its children's count by status and the
per-condition means of the headline metrics (as MLflow table artifacts and CSVs)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from prism_experiments.metrics.registry import headline_metric_names
from prism_experiments.tracking.tags import CONDITION_TAG, TIMING_TAG_PREFIX

if TYPE_CHECKING:
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)
STATUSES: tuple[str, ...] = ("FINISHED", "FAILED", "KILLED", "RUNNING")
SUMMARY_DIR = "sweep"
MEANS_TABLE = f"{SUMMARY_DIR}/condition_means.json"
STATUS_TABLE = f"{SUMMARY_DIR}/children_by_status.json"


def children_frame(runs: Sequence[Any], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per child run: run_id, condition, status and `metrics` (default: the headline metrics; NaN when
    absent)."""
    metrics = headline_metric_names() if metrics is None else metrics
    rows = [{"run_id": run.info.run_id, "condition": run.data.tags.get(CONDITION_TAG, ""), "status": run.info.status,
             **{m: run.data.metrics.get(m, float("nan")) for m in metrics}} for run in runs]  # fmt: skip
    return pd.DataFrame(rows, columns=["run_id", "condition", "status", *metrics])


def status_counts(children: pd.DataFrame) -> pd.DataFrame:
    """Children per status (status, runs): every usual status, zeros included, then any other."""
    counts = children["status"].value_counts()
    order = [*STATUSES, *sorted(set(counts.index) - set(STATUSES))]
    return pd.DataFrame({"status": order, "runs": [int(counts.get(s, 0)) for s in order]})


def condition_means(children: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Per condition, over its FINISHED children: n_runs and the mean of each of `metrics` (default: the headline
    metrics)."""
    metrics = headline_metric_names() if metrics is None else metrics
    finished = children.loc[children["status"] == "FINISHED"]
    grouped = finished.groupby("condition", sort=True)
    means = grouped[list(metrics)].mean()
    means.insert(0, "n_runs", grouped.size())
    return means.reset_index()


def log_sweep_summary(client: MlflowClient, parent_run_id: str, runs: Sequence[Run]) -> pd.DataFrame:
    """Log the status counts (also as `children_<status>` metrics) and the condition means to the parent run."""
    children = children_frame(runs)
    counts = status_counts(children)
    means = condition_means(children)
    client.log_table(parent_run_id, data=means, artifact_file=MEANS_TABLE)
    client.log_table(parent_run_id, data=counts, artifact_file=STATUS_TABLE)
    client.log_text(parent_run_id, means.to_csv(index=False), f"{SUMMARY_DIR}/condition_means.csv")
    for row in counts.itertuples(index=False):
        client.log_metric(parent_run_id, f"children_{row.status.lower()}", row.runs)
    return means


def log_texts_encoded(client: MlflowClient, parent_run_id: str, before_fanout: int, runs: Sequence[Run]) -> int:
    """The texts the sweep sent to the embedding model (before fan-out, plus each run's `texts_encoded`), as the
    parent's `texts_encoded` metric: a count of work that is the same on every machine, unlike a time."""
    key = f"{TIMING_TAG_PREFIX}texts_encoded"
    in_runs = sum(int(float(run.data.tags[key])) for run in runs if key in run.data.tags)
    total = before_fanout + in_runs
    client.log_metric(parent_run_id, "texts_encoded", total)
    log.info("the sweep encoded %d texts (%d before fan-out, %d in its runs)", total, before_fanout, in_runs)
    return total
