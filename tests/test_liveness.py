"""Liveness of RUNNING runs: the pure verdict, the reaper and claims against a fake client, the heartbeat thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import pytest
from process_helpers import gone_or_zombie

from prism_experiments.ops.liveness import (
    Heartbeat,
    close_own_duplicates,
    live_holder,
    liveness_tags,
    reap_stale_runs,
    run_liveness,
    this_host,
)
from prism_experiments.ops.processes import process_alive
from prism_experiments.tracking.tags import CONFIG_HASH_TAG, ERROR_TAG, HEARTBEAT_TAG, HOST_TAG, PID_TAG

NOW = 1_800_000_000.0


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_run_of_a_live_local_process_is_alive_even_with_an_old_heartbeat() -> None:
    verdict = run_liveness(liveness_tags(NOW - 3600), start_time_ms=int((NOW - 3600) * 1000), now=NOW)
    assert verdict.alive and "is running" in verdict.reason


def test_a_run_whose_local_process_is_gone_is_dead_at_once() -> None:
    tags = {PID_TAG: str(_dead_pid()), HOST_TAG: this_host(), HEARTBEAT_TAG: f"{NOW:.0f}"}
    verdict = run_liveness(tags, start_time_ms=int(NOW * 1000), now=NOW)
    assert not verdict.alive and "no longer exists" in verdict.reason


def test_a_killed_process_its_parent_has_not_reaped_yet_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 10
        while _state(child.pid) != "Z" and time.monotonic() < deadline:  # dead, unreaped: a zombie
            time.sleep(0.05)
        assert _state(child.pid) == "Z" and not process_alive(child.pid)
    finally:
        child.wait()


def _state(pid: int) -> str:
    """Read apart from `process_alive` (an independent check of the state it relies on)."""
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0]


def test_a_remote_run_is_judged_by_its_heartbeat_alone() -> None:
    tags = {PID_TAG: str(_dead_pid()), HOST_TAG: "another-host", HEARTBEAT_TAG: f"{NOW - 60:.0f}"}
    assert run_liveness(tags, int(NOW * 1000), NOW, stale_after=120).alive
    assert not run_liveness(tags, int(NOW * 1000), NOW, stale_after=30).alive


def test_a_run_without_heartbeat_ages_from_its_start() -> None:
    assert run_liveness({}, start_time_ms=int((NOW - 10) * 1000), now=NOW, stale_after=60).alive
    verdict = run_liveness({}, start_time_ms=int((NOW - 600) * 1000), now=NOW, stale_after=60)
    assert not verdict.alive and "no heartbeat" in verdict.reason


@dataclass
class FakeRun:
    run_id: str
    tags: dict[str, str]
    start_time: int
    status: str = "RUNNING"

    @property
    def info(self) -> FakeRun:
        return self

    @property
    def data(self) -> FakeRun:
        return self


@dataclass
class FakeClient:
    """search_runs understands the two filters the module uses; records set_tag/set_terminated."""

    runs: list[FakeRun]
    terminated: dict[str, str] = field(default_factory=dict)

    def search_runs(self, experiment_ids: list[str], filter_string: str, max_results: int) -> list[FakeRun]:
        found = [run for run in self.runs if run.status == "RUNNING"]
        if CONFIG_HASH_TAG in filter_string:
            digest = filter_string.split("= '")[1].split("'")[0]
            found = [run for run in found if run.tags.get(CONFIG_HASH_TAG) == digest]
        return found

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        next(run for run in self.runs if run.run_id == run_id).tags[key] = value

    def set_terminated(self, run_id: str, status: str) -> None:
        self.terminated[run_id] = status
        next(run for run in self.runs if run.run_id == run_id).status = status


def test_reaper_kills_only_dead_runs_and_says_why() -> None:
    alive = FakeRun("alive", liveness_tags(NOW), int(NOW * 1000))
    orphan = FakeRun(
        "orphan", {PID_TAG: str(_dead_pid()), HOST_TAG: this_host(), HEARTBEAT_TAG: f"{NOW:.0f}"}, int(NOW * 1000)
    )
    silent = FakeRun("silent", {HEARTBEAT_TAG: f"{NOW - 3600:.0f}", HOST_TAG: "elsewhere"}, int((NOW - 3600) * 1000))
    client = FakeClient([alive, orphan, silent])
    assert sorted(reap_stale_runs(client, ["1"], now=NOW)) == ["orphan", "silent"]
    assert client.terminated == {"orphan": "KILLED", "silent": "KILLED"}
    assert orphan.tags[ERROR_TAG].startswith("reaped: left RUNNING") and "alive" not in client.terminated


def another_live_process(now: float) -> dict[str, str]:
    """Liveness tags of a live process on this host other than this one (the test runner's parent)."""
    return liveness_tags(now) | {PID_TAG: str(os.getppid())}


def test_of_two_live_claims_the_earlier_run_holds_the_config() -> None:
    first = FakeRun("b-first", another_live_process(NOW) | {CONFIG_HASH_TAG: "h1"}, 1000)
    second = FakeRun("a-second", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h1"}, 2000)
    other = FakeRun("other", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h2"}, 500)
    client = FakeClient([first, second, other])
    assert live_holder(client, "1", "h1", "a-second", now=NOW).run_id == "b-first"
    assert live_holder(client, "1", "h1", "b-first", now=NOW) is None


def test_a_dead_claim_does_not_hold_the_config() -> None:
    dead = FakeRun(
        "dead",
        {PID_TAG: str(_dead_pid()), HOST_TAG: this_host(), HEARTBEAT_TAG: f"{NOW:.0f}", CONFIG_HASH_TAG: "h1"},
        1000,
    )
    mine = FakeRun("mine", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h1"}, 2000)
    assert live_holder(FakeClient([dead, mine]), "1", "h1", "mine", now=NOW) is None


def test_heartbeat_beats_and_survives_a_failing_beat() -> None:
    beats: list[float] = []
    failing = threading.Event()

    def beat() -> None:
        if not failing.is_set():
            failing.set()
            raise ConnectionError("server down")
        beats.append(time.monotonic())

    with Heartbeat(beat, interval=0.02, poll=0.01) as heart:
        deadline = time.monotonic() + 5
        while len(beats) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert heart.failures == 1 and len(beats) >= 2


CHILD = """
import os, pathlib, sys, time
from prism_experiments.ops.liveness import ParentWatch
folder = pathlib.Path(sys.argv[1])
ParentWatch.ensure(poll=0.05)
ParentWatch.on_orphaned(lambda: (folder / "orphaned").write_text(str(os.getpid())))
(folder / "started").write_text(str(os.getpid()))
time.sleep(600)
"""
DRIVER = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
time.sleep(600)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="uses /proc")
def test_a_job_whose_driver_is_killed_exits_and_reports_it(tmp_path) -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, CHILD, str(tmp_path)])
    deadline = time.monotonic() + 300  # a safety net: start-up under load
    while not (tmp_path / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int((tmp_path / "started").read_text())
    driver.kill()  # SIGKILL: the driver runs no cleanup
    driver.wait()
    while not (tmp_path / "orphaned").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "orphaned").read_text() == str(child), "the orphaned job ran its handler"
    while not gone_or_zombie(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone_or_zombie(child), "the orphaned job exited"


WATCHING_A_PID = CHILD.replace(
    "ParentWatch.ensure(poll=0.05)", "ParentWatch.ensure(poll=0.05, driver_pid=int(sys.argv[2]))"
)


@pytest.mark.skipif(sys.platform != "linux", reason="uses /proc")
def test_a_worker_forked_by_a_fork_server_watches_the_driver_not_its_parent(tmp_path) -> None:
    """The fork server (here: this test) outlives the driver; the worker must still stop when the driver dies."""
    driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    worker = subprocess.Popen([sys.executable, "-c", WATCHING_A_PID, str(tmp_path), str(driver.pid)])
    deadline = time.monotonic() + 300  # a safety net: start-up under load
    while not (tmp_path / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert not (tmp_path / "orphaned").exists() and worker.poll() is None, "a live driver keeps its worker"
    driver.kill()
    driver.wait()
    assert worker.wait(timeout=30) == 3, "the worker exited once its driver was gone, its parent alive"
    assert (tmp_path / "orphaned").read_text() == str(worker.pid)


def test_an_earlier_run_of_this_same_process_is_a_duplicate_not_a_claim_and_is_closed() -> None:
    """A create_run retried after a timeout can leave two runs made by one process: the job must not skip itself."""
    leftover = FakeRun("a-leftover", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h1"}, 1000)
    mine = FakeRun("b-mine", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h1"}, 2000)
    other = FakeRun("c-other-config", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h2"}, 500)
    client = FakeClient([leftover, mine, other])
    assert live_holder(client, "1", "h1", "b-mine", now=NOW) is None
    assert close_own_duplicates(client, "1", "h1", "b-mine") == ["a-leftover"]
    assert client.terminated == {"a-leftover": "KILLED"} and "duplicate of run b-mine" in leftover.tags[ERROR_TAG]


def test_a_dead_earlier_attempt_of_a_requeued_job_is_closed_and_a_live_later_run_is_left_alone() -> None:
    """SLURM requeued the job: the killed attempt's run stays RUNNING with a dead pid until the new attempt
    closes it; a live run of another process (which will give way to this one) is not touched."""
    dead = {PID_TAG: str(_dead_pid()), HOST_TAG: this_host(), HEARTBEAT_TAG: f"{NOW:.0f}", CONFIG_HASH_TAG: "h1"}
    killed_attempt = FakeRun("a-first-attempt", dead, 1000)
    mine = FakeRun("b-mine", liveness_tags(NOW) | {CONFIG_HASH_TAG: "h1"}, 2000)
    later_live = FakeRun("c-later", another_live_process(NOW) | {CONFIG_HASH_TAG: "h1"}, 3000)
    client = FakeClient([killed_attempt, mine, later_live])
    assert live_holder(client, "1", "h1", "b-mine", now=NOW) is None
    assert close_own_duplicates(client, "1", "h1", "b-mine", now=NOW) == ["a-first-attempt"]
    assert client.terminated == {"a-first-attempt": "KILLED"}
    assert "an earlier attempt of this job" in killed_attempt.tags[ERROR_TAG]
