"""The encoder under ONNX Runtime / OpenVINO (`make bench ARGS="--sections 1 --encoder-backends"`): each backend's
cache kept apart from torch's, one-line errors, the exports' vectors, and the benchmark's recall (REQ-FIRSTHOUR-2;
docs/bench.md "Encoder backends")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from prism_experiments.bench.encoder_backends import feed_recall
from prism_experiments.embeddings import Embedder, text_digest
from prism_experiments.embeddings.backends import ENCODER_BACKENDS, EncoderBackendError, check_backend
from prism_experiments.embeddings.embedder import ENCODING_VERSION, cache_directory, encoding_version

TEXTS = [
    "Bitcoin ETF inflows hit a record as crypto markets rally.",
    "New telescope images show a distant galaxy forming stars.",
    "Five tips to get your sourdough starter going",
    "ok",
]


# ------------------------------------------------------------------ the cache key
def test_torch_keeps_todays_cache_folder_and_every_backend_has_its_own(tmp_path: Path) -> None:
    # torch: exactly the folder caches were written to before backends existed (golden metrics, warm caches)
    assert cache_directory(tmp_path, "all-MiniLM-L6-v2") == (
        tmp_path / "embeddings" / "all-MiniLM-L6-v2" / "fixed-shape-avx2-1"
    )
    assert encoding_version("torch") == ENCODING_VERSION
    folders = {cache_directory(tmp_path, "all-MiniLM-L6-v2", backend) for backend in ENCODER_BACKENDS}
    versions = {encoding_version(backend) for backend in ENCODER_BACKENDS}
    assert len(folders) == len(versions) == len(ENCODER_BACKENDS)
    for backend in ENCODER_BACKENDS[1:]:
        assert backend in encoding_version(backend)
        assert cache_directory(tmp_path, "all-MiniLM-L6-v2", backend).parent.name == f"all-MiniLM-L6-v2@{backend}"


def test_vectors_of_one_backend_are_never_served_to_another(tmp_path: Path) -> None:
    torch_embedder = Embedder(cache_dir=tmp_path)
    onnx_embedder = Embedder(cache_dir=tmp_path, backend="onnx")
    assert torch_embedder.cache.directory != onnx_embedder.cache.directory
    digests = [text_digest(text) for text in TEXTS]
    marked = np.full((len(TEXTS), 384), 0.05, dtype=np.float32)  # not what any model makes
    onnx_embedder.cache.add(digests, marked)
    # a new torch embedder on the same root sees none of them: it would encode every text
    fresh_torch = Embedder(cache_dir=tmp_path)
    assert (fresh_torch.cache.rows(digests) < 0).all()
    # while a new onnx embedder finds them all, as written (and the model is never asked)
    fresh_onnx = Embedder(cache_dir=tmp_path, backend="onnx")
    np.testing.assert_array_equal(fresh_onnx.encode(TEXTS), marked)
    assert fresh_onnx.encoded_count == 0


# ------------------------------------------------------------------ errors
def test_unknown_backend_gives_one_line_error_naming_the_allowed_values(tmp_path: Path) -> None:
    with pytest.raises(EncoderBackendError) as info:
        Embedder(cache_dir=tmp_path, backend="tensorrt")
    message = str(info.value)
    assert message == (
        "encoder backend: unknown backend 'tensorrt'; allowed: torch, onnx, onnx-int8, openvino, openvino-int8"
    )
    assert "\n" not in message


def test_a_missing_package_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openvino" else real(name, *a))
    with pytest.raises(
        EncoderBackendError, match=r"'openvino' needs the package 'openvino': pip install -e '\.\[encoders\]'"
    ):
        check_backend("openvino")
    assert check_backend("torch") == "torch"  # torch needs nothing optional


# ------------------------------------------------------------------ the benchmark's recall
def test_feed_recall_counts_the_shared_top_10_per_query() -> None:
    rng = np.random.default_rng(0)
    corpus = rng.normal(size=(50, 8)).astype(np.float32)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    queries = corpus[:5] + 0.01  # each near one post
    assert feed_recall(corpus, queries, corpus, queries) == 1.0
    # the same vectors in another row order are other posts: only the rows that stayed put can match
    swapped = corpus.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    top = [set(np.argsort(-(corpus @ q))[:10].tolist()) for q in queries]
    expected = np.mean([len(t - {0, 1}) + len(t & {0, 1}) * ({0, 1} <= t) for t in top]) / 10
    assert 0.5 < expected < 1.0  # some query's top 10 holds one of the two swapped rows only
    assert feed_recall(corpus, queries, swapped, queries) == pytest.approx(expected)
    # opposite queries find other posts altogether
    assert feed_recall(corpus, queries, corpus, -queries) < 0.2
    with pytest.raises(ValueError, match="shapes differ"):
        feed_recall(corpus, queries, corpus[:40], queries)


# ------------------------------------------------------------------ the real stack
@pytest.mark.integration
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_fp32_backend_vectors_match_torch_are_unit_length_and_depend_on_the_text_alone(
    backend: str, session_cache_dir: Path
) -> None:
    reference = Embedder(cache_dir=session_cache_dir).encode(TEXTS)
    # the export is cached in the session cache (once per session); no vector is read from or written to a cache
    embedder = Embedder(cache_dir=session_cache_dir, backend=backend)
    vectors = embedder._encode_with_model(TEXTS, show_progress=False)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.sum(vectors * reference, axis=1).min() >= 0.99
    # not merely similar texts: each vector is nearest its own text's torch vector
    assert (np.argmax(vectors @ reference.T, axis=1) == np.arange(len(TEXTS))).all()
    # the fixed-shape batches hold for the backend too: the same bits alone or among other texts
    alone = embedder._encode_with_model([TEXTS[2]], show_progress=False)
    np.testing.assert_array_equal(alone[0], vectors[2])


@pytest.mark.integration
def test_a_run_on_onnx_embeds_into_its_own_cache_and_gives_the_same_metrics_twice(tmp_path: Path) -> None:
    """`rag.encoder_backend=onnx`: the run's vectors go to the onnx cache folder only (torch's stays empty), and
    the same config on a fresh cache, export included, gives bit-identical metrics."""
    from prism_experiments.config import ExperimentConfig
    from prism_experiments.metrics import summarize
    from prism_experiments.simulation import run_simulation

    def run(cache: Path) -> dict[str, float]:
        config = ExperimentConfig.model_validate(
            {
                "agents": {"n_agents": 12},
                "corpus": {"n_posts": 40},
                "network": {"mean_out_degree": 4},
                "rag": {"encoder_backend": "onnx", "cache_dir": str(cache)},
                "simulation": {"n_steps": 4, "show_progress": False},
                "paths": {"runs_dir": str(tmp_path / "runs")},
            }
        )
        return summarize(run_simulation(config))

    first = run(tmp_path / "a")
    onnx_folder = cache_directory(tmp_path / "a", "all-MiniLM-L6-v2", "onnx")
    assert any(onnx_folder.iterdir())
    assert not cache_directory(tmp_path / "a", "all-MiniLM-L6-v2").exists()
    again = run(tmp_path / "b")
    assert first.keys() == again.keys()
    assert all(first[k] == again[k] or (np.isnan(first[k]) and np.isnan(again[k])) for k in first)
