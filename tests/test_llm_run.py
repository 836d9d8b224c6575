"""LLM agents on the packaged local model (SmolLM2-135M, in process): valid actions, real posts, free replay.

One small world (5 agents, 2 steps, 3-post feeds); the model loads once per session. The three runs
share one response cache in a tmp dir: the first asks the model, the re-run and the other ranker replay.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.corpus.formats import classify_tweet_format
from prism_experiments.metrics import summarize
from prism_experiments.simulation import run_simulation

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def llm_config(tmp: Path, cache_dir: Path, ranking: dict) -> ExperimentConfig:
    return ExperimentConfig.from_mapping(
        {
            "seed": 0,
            "corpus": {"n_posts": 40, "span_hours": 12},
            "agents": {
                "n_agents": 5,
                "activity_median": 0.9,
                "activity_min": 0.9,
                "decider": {
                    "kind": "llm",
                    "llm": {
                        # a small budget: answers cut at it are closed, as in any run (docs/llm.md)
                        "max_new_tokens": 64,
                        "max_text_chars": 60,
                        "batch_size": 5,
                        "threads": 2,
                        "cache_dir": str(tmp / "llm-cache"),
                    },
                },
            },
            "network": {"mean_out_degree": 2},
            "rag": {"feed_size": 3, "cache_dir": str(cache_dir)},
            "ranking": ranking,
            "simulation": {"n_steps": 2, "show_progress": False, "render_agents": 0},
            "paths": {"runs_dir": str(tmp / "runs")},
        }
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path) -> dict:
    tmp = tmp_path_factory.mktemp("llm")
    # context_rerank without its rerank serves preference's similarity order: another ranker whose
    # prompts are identical under common random numbers, so every one of them must be a cache hit
    conditions = {
        "first": {"mode": "preference"},
        "again": {"mode": "preference"},
        "other": {"mode": "context_rerank", "enable_rerank": False},
    }
    results = {}
    for name, ranking in conditions.items():
        results[name] = run_simulation(llm_config(tmp, session_cache_dir, ranking))
        print(f"\n{name}: {results[name].decider_stats} decide_s={results[name].timings['decide_s']:.2f}")
    return results


def test_llm_agents_take_valid_actions_and_write_real_posts(runs: dict) -> None:
    stats = runs["first"].decider_stats
    assert stats["prompts"] >= 5 and stats["model_calls"] == stats["cache_misses"] > 0
    assert stats["no_action"] == 0
    assert 0 < stats["prompt_tokens"] / stats["prompts"] <= 1000
    engagements = runs["first"].engagements
    assert len(engagements) > 0
    assert set(engagements["action"]) <= {"like", "reshare", "reply"}
    posts = runs["first"].posts
    written = posts[posts["post_id"].str.match(r"^[rs]\d{4}-")]
    assert len(written) > 0, "the model wrote no reply and no post"
    for _, post in written.iterrows():
        assert post["format"] == classify_tweet_format(post["text"])
        assert 0 < len(post["text"]) <= 60


def test_a_rerun_makes_no_model_call_and_gives_identical_metrics(runs: dict) -> None:
    stats = runs["again"].decider_stats
    assert stats["model_calls"] == 0 and stats["cache_hits"] == stats["prompts"] > 0
    first, again = summarize(runs["first"]), summarize(runs["again"])
    assert first.keys() == again.keys()
    for name in first:
        assert first[name] == again[name] or (math.isnan(first[name]) and math.isnan(again[name])), name


def test_another_ranker_replays_identical_prompts_from_the_cache(runs: dict) -> None:
    stats = runs["other"].decider_stats
    assert stats["model_calls"] == 0 and stats["cache_hits"] == stats["prompts"] > 0
    assert summarize(runs["other"])["engagement_rate"] == summarize(runs["first"])["engagement_rate"]
