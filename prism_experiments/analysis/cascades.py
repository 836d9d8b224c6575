"""Cascade sizes pooled per condition from the runs' `tables/cascades.parquet` artifacts, and KS tests."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.stats import holm_adjust, ks_test

CASCADES_ARTIFACT = "tables/cascades.parquet"
PROGRESS_BAR_ENV = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
KS_COLUMNS: tuple[str, ...] = (
    "condition_a", "condition_b", "n_a", "n_b", "ks_statistic", "p_value", "p_holm", "note",
)  # fmt: skip


@contextmanager
def quiet_downloads() -> Iterator[None]:
    """MLflow draws a progress bar per downloaded file; one per run would bury the console summary."""
    previous = os.environ.get(PROGRESS_BAR_ENV)
    os.environ[PROGRESS_BAR_ENV] = "false"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(PROGRESS_BAR_ENV, None)
        else:
            os.environ[PROGRESS_BAR_ENV] = previous


def download_cascade_sizes(
    client: MlflowClient, run_ids: Sequence[str], destination: Path
) -> tuple[pd.DataFrame, list[str]]:
    """(run_id, size) for every cascade of every run, and a warning per run whose artifact is unreadable."""
    frames: list[pd.DataFrame] = []
    failed: list[str] = []
    with quiet_downloads():
        for run_id in run_ids:
            try:
                local = client.download_artifacts(run_id, CASCADES_ARTIFACT, str(destination / run_id))
                sizes = pd.read_parquet(local, columns=["size"])["size"].to_numpy(dtype=float)
            except (MlflowException, OSError, KeyError, ValueError):
                failed.append(run_id)
                continue
            frames.append(pd.DataFrame({"run_id": run_id, "size": sizes}))
    warnings = (
        [f"no readable {CASCADES_ARTIFACT} for {len(failed)} run(s), left out of the CCDF: {', '.join(failed)}"]
        if failed
        else []
    )
    if not frames:
        return pd.DataFrame({"run_id": pd.Series(dtype=object), "size": pd.Series(dtype=float)}), warnings
    return pd.concat(frames, ignore_index=True), warnings


def pool_by_condition(sizes: pd.DataFrame, tidy: pd.DataFrame) -> pd.DataFrame:
    """(condition, run_id, size): cascade sizes labelled with their run's condition."""
    return sizes.merge(tidy[["run_id", "condition"]], on="run_id", how="inner")[["condition", "run_id", "size"]]


def compare_cascade_sizes(pooled: pd.DataFrame, conditions: Sequence[str]) -> pd.DataFrame:
    """Pairwise two-sample KS test of pooled cascade sizes, Holm-adjusted over the pairs."""
    groups = {c: pooled.loc[pooled["condition"] == c, "size"].to_numpy(dtype=float) for c in conditions}
    rows = []
    for a, b in combinations(conditions, 2):
        result = ks_test(groups[a], groups[b])
        rows.append(
            {
                "condition_a": a, "condition_b": b, "n_a": int(groups[a].size), "n_b": int(groups[b].size),
                "ks_statistic": result.statistic, "p_value": result.pvalue, "note": result.note,
            }
        )  # fmt: skip
    table = pd.DataFrame(rows, columns=[c for c in KS_COLUMNS if c != "p_holm"])
    table["p_holm"] = holm_adjust(table["p_value"].to_numpy()) if len(table) else np.array([])
    return table.reindex(columns=list(KS_COLUMNS))
