"""What the MLflow UI shows first for a PRISM experiment: the classic runs view, grouped by condition.

MLflow 3.17's UI reads two experiment tags for this (docs/review.md): `mlflow.experimentKind`
(`custom_model_development` opens the runs table, not the GenAI traces view) and
`mlflow.sharedViewState.<key>`, a saved view (an envelope: name, times and the runs-table state as a
JSON string) that the "Views" menu lists and the URL `?viewStateShareKey=<key>` loads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prism_experiments.tracking.tags import (
    CONDITION_TAG,
    EXPERIMENT_KIND_TAG,
    KIND_TAG,
    SEED_TAG,
    SHARED_VIEW_TAG_PREFIX,
    SIMULATION_KIND,
    tag_equals,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

CLASSIC_KIND = "custom_model_development"
VIEW_KEY = "prism-by-condition"
VIEW_NAME = "PRISM: conditions side by side"


def column_key(kind: str, name: str) -> str:
    """A runs-table column as the UI names it (`metrics.`inn_share``, `tags.`prism.condition``)."""
    return f"{kind}.`{name}`"


def runs_view_state(metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """The saved view: simulation runs only, grouped by `prism.condition` (means), with `metrics` as columns
    (default: the registered headline metrics, metrics/registry.py)."""
    if metrics is None:
        # imported here: the metric modules bring pandas, which `prism-ui` loads only once it talks to MLflow
        from prism_experiments.metrics.registry import headline_metric_names

        metrics = headline_metric_names()
    return {
        "searchFilter": tag_equals(KIND_TAG, SIMULATION_KIND),
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "selectedColumns": [
            column_key("tags", CONDITION_TAG),
            column_key("tags", SEED_TAG),
            *(column_key("metrics", m) for m in metrics),
        ],
        "groupBy": {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": CONDITION_TAG}]},
        "groupsExpanded": {},
        "useGroupedValuesInCharts": True,
        "hideEmptyCharts": True,
        "runsHiddenMode": "SHOW_ALL",
    }


def saved_view(state: dict[str, Any], created_ms: int, name: str = VIEW_NAME) -> str:
    """The saved-view envelope the UI's "Views" menu lists (the state itself is a JSON string inside it)."""
    return json.dumps({"name": name, "createdAt": created_ms, "updatedAt": created_ms,
                       "state": json.dumps(state, separators=(",", ":"))}, separators=(",", ":"))  # fmt: skip


def view_state_of(tag_value: str) -> dict[str, Any]:
    """The runs-table state of a saved-view tag (envelope or a bare state, both of which the UI reads)."""
    value = json.loads(tag_value)
    return json.loads(value["state"]) if isinstance(value.get("state"), str) else value


def view_tags(metrics: Sequence[str] | None = None, created_ms: int | None = None) -> dict[str, str]:
    """The experiment tags that make the classic runs view and the saved condition view available."""
    created = int(time.time() * 1000) if created_ms is None else created_ms
    return {
        EXPERIMENT_KIND_TAG: CLASSIC_KIND,
        SHARED_VIEW_TAG_PREFIX + VIEW_KEY: saved_view(runs_view_state(metrics), created),
    }


def apply_view_tags(client: MlflowClient, experiment_id: str, current: dict[str, str] | None = None) -> None:
    """Set the view tags on an experiment, skipping a tag whose value (a view's state) is already the same."""
    current = current if current is not None else dict(client.get_experiment(experiment_id).tags)
    for key, value in view_tags().items():
        if key in current and (current[key] == value or _same_view(current[key], value)):
            continue
        client.set_experiment_tag(experiment_id, key, value)


def _same_view(old: str, new: str) -> bool:
    try:
        return view_state_of(old) == view_state_of(new) and json.loads(old)["name"] == VIEW_NAME
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def runs_view_url(base_url: str, experiment_id: str) -> str:
    """The URL of the experiment's runs table in the saved condition view, in the UI's "Model training" mode
    (`workflowType`; without it the sidebar stays on whichever mode the browser last used, GenAI at first)."""
    return (
        f"{base_url.rstrip('/')}/#/experiments/{experiment_id}/runs"
        f"?viewStateShareKey={VIEW_KEY}&workflowType=machine_learning"
    )
