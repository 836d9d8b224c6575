"""`make test-timing`'s load: every busy process it starts is gone once its block ends."""

from __future__ import annotations

import os
import shutil

import pytest
import under_load

from prism_experiments.ops.processes import child_pids, process_alive


@pytest.mark.parametrize("stress_ng", [False, True], ids=["python loops", "stress-ng"])
def test_the_busy_processes_run_inside_the_block_and_are_gone_after_it(
    monkeypatch: pytest.MonkeyPatch, stress_ng: bool
) -> None:
    if stress_ng and shutil.which("stress-ng") is None:
        pytest.skip("stress-ng is not installed (apt-get install stress-ng); the Python loops stand in for it")
    if not stress_ng:
        monkeypatch.setattr(under_load.shutil, "which", lambda name: None)
    before = set(child_pids(os.getpid()))
    with under_load.cores_kept_busy(2) as what:
        burners = [pid for pid in child_pids(os.getpid()) if pid not in before]
        assert burners and all(process_alive(pid) for pid in burners)
        assert ("stress-ng" in what) == stress_ng
        if not stress_ng:
            assert len(burners) == 2
    assert not [pid for pid in burners if process_alive(pid)]
