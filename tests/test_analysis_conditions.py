"""Condition keys and labels when modes log different params (each mode logs only its own)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prism_experiments.analysis.conditions import condition_labels, short_names, varying_params

NAN = np.nan


def sweep(rows: list[dict[str, object]]) -> tuple[pd.DataFrame, pd.Series]:
    params = pd.DataFrame(rows)
    return params.drop(columns="seed"), params["seed"]


def test_a_two_mode_sweep_is_labelled_by_the_mode_alone() -> None:
    # ranking: x_algo,random x seeds 0,1: x_algo's knobs are unset in random's runs and vice versa
    params, seeds = sweep(
        [
            {
                "seed": s,
                "ranking.mode": mode,
                "ranking.reply_scale": "0.75" if mode == "x_algo" else NAN,
                "ranking.out_of_network_scale": "0.75" if mode == "x_algo" else NAN,
                "ranking.recent_window_hours": "24.0" if mode == "random" else NAN,
                "rag.feed_size": "10",
            }
            for mode in ("x_algo", "random")
            for s in (0, 1)
        ]
    )
    keys, tracks_seed = varying_params(params, seeds)
    assert (keys, tracks_seed) == (["ranking.mode"], [])
    labels = condition_labels(params, keys, short_names(keys))
    assert labels.tolist() == ["mode=x_algo", "mode=x_algo", "mode=random", "mode=random"]


def test_a_knob_swept_within_one_mode_stays_a_condition_key() -> None:
    params, seeds = sweep(
        [
            {"seed": s, "ranking.mode": mode, "ranking.reply_scale": scale}
            for mode, scale in (("x_algo", "0.5"), ("x_algo", "0.75"), ("random", NAN))
            for s in (0, 1)
        ]
    )
    keys, _ = varying_params(params, seeds)
    assert keys == ["ranking.mode", "ranking.reply_scale"]
    labels = condition_labels(params, keys, short_names(keys))
    assert labels.drop_duplicates().tolist() == [
        "mode=x_algo, reply_scale=0.5",
        "mode=x_algo, reply_scale=0.75",
        "mode=random",
    ]


def test_a_key_set_in_some_runs_only_still_splits_when_nothing_else_does() -> None:
    # set vs unset is the only difference: dropping it would merge two conditions into one
    params, seeds = sweep([{"seed": s, "ranking.debug": flag} for flag in ("true", NAN) for s in (0, 1)])
    keys, _ = varying_params(params, seeds)
    assert keys == ["ranking.debug"]
    labels = condition_labels(params, keys, short_names(keys))
    assert labels.tolist() == ["debug=true", "debug=true", "(no condition params set)", "(no condition params set)"]


def test_a_presence_pattern_the_other_keys_do_not_explain_is_kept() -> None:
    # within x_algo some runs set the flag and some do not: it separates conditions the mode does not
    params, seeds = sweep(
        [
            {"seed": s, "ranking.mode": mode, "ranking.flag": flag}
            for mode, flag in (("x_algo", "on"), ("x_algo", NAN), ("random", NAN))
            for s in (0, 1)
        ]
    )
    keys, _ = varying_params(params, seeds)
    assert keys == ["ranking.mode", "ranking.flag"]
