"""The chaos schedule: rounds drawn from one seed, so that the seed of a failing schedule reproduces it."""

from __future__ import annotations

import random
from dataclasses import dataclass

#: every fault a round can inject
FAULTS = (
    "kill_worker",  # kill -9 of a job's process
    "kill_driver",  # kill -9 of a sweep's driver
    "kill_mlflow",  # kill -9 of the tracking server's MLflow process group
    "kill_postgres",  # kill -9 of the tracking server's postmaster
    "sigterm",  # SIGTERM to a sweep's driver (`kill`, `timeout`, scancel)
    "sigint",  # SIGINT to a sweep's process group (a terminal's Ctrl-C)
    "damaged_shard",  # a shard of the embedding cache overwritten with garbage before the sweeps start
    "full_disk",  # the runs dir's small tmpfs filled up while jobs run
)
#: each launcher chaos sweeps on, and the overrides that select it (a new launcher: one line here)
LAUNCHER_OVERRIDES: dict[str, tuple[str, ...]] = {
    "joblib": ("hydra.launcher.n_jobs=2",),
    "ray": ("hydra/launcher=prism_ray",),
    "submitit_local": ("hydra/launcher=prism_submitit_local",),
}
LAUNCHERS = tuple(LAUNCHER_OVERRIDES)
#: when a fault lands: the sweep's parent run exists, a job is RUNNING, or a job has FINISHED
TRIGGERS = ("started", "running", "finished")
#: what each fault needs: a store ("server": the tracking server, "disk": sqlite on a small tmpfs), a trigger
NEEDS_STORE = {"kill_mlflow": "server", "kill_postgres": "server", "full_disk": "disk"}
FIXED_TRIGGER = {"kill_worker": "running", "damaged_shard": "before", "full_disk": "running"}
MODES = ("x_algo", "random")
#: what a round's jobs are: "smoke" (experiment=smoke on its generated world), "file_world" (the same jobs on an
#: edge list and a population file, network=file agents=file), "ranking_schedule" (the same jobs with a ranking
#: schedule that switches ranker and setting mid-run, simulation.schedule), "replication" (a replication finding's
#: quick suite, `prism-replicate --quick`, under the fault and then resumed, its verdicts checked)
TARGETS = ("smoke", "file_world", "ranking_schedule", "replication")
#: the faults a replication round can take: it runs on a sqlite store of its own (a server or tmpfs fault would
#: need the suite's sweeps pointed at one, which `prism-replicate` does not offer), so a process or cache fault
REPLICATION_FAULTS = ("kill_worker", "kill_driver", "sigterm", "sigint", "damaged_shard")
#: the replication round's finding, seeds and the ranking modes of its arms: the smallest quick suite (4 jobs of
#: 40 agents; guess2023's arms are x_algo and chronological, tests/test_chaos.py checks it against the finding)
REPLICATION_FINDING = "guess2023"
REPLICATION_SEEDS = 2
REPLICATION_MODES = ("chronological", "x_algo")
#: the MLflow experiment of --quick's runs (replication/runs.py's QUICK_EXPERIMENT, not imported: it loads MLflow)
REPLICATION_EXPERIMENT = "replication_quick"
#: how many rounds of each target but "smoke" a schedule has at least (rounds allowing): a replication round costs
#: about three smoke rounds (the suite runs twice, its fault-free reference once a schedule), so the default
#: 30-round schedule spends about a third of its time on the new targets
TARGET_EACH = 2
#: how many sweeps a round starts, drawn from these (one most often: the rounds' time goes to sweeps)
SWEEPS_PER_ROUND = (1, 1, 1, 1, 2, 3)
#: how often each launcher is drawn: joblib twice as often as the others, whose sweeps cost more (a Ray worker or a
#: submitit job is a fresh interpreter importing the project; a 30-round schedule took 19 min with them drawn evenly)
LAUNCHER_WEIGHTS = {"joblib": 2, "ray": 1, "submitit_local": 1}


@dataclass(frozen=True)
class SweepPlan:
    """One sweep of a round: its launcher and the seeds x modes it runs."""

    launcher: str
    seeds: tuple[int, ...]
    modes: tuple[str, ...]

    def overrides(self) -> list[str]:
        return [f"seed={','.join(map(str, self.seeds))}", f"ranking={','.join(self.modes)}"]


