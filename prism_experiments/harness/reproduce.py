"""`make reproduce RUN=<id>`: re-run a logged run from its resolved-config artifact and compare,
metric by metric, the new summary with the logged one."""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.locations import tracking_uri_for
from prism_experiments.metrics import summarize
from prism_experiments.simulation import run_simulation
from prism_experiments.tracking.provenance import git_commit
from prism_experiments.tracking.store import client_for
from prism_experiments.tracking.tags import (
    CONDITION_TAG,
    ERROR_TAG,
    GIT_COMMIT_TAG,
    KIND_TAG,
    PARENT_RUN_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    SWEEP_KIND,
    tag_equals,
)

if TYPE_CHECKING:
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

log = logging.getLogger("prism_experiments")


def same_value(logged: float | None, new: float) -> bool:
    """Exactly equal, or both NaN (an undefined metric stays undefined)."""
    if logged is None:
        return False
    return (math.isnan(logged) and math.isnan(new)) or logged == new


#: at most this many child runs are listed when the id given is a sweep's parent
CHILDREN_LISTED = 10


def _simulation_run(client: MlflowClient, run_id: str, tracking_uri: str) -> Run:
    """The run, or ConfigError naming the store searched (not there) or the runs to pass instead (not a simulation
    run: a sweep's parent lists its children)."""
    from mlflow.exceptions import MlflowException

    try:
        run = client.get_run(run_id)
    except MlflowException as error:
        if error.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise
        raise ConfigError(
            f"reproduce: run {run_id} is not in the tracking store {tracking_uri}; pass the store it was logged to "
            f"(--tracking-uri, or MLFLOW_TRACKING_URI)"
        ) from None
    kind = run.data.tags.get(KIND_TAG, SIMULATION_KIND)
    if kind == SIMULATION_KIND:
        return run
    children = client.search_runs(
        [run.info.experiment_id], filter_string=tag_equals(PARENT_RUN_TAG, run_id), max_results=1000
    )
    listed = [
        f"{child.info.run_id} ({child.data.tags.get(CONDITION_TAG, '?')}, seed {child.data.tags.get(SEED_TAG, '?')}, "
        f"{child.info.status})"
        for child in children[:CHILDREN_LISTED]
    ]
    more = f", and {len(children) - CHILDREN_LISTED} more" if len(children) > CHILDREN_LISTED else ""
    what = (
        f"a sweep's parent run (sweep {run.data.tags.get(SWEEP_ID_TAG, '?')})"
        if kind == SWEEP_KIND
        else f"a {kind} run"
    )
    raise ConfigError(
        f"reproduce: run {run_id} is {what}, not a simulation run; "
        + (
            f"reproduce one of its {len(children)} child runs: {', '.join(listed)}{more}"
            if children
            else "it has no child runs"
        )
    )


def reproduce(run_id: str, tracking_uri: str) -> tuple[list[tuple[str, float | None, float, bool]], list[str]]:
    """(metric, logged, new, equal) for every summary metric of the run, and warnings."""
    client = client_for(tracking_uri)
    run = _simulation_run(client, run_id, tracking_uri)
    if run.info.status != "FINISHED":
        error = run.data.tags.get(ERROR_TAG, "")
        raise ConfigError(
            f"reproduce: run {run_id} never finished (status {run.info.status}"
            + (f": {error}" if error else "")
            + "); only a FINISHED run can be reproduced"
        )
    warnings = []
    logged_commit = run.data.tags.get(GIT_COMMIT_TAG, "unknown")
    current = git_commit()
    if logged_commit != current:
        warnings.append(f"code version differs: the run was logged at {logged_commit}, this is {current}")
    with tempfile.TemporaryDirectory() as tmp:
        path = client.download_artifacts(run_id, "config/resolved.yaml", tmp)
        resolved = yaml.safe_load(Path(path).read_text())
    config = ExperimentConfig.from_mapping(resolved | {"force": True})
    config.simulation.show_progress = sys.stderr.isatty()
    summary = summarize(run_simulation(config))
    logged = run.data.metrics
    names = list(summary)
    rows = [(name, logged.get(name), summary[name], same_value(logged.get(name), summary[name])) for name in names]
    return rows, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reproduce", description=__doc__)
    parser.add_argument("run_id", help="the MLflow run id to re-run")
    parser.add_argument("--tracking-uri", default=None, help="default: $MLFLOW_TRACKING_URI or runs/mlflow.db")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        rows, warnings = reproduce(args.run_id, tracking_uri_for(args.tracking_uri))
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except Exception as exc:  # a missing run or artifact: one clear line
        print(f"reproduce: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    width = max(len(name) for name, *_ in rows)
    print(f"{'metric':<{width}}  {'logged':>14}  {'new':>14}  equal")
    for name, logged, new, equal in rows:
        shown = "missing" if logged is None else f"{logged:.6g}"
        print(f"{name:<{width}}  {shown:>14}  {new:>14.6g}  {'yes' if equal else 'NO'}")
    differing = [name for name, *_, equal in rows if not equal]
    print(
        f"{len(rows) - len(differing)} of {len(rows)} metrics equal"
        + (f"; differ: {', '.join(differing)}" if differing else "")
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
