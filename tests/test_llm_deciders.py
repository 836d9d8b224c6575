"""The decider registry: which agents decide by LLM, config validation before a run exists, and the LLM figures
logged to MLflow (pure functions and unit-test doubles, no model)."""

from __future__ import annotations

import math
import pkgutil

import numpy as np
import pytest
from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

import prism_experiments.deciders.kinds as decider_modules
import prism_experiments.llm.backends as backend_modules
from prism_experiments.agents import AgentsConfig, population_arrays
from prism_experiments.composition import experiment_config
from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.deciders import DECIDERS, DeciderInputs, build_decider, decider_config, hybrid_llm_mask
from prism_experiments.llm import LLM_BACKENDS
from prism_experiments.locations import CONFIG_DIR
from prism_experiments.tracking.llm_metrics import llm_metric_values, llm_metrics


def decider_inputs(tmp_path, n_agents: int, seed: int = 0) -> DeciderInputs:
    from prism_experiments.agents import generate_population

    population = generate_population(AgentsConfig(n_agents=n_agents), ["tech", "food"], seed) if n_agents else []
    return DeciderInputs(
        seed, AgentsConfig(n_agents=max(n_agents, 1)), population, population_arrays(population), 10, 2000, tmp_path
    )


def test_every_decider_registers_under_its_kind() -> None:
    assert {"rules", "llm", "hybrid"} <= set(DECIDERS)
    assert all(decider_config(kind).kind == kind for kind in DECIDERS)


@pytest.mark.parametrize(
    "package, registry, group",
    [(decider_modules, DECIDERS, "agents/decider"), (backend_modules, LLM_BACKENDS, "agents/decider/llm")],
)
def test_each_decider_and_backend_module_registers_itself_and_has_its_option(package, registry, group: str) -> None:
    """A decider or backend is its module alone (its package imports every module, none is listed elsewhere), plus
    its Hydra option `<group>=<name>`, stored at registration, and its generated schema."""
    modules = {module.name for module in pkgutil.iter_modules(package.__path__)}
    assert {cls.__module__.rsplit(".", 1)[1] for cls in registry.values()} == modules
    assert len(registry) == len(modules)
    for name in registry:
        option = OmegaConf.to_container(ConfigStore.instance().load(f"{group}/{name}.yaml").node)
        assert option == registry.hydra_option(name)
        assert (CONFIG_DIR / "schema" / group / f"{name}.yaml").is_file(), f"{group}={name} has no schema"
        assert not (CONFIG_DIR / group / f"{name}.yaml").exists(), f"{group}={name}: a hand-written option file"


def test_the_options_of_a_decider_that_asks_a_model_select_the_default_backend() -> None:
    assert DECIDERS.hydra_option("llm") == {
        "defaults": ["/schema/agents/decider/llm@_here_", {"llm": "local"}, "_self_"]
    }
    assert DECIDERS.hydra_option("rules") == {"defaults": ["/schema/agents/decider/rules@_here_", "_self_"]}
    assert LLM_BACKENDS.hydra_option("openai") == {"defaults": ["/schema/agents/decider/llm/openai@_here_", "_self_"]}


@pytest.mark.parametrize("kind", ["rules", "llm", "hybrid"])
def test_every_decider_command_line_composes_to_its_models_defaults(compose_config, kind: str) -> None:
    decider = experiment_config(compose_config(f"agents/decider={kind}")).agents.decider
    assert decider == decider_config(kind)


@pytest.mark.parametrize("backend", ["local", "llama_cpp", "openai"])
@pytest.mark.parametrize("kind", ["llm", "hybrid"])
def test_every_backend_command_line_composes_under_each_decider_that_asks_a_model(
    compose_config, kind: str, backend: str
) -> None:
    fields = ["agents.decider.llm.base_url=http://127.0.0.1:9", "agents.decider.llm.model=m"] * (backend == "openai")
    decider = experiment_config(compose_config(f"agents/decider={kind}", f"agents/decider/llm={backend}", *fields))
    assert decider.agents.decider.kind == kind and decider.agents.decider.llm.backend == backend
    assert experiment_config(compose_config(f"agents/decider={kind}")).agents.decider.llm.backend == "local"


