"""Regression guard: the summary metrics of fixed configs are bit-identical to the recorded ones.

The fixture (`tests/golden/summary_metrics.json`) is re-recorded only by a commit that says why a
metric changed: `python tests/golden/cases.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden.cases import FIXTURE, compute_case, golden_cases, same_value

from prism_experiments.metrics import registered_metrics, summary_metric_names

pytestmark = [pytest.mark.integration, pytest.mark.slow]
RECORDED: dict[str, dict[str, float]] = json.loads(FIXTURE.read_text())


def test_fixture_covers_every_case() -> None:
    assert sorted(RECORDED) == sorted(golden_cases())


def test_fixture_keys_are_the_registered_metrics() -> None:
    """Every case records every registered metric (an optional one where it applies): a metric added to the registry
    is recorded by a commit that says so."""
    always, registered = set(summary_metric_names()), {metric.name for metric in registered_metrics()}
    for case, recorded in RECORDED.items():
        assert always <= set(recorded) <= registered, f"{case}: re-record with `python tests/golden/cases.py`"


@pytest.mark.parametrize("case", sorted(golden_cases()))
def test_summary_metrics_are_bit_identical(case: str, tmp_path: Path, warm_pool_cache: Path) -> None:
    got = compute_case(golden_cases()[case], tmp_path, warm_pool_cache)
    expected = RECORDED[case]
    assert sorted(got) == sorted(expected)
    changed = {name: (expected[name], got[name]) for name in expected if not same_value(expected[name], got[name])}
    assert not changed, f"{case}: metrics changed (recorded, now): {changed}"
