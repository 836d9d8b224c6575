"""The sweep driver embeds every pending job's starting corpus once, before fan-out."""

from __future__ import annotations

from pathlib import Path

import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.embeddings import Embedder
from prism_experiments.embeddings.cache import text_digest
from prism_experiments.harness.upfront_embedding import embed_starting_corpora, starting_texts_by_cache, world_key
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
    assert list(by_cache) == [(configs[0].rag.embedding_model, configs[0].cache_dir)]
    assert set(next(iter(by_cache.values()))) == expected

    first = embed_starting_corpora(configs, show_progress=False)
    assert (first.worlds, first.texts, first.encoded) == (2, len(expected), len(expected))
    # a new embedder (as in a worker process) finds every starting text on disk
    fresh = Embedder(cache_dir=configs[0].cache_dir)
    assert (fresh.cache.rows([text_digest(text) for text in expected]) >= 0).all()
    again = embed_starting_corpora(configs, show_progress=False)
    assert again.encoded == 0 and again.texts == len(expected)
