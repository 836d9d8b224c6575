"""The model behind the response cache: hits cost nothing, misses go to the model in one batch per step.

Counts calls, tokens, latency and cache hits per step for MLflow, and shows them on a progress bar.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, fields

from tqdm.auto import tqdm

from prism_experiments.llm.cache import ResponseCache, request_key
from prism_experiments.llm.chat import ChatModel, ChatRequest, ChatResponse, LLMUnavailable


@dataclass
class CallStats:
    """What one step (or a whole run) asked of the model."""

    prompts: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_calls: int = 0
    #: tokens the model processed on cache misses (what a priced model bills)
    input_tokens: int = 0
    output_tokens: int = 0
    #: tokens of every prompt and answer, cached or not (the size of an agent-step)
    prompt_tokens: int = 0
    answer_tokens: int = 0
    model_latency_s: float = 0.0
    malformed: int = 0
    repaired: int = 0
    no_action: int = 0

    def add(self, other: CallStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


class CachedChat:
    """`complete_many` that answers from the cache first and sends only the misses, `chunk` at a time."""

    def __init__(self, model: ChatModel, cache: ResponseCache | None, chunk: int, show_progress: bool) -> None:
        self.model = model
        self.cache = cache
        self.chunk = chunk
        self.show_progress = show_progress

    def complete_many(
        self, requests: Sequence[ChatRequest], stats: CallStats, label: str = "llm"
    ) -> list[ChatResponse]:
        """Answers in order; each miss is stored as soon as its chunk returns, so a fault loses little."""
        keys = [request_key(self.model.identity, r) for r in requests]
        answers: list[ChatResponse | None] = [self.cache.get(k) if self.cache else None for k in keys]
        missing = [i for i, a in enumerate(answers) if a is None]
        stats.prompts += len(requests)
        stats.cache_hits += len(requests) - len(missing)
        stats.cache_misses += len(missing)
        bar = tqdm(
            total=len(requests),
            initial=len(requests) - len(missing),
            desc=label,
            unit="prompt",
            disable=not self.show_progress or not missing,
            leave=False,
        )
        started, tokens = time.perf_counter(), 0
        with bar:
            for start in range(0, len(missing), self.chunk):
                rows = missing[start : start + self.chunk]
                try:
                    arrived = dict(enumerate(self.model.complete_many([requests[i] for i in rows])))
                except LLMUnavailable as failure:
                    # what the model answered before the fault is kept: a re-run resumes from it
                    self._keep(rows, failure.answered, keys, answers, stats)
                    raise
                tokens += self._keep(rows, arrived, keys, answers, stats)
                bar.update(len(rows))
                bar.set_postfix(
                    tok_s=f"{tokens / max(time.perf_counter() - started, 1e-9):.1f}", cache_hits=stats.cache_hits
                )
        done = [a for a in answers if a is not None]
        stats.prompt_tokens += sum(a.input_tokens for a in done)
        stats.answer_tokens += sum(a.output_tokens for a in done)
        return done

    def _keep(
        self,
        rows: list[int],
        arrived: dict[int, ChatResponse],
        keys: list[str],
        answers: list[ChatResponse | None],
        stats: CallStats,
    ) -> int:
        """Record and cache the answers that arrived for `rows` (batch index -> answer); their output tokens."""
        tokens = 0
        for position, answer in arrived.items():
            i = rows[position]
            answers[i] = answer
            stats.model_calls += 1
            stats.input_tokens += answer.input_tokens
            stats.output_tokens += answer.output_tokens
            stats.model_latency_s += answer.latency_s
            tokens += answer.output_tokens
            if self.cache is not None:
                self.cache.put(keys[i], answer)
        return tokens
