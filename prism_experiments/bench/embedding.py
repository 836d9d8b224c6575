"""Section 1: model load, cold-cache encoding throughput, and the cost of a corpus from a warm cache."""

from __future__ import annotations

import tempfile

from prism_experiments.bench.data import distinct_texts
from prism_experiments.bench.measure import timed
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.embeddings import DEFAULT_MODEL, Embedder, load_model

SECTION = 1


def embedding_section(inputs: SectionInputs) -> list[Figure]:
    _, load_s = timed(lambda: load_model(DEFAULT_MODEL))
    texts = distinct_texts(inputs.sizes.cold_texts)
    with tempfile.TemporaryDirectory(dir=inputs.work_dir, prefix="cold-cache-") as cache:
        cold = Embedder(cache_dir=cache)
        cold.encode(["a first forward pass sets up the model's buffers"])  # not part of the throughput
        before = cold.encoded_count
        _, cold_s = timed(lambda: cold.encode(texts, show_progress=inputs.show_progress))
        encoded_cold = cold.encoded_count - before

        def from_warm_cache() -> Embedder:
            warm = Embedder(cache_dir=cache)  # a new embedder reads the persisted shards, as a new process would
            warm.encode(texts)
            return warm

        warm, warm_s = timed(from_warm_cache)
    n = len(texts)
    extra: list[Figure] = []
    if inputs.encoder_backends:
        from prism_experiments.bench.encoder_backends import encoder_backend_figures

        extra = encoder_backend_figures(inputs)
    return [
        figure(
            SECTION,
            "embed.model_load_s",
            load_s,
            "s",
            note="first load_model() in this process, sentence-transformers import included",
        ),
        figure(SECTION, "embed.cold_texts", encoded_cold, "texts"),
        figure(SECTION, "embed.cold_texts_per_s", n / cold_s, "texts/s", note="fresh cache dir, model loaded"),
        figure(SECTION, "embed.warm_corpus_s", warm_s, "s", note=f"{n} texts, new Embedder on the same cache"),
        figure(SECTION, "embed.warm_us_per_text", 1e6 * warm_s / n, "us"),
        figure(
            SECTION,
            "embed.warm_encoded",
            warm.encoded_count,
            "texts",
            Target(op="==", threshold=0),
            note="a warm cache sends nothing to the model",
        ),
        *extra,
    ]
