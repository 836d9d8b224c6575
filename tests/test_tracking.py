"""The MLflow boundary without a store: config hash, bookkeeping keys, params, labels, tags and limits."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.tracking.labels import (
    NO_CONDITION_PARAMS_LABEL,
    SINGLE_CONDITION_LABEL,
    condition_label,
    condition_labels,
    overrides_to_pairs,
    short_names,
    varying_override_keys,
)
from prism_experiments.tracking.limits import (
    MAX_METRICS_PER_BATCH,
    MAX_PARAM_LENGTH,
    MAX_PARAMS_TAGS_PER_BATCH,
    MAX_TAG_LENGTH,
    fit_param,
    fit_tag,
)
from prism_experiments.tracking.params import (
    LONG_VALUE,
    config_hash,
    flatten,
    is_bookkeeping_param,
    is_result_neutral,
    param_value,
    to_params,
)
from prism_experiments.tracking.run_logger import log_metrics, log_params, set_tags
from prism_experiments.tracking.tags import (
    CONDITION_TAG,
    CONFIG_HASH_TAG,
    KIND_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    tag_equals,
)

BOOKKEEPING_CHANGES: dict[str, Any] = {
    "paths.runs_dir": "/somewhere/else",
    "tracking.uri": "http://127.0.0.1:5999",
    "tracking.log_figures": False,
    "force": True,
    "simulation.show_progress": False,
    "rag.cache_dir": "/another/cache",
}


def default_config() -> dict[str, Any]:
    return ExperimentConfig().model_dump(mode="json")


def reversed_keys(value: Any) -> Any:
    """The same mapping with every level's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    return value


# --- config hash ---------------------------------------------------------------------------------


def test_config_hash_is_pinned() -> None:
    # runs in existing stores are found again by this hash: changing the algorithm orphans them
    assert config_hash({"seed": 0, "ranking": {"mode": "x_algo"}}) == "47e124d46dfae79d"


def test_config_hash_ignores_key_order() -> None:
    config = default_config()
    reordered = reversed_keys(config)
    assert list(reordered) != list(config)
    assert config_hash(reordered) == config_hash(config)


def test_config_hash_of_nested_and_dotted_forms_agree() -> None:
    config = default_config()
    assert config_hash(flatten(config)) == config_hash(config)


@pytest.mark.parametrize("key", sorted(BOOKKEEPING_CHANGES))
def test_bookkeeping_keys_do_not_change_the_hash(key: str) -> None:
    flat = flatten(default_config())
    assert key in flat, f"{key} is no longer a config key: update BOOKKEEPING_CHANGES"
    changed = flat | {key: BOOKKEEPING_CHANGES[key]}
    assert changed[key] != flat[key]
    assert config_hash(changed) == config_hash(flat)


def test_every_result_determining_key_changes_the_hash() -> None:
    flat = flatten(default_config())
    digest = config_hash(flat)
    kept = [key for key in flat if not is_result_neutral(key)]
    assert "seed" in kept and "ranking.mode" in kept and len(kept) > 50
    unchanged = [key for key in kept if config_hash(flat | {key: ["changed", flat[key]]}) == digest]
    assert unchanged == []


def test_a_key_added_later_is_left_out_at_the_value_that_means_what_older_runs_did() -> None:
    """Runs stored before `rag.encoder_backend` existed encoded with torch: at "torch" the key is in neither hash
    nor params, so a sweep still finds them; "onnx" is another config."""
    flat = flatten(default_config())
    assert flat["rag.encoder_backend"] == "torch"
    older = {key: value for key, value in flat.items() if key != "rag.encoder_backend"}
    assert config_hash(flat) == config_hash(older) and to_params(flat) == to_params(older)
    onnx = flat | {"rag.encoder_backend": "onnx"}
    assert config_hash(onnx) != config_hash(flat) and to_params(onnx)["rag.encoder_backend"] == "onnx"


