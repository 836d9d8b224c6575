"""Huszár et al.'s amplification of single accounts and small groups (analysis/amplification.py), checked by hand on
tiny exposure tables: 3 authors, 4 viewers, two arms."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.analysis.amplification import (
    AMPLIFICATION_COLUMNS,
    MAXIMUM,
    MEDIAN,
    Q25,
    Q75,
    RANDOM_ALL,
    RANDOM_TOP_DECILE,
    RATIO,
    SATURATED_REACH,
    SHARE_BELOW_0,
    TOP_ACCOUNTS,
    UNIT_COLUMNS,
    amplification_table,
    distribution_statistics,
    follower_deciles,
    random_groups,
    saturated,
    set_reach,
    top_accounts,
    unit_amplification,
    unit_amplification_table,
    unit_sets,
)
from prism_experiments.analysis.field_sections import (
    AMPLIFICATION_CSV,
    AMPLIFICATION_FIGURE,
    html_sections,
    markdown_sections,
)
from prism_experiments.analysis.figures import account_amplification_figure
from prism_experiments.analysis.report import FIGURES_DIR


def exposures(seen: dict[str, list[str]], in_network: dict[tuple[str, str], bool] | None = None) -> pd.DataFrame:
    """One impression per (viewer, author) listed: viewer -> the authors whose posts it was shown."""
    rows = [(viewer, author) for viewer, authors in seen.items() for author in authors]
    table = pd.DataFrame(rows, columns=["agent_id", "author_id"])
    table["in_network"] = [bool((in_network or {}).get(row, True)) for row in rows]
    return table


#: chronological: u1 sees a; u2 a and b; u3 c; u4 a  -> reach a 3/4, b 1/4, c 1/4
CONTROL = exposures({"u1": ["a"], "u2": ["a", "b"], "u3": ["c"], "u4": ["a"]})
#: the ranker: u1 sees a and b; u2 b; u3 b and c; u4 c  -> reach a 1/4, b 3/4, c 2/4
RANKED = exposures({"u1": ["a", "b"], "u2": ["b"], "u3": ["b", "c"], "u4": ["c"]})
SETS = {"a": ("a",), "b": ("b",), "c": ("c",), "ab": ("a", "b"), "abc": ("a", "b", "c"), "nobody": ("z",)}


def test_reach_of_an_account_and_of_a_set_is_the_share_of_viewers_who_saw_any_of_its_posts() -> None:
    control, ranked = set_reach(CONTROL, SETS), set_reach(RANKED, SETS)
    assert control.to_dict() == pytest.approx({"a": 3 / 4, "b": 1 / 4, "c": 1 / 4, "ab": 3 / 4, "abc": 1.0,
                                               "nobody": 0.0})  # fmt: skip
    assert ranked.to_dict() == pytest.approx({"a": 1 / 4, "b": 3 / 4, "c": 2 / 4, "ab": 3 / 4, "abc": 1.0,
                                              "nobody": 0.0})  # fmt: skip
    # a viewer who saw two posts of the set counts once: u2 saw a and b, u1 saw a (and b) under the ranker
    assert set_reach(exposures({"u1": ["a", "a", "b"]}), {"ab": ("a", "b")})["ab"] == 1.0


def test_a_subset_of_the_impressions_is_a_share_of_the_whole_population() -> None:
    table = exposures({"u1": ["a"], "u2": ["a"], "u3": ["b"], "u4": ["b"]}, {("u2", "a"): False})
    inside = set_reach(table.loc[table["in_network"]], {"a": ("a",)}, population=table["agent_id"].nunique())
    assert inside["a"] == pytest.approx(1 / 4)  # only u1 saw a in-network, of 4 agents
    assert set_reach(table.loc[table["in_network"]], {"a": ("a",)})["a"] == pytest.approx(1 / 3)  # of its 3 viewers
    assert math.isnan(set_reach(table.iloc[0:0], {"a": ("a",)})["a"])


def test_amplification_of_each_account_is_its_reach_ratio_minus_one_by_hand() -> None:
    amplification = unit_amplification(set_reach(RANKED, SETS), set_reach(CONTROL, SETS))
    assert amplification["a"] == pytest.approx((1 / 4) / (3 / 4) - 1)  # -2/3: seen by fewer than chronologically
    assert amplification["b"] == pytest.approx(2.0)  # three times the reach
    assert amplification["c"] == pytest.approx(1.0)  # double
    assert amplification["ab"] == pytest.approx(0.0)
    assert math.isnan(amplification["nobody"])  # the control showed it to nobody: no ratio
    # a unit only one side lists has reach 0 on the other
    one_sided = unit_amplification(pd.Series({"x": 0.5}), pd.Series({"x": 0.25, "y": 0.5}))
    assert one_sided["x"] == pytest.approx(1.0) and one_sided["y"] == pytest.approx(-1.0)


def test_the_distribution_over_accounts_by_hand() -> None:
    stats = distribution_statistics(np.array([-2 / 3, 2.0, 1.0, np.nan]))
    assert stats[MEDIAN] == pytest.approx(1.0) and stats[MAXIMUM] == pytest.approx(2.0)
    assert stats[SHARE_BELOW_0] == pytest.approx(1 / 3)  # the NaN unit has no ratio and is left out
    # linear quartiles of (-2/3, 1, 2): halfway between the first two, and between the last two
    assert stats[Q25] == pytest.approx((-2 / 3 + 1) / 2) and stats[Q75] == pytest.approx(1.5)
    assert all(math.isnan(v) for v in distribution_statistics(np.array([np.nan])).values())


def test_a_group_is_saturated_only_when_both_arms_reach_almost_everyone() -> None:
    assert saturated(1.0, 1.0) and saturated(SATURATED_REACH, SATURATED_REACH)
    assert not saturated(1.0, 0.94) and not saturated(0.94, 1.0)
    tidy = pd.DataFrame({"run_id": ["x0", "x1", "c0", "c1"], "condition": ["x", "x", "c", "c"], "seed": [0, 1, 0, 1]})
    reach = pd.concat([
        pd.DataFrame({"run_id": run, "grouping": "follower_decile", "group": list(reaches),
                      "reach": list(reaches.values())})
        for run, reaches in {"x0": {"D09": 0.5, "D10": 1.0}, "x1": {"D09": 0.6, "D10": 0.98},
                             "c0": {"D09": 0.4, "D10": 0.99}, "c1": {"D09": 0.4, "D10": 0.97}}.items()
    ])  # fmt: skip
    table = amplification_table(reach, tidy, {"x": "c"}, n_resamples=200).set_index("group")
    assert list(table.columns) == [c for c in AMPLIFICATION_COLUMNS if c != "group"]
    assert (table["statistic"] == RATIO).all()
    assert bool(table.at["D10", "saturated"]) and not bool(table.at["D09", "saturated"])
    assert table.at["D10", "amplification"] == pytest.approx(1.98 / 1.96 - 1)  # near 0 by construction
    assert table.at["D09", "amplification"] == pytest.approx(1.1 / 0.8 - 1)


def test_random_groups_are_a_seeded_draw_that_depends_on_the_pool_only() -> None:
    pool = [f"a{i}" for i in range(30)]
    groups = random_groups(pool, "pool", size=10, n_groups=5)
    assert list(groups) == ["g0", "g1", "g2", "g3", "g4"]
    assert all(len(set(members)) == 10 and set(members) <= set(pool) for members in groups.values())
    assert random_groups(list(reversed(pool)), "pool", size=10, n_groups=5) == groups  # table order does not matter
    assert random_groups(pool, "pool", size=10, n_groups=5) == groups  # the same every time
    assert random_groups(pool, "other pool", size=10, n_groups=5) != groups  # the pool's name keys the draw
    assert random_groups(pool, "pool", size=10, n_groups=5, seed=1) != groups
    assert random_groups(pool[:9], "pool", size=10) == {}  # a pool smaller than a group gives none
    # the first groups do not depend on how many are drawn
    assert groups["g0"] == random_groups(pool, "pool", size=10, n_groups=1)["g0"]
    # pinned: a change of the draw (the generator, its keys, the sorting) changes every report's groups
    assert groups["g0"] == ("a9", "a5", "a11", "a21", "a23", "a10", "a25", "a29", "a27", "a3")


def test_the_top_accounts_are_the_most_followed_and_the_units_of_each_grouping() -> None:
    agents = pd.DataFrame({"agent_id": [f"a{i}" for i in range(200)], "n_followers_at_start": np.arange(200) % 150})
    # 1 % of 200 = 2; a49 and a199 both have 49 followers, fewer than a148/a149 (148, 149)
    assert top_accounts(agents) == ["a149", "a148"]
    tied = pd.DataFrame({"agent_id": ["p", "q", "r"], "n_followers_at_start": [5, 5, 1]})
    assert top_accounts(tied, share=0.5) == ["q", "p"]  # ties: the later row ranks higher, as the deciles rank it
    assert follower_deciles(tied)["q"] > follower_deciles(tied)["p"]
    units = unit_sets(agents)
    assert units[TOP_ACCOUNTS] == {"a149": ("a149",), "a148": ("a148",)}
    assert len(units[RANDOM_ALL]) == 100 and all(len(m) == 10 for m in units[RANDOM_ALL].values())
    top_decile = set(follower_deciles(agents).loc[lambda d: d == 10].index)
    assert all(set(members) <= top_decile for members in units[RANDOM_TOP_DECILE].values())
    assert unit_sets(agents.drop(columns="n_followers_at_start")) == {} and unit_sets(None) == {}


def hand_units() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two seeds of the hand tables: seed 0 as above, seed 1 with the arms swapped; accounts a, b, c are the units."""
    tidy = pd.DataFrame({"run_id": ["x0", "c0", "x1", "c1"], "condition": ["x", "c", "x", "c"], "seed": [0, 0, 1, 1]})
    accounts = {name: members for name, members in SETS.items() if name in ("a", "b", "c")}
    reach = pd.concat([
        pd.DataFrame({"run_id": run, "grouping": TOP_ACCOUNTS, "group": list(accounts),
                      "reach": set_reach(table, accounts).to_numpy()})
        for run, table in {"x0": RANKED, "c0": CONTROL, "x1": CONTROL, "c1": RANKED}.items()
    ])  # fmt: skip
    return reach, tidy


