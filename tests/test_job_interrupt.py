"""A SIGTERM ends a run KILLED even when a library turns the interrupt into an error of its own."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from prism_experiments.config import ExperimentConfig
from prism_experiments.harness import job
from prism_experiments.tracking.store import resolve_tracking_uri

pytestmark = pytest.mark.integration


def _sigterm_seen_as(error: type[Exception]) -> None:
    """Deliver SIGTERM to this process and, as numpy's structured compare does, replace the interrupt."""
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises at the next bytecode, well before this ends
    except KeyboardInterrupt:
        raise error("Cannot compare structured arrays unless they have a common dtype.") from None
    raise AssertionError("the SIGTERM handler did not raise")


def _only_run(cfg: ExperimentConfig) -> object:
    client = MlflowClient(resolve_tracking_uri(cfg))
    (experiment,) = [e for e in client.search_experiments() if e.name == cfg.experiment_name]
    (run,) = client.search_runs([experiment.experiment_id])
    return run


@pytest.mark.parametrize("reraise", [True, False], ids=["single run", "sweep job"])
def test_a_sigterm_that_a_library_turned_into_a_type_error_still_ends_the_run_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reraise: bool
) -> None:
    cfg = ExperimentConfig.from_mapping({"paths": {"runs_dir": str(tmp_path)}, "experiment_name": "interrupted"})
    monkeypatch.setattr(job, "run_simulation", lambda _cfg, **_kwargs: _sigterm_seen_as(TypeError))
    with pytest.raises(KeyboardInterrupt) as raised:
        job.run_job(cfg, reraise=reraise)
    assert raised.value.args == ("SIGTERM",) and isinstance(raised.value.__cause__, TypeError)
    assert getattr(raised.value, "prism_reported", False), "the entry point would print a second error line"
    run = _only_run(cfg)
    assert run.info.status == "KILLED"  # type: ignore[attr-defined]
    assert run.data.tags["prism.error"] == "interrupted (SIGTERM)"  # type: ignore[attr-defined]


def test_an_error_with_no_signal_behind_it_still_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = ExperimentConfig.from_mapping({"paths": {"runs_dir": str(tmp_path)}, "experiment_name": "failed"})

    def compare_mismatched(_cfg: ExperimentConfig, **_kwargs: object) -> None:
        np.zeros(2, dtype=[("a", "f4")]) == np.zeros(2, dtype=[("b", "U1")])  # noqa: B015  # numpy's own TypeError

    monkeypatch.setattr(job, "run_simulation", compare_mismatched)
    outcome = job.run_job(cfg, reraise=False)
    run = _only_run(cfg)
    assert (outcome.status, run.info.status) == ("FAILED", "FAILED")  # type: ignore[attr-defined]
    assert run.data.tags["prism.error"].startswith("TypeError: ")  # type: ignore[attr-defined]
