"""`_open_run` on a real sqlite MLflow store: a config that FINISHED elsewhere while this job started is skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.entities import ViewType
from mlflow.tracking import MlflowClient

from prism_experiments.config import ExperimentConfig
from prism_experiments.harness import job
from prism_experiments.tracking.tags import CONFIG_HASH_TAG

pytestmark = pytest.mark.integration


def test_a_run_finished_between_the_first_look_and_creation_makes_the_job_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    experiment_id = client.create_experiment("race", artifact_location=str(tmp_path / "artifacts"))
    cfg = ExperimentConfig.from_mapping({"paths": {"runs_dir": str(tmp_path)}})
    digest = "d1g35t"
    other = client.create_run(experiment_id, tags={CONFIG_HASH_TAG: digest, "prism.kind": "simulation"}).info.run_id
    client.set_terminated(other, "FINISHED")  # the other sweep's job, done by the time this one looks again

    real = job.find_finished_run
    looks: list[str | None] = []

    def first_look_misses_it(*args: object) -> str | None:
        looks.append(None if not looks else real(*args))  # type: ignore[arg-type]
        return looks[-1]

    monkeypatch.setattr(job, "find_finished_run", first_look_misses_it)
    created: list[tuple[str | None, int]] = []  # (run id, looks so far): a worker guards its run from its creation on
    run_id, outcome = job._open_run(
        client, experiment_id, cfg, (), None, None, digest, lambda made: created.append((made, len(looks)))
    )
    assert run_id is None and outcome is not None
    assert (outcome.status, outcome.run_id) == ("SKIPPED", other)
    assert len(looks) == 2
    alive = client.search_runs([experiment_id], f"tags.`{CONFIG_HASH_TAG}` = '{digest}'")
    assert [r.info.run_id for r in alive] == [other], "this job's own run was deleted"
    withdrawn = client.search_runs(
        [experiment_id], f"tags.`{CONFIG_HASH_TAG}` = '{digest}'", run_view_type=ViewType.DELETED_ONLY
    )
    assert len(withdrawn) == 1 and withdrawn[0].info.status == "KILLED", "a withdrawn claim never reads RUNNING"
    # told of the run before its claim checks looked again, and of its end when it was withdrawn (an interrupt after
    # that must not mark a deleted run)
    assert created == [(withdrawn[0].info.run_id, 1), (None, 2)]
    assert withdrawn[0].data.tags["prism.error"].startswith("claim withdrawn: ")
