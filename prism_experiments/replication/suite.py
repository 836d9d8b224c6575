"""One replication: plan the runs, make the missing ones, measure every seed, and decide every claim.

The verdicts come only from the runs' tables through `verdicts.py`; nothing here knows what a finding "should"
give. A finding that cannot be tested (its mechanism is missing) gets its reason and no runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException
from tqdm import tqdm

from prism_experiments.analysis.run_tables import run_tables
from prism_experiments.replication.model import NOT_TESTABLE, SMOKE, ClaimResult, Finding, SeedValues
from prism_experiments.replication.registry import FAMILY_SIZE, FULL_SIZE, REPLICATION_SET_VERSION, select
from prism_experiments.replication.runs import Job, Plan, find_runs, plan_jobs, run_sweeps, sweep_commands
from prism_experiments.replication.verdicts import (
    DEFAULT_POWER_REPLICATES,
    DEFAULT_RESAMPLES,
    adjust_family,
    empty_result,
    evaluate_claim,
    finding_verdict,
    judge,
)

#: the fewest seeds a replication takes: a paired test needs 2
MIN_SEEDS = 2


@dataclass(frozen=True)
class SuiteOptions:
    """What to replicate and how: findings (None: all), seeds per finding (None: each finding's own), smoke size
    (--quick) or full size (--full: only the findings with `full_overrides`, at that size, with verdicts)."""

    only: tuple[str, ...] | None = None
    seeds: int | None = None
    quick: bool = False
    full: bool = False
    #: start sweeps for missing runs (False: evaluate only the runs already in MLflow)
    run: bool = True
    bootstrap_seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    power_replicates: int = DEFAULT_POWER_REPLICATES

    def __post_init__(self) -> None:
        if self.seeds is not None and self.seeds < MIN_SEEDS:
            raise ValueError(f"--seeds: must be an integer >= {MIN_SEEDS}, got {self.seeds}")
        if self.quick and self.full:
            raise ValueError("--full and --quick: choose one (--quick: every finding at a smoke size, no verdict; "
                             "--full: the findings with a full size at that size, with verdicts)")  # fmt: skip
        if self.full and self.only:
            lacking = [finding.name for finding in select(self.only) if not finding.full_overrides]
            if lacking:
                raise ValueError(f"--full --only: {', '.join(lacking)} {'has' if len(lacking) == 1 else 'have'} no "
                                 f"full size; the findings that have one: {', '.join(FULL_SIZE)}")  # fmt: skip

    def seeds_of(self, finding: Finding) -> int:
        return self.seeds or (finding.quick_seeds if self.quick else finding.seeds)


@dataclass
class SuiteResult:
    """Every claim's result, each finding's verdict, the per-seed values, and what could not be run."""

    options: SuiteOptions
    findings: list[Finding]
    results: list[ClaimResult]
    verdicts: dict[str, str]
    figures: dict[str, dict[str, float]]
    seed_table: pd.DataFrame
    plan: Plan
    failed_sweeps: list[str] = field(default_factory=list)
    version: int = REPLICATION_SET_VERSION
    family_size: int = FAMILY_SIZE
    #: --full: the selected findings without a full size, not run and not judged (their evidence claims count as
    #: p = 1 in the family, as those --only leaves out do)
    not_run: list[Finding] = field(default_factory=list)

    @property
    def run_ids(self) -> list[str]:
        return sorted({run for run in self.plan.runs.values() if run})


def selected(options: SuiteOptions) -> tuple[list[Finding], list[Finding]]:
    """The findings the suite runs, and those --full leaves out (no full size: listed in the report, not judged)."""
    findings = select(options.only)
    if not options.full:
        return findings, []
    return [f for f in findings if f.full_overrides], [f for f in findings if not f.full_overrides]


def plan_suite(options: SuiteOptions, say: Callable[[str], None] = lambda line: None) -> tuple[list[Finding], Plan]:
    """The selected findings and the jobs of the testable ones (UnknownFindingError, ConfigError before any run)."""
    findings = selected(options)[0]
    testable = [finding for finding in findings if finding.untestable() is None]
    seeds = {f.name: options.seeds_of(f) for f in testable}
    n_jobs = sum(len(f.arms) * seeds[f.name] for f in testable)
    size = " at --full size" if options.full else ""
    say(f"set v{REPLICATION_SET_VERSION}: composing the configs of {n_jobs} jobs ({len(testable)} findings){size}")
    return findings, plan_jobs(testable, seeds, options.quick, options.full)


def run_suite(
    options: SuiteOptions,
    planned: tuple[list[Finding], Plan] | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> SuiteResult:
    """Make the missing runs (unless `options.run` is off), measure every seed, and give every claim a verdict.

    `planned`: the findings and plan `plan_suite(options)` already gave (composed once, not twice); `say` tells each
    step before it starts (the command line prints it: no step is silent for long).
    """
    findings, plan = planned or plan_suite(options)
    uris = sorted({job.tracking_uri for job in plan.jobs})
    say(f"looking up the runs of {len(plan.jobs)} jobs in {', '.join(uris) or 'no store'}")
    _check_stores(uris)
    try:
        find_runs(plan)
    except (MlflowException, OSError) as error:  # a store that answered its health check but fails its first query
        raise StoreUnreachable(f"tracking store {', '.join(uris)}: {str(error).splitlines()[0]}") from None
    failed: list[str] = []
    missing = list({job.digest: job for job in plan.missing()}.values())  # a run two findings share, once
    if missing and options.run:
        say(f"{len(missing)} runs missing: starting their sweeps")
        failed = run_sweeps(sweep_commands(missing), say)
        find_runs(plan)
    results, figures, rows = [], {}, []
    for finding in findings:
        finding_results, finding_figures, finding_rows = evaluate_finding(finding, plan, options)
        results += finding_results
        figures[finding.name] = finding_figures
        rows += finding_rows
    adjust_family(results, FAMILY_SIZE)
    by_name = {(f.name, c.name): (f, c) for f in findings for c in f.claims}
    # the power simulation takes seconds per claim: a bar, so the console never goes quiet
    for result in tqdm(results, desc="judging claims", unit="claim", leave=False):
        finding, claim = by_name[(result.finding, result.claim)]
        judge(
            finding, claim, result, figures[finding.name], FAMILY_SIZE, options.bootstrap_seed, options.power_replicates
        )
        if options.quick and result.verdict != NOT_TESTABLE:
            why = "" if result.tested else f"; {result.reason}"
            result.verdict, result.reason = SMOKE, f"smoke size (--quick): checks the plumbing, never a verdict{why}"
    verdicts = {f.name: finding_verdict(f.claims, [r for r in results if r.finding == f.name]) for f in findings}
    return SuiteResult(options, findings, results, verdicts, figures, pd.DataFrame(rows), plan, failed,
                       not_run=selected(options)[1])  # fmt: skip


class StoreUnreachable(Exception):
    """The tracking store cannot be read at the start: the suite stops before any sweep, with no report."""


def _check_stores(uris: Sequence[str]) -> None:
    """StoreUnreachable unless every tracking server answers its health check (a sqlite store is a file: MLflow
    creates it). Asked before any sweep: MLflow's own retries would take minutes to give up."""
    from prism_experiments.config import ConfigError
    from prism_experiments.harness.preflight import check_tracking_server

    for uri in uris:
        try:
            check_tracking_server(uri)
        except ConfigError as error:
            raise StoreUnreachable(str(error).removeprefix("config error: ")) from None


def evaluate_finding(
    finding: Finding, plan: Plan, options: SuiteOptions
) -> tuple[list[ClaimResult], dict[str, float], list[dict[str, object]]]:
    """A finding's claim results (raw p, CI), mean descriptive figures, and its per-seed rows."""
    why = finding.untestable()
    if why is not None:
        return [empty_result(finding, claim, NOT_TESTABLE, why) for claim in finding.claims], {}, []
    jobs = [job for job in plan.jobs if job.finding == finding.name]
    runs = {(job.arm.name, job.seed): plan.runs.get(job.digest) for job in jobs}
    seeds = sorted({job.seed for job in jobs})
    values: dict[str, list[SeedValues]] = {claim.name: [] for claim in finding.claims}
    seed_figures: dict[str, list[float]] = {}
    rows: list[dict[str, object]] = []
    missing = [f"{arm} seed {seed}" for (arm, seed), run in runs.items() if run is None]
    with run_tables(jobs[0].tracking_uri) as tables:
        for seed in tqdm(seeds, desc=f"measuring {finding.name}", unit="seed", leave=False):
            seed_runs = {arm.name: runs[(arm.name, seed)] for arm in finding.arms}
            if any(run is None for run in seed_runs.values()):
                continue
            try:
                data = {arm: tables.tables(str(run), finding.tables_of(arm)) for arm, run in seed_runs.items()}
            except (MlflowException, OSError, KeyError) as exc:
                missing.append(f"seed {seed} (tables unreadable: {str(exc).splitlines()[0]})")
                continue
            claims, figures = finding.measure(data)
            for name, pair in claims.items():
                values[name].append(pair)
                rows.append({"finding": finding.name, "name": name, "seed": seed, "x": pair.x, "y": pair.y})
            for name, figure in figures.items():
                seed_figures.setdefault(name, []).append(figure)
                rows.append({"finding": finding.name, "name": name, "seed": seed, "x": figure, "y": math.nan})
    if missing and not any(values.values()):  # no seed has its runs: nothing to judge
        why = _missing_text(missing, len(runs)) + ("" if options.run else " (--no-run)")
        return [empty_result(finding, claim, NOT_TESTABLE, why) for claim in finding.claims], {}, rows
    results = [
        evaluate_claim(finding, claim, values[claim.name], bootstrap_seed=options.bootstrap_seed,
                       n_resamples=options.n_resamples)
        for claim in finding.claims
    ]  # fmt: skip
    if missing:
        note = _missing_text(missing, len(runs))
        for result in results:
            result.reason = "; ".join(filter(None, [result.reason, note]))
    return results, {name: _nanmean(v) for name, v in seed_figures.items()}, rows


def _missing_text(missing: Sequence[str], n_jobs: int, shown: int = 3) -> str:
    """`runs missing for 2 of 20 jobs: x_algo seed 3, ...`."""
    more = f", and {len(missing) - shown} more" if len(missing) > shown else ""
    return f"runs missing for {len(missing)} of {n_jobs} jobs: {', '.join(missing[:shown])}{more}"


def _nanmean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


__all__ = ["Job", "StoreUnreachable", "SuiteOptions", "SuiteResult", "plan_suite", "run_suite"]
