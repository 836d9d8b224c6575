"""Pure helpers that turn a validated config into MLflow params, a hash and a condition label."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: MLflow's limit on a param value (mlflow/utils/validation.py, MAX_PARAM_VAL_LENGTH)
MAX_PARAM_LENGTH = 6000
LONG_VALUE = "<too long: see config/resolved.yaml>"
#: Keys that do not change what a run computes: left out of the config hash.
HASH_EXCLUDED_PREFIXES: tuple[str, ...] = ("paths.", "tracking.", "force", "simulation.show_progress", "rag.cache_dir")
#: Short names used in condition labels (`x_algo oon=0.5`).
SHORT_NAMES: dict[str, str] = {
    "ranking.out_of_network_scale": "oon",
    "ranking.reply_scale": "reply",
    "ranking.author_diversity_decay": "decay",
    "ranking.author_diversity_floor": "floor",
    "ranking.author_diversity_formula": "formula",
}


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> dotted keys; lists and other leaves stay as they are."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def param_value(value: Any) -> str:
    """A param's string form: JSON for lists, dicts and None, str otherwise; too long -> a pointer."""
    text = json.dumps(value, sort_keys=True) if isinstance(value, (list, tuple, dict)) or value is None else str(value)
    return text if len(text) <= MAX_PARAM_LENGTH else LONG_VALUE


def to_params(config: Mapping[str, Any]) -> dict[str, str]:
    """The flattened resolved config as MLflow params (dotted keys)."""
    return {key: param_value(value) for key, value in flatten(config).items()}


def config_hash(config: Mapping[str, Any]) -> str:
    """sha256 of the result-determining config: everything but paths, tracking and display switches."""
    kept = {
        key: value for key, value in flatten(config).items()
        if not any(key == p or key.startswith(p) for p in HASH_EXCLUDED_PREFIXES)
    }
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def condition_label(mode: str, varying: Iterable[tuple[str, Any]]) -> str:
    """`x_algo oon=0.5`: the ranking mode, then every other varying key by its short name."""
    parts = [mode]
    for key, value in varying:
        if key in ("seed", "ranking", "ranking.mode"):
            continue
        parts.append(f"{SHORT_NAMES.get(key, key.rsplit('.', 1)[-1])}={value}")
    return " ".join(parts)


def overrides_to_pairs(overrides: Iterable[str]) -> list[tuple[str, str]]:
    """`['ranking=x_algo', '+force=true']` -> `[('ranking', 'x_algo'), ('force', 'true')]`."""
    pairs = []
    for override in overrides:
        key, _, value = override.partition("=")
        pairs.append((key.lstrip("+~"), value))
    return pairs
