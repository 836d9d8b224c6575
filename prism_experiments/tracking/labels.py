"""Condition labels: the `prism.condition` tag a run is logged with, and the labels a comparison reports.

The tag is written at run time from the run's overrides (`x_algo oon=0.5`); the report labels are
built afterwards from the logged params of every compared run (`out_of_network_scale=0.5`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

#: Short names used in the condition tag (`x_algo oon=0.5`).
SHORT_NAMES: dict[str, str] = {
    "ranking.out_of_network_scale": "oon",
    "ranking.reply_scale": "reply",
    "ranking.author_diversity_decay": "decay",
    "ranking.author_diversity_floor": "floor",
    "ranking.author_diversity_formula": "formula",
}
#: Overrides that the mode already names, or that tell runs of one condition apart.
_NOT_IN_TAG: frozenset[str] = frozenset({"seed", "ranking", "ranking.mode"})
SINGLE_CONDITION_LABEL = "all runs"
NO_CONDITION_PARAMS_LABEL = "(no condition params set)"


def overrides_to_pairs(overrides: Iterable[str]) -> list[tuple[str, str]]:
    """`['ranking=x_algo', '+force=true']` -> `[('ranking', 'x_algo'), ('force', 'true')]`."""
    pairs = []
    for override in overrides:
        key, _, value = override.partition("=")
        pairs.append((key.lstrip("+~"), value))
    return pairs


def override_values(jobs: Sequence[Sequence[str]], keys: Sequence[str]) -> dict[str, list[str]]:
    """Each key's values across the jobs, in first-seen order (`{'ranking': ['x_algo', 'random']}`)."""
    values: dict[str, list[str]] = {key: [] for key in keys}
    for job in jobs:
        for key, value in overrides_to_pairs(job):
            if key in values and value not in values[key]:
                values[key].append(value)
    return values


def varying_override_keys(jobs: Sequence[Sequence[str]]) -> list[str]:
    """The override keys that take more than one value across the jobs of a sweep, sorted."""
    per_job = [dict(overrides_to_pairs(job)) for job in jobs]
    keys = {key for job in per_job for key in job}
    return sorted(key for key in keys if len({job.get(key) for job in per_job}) > 1)


def condition_label(mode: str, varying: Iterable[tuple[str, Any]]) -> str:
    """The condition tag: the ranking mode, then every other varying key by its short name (`x_algo oon=0.5`)."""
    parts = [mode]
    for key, value in varying:
        if key in _NOT_IN_TAG:
            continue
        parts.append(f"{SHORT_NAMES.get(key, key.rsplit('.', 1)[-1])}={value}")
    return " ".join(parts)


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
    """Report label per run: `short=value` for each condition key the run sets, joined by ", ".

    A key a run does not set (e.g. the OON scale of a `random` run) is left out of its label.
    """
    if not keys:
        return pd.Series(SINGLE_CONDITION_LABEL, index=params.index, dtype=object)
    pieces = pd.DataFrame(
        {key: (names[key] + "=" + params[key].astype(str)).where(params[key].notna(), "") for key in keys},
        index=params.index,
    )
    labels = pieces.agg(lambda row: ", ".join(piece for piece in row if piece), axis=1)
    return labels.replace("", NO_CONDITION_PARAMS_LABEL).astype(object)