@dataclass(frozen=True)
class Round:
    index: int
    store: str  # sqlite | server | disk
    fault: str
    trigger: str
    n_steps: int
    sweeps: tuple[SweepPlan, ...]
    target: str = "smoke"

    @property
    def seeds(self) -> tuple[int, ...]:
        """The round's own seed: its configs are that seed x every mode (the final clean re-run runs them all).
        A replication round's are the suite's seeds, in a store of its own (`store_key`)."""
        return tuple(range(REPLICATION_SEEDS)) if self.target == "replication" else (self.index,)

    @property
    def modes(self) -> tuple[str, ...]:
        return REPLICATION_MODES if self.target == "replication" else MODES

    @property
    def configs(self) -> set[tuple[int, str]]:
        return {(seed, mode) for seed in self.seeds for mode in self.modes}

    @property
    def store_key(self) -> str:
        """Where the round's runs go (`Stores.runs_dir`): its store, or for a replication round a sqlite store of its
        own, since the suite's seeds and configs are the same every round and a shared store would hold them all
        FINISHED after the first."""
        if self.target != "replication":
            return self.store
        return f"replication-{self.index:03d}" if self.index >= 0 else "replication-reference"

    def describe(self) -> str:
        sweeps = "; ".join(f"{s.launcher} seeds {list(s.seeds)} x {list(s.modes)}" for s in self.sweeps)
        return f"round {self.index} ({self.target}): {self.fault} at '{self.trigger}', store {self.store}: {sweeps}"


def build_schedule(
    seed: int,
    rounds: int,
    faults: tuple[str, ...] = FAULTS,
    launchers: tuple[str, ...] = LAUNCHERS,
    each: int = 3,
    n_steps: int = 4,
    stores: tuple[str, ...] = ("sqlite", "server"),
    targets: tuple[str, ...] = TARGETS,
    target_each: int = TARGET_EACH,
) -> list[Round]:
    """`rounds` rounds from `seed`: every fault of `faults` at least `each` times (when `rounds` allows), the rest
    drawn at random; launchers, stores (of `stores`, unless the fault needs one), triggers and sweeps per round.
    Round r runs seed r (`Round.seeds`) in both modes: its configs are its own, and its 1-3 sweeps overlap on some
    of them (the same config started twice). Every target of `targets` but "smoke" is the target of at least
    `target_each` rounds whose fault it can take (`round_targets`); the other rounds are "smoke" (or, without it in
    `targets`, one of `targets` drawn)."""
    rng = random.Random(seed)
    kinds = [fault for fault in faults for _ in range(each)][:rounds]
    kinds += [rng.choice(faults) for _ in range(rounds - len(kinds))]
    rng.shuffle(kinds)
    chosen_targets = round_targets(kinds, targets, target_each, rng)
    plan = []
    for index, (fault, target) in enumerate(zip(kinds, chosen_targets, strict=True)):
        store = "sqlite" if target == "replication" else NEEDS_STORE.get(fault) or rng.choice(stores)
        trigger = FIXED_TRIGGER.get(fault) or rng.choice(TRIGGERS)
        sweeps = []
        if target == "replication":  # one `prism-replicate`, whose sweeps run on the suite's launcher (joblib)
            sweeps.append(SweepPlan("joblib", tuple(range(REPLICATION_SEEDS)), REPLICATION_MODES))
        for _ in range(0 if target == "replication" else rng.choice(SWEEPS_PER_ROUND)):
            chosen_modes = tuple(sorted(rng.sample(MODES, rng.choice((1, 2)))))
            launcher = rng.choices(launchers, weights=[LAUNCHER_WEIGHTS.get(name, 1) for name in launchers])[0]
            sweeps.append(SweepPlan(launcher, (index,), chosen_modes))
        plan.append(Round(index, store, fault, trigger, n_steps, tuple(sweeps), target))
    return plan


def can_take(target: str, fault: str) -> bool:
    """Whether a round of `target` can take `fault` (a replication round only a process or cache fault)."""
    return target != "replication" or fault in REPLICATION_FAULTS


def round_targets(faults: list[str], targets: tuple[str, ...], each: int, rng: random.Random) -> list[str]:
    """Each round's target, given its fault: every target but "smoke" on `each` rounds drawn among those whose fault
    it can take (rounds allowing), the rest "smoke"; without "smoke" in `targets`, a target drawn for each."""
    chosen: list[str | None] = [None] * len(faults)
    for target in (t for t in targets if t != "smoke"):
        free = [i for i, fault in enumerate(faults) if chosen[i] is None and can_take(target, fault)]
        for i in rng.sample(free, min(each, len(free))):
            chosen[i] = target
    for i, fault in enumerate(faults):
        if chosen[i] is None:
            able = [t for t in targets if can_take(t, fault)]
            chosen[i] = "smoke" if "smoke" in targets or not able else rng.choice(able)
    return [target or "smoke" for target in chosen]
