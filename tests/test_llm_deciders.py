"""Which agents decide by LLM, and the LLM figures logged to MLflow (pure functions, no model)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.simulation.deciders import RulesDecider, build_decider, llm_agent_mask
from prism_experiments.tracking.llm_metrics import llm_metric_values, llm_metrics


def test_rules_and_llm_masks_are_none_and_all() -> None:
    assert not llm_agent_mask(0, 50, "rules", 0.9).any()
    assert llm_agent_mask(0, 50, "llm", 0.0).all()


def test_the_hybrid_share_is_seeded_and_close_to_the_fraction() -> None:
    mask = llm_agent_mask(3, 2000, "hybrid", 0.25)
    assert np.array_equal(mask, llm_agent_mask(3, 2000, "hybrid", 0.25))
    assert not np.array_equal(mask, llm_agent_mask(4, 2000, "hybrid", 0.25))
    assert abs(mask.mean() - 0.25) < 0.03
    # a larger share keeps every agent of a smaller one (one keyed draw per agent)
    assert np.all(llm_agent_mask(3, 2000, "hybrid", 0.5)[mask])


def test_a_hybrid_population_without_llm_agents_builds_no_model(tmp_path) -> None:
    cfg = ExperimentConfig.from_mapping({"agents": {"decider": "hybrid", "llm_fraction": 0.0,
                                                    "llm": {"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}}})
    decider = build_decider(0, cfg.agents, [], np.zeros((0, 3)), np.zeros((0, 5)), 10, 2000, tmp_path, False)
    assert isinstance(decider, RulesDecider)


@pytest.mark.parametrize("key, value, field", [
    ("decider", "gpt", "agents.decider"), ("llm_fraction", 1.5, "agents.llm_fraction"),
])
def test_bad_decider_settings_name_the_field(key: str, value: object, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        ExperimentConfig.from_mapping({"agents": {key: value}})


def test_bad_llm_backend_names_the_field_and_allowed_values() -> None:
    with pytest.raises(ConfigError, match=r"agents\.llm\.backend: .*'local' or 'openai'"):
        ExperimentConfig.from_mapping({"agents": {"llm": {"backend": "vllm"}}})


def test_llm_figures_cost_and_hit_rate() -> None:
    totals = {"prompts": 10.0, "cache_hits": 4.0, "input_tokens": 3000.0, "output_tokens": 500.0,
              "prompt_tokens": 8000.0, "answer_tokens": 900.0}
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

        return [ChatResponse('{"like": [], "reshare": [], "follow": [], "reply": null, "post": null}', 1, 1, 0.0)
                for _ in requests]


@pytest.mark.integration
def test_in_a_hybrid_run_rule_agents_decide_as_in_a_rules_run(tmp_path, session_cache_dir, monkeypatch) -> None:
    """Step 0 sees the same state in both runs: the rule agents' engagements must be identical."""
    import prism_experiments.llm.agents as llm_agents
    from prism_experiments.simulation import run_simulation

    monkeypatch.setattr(llm_agents, "build_chat_model", lambda cfg: SilentModel())

    def run(decider: str):
        cfg = ExperimentConfig.from_mapping({
            "corpus": {"n_posts": 150}, "rag": {"cache_dir": str(session_cache_dir)},
            "agents": {"n_agents": 40, "activity_median": 0.8, "decider": decider, "llm_fraction": 0.5,
                       "llm": {"cache_dir": str(tmp_path / decider)}},
            "simulation": {"n_steps": 1, "show_progress": False, "render_agents": 0},
            "paths": {"runs_dir": str(tmp_path)}})
        return run_simulation(cfg)

    rules, hybrid = run("rules"), run("hybrid")
    llm_ids = {f"{a.id}" for a, m in zip(rules.agents, llm_agent_mask(0, 40, "hybrid", 0.5)) if m}
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

    exposures = pd.DataFrame({"step": [0] * 4, "agent_id": ["a", "a", "b", "b"], "post_id": ["p", "q", "p", "q"],
                              "position": [0, 7, 0, 7], "has_media": [True, False, True, False],
                              "interest_similarity": [0.9, 0.1, 0.8, 0.2]})
    engagements = pd.DataFrame({"step": [0, 0, 0], "agent_id": ["a", "a", "b"], "post_id": ["p", "p", "q"],
                                "action": ["like", "reshare", "like"]})
    table = response_table(impressions(exposures, engagements, {"a"})).set_index(["factor", "level"])
    assert table.loc[("media", "with media"), "llm engagement_rate"] == 1.0
    assert table.loc[("media", "with media"), "rules engagement_rate"] == 0.0
    assert table.loc[("position_band", "7+"), "rules engagement_rate"] == 1.0
    assert table.loc[("position_band", "1-3"), "llm impressions"] == 1
