"""The chaos test (`make chaos`), short: its schedule is seeded and covers every fault and every target (smoke sweeps,
world files, a ranking schedule, a replication finding's suite), its verdict invariant flags a changed claim, and one
round of each target on the real stack (a sweep or a suite, a fault at a job's run, the next command, a final clean
re-run or the suite's resume) keeps every invariant."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from process_helpers import environment, forked_run

from prism_experiments.chaos.invariants import suite_exits, verdict_violations
from prism_experiments.chaos.schedule import (
    FAULTS,
    NEEDS_STORE,
    REPLICATION_EXPERIMENT,
    REPLICATION_FAULTS,
    REPLICATION_FINDING,
    REPLICATION_MODES,
    TARGET_EACH,
    TARGETS,
    build_schedule,
)


def test_the_default_schedule_has_every_fault_three_times_and_a_seed_reproduces_it() -> None:
    schedule = build_schedule(seed=0, rounds=30)
    assert len(schedule) >= 30 and min(Counter(r.fault for r in schedule)[f] for f in FAULTS) >= 3
    targets = Counter(r.target for r in schedule)
    assert all(targets[t] >= TARGET_EACH for t in TARGETS) and targets["smoke"] >= 30 - 3 * TARGET_EACH
    assert [r.describe() for r in build_schedule(seed=0, rounds=30)] == [r.describe() for r in schedule]
    assert [r.describe() for r in build_schedule(seed=1, rounds=30)] != [r.describe() for r in schedule]
    for round_ in schedule:
        assert round_.store == NEEDS_STORE.get(round_.fault, round_.store)  # a server fault on the server's store
        assert {s for plan in round_.sweeps for s in plan.seeds} <= set(round_.seeds)
    # each round's configs are its own: its seed, or for a replication round the suite's seeds in a store of its own
    seeds = [(r.store_key, s) for r in schedule for s in r.seeds]
    assert len(seeds) == len(set(seeds)), "each round's configs are its own"
    for round_ in (r for r in schedule if r.target == "replication"):
        assert round_.fault in REPLICATION_FAULTS and round_.store == "sqlite" and len(round_.sweeps) == 1


def test_targets_go_only_to_rounds_whose_fault_they_can_take() -> None:
    """A replication round's suite runs on its own sqlite store: a server or a full-disk fault never lands on one;
    with few rounds the targets still come each at least once where the faults allow."""
    for seed in range(20):
        schedule = build_schedule(seed=seed, rounds=8, each=1, target_each=1)
        assert {r.target for r in schedule} == set(TARGETS)
        assert all(r.fault in REPLICATION_FAULTS for r in schedule if r.target == "replication")
    only = build_schedule(seed=0, rounds=4, faults=("kill_mlflow", "sigint"), targets=("replication",))
    assert {(r.fault, r.target) for r in only} <= {("kill_mlflow", "smoke"), ("sigint", "replication")}


def test_the_replication_rounds_constants_are_the_findings() -> None:
    """schedule.py names the finding's arms' modes and --quick's experiment without importing the replication set
    (it loads MLflow); they must stay the finding's."""
    from prism_experiments.replication.registry import BY_NAME
    from prism_experiments.replication.runs import QUICK_EXPERIMENT

    modes = {
        o.split("=", 1)[1]
        for arm in BY_NAME[REPLICATION_FINDING].arms
        for o in arm.overrides
        if o.startswith("ranking=")
    }
    assert modes == set(REPLICATION_MODES) and REPLICATION_EXPERIMENT == QUICK_EXPERIMENT


def test_the_ranking_schedule_and_the_world_files_compose(tmp_path: Path) -> None:
    """Every job override a file_world or ranking_schedule round adds composes with experiment=smoke."""
    from prism_experiments.chaos.world import Stores, job_overrides, write_world_files
    from prism_experiments.composition import compose_experiment

    stores = Stores(tmp_path, tmp_path / "cache", world_files=write_world_files(tmp_path / "world"))
    for round_ in build_schedule(seed=0, rounds=30):
        if round_.target in ("file_world", "ranking_schedule"):
            extra = stores.target_overrides(round_)
            cfg = compose_experiment(
                [*job_overrides(round_.index, "random", round_.n_steps, extra), f"paths.runs_dir={tmp_path}"]
            )
            if round_.target == "file_world":
                assert cfg.network.source == "file" and cfg.agents.n_agents == 40
            else:
                assert [entry.mode for entry in cfg.simulation.schedule] == ["x_algo", "chronological"]


VERDICTS = [
    {"finding": "f", "claim": "a", "verdict": "smoke", "effect": "-0.0375", "p_value": "1.0", "seeds_80": ""},
    {"finding": "f", "claim": "b", "verdict": "smoke", "effect": "-0.475", "p_value": "0.5", "seeds_80": "nan"},
]


def test_a_suites_verdicts_must_equal_the_fault_free_ones_claim_by_claim() -> None:
    same = [dict(row) for row in VERDICTS]
    same[0]["seeds_80"] = "nan"  # a missing number, written either way
    assert verdict_violations(VERDICTS, same, "resumed") == []
    changed = [dict(row) for row in VERDICTS]
    changed[1]["effect"] = "-0.47500000000000003"  # one bit off
    [line] = verdict_violations(VERDICTS, changed, "resumed")
    assert line.startswith("resumed: f/b differs from the fault-free suite: effect")
    assert verdict_violations(VERDICTS, VERDICTS[:1], "resumed") == ["resumed: no verdict for f/b"]
    assert len(verdict_violations(VERDICTS, [], "faulted")) == 2  # no report at all: every claim is missing


def test_a_suites_exits_are_its_sweeps_with_its_exit_code() -> None:
    output = (
        "[HYDRA] sweep replication_quick-6ccb4590: 4 jobs, 4 to run, 0 already FINISHED (skipped); parent run abc123\n"
        "[HYDRA] sweep replication_quick-77aa0012: 4 jobs, 2 to run, 2 already FINISHED (skipped); parent run def456\n"
    )
    exits = suite_exits(1, output, "suite")
    assert [(e.code, e.parent_run_id) for e in exits] == [(1, "abc123"), (1, "def456")]
    assert suite_exits(0, "no sweep: every run found", "suite") == []


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    "fault, target",
    [("sigint", "smoke"), ("kill_worker", "file_world"), ("sigterm", "ranking_schedule"), ("sigint", "replication")],
)
def test_one_chaos_round_keeps_every_invariant(tmp_path: Path, warm_smoke_cache: Path, fault: str, target: str) -> None:
    runs_dir = tmp_path / "runs"
    result = forked_run(
        [
            sys.executable,
            "-m",
            "prism_experiments.chaos",
            "--rounds=1",
            f"--faults={fault}",
            f"--targets={target}",
            "--target-each=1",
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
    assert run.data.metrics[f"faults.{fault}"] == 1 and run.data.metrics[f"targets.{target}"] == 1
