"""Conditions: which params define them, their readable labels, and their order."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from prism_experiments.tracking.labels import SINGLE_CONDITION_LABEL, condition_labels, short_names
from prism_experiments.tracking.params import is_bookkeeping_param

__all__ = [
    "SINGLE_CONDITION_LABEL",
    "condition_labels",
    "is_bookkeeping_param",
    "numeric_levels",
    "ordered_conditions",
    "presence_follows",
    "resolve_param_keys",
    "short_names",
    "value_sort_key",
    "varying_params",
]


def varying_params(params: pd.DataFrame, seeds: pd.Series) -> tuple[list[str], list[str]]:
    """(condition keys, seed-tracking keys) among params with more than one value (unset counts as a value).

    A param that takes one value per seed and a different value for every seed (e.g.
    `corpus.seed: ${seed}`) follows the seed, not the condition, so it is set aside. So is a param
    that is constant wherever it is set when the other condition keys already tell where it is set
    (x_algo's `ranking.reply_scale` in a `ranking: x_algo,random` sweep: each mode logs only its own).
    """
    candidates = [str(key) for key in params.columns if not is_bookkeeping_param(str(key))]
    if not candidates:
        return [], []
    values = params[candidates]
    n_values = values.nunique(dropna=False)
    varying = [key for key in candidates if n_values[key] > 1]
    if not varying:
        return [], []
    set_values = values[varying].nunique(dropna=True)
    presence_only = [key for key in varying if set_values[key] <= 1]
    varying = [key for key in varying if key not in presence_only]
    per_seed = values[varying].groupby(seeds.to_numpy(), dropna=False).nunique(dropna=False).max()
    n_seeds = seeds.nunique(dropna=False)
    tracks_seed = [key for key in varying if per_seed[key] == 1 and n_values[key] == n_seeds]
    keys = [key for key in varying if key not in tracks_seed]
    # where a presence-only key is set follows from the other keys: it would only lengthen labels
    kept = [key for key in presence_only if not presence_follows(values, key, keys)]
    return [key for key in candidates if key in keys or key in kept], tracks_seed


def presence_follows(values: pd.DataFrame, key: str, others: Sequence[str]) -> bool:
    """Whether the runs that set `key` are exactly those of some combinations of the `others` keys."""
    if not others:
        return False
    is_set = values[key].notna().rename("__is_set__")
    groups = pd.concat([values[list(others)], is_set], axis=1).groupby(list(others), dropna=False)["__is_set__"]
    return bool((groups.nunique() <= 1).all())


def resolve_param_keys(requested: Sequence[str], available: Sequence[str]) -> list[str]:
    """Full dotted keys for `--by` names, given in full or as a unique dotted suffix (`mode`)."""
    resolved: list[str] = []
    for name in requested:
        if name == "seed":
            raise ValueError("by: 'seed' cannot define a condition; it is the unit runs are paired on")
        if name in available:
            matches = [name]
        else:
            matches = [key for key in available if key.endswith("." + name)]
        if len(matches) != 1:
            problem = "is ambiguous" if matches else "is not a param of the selected runs"
            choices = matches or [key for key in available if not is_bookkeeping_param(key)]
            raise ValueError(f"by: {name!r} {problem}; allowed values: {', '.join(choices)}")
        if matches[0] not in resolved:
            resolved.append(matches[0])
    return resolved


def value_sort_key(value: object) -> tuple[int, float, str]:
    """Unset first, then numbers in numeric order, then other strings alphabetically."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return (0, 0.0, "")
    text = str(value)
    try:
        return (1, float(text), text)
    except ValueError:
        return (2, 0.0, text)


def ordered_conditions(frame: pd.DataFrame, keys: Sequence[str], label_column: str = "condition") -> list[str]:
    """Distinct labels ordered by their key values (numeric where numeric), for tables and plots."""
    distinct = frame.drop_duplicates(subset=[label_column])
    rows = distinct[[label_column, *keys]].itertuples(index=False, name=None)
    ordered = sorted(rows, key=lambda row: tuple(value_sort_key(value) for value in row[1:]))
    return [str(row[0]) for row in ordered]


def numeric_levels(values: pd.Series) -> pd.Series | None:
    """The param values as floats when every set value is numeric (unset stays NaN), else None."""
    converted = pd.to_numeric(values, errors="coerce")
    if converted[values.notna()].isna().any() or converted.notna().sum() == 0:
        return None
    return converted.astype("float64")
