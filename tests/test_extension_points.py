"""Each extension point counted by adding one: a throwaway decider, LLM backend and ranking mode, each a module of
its own (written here to a temporary file, as docs/extending.md's worked examples), registered by importing it,
given its Hydra option by the registry, its schema by `config_schema`, composed through Hydra and run."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from prism_experiments import config_schema
from prism_experiments.agents import AgentsConfig, generate_population, population_arrays
from prism_experiments.composition import compose_dictconfig, hydra_context
from prism_experiments.deciders import DECIDERS, DeciderInputs, build_decider, decider_config
from prism_experiments.deciders.base import Impressions
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.harness.preflight import group_options
from prism_experiments.llm import LLM_BACKENDS, build_chat_model, llm_config
from prism_experiments.llm.actions import NO_ACTION
from prism_experiments.llm.chat import ChatRequest
from prism_experiments.locations import CONFIG_DIR
from prism_experiments.network import DictSocialGraph
from prism_experiments.ranking import RANKING_MODES, RankerInputs, build_ranker, ranking_config
from prism_experiments.registries import ClassRegistry

IDLE_DECIDER = '''
"""Agents are shown their feeds and never act: exposure without feedback."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np

from prism_experiments.deciders.base import (
    BaseDeciderConfig, DeciderInputs, Decisions, Impressions, StepActions
)
from prism_experiments.deciders.registry import register_decider
from prism_experiments.ranking.step_feeds import StepFeeds


class IdleDeciderConfig(BaseDeciderConfig):
    """No agent likes, reshares, replies or follows; they still author posts by the rule model."""

    kind: Literal["idle"] = "idle"


@register_decider
class IdleDecider:
    """Every decision false: what the ranking alone does to exposure."""

    config_model = IdleDeciderConfig

    def __init__(self, config: IdleDeciderConfig, inputs: DeciderInputs) -> None:
        self.inputs = inputs

    def decide_step(
        self, step: int, now: datetime, active: np.ndarray, feeds: StepFeeds, impressions: Impressions
    ) -> StepActions:
        none = np.zeros(len(impressions.agent_idx), dtype=bool)
        return StepActions(Decisions(liked=none, reshared=none, replied=none, follows=none))

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        return np.ones(len(active), dtype=bool)

    def llm_agents(self) -> np.ndarray:
        return np.zeros(len(self.inputs.population), dtype=bool)

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        return {}, []

    def model_identity(self) -> str | None:
        return None
'''

ABSTAIN_BACKEND = '''
"""Answers every prompt with "no action", without a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from prism_experiments.llm.actions import NO_ACTION
from prism_experiments.llm.backend import BackendConfig, register_backend
from prism_experiments.llm.chat import ChatRequest, ChatResponse


class AbstainLLMConfig(BackendConfig):
    """Every answer is the empty action list."""

    backend: Literal["abstain"] = "abstain"
    model: str = "abstain"


@register_backend
class AbstainChatModel:
    """No model: the no-action answer, instantly."""

    config_model = AbstainLLMConfig

    def __init__(self, cfg: AbstainLLMConfig) -> None:
        self.identity = "abstain"

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        answer = NO_ACTION.model_dump_json()
        return [ChatResponse(answer, 0, 0, 0.0) for _ in requests]
'''

BLANK_MODE = '''
"""The blank feed: every agent is served nothing, a no-exposure control."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from prism_experiments.ranking.base import AgentView, Ranker
from prism_experiments.ranking.candidate import RankedCandidate
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import register_mode


class BlankConfig(ModeConfig):
    """Every feed is empty: what the world does without exposure."""

    mode: Literal["blank"] = "blank"
    #: posts served per feed (0: none; a knob only to show one reaching the ranker)
    served: int = Field(default=0, ge=0, le=0)


@register_mode
class BlankRanker(Ranker[BlankConfig]):
    """No candidates, no scores."""

    config_model = BlankConfig

    def _rank_views(self, views: list[AgentView], now: datetime) -> list[list[RankedCandidate]]:
        return [[] for _ in views]
