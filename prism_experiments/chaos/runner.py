"""Runs a chaos schedule: each round's sweeps and fault, the next command's reaper, the invariants; then a final clean
re-run per store and target, and the invariants again (every config FINISHED exactly once). A replication round
runs its suite under the fault, then resumes it, and its verdicts must equal the fault-free suite's."""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prism_experiments.chaos.faults import Injection, damage_newest_shard, fill_disk, inject, wait_for_event
from prism_experiments.chaos.invariants import (
    SweepExit,
    read_verdicts,
    round_violations,
    suite_exits,
    sweep_exit,
    verdict_violations,
)
from prism_experiments.chaos.schedule import MODES, REPLICATION_EXPERIMENT, Round, SweepPlan
from prism_experiments.chaos.world import (
    EXPERIMENT,
    ORPHAN_TIMEOUT_S,
    ReplicationReference,
    Stores,
    client,
    reference_metrics,
    start_suite,
    start_sweep,
    wait_for_exit,
    wait_for_group,
)
from prism_experiments.ops.processes import process_alive
from prism_experiments.tracking.tags import PID_TAG

log = logging.getLogger("prism_experiments.chaos")


@dataclass
class RoundResult:
    round: Round
    injection: Injection
    exits: list[SweepExit]
    violations: list[str]
    seconds: float
    #: where the round's time went: references, sweeps (start to exit), recovery (orphans, server, reaper), checks
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class Results:
    rounds: list[RoundResult] = field(default_factory=list)
    final_violations: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        return [f"round {r.round.index}: {v}" for r in self.rounds for v in r.violations] + [
            f"final re-run: {v}" for v in self.final_violations
        ]

    def faults(self) -> Counter[str]:
        return Counter(r.round.fault for r in self.rounds)

    def targets(self) -> Counter[str]:
        return Counter(r.round.target for r in self.rounds)

    def hits(self) -> Counter[str]:
        return Counter(r.round.fault for r in self.rounds if r.injection.hit)


def run_round(round_: Round, stores: Stores, seed: int) -> RoundResult:
    """One round: the fault-free references of its configs, its sweeps and their fault, the next command's reaper,
    and the invariants that hold before the final clean re-run."""
    if round_.target == "replication":
        return run_replication_round(round_, stores, seed)
    started = time.monotonic()
    work = stores.work / f"round-{round_.index:03d}"
    references = reference_metrics(round_, stores, work / "reference")
    phases = {"references": time.monotonic() - started}
    seeds, configs = set(round_.seeds), round_.configs
    rng = random.Random(f"{seed}-{round_.index}")
    injection = Injection(False, "")
    if round_.fault == "damaged_shard":
        injection = damage_newest_shard(stores.cache)
    sweeps = [start_sweep(plan, round_, stores, work / f"sweep-{n}.log") for n, plan in enumerate(round_.sweeps)]
    filler = None
    violations: list[str] = []
    try:
        if round_.fault != "damaged_shard":
            at_event = wait_for_event(round_.trigger, sweeps, stores, round_.store, seeds)
            if not at_event:
                injection = Injection(False, f"every sweep ended before '{round_.trigger}'")
            elif round_.fault == "full_disk":
                assert stores.disk is not None
                filler = fill_disk(stores.disk)
                injection = Injection(True, "filled the runs dir's tmpfs")
            else:
                injection = inject(round_.fault, sweeps, stores, at_event, rng)
        violations += wait_for_exit(sweeps)
    finally:
        for sweep in sweeps:
            if sweep.process.poll() is None:
                sweep.process.kill()
                sweep.process.wait()
        if filler is not None:
            filler.unlink(missing_ok=True)
    exits = [
        sweep_exit(s.process.returncode, s.output(), f"sweep {n} ({s.plan.launcher})") for n, s in enumerate(sweeps)
    ]
    phases["sweeps"] = time.monotonic() - started - sum(phases.values())
    violations += recover(round_, stores)
    phases["recovery"] = time.monotonic() - started - sum(phases.values())
    uri = stores.tracking_uri(round_.store)
    violations += round_violations(client(uri), uri, seeds, configs, exits, references, finished_once=False)
    stores.references.update(references)
    phases["checks"] = time.monotonic() - started - sum(phases.values())
    return RoundResult(round_, injection, exits, violations, time.monotonic() - started, phases)


