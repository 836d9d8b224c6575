"""One run: validate, skip if already done, simulate, measure, log; never leave a run RUNNING."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from prism_experiments.config import ExperimentConfig, world_size_warning
from prism_experiments.harness.empty_run import empty_reason, empty_warning
from prism_experiments.harness.sweep_file import SweepFile
from prism_experiments.harness.world_report import report_loaded_graph, world_file_tags
from prism_experiments.memory import peak_rss_bytes, reset_peak_rss
from prism_experiments.metrics import RunTables, step_series, summarize
from prism_experiments.ops.liveness import (
    HEARTBEAT_TAG,
    Heartbeat,
    ParentWatch,
    close_own_duplicates,
    live_holder,
    liveness_tags,
    reap_stale_runs,
)
from prism_experiments.ops.processes import (
    RECEIVED_SIGNALS,
    interrupt_behind,
    interrupt_name,
    interrupts_held,
    sigterm_as_interrupt,
)
from prism_experiments.simulation import run_simulation
from prism_experiments.tracking.artifacts import write_run_files
from prism_experiments.tracking.errors import error_line
from prism_experiments.tracking.labels import condition_label, overrides_to_pairs
from prism_experiments.tracking.limits import fit_tag
from prism_experiments.tracking.llm_metrics import llm_metrics
from prism_experiments.tracking.params import config_hash, to_params
from prism_experiments.tracking.provenance import git_commit, package_versions
from prism_experiments.tracking.run_logger import log_files, log_metric_entries, log_metrics, log_params, set_tags
from prism_experiments.tracking.store import claim_lock, client_for, ensure_experiment, resolve_tracking_uri
from prism_experiments.tracking.tags import (
    CACHE_DIR_TAG,
    CONDITION_TAG,
    CONFIG_HASH_TAG,
    EMPTY_TAG,
    ERROR_TAG,
    GIT_COMMIT_TAG,
    HOST_TAG,
    JOB_NUM_TAG,
    KIND_TAG,
    LLM_CHECK_TAG,
    LLM_MODEL_TAG,
    OVERRIDES_TAG,
    PARENT_RUN_TAG,
    PID_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    TIMING_TAG_PREFIX,
    VERSION_TAG_PREFIX,
    tag_equals,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger("prism_experiments")
#: why a job's run ends when the process that started it disappears (a sweep's driver, or Ray's raylet)
ORPHANED = "the process that started this job (the sweep driver, or Ray's raylet) died; this job stopped with it"


@dataclass
class JobOutcome:
    """How a job ended: its MLflow run (None only if none was created), status, summary and error."""

    run_id: str | None
    status: str  # FINISHED | FAILED | SKIPPED
    summary: dict[str, float]
    error: str | None = None


def find_finished_run(client: MlflowClient, experiment_id: str, digest: str) -> str | None:
    """A FINISHED simulation run with this config hash, if there is one."""
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"{tag_equals(CONFIG_HASH_TAG, digest)} and attributes.status = 'FINISHED'",
        max_results=1,
    )
    return runs[0].info.run_id if runs else None


def finished_runs_by_hash(client: MlflowClient, experiment_id: str) -> dict[str, str]:
    """Config hash -> a FINISHED run of it, for every FINISHED run of the experiment: one search, page by page,
    where a sweep's driver once asked the store once per job (~0.1 s each on sqlite)."""
    found: dict[str, str] = {}
    token = None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string="attributes.status = 'FINISHED'", max_results=10_000, page_token=token
        )
        for run in page:
            digest = run.data.tags.get(CONFIG_HASH_TAG)
            if digest:
                found.setdefault(digest, run.info.run_id)
        token = page.token
        if not token:
            return found


def run_condition(cfg: ExperimentConfig, overrides: Sequence[str], sweep: SweepFile | None) -> str:
    """The run's condition label: its mode and the sweep's varying overrides (`ranking.*` outside a sweep)."""
    pairs = overrides_to_pairs(overrides)
    if sweep is not None:
        varying = [(k, v) for k, v in pairs if k in sweep.varying_keys]
    else:
        varying = [(k, v) for k, v in pairs if k.startswith("ranking.")]
    return condition_label(cfg.ranking.mode, varying)


def run_label(cfg: ExperimentConfig, overrides: Sequence[str], sweep: SweepFile | None) -> str:
    """`<condition>, seed <n>`: what every per-run figure title names."""
    return f"{run_condition(cfg, overrides, sweep)}, seed {cfg.seed}"


