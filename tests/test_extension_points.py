"""Each extension point counted by adding one: docs/extending.md's worked examples (a decider, an LLM backend, a
ranking mode and a metric), each read from the page and written to a module of its own, registered by importing it,
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
from docs_blocks import ROOT, section
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf
from test_metrics import hand_built_log

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
from prism_experiments.metrics import METRICS, registered_metrics, summarize
from prism_experiments.network import DictSocialGraph
from prism_experiments.ranking import RANKING_MODES, RankerInputs, build_ranker, ranking_config
from prism_experiments.registries import ClassRegistry

#: the worked examples of docs/extending.md, each a module of its own: the page's code is what these tests run
EXTENDING = ROOT / "docs" / "extending.md"


def worked_example(name: str) -> str:
    """The one Python block under docs/extending.md's heading "Worked example: `<name>`"."""
    (block,) = [block for block in section(EXTENDING, f"Worked example: `{name}`") if block.language == "python"]
    return block.text


IDLE_DECIDER = worked_example("idle")
ABSTAIN_BACKEND = worked_example("abstain")
BLANK_MODE = worked_example("blank")
LIKE_SHARE = worked_example("like_share")


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


def test_a_metric_is_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`like_share` joins the summary from its module alone, with the value docs/extending.md gives for the
    hand-built log of tests/test_metrics.py (2 likes among 6 actions), and comes last."""
    registered_metrics()  # the standard metrics first, as the package imports them before a new module
    monkeypatch.setattr(METRICS, "entries", dict(METRICS.entries))
    add_module(tmp_path, monkeypatch, "like_share", LIKE_SHARE)
    summary = summarize(hand_built_log())
    assert list(summary)[-1] == "like_share" and summary["like_share"] == pytest.approx(2 / 6)


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