def run_replication_round(round_: Round, stores: Stores, seed: int) -> RoundResult:
    """A replication round: the fault-free suite (once a schedule), the suite in a store of its own with the fault,
    the next command's reaper and the invariants, then the suite again (the resume) and the invariants once more:
    nothing RUNNING, every config FINISHED exactly once, every FINISHED run's metrics and the resumed suite's
    verdicts equal to the fault-free suite's (and those of the faulted suite too, when it exited 0)."""
    started = time.monotonic()
    work = stores.work / f"round-{round_.index:03d}"
    if stores.replication is None:
        stores.replication = replication_reference(round_, stores)
    reference = stores.replication
    phases = {"references": time.monotonic() - started}
    seeds, configs, key = set(round_.seeds), round_.configs, round_.store_key
    rng = random.Random(f"{seed}-{round_.index}")
    injection = Injection(False, "")
    if round_.fault == "damaged_shard":
        injection = damage_newest_shard(stores.cache)
    suite = start_suite(round_, stores, work / "suite.log", work / "report-faulted")
    violations: list[str] = []
    try:
        if round_.fault != "damaged_shard":
            at_event = wait_for_event(round_.trigger, [suite], stores, key, seeds, REPLICATION_EXPERIMENT)
            injection = (
                inject(round_.fault, [suite], stores, at_event, rng)
                if at_event
                else Injection(False, f"the suite ended before '{round_.trigger}'")
            )
        violations += wait_for_exit([suite])
    finally:
        if suite.process.poll() is None:
            suite.process.kill()
            suite.process.wait()
    if not wait_for_group(suite.process.pid):
        violations.append(f"the suite's processes outlived it by {ORPHAN_TIMEOUT_S:g} s (log: {suite.log})")
    exits = suite_exits(suite.process.returncode, suite.output(), "the suite under the fault")
    if suite.process.returncode == 0:  # a suite that says it is complete must be: its verdicts are the fault-free ones
        violations += verdict_violations(reference.verdicts, _verdicts(work / "report-faulted"), "the faulted suite")
    phases["sweeps"] = time.monotonic() - started - sum(phases.values())
    violations += recover(round_, stores)
    phases["recovery"] = time.monotonic() - started - sum(phases.values())
    uri, name = stores.tracking_uri(key), REPLICATION_EXPERIMENT
    violations += round_violations(
        client(uri), uri, seeds, configs, exits, reference.metrics, False, name, may_be_empty=True
    )
    resumed = start_suite(round_, stores, work / "resume.log", work / "report-resumed")
    violations += wait_for_exit([resumed])
    if resumed.process.returncode != 0:
        violations.append(f"the resumed suite exited {resumed.process.returncode} (log: {resumed.log})")
    violations += verdict_violations(reference.verdicts, _verdicts(work / "report-resumed"), "the resumed suite")
    resumed_exits = suite_exits(resumed.process.returncode, resumed.output(), "the resumed suite")
    phases["resume"] = time.monotonic() - started - sum(phases.values())
    violations += round_violations(
        client(uri), uri, seeds, configs, resumed_exits, reference.metrics, finished_once=True, experiment_name=name
    )
    phases["checks"] = time.monotonic() - started - sum(phases.values())
    # the faulted suite's own exit code, for the round's line (its sweeps' exits: [] when it started none)
    exits = exits or [SweepExit(suite.process.returncode, None, "the suite under the fault")]
    return RoundResult(round_, injection, exits, violations, time.monotonic() - started, phases)


