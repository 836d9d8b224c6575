"""Log a comparison to MLflow as a run tagged `prism.kind=analysis`, beside the runs it compared."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.report import COMPARED_RUNS_FILE
from prism_experiments.tracking.limits import MAX_TAG_LENGTH
from prism_experiments.tracking.tags import ANALYSIS_KIND, COMPARED_RUNS_TAG, KIND_TAG, SWEEP_ID_TAG


def compared_runs_tag(run_ids: Sequence[str], limit: int = MAX_TAG_LENGTH) -> str:
    """Comma-separated run ids; cut at a whole id with a pointer to compared_runs.txt when too long."""
    joined = ",".join(run_ids)
    if len(joined) <= limit:
        return joined
    suffix = f",...({len(run_ids)} runs; full list in {COMPARED_RUNS_FILE})"
    kept = joined[: limit - len(suffix)].rsplit(",", 1)[0]
    return kept + suffix


def start_analysis_run(
    client: MlflowClient,
    experiment_id: str,
    run_name: str,
    compared_run_ids: Sequence[str],
    params: Mapping[str, str],
    sweep_id: str | None,
) -> str:
    """Create the analysis run with its tags and params; returns its id."""
    tags = {KIND_TAG: ANALYSIS_KIND, COMPARED_RUNS_TAG: compared_runs_tag(compared_run_ids)}
    if sweep_id is not None:
        tags[SWEEP_ID_TAG] = sweep_id
    run = client.create_run(experiment_id, run_name=run_name, tags=tags)
    run_id = str(run.info.run_id)
    client.log_batch(run_id, params=[Param(key, str(value)) for key, value in params.items()])
    return run_id


def finish_analysis_run(client: MlflowClient, run_id: str, directory: Path, metrics: Mapping[str, float]) -> None:
    """Log the report directory as artifacts and a few counts as metrics, then mark the run FINISHED."""
    now = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(key, float(value), now, 0) for key, value in metrics.items()])
    client.log_artifacts(run_id, str(directory))
    client.set_terminated(run_id, "FINISHED")


def fail_analysis_run(client: MlflowClient, run_id: str) -> None:
    """Mark the analysis run FAILED (the report could not be written or logged)."""
    client.set_terminated(run_id, "FAILED")
