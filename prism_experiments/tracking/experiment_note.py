"""The experiment's description (MLflow's note, the `mlflow.note.content` tag): the sweep and its latest analysis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from prism_experiments.tracking.tags import NOTE_TAG

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

ANALYSIS_PREFIX = "**Latest analysis**"
NO_ANALYSIS = f"{ANALYSIS_PREFIX}: none yet (`make compare EXPERIMENT=<name>`)."


def run_link(experiment_id: str, run_id: str, text: str) -> str:
    """A Markdown link to a run that works inside the MLflow UI (hash route)."""
    return f"[{text}](#/experiments/{experiment_id}/runs/{run_id})"


def sweep_note(experiment: str, varies: Mapping[str, str], n_seeds: int, n_jobs: int, command: str,
               experiment_id: str, parent_run_id: str, sweep_id: str) -> str:  # fmt: skip
    """The sweep part of the note: what varies, how many seeds and jobs, the command, the parent run."""
    factors = "; ".join(f"`{key}` = {value}" for key, value in varies.items()) or "nothing but the seed"
    return "\n".join([
        f"## {experiment}",
        "",
        f"**Varies**: {factors}.",
        "",
        f"**Seeds**: {n_seeds} per condition ({n_jobs} jobs in the latest sweep).",
        "",
        f"**Command**: `{command}`",
        "",
        f"**Latest sweep**: `{sweep_id}`, parent run {run_link(experiment_id, parent_run_id, parent_run_id[:8])}.",
        "",
        "Conditions side by side: the runs table grouped by the `prism.condition` tag (`make ui` opens it).",
    ])  # fmt: skip


def analysis_line(experiment_id: str, run_id: str, run_name: str) -> str:
    """The note's line pointing at the latest `make compare` analysis run."""
    return f"{ANALYSIS_PREFIX}: {run_link(experiment_id, run_id, run_name)} (report.html among its artifacts)."


def split_note(note: str) -> tuple[str, str | None]:
    """(the note without its analysis line, that line or None)."""
    lines = note.splitlines()
    found = next((line for line in lines if line.startswith(ANALYSIS_PREFIX)), None)
    body = "\n".join(line for line in lines if not line.startswith(ANALYSIS_PREFIX)).rstrip()
    return body, found


def compose_note(body: str, analysis: str | None) -> str:
    """The note: the sweep part, then the analysis line (or a pointer to `make compare`)."""
    return "\n\n".join(part for part in (body.rstrip(), analysis or NO_ANALYSIS) if part) + "\n"


def current_note(client: MlflowClient, experiment_id: str) -> str:
    return client.get_experiment(experiment_id).tags.get(NOTE_TAG, "")


def write_sweep_note(client: MlflowClient, experiment_id: str, body: str) -> None:
    """Replace the sweep part of the note, keeping the latest-analysis line."""
    _, analysis = split_note(current_note(client, experiment_id))
    client.set_experiment_tag(experiment_id, NOTE_TAG, compose_note(body, analysis))


def write_analysis_line(client: MlflowClient, experiment_id: str, run_id: str, run_name: str) -> None:
    """Point the note at a new analysis run, keeping the sweep part."""
    body, _ = split_note(current_note(client, experiment_id))
    client.set_experiment_tag(
        experiment_id, NOTE_TAG, compose_note(body, analysis_line(experiment_id, run_id, run_name))
    )
