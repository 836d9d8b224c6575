"""The memory preflight: a run's peak estimated from its sizes, the limit it must fit, and a run too big refused."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from process_helpers import prism

from prism_experiments.composition import compose_experiment
from prism_experiments.config import ConfigError
from prism_experiments.harness.preflight import (
    SINGLE_RUN,
    check_experiment,
    check_memory,
    check_sweep_memory,
    launcher_memory_plan,
)
from prism_experiments.memory_estimate import (
    MEASURED_PEAKS,
    PEAK_CURVE,
    RunSizes,
    estimate_peak_gb,
    fit_curve,
    run_sizes,
)
from prism_experiments.memory_limit import (
    MEMORY_LIMIT_ENV,
    MemoryLimit,
    MemoryPlan,
    cgroup_memory_limit,
    env_memory_limit,
    machine_memory,
    process_memory_limit,
    slurm_memory_bytes,
)

GIB = 1 << 30


# ------------------------------------------------------------------------------------------------------ the estimate
def test_the_estimate_by_hand() -> None:
    # the research run: 0.244 + 0.307 GB, 10,000 x 2,212 B, 20,000 x (952 + 1,028) B, 10,000 x 48 x 215.5 B,
    # 464,700 follows x 16 B, 9,600 texts x 4,800 B
    research = RunSizes(agents=10_000, posts=20_000, steps=48, follows=464_700, texts=9_600)
    by_hand = 0.551 + 0.02212 + 0.0396 + 0.10344 + 0.0074352 + 0.04608
    assert estimate_peak_gb(research) == pytest.approx(by_hand, rel=1e-9)
    # 5 million agents of the default world (mean out-degree 7.347, 5,000 posts): the agent-steps decide it
    five_million = RunSizes(agents=5_000_000, posts=5_000, steps=48, follows=36_735_000, texts=9_600)
    by_hand = 0.551 + 11.06 + 0.0099 + 51.72 + 0.58776 + 0.04608
    assert estimate_peak_gb(five_million) == pytest.approx(by_hand, rel=1e-9)
    # a world alone (no loop): no loop cost, no agent-steps, the posts' world share only
    world = RunSizes(agents=1_000_000, posts=2_000_000, steps=0, follows=0, texts=0)
    assert estimate_peak_gb(world, whole_run=False) == pytest.approx(0.244 + 2.212 + 1.904, rel=1e-9)


def test_the_curve_is_the_least_squares_fit_of_the_measured_peaks() -> None:
    fitted = fit_curve(MEASURED_PEAKS)
    for name, value in vars(PEAK_CURVE).items():
        assert value == pytest.approx(getattr(fitted, name), rel=2e-3), name


@pytest.mark.parametrize(
    "agents, posts, measured, error", [(10_000, 20_000, 0.76, 0.02), (100_000, 200_000, 2.35, 0.02),
                                       (200_000, 400_000, 4.38, 0.08), (1_000_000, 2_000_000, 16.80, 0.07),
                                       (100_000, 1_000_000, 4.26, 0.01)],
)  # fmt: skip
def test_the_error_at_the_measured_points_is_the_documented_one(
    agents: int, posts: int, measured: float, error: float
) -> None:
    """docs/bench.md, "Memory preflight": the table of estimate against measured peak."""
    (point,) = [p for p in MEASURED_PEAKS if p.whole_run and (p.sizes.agents, p.sizes.posts) == (agents, posts)]
    assert point.peak_gb == measured
    assert abs(estimate_peak_gb(point.sizes) / measured - 1) <= error


def test_run_sizes_of_the_presets(tmp_path: Path) -> None:
    huge = compose_experiment(["experiment=huge", f"paths.runs_dir={tmp_path}"])
    assert run_sizes(huge) == RunSizes(100_000, 1_000_000, 48, 734_700, 96_000)
    assert estimate_peak_gb(run_sizes(huge)) == pytest.approx(4.26, abs=0.01)
    research = compose_experiment(["experiment=ranking_modes_10k", f"paths.runs_dir={tmp_path}"])
    assert run_sizes(research) == RunSizes(10_000, 20_000, 48, 464_700, 9_600)
    unpooled = compose_experiment(["corpus.text_pool_size=0", f"paths.runs_dir={tmp_path}"])
    assert run_sizes(unpooled).texts == 5_000, "without a pool every post has its own text"
    assert run_sizes(unpooled, corpus_posts=7).posts == 5_000, "a synthetic corpus's size is its n_posts"


def test_run_sizes_count_a_graph_files_follows(tmp_path: Path) -> None:
    edges = tmp_path / "edges.txt"
    edges.write_text("1 2\n2 3\n3 1\n1 3\n")
    cfg = compose_experiment(["network=file", f"network.path={edges}", f"paths.runs_dir={tmp_path}"])
    assert run_sizes(cfg) == RunSizes(3, 5_000, 48, 4, 9_600)


# --------------------------------------------------------------------------------------------------------- the limit
def test_machine_memory_reads_memtotal(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        8000000 kB\nMemFree:         1000 kB\n")
    assert machine_memory(meminfo) == MemoryLimit(8_000_000 * 1024, "this machine's memory, MemTotal")
    missing = machine_memory(tmp_path / "none")  # no /proc: sysconf's pages
    assert missing is not None and missing.bytes > 0 and missing.source == "this machine's memory"


def _cgroup_v2(root: Path, group: str, limits: dict[str, str]) -> Path:
    """A fake v2 hierarchy under `root` with `memory.max` files at the given folders; the process's cgroup file."""
    (root / group).mkdir(parents=True)
    for folder, value in limits.items():
        (root / folder / "memory.max").write_text(f"{value}\n")
    proc = root.parent / "cgroup"
    proc.write_text(f"0::/{group}\n")
    return proc


