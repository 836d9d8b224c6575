"""The mode registry: every mode registers itself, and everything else is derived from it."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from hydra.core.config_store import ConfigStore

import prism_experiments.ranking.modes as modes_package
from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.network import DictSocialGraph
from prism_experiments.ranking import (
    DEFAULT_MODE,
    KNOWN_MODES,
    RANKING_MODES,
    AgentView,
    ModeConfig,
    RankedCandidate,
    Ranker,
    RankerInputs,
    build_ranker,
    config_models,
    ranking_config,
    registry,
)
from prism_experiments.ranking.modes.pooled_boost import PooledBoostConfig
from prism_experiments.ranking.modes.x_algo import XAlgoConfig

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_of_the_modes_package_registers_one_mode() -> None:
    modules = {module.name for module in pkgutil.iter_modules(modes_package.__path__)}
    registered = {cls.__module__.rsplit(".", 1)[1] for cls in RANKING_MODES.values()}
    assert registered == modules
    assert len(RANKING_MODES) == len(modules)  # one mode per module


@pytest.mark.parametrize("mode", KNOWN_MODES)
def test_each_mode_has_its_config_option_schema_and_docs_section(mode: str) -> None:
    cls = RANKING_MODES[mode]
    assert cls.mode == mode and config_models()[mode] is cls.config_model
    assert cls.config_model().mode == mode
    assert RANKING_MODES.hydra_option(mode) == {"defaults": [f"/schema/ranking/{mode}@_here_", "_self_"]}
    assert (ROOT / "conf" / "schema" / "ranking" / f"{mode}.yaml").is_file()
    assert re.search(rf"^## {mode}\b", (ROOT / "docs" / "ranking.md").read_text(), re.MULTILINE)


def test_known_modes_and_the_config_union_are_views_of_the_registry() -> None:
    assert tuple(RANKING_MODES) == KNOWN_MODES and DEFAULT_MODE in KNOWN_MODES
    for mode in KNOWN_MODES:
        config = ExperimentConfig.from_mapping({"ranking": {"mode": mode}}).ranking
        assert type(config) is config_models()[mode]


def test_a_mapping_without_a_mode_gets_the_default_mode() -> None:
    config = ExperimentConfig.from_mapping({"ranking": {"reply_scale": 0.5}}).ranking
    assert config == XAlgoConfig(reply_scale=0.5) and DEFAULT_MODE == "x_algo"
    assert ExperimentConfig().ranking == ranking_config(DEFAULT_MODE)


def test_a_knob_of_another_mode_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^config error: ranking\.reply_scale: Extra inputs are not permitted"):
        ExperimentConfig.from_mapping({"ranking": {"mode": "random", "reply_scale": 0.5}})
    with pytest.raises(ConfigError, match=r"^config error: ranking\.priority_boost: Input should be less than"):
        ExperimentConfig.from_mapping({"ranking": {"mode": "pooled_boost", "priority_boost": 2}})


def test_shared_knobs_come_from_one_base_model() -> None:
    assert {"in_network_limit", "out_of_network_limit"} <= set(XAlgoConfig.model_fields) & set(
        PooledBoostConfig.model_fields
    )
    assert "reply_scale" not in PooledBoostConfig.model_fields


class EchoConfig(ModeConfig):
    mode: Literal["echo_test"] = "echo_test"
    width: int = 1


class EchoRanker(Ranker[EchoConfig]):
    """Serves nothing; it only proves a new mode needs no list edited anywhere."""

    config_model = EchoConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        return [[] for _ in views]


@pytest.fixture
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, type[Ranker]]:
    """A copy of the registry that a test may extend; the real one, and Hydra's options of the `ranking` group (a
    registration stores one), are restored afterwards: a mode left behind would fail the config tests run next."""
    copy = dict(registry.RANKING_MODES.entries)
    monkeypatch.setattr(registry.RANKING_MODES, "entries", copy)
    options = ConfigStore.instance().repo.get("ranking", {})
    monkeypatch.setitem(ConfigStore.instance().repo, "ranking", dict(options))
    return copy


@pytest.fixture
def inputs() -> RankerInputs:
    return RankerInputs(
        FeedRetriever(FeedStoreConfig(collection_name="registry_empty")), DictSocialGraph(), np.random.default_rng(3)
    )


def test_a_registered_class_is_built_from_the_context(
    isolated_registry: dict[str, type[Ranker]], inputs: RankerInputs
) -> None:
    registry.register_mode(EchoRanker)
    assert isolated_registry["echo_test"] is EchoRanker and EchoRanker.mode == "echo_test"
    ranker = build_ranker(EchoConfig(width=3), inputs)
    assert isinstance(ranker, EchoRanker) and ranker.config.width == 3
    assert ranker.retriever is inputs.retriever and ranker.graph is inputs.graph
    assert ranker.reshares is inputs.reshares


def test_a_mode_registered_twice_is_refused(isolated_registry: dict[str, type[Ranker]]) -> None:
    registry.register_mode(EchoRanker)
    registry.register_mode(EchoRanker)  # the same class again (a module re-import) is harmless

    class OtherEcho(EchoRanker):
        pass

    with pytest.raises(ValueError, match="ranking mode 'echo_test' is registered twice: EchoRanker, OtherEcho"):
        registry.register_mode(OtherEcho)


def test_build_ranker_refuses_an_unregistered_mode_or_a_mismatched_config(inputs: RankerInputs) -> None:
    with pytest.raises(ValueError, match=r"^ranking\.mode: unknown mode 'echo_test'; registered modes: "):
        build_ranker(EchoConfig(), inputs)
    wrong = XAlgoConfig.model_construct(mode="pooled_boost")
    with pytest.raises(TypeError, match="ranking mode 'pooled_boost' takes a PooledBoostConfig, got XAlgoConfig"):
        build_ranker(wrong, inputs)


def test_the_rankers_entropy_is_one_draw_from_the_contexts_stream(inputs: RankerInputs) -> None:
    ranker = build_ranker(ranking_config("random"), inputs)
    assert ranker._entropy == int(np.random.default_rng(3).integers(2**63))


def test_a_runs_start_up_imports_neither_scikit_learn_nor_chromadb() -> None:
    """scikit-learn (learned predictor only) and ChromaDB (opened on demand) stay out of start-up."""
    script = (
        "import sys, prism_experiments.__main__, prism_experiments.harness.job, prism_experiments.ranking; "
        "print(sorted(m for m in ('sklearn', 'chromadb', 'scipy.stats') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
