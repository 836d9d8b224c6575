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

    @property
    def seeds(self) -> tuple[int, ...]:
        """The round's own seed: its configs are that seed x every mode (the final clean re-run runs them all)."""
        return (self.index,)

    @property
    def configs(self) -> set[tuple[int, str]]:
        return {(seed, mode) for seed in self.seeds for mode in MODES}

    def describe(self) -> str:
        sweeps = "; ".join(f"{s.launcher} seeds {list(s.seeds)} x {list(s.modes)}" for s in self.sweeps)
        return f"round {self.index}: {self.fault} at '{self.trigger}', store {self.store}: {sweeps}"


def build_schedule(
    seed: int,
    rounds: int,
    faults: tuple[str, ...] = FAULTS,
    launchers: tuple[str, ...] = LAUNCHERS,
    each: int = 3,
    n_steps: int = 4,
    stores: tuple[str, ...] = ("sqlite", "server"),
) -> list[Round]:
    """`rounds` rounds from `seed`: every fault of `faults` at least `each` times (when `rounds` allows), the rest
    drawn at random; launchers, stores (of `stores`, unless the fault needs one), triggers and sweeps per round.
    Round r runs seed r (`Round.seeds`) in both modes: its configs are its own, and its 1-3 sweeps overlap on some
    of them (the same config started twice)."""
    rng = random.Random(seed)
    kinds = [fault for fault in faults for _ in range(each)][:rounds]
    kinds += [rng.choice(faults) for _ in range(rounds - len(kinds))]
    rng.shuffle(kinds)
    plan = []
    for index, fault in enumerate(kinds):
        store = NEEDS_STORE.get(fault) or rng.choice(stores)
        trigger = FIXED_TRIGGER.get(fault) or rng.choice(TRIGGERS)
        sweeps = []
        for _ in range(rng.choice(SWEEPS_PER_ROUND)):
            chosen_modes = tuple(sorted(rng.sample(MODES, rng.choice((1, 2)))))
            launcher = rng.choices(launchers, weights=[LAUNCHER_WEIGHTS.get(name, 1) for name in launchers])[0]
            sweeps.append(SweepPlan(launcher, (index,), chosen_modes))
        plan.append(Round(index, store, fault, trigger, n_steps, tuple(sweeps)))
    return plan