def run_tags(cfg: ExperimentConfig, overrides: Sequence[str], sweep: SweepFile | None, digest: str) -> dict[str, str]:
    """The tags of a simulation run: kind, condition, seed, sweep, config hash and provenance."""
    tags = {
        KIND_TAG: SIMULATION_KIND,
        CONDITION_TAG: run_condition(cfg, overrides, sweep),
        SEED_TAG: str(cfg.seed),
        SWEEP_ID_TAG: sweep.sweep_id if sweep else "none",
        CONFIG_HASH_TAG: digest,
        GIT_COMMIT_TAG: git_commit(),
        OVERRIDES_TAG: " ".join(overrides),
        CACHE_DIR_TAG: str(cfg.cache_dir),
    }
    tags |= {f"{VERSION_TAG_PREFIX}{name}": version for name, version in package_versions().items()}
    tags |= world_file_tags(cfg)
    if sweep is not None and sweep.parent_run_id:
        tags[PARENT_RUN_TAG] = sweep.parent_run_id
    return tags


def end_run(client: MlflowClient, run_id: str, status: str, error: str | None = None) -> None:
    """Record how a run ended; never raises (a dead server must not hide the job's own error).

    What could not be recorded stays RUNNING in the store and is reaped by the next sweep.
    """
    try:
        if error is not None:
            client.set_tag(run_id, ERROR_TAG, fit_tag(error))
        client.set_terminated(run_id, status)
    except Exception as exc:
        log.error(
            "could not mark run %s %s in the store (%s); the next sweep's reaper will", run_id, status, error_line(exc)
        )


def _failed(message: str, run_id: str | None) -> JobOutcome:
    """The outcome of a job that raised, logged; its run (if one was created) is already marked."""
    log.error("run %s FAILED: %s", run_id or "(none created)", message)
    return JobOutcome(run_id, "FAILED", {}, message)


def _withdraw_claim(
    client: MlflowClient, run_id: str, reason: str, created: Callable[[str | None], None] = lambda run_id: None
) -> None:
    """A claim run that gives way: a terminal status first, so a deleted run never reads RUNNING in the store;
    `created(None)` once it has ended, in one step that no interrupt cuts."""
    with interrupts_held():
        client.set_tag(run_id, ERROR_TAG, f"claim withdrawn: {reason}")
        client.set_terminated(run_id, "KILLED")
        created(None)
    client.delete_run(run_id)


def _open_run(
    client: MlflowClient,
    experiment_id: str,
    cfg: ExperimentConfig,
    overrides: Sequence[str],
    sweep: SweepFile | None,
    job_num: int | None,
    digest: str,
    created: Callable[[str | None], None] = lambda run_id: None,
) -> tuple[str | None, JobOutcome | None]:
    """Create this job's RUNNING run, or the SKIPPED outcome when the config is finished or held live.

    `created` is called with the run's id in the same step as its creation (no interrupt falls between them), and
    with None if the run is withdrawn and ended KILLED, so that the caller always knows which run an interrupt ends."""
    if sweep is None:
        reap_stale_runs(client, [experiment_id])
    if not cfg.force:
        existing = find_finished_run(client, experiment_id, digest)
        if existing:
            log.info(
                "skipping: this config (hash %s) already has FINISHED run %s; +force=true reruns it", digest, existing
            )
            return None, JobOutcome(existing, "SKIPPED", {})
    tags = run_tags(cfg, overrides, sweep, digest) | liveness_tags()
    if job_num is not None:
        tags[JOB_NUM_TAG] = str(job_num)
    with claim_lock(client.tracking_uri):  # the claim and its checks in one step among the store's jobs
        with interrupts_held():  # a signal between the two would leave a run in the store that this job cannot name
            run_id = client.create_run(
                experiment_id, run_name=f"{tags[CONDITION_TAG]} seed={cfg.seed}", tags=tags
            ).info.run_id
            created(run_id)
        holder = live_holder(client, experiment_id, digest, run_id)
        if holder is not None:
            _withdraw_claim(client, run_id, f"run {holder.info.run_id} of another process holds this config", created)
            log.warning(
                "skipping: run %s (pid %s on %s) is running this config (hash %s) right now",
                holder.info.run_id,
                holder.data.tags.get(PID_TAG, "?"),
                holder.data.tags.get(HOST_TAG, "?"),
                digest,
            )
            return None, JobOutcome(holder.info.run_id, "SKIPPED", {})
        # a run of this config may have FINISHED between the first look and this run's creation: live_holder
        # sees only RUNNING runs, so look again now that this run is visible to any later job
        finished = None if cfg.force else find_finished_run(client, experiment_id, digest)
        if finished:
            _withdraw_claim(client, run_id, f"run {finished} of this config FINISHED while this job started", created)
            log.info("skipping: run %s of this config (hash %s) FINISHED while this job started", finished, digest)
            return None, JobOutcome(finished, "SKIPPED", {})
    close_own_duplicates(client, experiment_id, digest, run_id)
    log.info(
        "MLflow run %s (%s) in experiment %r at %s",
        run_id,
        tags[CONDITION_TAG],
        cfg.experiment_name,
        client.tracking_uri,
    )
    return run_id, None