def test_result_neutral_and_bookkeeping_keys() -> None:
    for key in ("paths.runs_dir", "tracking.uri", "hydra.job.name", "force", "simulation.show_progress"):
        assert is_result_neutral(key) and is_bookkeeping_param(key), key
    # the seed and the experiment name change results, so they are hashed, but never define a condition
    for key in ("seed", "experiment_name"):
        assert not is_result_neutral(key) and is_bookkeeping_param(key), key
    for key in ("ranking.mode", "simulation.n_steps", "forced_choice", "rag.cache_dir_size"):
        assert not is_result_neutral(key) and not is_bookkeeping_param(key), key


# --- params --------------------------------------------------------------------------------------


def test_flatten_nests_into_dotted_keys_and_keeps_leaves() -> None:
    nested = {"a": {"b": {"c": 1}, "d": [1, 2], "e": {}}, "f": None}
    assert flatten(nested) == {"a.b.c": 1, "a.d": [1, 2], "a.e": {}, "f": None}


def test_params_are_strings_with_json_for_containers_and_none() -> None:
    params = to_params({"a": {"n": 3, "x": 0.5, "flag": True, "items": ["p", "q"], "empty": {}}, "unset": None})
    assert params == {
        "a.n": "3", "a.x": "0.5", "a.flag": "True", "a.items": '["p", "q"]', "a.empty": "{}", "unset": "null",
    }  # fmt: skip


def test_a_too_long_param_becomes_a_pointer_to_the_resolved_config() -> None:
    assert param_value("x" * MAX_PARAM_LENGTH) == "x" * MAX_PARAM_LENGTH
    assert param_value("x" * (MAX_PARAM_LENGTH + 1)) == LONG_VALUE
    assert to_params({"topics": ["t"] * MAX_PARAM_LENGTH}) == {"topics": LONG_VALUE}


def test_every_default_param_fits_mlflow() -> None:
    params = to_params(default_config())
    assert max(len(value) for value in params.values()) <= MAX_PARAM_LENGTH
    assert params["seed"] == "0" and params["tracking.uri"] == "null"


# --- labels --------------------------------------------------------------------------------------


def test_condition_tag_names_the_mode_then_short_names() -> None:
    varying = [("ranking", "x_algo"), ("ranking.mode", "x_algo"), ("seed", "3"),
               ("ranking.out_of_network_scale", "0.5"), ("agents.n_agents", "50")]  # fmt: skip
    assert condition_label("x_algo", varying) == "x_algo oon=0.5 n_agents=50"
    assert condition_label("random", []) == "random"


def test_overrides_become_pairs_without_hydra_prefixes() -> None:
    pairs = overrides_to_pairs(["ranking=x_algo", "+force=true", "~tracking.uri", "a=b=c"])
    assert pairs == [("ranking", "x_algo"), ("force", "true"), ("tracking.uri", ""), ("a", "b=c")]


def test_varying_override_keys_are_those_with_more_than_one_value() -> None:
    jobs = [["ranking=x_algo", "seed=0", "+force=true"], ["ranking=random", "seed=0", "+force=true"],
            ["ranking=x_algo", "seed=1"]]  # fmt: skip
    assert varying_override_keys(jobs) == ["force", "ranking", "seed"]
    assert varying_override_keys([["seed=0"], ["seed=0"]]) == []


def test_short_names_are_the_shortest_unique_suffixes() -> None:
    keys = ["ranking.mode", "rag.retrieval.mode", "ranking.reply_scale"]
    assert short_names(keys) == {"ranking.mode": "ranking.mode", "rag.retrieval.mode": "retrieval.mode",
                                 "ranking.reply_scale": "reply_scale"}  # fmt: skip


def test_report_labels_leave_out_keys_a_run_does_not_set() -> None:
    params = pd.DataFrame(
        {"ranking.mode": ["x_algo", "random", None], "ranking.out_of_network_scale": ["0.5", math.nan, None]},
        index=["r1", "r2", "r3"],
    )
    keys = ["ranking.mode", "ranking.out_of_network_scale"]
    labels = condition_labels(params, keys, short_names(keys))
    assert labels.tolist() == ["mode=x_algo, out_of_network_scale=0.5", "mode=random", NO_CONDITION_PARAMS_LABEL]
    assert condition_labels(params, [], {}).tolist() == [SINGLE_CONDITION_LABEL] * 3


