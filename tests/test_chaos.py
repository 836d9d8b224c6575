"""The chaos test (`make chaos`), short: its schedule is seeded and covers every fault, and one round of it on the real
stack (a sweep, a fault at a job's run, the next command, a final clean re-run) keeps every invariant."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from process_helpers import environment, forked_run

from prism_experiments.chaos.schedule import FAULTS, NEEDS_STORE, build_schedule


def test_the_default_schedule_has_every_fault_three_times_and_a_seed_reproduces_it() -> None:
    schedule = build_schedule(seed=0, rounds=30)
    assert len(schedule) >= 30 and min(Counter(r.fault for r in schedule)[f] for f in FAULTS) >= 3
    assert [r.describe() for r in build_schedule(seed=0, rounds=30)] == [r.describe() for r in schedule]
    assert [r.describe() for r in build_schedule(seed=1, rounds=30)] != [r.describe() for r in schedule]
    for round_ in schedule:
        assert round_.store == NEEDS_STORE.get(round_.fault, round_.store)  # a server fault on the server's store
        assert {s for plan in round_.sweeps for s in plan.seeds} <= set(round_.seeds)
    seeds = [set(r.seeds) for r in schedule]
    assert all(a.isdisjoint(b) for i, a in enumerate(seeds) for b in seeds[i + 1 :]), "each round's configs are its own"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("fault", ["sigint"])
def test_one_chaos_round_keeps_every_invariant(tmp_path: Path, warm_smoke_cache: Path, fault: str) -> None:
    runs_dir = tmp_path / "runs"
    result = forked_run(
        [
            sys.executable,
            "-m",
            "prism_experiments.chaos",
            "--rounds=1",
            f"--faults={fault}",
            "--launchers=joblib",
            "--stores=sqlite",
            f"--cache-from={warm_smoke_cache}",
            f"--work-dir={tmp_path / 'work'}",
        ],
        env=environment() | {"PRISM_RUNS_DIR": str(runs_dir)},
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "0 invariant violation(s)" in output, output[-3000:]
    client = MlflowClient(f"sqlite:///{runs_dir}/mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("chaos").experiment_id])
    assert run.info.status == "FINISHED" and run.data.metrics["violations"] == 0 and run.data.metrics["rounds"] == 1
    assert run.data.metrics[f"faults.{fault}"] == 1
