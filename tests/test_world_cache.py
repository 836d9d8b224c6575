"""A seed's starting world is built once, kept under the runs directory and loaded by its other conditions."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.simulation import world_cache
from prism_experiments.simulation.starting_world import StartingWorld, build_starting_world
from prism_experiments.simulation.world_cache import shared_starting_world, world_file

SMALL = {"agents": {"n_agents": 30}, "corpus": {"n_posts": 60}, "network": {"mean_out_degree": 5}}


def small_config(tmp_path: Path, seed: int = 0, mode: str = "x_algo", **groups: dict) -> ExperimentConfig:
    data = SMALL | {"seed": seed, "ranking": {"mode": mode}, "paths": {"runs_dir": str(tmp_path / "runs")}}
    for group, values in groups.items():
        data[group] = data.get(group, {}) | values
    return ExperimentConfig.model_validate(data)


def same_world(a: StartingWorld, b: StartingWorld) -> bool:
    return a.agents == b.agents and a.corpus == b.corpus and sorted(a.graph.edges()) == sorted(b.graph.edges())


def test_the_second_condition_of_a_seed_loads_the_world_the_first_one_built(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    worlds = tmp_path / "worlds"
    first, second = small_config(tmp_path, mode="x_algo"), small_config(tmp_path, mode="random")
    built = shared_starting_world(first, worlds)
    path = world_file(first, worlds)
    assert path is not None and path.is_file() and world_file(second, worlds) == path
    assert [p.name for p in worlds.iterdir()] == [path.name]  # no temporary file left behind
    with caplog.at_level(logging.INFO, logger=world_cache.__name__):
        loaded = shared_starting_world(second, worlds)
    assert "loaded from" in caplog.text
    assert loaded is not built and same_world(loaded, built)
    assert same_world(loaded, build_starting_world(second))


def test_any_change_to_the_seed_the_world_groups_or_the_code_misses_the_kept_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worlds = tmp_path / "worlds"
    base = small_config(tmp_path)
    others = [
        small_config(tmp_path, seed=1),
        small_config(tmp_path, network={"mean_out_degree": 6}),
        small_config(tmp_path, agents={"n_agents": 31}),
        small_config(tmp_path, corpus={"n_posts": 61}),
    ]
    paths = {world_file(cfg, worlds) for cfg in [base, *others]}
    assert len(paths) == 5
    before = world_file(base, worlds)
    monkeypatch.setattr(world_cache, "FORMAT_VERSION", world_cache.FORMAT_VERSION + 1)
    world_cache._code_digest.cache_clear()
    try:
        assert world_file(base, worlds) != before
    finally:
        monkeypatch.undo()
        world_cache._code_digest.cache_clear()
    assert world_file(base, worlds) == before


def test_an_unreadable_kept_world_is_built_again_and_replaced(tmp_path: Path) -> None:
    worlds = tmp_path / "worlds"
    cfg = small_config(tmp_path)
    path = world_file(cfg, worlds)
    assert path is not None
    worlds.mkdir()
    path.write_bytes(b"half a wor")
    world = shared_starting_world(cfg, worlds)
    assert same_world(world, build_starting_world(cfg))
    assert same_world(shared_starting_world(cfg, worlds), world)


def test_a_world_read_from_a_users_corpus_file_is_not_kept(tmp_path: Path) -> None:
    cfg = small_config(tmp_path)
    from_file = cfg.model_copy(update={"corpus": cfg.corpus.model_copy(update={"source": "file"})})
    assert world_file(from_file, tmp_path / "worlds") is None