# --- tags and limits -----------------------------------------------------------------------------


def test_tag_names_are_the_stores_schema() -> None:
    # runs logged by earlier versions are read by these names: renaming one hides them from the analysis
    assert (KIND_TAG, SEED_TAG, SWEEP_ID_TAG, CONDITION_TAG, CONFIG_HASH_TAG) == (
        "prism.kind", "prism.seed", "prism.sweep_id", "prism.condition", "prism.config_hash")  # fmt: skip
    assert tag_equals(KIND_TAG, SIMULATION_KIND) == "tags.`prism.kind` = 'simulation'"


def test_fit_tag_and_fit_param_cut_at_mlflows_limits() -> None:
    assert fit_tag("x" * (MAX_TAG_LENGTH + 10)) == "x" * MAX_TAG_LENGTH
    assert fit_tag(12) == "12"
    assert fit_param("y" * (MAX_PARAM_LENGTH + 1)) == "y" * MAX_PARAM_LENGTH
    assert fit_param("short") == "short"


class RecordingClient:
    """Stands in for MlflowClient: records every log_batch call."""

    def __init__(self) -> None:
        self.batches: list[dict[str, list]] = []

    def log_batch(
        self, run_id: str, metrics: list | None = None, params: list | None = None, tags: list | None = None
    ) -> None:
        self.batches.append({"metrics": metrics or [], "params": params or [], "tags": tags or []})


def test_set_tags_cuts_long_values_and_batches() -> None:
    client = RecordingClient()
    tags = {f"prism.t{i:03d}": "v" for i in range(MAX_PARAMS_TAGS_PER_BATCH + 1)} | {"prism.long": "z" * 9000}
    set_tags(client, "run", tags)  # type: ignore[arg-type]
    sizes = [len(batch["tags"]) for batch in client.batches]
    assert sizes == [MAX_PARAMS_TAGS_PER_BATCH, 2]
    logged = {tag.key: tag.value for batch in client.batches for tag in batch["tags"]}
    assert logged["prism.long"] == "z" * MAX_TAG_LENGTH and len(logged) == len(tags)


def test_log_params_cuts_long_values_and_batches() -> None:
    client = RecordingClient()
    params = {f"p{i:03d}": str(i) for i in range(2 * MAX_PARAMS_TAGS_PER_BATCH)} | {"long": "q" * 7000}
    log_params(client, "run", params)  # type: ignore[arg-type]
    assert [len(batch["params"]) for batch in client.batches] == [MAX_PARAMS_TAGS_PER_BATCH] * 2 + [1]
    logged = {param.key: param.value for batch in client.batches for param in batch["params"]}
    assert logged["long"] == "q" * MAX_PARAM_LENGTH and logged["p007"] == "7"


def test_log_metrics_logs_series_then_summary_and_skips_non_numbers() -> None:
    client = RecordingClient()
    series = pd.DataFrame({"inn_share": [0.1] * (MAX_METRICS_PER_BATCH + 5)})
    summary = {"inn_share": 0.25, "label": "not a number", "undefined": math.nan}
    log_metrics(client, "run", summary, series)  # type: ignore[arg-type]
    metrics = [metric for batch in client.batches for metric in batch["metrics"]]
    assert [len(batch["metrics"]) for batch in client.batches] == [MAX_METRICS_PER_BATCH, 7]
    assert {m.key for m in metrics} == {"step/inn_share", "inn_share", "undefined"}
    assert metrics[-2].key == "inn_share" and metrics[-2].value == 0.25 and metrics[-2].step == 0
    assert math.isnan(metrics[-1].value)


def test_servers_we_start_run_without_mlflows_job_runner_unless_the_user_sets_it() -> None:
    from prism_experiments.tracking.store import mlflow_server_env

    assert mlflow_server_env({"PATH": "/bin"}) == {"PATH": "/bin", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    assert (
        mlflow_server_env({"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "true"})["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"]
        == "true"
    )
