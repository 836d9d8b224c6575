"""An OpenAI-compatible chat-completions server (vLLM, llama.cpp server, transformers serve, OpenAI itself).

The answer is constrained with the server's `response_format` JSON-schema support; the `openai` client
retries timeouts, refused connections and 5xx with exponential backoff, `max_retries` times. The key is
read from the environment variable `api_key_env` and never logged or stored.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from prism_experiments.llm.backend import BackendConfig, register_backend
from prism_experiments.llm.chat import ChatRequest, ChatResponse, LLMUnavailable


class OpenAILLMConfig(BackendConfig):
    """An OpenAI-compatible chat-completions server; the key is read from `api_key_env`, never stored."""

    backend: Literal["openai"] = "openai"
    #: the server's model name (GET /v1/models lists them)
    model: str = Field(min_length=1)
    #: the server's base URL, e.g. http://127.0.0.1:8000/v1
    base_url: str
    #: the environment variable holding the API key (the key is never logged)
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    #: requests in flight at once
    concurrency: int = Field(default=4, ge=1, le=64)
    #: seconds one request may take
    timeout_s: float = Field(default=120.0, gt=0)
    #: retries of a timed-out / 5xx / refused request, with exponential backoff (openai client)
    max_retries: int = Field(default=2, ge=0, le=10)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        """Checked before a run exists: an http(s) URL with a host (and a valid port, if one is given)."""
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018  (raises on a port that is not a number in range)
        except ValueError:
            raise ValueError("base_url: the port is not a number from 0 to 65535") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url: must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1")
        return value


@register_backend
class OpenAIChatModel:
    """Requests go out `concurrency` at a time; the identity is the server-reported model id."""

    config_model = OpenAILLMConfig

    def __init__(self, cfg: OpenAILLMConfig) -> None:
        import openai

        self.cfg = cfg
        self._errors = (openai.APIConnectionError, openai.APITimeoutError, openai.APIStatusError)
        # a local server needs no key; the client insists on a non-empty one
        self.client = openai.OpenAI(
            base_url=cfg.base_url,
            api_key=os.environ.get(cfg.api_key_env) or "none",
            timeout=cfg.timeout_s,
            max_retries=cfg.max_retries,
        )
        try:
            served = {m.id: m for m in self.client.models.list()}
        except self._errors as exc:
            raise LLMUnavailable(f"LLM server {cfg.base_url} unreachable: {type(exc).__name__}") from None
        if cfg.model not in served:
            raise LLMUnavailable(
                f"agents.decider.llm.model: {cfg.model!r} is not served by {cfg.base_url}; "
                f"served: {', '.join(sorted(served)) or 'none'}"
            )
        self.identity = server_identity(cfg.model, served[cfg.model])

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        """Answers in request order. A request that still fails after the retries raises LLMUnavailable,
        once every request in flight has ended, carrying the answers that did arrive."""
        with ThreadPoolExecutor(max_workers=self.cfg.concurrency) as pool:
            futures = [pool.submit(self._complete, request) for request in requests]
        answered: dict[int, ChatResponse] = {}
        first_error: LLMUnavailable | None = None
        for i, future in enumerate(futures):
            error = future.exception()
            if error is None:
                answered[i] = future.result()
            elif not isinstance(error, LLMUnavailable):
                raise error
            elif first_error is None:
                first_error = error
        if first_error is not None:
            raise LLMUnavailable(str(first_error), answered)
        return [answered[i] for i in range(len(requests))]

    def _complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            answer = self.client.chat.completions.create(
                model=self.cfg.model,
                messages=list(request.messages),
                max_tokens=request.max_new_tokens,
                temperature=request.temperature,
                seed=request.seed,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "feed_actions", "schema": request.schema, "strict": True},
                },
            )
        except self._errors as exc:
            status = getattr(exc, "status_code", None)
            raise LLMUnavailable(
                f"LLM server {self.cfg.base_url} failed ({type(exc).__name__}"
                f"{f', HTTP {status}' if status else ''}; timeouts, refused connections and 5xx "
                f"are retried {self.cfg.max_retries} times)"
            ) from None
        usage = answer.usage
        return ChatResponse(
            text=answer.choices[0].message.content or "",
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            latency_s=time.perf_counter() - started,
        )


def server_identity(model: str, card: Any) -> str:
    """The model's identity in cache keys: its served name plus the `root` the server reports (vLLM: the
    weights' path or hub id; our `serve`: the GGUF digest). Not `created`: vLLM fills it with the time of
    each /v1/models request, which would make every run a cache miss."""
    root = getattr(card, "root", None) or (getattr(card, "model_extra", None) or {}).get("root")
    return f"openai:{model}" + (f":{root}" if root else "")
