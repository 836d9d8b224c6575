"""The measures behind the replication and the comparison's field sections, against hand-computed values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel

from prism_experiments.analysis.amplification import amplification_table, control_of, follower_deciles, group_reach
from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.size_matched import disagreements, size_matched_comparison
from prism_experiments.analysis.stats import bootstrap_ratio_ci
from prism_experiments.metrics.cascades import analyse_forest
from prism_experiments.metrics.consumption import (
    consumption_jaccard_mean,
    most_similar_pairs,
    pair_jaccards,
    paired_jaccard_means,
)
from prism_experiments.metrics.size_matching import size_matched_difference
from prism_experiments.replication.findings import (
    chaney2018,
    gauthier2026,
    goel2016,
    guess2023,
    guess2023_exposure,
    huszar2022,
    juul_ugander2021,
    milli2025,
    nyhan2023,
)
from prism_experiments.replication.knobs import config_has, needs
from prism_experiments.replication.verdicts import empty_result


def test_consumption_jaccard_is_the_mean_over_pairs_of_users() -> None:
    engagements = pd.DataFrame(
        {"agent_id": ["a", "a", "b", "b", "c", "a"], "post_id": ["p1", "p2", "p2", "p3", "p4", "p1"]}
    )
    # a = {p1, p2}, b = {p2, p3}, c = {p4}: J(a, b) = 1/3, J(a, c) = J(b, c) = 0
    assert consumption_jaccard_mean(engagements) == pytest.approx((1 / 3) / 3)
    assert math.isnan(consumption_jaccard_mean(engagements.iloc[:2]))  # one user: no pair


def test_each_user_is_paired_with_its_most_similar_user_by_factor_cosine() -> None:
    # a and b point almost the same way (cos 0.99); c and d are the same vector (cos 1); z is zero (cos 0 to all)
    ids = ["a", "b", "c", "d", "z"]
    factors = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 2.0], [0.0, 2.0], [0.0, 0.0]])
    pairs = most_similar_pairs(ids, factors, np.random.default_rng(0))
    paired = dict(zip(pairs["agent_id"], pairs["paired_agent_id"]))
    assert {k: paired[k] for k in "abcd"} == {"a": "b", "b": "a", "c": "d", "d": "c"}
    assert pairs["cosine"].iloc[2] == 1.0 and pairs["cosine"].iloc[4] == 0.0 and paired["z"] != "z"
    assert pairs["cosine"].iloc[0] == pytest.approx(0.99 / math.hypot(0.99, 0.141))


def test_a_tie_is_broken_by_a_draw_from_the_seeded_stream() -> None:
    # e = (1, 1) is equally similar (cos 1/sqrt 2) to a = (1, 0) and c = (0, 1): which one is a seeded draw
    ids, factors = ["a", "c", "e"], np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    partner = [
        most_similar_pairs(ids, factors, np.random.default_rng(seed))["paired_agent_id"].iloc[2] for seed in range(20)
    ]
    assert set(partner) == {"a", "c"}
    assert partner == [
        most_similar_pairs(ids, factors, np.random.default_rng(s))["paired_agent_id"].iloc[2] for s in range(20)
    ]
    assert len(most_similar_pairs(["a"], np.ones((1, 2)), np.random.default_rng(0))) == 0


def test_pair_jaccards_and_the_change_under_the_same_pairs_by_hand() -> None:
    pairs = pd.DataFrame({"agent_id": ["a", "b", "c"], "paired_agent_id": ["b", "a", "d"]})
    # recommender: a = {p1, p2}, b = {p2, p3}, c = {p4}, d = {p4}: J(a, b) = 1/3, J(c, d) = 1
    recommender = pd.DataFrame({"agent_id": list("aabbcd"), "post_id": ["p1", "p2", "p2", "p3", "p4", "p4"]})
    # ideal: a = {p1}, b = {p5}, c and d engaged with nothing: J(a, b) = 0, J(c, d) undefined (NaN)
    ideal = pd.DataFrame({"agent_id": ["a", "b"], "post_id": ["p1", "p5"]})
    assert pair_jaccards(pairs, recommender) == pytest.approx([1 / 3, 1 / 3, 1.0])
    assert np.isnan(pair_jaccards(pairs, ideal)[2])
    # the pair (c, d) is left out of both means: only pairs defined under both recommenders are compared
    assert paired_jaccard_means(pairs, recommender, ideal) == pytest.approx((1 / 3, 0.0, 2))


def test_chaney_measure_pairs_by_the_collaborative_arm_and_compares_with_the_oracle_on_the_same_pairs() -> None:
    pairs = pd.DataFrame({"agent_id": ["a", "b"], "paired_agent_id": ["b", "a"]})
    runs = {
        "collaborative": {
            "cf_user_pairs": pairs,
            "engagements": pd.DataFrame({"agent_id": ["a", "a", "b"], "post_id": ["p1", "p2", "p1"]}),
            "exposures": pd.DataFrame({"post_id": ["p1"] * 10}),
        },
        "oracle": {
            "engagements": pd.DataFrame({"agent_id": ["a", "b", "c"], "post_id": ["p1", "p2", "p2"]}),
            "exposures": pd.DataFrame({"post_id": ["p1"] * 5}),
        },
    }
    claims, figures = chaney2018.measure(runs)
    # collaborative: J(a, b) = |{p1}| / |{p1, p2}| = 1/2 for both pairs; oracle, same pairs: J({p1}, {p2}) = 0
    assert (claims["homogeneity"].x, claims["homogeneity"].y) == (0.5, 0.0)
    assert (claims["utility"].x, claims["utility"].y) == (0.3, 0.6)
    # all pairs of engagers, descriptive: oracle a = {p1}, b = {p2}, c = {p2}: (0 + 0 + 1) / 3
    assert figures["jaccard_all_pairs_oracle"] == pytest.approx(1 / 3) and figures["pairs"] == 2.0
    assert "paired_change_random_offline" not in figures  # no random arm: no selection reference
    # with a random arm, the same pairing rule on its engagements (ALS fitted after the run) is reported beside
    random_arm = pd.DataFrame({"agent_id": ["a", "a", "b", "b", "c"], "post_id": ["p1", "p2", "p1", "p3", "p3"]})
    runs["random"] = {"engagements": random_arm, "exposures": pd.DataFrame({"post_id": ["p1"] * 5})}
    assert math.isfinite(chaney2018.measure(runs)[1]["paired_change_random_offline"])
    assert chaney2018.FINDING.tables_of("collaborative")["cf_user_pairs"] == ("agent_id", "paired_agent_id")
    assert "cf_user_pairs" not in chaney2018.FINDING.tables_of("oracle")


def cascades(sizes: list[int], values: list[float], column: str = "structural_virality") -> pd.DataFrame:
    return pd.DataFrame({"size": sizes, column: values})


def test_size_matched_difference_weighs_each_shared_size_by_its_smaller_count() -> None:
    a = cascades([2, 2, 4, 4, 4, 9], [1.0, 1.0, 1.5, 1.5, 1.7, 3.0])
    b = cascades([2, 4, 4, 7], [1.0, 1.6, 1.6, 2.5])
    difference = size_matched_difference(a, b, "structural_virality")
    assert difference.pooled == pytest.approx(np.mean([1, 1, 1.5, 1.5, 1.7, 3.0]) - np.mean([1, 1.6, 1.6, 2.5]))
    # size 2: weight min(2, 1) = 1, difference 0; size 4: weight 2, difference (4.7 / 3) - 1.6
    assert difference.matched == pytest.approx((1 * 0.0 + 2 * (4.7 / 3 - 1.6)) / 3)
    assert difference.n_matched == 3
    assert math.isnan(size_matched_difference(a, cascades([3], [1.3]), "structural_virality").matched)


def test_random_recursive_tree_virality_is_exact_for_small_trees_and_matches_simulation() -> None:
    # exact enumeration: 2 nodes W = 1, 3 nodes W = 4 (every shape), 4 nodes E W = 29 / 3
    expected = [1.0, 2 * 4 / 6, 2 * (29 / 3) / 12]
    assert goel2016.random_recursive_tree_virality(np.array([2, 3, 4])) == pytest.approx(expected)
    rng = np.random.default_rng(0)
    n, trees = 60, 400
    parents = [rng.integers(0, np.arange(1, n)) for _ in range(trees)]  # node i attaches to a uniform earlier node
    forest = analyse_forest(
        np.repeat(np.arange(trees), n - 1),
        np.concatenate(parents).astype(object),
        np.tile(np.arange(1, n), trees).astype(object),
    )
    simulated = forest.structural_virality.mean()
    standard_error = forest.structural_virality.std() / math.sqrt(trees)
    assert abs(simulated - goel2016.random_recursive_tree_virality(np.array([n]))[0]) < 4 * standard_error


def test_goel_measure_reads_never_reshared_and_the_tail_from_the_run() -> None:
    posts = pd.DataFrame({"post_id": [f"p{i}" for i in range(10)], "parent_id": [None] * 10})
    exposures = pd.DataFrame({"post_id": [f"p{i}" for i in range(10)]})
    tree = pd.DataFrame({"root_post_id": ["p0", "p1"], "size": [3, 120], "structural_virality": [1.33, 2.5]})
    claims, figures = goel2016.measure({"x_algo": {"posts": posts, "exposures": exposures, "cascades": tree}})
    assert claims["never_reshared"].x == pytest.approx(0.8)
    assert claims["tail"].x == pytest.approx(0.1)
    assert claims["virality_low"].x == pytest.approx(2.5)
    assert claims["virality_low"].y == pytest.approx(goel2016.random_recursive_tree_virality(np.array([120]))[0])
    assert math.isnan(claims["virality_flat"].x)  # one large cascade: no slope
    assert figures["largest_cascade"] == 120 and figures["seed_has_tail"] == 1.0


def test_goel_flatness_is_the_slope_of_virality_on_log_size_against_zero() -> None:
    sizes = [100, 200, 400]
    virality = [3.0, 3.0 + 0.5 * math.log(2), 3.0 + math.log(2)]  # 3 + 0.5 ln(size / 100): slope 0.5
    tree = pd.DataFrame({"root_post_id": ["p0", "p1", "p2"], "size": sizes, "structural_virality": virality})
    posts = pd.DataFrame({"post_id": ["p0", "p1", "p2"], "parent_id": [None] * 3})
    claims, figures = goel2016.measure({"x_algo": {"posts": posts, "exposures": posts[["post_id"]], "cascades": tree}})
    assert (claims["virality_flat"].x, claims["virality_flat"].y) == pytest.approx((0.5, 0.0))
    benchmark = goel2016.random_recursive_tree_virality(np.array(sizes))
    assert figures["random_tree_slope"] == pytest.approx(np.polyfit(np.log(sizes), benchmark, 1)[0])
    # the margin is the paper's own medians' rise: (8 - 3) / ln(3000 / 100)
    assert math.isclose(goel2016.FLAT_MARGIN, 5 / math.log(30)) and 1.4 < goel2016.FLAT_MARGIN < 1.5


def test_juul_measure_is_the_share_of_the_pooled_difference_left_at_matched_size() -> None:
    a = pd.DataFrame({"size": [2, 4, 4], "depth": [1, 2, 3], "structural_virality": [1.0, 1.5, 1.67]})
    b = pd.DataFrame({"size": [2, 2, 4], "depth": [1, 1, 2], "structural_virality": [1.0, 1.0, 1.5]})
    claims, figures = juul_ugander2021.measure({"x_algo": {"cascades": a}, "chronological": {"cascades": b}})
    # depth: pooled 2 - 4/3 = 2/3; matched over sizes 2 (weight 1, 1 - 1 = 0) and 4 (weight 1, 2.5 - 2 = 0.5): 1/4
    assert size_matched_difference(a, b, "depth").pooled == pytest.approx(2 / 3)
    assert claims["depth_at_matched_size"].x == pytest.approx((1 / 4) / (2 / 3))
    assert claims["depth_at_matched_size"].y == 0.0
    assert figures["cascade_size_mean_x_algo"] == pytest.approx(10 / 3)
    assert math.isnan(juul_ugander2021.remaining_share(0.0, 0.1))  # no pooled difference: nothing to disappear
    same = juul_ugander2021.measure({"x_algo": {"cascades": b}, "chronological": {"cascades": b}})[0]
    assert math.isnan(same["depth_at_matched_size"].x) and math.isnan(same["depth_at_matched_size"].y)


def test_gauthier_share_counts_authors_followed_before_the_switch() -> None:
    exposures = pd.DataFrame({"step": [1, 3, 3, 4], "agent_id": ["u"] * 4, "author_id": ["x", "x", "y", "y"]})
    follows = pd.DataFrame({"step": [0, 3], "follower_id": ["u", "u"], "followee_id": ["x", "y"]})
    # at steps >= 2: (3, x) followed at 0, (3, y) at 3, (4, y) at 3
    assert gauthier2026.followed_share_after(exposures, follows, 2, before=True) == pytest.approx(1 / 3)
    assert gauthier2026.followed_share_after(exposures, follows, 2, before=False) == pytest.approx(2 / 3)


def gauthier_arm(engaged_after: int, follows_after: int, switch: int = 2, steps: int = 4) -> dict[str, pd.DataFrame]:
    """A hand-built run of four agents: one engagement and one follow before the switch, then the given counts."""
    engagement_steps = [0] + [switch + i % (steps - switch) for i in range(engaged_after)]
    follow_steps = [1] + [switch] * follows_after
    return {
        "engagements": pd.DataFrame({"step": engagement_steps, "agent_id": ["a"] * len(engagement_steps)}),
        "agents": pd.DataFrame({"agent_id": ["a", "b", "c", "d"]}),
        "follows": pd.DataFrame(
            {
                "step": follow_steps,
                "follower_id": ["a"] * len(follow_steps),
                "followee_id": [f"x{i}" for i in range(len(follow_steps))],
            }
        ),
        "exposures": pd.DataFrame({"step": [0, switch], "agent_id": ["a", "a"], "author_id": ["x0", "y"]}),
    }


def test_gauthier_engagement_switch_effects_on_hand_built_tables() -> None:
    # engagements per agent from step 2 on (4 agents): chronological 4/4, switch_on 12/4, switch_off 8/4, x_algo 12/4
    runs = {"chronological": gauthier_arm(4, 0), "switch_on": gauthier_arm(12, 2), "switch_off": gauthier_arm(8, 1),
            "algorithmic": gauthier_arm(12, 2)}  # fmt: skip
    claims, figures = gauthier2026.measure(runs, switch=2, steps=4)
    assert (claims["asymmetry_switch_on"].x, claims["asymmetry_switch_on"].y) == pytest.approx((3.0, 1.0))
    # switching on adds 3 - 1 = 2 engagements per agent; switching off takes 3 - 2 = 1: half of it
    assert figures["effect_switch_on"] == pytest.approx(2.0) and figures["effect_switch_off"] == pytest.approx(-1.0)
    assert (claims["asymmetry_switch_off"].x, claims["asymmetry_switch_off"].y) == pytest.approx((-0.5, 0.0))
    # new follows per step after the switch (2 steps): 0, 1, 0.5, 1
    assert figures["new_follows_per_step_switch_on"] == pytest.approx(1.0)
    assert figures["new_follows_per_step_switch_off"] == pytest.approx(0.5)
    assert figures["follows_effect_switch_on"] == pytest.approx(1.0)
    assert figures["follows_effect_switch_off"] == pytest.approx(-0.5)
    # no rise when switching on: nothing for the switch-off effect to be comparable to
    flat = gauthier2026.measure(runs | {"switch_on": gauthier_arm(4, 0)}, switch=2, steps=4)[0]
    assert math.isnan(flat["asymmetry_switch_off"].x)


def test_guess_sessions_are_feeds_per_agent() -> None:
    exposures = pd.DataFrame({"step": [0, 0, 1, 1], "agent_id": ["a", "a", "a", "b"]})
    assert guess2023.sessions_per_agent(exposures, pd.DataFrame({"agent_id": ["a", "b", "c", "d"]})) == 0.75


class Inner(BaseModel):
    strength: float = 0.0


class Outer(BaseModel):
    inner: Inner | None = None
    n: int = 1


def test_a_knob_is_found_in_the_schema_through_optional_models() -> None:
    assert config_has("inner.strength", Outer) and config_has("n", Outer)
    assert not config_has("inner.missing", Outer) and not config_has("n.x", Outer)
    assert config_has("ranking.predictor") and config_has("simulation.n_steps")
    # a finding is testable once the schema has its mechanism (from the schema, not a flag): both are built now
    for finding, knob in ((guess2023, guess2023.ACTIVITY_KNOB), (gauthier2026, gauthier2026.SCHEDULE_KNOB)):
        assert config_has(knob) and finding.FINDING.untestable() is None
    missing = needs("simulation.no_such_knob", "for a check")()
    assert missing is not None and "simulation.no_such_knob" in missing and "for a check" in missing


def test_follower_deciles_split_the_population_in_tenths() -> None:
    agents = pd.DataFrame({"agent_id": [f"a{i}" for i in range(20)], "n_followers_at_start": list(range(20))})
    deciles = follower_deciles(agents)
    assert deciles["a0"] == 1 and deciles["a19"] == 10 and (deciles.value_counts() == 2).all()


def test_group_reach_is_the_share_of_viewers_who_saw_the_group() -> None:
    exposures = pd.DataFrame(
        {"agent_id": ["u1", "u1", "u2", "u3"], "author_id": ["a", "b", "a", "c"], "topic": ["t1", "t2", "t1", "t1"]}
    )
    agents = pd.DataFrame({"agent_id": ["a", "b", "c"], "n_followers_at_start": [0, 5, 9],
                           "archetype": ["analyst", "analyst", "fan"]})  # fmt: skip
    reach = group_reach(exposures, agents).set_index(["grouping", "group"])["reach"]
    assert reach[("topic", "t1")] == pytest.approx(1.0) and reach[("topic", "t2")] == pytest.approx(1 / 3)
    assert reach[("archetype", "analyst")] == pytest.approx(2 / 3) and reach[("archetype", "fan")] == pytest.approx(
        1 / 3
    )
    assert set(reach.loc["follower_decile"].index) == {"D01", "D02", "D03"}


def test_amplification_is_the_ratio_of_reaches_minus_one_against_the_matching_chronological_run() -> None:
    tidy = pd.DataFrame({
        "run_id": [f"r{i}" for i in range(6)], "condition": ["x", "x", "x", "c", "c", "c"], "seed": [0, 1, 2] * 2,
        "ranking.mode": ["x_algo"] * 3 + ["chronological"] * 3,
    })  # fmt: skip
    assert control_of(tidy, ["ranking.mode"]) == {"x": "c"}
    assert control_of(tidy, ["seed_only"]) == {}
    reach = pd.DataFrame({"run_id": [f"r{i}" for i in range(6)], "grouping": "topic", "group": "t1",
                          "reach": [0.6, 0.4, 0.5, 0.3, 0.2, 0.25]})  # fmt: skip
    table = amplification_table(reach, tidy, {"x": "c"}, n_resamples=500)
    assert table.loc[0, "amplification"] == pytest.approx(1.5 / 0.75 - 1)
    assert table.loc[0, "n_seeds"] == 3 and table.loc[0, "ci_low"] <= 1.0 <= table.loc[0, "ci_high"]
    ci = bootstrap_ratio_ci(np.array([0.6, 0.4, 0.5]), np.array([0.3, 0.2, 0.25]), np.random.default_rng(0), 0.95, 500)
    assert ci.estimate == pytest.approx(1.0)
    assert math.isnan(bootstrap_ratio_ci(np.ones(3), np.zeros(3), np.random.default_rng(0)).estimate)


def test_size_matched_comparison_flags_a_pooled_difference_that_is_only_size() -> None:
    rng = np.random.default_rng(7)
    tables, rows = {}, []
    for seed, condition in itertools.product(range(8), ("big", "small")):
        # same shape at every size (virality = f(size) + noise); "big" grows larger cascades
        sizes = rng.integers(2, 12 if condition == "big" else 6, 300)
        frame = pd.DataFrame({"size": sizes, "depth": np.ones(sizes.size),
                              "structural_virality": np.log(sizes) + rng.normal(0, 0.01, sizes.size)})  # fmt: skip
        run = f"{condition}-{seed}"
        tables[run] = frame
        rows.append({"run_id": run, "condition": condition, "seed": seed})
    table = size_matched_comparison(tables, pd.DataFrame(rows), ["big", "small"], ComparisonSettings(n_resamples=500))
    virality = table.loc[table["property"] == "structural_virality"].iloc[0]
    assert virality["pooled"] > 0.3 and virality["pooled_p_holm"] < 0.05
    assert abs(virality["matched"]) < 0.02 and virality["matched_p_holm"] > 0.05
    assert bool(virality["disagree"])
    assert len(disagreements(table)) == 1  # depth is 1 everywhere: no difference either way, no disagreement


def huszar_tables() -> dict[str, dict[str, pd.DataFrame]]:
    """200 accounts, of which a (50 followers) and b (40) are the top 1 %, c (1 follower) is in the top decile; 4
    viewers. Chronological: u1 sees a; u2 a and b; u3 c; u4 a (reach a 3/4, b 1/4). x_algo: u1 sees a and b; u2 b;
    u3 b (out of network) and c; u4 c (reach a 1/4, b 3/4)."""
    ids = ["a", "b", "c", "u1", "u2", "u3", "u4", *(f"x{i}" for i in range(193))]
    agents = pd.DataFrame({"agent_id": ids, "n_followers_at_start": [50, 40, 1, *[0] * 197]})

    def exposures(seen: dict[str, list[str]], out_of_network: set[tuple[str, str]]) -> pd.DataFrame:
        rows = [(viewer, author, (viewer, author) not in out_of_network) for viewer, authors in seen.items()
                for author in authors]  # fmt: skip
        return pd.DataFrame(rows, columns=["agent_id", "author_id", "in_network"])

    control = exposures({"u1": ["a"], "u2": ["a", "b"], "u3": ["c"], "u4": ["a"]}, set())
    ranked = exposures({"u1": ["a", "b"], "u2": ["b"], "u3": ["b", "c"], "u4": ["c"]}, {("u3", "b")})
    return {"x_algo": {"exposures": ranked, "agents": agents},
            "chronological": {"exposures": control, "agents": agents}}  # fmt: skip


def test_huszar_measure_is_the_group_and_the_share_of_top_accounts_amplified_by_hand() -> None:
    claims, figures = huszar2022.measure(huszar_tables())
    # a: (1/4) / (3/4) - 1 = -2/3, b: (3/4) / (1/4) - 1 = 2: one of the two top accounts is amplified
    assert claims["top_accounts_amplified"].x == pytest.approx(0.5)
    assert figures["account_top_1pct_median"] == pytest.approx((-2 / 3 + 2) / 2)
    assert figures["account_top_1pct_max"] == pytest.approx(2.0)
    assert figures["account_top_1pct_share_below_0"] == pytest.approx(0.5)
    assert figures["account_top_1pct_with_ratio"] == 2
    # where the reach comes from (medians over a and b, shares of the 4 viewers): x_algo in network a 1/4, b 2/4;
    # out of network a 0, b 1/4 (u3); chronological shows everything in network: a 3/4, b 1/4
    assert figures["top_accounts_in_network_reach_x_algo"] == pytest.approx(3 / 8)
    assert figures["top_accounts_out_of_network_reach_x_algo"] == pytest.approx(1 / 8)
    assert figures["top_accounts_in_network_reach_chronological"] == pytest.approx(1 / 2)
    # a and b as one group: u1, u2, u4 under chronological, u1, u2, u3 under x_algo: 3/4 both, ratio 0 (a's loss is
    # b's gain), not saturated
    assert claims["top_group_amplified"].x == pytest.approx(0.0)
    assert figures["top_group_reach_x_algo"] == figures["top_group_reach_chronological"] == pytest.approx(3 / 4)
    assert figures["top_group_saturated"] == 0.0
    # the top decile (a, b, c and 17 silent accounts) is seen by every viewer under both: saturated, ratio 0
    assert figures["top_decile_reach_x_algo"] == 1.0 and figures["top_decile_reach_chronological"] == 1.0
    assert figures["top_decile_amplification"] == 0.0 and figures["top_decile_saturated"] == 1.0
    assert figures["population_x_algo"] == 4 and figures["population_chronological"] == 4
    # groups of 10 random accounts: most hold none of a, b, c and have no ratio (the control never showed them)
    assert figures["random_10_all_with_ratio"] < 100 and figures["random_10_top_decile_with_ratio"] > 0
    group, accounts = huszar2022.CLAIMS
    assert "fewer agents in network" in huszar2022.reason(empty_result(huszar2022.FINDING, accounts), figures)
    # the group claim's miss: the group's reach, or, when nearly every agent sees it under both arms, saturation
    assert "fewer agents in network" in huszar2022.reason(empty_result(huszar2022.FINDING, group), figures)
    saturated = figures | {"top_group_saturated": 1.0, "top_group_reach_x_algo": 0.99}
    assert "saturates" in huszar2022.reason(empty_result(huszar2022.FINDING, group), saturated)


def test_huszar_reads_the_runs_juul_ugander_and_goel_make() -> None:
    assert huszar2022.FINDING.arms == juul_ugander2021.FINDING.arms
    assert huszar2022.FINDING.quick_overrides == juul_ugander2021.FINDING.quick_overrides
    assert huszar2022.FINDING.full_overrides == juul_ugander2021.FINDING.full_overrides != ()
    assert huszar2022.FINDING.seeds == juul_ugander2021.FINDING.seeds


def political_exposures(rows: list[tuple[float, float, float, float, float]]) -> pd.DataFrame:
    """Impressions from (reader_position, author_position, political, slant, animosity); NaN: none."""
    reader, author, political, slant, animosity = (list(column) for column in zip(*rows, strict=True))
    return pd.DataFrame(
        {"agent_id": [f"u{i}" for i in range(len(rows))], "reader_position": reader, "author_position": author,
         "post_political": political, "post_slant": slant, "post_animosity": animosity, "satisfaction": 0.0}
    )  # fmt: skip


def test_milli_measures_are_the_impressions_means_in_sd_of_the_chronological_posts() -> None:
    nan = math.nan
    # the chronological run's posts: animosity 0, 0, 1/3, 1 and partisanship |slant| 0 (not political), 0.5, 1, 1
    posts = pd.DataFrame({"post_id": list("abcd"), "political": [0.0, 1.0, 1.0, 1.0],
                          "slant": [nan, -0.5, 1.0, -1.0], "animosity": [nan, 0.0, 1 / 3, 1.0]})  # fmt: skip
    sd = milli2025.supply_sd(posts)
    assert sd["animosity"] == pytest.approx(np.std([0, 0, 1 / 3, 1], ddof=1))
    assert sd["partisanship"] == pytest.approx(np.std([0, 0.5, 1, 1], ddof=1))
    chronological = political_exposures([(0.5, nan, 0.0, nan, nan), (0.5, 0.4, 1.0, 0.5, 0.0)])
    engagement = political_exposures([(0.5, 0.9, 1.0, -1.0, 1.0), (0.5, 0.4, 1.0, 0.5, 0.0)])
    stated = political_exposures([(0.5, nan, 0.0, nan, nan), (0.5, nan, 0.0, nan, nan)])
    runs = {"chronological": {"exposures": chronological, "posts": posts},
            "engagement": {"exposures": engagement, "posts": posts},
            "stated_preference": {"exposures": stated, "posts": posts}}  # fmt: skip
    claims, figures = milli2025.measure(runs)
    # animosity: chronological mean 0, engagement (1 + 0) / 2, stated preference 0, each over the posts' SD
    assert claims["animosity_engagement"].x == pytest.approx(0.5 / sd["animosity"])
    assert claims["animosity_engagement"].y == 0.0
    assert claims["animosity_stated_preference"].x == 0.0
    assert claims["animosity_stated_preference"].y == pytest.approx(0.5 / sd["animosity"])
    # partisanship: chronological (0 + 0.5) / 2, engagement (1 + 0.5) / 2
    assert claims["partisanship_engagement"].x == pytest.approx(0.75 / sd["partisanship"])
    assert claims["partisanship_engagement"].y == pytest.approx(0.25 / sd["partisanship"])
    assert figures["political_share_chronological"] == 0.5 and figures["political_share_stated_preference"] == 0.0
    assert figures["animosity_among_political_engagement"] == 0.5 and figures["hostile_share_engagement"] == 0.5
    assert math.isnan(figures["animosity_among_political_stated_preference"])
    reason = milli2025.reason(empty_result(milli2025.FINDING, milli2025.CLAIMS[0]), figures)
    assert "engagement shows political posts in 1 of its impressions against 0.5 under chronological" in reason


def test_milli_arms_are_paired_by_seed_and_every_claim_is_evidence() -> None:
    assert [arm.name for arm in milli2025.ARMS] == ["chronological", "engagement", "stated_preference"]
    assert all(claim.evidence and claim.kind == "contrast" for claim in milli2025.CLAIMS)
    assert [claim.sign for claim in milli2025.CLAIMS] == [1, 1, -1]
    assert milli2025.FINDING.untestable() is None


def test_nyhan_measures_the_dose_the_cross_cutting_share_and_animosity_of_political_readers() -> None:
    nan = math.nan
    # readers at +0.5 (right) and NaN (non-political, not counted); authors right (like-minded), left, none
    control = political_exposures([(0.5, 0.6, 1.0, 0.6, 1.0), (0.5, 0.2, 0.0, nan, nan), (0.5, -0.5, 1.0, -0.5, 0.0),
                                   (0.5, nan, 0.0, nan, nan), (nan, 0.6, 1.0, 0.6, 1.0)])  # fmt: skip
    demoted = political_exposures([(0.5, 0.6, 1.0, 0.6, 1 / 3), (0.5, -0.5, 1.0, -0.5, 0.0),
                                   (0.5, -0.9, 1.0, -0.9, 0.0), (0.5, nan, 0.0, nan, nan)])  # fmt: skip
    claims, figures = nyhan2023.measure({"control": {"exposures": control}, "demoted": {"exposures": demoted}})
    # like-minded 2/4 under control, 1/4 demoted: ratio 1/2; cross-cutting 1/4 -> 2/4
    assert claims["like_minded_cut"].x == pytest.approx(0.5)
    assert (claims["cross_cutting_up"].x, claims["cross_cutting_up"].y) == (0.5, 0.25)
    # animosity over political readers' impressions: (1 + 0 + 0 + 0) / 4 against (1/3 + 0 + 0 + 0) / 4
    assert claims["uncivil_down"].y == pytest.approx(0.25) and claims["uncivil_down"].x == pytest.approx(1 / 12)
    assert figures["neutral_control"] == 0.25 and figures["neutral_demoted"] == 0.25
    reason = nyhan2023.reason(empty_result(nyhan2023.FINDING, nyhan2023.CLAIMS[1]), figures)
    assert "cross-cutting share by +0.25" in reason and "the other side" in reason


def test_nyhan_demotes_like_minded_sources_at_the_dose_in_its_band() -> None:
    control, demoted = nyhan2023.ARMS
    assert control.overrides == ("ranking=x_algo",)
    assert demoted.overrides == ("ranking=x_algo", f"ranking.like_minded_scale={nyhan2023.LIKE_MINDED_SCALE}")
    dose = nyhan2023.CLAIMS[0]
    assert dose.role == "consistency" and (dose.low, dose.high) == nyhan2023.DOSE_BAND
    assert [claim.role for claim in nyhan2023.CLAIMS[1:]] == ["evidence", "evidence"]
    assert nyhan2023.FINDING.untestable() is None


def test_guess_exposure_measures_the_political_share_and_animosity_of_every_impression() -> None:
    nan = math.nan
    # algorithmic: one hostile political post (animosity 1) of four impressions, one read by a non-political reader
    algorithmic = political_exposures([(0.5, 0.6, 1.0, 0.6, 1.0), (0.5, nan, 0.0, nan, nan),
                                       (nan, nan, 0.0, nan, nan), (-0.5, nan, 0.0, nan, nan)])  # fmt: skip
    # chronological: three political posts of four (animosity 1/3, 0, 0), the non-political reader's counted too
    chronological = political_exposures([(0.5, 0.6, 1.0, 0.6, 1 / 3), (0.5, -0.5, 1.0, -0.5, 0.0),
                                         (nan, 0.2, 1.0, 0.2, 0.0), (-0.5, nan, 0.0, nan, nan)])  # fmt: skip
    runs = {"algorithmic": {"exposures": algorithmic}, "chronological": {"exposures": chronological}}
    claims, figures = guess2023_exposure.measure(runs)
    assert (claims["political_up"].x, claims["political_up"].y) == (0.75, 0.25)
    assert claims["uncivil_down"].x == pytest.approx(1 / 12) and claims["uncivil_down"].y == pytest.approx(0.25)
    assert figures["animosity_among_political_chronological"] == pytest.approx(1 / 9)
    assert figures["animosity_among_political_algorithmic"] == 1.0
    # Nyhan classes over political readers only: chronological like-minded 1, cross-cutting 1, neutral 1 of 3
    assert figures["cross_cutting_chronological"] == pytest.approx(1 / 3)
    assert figures["like_minded_algorithmic"] == pytest.approx(1 / 3)
    reason = guess2023_exposure.reason(empty_result(guess2023_exposure.FINDING, guess2023_exposure.CLAIMS[1]), figures)
    assert "political posts in 0.75 of its impressions against 0.25 under x_algo" in reason


def test_guess_exposure_claims_are_signed_evidence_and_its_arms_are_x_algo_and_chronological() -> None:
    assert [arm.overrides for arm in guess2023_exposure.ARMS] == [("ranking=x_algo",), ("ranking=chronological",)]
    assert [(claim.role, claim.kind, claim.sign) for claim in guess2023_exposure.CLAIMS] == [
        ("evidence", "contrast", 1),
        ("evidence", "contrast", -1),
    ]
    assert guess2023_exposure.FINDING.untestable() is None
