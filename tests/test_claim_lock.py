"""The claim lock (docs/faults.md, two sweeps on one sqlite store): while a job claims its config, no other
process may claim on the same store; a server store has nothing to lock."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from prism_experiments.tracking.store import claim_lock


def locked_by_another(path: Path) -> bool:
    """Whether a lock on `path` taken through another open file description would have to wait."""
    with open(path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_a_sqlite_store_is_locked_while_a_claim_is_made_and_free_after(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'runs' / 'mlflow.db'}"
    lock = tmp_path / "runs" / ".prism-claims.lock"
    with claim_lock(uri):
        assert locked_by_another(lock)
    assert not locked_by_another(lock)


def test_the_lock_is_released_when_the_claim_fails(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(RuntimeError), claim_lock(uri):
        raise RuntimeError("the store refused the run")
    assert not locked_by_another(tmp_path / ".prism-claims.lock")


def test_a_server_store_takes_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with claim_lock("http://127.0.0.1:5000"):
        pass
    assert not list(tmp_path.rglob(".prism-claims.lock"))
