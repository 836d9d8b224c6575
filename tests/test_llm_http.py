"""The OpenAI-compatible backend against a real server on 127.0.0.1 serving the packaged model.

The server is `python -m prism_experiments.llm.serve --backend llama_cpp` (FastAPI + uvicorn over the packaged
model on llama.cpp, `response_format` json_schema honoured by its grammar): real HTTP, the real `openai`
client, a real model.
`transformers serve` was not used: it loads hub model ids, not a GGUF file inside a Python package.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from process_helpers import forked
from test_llm_run import llm_config

from prism_experiments.config import ExperimentConfig
from prism_experiments.llm import ChatRequest, LLMUnavailable, action_schema, parse_actions
from prism_experiments.llm.backends.openai_server import OpenAIChatModel, OpenAILLMConfig, server_identity
from prism_experiments.ops.daemons import free_port
from prism_experiments.simulation import run_simulation

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def test_an_unreachable_server_fails_the_run_with_one_line(tmp_path: Path, session_cache_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    cfg = ExperimentConfig.from_mapping(
        {
            "corpus": {"n_posts": 20},
            "agents": {
                "n_agents": 3,
                "decider": {
                    "kind": "llm",
                    "llm": {"backend": "openai", "base_url": url, "model": "m", "max_retries": 1, "timeout_s": 2},
                },
            },
            "rag": {"cache_dir": str(session_cache_dir)},
            "simulation": {"n_steps": 1, "show_progress": False},
            "paths": {"runs_dir": str(tmp_path)},
        }
    )
    with pytest.raises(LLMUnavailable) as failure:
        run_simulation(cfg)
    assert str(failure.value) == f"LLM server {url} unreachable: APIConnectionError"


@pytest.fixture(scope="module")
def server() -> str:
    port = free_port()
    process = forked(
        [
            sys.executable,
            "-m",
            "prism_experiments.llm.serve",
            "--port",
            str(port),
            "--threads",
            "1",
            "--fail-first",
            "1",
            # llama.cpp: loads in ~2 s where transformers de-quantises the GGUF for ~20 s of CPU, and decodes
            # ~3x faster; what these tests check is the HTTP client, whichever runtime answers
            "--backend",
            "llama_cpp",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    model = OpenAIChatModel(
        OpenAILLMConfig(backend="openai", base_url=server, model="smollm2-135m-instruct", max_retries=2, timeout_s=300)
    )
    assert model.identity.startswith("openai:smollm2-135m-instruct:")
    messages = (
        {"role": "system", "content": "Answer with JSON."},
        {
            "role": "user",
            "content": "Feed:\n1. @a: I love jazz.\n2. @b: Stocks fell today.\n"
            'Example answer: {"like": [1], "reshare": [], "follow": [], "reply": null, "post": null}',
        },
    )
    request = ChatRequest(messages=messages, schema=action_schema(2, 40), max_new_tokens=64, temperature=0.0, seed=1)
    (answer,) = model.complete_many([request])  # the server answers the first attempt with 503
    actions = parse_actions(answer.text, 2, 40)
    assert answer.input_tokens > 0 and answer.output_tokens > 0
    assert set(actions.like) <= {1, 2}


def test_the_identity_keys_on_the_served_name_and_root_never_on_created() -> None:
    vllm_card = SimpleNamespace(id="qwen", created=1700000000, root="/models/Qwen2.5-7B-Instruct")
    later = SimpleNamespace(id="qwen", created=1700000999, root="/models/Qwen2.5-7B-Instruct")
    assert (
        server_identity("qwen", vllm_card)
        == server_identity("qwen", later)
        == "openai:qwen:/models/Qwen2.5-7B-Instruct"
    )
    assert server_identity("qwen", SimpleNamespace(id="qwen", created=5)) == "openai:qwen"
    other_weights = SimpleNamespace(id="qwen", root="/models/Qwen2.5-14B-Instruct")
    assert server_identity("qwen", other_weights) != server_identity("qwen", vllm_card)


class DyingProxy(ThreadingHTTPServer):
    """Forwards to a real server; after `answers` chat completions it stops listening (a server that died)."""

    daemon_threads = True

    def __init__(self, upstream: str, answers: int) -> None:
        self.upstream, self.answers_left, self.lock = upstream, answers, threading.Lock()
        super().__init__(("127.0.0.1", 0), _ForwardingHandler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _ForwardingHandler(BaseHTTPRequestHandler):
    server: DyingProxy

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self, body: bytes | None) -> None:
        chat = self.path.endswith("/chat/completions")
        if chat and self.server.answers_left <= 0:
            # dead: a request that reached the socket before the shutdown below gets its connection closed
            # unanswered (without this, the client's next request could still be forwarded under load)
            self.close_connection = True
            return
        request = urllib.request.Request(
            self.server.upstream.removesuffix("/v1") + self.path,
            data=body,
            method=self.command,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                status, payload = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        if chat and status == 200:
            with self.server.lock:
                self.server.answers_left -= 1  # before answering: the client's next request must find it spent
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        if chat and status == 200 and self.server.answers_left <= 0:  # die: nothing listens on this port any more
            threading.Thread(target=lambda: (self.server.shutdown(), self.server.server_close())).start()

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        self._forward(self.rfile.read(int(self.headers["Content-Length"])))


def test_a_server_dying_mid_run_fails_it_and_the_rerun_asks_only_what_was_not_answered(
    server: str, tmp_path: Path, session_cache_dir: Path
) -> None:
    def config(url: str) -> ExperimentConfig:
        served = {"backend": "openai", "base_url": url, "model": "smollm2-135m-instruct"}
        patience = {"concurrency": 1, "max_retries": 1, "timeout_s": 300}
        # one step: its 3 agents' prompts are enough (the dead server answers one of them), and each answer of the
        # 1-thread server costs seconds of CPU
        ranking = {"mode": "preference"}
        return llm_config(tmp_path, session_cache_dir, ranking, served | patience, n_agents=3, n_posts=30, n_steps=1)

    proxy = DyingProxy(server, answers=1)
    with pytest.raises(LLMUnavailable) as failure:
        run_simulation(config(proxy.url))
    assert "\n" not in str(failure.value) and "APIConnectionError" in str(failure.value)
    assert len(list((tmp_path / "llm-cache").rglob("*.json"))) == 1  # the one answer given before the death

    rerun = run_simulation(config(server)).decider_stats
    assert rerun["prompts"] >= 2, "the run must need more than the one answer the dead server gave"
    assert rerun["cache_hits"] == 1
    assert rerun["model_calls"] == rerun["prompts"] - 1


def test_a_single_run_that_loses_its_server_ends_with_one_error_line_and_no_traceback(
    server: str, tmp_path: Path, session_cache_dir: Path
) -> None:
    """`prism-run` (not a sweep): the run is FAILED with one ERROR line and exit 1; Hydra's "Error executing job"
    and its 38-line traceback stay out."""
    from process_helpers import all_runs, prism

    proxy = DyingProxy(server, answers=1)
    llm = "agents.decider.llm"
    result = prism(
        "seed=0",
        "corpus.n_posts=30",
        "corpus.span_hours=12",
        "agents.n_agents=3",
        "agents.activity_median=0.9",
        "agents.activity_min=0.9",
        "network.mean_out_degree=2",
        "agents/decider=llm",
        "agents/decider/llm=openai",
        f"{llm}.base_url={proxy.url}",
        f"{llm}.model=smollm2-135m-instruct",
        f"{llm}.max_new_tokens=64",
        f"{llm}.max_text_chars=60",
        f"{llm}.concurrency=1",
        f"{llm}.max_retries=1",
        f"{llm}.timeout_s=300",
        f"{llm}.cache_dir={tmp_path / 'llm-cache'}",
        "rag.feed_size=3",
        f"rag.cache_dir={session_cache_dir}",
        "ranking=preference",
        "simulation.n_steps=2",
        "simulation.render_agents=0",
        "tracking.log_figures=false",
        runs_dir=tmp_path / "runs",
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-3000:]
    assert "Traceback" not in output and "Error executing job" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if "ERROR" in line]
    (run,) = all_runs(tmp_path / "runs", experiment="default")
    assert run.info.status == "FAILED" and "LLMUnavailable" in run.data.tags["prism.error"]
    assert len(errors) == 1 and f"run {run.info.run_id} FAILED" in errors[0], output[-3000:]