def test_cgroup_v2_the_smallest_limit_on_the_way_up(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    proc = _cgroup_v2(root, "user.slice/job/run", {"user.slice": "6000000000", "user.slice/job/run": "max"})
    assert cgroup_memory_limit(proc, root) == MemoryLimit(6_000_000_000, str(root / "user.slice" / "memory.max"))
    (root / "user.slice/job/memory.max").write_text("4000000000\n")
    assert cgroup_memory_limit(proc, root) == MemoryLimit(4_000_000_000, str(root / "user.slice/job/memory.max"))


def test_cgroup_v2_max_everywhere_is_no_limit(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    proc = _cgroup_v2(root, "a/b", {"a": "max", "a/b": "max"})
    assert cgroup_memory_limit(proc, root) is None


def test_cgroup_v1_limit_and_its_no_limit_value(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    group = root / "memory" / "process_api" / "abc"
    group.mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    (group / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    proc = tmp_path / "cgroup"
    proc.write_text("9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n")
    assert cgroup_memory_limit(proc, root) is None
    (group / "memory.limit_in_bytes").write_text(f"{2 * GIB}\n")
    assert cgroup_memory_limit(proc, root) == MemoryLimit(2 * GIB, str(group / "memory.limit_in_bytes"))


def test_cgroup_v1_in_a_container_reads_its_root(tmp_path: Path) -> None:
    """The group's host path is not mounted inside a container without its own cgroup namespace: the root's file."""
    root = tmp_path / "fs"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text(f"{3 * GIB}\n")
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/docker/0123\n")
    assert cgroup_memory_limit(proc, root) == MemoryLimit(3 * GIB, str(root / "memory" / "memory.limit_in_bytes"))


def test_the_process_limit_is_the_smaller_of_machine_and_cgroup(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        8000000 kB\n")
    root = tmp_path / "fs"
    proc = _cgroup_v2(root, "job", {"job": str(4 * GIB)})
    assert process_memory_limit(meminfo, proc, root) == MemoryLimit(4 * GIB, str(root / "job" / "memory.max"))
    (root / "job" / "memory.max").write_text(f"{64 * GIB}\n")
    assert process_memory_limit(meminfo, proc, root) == MemoryLimit(8_192_000_000, "this machine's memory, MemTotal")


@pytest.mark.parametrize(
    "value, expected",
    [("4G", 4 * GIB), ("512M", 512 << 20), (4096, 4096 << 20), ("1.5T", round(1.5 * (1 << 40))), (None, None),
     ("", None), ("lots", None), (0, None)],
)  # fmt: skip
def test_slurm_memory_requests(value: object, expected: int | None) -> None:
    assert slurm_memory_bytes(value) == expected


# --------------------------------------------------------------------------------------------------------- the check
SIZES = RunSizes(agents=1_000_000, posts=2_000_000, steps=48, follows=46_470_000, texts=9_600)
SIXTEEN = MemoryLimit(16_000_000_000, "this machine's memory, MemTotal")


def test_a_run_within_80_percent_passes_silently() -> None:
    assert check_memory([12.7], SIZES, SINGLE_RUN, SIXTEEN, force=False) is None


def test_a_run_near_the_limit_gets_a_warning_line() -> None:
    line = check_memory([13.0], SIZES, SINGLE_RUN, SIXTEEN, force=False)
    assert line == (
        "memory: this run needs about 13.0 GB at the peak (estimated for 1,000,000 agents, 2,000,000 posts, 48 steps, "
        '46,470,000 follows; docs/bench.md, "Memory preflight"): 81% of the 16.0 GB this process may use '
        "(this machine's memory, MemTotal)"
    )


def test_a_run_over_the_limit_is_a_config_error_naming_estimate_limit_and_override() -> None:
    with pytest.raises(ConfigError) as error:
        check_memory([16.8], SIZES, SINGLE_RUN, SIXTEEN, force=False)
    assert str(error.value) == (
        "config error: memory: this run needs about 16.8 GB at the peak (estimated for 1,000,000 agents, "
        '2,000,000 posts, 48 steps, 46,470,000 follows; docs/bench.md, "Memory preflight"), more than the 16.0 GB '
        "this process may use (this machine's memory, MemTotal); make the run smaller or run it anyway with "
        "+force_memory=true"
    )


def test_force_memory_turns_the_refusal_into_a_warning() -> None:
    line = check_memory([16.8], SIZES, SINGLE_RUN, SIXTEEN, force=True)
    assert line is not None and line.startswith("memory: this run needs about 16.8 GB")
    assert line.endswith("more than the 16.0 GB this process may use (this machine's memory, MemTotal); going on "
                         "because of +force_memory=true")  # fmt: skip


def test_jobs_at_once_add_up() -> None:
    """Jobs that run at once share the machine: the largest estimates, as many as run at once, must fit together."""
    estimates = [6.0, 5.0, 7.0, 1.0]
    assert check_memory(estimates, SIZES, MemoryPlan(1, "one job at a time"), SIXTEEN, force=False) is None
    line = check_memory(estimates, SIZES, MemoryPlan(2, "hydra.launcher.n_jobs=2"), SIXTEEN, force=False)
    assert line is not None and line.startswith("memory: 2 jobs at once (hydra.launcher.n_jobs=2) need about 13.0 GB")
    assert "46,470,000 follows in the largest job" in line
    assert line.endswith("81% of the 16.0 GB this process may use (this machine's memory, MemTotal)")
    with pytest.raises(ConfigError) as error:  # 7 + 6 + 5
        check_memory(estimates, SIZES, MemoryPlan(3, "hydra.launcher.n_jobs=3"), SIXTEEN, force=False)
    assert "memory: 3 jobs at once (hydra.launcher.n_jobs=3) need about 18.0 GB" in str(error.value)
    hint = "; run fewer at once (hydra.launcher.n_jobs=3), make the runs smaller or run them anyway with "
    assert str(error.value).endswith(hint + "+force_memory=true")
    with pytest.raises(ConfigError, match="4 jobs at once"):  # never more at once than there are jobs
        check_memory(estimates, SIZES, MemoryPlan(8, "hydra/launcher=prism_submitit_local"), SIXTEEN, force=False)


def test_a_slurm_job_is_checked_against_what_it_asks_for() -> None:
    eight = MemoryLimit(8 * GIB, "hydra.launcher.mem_gb=8")
    slurm = MemoryPlan(1, eight.source, limit=eight)
    with pytest.raises(ConfigError) as error:
        check_memory([4.0, 9.5], SIZES, slurm, SIXTEEN, force=False)
    assert "a job needs about 9.5 GB" in str(error.value)
    assert "more than the 8.6 GB a job asks for (hydra.launcher.mem_gb=8); ask for more (hydra.launcher.mem_gb=8)" in (
        str(error.value)
    )
    unknown = MemoryPlan(1, "a SLURM job", known=False)
    assert check_memory([400.0], SIZES, unknown, SIXTEEN, force=False) is None, "no request: the cluster's default"


def test_no_known_limit_checks_nothing() -> None:
    assert check_memory([400.0], SIZES, SINGLE_RUN, None, force=False) is None


# ------------------------------------------------------------------------------------------- the launchers' plans
def _launcher(node: str, **settings: object) -> object:
    from hydra.core.config_store import ConfigStore

    for launcher in ("joblib", "ray", "submitit"):  # each module stores its launchers' configs
        importlib.import_module(f"hydra_plugins.prism_launcher.prism_{launcher}_launcher")
    stored = ConfigStore.instance().load(f"hydra/launcher/{node}.yaml").node
    return OmegaConf.merge(stored, settings)


def test_the_launchers_memory_plans() -> None:
    assert launcher_memory_plan(_launcher("prism_joblib"), 4) == MemoryPlan(2, "hydra.launcher.n_jobs=2")
    assert launcher_memory_plan(_launcher("prism_joblib"), 1).jobs_at_once == 1
    local = launcher_memory_plan(_launcher("prism_submitit_local"), 4)
    assert local.jobs_at_once == 4 and local.known
    slurm = launcher_memory_plan(_launcher("prism_submitit_slurm", mem_gb=8), 40)
    assert slurm.jobs_at_once == 1 and slurm.limit == MemoryLimit(8 * GIB, "hydra.launcher.mem_gb=8")
    per_cpu = launcher_memory_plan(_launcher("prism_submitit_slurm", mem_per_cpu="2G", cpus_per_task=3), 40)
    assert per_cpu.limit is not None and per_cpu.limit.bytes == 6 * GIB
    assert not launcher_memory_plan(_launcher("prism_submitit_slurm"), 40).known
    ray = launcher_memory_plan(_launcher("prism_ray", ray={"init": {"address": None, "num_cpus": 3}}), 8)
    assert ray == MemoryPlan(3, "hydra.launcher.ray.init.num_cpus=3")
    cluster = launcher_memory_plan(_launcher("prism_ray", ray={"init": {"address": "10.0.0.5:6379"}}), 8)
    assert not cluster.known


def test_a_sweep_checks_its_largest_jobs_together(tmp_path: Path) -> None:
    jobs = [compose_experiment([f"agents.n_agents={n}", f"paths.runs_dir={tmp_path}"]) for n in (200, 1_000_000, 2_000)]
    need = estimate_peak_gb(run_sizes(jobs[1])) + estimate_peak_gb(run_sizes(jobs[2]))
    plan = MemoryPlan(2, "hydra.launcher.n_jobs=2")
    limit = MemoryLimit(round(need / 0.9 * 1e9), "this machine's memory, MemTotal")
    line = check_sweep_memory(jobs, plan, {"None": None}, limit)
    assert line is not None and line.startswith(
        f"memory: 2 jobs at once (hydra.launcher.n_jobs=2) need about {need:.1f}"
    )
    assert "1,000,000 agents, 5,000 posts, 48 steps, 7,347,000 follows in the largest job" in line and "90%" in line
    small = MemoryLimit(round(need / 1.5 * 1e9), "this machine's memory, MemTotal")
    with pytest.raises(ConfigError):
        check_sweep_memory(jobs, plan, {"None": None}, small)
    forced = [jobs[0].model_copy(update={"force_memory": True}), *jobs[1:]]
    line = check_sweep_memory(forced, plan, {"None": None}, small)
    assert line is not None and line.endswith("going on because of +force_memory=true")


# --------------------------------------------------------------------------------------------- the real entry point
#: the limit the entry-point tests set (`PRISM_MEMORY_LIMIT_GB`): the issue's 24 GB machine, whatever this one has
LIMIT_ENV = {MEMORY_LIMIT_ENV: "24"}
#: 5,000,000 agents of the default world: about 64 GB, well over the 24
TOO_BIG = RunSizes(5_000_000, 5_000, 48, 36_735_000, 9_600)


def test_the_environment_sets_the_limit_in_place_of_the_machines(tmp_path: Path) -> None:
    assert env_memory_limit({}) is None and env_memory_limit({MEMORY_LIMIT_ENV: " "}) is None
    assert env_memory_limit({MEMORY_LIMIT_ENV: "2.5"}) == MemoryLimit(2_500_000_000, "PRISM_MEMORY_LIMIT_GB=2.5")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        8000000 kB\n")
    limit = process_memory_limit(meminfo, tmp_path / "no-cgroup", tmp_path, environ=LIMIT_ENV)
    assert limit == MemoryLimit(24_000_000_000, "PRISM_MEMORY_LIMIT_GB=24"), "larger than the machine: still set"
    for bad in ("lots", "0", "-3", "nan", "inf"):
        with pytest.raises(ValueError, match=f"PRISM_MEMORY_LIMIT_GB: expected a positive number of GB, got '{bad}'"):
            env_memory_limit({MEMORY_LIMIT_ENV: bad})


def test_an_unreadable_limit_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "lots")
    cfg = compose_experiment([f"paths.runs_dir={tmp_path}"])
    with pytest.raises(ConfigError, match="^config error: PRISM_MEMORY_LIMIT_GB: expected a positive number"):
        check_experiment(cfg, f"sqlite:///{tmp_path}/mlflow.db")


@pytest.mark.integration
def test_a_run_too_big_for_this_machine_is_refused_with_one_line_and_no_folder(tmp_path: Path) -> None:
    """REQ-FAULT-1: 5,000,000 agents against 24 GB: one line with the estimate and the limit, exit 2, no folder,
    no store (so no run RUNNING)."""
    estimate = estimate_peak_gb(TOO_BIG)
    runs_dir = tmp_path / "new" / "runs"
    done = prism("agents.n_agents=5000000", runs_dir=runs_dir, cwd=tmp_path, env=LIMIT_ENV)
    assert done.returncode == 2, done.stderr[-3000:]
    output = done.stdout + done.stderr
    # every line but the entry point's "starting" banner, which any run prints first
    lines = [line for line in output.splitlines() if line.strip() and not line.startswith("prism-run: starting")]
    assert len(lines) == 1 and "Traceback" not in output, output[-3000:]
    assert f"config error: memory: this run needs about {estimate:.1f} GB at the peak" in lines[0]
    assert "5,000,000 agents, 5,000 posts, 48 steps, 36,735,000 follows" in lines[0]
    assert "more than the 24.0 GB this process may use (PRISM_MEMORY_LIMIT_GB=24)" in lines[0]
    assert lines[0].endswith("make the run smaller or run it anyway with +force_memory=true")
    assert list(tmp_path.iterdir()) == [], list(tmp_path.rglob("*"))


@pytest.mark.integration
def test_a_sweep_too_big_for_this_machine_is_refused_before_any_run(tmp_path: Path) -> None:
    done = prism("-m", "experiment=smoke", "agents.n_agents=5000000", "simulation.n_steps=48",
                 runs_dir=tmp_path / "new" / "runs", cwd=tmp_path, env=LIMIT_ENV)  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "config error: memory: 2 jobs at once (hydra.launcher.n_jobs=2) need" in errors[0]
    assert "Traceback" not in output and "24.0 GB this process may use (PRISM_MEMORY_LIMIT_GB=24)" in errors[0]
    assert list(tmp_path.iterdir()) == [], list(tmp_path.rglob("*"))


def test_force_memory_lets_the_preflight_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the preflight, not by running the run: `+force_memory=true` composes, and the check warns instead."""
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "24")
    overrides = ["agents.n_agents=5000000", f"paths.runs_dir={tmp_path}"]
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with pytest.raises(ConfigError, match="config error: memory: "):
        check_experiment(compose_experiment(overrides), uri)
    forced = compose_experiment([*overrides, "+force_memory=true"])
    assert forced.force_memory
    (line,) = check_experiment(forced, uri)
    assert line.startswith(f"memory: this run needs about {estimate_peak_gb(TOO_BIG):.1f} GB")
    assert line.endswith("going on because of +force_memory=true")


def test_a_run_near_the_limit_warns_at_the_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within 80 % of the limit: one warning line, no error."""
    cfg = compose_experiment([f"paths.runs_dir={tmp_path}"])
    estimate = estimate_peak_gb(run_sizes(cfg))
    monkeypatch.setenv(MEMORY_LIMIT_ENV, f"{estimate / 0.9:.3f}")
    (line,) = check_experiment(cfg, f"sqlite:///{tmp_path}/mlflow.db")
    assert line.startswith("memory: this run needs about") and ": 90% of the" in line
    monkeypatch.setenv(MEMORY_LIMIT_ENV, f"{estimate / 0.5:.3f}")
    assert check_experiment(cfg, f"sqlite:///{tmp_path}/mlflow.db") == []
