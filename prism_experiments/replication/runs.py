"""The simulation runs a replication needs: which configs, which of them are already in MLflow, the sweeps that
make the missing ones, and the event tables of each run.

A job is one (finding, arm, seed). Its config is composed exactly as `python -m prism_experiments` would compose
it and identified by its config hash, so a run made by `make sweep EXPERIMENT=replicate_<finding>`, by an earlier
`make replicate`, or for another finding with the same config is found and reused; the sweeps the runner starts
skip finished jobs the same way.
"""

from __future__ import annotations

import itertools
import logging
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mlflow.tracking import MlflowClient

from prism_experiments.analysis.runs import search_all_runs, simulation_filter
from prism_experiments.config import ExperimentConfig
from prism_experiments.locations import sqlite_path
from prism_experiments.replication.model import Arm, Finding
from prism_experiments.tracking.params import config_hash
from prism_experiments.tracking.store import resolve_tracking_uri
from prism_experiments.tracking.tags import CONFIG_HASH_TAG

log = logging.getLogger("prism_experiments")
#: where --quick's smoke runs go, apart from the full-size runs whose verdicts they must never mix with
QUICK_EXPERIMENT = "replication_quick"
#: where --full's runs go (each finding's `full_overrides`), apart from the experiment files' sizes: a verdict reads
#: one size's runs, never both
FULL_EXPERIMENT = "replication_full"
#: the cascade table every run logs beside the event tables
CASCADES = "cascades"


@dataclass(frozen=True)
class Job:
    """One run a finding needs: its arm, seed, overrides, and the config hash that finds it in MLflow."""

    finding: str
    experiment_file: str
    arm: Arm
    seed: int
    overrides: tuple[str, ...]
    digest: str
    experiment_name: str
    tracking_uri: str
    #: the overrides of the job's size and MLflow experiment (--quick's smoke size, --full's), shared by a finding's
    #: jobs
    size: tuple[str, ...] = ()


@dataclass
class Plan:
    """Every job of a replication, and the run each one was found as (None while missing)."""

    jobs: list[Job]
    runs: dict[str, str | None] = field(default_factory=dict)

    def missing(self) -> list[Job]:
        return [job for job in self.jobs if self.runs.get(job.digest) is None]


def size_overrides(finding: Finding, quick: bool, full: bool = False) -> tuple[str, ...]:
    """--quick's smoke size and its own MLflow experiment; --full's size (`full_overrides`) and its own experiment;
    nothing at the experiment file's size (ValueError for both, or for --full of a finding without a full size)."""
    if quick and full:
        raise ValueError("--full and --quick: choose one")
    if quick:
        return (*finding.quick_overrides, f"experiment_name={QUICK_EXPERIMENT}")
    if full:
        if not finding.full_overrides:
            raise ValueError(f"--full: {finding.name} has no full size (full_overrides)")
        return (*finding.full_overrides, f"experiment_name={FULL_EXPERIMENT}")
    return ()


def job_overrides(finding: Finding, arm: Arm, seed: int, quick: bool, full: bool = False) -> tuple[str, ...]:
    """The Hydra overrides of one job, as `python -m prism_experiments` takes them."""
    size = size_overrides(finding, quick, full)
    return (f"experiment={finding.experiment}", *arm.overrides, *size, f"seed={seed}")


def compose_jobs(overrides: Sequence[Sequence[str]]) -> list[ExperimentConfig]:
    """Every job's validated config as `python -m prism_experiments <overrides>` would compose it (ConfigError if one
    is invalid), one Hydra composition per shape of job, as a sweep's driver composes its jobs.

    A replication's jobs of one finding and arm differ only in their seed (a plain value), so 130 jobs take 13
    compositions (about 0.2 s each) instead of 130 (`harness/sweep.py`, `validated_job_configs`).
    """
    from prism_experiments.composition import compose_dictconfig, hydra_context
    from prism_experiments.harness.sweep import validated_job_configs

    if not overrides:
        return []
    with hydra_context():
        base = compose_dictconfig([], return_hydra_config=True)  # the sweep's "master" config: no overrides of its own
        return validated_job_configs(base, [list(job) for job in overrides], desc="composing jobs")[0]


def plan_jobs(findings: Sequence[Finding], seeds: Mapping[str, int], quick: bool, full: bool = False) -> Plan:
    """Compose and hash every (finding, arm, seed) job (ConfigError if one is invalid): at the experiment files'
    size, --quick's smoke size, or --full's size."""
    specs = [(finding, arm, seed) for finding in findings
             for arm, seed in itertools.product(finding.arms, range(seeds[finding.name]))]  # fmt: skip
    overrides = [job_overrides(finding, arm, seed, quick, full) for finding, arm, seed in specs]
    jobs = [
        Job(finding.name, finding.experiment, arm, seed, job, config_hash(cfg.model_dump(mode="json")),
            cfg.experiment_name, resolve_tracking_uri(cfg), size_overrides(finding, quick, full))
        for (finding, arm, seed), job, cfg in zip(specs, overrides, compose_jobs(overrides), strict=True)
    ]  # fmt: skip
    return Plan(jobs)