def test_distribution_rows_are_per_seed_statistics_averaged_over_seeds() -> None:
    reach, tidy = hand_units()
    units = unit_amplification_table(reach, tidy, {"x": "c"})
    assert list(units.columns) == list(UNIT_COLUMNS) and len(units) == 6
    seed0 = units.loc[units["seed"] == 0].set_index("unit")["amplification"]
    assert seed0.to_dict() == pytest.approx({"a": -2 / 3, "b": 2.0, "c": 1.0})
    seed1 = units.loc[units["seed"] == 1].set_index("unit")["amplification"]  # the inverse ratios
    assert seed1.to_dict() == pytest.approx({"a": 2.0, "b": -2 / 3, "c": -0.5})
    table = amplification_table(reach, tidy, {"x": "c"}, n_resamples=200)
    rows = table.loc[table["grouping"] == TOP_ACCOUNTS].set_index("statistic")
    assert rows.at[MEDIAN, "amplification"] == pytest.approx((1.0 + -0.5) / 2)
    assert rows.at[MAXIMUM, "amplification"] == pytest.approx(2.0)
    assert rows.at[SHARE_BELOW_0, "amplification"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert (rows["n_seeds"] == 2).all() and (rows["n_units"] == 3).all()
    # the units' median reach, averaged over seeds: (1/2 + 1/4) / 2 under either arm
    assert rows.at[MEDIAN, "reach"] == pytest.approx(0.375) and rows.at[MEDIAN, "reach_control"] == pytest.approx(0.375)
    assert not rows["saturated"].any()
    assert rows.at[SHARE_BELOW_0, "ci_low"] <= 0.5 <= rows.at[SHARE_BELOW_0, "ci_high"]
    again = amplification_table(reach, tidy, {"x": "c"}, n_resamples=200)
    pd.testing.assert_frame_equal(table, again)  # the bootstrap is seeded


def test_the_report_sections_flag_saturation_and_show_the_accounts_figure(tmp_path: Path) -> None:
    reach, tidy = hand_units()
    groups = pd.DataFrame({"run_id": ["x0", "c0", "x1", "c1"], "grouping": "follower_decile", "group": "D10",
                           "reach": [1.0, 0.99, 0.98, 1.0]})  # fmt: skip
    units = unit_amplification_table(reach, tidy, {"x": "c"})
    table = amplification_table(pd.concat([groups, reach]), tidy, {"x": "c"}, n_resamples=200, units=units)
    table.to_csv(tmp_path / AMPLIFICATION_CSV, index=False)
    (tmp_path / FIGURES_DIR).mkdir()
    account_amplification_figure(units, ["x", "c"], tmp_path / FIGURES_DIR / AMPLIFICATION_FIGURE)
    text = "\n".join(markdown_sections(tmp_path))
    assert "## Amplification ratio (Huszár et al. 2022)" in text
    assert "Saturated (reach >= 0.95 under both arms): x: follower_decile D10" in text
    assert "## Amplification of single accounts and small groups" in text
    assert "each account of the top 1% by followers, alone" in text
    assert f"]({FIGURES_DIR}/{AMPLIFICATION_FIGURE})" in text
    page = html_sections(tmp_path)
    assert page.count("<h2>") == 2 and "data:image/png;base64," in page and "not mean the ranker" in page
    balanced = _Balanced()
    balanced.feed(page)
    assert balanced.stack == []


class _Balanced(HTMLParser):
    """Fails on a closing tag that does not match the open one."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "img":
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag
