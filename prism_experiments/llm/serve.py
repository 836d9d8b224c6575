"""An OpenAI-compatible chat-completions server over the local backend: `python -m prism_experiments.llm.serve`.

Serves `/v1/models` and `/v1/chat/completions` (with `response_format` json_schema, constrained by
llguidance exactly as in process) on 127.0.0.1, so other processes, or the HTTP backend's tests,
can reach the packaged model over real HTTP. `--backend llama_cpp` serves it with llama.cpp (loads in
about 2 s, decodes about 3x faster than `local`, transformers); `--fail-first N` answers the first N
completions with 503, to exercise clients' retries.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

from fastapi import FastAPI, HTTPException, Request

from prism_experiments.llm.backends.local import PACKAGED_MODEL, LocalChatModel, LocalLLMConfig
from prism_experiments.llm.chat import ChatModel, ChatRequest

#: accepted when a request has no response_format: any JSON object
ANY_OBJECT: dict[str, Any] = {"type": "object"}


def build_app(model: ChatModel, name: str, fail_first: int = 0) -> Any:
    """The FastAPI app; one lock serialises generation (one model, few cores)."""
    app = FastAPI()
    lock = threading.Lock()
    created = int(time.time())
    failures = {"left": fail_first}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        # root = the weights' digest: clients key their caches on it (llm/http.py server_identity)
        return {
            "object": "list",
            "data": [{"id": name, "object": "model", "created": created, "owned_by": "local", "root": model.identity}],
        }

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        if failures["left"] > 0:
            failures["left"] -= 1
            raise HTTPException(status_code=503, detail="warming up")
        if body.get("model") != name:
            raise HTTPException(status_code=404, detail=f"model {body.get('model')!r} not served")
        response_format = body.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema", ANY_OBJECT)
        chat = ChatRequest(
            messages=tuple(body["messages"]),
            schema=schema,
            max_new_tokens=int(body.get("max_tokens") or 256),
            temperature=float(body.get("temperature") or 0.0),
            seed=int(body.get("seed") or 0),
        )
        with lock:
            (answer,) = model.complete_many([chat])
        return {
            "id": f"chatcmpl-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer.text}}
            ],
            "usage": {
                "prompt_tokens": answer.input_tokens,
                "completion_tokens": answer.output_tokens,
                "total_tokens": answer.input_tokens + answer.output_tokens,
            },
        }

    return app


def load_model(backend: str, threads: int | None) -> ChatModel:
    """The packaged model on `backend`, loaded before the server accepts a request."""
    if backend == "llama_cpp":
        from prism_experiments.llm.backends.llama_cpp import LlamaCppChatModel, LlamaCppLLMConfig

        # one prompt at a time (the app's lock): a KV cache for one sequence
        fast = LlamaCppChatModel(LlamaCppLLMConfig(threads=threads, batch_size=1))
        fast.loaded  # noqa: B018
        return fast
    model = LocalChatModel(LocalLLMConfig(threads=threads))
    model.loaded  # noqa: B018
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--backend", choices=("local", "llama_cpp"), default="local")
    args = parser.parse_args(argv)
    import uvicorn

    model = load_model(args.backend, args.threads)
    uvicorn.run(
        build_app(model, PACKAGED_MODEL, args.fail_first), host="127.0.0.1", port=args.port, log_level="warning"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
