"""The OpenAI-compatible backend against a real server on 127.0.0.1 serving the packaged model.

The server is `python -m prism_experiments.llm.serve` (FastAPI + uvicorn over the in-process model,
`response_format` json_schema honoured by llguidance): real HTTP, the real `openai` client, a real model.
`transformers serve` was not used: it loads hub model ids, not a GGUF file inside a Python package.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from prism_experiments.agents import LLMConfig
from prism_experiments.config import ExperimentConfig
from prism_experiments.llm import ChatRequest, LLMUnavailable, action_schema, parse_actions
from prism_experiments.llm.http import OpenAIChatModel
from prism_experiments.simulation import run_simulation

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_fails_the_run_with_one_line(tmp_path: Path, session_cache_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    cfg = ExperimentConfig.from_mapping({
        "corpus": {"n_posts": 20}, "agents": {"n_agents": 3, "decider": "llm",
                                              "llm": {"backend": "openai", "base_url": url, "model": "m",
                                                      "max_retries": 1, "timeout_s": 2}},
        "rag": {"cache_dir": str(session_cache_dir)}, "simulation": {"n_steps": 1, "show_progress": False},
        "paths": {"runs_dir": str(tmp_path)}})
    with pytest.raises(LLMUnavailable) as failure:
        run_simulation(cfg)
    assert str(failure.value) == f"LLM server {url} unreachable: APIConnectionError"


@pytest.fixture(scope="module")
def server() -> str:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "prism_experiments.llm.serve", "--port", str(port),
                                "--threads", "1", "--fail-first", "1"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the model server did not start") from None
                time.sleep(1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_http_backend_gets_a_valid_answer_and_retries_a_503(server: str) -> None:
    model = OpenAIChatModel(LLMConfig(backend="openai", base_url=server, model="smollm2-135m-instruct",
                                      max_retries=2, timeout_s=300))
    assert model.identity.startswith("openai:smollm2-135m-instruct:")
    messages = ({"role": "system", "content": "Answer with JSON."},
                {"role": "user", "content": "Feed:\n1. @a: I love jazz.\n2. @b: Stocks fell today.\n"
                                            'Example answer: {"like": [1], "reshare": [], "follow": [], "reply": null, "post": null}'})
    request = ChatRequest(messages=messages, schema=action_schema(2, 40), max_new_tokens=64, temperature=0.0, seed=1)
    (answer,) = model.complete_many([request])  # the server answers the first attempt with 503
    actions = parse_actions(answer.text, 2, 40)
    assert answer.input_tokens > 0 and answer.output_tokens > 0
    assert set(actions.like) <= {1, 2}
