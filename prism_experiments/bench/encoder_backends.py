"""Section 1 with `--encoder-backends`: the encoder run by torch, ONNX Runtime and OpenVINO (fp32, int8), side by side.

In one process, for each backend of `prism_experiments.embeddings.backends.ENCODER_BACKENDS`: its
export (timed the first time; reused after), an untimed warm-up on other texts, then the same
`cold_texts` texts encoded through `Embedder`'s fixed-shape batches (no cache read or written),
`encoder_repeats` rounds with the backends interleaved so that a change of load on a shared CPU falls
on all of them; the median round counts. Twice: on 1 thread, and on torch's default thread count (the
physical cores), every backend with the same count. The 1-thread ratio is the steadier one on a shared
machine: with another process on a core, torch's OpenMP threads wait on each other far longer than
ONNX Runtime's or OpenVINO's do (measured here: torch's 2-thread rate fell 5x, theirs 2.5x).

Then feeds: a corpus of `encoder_corpus_posts` bench posts and two query sets, the bench agents'
interest queries (mean of their interests' vectors, as `FeedRetriever` builds them) and the timed
texts; recall@10 = mean |top-10 with the backend's vectors ∩ top-10 with torch's| / 10 (exact
search). torch is always the reference row.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from prism_experiments.bench.data import bench_agents, bench_corpus, distinct_texts
from prism_experiments.bench.exact import exact_top_k
from prism_experiments.bench.ranking import recall_at_k
from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.domain import interest_query_text
from prism_experiments.embeddings import DEFAULT_MODEL, Embedder, normalize_rows
from prism_experiments.embeddings.backends import (
    DEFAULT_BACKEND,
    ENCODER_BACKENDS,
    EncoderBackendError,
    check_backend,
    export_dir,
    exported_model,
)

SECTION = 1
RECALL_K = 10
#: warm-up texts: another seed than the timed ones (TEXTS_SEED 801), so no timed text is seen before
WARMUP_SEED = 802
WARMUP_TEXTS = 64
#: what a backend must reach to become a run option, `rag.encoder_backend` (REQ-FIRSTHOUR-2)
SPEEDUP_TARGET = Target(op=">=", threshold=2.0, source="REQ-FIRSTHOUR-2")
RECALL_TARGET = Target(op=">=", threshold=0.99, source="REQ-FIRSTHOUR-2")


def feed_recall(
    reference_corpus: np.ndarray,
    reference_queries: np.ndarray,
    corpus: np.ndarray,
    queries: np.ndarray,
    k: int = RECALL_K,
) -> float:
    """Mean over queries of |top-k(queries, corpus) ∩ top-k(reference queries, reference corpus)| / k, by row.

    Row i of `corpus` and of `reference_corpus` is the same post, and row j of both query sets the same
    query, embedded two ways; exact search, ties by row.
    """
    if reference_corpus.shape != corpus.shape or reference_queries.shape != queries.shape:
        raise ValueError(
            f"corpus/queries: shapes differ from the reference's ({corpus.shape} vs {reference_corpus.shape}, "
            f"{queries.shape} vs {reference_queries.shape})"
        )
    found = [[str(row) for row in rows] for rows, _ in exact_top_k(corpus, queries, k)]
    exact = [[str(row) for row in rows] for rows, _ in exact_top_k(reference_corpus, reference_queries, k)]
    return recall_at_k(found, exact, k)


def interest_queries(embedder: Embedder, interest_lists: list[list[str]]) -> np.ndarray:
    """One unit query vector per interest list: the mean of its interests' vectors (FeedRetriever's query)."""
    texts = sorted({interest_query_text(i) for interests in interest_lists for i in interests})
    vectors = dict(zip(texts, embedder.encode(texts)))
    means = np.stack([np.mean([vectors[interest_query_text(i)] for i in lst], axis=0) for lst in interest_lists])
    return normalize_rows(means)


def encoder_backend_figures(inputs: SectionInputs) -> list[Figure]:
    sizes = inputs.sizes
    texts = distinct_texts(sizes.cold_texts)
    warmup = distinct_texts(WARMUP_TEXTS, seed=WARMUP_SEED)
    agents, _ = bench_agents(sizes.agents)
    corpus_texts = [post.text for post in bench_corpus(sizes.encoder_corpus_posts, agents)]
    interest_lists = [list(agent.interests) for agent in agents]

    figures: list[Figure] = []
    embedders: dict[str, Embedder] = {}
    for backend in ENCODER_BACKENDS:
        try:
            check_backend(backend)
        except EncoderBackendError as exc:  # an optional extra not installed: a row of n/a, not a failed section
            figures.append(figure(SECTION, f"encoders.{backend}.texts_per_s", None, "texts/s", note=str(exc)))
            continue
        export_s = None
        if backend != DEFAULT_BACKEND and not export_dir(backend, DEFAULT_MODEL, inputs.cache_dir).exists():
            started = time.perf_counter()
            exported_model(backend, DEFAULT_MODEL, inputs.cache_dir)
            export_s = time.perf_counter() - started
        embedders[backend] = Embedder(cache_dir=inputs.cache_dir, backend=backend)
        if export_s is not None:
            figures.append(
                figure(SECTION, f"encoders.{backend}.export_s", export_s, "s", note="first time only: cached")
            )

    import torch

    default_threads = torch.get_num_threads()
    rates: dict[int, dict[str, float]] = {}
    vectors: dict[str, np.ndarray] = {}
    try:
        for threads in sorted({1, default_threads}):
            # every backend takes torch's thread count (backends._default_threads)
            torch.set_num_threads(threads)
            for embedder in embedders.values():
                embedder._encode_with_model(warmup, show_progress=False)  # loads the runtime, first shapes
            seconds: dict[str, list[float]] = {backend: [] for backend in embedders}
            for round_ in range(sizes.encoder_repeats):
                for backend, embedder in embedders.items():
                    print(f"   encoders: {threads} threads, round {round_ + 1}, {backend}", file=sys.stderr, flush=True)
                    started = time.perf_counter()
                    vectors[backend] = embedder._encode_with_model(texts, show_progress=False)
                    seconds[backend].append(time.perf_counter() - started)
            rates[threads] = {backend: len(texts) / statistics.median(values) for backend, values in seconds.items()}
    finally:
        torch.set_num_threads(default_threads)

    # feeds: through each backend's own persistent cache (a second bench run starts warm)
    reference = DEFAULT_BACKEND
    corpus = {
        backend: embedder.encode(corpus_texts, show_progress=inputs.show_progress)
        for backend, embedder in embedders.items()
    }
    interests = {backend: interest_queries(embedder, interest_lists) for backend, embedder in embedders.items()}
    for backend in embedders:
        for threads, by_backend in rates.items():
            note = f"{len(texts)} texts, {threads} thread(s), median of {sizes.encoder_repeats} interleaved rounds"
            figures.append(
                figure(SECTION, f"encoders.{backend}.texts_per_s@{threads}t", by_backend[backend], "texts/s", note=note)
            )
            if backend != reference and reference in by_backend:
                figures.append(
                    figure(
                        SECTION,
                        f"encoders.{backend}.speedup@{threads}t",
                        by_backend[backend] / by_backend[reference],
                        "x",
                        SPEEDUP_TARGET,
                        note=f"vs torch, {threads} thread(s)",
                    )
                )
        if backend == reference or reference not in embedders:
            continue
        cosines = np.sum(vectors[backend] * vectors[reference], axis=1)
        query_sets = {
            "interests": (interests, f"{len(interest_lists)} agents' interest queries"),
            "texts": (vectors, f"the {len(texts)} timed texts as queries"),
        }
        for queries_name, (queries, described) in query_sets.items():
            recall = feed_recall(corpus[reference], queries[reference], corpus[backend], queries[backend])
            figures.append(
                figure(
                    SECTION,
                    f"encoders.{backend}.recall@10.{queries_name}",
                    recall,
                    "",
                    RECALL_TARGET,
                    note=f"{described}, {len(corpus_texts)} posts",
                )
            )
        figures.append(
            figure(SECTION, f"encoders.{backend}.min_cosine", float(cosines.min()), "", note="to torch's vector")
        )
    return figures