def test_rules_and_llm_deciders_ask_no_agent_and_every_agent(tmp_path, monkeypatch) -> None:
    import prism_experiments.llm.agents as llm_agents

    monkeypatch.setattr(llm_agents, "build_chat_model", lambda cfg: SilentModel())
    assert not build_decider(decider_config("rules"), decider_inputs(tmp_path, 50)).llm_agents().any()
    assert build_decider(decider_config("llm"), decider_inputs(tmp_path, 50)).llm_agents().all()


def test_the_hybrid_share_is_seeded_and_close_to_the_fraction() -> None:
    mask = hybrid_llm_mask(3, 2000, 0.25)
    assert np.array_equal(mask, hybrid_llm_mask(3, 2000, 0.25))
    assert not np.array_equal(mask, hybrid_llm_mask(4, 2000, 0.25))
    assert abs(mask.mean() - 0.25) < 0.03
    # a larger share keeps every agent of a smaller one (one keyed draw per agent)
    assert np.all(hybrid_llm_mask(3, 2000, 0.5)[mask])


def test_a_hybrid_population_without_llm_agents_builds_no_model(tmp_path) -> None:
    cfg = ExperimentConfig.from_mapping(
        {
            "agents": {
                "decider": {
                    "kind": "hybrid",
                    "fraction": 0.0,
                    "llm": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                }
            }
        }
    )
    decider = build_decider(cfg.agents.decider, decider_inputs(tmp_path, 5))
    assert decider.llm is None and decider.stats() == ({}, [])  # no server was asked: none listens on port 9


