"""The sweep driver embeds every pending job's starting corpus once, before fan-out."""

from __future__ import annotations

from pathlib import Path

import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.corpus.templates import pooled_texts
from prism_experiments.embeddings import Embedder
from prism_experiments.embeddings.cache import text_digest
from prism_experiments.harness.upfront_embedding import (
    embed_starting_corpora,
    pool_worth_embedding,
    starting_texts_by_cache,
    sweep_pools,
    world_key,
)
from prism_experiments.simulation import run_simulation
from prism_experiments.simulation.starting_world import build_starting_world

SMALL = {"agents": {"n_agents": 12}, "corpus": {"n_posts": 40}, "network": {"mean_out_degree": 4}}


def small_config(tmp_path: Path, seed: int, mode: str) -> ExperimentConfig:
    return ExperimentConfig.model_validate(
        SMALL | {"seed": seed, "ranking": {"mode": mode}, "paths": {"runs_dir": str(tmp_path / "runs")}}
    )


def test_the_world_key_ignores_the_ranker_and_follows_the_seed_and_world_groups(tmp_path: Path) -> None:
    a, b, c = (
        small_config(tmp_path, 0, "x_algo"),
        small_config(tmp_path, 0, "random"),
        small_config(tmp_path, 1, "x_algo"),
    )
    assert world_key(a) == world_key(b)
    assert world_key(a) != world_key(c)
    bigger = a.model_copy(update={"corpus": a.corpus.model_copy(update={"n_posts": 41})})
    assert world_key(a) != world_key(bigger)


@pytest.mark.integration
def test_one_pass_embeds_each_distinct_world_once_and_a_second_pass_encodes_nothing(tmp_path: Path) -> None:
    configs = [small_config(tmp_path, seed, mode) for seed in (0, 1) for mode in ("x_algo", "random", "chronological")]
    by_cache, n_worlds = starting_texts_by_cache(configs, show_progress=False)
    assert n_worlds == 2
    expected = {
        post.text for seed in (0, 1) for post in build_starting_world(small_config(tmp_path, seed, "x_algo")).corpus
    }
    assert list(by_cache) == [(configs[0].rag.embedding_model, configs[0].cache_dir, "torch")]
    assert set(next(iter(by_cache.values()))) == expected

    first = embed_starting_corpora(configs, show_progress=False)
    assert (first.worlds, first.texts, first.encoded) == (2, len(expected), len(expected))
    # a new embedder (as in a worker process) finds every starting text on disk
    fresh = Embedder(cache_dir=configs[0].cache_dir)
    assert (fresh.cache.rows([text_digest(text) for text in expected]) >= 0).all()
    again = embed_starting_corpora(configs, show_progress=False)
    assert again.encoded == 0 and again.texts == len(expected)


def test_a_pool_is_worth_embedding_once_the_runs_take_as_many_steps_as_it_fills_batches() -> None:
    assert pool_worth_embedding(9_578, steps=300, batch_size=32)  # 9,600 rows >= 9,578 texts
    assert not pool_worth_embedding(9_578, steps=299, batch_size=32)
    assert pool_worth_embedding(64, steps=4, batch_size=16)


def test_sweep_pools_counts_the_steps_of_every_pending_run_that_draws_from_the_pool(tmp_path: Path) -> None:
    """The default pool holds 9,578 texts: 7 runs of 48 steps (10,752 rows) make it worth embedding, 6 (9,216) do
    not; a corpus without a pool never adds one."""
    runs = [small_config(tmp_path, seed, mode) for seed in range(4) for mode in ("x_algo", "random")]
    assert runs[0].simulation.n_steps == 48 and runs[0].corpus.text_pool_size == 400
    pool = pooled_texts(runs[0].corpus.topics, runs[0].corpus.hashtag_fraction, 400)
    cache = (runs[0].rag.embedding_model, runs[0].cache_dir, "torch")
    assert sweep_pools(runs[:7], 32) == {cache: pool}
    assert sweep_pools(runs[:6], 32) == {}
    unpooled = [cfg.model_copy(update={"corpus": cfg.corpus.model_copy(update={"text_pool_size": 0})}) for cfg in runs]
    assert sweep_pools(unpooled, 32) == {}


@pytest.mark.integration
def test_the_pass_embeds_the_whole_pool_the_runs_draw_their_new_posts_from(tmp_path: Path) -> None:
    """A pool of 3 texts per topic and kind (72 texts) and two runs of 48 steps: the pass embeds the pool beyond
    the starting corpora, and every post of a run, old or new, is one of the pool's texts."""
    configs = [
        ExperimentConfig.model_validate(
            SMALL | {"seed": seed, "corpus": {"n_posts": 40, "text_pool_size": 3}, "paths": {"runs_dir": str(tmp_path)}}
        )
        for seed in (0, 1)
    ]
    pool = pooled_texts(configs[0].corpus.topics, configs[0].corpus.hashtag_fraction, 3)
    starting = {post.text for cfg in configs for post in build_starting_world(cfg).corpus}
    outcome = embed_starting_corpora(configs, show_progress=False)
    assert starting < set(pool) and (outcome.texts, outcome.pooled) == (len(pool), len(pool) - len(starting))
    fresh = Embedder(cache_dir=configs[0].cache_dir)
    assert (fresh.cache.rows([text_digest(text) for text in pool]) >= 0).all()
    result = run_simulation(configs[0])
    assert set(result.posts["text"]) <= set(pool) and len(result.posts) > 40
