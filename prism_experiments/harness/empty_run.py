"""A run that gives nothing to measure, said so (REQ-FAULT-2).

A world too small or too quiet (a 3-account edge list, a step or two) can run to FINISHED with no impression, or
with impressions but no engagement: its rates and shares are then NaN (0 / 0), or its engagement-based metrics are
zero by default rather than by measurement. Nothing else would say why, so the run ends with a WARNING naming the
counts, and the tag `prism.empty` carries the same words for `make compare` to leave it out.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the summary's counts this reads (prism_experiments/metrics/summary_metrics/standard.py)
IMPRESSIONS = "impressions_total"
ENGAGEMENTS = ("likes_total", "reshares_total", "replies_total")


def empty_reason(summary: Mapping[str, float], agents: int, steps: int) -> str | None:
    """Why a run's metrics are undefined (`3 agents × 6 steps gave 0 impressions`, or `... gave 12 impressions and
    0 engagements`), or None for a run that has both. A summary without the counts (an older registry) is not
    judged: None."""
    if IMPRESSIONS not in summary or any(name not in summary for name in ENGAGEMENTS):
        return None
    impressions = int(summary[IMPRESSIONS])
    engagements = int(sum(summary[name] for name in ENGAGEMENTS))
    what = f"{agents:,} agent{'s' if agents != 1 else ''} × {steps:,} step{'s' if steps != 1 else ''} gave"
    if impressions == 0:
        return f"{what} 0 impressions"
    if engagements == 0:
        return f"{what} {impressions:,} impression{'s' if impressions != 1 else ''} and 0 engagements"
    return None


def empty_warning(run_id: str, reason: str) -> str:
    """The WARNING line a run with no metric ends with."""
    return (
        f"run {run_id} has no metric to compare: {reason}, so its rates are undefined (tagged prism.empty; "
        "make compare leaves it out); give the world more agents, follows or steps"
    )