'''


@pytest.fixture
def throwaway(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registries and Hydra's ConfigStore as they were, after the test added to them."""
    registries = (DECIDERS, LLM_BACKENDS, RANKING_MODES)
    before = [set(registry.entries) for registry in registries]
    for registry in registries:
        monkeypatch.setattr(registry, "entries", dict(registry.entries))
    yield
    for registry, names in zip(registries, before, strict=True):
        options = ConfigStore.instance().repo
        for part in str(registry.hydra_group).split("/"):
            options = options[part]
        for name in set(registry.entries) - names:
            options.pop(f"{name}.yaml", None)


def add_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> ModuleType:
    """Import `source` as a module of its own, as its package's `import_modules` would."""
    path = tmp_path / "modules" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"throwaway_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # inspect.getsource finds the class through it
    spec.loader.exec_module(module)
    return module


def generated_schema(conf: Path) -> list[Path]:
    """`python -m prism_experiments.config_schema`'s new files, written under `conf/schema` (the repository's stay)."""
    new = [path for path in config_schema.schema_files() if not (config_schema.SCHEMA_DIR / path).is_file()]
    for path in new:
        target = conf / "schema" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(config_schema.schema_files()[path])
    return new


def compose(conf: Path, *overrides: str) -> DictConfig:
    """The command line `prism-run <overrides>`, composed with `conf` on Hydra's search path."""
    with hydra_context():
        return compose_dictconfig([*overrides, f"hydra.searchpath=[file://{conf}]"])


def validated(registry: ClassRegistry, node: DictConfig) -> Any:
    """A composed node validated by the model its name picks (the run's config union is built at import: an entry
    added inside a test is not in it)."""
    fields = OmegaConf.to_container(node, resolve=True)
    assert isinstance(fields, dict)
    return registry.validate(str(fields.pop(registry.field)), **fields)


def test_a_decider_is_its_module_and_its_generated_schema(
    throwaway: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_module(tmp_path, monkeypatch, "idle", IDLE_DECIDER)
    assert generated_schema(tmp_path / "conf") == [Path("agents/decider/idle.yaml")]
    assert "idle" in group_options(CONFIG_DIR)["agents/decider"]  # `agents/decider=idle` passes the preflight
    composed = compose(tmp_path / "conf", "agents/decider=idle")
    config = validated(DECIDERS, composed.agents.decider)
    population = generate_population(AgentsConfig(n_agents=4), ["tech", "food"], 0)
    arrays = population_arrays(population)
    decider = build_decider(config, DeciderInputs(0, AgentsConfig(n_agents=4), population, arrays, 10, 2000, tmp_path))
    impressions = Impressions(np.array([0, 0, 3]), np.array([0, 1, 0]), [], np.ones(3, bool), np.ones(3))
    actions = decider.decide_step(0, datetime(2026, 1, 1, tzinfo=UTC), np.ones(4, bool), [], impressions)
    assert type(decider).__name__ == "IdleDecider" and not actions.decisions.liked.any()
    assert len(actions.decisions.follows) == 3 and not decider.llm_agents().any()


def test_an_llm_backend_is_its_module_and_its_generated_schema(
    throwaway: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_module(tmp_path, monkeypatch, "abstain", ABSTAIN_BACKEND)
    assert generated_schema(tmp_path / "conf") == [Path("agents/decider/llm/abstain.yaml")]
    for kind in ("llm", "hybrid"):
        composed = compose(tmp_path / "conf", f"agents/decider={kind}", "agents/decider/llm=abstain")
        assert composed.agents.decider.kind == kind
        model = build_chat_model(validated(LLM_BACKENDS, composed.agents.decider.llm))
        request = ChatRequest(({"role": "user", "content": "your feed"},), {}, 64, 0.0, 7)
        (answer,) = model.complete_many([request])
        assert answer.text == NO_ACTION.model_dump_json() and model.identity == "abstain"


def test_a_ranking_mode_is_its_module_and_its_generated_schema(
    throwaway: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_module(tmp_path, monkeypatch, "blank", BLANK_MODE)
    assert generated_schema(tmp_path / "conf") == [Path("ranking/blank.yaml")]
    assert "blank" in group_options(CONFIG_DIR)["ranking"]
    composed = compose(tmp_path / "conf", "ranking=blank")
    config = validated(RANKING_MODES, composed.ranking)
    assert config.mode == "blank" and config.served == 0
    retriever = FeedRetriever(FeedStoreConfig(collection_name="extension_blank"))
    ranker = build_ranker(config, RankerInputs(retriever, DictSocialGraph(), np.random.default_rng(0)))
    population = generate_population(AgentsConfig(n_agents=3), ["tech", "food"], 0)
    assert ranker.rank_many(population, datetime(2026, 1, 1, tzinfo=UTC), [set(), set(), set()]) == [[], [], []]


# --- the public helpers: the name by position or as the registry's field keyword ---------------------------------

#: (helper, its registry): `ranking_config(mode=...)`, `decider_config(kind=...)`, `llm_config(backend=...)`
HELPERS: list[tuple[Callable[..., Any], ClassRegistry]] = [
    (ranking_config, RANKING_MODES),
    (decider_config, DECIDERS),
    (llm_config, LLM_BACKENDS),
]
#: the fields an entry's config requires (no default), by (registry field, name)
REQUIRED: dict[tuple[str, str], dict[str, str]] = {
    ("backend", "openai"): {"model": "served-model", "base_url": "http://127.0.0.1:8000/v1"},
}


@pytest.mark.parametrize(
    ("helper", "registry", "name"),
    [
        pytest.param(helper, registry, name, id=f"{registry.field}={name}")
        for helper, registry in HELPERS
        for name in registry
    ],
)
def test_a_helper_takes_every_registered_name_as_its_field_keyword(
    helper: Callable[..., Any], registry: ClassRegistry, name: str
) -> None:
    required = REQUIRED.get((registry.field, name), {})
    by_keyword = helper(**{registry.field: name}, **required)
    assert getattr(by_keyword, registry.field) == name
    assert type(by_keyword) is registry[name].config_model
    assert by_keyword == helper(name, **required) == helper(name, **{registry.field: name}, **required)


@pytest.mark.parametrize(("helper", "registry"), HELPERS, ids=[registry.field for _, registry in HELPERS])
def test_a_helper_refuses_two_different_names_and_names_an_unknown_keyword(
    helper: Callable[..., Any], registry: ClassRegistry
) -> None:
    first, second = list(registry)[:2]
    message = f"{registry.option}: {registry.noun} {first!r} given by position and {registry.field}={second!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        helper(first, **{registry.field: second})
    with pytest.raises(ValueError, match=re.escape(f"{registry.option}: unknown {registry.noun} 'nonesuch'")):
        helper(**{registry.field: "nonesuch"})
    assert getattr(helper(), registry.field) == registry.default
