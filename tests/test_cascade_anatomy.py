"""Cascade anatomy (metrics/cascade_anatomy.py) on small trees and follower counts worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from prism_experiments.metrics.cascade_anatomy import (
    ANATOMY_COLUMNS,
    FOLLOWED_AUTHOR,
    FOLLOWEE_RESHARE,
    OUT_OF_NETWORK,
    UNKNOWN_PATH,
    anatomy_by_band,
    cascade_anatomy,
    follower_distribution,
    hill_tail_exponent,
    path_depths,
    reshare_paths,
    size_band,
    top_decile_median_ratio,
)
from prism_experiments.metrics.cascades import edge_depths


def edges(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    root, parent, child = zip(*rows)
    return pd.DataFrame({"root_post_id": root, "parent_id": parent, "child_id": child, "step": range(len(rows))})


#: post p (author a): a -> b, a -> c, b -> d, d -> e (a chain under b); post q (author x): a star x -> y, x -> z
TREES = edges([("p", "a", "b"), ("p", "a", "c"), ("p", "b", "d"), ("p", "d", "e"), ("q", "x", "y"), ("q", "x", "z")])
#: how each child saw the post: b followed the author, c out-of-network, d and e through a followee's reshare
ENGAGEMENTS = pd.DataFrame(
    {
        "step": [0, 1, 2, 3, 4, 5, 6, 7],
        "agent_id": ["b", "c", "d", "e", "y", "z", "b", "y"],
        "post_id": ["p", "p", "p", "p", "q", "q", "p", "q"],
        "action": ["reshare", "reshare", "reshare", "reshare", "reshare", "reshare", "like", "reshare"],
        "via_agent_id": [None, None, "b", "d", None, None, None, None],
        "in_network": [True, False, True, True, False, True, True, True],
    }
)
POSTS = pd.DataFrame({"post_id": ["p", "q"], "author_id": ["a", "x"], "created_step": [-1, 3]})
FOLLOWERS = pd.Series({"a": 40.0, "x": 3.0, "b": 1.0})


def test_edge_depths_count_the_steps_from_the_root() -> None:
    depths = edge_depths(TREES["root_post_id"].to_numpy(), TREES["parent_id"].to_numpy(), TREES["child_id"].to_numpy())
    assert depths.tolist() == [1, 1, 2, 3, 1, 1]
    assert edge_depths(np.array([]), np.array([]), np.array([])).size == 0


def test_reshare_paths_read_each_childs_first_reshare() -> None:
    paths = reshare_paths(TREES, ENGAGEMENTS)
    # y's second reshare row (step 7, in-network) does not replace its first (step 4, out-of-network)
    assert paths["path"].tolist() == [
        FOLLOWED_AUTHOR,
        OUT_OF_NETWORK,
        FOLLOWEE_RESHARE,
        FOLLOWEE_RESHARE,
        OUT_OF_NETWORK,
        FOLLOWED_AUTHOR,
    ]
    assert paths["depth"].tolist() == [1, 1, 2, 3, 1, 1]
    missing = reshare_paths(TREES, ENGAGEMENTS[ENGAGEMENTS["agent_id"] != "e"])
    assert missing["path"].iloc[3] == UNKNOWN_PATH


def test_cascade_anatomy_by_hand() -> None:
    anatomy = cascade_anatomy(reshare_paths(TREES, ENGAGEMENTS), POSTS, FOLLOWERS).set_index("root_post_id")
    assert list(anatomy.reset_index().columns) == list(ANATOMY_COLUMNS)
    p, q = anatomy.loc["p"], anatomy.loc["q"]
    # p: 5 accounts, the root's children b and c: (1 + 2) / 5; every node has at most 2 children: 2 of 4 reshares
    assert (p["size"], p["depth"], p["root_children"], p["largest_broadcast"]) == (5, 3, 2, 2)
    assert p["root_or_children_share"] == pytest.approx(3 / 5)
    assert p["largest_broadcast_share"] == pytest.approx(2 / 4)
    assert p["root_followers"] == 40.0 and p["root_author"] == "a"
    assert p["root_in_starting_corpus"] and not q["root_in_starting_corpus"]
    assert (p["followed_author_share"], p["followee_reshare_share"], p["out_of_network_share"]) == (0.25, 0.5, 0.25)
    # q is a star: every account is the root or its child, one broadcast holds every reshare
    assert q["root_or_children_share"] == 1.0 and q["largest_broadcast_share"] == 1.0
    assert q["followee_reshare_share"] == 0.0 and q["structural_virality"] == pytest.approx(2 * 2 / 3)
    # an author without a follower count is NaN, not 0
    unknown = cascade_anatomy(reshare_paths(TREES, ENGAGEMENTS), POSTS, pd.Series(dtype=float))
    assert math.isnan(unknown["root_followers"][0])


def test_cascade_anatomy_of_no_cascade_is_empty_with_its_columns() -> None:
    empty = cascade_anatomy(reshare_paths(TREES.iloc[:0], ENGAGEMENTS), POSTS, FOLLOWERS)
    assert empty.empty and list(empty.columns) == list(ANATOMY_COLUMNS)


def test_size_bands_and_their_summary() -> None:
    assert size_band(np.array([1, 9, 10, 99, 100, 500])).tolist() == ["<10", "<10", "10-99", "10-99", ">=100", ">=100"]
    anatomy = cascade_anatomy(reshare_paths(TREES, ENGAGEMENTS), POSTS, FOLLOWERS)
    bands = anatomy_by_band(anatomy, edges=(3, 5))
    assert bands.index.tolist() == ["3-4", ">=5"]  # q has 3 accounts, p 5
    assert bands.loc[">=5", "cascades"] == 1 and bands.loc[">=5", "root_or_children_share_mean"] == pytest.approx(0.6)


def test_path_depths_cap_the_depth() -> None:
    table = path_depths(reshare_paths(TREES, ENGAGEMENTS), max_depth=2)
    assert table.columns.tolist() == [1, 2]
    assert table.loc[FOLLOWED_AUTHOR].tolist() == [2, 0]
    assert table.loc[OUT_OF_NETWORK].tolist() == [2, 0]
    assert table.loc[FOLLOWEE_RESHARE].tolist() == [0, 2]  # depths 2 and 3, the 3 counted as "2 or deeper"


def test_hill_exponent_of_an_exact_pareto_sample() -> None:
    # x_i = (n / i)^(1/a) are the exact quantiles of P(X > x) = x^-a: the estimate is close to a
    n, a = 100_000, 1.5
    x = (n / np.arange(1, n + 1)) ** (1 / a)
    assert hill_tail_exponent(x, 1000) == pytest.approx(a, rel=0.02)
    assert hill_tail_exponent(np.array([8.0, 4.0, 2.0]), 2) == pytest.approx(1 / np.mean(np.log([4.0, 2.0])))
    with pytest.raises(ValueError, match="k:"):
        hill_tail_exponent(np.array([3.0, 0.0]), 1)


def test_follower_distribution_by_hand() -> None:
    followers = np.arange(101, dtype=float)  # 0 .. 100: percentile q is q
    stats = follower_distribution(followers, tail_share=0.02)
    assert stats["p50"] == 50.0 and stats["p96"] == 96.0 and stats["p99"] == 99.0 and stats["max"] == 100.0
    assert stats["p96_over_p50"] == pytest.approx(96 / 50) and stats["zero_share"] == pytest.approx(1 / 101)
    assert stats["hill_tail_exponent"] == pytest.approx(hill_tail_exponent(followers, 2))


def test_top_decile_median_ratio() -> None:
    followers = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 100] * 2, dtype=float)
    by = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1] * 2, dtype=float)  # the two 100s are the top tenth
    assert top_decile_median_ratio(followers, by) == pytest.approx(100 / 5)
    assert top_decile_median_ratio(np.array([0.0] * 18 + [5.0, 5.0]), by) == float("inf")
    assert math.isnan(top_decile_median_ratio(np.zeros(20), by))
    with pytest.raises(ValueError, match="same length"):
        top_decile_median_ratio(followers, by[:5])


def test_the_report_prints_every_table_of_a_run() -> None:
    from prism_experiments.replication.anatomy import SeedTables, report

    followers = pd.Series(np.arange(12, dtype=float), index=[f"u{i}" for i in range(12)]).combine_first(FOLLOWERS)
    run = SeedTables(0, TREES, ENGAGEMENTS, POSTS, followers, pd.Series(1.0, index=followers.index))
    text = report([run])
    assert "## Cascades of >= 100 accounts (0)" in text
    assert "| 3-9 |" not in text and "| <10 | 2 |" in text  # both trees are small
    assert "| followee_reshare | 0 | 1 | 1 |" in text  # depths 2 and 3
    assert "top_decile_post_rate_median_ratio" in text
