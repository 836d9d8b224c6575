"""`make reproduce RUN=<id>`: re-run a logged run from its resolved-config artifact and compare,
metric by metric, the new summary with the logged one."""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
from pathlib import Path

import yaml

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.locations import tracking_uri_for
from prism_experiments.metrics import summarize
from prism_experiments.simulation import run_simulation
from prism_experiments.tracking.provenance import git_commit
from prism_experiments.tracking.store import client_for
from prism_experiments.tracking.tags import ERROR_TAG, GIT_COMMIT_TAG

log = logging.getLogger("prism_experiments")


def same_value(logged: float | None, new: float) -> bool:
    """Exactly equal, or both NaN (an undefined metric stays undefined)."""
    if logged is None:
        return False
    return (math.isnan(logged) and math.isnan(new)) or logged == new


def reproduce(run_id: str, tracking_uri: str) -> tuple[list[tuple[str, float | None, float, bool]], list[str]]:
    """(metric, logged, new, equal) for every summary metric of the run, and warnings."""
    client = client_for(tracking_uri)
    run = client.get_run(run_id)
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