def replication_reference(round_: Round, stores: Stores) -> ReplicationReference:
    """The replication rounds' suite once without a fault, in a store of its own: its verdicts, and its runs' metrics
    by (seed, mode) (logged by the same code as the faulted suite's runs: every one is a value of the simulation)."""
    from prism_experiments.tracking.tags import SEED_TAG, SIMULATION_KIND

    work = stores.work / "replication-reference"
    reference_round = Round(-1, "sqlite", "none", "none", round_.n_steps, round_.sweeps, round_.target)
    suite = start_suite(reference_round, stores, work / "suite.log", work / "report")
    hung = wait_for_exit([suite])
    if hung or suite.process.returncode != 0:
        raise RuntimeError(f"the fault-free replication suite exited {suite.process.returncode} (log: {suite.log})")
    store = client(stores.tracking_uri(reference_round.store_key))
    experiment = store.get_experiment_by_name(REPLICATION_EXPERIMENT)
    runs = store.search_runs([experiment.experiment_id], f"tags.`prism.kind` = '{SIMULATION_KIND}'")
    metrics = {
        (int(run.data.tags[SEED_TAG]), run.data.params["ranking.mode"]): dict(run.data.metrics)
        for run in runs
        if run.info.status == "FINISHED"
    }
    return ReplicationReference(read_verdicts(work / "report" / "verdicts.csv"), metrics)


def _verdicts(report: Path) -> list[dict[str, str]]:
    """A suite's verdicts.csv rows ([] when it wrote none: every claim is then reported missing)."""
    path = report / "verdicts.csv"
    return read_verdicts(path) if path.is_file() else []


def recover(round_: Round, stores: Stores) -> list[str]:
    """After the round's sweeps: its orphaned jobs end (a submitit job outlives its driver), a killed server is started
    again (`make tracking-server`'s code, which recognises its half), and the next command's reaper runs
    (`reap_stale_runs`, the first thing any sweep, run or `make compare` does). The jobs the round left undone run in
    the final clean re-run (a replication round's, in its resume)."""
    from prism_experiments.ops.liveness import reap_stale_runs

    experiment_name = REPLICATION_EXPERIMENT if round_.target == "replication" else EXPERIMENT
    wait_for_orphans(stores, round_.store_key, set(round_.seeds), experiment_name)
    if round_.store_key == "server":
        from prism_experiments.ops import tracking_server

        assert stores.server_home is not None
        tracking_server.start(stores.server_home, mlflow_port=stores.server_port)
    store = client(stores.tracking_uri(round_.store_key))
    try:
        experiment = store.get_experiment_by_name(experiment_name)
        if experiment is not None:
            reap_stale_runs(store, [experiment.experiment_id])
    except Exception as error:
        return [f"the next command's reaper failed: {error}"]
    return []


def wait_for_orphans(stores: Stores, store: str, seeds: set[int], experiment: str = EXPERIMENT) -> None:
    """Until no RUNNING run of the round has a live process on this machine (bounded)."""
    from prism_experiments.chaos.faults import _round_runs

    deadline = time.monotonic() + ORPHAN_TIMEOUT_S
    while time.monotonic() < deadline:
        running = [r for r in _round_runs(stores, store, seeds, experiment) if r.info.status == "RUNNING"]
        pids = [int(r.data.tags[PID_TAG]) for r in running if r.data.tags.get(PID_TAG, "").isdigit()]
        if not any(process_alive(pid) for pid in pids):
            return
        time.sleep(0.5)


def final_rerun(results: Results, stores: Stores) -> list[str]:
    """Every round's jobs again, one clean sweep per store and target (joblib, no fault): it runs what the faults left
    undone; then nothing is RUNNING, every config is FINISHED exactly once and its metrics equal the fault-free
    run's. A replication round has had its own (its resume)."""
    violations = []
    groups = sorted({(r.round.store, r.round.target) for r in results.rounds if r.round.target != "replication"})
    for store, target in groups:
        rounds = [r.round for r in results.rounds if (r.round.store, r.round.target) == (store, target)]
        seeds = tuple(sorted(s for r in rounds for s in r.seeds))
        log = stores.work / f"final-{store}-{target}.log"
        sweep = start_sweep(SweepPlan("joblib", seeds, MODES), rounds[0], stores, log)
        where = f"{store} ({target})"
        violations += [f"{where}: {v}" for v in wait_for_exit([sweep])]
        if sweep.process.returncode != 0:
            violations.append(f"{where}: the final re-run exited {sweep.process.returncode} (log: {sweep.log})")
        configs = {config for r in rounds for config in r.configs}
        exits = [sweep_exit(sweep.process.returncode, sweep.output(), f"final re-run on {where}")]
        uri = stores.tracking_uri(store)
        found = round_violations(client(uri), uri, set(seeds), configs, exits, stores.references, finished_once=True)
        violations += [f"{where}: {v}" for v in found]
    return violations
