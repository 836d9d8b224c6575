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


def llm_config(
    tmp: Path, cache_dir: Path, ranking: dict, llm: dict, n_agents: int = 5, n_posts: int = 40, n_steps: int = 2
) -> ExperimentConfig:
    """A few active LLM agents on a small world; `llm` is the backend's own settings, the answer cache is
    `tmp/llm-cache` and `cache_dir` the embedding cache."""
    return ExperimentConfig.from_mapping(
        {
            "seed": 0,
            "corpus": {"n_posts": n_posts, "span_hours": 12},
            "agents": {
                "n_agents": n_agents,
                "activity_median": 0.9,
                "activity_min": 0.9,
                "decider": {
                    "kind": "llm",
                    # a small budget: answers cut at it are closed, as in any run (docs/llm.md)
                    "llm": {"max_new_tokens": 64, "max_text_chars": 60, "cache_dir": str(tmp / "llm-cache"), **llm},
                },
            },
            "network": {"mean_out_degree": 2},
            "rag": {"feed_size": 3, "cache_dir": str(cache_dir)},
            "ranking": ranking,
            "simulation": {"n_steps": n_steps, "show_progress": False, "render_agents": 0},
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
    results: dict = {"weights_dir": tmp / "llm-cache" / "weights"}
    for name, ranking in conditions.items():
        results[name] = run_simulation(llm_config(tmp, session_cache_dir, ranking, {"batch_size": 5, "threads": 1}))
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


def test_the_first_load_keeps_the_dequantised_weights_and_a_later_load_reads_the_same_model(runs: dict) -> None:
    import torch

    from prism_experiments.llm.backends.local import DEQUANTISED_MARKER, _load, _Loaded, packaged_model_path

    (saved,) = runs["weights_dir"].iterdir()  # one folder per GGUF, whole (its marker written last)
    assert (saved / DEQUANTISED_MARKER).is_file() and (saved / "model.safetensors").is_file()
    from_gguf = _load(packaged_model_path(), saved)  # the run's model, de-quantised from the GGUF
    from_saved = _Loaded(packaged_model_path(), saved)
    gguf_state, saved_state = from_gguf.model.state_dict(), from_saved.model.state_dict()
    assert gguf_state.keys() == saved_state.keys()
    assert all(torch.equal(gguf_state[name], saved_state[name]) for name in gguf_state)
    text = "Your feed:\n\n1. @u3 (2h ago) Best ramen in town 🍜 [📷 IMAGE: a bowl]"
    assert from_gguf.tokenizer(text)["input_ids"] == from_saved.tokenizer(text)["input_ids"]
    assert from_saved.tokenizer.chat_template == from_gguf.tokenizer.chat_template