def find_runs(plan: Plan) -> None:
    """Fill `plan.runs` with the newest FINISHED simulation run of each job's config hash."""
    by_store: dict[tuple[str, str], list[Job]] = {}
    for job in plan.jobs:
        by_store.setdefault((job.tracking_uri, job.experiment_name), []).append(job)
    for (uri, name), jobs in by_store.items():
        database = sqlite_path(uri)
        if database is not None and not database.is_file():
            # no store, no run: opened here, MLflow would create it outside `store_lock`, and a command creating
            # it at the same moment (the suite's first sweep, `make ui`) fails ("table experiments already exists")
            plan.runs.update({job.digest: None for job in jobs})
            continue
        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name(name)
        newest: dict[str, tuple[int, str]] = {}
        if experiment is not None:
            for run in search_all_runs(client, experiment.experiment_id, simulation_filter()):
                digest = run.data.tags.get(CONFIG_HASH_TAG)
                if run.info.status == "FINISHED" and digest and run.info.start_time >= newest.get(digest, (-1, ""))[0]:
                    newest[digest] = (run.info.start_time, run.info.run_id)
        for job in jobs:
            plan.runs[job.digest] = newest.get(job.digest, (0, None))[1]


def sweep_commands(jobs: Sequence[Job]) -> list[list[str]]:
    """`python -m prism_experiments -m ...` commands that make `jobs`: one per finding and group of arms that
    form a product of values (e.g. ranking=random,chronological), with the jobs' seeds and size; the experiment
    file's own sweep is cleared (hydra.sweeper.params=null) so only these jobs run."""
    commands = []
    by_finding: dict[str, list[Job]] = {}
    for job in jobs:
        by_finding.setdefault(job.finding, []).append(job)
    for finding_jobs in by_finding.values():
        arms = list(dict.fromkeys(job.arm for job in finding_jobs))
        seeds = sorted({job.seed for job in finding_jobs})
        first = finding_jobs[0]
        for group in arm_sweeps(arms):
            commands.append([sys.executable, "-m", "prism_experiments", "-m", f"experiment={first.experiment_file}",
                             "hydra.sweeper.params=null", *group, *first.size,
                             f"seed={','.join(map(str, seeds))}"])  # fmt: skip
    return commands


def arm_sweeps(arms: Sequence[Arm]) -> list[list[str]]:
    """Arms as few sweeps as possible: arms over the same keys whose values form a full product are one sweep."""
    groups: dict[tuple[str, ...], list[Arm]] = {}
    for arm in arms:
        groups.setdefault(tuple(item.split("=", 1)[0] for item in arm.overrides), []).append(arm)
    sweeps = []
    for keys, members in groups.items():
        values = [list(dict.fromkeys(arm.overrides[i].split("=", 1)[1] for arm in members)) for i in range(len(keys))]
        plain = all(not any(mark in v for mark in ",[]{}") for column in values for v in column)
        product = {tuple(combo) for combo in itertools.product(*values)}
        have = {tuple(item.split("=", 1)[1] for item in arm.overrides) for arm in members}
        if plain and product == have:
            sweeps.append([f"{key}={','.join(column)}" for key, column in zip(keys, values, strict=True)])
        else:
            sweeps.extend(list(arm.overrides) for arm in members)
    return sweeps


#: how long an interrupted suite waits for its sweep to mark its runs KILLED and exit before it stops it
SWEEP_STOP_WAIT_S = 120.0


def run_sweeps(commands: Sequence[Sequence[str]], say: Callable[[str], None] = log.info) -> list[str]:
    """Run each sweep in turn, its output on this console; the commands that failed (a sweep exits non-zero when
    any job failed; the others' runs are still used). `say` tells which sweep starts.

    Interrupted (Ctrl-C reaches the sweep from the terminal too; SIGTERM is passed on to it by this process's
    handler), the sweep is given time to mark its runs KILLED and exit, then the interrupt goes on: never
    `subprocess.run`'s SIGKILL a quarter second after a Ctrl-C, which would leave its runs RUNNING."""
    failed = []
    for number, command in enumerate(commands, start=1):
        say(f"sweep {number} of {len(commands)}: {' '.join(command[2:])}")
        sweep = subprocess.Popen(list(command))
        try:
            code = sweep.wait()
        except KeyboardInterrupt:
            try:
                sweep.wait(timeout=SWEEP_STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                sweep.kill()  # its runs are reaped by the next sweep (docs/faults.md)
                sweep.wait()
            raise
        if code != 0:
            failed.append(" ".join(command[2:]))
    return failed


__all__ = ["Job", "Plan", "compose_jobs", "find_runs", "plan_jobs", "run_sweeps", "sweep_commands"]
