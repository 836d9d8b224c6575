"""The replication as an MLflow run of kind `replication`: verdicts and the headline as tags, effects and counts as
metrics, the report as artifacts. Every count and finding verdict is of evidence claims only: consistency checks
are logged per claim but never counted as replication. A smoke run (--quick) is never logged: it gives no verdict. A
full-size run (--full) goes to its own experiment, `replication_full`, with its simulation runs, tagged
`prism.replication_size=full`."""

from __future__ import annotations

import math
import time
from pathlib import Path

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.analysis_run import compared_runs_tag
from prism_experiments.replication.model import (
    HOLDING,
    HOLDS,
    NO_EVIDENCE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    WITHIN_BAND,
)
from prism_experiments.replication.suite import SuiteResult
from prism_experiments.replication.verdicts import ALPHA, headline
from prism_experiments.tracking.store import ensure_experiment
from prism_experiments.tracking.tags import (
    COMPARED_RUNS_TAG,
    KIND_TAG,
    REPLICATION_HEADLINE_TAG,
    REPLICATION_KIND,
    REPLICATION_SET_TAG,
    REPLICATION_SIZE_TAG,
    VERDICT_TAG_PREFIX,
)

#: the MLflow experiment the replication runs (and their simulation runs) live in, at the experiment files' size
REPLICATION_EXPERIMENT = "replication"


def start_replication_run(client: MlflowClient, uri: str, artifacts_dir: Path, result: SuiteResult,
                          run_name: str, experiment: str = REPLICATION_EXPERIMENT) -> str:  # fmt: skip
    """Create the run (RUNNING) in `experiment` with what defines the replication: set version, family, seeds,
    findings, and at --full the size (tag and each finding's overrides) and the findings not run at it."""
    experiment_id = ensure_experiment(uri, experiment, artifacts_dir)
    full = result.options.full
    tags = {KIND_TAG: REPLICATION_KIND, REPLICATION_SET_TAG: str(result.version),
            COMPARED_RUNS_TAG: compared_runs_tag(result.run_ids)}  # fmt: skip
    if full:
        tags[REPLICATION_SIZE_TAG] = "full"
    run_id = str(client.create_run(experiment_id, run_name=run_name, tags=tags).info.run_id)
    params = {
        "replication_set": str(result.version),
        "findings": ",".join(f.name for f in result.findings),
        "family": f"holm over {result.family_size} evidence claims (consistency checks: raw p, outside it)",
        "alpha": str(ALPHA),
        "bootstrap_seed": str(result.options.bootstrap_seed),
        **{f"seeds.{f.name}": str(result.options.seeds_of(f)) for f in result.findings},
        **({f"full.{f.name}": " ".join(f.full_overrides) for f in result.findings} if full else {}),
        **({"not_run_at_full_size": ",".join(f.name for f in result.not_run)} if full and result.not_run else {}),
    }
    client.log_batch(run_id, params=[Param(key, value) for key, value in params.items()])
    return run_id


def finish_replication_run(client: MlflowClient, run_id: str, result: SuiteResult, directory: Path) -> None:
    """Verdict and headline tags, per-claim metrics and the evidence-only counts, the report as artifacts; then
    FINISHED."""
    now = int(time.time() * 1000)
    verdicts = list(result.verdicts.values())
    evidence = [r for r in result.results if r.evidence]
    checks = [r for r in result.results if not r.evidence]
    metrics: dict[str, float] = {
        "n_findings": len(verdicts),
        # findings by their verdict, which is their evidence claims' (a finding of checks only: n_consistency_only)
        **{f"n_{v.replace(' ', '_')}": verdicts.count(v) for v in (REPRODUCED, WITHIN_BAND, NOT_REPRODUCED,
                                                                     NOT_TESTABLE)},
        "n_consistency_only": verdicts.count(NO_EVIDENCE),
        "n_evidence_claims": len(evidence),
        "n_evidence_reproduced": sum(r.verdict in HOLDING for r in evidence),
        "n_consistency_checks": len(checks),
        "n_consistency_hold": sum(r.verdict == HOLDS for r in checks),
    }  # fmt: skip
    for r in result.results:
        for name in ("effect", "ci_low", "ci_high", "p_value", "p_holm", "seeds_80"):
            value = getattr(r, name)
            if math.isfinite(value):
                metrics[f"{r.finding}.{r.claim}.{name}"] = value
    tags = [RunTag(f"{VERDICT_TAG_PREFIX}{name}", verdict) for name, verdict in result.verdicts.items()]
    tags.append(RunTag(REPLICATION_HEADLINE_TAG, headline(result.results)))
    client.log_batch(run_id, metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()], tags=tags)
    client.log_artifacts(run_id, str(directory))
    client.set_terminated(run_id, "FINISHED")
