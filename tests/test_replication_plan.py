"""The replication's jobs and sweeps: composed configs, hashes shared across findings, the sweep commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from prism_experiments.composition import compose_experiment
from prism_experiments.replication.findings import (
    chaney2018,
    gauthier2026,
    goel2016,
    guess2023_exposure,
    huszar2022,
    juul_ugander2021,
    milli2025,
    nyhan2023,
)
from prism_experiments.replication.model import Arm
from prism_experiments.replication.registry import FINDINGS, FULL_SIZE
from prism_experiments.replication.runs import FULL_EXPERIMENT, QUICK_EXPERIMENT, arm_sweeps, plan_jobs, sweep_commands
from prism_experiments.replication.suite import SuiteOptions, selected
from prism_experiments.tracking.params import config_hash


def test_a_run_two_findings_need_is_one_config() -> None:
    plan = plan_jobs([goel2016.FINDING, juul_ugander2021.FINDING], {"goel2016": 1, "juul_ugander2021": 1}, False)
    by_key = {(job.finding, job.arm.name): job for job in plan.jobs}
    assert by_key[("goel2016", "x_algo")].digest == by_key[("juul_ugander2021", "x_algo")].digest
    assert by_key[("juul_ugander2021", "chronological")].digest != by_key[("goel2016", "x_algo")].digest
    assert {job.experiment_name for job in plan.jobs} == {"replication"} and not by_key[("goel2016", "x_algo")].size


def test_huszar2022_reads_the_runs_of_juul_ugander2021_and_goel2016_at_every_size() -> None:
    findings = [goel2016.FINDING, juul_ugander2021.FINDING, huszar2022.FINDING]
    for quick, full in ((False, False), (True, False), (False, True)):
        plan = plan_jobs(findings, {finding.name: 1 for finding in findings}, quick, full=full)
        by_key = {(job.finding, job.arm.name): job.digest for job in plan.jobs}
        assert (
            by_key[("huszar2022", "x_algo")] == by_key[("juul_ugander2021", "x_algo")] == by_key[("goel2016", "x_algo")]
        )
        assert by_key[("huszar2022", "chronological")] == by_key[("juul_ugander2021", "chronological")]


def test_guess2023_exposure_reads_the_runs_of_milli2025_and_nyhan2023_at_both_sizes() -> None:
    findings = [milli2025.FINDING, nyhan2023.FINDING, guess2023_exposure.FINDING]
    for quick in (False, True):
        plan = plan_jobs(findings, {finding.name: 1 for finding in findings}, quick)
        by_key = {(job.finding, job.arm.name): job.digest for job in plan.jobs}
        assert by_key[("guess2023_exposure", "chronological")] == by_key[("milli2025", "chronological")]
        assert by_key[("guess2023_exposure", "algorithmic")] == by_key[("nyhan2023", "control")]
        assert by_key[("guess2023_exposure", "algorithmic")] != by_key[("guess2023_exposure", "chronological")]


def test_quick_sweeps_run_the_smoke_size_into_their_own_experiment() -> None:
    plan = plan_jobs([chaney2018.FINDING], {"chaney2018": 2}, True)
    assert len(plan.jobs) == 8 and len({job.digest for job in plan.jobs}) == 8
    assert {job.experiment_name for job in plan.jobs} == {QUICK_EXPERIMENT}
    commands = [command[2:] for command in sweep_commands(plan.jobs)]
    assert len(commands) == 2  # the arms that set only the mode in one sweep, the oracle (mode and predictor) alone
    first, second = commands
    assert "ranking=collaborative,random,chronological" in first
    assert "ranking=engagement" in second and "ranking.predictor=oracle" in second
    for command in commands:
        assert command[:4] == [
            "prism_experiments",
            "-m",
            "experiment=replicate_chaney2018",
            "hydra.sweeper.params=null",
        ]
        assert f"experiment_name={QUICK_EXPERIMENT}" in command and "agents.n_agents=40" in command
        assert command[-1] == "seed=0,1"


def test_full_runs_the_shape_claims_at_100000_agents_in_their_own_experiment() -> None:
    findings = [goel2016.FINDING, juul_ugander2021.FINDING, huszar2022.FINDING]
    seeds = {finding.name: 1 for finding in findings}
    full = plan_jobs(findings, seeds, False, full=True)
    default = plan_jobs(findings, seeds, False)
    assert len(full.jobs) == len(default.jobs) == 5
    for job in full.jobs:
        cfg = compose_experiment(job.overrides)  # the config the job's run logs (its hash is the plan's)
        assert config_hash(cfg.model_dump(mode="json")) == job.digest
        assert (cfg.agents.n_agents, cfg.corpus.n_posts) == (100_000, 200_000)
        assert (cfg.world.name if cfg.world else None, cfg.simulation.n_steps) == ("x2023_10k_tail", 48)
        assert job.experiment_name == cfg.experiment_name == FULL_EXPERIMENT
    # never the 10,000-agent runs: no digest in common with the experiment files' size, nor with --quick's
    quick = plan_jobs(findings, seeds, True)
    assert not {job.digest for job in full.jobs} & {job.digest for job in [*default.jobs, *quick.jobs]}
    for command in sweep_commands(full.jobs):
        assert {"agents.n_agents=100000", "corpus.n_posts=200000", f"experiment_name={FULL_EXPERIMENT}"} <= set(command)


def test_full_is_the_findings_with_a_full_size_and_lists_the_others() -> None:
    assert FULL_SIZE == ("goel2016", "juul_ugander2021", "huszar2022")
    run, not_run = selected(SuiteOptions(full=True))
    assert [f.name for f in run] == list(FULL_SIZE)
    assert [f.name for f in not_run] == [f.name for f in FINDINGS if f.name not in FULL_SIZE]
    assert selected(SuiteOptions()) == (list(FINDINGS), [])  # without --full: every finding, none left out
    assert selected(SuiteOptions(full=True, only=("huszar2022",))) == ([huszar2022.FINDING], [])
    with pytest.raises(ValueError, match="has no full size"):
        plan_jobs([chaney2018.FINDING], {"chaney2018": 1}, False, full=True)
    with pytest.raises(ValueError, match="--full and --quick"):
        plan_jobs([goel2016.FINDING], {"goel2016": 1}, True, full=True)


def test_arms_that_are_not_a_product_or_hold_lists_sweep_alone() -> None:
    assert arm_sweeps([Arm("a", ("x=1", "y=1")), Arm("b", ("x=2", "y=2"))]) == [["x=1", "y=1"], ["x=2", "y=2"]]
    assert arm_sweeps([Arm("a", ("x=1",)), Arm("b", ("x=2",))]) == [["x=1,2"]]
    schedules = [list(arm.overrides) for arm in gauthier2026.ARMS]
    assert arm_sweeps(gauthier2026.ARMS) == schedules  # a schedule is a list: never joined with commas


def test_jobs_composed_once_per_shape_are_the_configs_of_one_composition_each() -> None:
    # the plan composes one config per finding and arm and sets each seed itself (as a sweep's driver does): every
    # job's hash must be the one `python -m prism_experiments <its overrides>` logs, or its run would not be found
    plan = plan_jobs([chaney2018.FINDING, gauthier2026.FINDING], {"chaney2018": 2, "gauthier2026": 2}, True)
    assert len(plan.jobs) == 16
    for job in plan.jobs:
        cfg = compose_experiment(job.overrides)
        composed = (config_hash(cfg.model_dump(mode="json")), cfg.experiment_name, cfg.seed)
        assert composed == (job.digest, job.experiment_name, job.seed)


def test_looking_runs_up_in_a_store_not_made_yet_finds_none_and_does_not_make_it(tmp_path: Path) -> None:
    """A new sqlite store is made under `store_lock` (tracking/store.py): the look-up, outside it, must not make one,
    or a command making it at the same moment fails (found by `make chaos`'s replication rounds)."""
    from prism_experiments.replication.runs import Job, Plan, find_runs

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    job = Job("f", "replicate_f", Arm("a", ()), 0, (), "digest", QUICK_EXPERIMENT, uri)
    plan = Plan([job])
    find_runs(plan)
    assert plan.runs == {"digest": None} and plan.missing() == [job] and not (tmp_path / "mlflow.db").exists()
