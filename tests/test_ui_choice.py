"""Which experiment `make ui` opens: the newest one with an ended run, not one whose only run is still going."""

from __future__ import annotations

from pathlib import Path

from mlflow.tracking import MlflowClient

from prism_experiments.ops.ui import latest_experiment


def test_the_ui_opens_the_newest_experiment_with_an_ended_run(tmp_path: Path) -> None:
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    done = client.create_experiment("done")
    going = client.create_experiment("going")
    client.set_terminated(client.create_run(done, start_time=1_000).info.run_id, "FINISHED")
    client.create_run(going, start_time=2_000)  # RUNNING, and newer
    chosen = latest_experiment(client)
    assert chosen is not None and chosen.name == "done"


def test_with_no_ended_run_the_ui_opens_the_newest_running_one(tmp_path: Path) -> None:
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    client.create_run(client.create_experiment("older"), start_time=1_000)
    client.create_run(client.create_experiment("newer"), start_time=2_000)
    chosen = latest_experiment(client)
    assert chosen is not None and chosen.name == "newer"
