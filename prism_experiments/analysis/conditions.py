"""Conditions: which params define them, their readable labels, and their order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

#: Params that never define a condition: where a run writes and how it is tracked.
EXCLUDED_PARAM_PREFIXES: tuple[str, ...] = ("paths.", "tracking.", "hydra.")
EXCLUDED_PARAM_KEYS: frozenset[str] = frozenset({"seed", "experiment_name"})
SINGLE_CONDITION_LABEL = "all runs"


def is_bookkeeping_param(key: str) -> bool:
    """True for the seed, the experiment name and output/tracking/Hydra settings."""
    return key in EXCLUDED_PARAM_KEYS or key.startswith(EXCLUDED_PARAM_PREFIXES)


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


def short_names(keys: Sequence[str]) -> dict[str, str]:
    """The shortest dotted suffix of each key that no other key shares (`ranking.mode` -> `mode`)."""

    def suffix(key: str, length: int) -> str:
        return ".".join(key.split(".")[-length:])

    names: dict[str, str] = {}
    for key in keys:
        n_parts = len(key.split("."))
        length = 1
        while length < n_parts and any(suffix(other, length) == suffix(key, length) for other in keys if other != key):
            length += 1
        names[key] = suffix(key, length)
    return names


def condition_labels(params: pd.DataFrame, keys: Sequence[str], names: Mapping[str, str]) -> pd.Series:
    """Label per run: `short=value` for each condition key the run sets, joined by ", ".

    A key a run does not set (e.g. the OON scale of a `random` run) is left out of its label.
    """
    if not keys:
        return pd.Series(SINGLE_CONDITION_LABEL, index=params.index, dtype=object)
    pieces = pd.DataFrame(
        {key: (names[key] + "=" + params[key].astype(str)).where(params[key].notna(), "") for key in keys},
        index=params.index,
    )
    labels = pieces.agg(lambda row: ", ".join(piece for piece in row if piece), axis=1)
    return labels.replace("", "(no condition params set)").astype(object)


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
