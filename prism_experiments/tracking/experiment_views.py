"""What the MLflow UI shows first for a PRISM experiment: the classic runs view, grouped by condition.

MLflow 3.17's UI reads two experiment tags for this (docs/review.md): `mlflow.experimentKind`
(`custom_model_development` opens the runs table, not the GenAI traces view) and
`mlflow.sharedViewState.<key>`, a saved runs-table state that the URL `?viewStateShareKey=<key>` loads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prism_experiments.tracking.tags import CONDITION_TAG, KIND_TAG, SEED_TAG, SIMULATION_KIND, tag_equals

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
CLASSIC_KIND = "custom_model_development"
SHARED_VIEW_TAG_PREFIX = "mlflow.sharedViewState."
VIEW_KEY = "prism-by-condition"
#: The headline metrics: the columns of the runs view and of each sweep's per-condition means.
HEADLINE_METRICS: tuple[str, ...] = (
    "inn_share", "feed_topic_entropy", "engagement_rate", "cascade_size_mean", "structural_virality_mean",
)  # fmt: skip


def column_key(kind: str, name: str) -> str:
    """A runs-table column as the UI names it (`metrics.`inn_share``, `tags.`prism.condition``)."""
    return f"{kind}.`{name}`"


def runs_view_state(metrics: Sequence[str] = HEADLINE_METRICS) -> dict[str, Any]:
    """The saved view: simulation runs only, grouped by `prism.condition` (means), headline metric columns."""
    return {
        "searchFilter": tag_equals(KIND_TAG, SIMULATION_KIND),
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "selectedColumns": [column_key("tags", CONDITION_TAG), column_key("tags", SEED_TAG),
                            *(column_key("metrics", m) for m in metrics)],  # fmt: skip
        "groupBy": {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": CONDITION_TAG}]},
        "groupsExpanded": {},
        "useGroupedValuesInCharts": True,
        "hideEmptyCharts": True,
        "runsHiddenMode": "SHOW_ALL",
    }


def view_tags(metrics: Sequence[str] = HEADLINE_METRICS) -> dict[str, str]:
    """The experiment tags that make the classic runs view and the saved condition view available."""
    return {
        EXPERIMENT_KIND_TAG: CLASSIC_KIND,
        SHARED_VIEW_TAG_PREFIX + VIEW_KEY: json.dumps(runs_view_state(metrics), separators=(",", ":")),
    }


def apply_view_tags(client: "MlflowClient", experiment_id: str, current: dict[str, str] | None = None) -> None:
    """Set the view tags on an experiment, skipping those it already has with the same value."""
    current = current if current is not None else dict(client.get_experiment(experiment_id).tags)
    for key, value in view_tags().items():
        if current.get(key) != value:
            client.set_experiment_tag(experiment_id, key, value)


def runs_view_url(base_url: str, experiment_id: str) -> str:
    """The URL of the experiment's runs table in the saved condition view, in the UI's "Model training" mode
    (`workflowType`; without it the sidebar stays on whichever mode the browser last used, GenAI at first)."""
    return (f"{base_url.rstrip('/')}/#/experiments/{experiment_id}/runs"
            f"?viewStateShareKey={VIEW_KEY}&workflowType=machine_learning")
