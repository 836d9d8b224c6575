"""Runs a chaos schedule: each round's sweeps and fault, the next command's reaper, the invariants; then a final clean
re-run per store, and the invariants again (every config FINISHED exactly once)."""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from prism_experiments.chaos.faults import Injection, damage_newest_shard, fill_disk, inject, wait_for_event
from prism_experiments.chaos.invariants import SweepExit, round_violations, sweep_exit
from prism_experiments.chaos.schedule import MODES, Round, SweepPlan
from prism_experiments.chaos.world import (
    EXPERIMENT,
    ORPHAN_TIMEOUT_S,
    Stores,
    client,
    reference_metrics,
    start_sweep,
    wait_for_exit,
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

    def hits(self) -> Counter[str]:
        return Counter(r.round.fault for r in self.rounds if r.injection.hit)


def run_round(round_: Round, stores: Stores, seed: int) -> RoundResult:
    """One round: the fault-free references of its configs, its sweeps and their fault, the next command's reaper,
    and the invariants that hold before the final clean re-run."""
    started = time.monotonic()
    work = stores.work / f"round-{round_.index:03d}"
    references = reference_metrics(round_, stores.cache, work / "reference")
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


def recover(round_: Round, stores: Stores) -> list[str]:
    """After the round's sweeps: its orphaned jobs end (a submitit job outlives its driver), a killed server is started
    again (`make tracking-server`'s code, which recognises its half), and the next command's reaper runs
    (`reap_stale_runs`, the first thing any sweep, run or `make compare` does). The jobs the round left undone run in
    the final clean re-run."""
    from prism_experiments.ops.liveness import reap_stale_runs

    wait_for_orphans(stores, round_.store, set(round_.seeds))
    if round_.store == "server":
        from prism_experiments.ops import tracking_server

        assert stores.server_home is not None
        tracking_server.start(stores.server_home, mlflow_port=stores.server_port)
    store = client(stores.tracking_uri(round_.store))
    try:
        experiment = store.get_experiment_by_name(EXPERIMENT)
        if experiment is not None:
            reap_stale_runs(store, [experiment.experiment_id])
    except Exception as error:
        return [f"the next command's reaper failed: {error}"]
    return []


def wait_for_orphans(stores: Stores, store: str, seeds: set[int]) -> None:
    """Until no RUNNING run of the round has a live process on this machine (bounded)."""
    from prism_experiments.chaos.faults import _round_runs

    deadline = time.monotonic() + ORPHAN_TIMEOUT_S
    while time.monotonic() < deadline:
        running = [r for r in _round_runs(stores, store, seeds) if r.info.status == "RUNNING"]
        pids = [int(r.data.tags[PID_TAG]) for r in running if r.data.tags.get(PID_TAG, "").isdigit()]
        if not any(process_alive(pid) for pid in pids):
            return
        time.sleep(0.5)


def final_rerun(results: Results, stores: Stores) -> list[str]:
    """Every round's jobs again, one clean sweep per store (joblib, no fault): it runs what the faults left undone;
    then nothing is RUNNING, every config is FINISHED exactly once and its metrics equal the fault-free run's."""
    violations = []
    for store in sorted({r.round.store for r in results.rounds}):
        rounds = [r.round for r in results.rounds if r.round.store == store]
        seeds = tuple(sorted(s for r in rounds for s in r.seeds))
        sweep = start_sweep(SweepPlan("joblib", seeds, MODES), rounds[0], stores, stores.work / f"final-{store}.log")
        violations += [f"{store}: {v}" for v in wait_for_exit([sweep])]
        if sweep.process.returncode != 0:
            violations.append(f"{store}: the final re-run exited {sweep.process.returncode} (log: {sweep.log})")
        configs = {config for r in rounds for config in r.configs}
        exits = [sweep_exit(sweep.process.returncode, sweep.output(), f"final re-run on {store}")]
        uri = stores.tracking_uri(store)
        found = round_violations(client(uri), uri, set(seeds), configs, exits, stores.references, finished_once=True)
        violations += [f"{store}: {v}" for v in found]
    return violations
