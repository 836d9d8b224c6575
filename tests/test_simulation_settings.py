"""The engine's settings as structural types: `ExperimentConfig` fits them without the engine naming it."""

from __future__ import annotations

from datetime import UTC, datetime

from prism_experiments.config import ExperimentConfig
from prism_experiments.simulation import EngineSettings, RunSettings, StartingWorldSettings


def test_experiment_config_satisfies_the_run_and_world_settings() -> None:
    cfg = ExperimentConfig()
    assert isinstance(cfg, RunSettings)
    assert isinstance(cfg, StartingWorldSettings)


def test_a_settings_object_missing_a_group_is_not_run_settings() -> None:
    class NoRanking:
        seed = 0
        corpus = rag = agents = network = simulation = cache_dir = None

    assert isinstance(NoRanking(), StartingWorldSettings)
    assert not isinstance(NoRanking(), RunSettings)


def test_engine_settings_take_the_engine_share_of_the_config() -> None:
    reference = datetime(2030, 5, 6, 7, tzinfo=UTC)
    cfg = ExperimentConfig.from_mapping(
        {
            "seed": 9,
            "corpus": {"reference_time": reference, "hashtag_fraction": 0.7},
            "rag": {"prompt_max_chars": 123},
            "ranking": {"mode": "random"},
            "simulation": {"n_steps": 5},
            "agents": {"n_agents": 17},
        }
    )
    settings = EngineSettings.of(cfg)
    assert (settings.seed, settings.start, settings.hashtag_fraction) == (9, reference, 0.7)
    assert (settings.prompt_max_chars, settings.label) == (123, "random")
    assert settings.simulation.n_steps == 5
    assert settings.agents.n_agents == 17
