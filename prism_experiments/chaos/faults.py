"""The faults a chaos round injects, each when its event has happened (never after a fixed time)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from prism_experiments.chaos.world import EXPERIMENT, Stores, Sweep, client
from prism_experiments.embeddings.embedder import cache_directory
from prism_experiments.embeddings.model import DEFAULT_MODEL
from prism_experiments.harness.sweep_file import SWEEP_FILE_NAME
from prism_experiments.locations import sqlite_path
from prism_experiments.tracking.tags import PID_TAG, SEED_TAG

#: how often the store and the sweep folders are looked at while waiting for an event
POLL_S = 0.2


@dataclass
class Injection:
    """What a fault did: whether it reached a live target, and what (for the report)."""

    hit: bool
    detail: str


def damage_newest_shard(cache: Path) -> Injection:
    """Overwrite the middle of the newest shard of the embedding cache (the texts the round's references added)."""
    folder = cache_directory(cache, DEFAULT_MODEL)
    shards = sorted(folder.glob("*.npz"), key=lambda path: path.stat().st_mtime)
    if not shards:
        return Injection(False, "no shard to damage")
    shard = shards[-1]
    data = bytearray(shard.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = os.urandom(64)
    shard.write_bytes(bytes(data))
    return Injection(True, f"damaged {shard.name}")


def fill_disk(disk: Path) -> Path:
    """Write a file until the tmpfs is full; returns it (removed once the round's sweeps have ended)."""
    filler = disk / "filler"
    block = b"\0" * (1 << 20)
    with open(filler, "wb") as handle, contextlib.suppress(OSError):
        while True:
            handle.write(block)
            handle.flush()
    return filler


def _round_runs(stores: Stores, store: str, seeds: set[int], experiment: str = EXPERIMENT) -> list:
    """The round's simulation runs so far (its seeds are its own), [] while the store cannot answer."""
    database = sqlite_path(stores.tracking_uri(store))
    if database is not None and not any(stores.runs_dir(store).glob(f"hydra/{experiment}/*/{SWEEP_FILE_NAME}")):
        # a sweep's file names its parent run, so the store is made by then: opened before, a new store's MLflow
        # tables would be created from two processes at once, and the other's fails ("table _alembic_tmp_tags
        # already exists"; a replication round's store is new, and its suite opens it before its first sweep)
        return []
    try:
        found = client(stores.tracking_uri(store)).get_experiment_by_name(experiment)
        if found is None:
            return []
        runs = client(stores.tracking_uri(store)).search_runs(
            [found.experiment_id], "tags.`prism.kind` = 'simulation'", max_results=1000
        )
    except Exception:  # not created yet, or a server still starting
        return []
    return [run for run in runs if run.data.tags.get(SEED_TAG, "").isdigit() and int(run.data.tags[SEED_TAG]) in seeds]


def wait_for_event(
    trigger: str, sweeps: list[Sweep], stores: Stores, store: str, seeds: set[int], experiment: str = EXPERIMENT
) -> list:
    """Until `trigger` happened (a sweep's parent run exists, a job of the round is RUNNING, a job FINISHED):
    the round's runs at that moment; [] when every sweep ended first (the fault then finds nothing to hit)."""
    pattern = f"hydra/{experiment}/*/prism_sweep.json"
    sweep_files_before = {str(p) for p in stores.runs_dir(store).glob(pattern)}
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and any(s.process.poll() is None for s in sweeps):
        if trigger == "started":
            found = {str(p) for p in stores.runs_dir(store).glob(pattern)}
            if found - sweep_files_before:
                return _round_runs(stores, store, seeds, experiment) or [None]
        else:
            runs = _round_runs(stores, store, seeds, experiment)
            wanted = "RUNNING" if trigger == "running" else "FINISHED"
            hits = [run for run in runs if run.info.status == wanted and PID_TAG in run.data.tags]
            if hits:
                return hits
        time.sleep(POLL_S)
    return []


def inject(fault: str, sweeps: list[Sweep], stores: Stores, at_event: list, rng: random.Random) -> Injection:
    """Deliver `fault` (not the before-start or disk ones) to a live target chosen with `rng`."""
    live = [s for s in sweeps if s.process.poll() is None]
    if fault == "kill_worker":
        running = [run for run in at_event if run is not None and run.info.status == "RUNNING"]
        if not running:
            return Injection(False, "no job running")
        pid = int(rng.choice(running).data.tags[PID_TAG])
        return _signal(pid, signal.SIGKILL, f"kill -9 of job process {pid}")
    if fault == "kill_mlflow":
        from prism_experiments.ops import tracking_server

        assert stores.server_home is not None
        state = tracking_server.read_state(stores.server_home)
        assert state is not None
        try:
            os.killpg(state.mlflow_pid, signal.SIGKILL)
        except ProcessLookupError:
            return Injection(False, "the MLflow server was gone")
        return Injection(True, f"kill -9 of the MLflow server's group {state.mlflow_pid}")
    if fault == "kill_postgres":
        from prism_experiments.ops import tracking_server

        assert stores.server_home is not None
        state = tracking_server.read_state(stores.server_home)
        assert state is not None
        return _signal(state.postgres_pid, signal.SIGKILL, f"kill -9 of the postmaster {state.postgres_pid}")
    if not live:
        return Injection(False, "every sweep had ended")
    target = rng.choice(live)
    if fault in ("kill_driver", "sigterm"):
        # a suite's driver is its sweep in flight: a suite killed itself would leave that sweep running on, unwatched
        driver = target.driver_pid()
        if driver is None:
            return Injection(False, "the suite had no sweep in flight")
        signum, what = (signal.SIGKILL, "kill -9 of") if fault == "kill_driver" else (signal.SIGTERM, "SIGTERM to")
        return _signal(driver, signum, f"{what} the driver {driver}")
    if fault == "sigint":
        try:
            os.killpg(target.process.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
        except ProcessLookupError:
            return Injection(False, "the driver had ended")
        return Injection(True, f"SIGINT to the process group {target.process.pid}")
    raise ValueError(f"fault: {fault!r} is not injected while sweeps run")


def _signal(pid: int, signum: int, detail: str) -> Injection:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return Injection(False, f"{detail}: already gone")
    return Injection(True, detail)
