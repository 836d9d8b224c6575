"""x_algo's rescoring as pure functions: hand-computed values and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from prism_experiments.ranking import KNOWN_MODES, ranking_config
from prism_experiments.ranking.rescoring import (
    author_diversity_multiplier,
    descending_order,
    occurrence_in_order,
    x_algo_scores,
)

SEED_DEFAULTS = dict(oon_scale=0.75, reply_scale=0.75, decay=0.5, floor=0.25, formula="spec")


def test_oon_copy_scores_three_quarters_and_oon_reply_0_5625() -> None:
    base = np.array([0.8, 0.8, 0.8, 0.8])
    final, parts = x_algo_scores(
        base,
        is_out_of_network=np.array([False, True, False, True]),
        is_reply=np.array([False, False, True, True]),
        authors=["a", "b", "c", "d"],
        tiebreak=np.arange(4),
        **SEED_DEFAULTS,
    )
    np.testing.assert_allclose(final / base, [1.0, 0.75, 0.75, 0.5625])
    np.testing.assert_allclose(parts["oon_scale"], [1, 0.75, 1, 0.75])
    np.testing.assert_allclose(parts["reply_scale"], [1, 1, 0.75, 0.75])
    np.testing.assert_allclose(parts["author_diversity"], 1.0)


@pytest.mark.parametrize("formula, expected", [("spec", [1.0, 0.5, 0.25]), ("home_mixer", [1.0, 0.625, 0.4375])])
def test_three_posts_by_one_author(formula: str, expected: list[float]) -> None:
    base = np.array([0.9, 0.7, 0.8])
    final, parts = x_algo_scores(
        base,
        np.zeros(3, bool),
        np.zeros(3, bool),
        ["a", "a", "a"],
        np.arange(3),
        **(SEED_DEFAULTS | {"formula": formula}),
    )
    # occurrence follows the rescored order: 0.9 first, then 0.8, then 0.7
    assert parts["author_diversity"].tolist() == [expected[0], expected[2], expected[1]]
    np.testing.assert_allclose(final, base * parts["author_diversity"])


def test_seed_formula_floor_binds_beyond_the_third_post() -> None:
    np.testing.assert_allclose(author_diversity_multiplier(np.arange(5), 0.5, 0.25, "spec"), [1, 0.5, 0.25, 0.25, 0.25])
    np.testing.assert_allclose(
        author_diversity_multiplier(np.arange(4), 0.5, 0.25, "home_mixer"), [1, 0.625, 0.4375, 0.34375]
    )


def test_occurrence_counts_per_author_in_order() -> None:
    authors = ["a", "b", "a", "a", "b"]
    order = np.array([4, 3, 2, 1, 0])
    assert occurrence_in_order(authors, order).tolist() == [2, 1, 1, 0, 0]


def test_descending_order_breaks_ties_by_tiebreak() -> None:
    assert descending_order(np.array([0.5, 0.9, 0.5]), np.array([7, 1, 3])).tolist() == [1, 2, 0]


candidate_lists = st.integers(min_value=1, max_value=30).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.sampled_from("abcd"), min_size=n, max_size=n),
    )
)
configs = st.fixed_dictionaries(
    {
        "oon_scale": st.floats(0.0, 1.0),
        "reply_scale": st.floats(0.0, 1.0),
        "decay": st.floats(0.01, 1.0),
        "floor": st.floats(0.0, 1.0),
        "formula": st.sampled_from(["spec", "home_mixer"]),
    }
)


@settings(max_examples=200, deadline=None)
@given(candidate_lists, configs)
def test_final_never_exceeds_base_and_components_recompute_it(cands, config) -> None:
    base, oon, reply, authors = (np.asarray(c) for c in cands)
    final, parts = x_algo_scores(np.asarray(base, float), oon, reply, list(authors), np.arange(len(base)), **config)
    assert np.all(final <= np.asarray(base) + 1e-12)
    recomputed = np.asarray(base) * parts["oon_scale"] * parts["reply_scale"] * parts["author_diversity"]
    np.testing.assert_allclose(final, recomputed)


@settings(max_examples=200, deadline=None)
@given(candidate_lists)
def test_neutral_settings_order_like_preference(cands) -> None:
    base, oon, reply, authors = (np.asarray(c) for c in cands)
    base = np.asarray(base, float)
    neutral = dict(oon_scale=1.0, reply_scale=1.0, decay=1.0, floor=0.25, formula="spec")
    final, _ = x_algo_scores(base, oon, reply, list(authors), np.arange(len(base)), **neutral)
    tiebreak = np.arange(len(base))
    assert descending_order(final, tiebreak).tolist() == descending_order(base, tiebreak).tolist()


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"out_of_network_scale": 1.5}, "out_of_network_scale"),
        ({"out_of_network_scale": -0.1}, "out_of_network_scale"),
        ({"reply_scale": 2}, "reply_scale"),
        ({"author_diversity_decay": 0}, "author_diversity_decay"),
        ({"author_diversity_decay": 1.01}, "author_diversity_decay"),
        ({"author_diversity_floor": -0.5}, "author_diversity_floor"),
        ({"author_diversity_floor": 1.5}, "author_diversity_floor"),
        ({"author_diversity_formula": "twitter"}, "'spec' or 'home_mixer'"),
        ({"in_network_limit": 0}, "in_network_limit"),
        ({"out_of_network_limit": 0}, "out_of_network_limit"),
    ],
)
def test_bad_ranking_config_names_the_field(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ranking_config("x_algo", **fields)


def test_unknown_mode_lists_the_registered_ones() -> None:
    with pytest.raises(ValueError) as info:
        ranking_config("trending")
    assert str(info.value) == f"ranking.mode: unknown mode 'trending'; registered modes: {', '.join(KNOWN_MODES)}"


def test_scale_error_states_the_range() -> None:
    with pytest.raises(ValidationError, match="less than or equal to 1"):
        ranking_config(out_of_network_scale=1.5)
