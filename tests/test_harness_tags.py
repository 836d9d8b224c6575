"""The tags a simulation run is logged with, built from its config and overrides (no MLflow store)."""

from __future__ import annotations

from prism_experiments.config import ExperimentConfig
from prism_experiments.harness.job import run_tags
from prism_experiments.harness.sweep_file import SweepFile
from prism_experiments.tracking.tags import (
    CACHE_DIR_TAG,
    CONDITION_TAG,
    CONFIG_HASH_TAG,
    KIND_TAG,
    OVERRIDES_TAG,
    PARENT_RUN_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    VERSION_TAG_PREFIX,
)

OVERRIDES = ["ranking=x_algo", "ranking.out_of_network_scale=0.5", "agents.n_agents=50", "seed=3"]


def test_a_single_run_is_labelled_by_its_ranking_overrides() -> None:
    cfg = ExperimentConfig.from_mapping({"seed": 3})
    tags = run_tags(cfg, OVERRIDES, None, "abc123")
    assert tags[KIND_TAG] == SIMULATION_KIND
    assert tags[CONDITION_TAG] == f"{cfg.ranking.mode} oon=0.5"
    assert (tags[SEED_TAG], tags[SWEEP_ID_TAG], tags[CONFIG_HASH_TAG]) == ("3", "none", "abc123")
    assert tags[OVERRIDES_TAG] == " ".join(OVERRIDES)
    assert f"{VERSION_TAG_PREFIX}mlflow" in tags
    assert PARENT_RUN_TAG not in tags


def test_a_sweep_job_is_labelled_by_the_sweeps_varying_keys_and_linked_to_its_parent() -> None:
    cfg = ExperimentConfig.from_mapping({"seed": 3})
    sweep = SweepFile("smoke-1234", "sqlite:///x.db", "1", "parent-run", ["agents.n_agents", "seed"], 4)
    tags = run_tags(cfg, OVERRIDES, sweep, "abc123")
    assert tags[CONDITION_TAG] == f"{cfg.ranking.mode} n_agents=50"
    assert tags[SWEEP_ID_TAG] == "smoke-1234" and tags[PARENT_RUN_TAG] == "parent-run"


def test_the_cache_a_run_used_is_its_node_own_when_prism_cache_dir_is_set(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("PRISM_CACHE_DIR", raising=False)
    cfg = ExperimentConfig.from_mapping({"paths": {"runs_dir": str(tmp_path / "runs")}})
    assert run_tags(cfg, [], None, "abc")[CACHE_DIR_TAG] == str(tmp_path / "runs" / "cache")
    # a worker node's own cache, read where the run runs (the config itself is unchanged)
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "node-2" / "cache"))
    assert run_tags(cfg, [], None, "abc")[CACHE_DIR_TAG] == str(tmp_path / "node-2" / "cache")
    # rag.cache_dir= is the explicit choice and wins
    explicit = ExperimentConfig.from_mapping({"rag": {"cache_dir": str(tmp_path / "mine")}})
    assert run_tags(explicit, [], None, "abc")[CACHE_DIR_TAG] == str(tmp_path / "mine")