def run_job(
    cfg: ExperimentConfig,
    overrides: Sequence[str] = (),
    sweep: SweepFile | None = None,
    reraise: bool = True,
    job_num: int | None = None,
) -> JobOutcome:
    """Run, measure and log one simulation. An exception marks the run FAILED (re-raised when
    `reraise`); Ctrl-C marks it KILLED and propagates. A config that a live run of another process
    holds is SKIPPED, so two sweeps started together never run a job twice."""
    with sigterm_as_interrupt():  # from the job's first moment: a run is never created unguarded
        return _run_job(cfg, overrides, sweep, reraise, job_num)


def _run_job(
    cfg: ExperimentConfig, overrides: Sequence[str], sweep: SweepFile | None, reraise: bool, job_num: int | None
) -> JobOutcome:
    uri = sweep.tracking_uri if sweep else resolve_tracking_uri(cfg)
    watched = sweep is not None and sweep.driver_pid not in (0, os.getpid())  # a worker process of the sweep
    if watched:
        ParentWatch.ensure()
        reset_peak_rss()  # a reused worker's high-water mark is an earlier job's: log_peak_gb is this run's
    if sweep is None and (size_warning := world_size_warning(cfg.world, cfg.agents.n_agents)):
        log.warning("%s", size_warning)  # a sweep says it once, when it starts
    resolved = cfg.model_dump(mode="json")
    digest = config_hash(resolved)
    #: this job's run while the store has it RUNNING: from its creation (in one step with it) to its withdrawal, so
    #: that an interrupt at any point in between, however loaded the machine, ends it KILLED
    live: list[str] = []
    #: whether the run was opened (the claim checks passed): an error after that is the run's own, not the store's
    opened = False
    signals_before = len(RECEIVED_SIGNALS)
    client: MlflowClient | None = None
    try:
        experiment_id = (
            sweep.experiment_id if sweep else ensure_experiment(uri, cfg.experiment_name, cfg.paths.artifacts_dir)
        )
        client = store = client_for(uri)

        def guard(run: str | None) -> None:
            """From the run's creation on, not after the claim checks: a driver can die during them."""
            live[:] = [run] if run else []
            if watched:
                ParentWatch.on_orphaned(lambda: end_run(store, run, "KILLED", ORPHANED) if run else None)

        run_id, skipped = _open_run(store, experiment_id, cfg, overrides, sweep, job_num, digest, guard)
        if skipped is not None:
            return skipped
        assert run_id is not None  # _open_run gives a run or a SKIPPED outcome
        opened = True
        heartbeat = Heartbeat(lambda: store.set_tag(run_id, HEARTBEAT_TAG, f"{time.time():.0f}"))
        return _simulate_and_log(cfg, overrides, sweep, store, run_id, resolved, heartbeat, live.clear)
    except KeyboardInterrupt as interrupt:
        if client is not None and live:
            _mark_killed(client, live[0], interrupt)
        raise
    except Exception as exc:
        if (signalled := interrupt_behind(exc, signals_before)) is not None and client is not None and live:
            _mark_killed(client, live[0], signalled)
            raise signalled from exc
        if opened:
            message = f"{type(exc).__name__}: {exc}"
        else:  # the store refused before the run was opened: the job still fails
            line = error_line(exc, store=uri)
            message = line if line.startswith("tracking store") else f"{line} (tracking store {uri})"
        if client is not None and live:
            end_run(client, live[0], "FAILED", message)
        outcome = _failed(message, live[0] if live else None)
        if reraise:
            raise
        return outcome
    finally:
        ParentWatch.on_orphaned(None)


