"""`make ui` / `prism-ui`: the MLflow UI on 127.0.0.1 against the project's store, opened on the runs table
of the latest experiment (or `--experiment NAME`), grouped by condition (docs/review.md)."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
import webbrowser
from typing import TYPE_CHECKING

from prism_experiments.locations import default_runs_dir, sqlite_path, tracking_uri_for
from prism_experiments.ops.daemons import port_open
from prism_experiments.ops.processes import stop_process_group
from prism_experiments.tracking.experiment_views import apply_view_tags, runs_view_url
from prism_experiments.tracking.store import client_for, mlflow_server_env

if TYPE_CHECKING:
    from mlflow.entities import Experiment
    from mlflow.tracking import MlflowClient

HOST = "127.0.0.1"


class UiError(Exception):
    """A bad `--experiment` or store: one line naming the field."""


def latest_experiment(client: MlflowClient) -> Experiment | None:
    """The active experiment whose newest ended run started last; with no ended run, whose newest run did
    (None when the store has no runs). A run still going is not what a user opens the UI to read."""
    experiments = {e.experiment_id: e for e in client.search_experiments()}
    if not experiments:
        return None
    newest = ["attributes.start_time DESC"]
    runs = client.search_runs(list(experiments), "attributes.status != 'RUNNING'", max_results=1, order_by=newest)
    runs = runs or client.search_runs(list(experiments), max_results=1, order_by=newest)
    return experiments[runs[0].info.experiment_id] if runs else None


def chosen_experiment(client: MlflowClient, name: str | None) -> Experiment | None:
    """The experiment called `name`, else the latest; UiError naming the known experiments if `name` is unknown."""
    if name is None:
        return latest_experiment(client)
    experiment = client.get_experiment_by_name(name)
    if experiment is None or experiment.lifecycle_stage != "active":
        known = ", ".join(sorted(e.name for e in client.search_experiments())) or "(none)"
        raise UiError(f"experiment: no experiment named {name!r}; known: {known}")
    return experiment


def start_url(uri: str, port: int, name: str | None) -> str:
    """The URL to open: the chosen experiment's runs view (its view tags set), else the UI's home page."""
    base = f"http://{HOST}:{port}"
    path = sqlite_path(uri)
    if path is not None and not path.is_file():
        if name is not None:
            raise UiError(f"experiment: the store {path} does not exist yet; run a sweep first")
        return base
    client = client_for(uri)
    experiment = chosen_experiment(client, name)
    if experiment is None:
        return base
    apply_view_tags(client, experiment.experiment_id, dict(experiment.tags))
    return runs_view_url(base, experiment.experiment_id)


def listening(port: int, timeout_s: float = 60.0) -> bool:
    """True once something accepts connections on HOST:`port` (False after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while not port_open(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="prism-ui", description=__doc__)
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--tracking-uri", default=None)
    parser.add_argument("--experiment", default=None, help="experiment to open (default: the latest)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL, do not open a browser")
    # one worker: uvicorn's default of 4 on a 2-core machine under load had its workers killed and restarted
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    args = parser.parse_args(argv)
    default_runs_dir().mkdir(parents=True, exist_ok=True)
    uri = tracking_uri_for(args.tracking_uri)
    # a named experiment is checked first, so that a bad name is one line and no server; for the latest one the
    # server starts first (its own process group: stopping it stops uvicorn's workers too) and imports while
    # the experiment is looked up; its own output goes to stderr, so that stdout is only the URL's two lines
    # (MLflow's "Registry store URI not provided" came first there at times)
    url = None
    if args.experiment is not None:
        try:
            url = start_url(uri, args.port, args.experiment)
        except UiError as error:
            print(f"prism-ui: error: {error}", file=sys.stderr)
            return 2
    server = subprocess.Popen([sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
                               "--host", HOST, "--port", str(args.port), "--workers", str(args.workers)],
                              start_new_session=True, env=mlflow_server_env(), stdout=sys.stderr)  # fmt: skip
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        url = url or start_url(uri, args.port, None)
        print(f"MLflow UI for {uri}\n  open {url}  (Ctrl-C stops it)", flush=True)
        if not args.no_browser and listening(args.port):
            webbrowser.open(url)
        return server.wait()
    except (KeyboardInterrupt, SystemExit):
        return 0
    finally:
        stop_group(server)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)


def stop_group(server: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it if it is still there after 10 s."""
    if server.poll() is None:
        stop_process_group(server.pid, timeout_s=10)


if __name__ == "__main__":
    sys.exit(main())
