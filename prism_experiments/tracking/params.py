"""A validated config as MLflow params and as a hash; the one list of keys that are bookkeeping."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from prism_experiments.tracking.limits import MAX_PARAM_LENGTH

LONG_VALUE = "<too long: see config/resolved.yaml>"
#: Settings that do not change what a run computes (where it writes, how it is tracked and shown):
#: left out of the config hash, and never a condition.
RESULT_NEUTRAL_PREFIXES: tuple[str, ...] = ("paths.", "tracking.", "hydra.", "world.")
RESULT_NEUTRAL_KEYS: frozenset[str] = frozenset({"force", "force_memory", "simulation.show_progress", "rag.cache_dir"})
#: Keys that change results but tell runs apart within a condition (the seed is the unit runs are
#: paired on; the experiment name is shared by every compared run): never a condition.
RUN_IDENTITY_KEYS: frozenset[str] = frozenset({"seed", "experiment_name"})
#: Keys added after runs were stored, with the value that means what runs did before them: left out of params and
#: hash at that value, so older runs keep their hash (a sweep still skips them) and a comparison does not split old
#: from new runs on them.
OMITTED_AT_FORMER_VALUE: Mapping[str, Any] = {
    "force_memory": False,
    "arm": None,
    "serving": None,
    "world": None,
    "agents.reply_post_rate_elasticity": None,
    "network.followee_post_rate_elasticity": None,
    "corpus.author_weights": "uniform",
    "rag.encoder_backend": "torch",
    # the world files (docs/world_files.md): a generated world's runs keep their hash
    "corpus.sha256": None,
    "network.source": "generated",
    "network.path": None,
    "network.directed": True,
    "network.self_loops": "drop",
    "network.sample_nodes": None,
    "network.sample_method": "snowball",
    "network.sample_seed": None,
    "network.missing_accounts": "error",
    "network.sha256": None,
    "agents.source": "generated",
    "agents.path": None,
    "agents.sha256": None,
    # REQ-POL-13's like-minded demotion, off: runs of x_algo and the modes built on it keep their hash
    "ranking.like_minded_scale": 1.0,
}


def is_result_neutral(key: str) -> bool:
    """True for a dotted key whose value cannot change a run's results."""
    return key in RESULT_NEUTRAL_KEYS or key.startswith(RESULT_NEUTRAL_PREFIXES)


def is_bookkeeping_param(key: str) -> bool:
    """True for a dotted key that never defines a condition: result-neutral, the seed or the experiment name."""
    return key in RUN_IDENTITY_KEYS or is_result_neutral(key)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> dotted keys; lists, empty mappings and other leaves stay as they are."""
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


def _set_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """The flattened config without the OMITTED_AT_FORMER_VALUE keys at that value."""
    return {
        key: value
        for key, value in flatten(config).items()
        if not (key in OMITTED_AT_FORMER_VALUE and value == OMITTED_AT_FORMER_VALUE[key])
    }


def to_params(config: Mapping[str, Any]) -> dict[str, str]:
    """The flattened resolved config as MLflow params (dotted keys)."""
    return {key: param_value(value) for key, value in _set_keys(config).items()}


def config_hash(config: Mapping[str, Any]) -> str:
    """First 16 hex digits of the sha256 of the result-determining config (key order does not matter)."""
    kept = {key: value for key, value in _set_keys(config).items() if not is_result_neutral(key)}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]