def _mark_killed(client: MlflowClient, run_id: str, interrupt: KeyboardInterrupt) -> None:
    """End an interrupted run KILLED with one error line; the entry point then adds no second line."""
    reason = f"interrupted ({interrupt_name(interrupt)})"
    end_run(client, run_id, "KILLED", reason)
    log.error("run %s KILLED: %s", run_id, reason)
    interrupt.prism_reported = True  # type: ignore[attr-defined]


def _simulate_and_log(
    cfg: ExperimentConfig,
    overrides: Sequence[str],
    sweep: SweepFile | None,
    client: MlflowClient,
    run_id: str,
    resolved: dict[str, Any],
    heartbeat: Heartbeat,
    ended: Callable[[], None] = lambda: None,
) -> JobOutcome:
    """The body of a run whose MLflow run exists: simulate, measure, write and log, then mark it FINISHED (and call
    `ended` in the same step: a later interrupt must not turn a FINISHED run KILLED)."""
    work_dir = None
    try:
        log_params(client, run_id, to_params(resolved))
        started = time.perf_counter()
        with heartbeat:
            result = run_simulation(cfg, worlds_dir=cfg.paths.layout.worlds_dir)
        simulated = time.perf_counter() - started
        tables = RunTables.of(result)  # the summary and the step series share its feeds' entropies and cascades
        summary = summarize(tables)
        series = step_series(tables)
        if result.ranker_series:
            series = series.join(pd.DataFrame(result.ranker_series).rename_axis(series.index.name), how="left")
        logging_started = time.perf_counter()
        cfg.paths.runs_dir.mkdir(parents=True, exist_ok=True)
        work_dir = tempfile.mkdtemp(prefix=f"artifacts-{run_id}-", dir=cfg.paths.runs_dir)
        write_run_files(
            Path(work_dir),
            resolved,
            overrides,
            result,
            summary,
            series,
            tables=cfg.tracking.log_tables,
            figures=cfg.tracking.log_figures,
            ranker_debug=result.ranker_debug,
            label=run_label(cfg, overrides, sweep),
        )
        world_metrics = report_loaded_graph(cfg, result.agents, Path(work_dir))
        log_files(client, run_id, Path(work_dir))
        log_metrics(client, run_id, summary, series)
        log_metric_entries(client, run_id, world_metrics)
        if result.llm_model is not None:
            set_tags(client, run_id, llm_check_tags(client, result.llm_model))
        log_metric_entries(
            client, run_id, llm_metrics(result.decider_stats, result.decider_series, *cfg.agents.decider.token_prices())
        )
        timings = result.timings | {
            "simulate_s": simulated,
            "log_s": time.perf_counter() - logging_started,
            "log_peak_gb": peak_rss_bytes() / 1e9,
        }
        set_tags(client, run_id, {f"{TIMING_TAG_PREFIX}{k}": f"{v:.3f}" for k, v in timings.items()})
        # a run with nothing to measure still FINISHES (its config ran as asked), but says why, and is tagged before
        # it ends so that no reader ever sees it FINISHED without the tag (REQ-FAULT-2)
        empty = empty_reason(summary, len(result.agents) or cfg.agents.n_agents, cfg.simulation.n_steps)
        if empty is not None:
            set_tags(client, run_id, {EMPTY_TAG: empty})
        with interrupts_held():
            client.set_terminated(run_id, "FINISHED")
            ended()
        log.info("run %s FINISHED: %s", run_id, _headline(summary))
        if empty is not None:
            log.warning("%s", empty_warning(run_id, empty))
        return JobOutcome(run_id, "FINISHED", summary)
    finally:
        if work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)


def llm_check_tags(client: MlflowClient, identity: str) -> dict[str, str]:
    """The model an LLM run asked and the verdict of its newest fitness check (docs/llm.md, "Fitness")."""
    from prism_experiments.llm_check.check import last_check

    try:
        found = last_check(client, identity)
    except Exception as exc:  # a check that cannot be looked up must not fail the run
        return {LLM_MODEL_TAG: identity, LLM_CHECK_TAG: f"unknown ({error_line(exc)})"}
    verdict = f"{found[0]} (check run {found[1]})" if found else "never checked: make llm-check"
    return {LLM_MODEL_TAG: identity, LLM_CHECK_TAG: verdict}


def _headline(summary: dict[str, float]) -> str:
    """A few headline metrics for the log line of a finished run."""
    keys = ("feed_topic_entropy", "inn_share", "engagement_rate", "cascade_size_mean")
    return ", ".join(f"{k}={summary[k]:.3f}" for k in keys if k in summary)
