"""Shared fixtures: one embedding cache per test session, nothing written outside tmp dirs."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from omegaconf import DictConfig
    from process_helpers import HeldEncoding

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.pop("MLFLOW_TRACKING_URI", None)
# One compute thread per process (this worker and every sweep it starts): `make test` runs 6 workers on 2 cores
# beside servers and sweep subprocesses, and OpenMP threads that spin while they wait for a core slowed the
# model-heavy tests several-fold. Results do not depend on it (the pinned numerics are thread-count exact,
# prism_experiments/numerics.py); a test that wants more threads sets them itself.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedding cache shared by every real-model test of the session.

    `PRISM_TEST_CACHE_DIR` points it at a lasting directory (a developer's warm cache); CI leaves it unset.
    """
    lasting = os.environ.get("PRISM_TEST_CACHE_DIR")
    if lasting:
        return Path(lasting)
    # under pytest-xdist each worker has its own base temp: the cache goes one level up, shared by all
    # workers (the embedding cache is safe for concurrent processes: tests/test_feed_store.py)
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "embedding-cache"
    shared.mkdir(parents=True, exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def embedder(session_cache_dir: Path):
    from prism_experiments.embeddings import Embedder

    return Embedder(cache_dir=session_cache_dir)


def _once_per_session(cache_dir: Path, name: str, warm: Callable[[], None]) -> None:
    """Run `warm` once for every pytest-xdist worker sharing `cache_dir`: one worker does it, the others wait for
    it (one lock, one marker)."""
    with open(cache_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = cache_dir / f"{name}.done"
        if not marker.is_file():
            warm()
            marker.touch()


@pytest.fixture(scope="session")
def warm_pool_cache(session_cache_dir: Path) -> Path:
    """The session cache with every text of the default text pool (9,578 distinct post and reply texts of
    `corpus.text_pool_size` 400), encoded in full batches.

    Runs of the default and smoke worlds then encode no post text. Cold, each of their steps sends its 1-7 new
    texts to the model as a batch of 32 rows (embeddings/embedder.py: fixed shapes, blanks fill the rest), so
    that a cold default run spent a third to a half of its encoding on blank rows. A text's vector does not depend
    on its batchmates (tests/test_feed_store.py), so the golden metrics read the same bits either way."""
    from prism_experiments.config import ExperimentConfig
    from prism_experiments.corpus.templates import pooled_texts
    from prism_experiments.embeddings import Embedder

    corpus = ExperimentConfig().corpus

    def encode_the_pool() -> None:
        import torch

        # every core: the session's first integration tests wait for this pool (the numerics are thread-count exact)
        threads = torch.get_num_threads()
        torch.set_num_threads(os.cpu_count() or 1)
        try:
            texts = pooled_texts(corpus.topics, corpus.hashtag_fraction, corpus.text_pool_size)
            Embedder(cache_dir=session_cache_dir).encode(texts)
        finally:
            torch.set_num_threads(threads)

    _once_per_session(session_cache_dir, "warm-pool", encode_the_pool)
    return session_cache_dir


@pytest.fixture(scope="session")
def warm_smoke_cache(warm_pool_cache: Path) -> Path:
    """The session cache with every text a smoke sweep of seeds 0-2 and up to 40 steps embeds (LONG_SMOKE, for tests
    that kill a job mid-run; the cluster tests' sweeps): the corpora and the posts of their 40 steps, which hold
    those of any fewer steps, so that those sweeps' workers never load the model.

    The smoke sweep's runs are simulated in this process, with the config the sweep's jobs compose: the same texts,
    without a sweep's processes, MLflow runs and figures (tests/test_faults.py checks that a sweep then encodes 0).
    Their post texts come from the warm pool; what else they embed (interest queries) is encoded here."""
    import yaml
    from process_helpers import LONG_SMOKE

    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation import run_simulation

    smoke = yaml.safe_load((Path(__file__).parents[1] / "conf" / "experiment" / "smoke.yaml").read_text())
    modes = str(smoke["hydra"]["sweeper"]["params"]["ranking"]).split(",")
    overrides = [arg for arg in LONG_SMOKE if arg != "-m"]  # one run of the sweep, not a multirun
    places = [f"paths.runs_dir={warm_pool_cache / 'warm-runs'}", f"rag.cache_dir={warm_pool_cache}"]

    def simulate_the_sweep() -> None:
        for seed in (0, 1, 2):
            for mode in modes:
                run_simulation(compose_experiment([*overrides, f"seed={seed}", f"ranking={mode}", *places]))

    _once_per_session(warm_pool_cache, "warm-smoke", simulate_the_sweep)
    return warm_pool_cache


@pytest.fixture
def held_cache(tmp_path: Path, warm_smoke_cache: Path) -> Iterator[HeldEncoding]:
    """A fresh embedding cache (the default pool's texts, no interest queries) whose lock the test holds: each job of
    a sweep on it stays RUNNING until `held_cache.release()`, which first supplies the interest queries of the warm
    smoke cache (tests/process_helpers.py, `HeldEncoding`)."""
    from process_helpers import HeldEncoding

    with HeldEncoding(tmp_path / "held-cache", warm_smoke_cache) as held:
        yield held


# ------------------------------------------------- how `make test` shares the tests among its pytest-xdist workers
#: slow files whose tests share no costly fixture: each of their tests goes to the next free worker. Every other
#: file's tests go to one worker together, so that its module fixtures (a sweep, a server) are built once.
SPREAD_FILES = frozenset(
    {
        "test_faults.py",
        "test_faults_per_launcher.py",
        "test_faults_under_load.py",
        "test_slurm_local.py",
        "test_concurrent_sweeps.py",
        "test_ray_interrupt.py",
    }
)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: `pytest -p no:xdist` still runs
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadfile`, except for SPREAD_FILES' tests: one unit each.

    pytest-xdist's own `--dist loadgroup` would do this with marks, but it groups nothing under pytest 9.2 (it
    still rewrites the node ids' old field: pytest-dev/pytest-xdist#1386), so the scopes are drawn here.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndSpreadTests(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid if Path(file).name in SPREAD_FILES else file

    return FilesAndSpreadTests(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest work first (`make test` keeps this order: --no-loadscope-reorder), so that no long file starts
    last: slow files, then the spread files' tests, then the other integration tests, then the unit tests.

    The spread files' tests take turns, one of each file at a time: the SLURM tests mostly wait (a time limit, a
    requeue), and in file order they ran side by side on three workers at once while the cores idled."""
    turn: dict[str, int] = {}
    spread_turn: dict[str, int] = {}
    for item in items:
        if item.path.name in SPREAD_FILES:
            spread_turn[item.nodeid] = turn[item.path.name] = turn.get(item.path.name, -1) + 1

    def order(item: pytest.Item) -> tuple[int, int]:
        if item.get_closest_marker("slow") is not None:
            if item.path.name in SPREAD_FILES:
                return 1, spread_turn[item.nodeid]
            return 0, 0
        return (2 if item.get_closest_marker("integration") is not None else 3), 0

    items.sort(key=order)


@pytest.fixture
def compose_config(tmp_path: Path) -> Iterator[Callable[..., DictConfig]]:
    """compose(*overrides) with paths redirected to tmp_path, Hydra's own node included (the sweep reads it)."""
    from prism_experiments.composition import compose_dictconfig, hydra_context

    with hydra_context():
        yield lambda *overrides: compose_dictconfig(
            [f"paths.runs_dir={tmp_path}", *overrides], return_hydra_config=True
        )


@pytest.fixture(autouse=True)
def _runs_dir_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code that falls back to the default runs directory writes into the test's tmp dir."""
    monkeypatch.setenv("PRISM_RUNS_DIR", str(tmp_path / "runs"))


# ----------------------------------------------------------------- the suite's own wall time, for `make bench`
_SESSION_STARTED: list[float] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    import time

    _SESSION_STARTED.append(time.time())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After a full run (no file, -k or -m selection), write its wall time and counts to
    runs/bench/test-session.json: section 7 of `make bench` reports it (prism_experiments/bench/first_hour.py)."""
    import json
    import subprocess
    import time
    from datetime import UTC, datetime

    config = session.config
    selected = (
        config.args not in ([], [str(config.rootpath)], ["tests"]) or config.option.keyword or config.option.markexpr
    )
    if hasattr(config, "workerinput") or selected or not _SESSION_STARTED:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=config.rootpath
    )
    record = {
        "wall_s": round(time.time() - _SESSION_STARTED[0], 1),
        "passed": len(stats.get("passed", [])),
        "failed": len(stats.get("failed", [])) + len(stats.get("error", [])),
        "workers": getattr(config.option, "numprocesses", None),
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit.stdout.strip() or "unknown",
    }
    from prism_experiments.locations import RunLayout

    target = RunLayout(Path(config.rootpath) / "runs").test_session_file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record) + "\n")


# ------------------------------------------------------- CPU per test, to find what `make test`'s time is made of
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With PRISM_TEST_CPU_LOG=<dir>, append each test's CPU seconds (this process's own, then the children it
    waited for: sweeps, servers) and wall seconds to <dir>/<worker>.tsv; `make test-cpu` (tests/cpu_table.py) adds
    every other process the test started, and docs/testing.md, "Where the time goes", says how to read it."""
    log_dir = os.environ.get("PRISM_TEST_CPU_LOG")
    if not log_dir:
        yield
        return
    import resource
    import time

    def cpu(who: int) -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    own, waited, wall = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.monotonic()
    yield
    own, waited = cpu(resource.RUSAGE_SELF) - own, cpu(resource.RUSAGE_CHILDREN) - waited
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(log_dir) / f"{worker}.tsv", "a") as log:
        log.write(f"{item.nodeid}\t{own:.2f}\t{waited:.2f}\t{time.monotonic() - wall:.2f}\n")
