"""The LLM decision figures of a run as MLflow metrics: `llm/<name>` per run, `llm/step/<name>` per step.

They are logged apart from the run summary: a replay from the cache makes 0 calls where the first run
made many, and `make reproduce` compares only the summary, which must not differ.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from mlflow.entities import Metric

PREFIX = "llm/"


def llm_metric_values(totals: Mapping[str, float], price_in: float, price_out: float) -> dict[str, float]:
    """Run totals plus cost (model calls only; cache hits are free), hit rate and per-prompt token sizes."""
    if not totals:
        return {}
    prompts = totals.get("prompts", 0.0)
    out = dict(totals)
    out["cost"] = (
        totals.get("input_tokens", 0.0) / 1000 * price_in + totals.get("output_tokens", 0.0) / 1000 * price_out
    )
    out["cache_hit_rate"] = totals.get("cache_hits", 0.0) / prompts if prompts else float("nan")
    out["prompt_tokens_per_prompt"] = totals.get("prompt_tokens", 0.0) / prompts if prompts else float("nan")
    out["answer_tokens_per_prompt"] = totals.get("answer_tokens", 0.0) / prompts if prompts else float("nan")
    return out


def llm_metrics(
    totals: Mapping[str, float], series: Sequence[Mapping[str, float]], price_in: float, price_out: float
) -> list[Metric]:
    """MLflow metric entities of the run totals (step 0) and of every step."""
    now = int(time.time() * 1000)
    entries = [
        Metric(f"{PREFIX}{k}", float(v), now, 0) for k, v in llm_metric_values(totals, price_in, price_out).items()
    ]
    for row in series:
        step = int(row["step"])
        entries += [Metric(f"{PREFIX}step/{k}", float(v), now, step) for k, v in row.items() if k != "step"]
    return entries
