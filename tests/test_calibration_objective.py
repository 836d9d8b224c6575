"""Objective, fit table and calibration moments, by hand on small numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from prism_experiments.calibration.objective import (
    MISSING_PENALTY,
    gap,
    mean_moments,
    objective,
    scaled_distance,
    within_tolerance,
)
from prism_experiments.calibration.report import fit_table, mean_ci, to_markdown
from prism_experiments.calibration.targets import Target
from prism_experiments.metrics.cascades import cascade_table
from prism_experiments.metrics.moments import (
    author_top_share,
    large_cascade_virality,
    never_reshared_share,
    share_reaching,
    shown_original_cascade_sizes,
    top_share,
)

SOURCE = {"citation": "c", "locator": "l", "statement": "s"}


def target(**kwargs: object) -> Target:
    return Target.model_validate({"metric": "inn_share", "source": SOURCE} | kwargs)


def test_gap_to_value_and_interval() -> None:
    assert gap(0.7, value=0.5) == pytest.approx(0.2)
    assert gap(0.85, interval=(0.9, 0.99)) == pytest.approx(-0.05)
    assert gap(0.95, interval=(0.9, 0.99)) == 0.0
    assert gap(1.0, interval=(0.9, 0.99)) == pytest.approx(0.01)
    with pytest.raises(ValueError):
        gap(1.0)


def test_scaled_distance_tolerance_and_missing() -> None:
    t = target(value=0.5, scale=0.05, tolerance=0.05)
    assert scaled_distance(0.6, t) == pytest.approx(4.0)  # ((0.6 - 0.5) / 0.05)^2
    assert within_tolerance(0.55, t) and not within_tolerance(0.56, t)
    assert scaled_distance(math.nan, t) == MISSING_PENALTY
    assert not within_tolerance(math.nan, t)


def test_objective_weights_and_leaves_out_excluded() -> None:
    targets = {
        "a": target(value=0.5, scale=0.1, weight=2.0),
        "b": target(metric="engagement_rate", interval=(0.1, 0.2), scale=0.1),
        "c": target(metric="cascade_size_max", value=1000, excluded="too small"),
    }
    moments = {"inn_share": 0.7, "engagement_rate": 0.3, "cascade_size_max": 5.0}
    assert objective(moments, targets) == pytest.approx(2.0 * 4.0 + 1.0 * 1.0)


def test_mean_moments_and_ci() -> None:
    assert mean_moments([{"x": 1.0}, {"x": math.nan}, {"x": 3.0}], ["x"]) == {"x": 2.0}
    mean, _low, high = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert high - mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)  # t(0.975, 2) * sd 1 / sqrt(3)
    assert math.isnan(mean_ci([1.0])[1])


def test_fit_table_marks_within_and_excluded() -> None:
    targets = {
        "a": target(value=0.5, scale=0.05, tolerance=0.05),
        "c": target(metric="cascade_size_max", value=1000, excluded="too small"),
    }
    table = fit_table(
        targets, [{"inn_share": 0.52, "cascade_size_max": 4.0}, {"inn_share": 0.54, "cascade_size_max": 6.0}]
    )
    assert table["within_tolerance"].tolist() == ["yes", "excluded"]
    assert table.loc[0, "sim_mean"] == pytest.approx(0.53)
    assert table.loc[0, "reference"] == "0.5 ± 0.05"
    assert "| a | inn_share |" in to_markdown(table, "t")


def test_top_share() -> None:
    assert top_share([8, 1, 1, 0, 0, 0, 0, 0, 0, 0], 0.1) == pytest.approx(0.8)
    assert top_share([1] * 10, 0.1) == pytest.approx(0.1)
    assert top_share([5, 5, 0], 0.5) == pytest.approx(1.0)  # ceil(1.5) = 2 units
    assert math.isnan(top_share([0, 0]))


def test_author_top_share_counts_silent_agents() -> None:
    posts = pd.DataFrame({"author_id": ["a", "a", "a", "b", "c"], "created_step": [0, 1, 2, 3, -1]})
    ids = ["a", "b"] + [f"z{i}" for i in range(8)]  # 10 agents, 8 silent; c's post predates the run
    assert author_top_share(posts, ids, 0.1) == pytest.approx(0.75)


def test_never_reshared_share_over_shown_originals() -> None:
    posts = pd.DataFrame({"post_id": ["p1", "p2", "p3", "r1"], "parent_id": [None, None, None, "p1"]})
    exposures = pd.DataFrame({"post_id": ["p1", "p2", "r1", "p1"]})  # p3 never shown, r1 a reply
    engagements = pd.DataFrame({"post_id": ["p1", "p2"], "action": ["reshare", "like"]})
    assert never_reshared_share(posts, exposures, engagements) == pytest.approx(0.5)


def test_cascade_shape_moments_by_hand() -> None:
    """Four shown originals: p1 reaches 10 accounts as a star (author + 9), p2 a chain of 3, p3 and p4 are never
    reshared; p5 is not shown and a reply does not count. Star of 10: virality 2 * 9 / 10 = 1.8."""
    star = [("p1", "a", f"u{i}", 1) for i in range(9)]
    chain = [("p2", "b", "c", 1), ("p2", "c", "d", 2)]
    edges = pd.DataFrame(star + chain, columns=["root_post_id", "parent_id", "child_id", "step"])
    cascades = cascade_table(edges)
    posts = pd.DataFrame(
        {"post_id": ["p1", "p2", "p3", "p4", "p5", "r1"], "parent_id": [None, None, None, None, None, "p1"]}
    )
    exposures = pd.DataFrame({"post_id": ["p1", "p2", "p3", "p4", "r1", "p1"]})
    sizes = shown_original_cascade_sizes(posts, exposures, cascades)
    assert sorted(sizes.tolist()) == [1, 1, 3, 10]
    assert share_reaching(sizes, 10) == pytest.approx(0.25)
    assert share_reaching(sizes, 3) == pytest.approx(0.5)
    assert share_reaching(sizes, 100) == 0.0
    assert large_cascade_virality(cascades, min_size=10) == pytest.approx(1.8)
    assert large_cascade_virality(cascades, min_size=3) == pytest.approx((1.8 + 4 / 3) / 2)  # chain of 3: (3+1)/3
    assert math.isnan(large_cascade_virality(cascades, min_size=100))
    assert math.isnan(share_reaching(shown_original_cascade_sizes(posts, exposures.iloc[:0], cascades), 10))