@pytest.mark.parametrize(
    "decider, field",
    [
        ({"kind": "gpt"}, rf"agents\.decider\.kind: unknown kind 'gpt'; registered kinds: {', '.join(DECIDERS)}$"),
        ({"kind": "hybrid", "fraction": 1.5}, r"agents\.decider\.fraction: "),
        ({"kind": "rules", "fraction": 0.5}, r"agents\.decider\.fraction: Extra inputs"),
        (
            {"kind": "llm", "llm": {"backend": "vllm"}},
            rf"agents\.decider\.llm\.backend: unknown backend 'vllm'; registered backends: {', '.join(LLM_BACKENDS)}$",
        ),
        (
            {"kind": "llm", "llm": {"backend": "openai", "model": "m", "base_url": "127.0.0.1:8000/v1"}},
            r"agents\.decider\.llm\.base_url: must be an http:// or https:// URL",
        ),
        (
            {"kind": "llm", "llm": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:99999/v1"}},
            r"agents\.decider\.llm\.base_url: the port",
        ),
        (
            {"kind": "llm", "llm": {"backend": "local", "model_path": "/nonexistent/model.gguf"}},
            r"agents\.decider\.llm\.model_path: no such file /nonexistent/model\.gguf",
        ),
        ({"kind": "llm", "llm": {"backend": "local", "model": "llama-70b"}}, r"agents\.decider\.llm\.model: the local"),
        (
            {"kind": "llm", "llm": {"backend": "local", "base_url": "http://x"}},
            r"agents\.decider\.llm\.base_url: Extra",
        ),
    ],
)
def test_bad_decider_settings_fail_validation_naming_the_field(decider: dict, field: str) -> None:
    """Everything that can be checked without the model is checked when the config is validated, before a run."""
    with pytest.raises(ConfigError, match=field):
        ExperimentConfig.from_mapping({"agents": {"decider": decider}})


def test_llm_figures_cost_and_hit_rate() -> None:
    totals = {
        "prompts": 10.0,
        "cache_hits": 4.0,
        "input_tokens": 3000.0,
        "output_tokens": 500.0,
        "prompt_tokens": 8000.0,
        "answer_tokens": 900.0,
    }
    values = llm_metric_values(totals, price_in=0.5, price_out=2.0)
    assert values["cost"] == pytest.approx(3.0 * 0.5 + 0.5 * 2.0)
    assert values["cache_hit_rate"] == 0.4 and values["prompt_tokens_per_prompt"] == 800.0
    assert llm_metric_values({}, 1.0, 1.0) == {}
    assert math.isnan(llm_metric_values({"prompts": 0.0}, 0, 0)["cache_hit_rate"])
    metrics = llm_metrics(totals, [{"step": 2.0, "prompts": 3.0}], 0.5, 2.0)
    assert {(m.key, m.step) for m in metrics} >= {("llm/cost", 0), ("llm/step/prompts", 2)}


class SilentModel:
    """A unit-test double: every agent answers with no action."""

    identity = "silent"

    def complete_many(self, requests):
        from prism_experiments.llm import ChatResponse

        return [
            ChatResponse('{"like": [], "reshare": [], "follow": [], "reply": null, "post": null}', 1, 1, 0.0)
            for _ in requests
        ]


@pytest.mark.integration
def test_in_a_hybrid_run_rule_agents_decide_as_in_a_rules_run(tmp_path, session_cache_dir, monkeypatch) -> None:
    """Step 0 sees the same state in both runs: the rule agents' engagements must be identical."""
    import prism_experiments.llm.agents as llm_agents
    from prism_experiments.simulation import run_simulation

    monkeypatch.setattr(llm_agents, "build_chat_model", lambda cfg: SilentModel())

    def run(kind: str):
        decider = (
            {"kind": kind}
            if kind == "rules"
            else {"kind": kind, "fraction": 0.5, "llm": {"cache_dir": str(tmp_path / kind)}}
        )
        cfg = ExperimentConfig.from_mapping(
            {
                "corpus": {"n_posts": 150},
                "rag": {"cache_dir": str(session_cache_dir)},
                "agents": {"n_agents": 40, "activity_median": 0.8, "decider": decider},
                "simulation": {"n_steps": 1, "show_progress": False, "render_agents": 0},
                "paths": {"runs_dir": str(tmp_path)},
            }
        )
        return run_simulation(cfg)

    rules, hybrid = run("rules"), run("hybrid")
    llm_ids = {f"{a.id}" for a, m in zip(rules.agents, hybrid_llm_mask(0, 40, 0.5)) if m}
    assert set(hybrid.llm_agent_ids) == llm_ids and rules.llm_agent_ids == []
    assert 0 < len(llm_ids) < 40
    columns = ["step", "agent_id", "post_id", "action"]
    kept = rules.engagements[~rules.engagements["agent_id"].isin(llm_ids)][columns].reset_index(drop=True)
    assert len(kept) > 0
    assert hybrid.engagements[columns].reset_index(drop=True).equals(kept)
    assert hybrid.decider_stats["prompts"] > 0
    authors = set(hybrid.posts[hybrid.posts["post_id"].str.match(r"^s\d{4}-")]["author_id"])
    assert not authors & llm_ids  # a silent LLM agent writes no template post


def test_the_response_table_splits_engagement_by_decider_and_factor() -> None:
    import pandas as pd

    from prism_experiments.analysis.llm_response import impressions, response_table

    exposures = pd.DataFrame(
        {
            "step": [0] * 4,
            "agent_id": ["a", "a", "b", "b"],
            "post_id": ["p", "q", "p", "q"],
            "position": [0, 7, 0, 7],
            "has_media": [True, False, True, False],
            "interest_similarity": [0.9, 0.1, 0.8, 0.2],
        }
    )
    engagements = pd.DataFrame(
        {
            "step": [0, 0, 0],
            "agent_id": ["a", "a", "b"],
            "post_id": ["p", "p", "q"],
            "action": ["like", "reshare", "like"],
        }
    )
    table = response_table(impressions(exposures, engagements, {"a"})).set_index(["factor", "level"])
    assert table.loc[("media", "with media"), "llm engagement_rate"] == 1.0
    assert table.loc[("media", "with media"), "rules engagement_rate"] == 0.0
    assert table.loc[("position_band", "7+"), "rules engagement_rate"] == 1.0
    assert table.loc[("position_band", "1-3"), "llm impressions"] == 1
