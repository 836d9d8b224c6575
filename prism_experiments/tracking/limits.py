"""MLflow's size limits on what a run logs, and cutting values to fit them.

Source: mlflow/utils/validation.py (MLflow 3.17): MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH,
MAX_PARAMS_TAGS_PER_BATCH, MAX_METRICS_PER_BATCH.
"""

from __future__ import annotations

MAX_PARAM_LENGTH = 6000
MAX_TAG_LENGTH = 8000
MAX_PARAMS_TAGS_PER_BATCH = 100
MAX_METRICS_PER_BATCH = 1000


def fit_tag(value: object) -> str:
    """`value` as a tag string, cut to MLflow's tag limit (longer values are refused, not truncated)."""
    return str(value)[:MAX_TAG_LENGTH]


def fit_param(value: str) -> str:
    """`value` cut to MLflow's param limit (a param longer than it fails the whole batch)."""
    return value[:MAX_PARAM_LENGTH]
