"""The LLM backends' registry: each backend module registers its chat-model class, which names its config model.

A backend is one module under `llm/`: a config model extending `BackendConfig` (its `backend` field a Literal of
its name) and a chat-model class decorated with `@register_backend`, built from that config. `llm/config.py`
collects the config models into the discriminated union `LLMConfig`; docs/llm.md "Adding a backend".
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from prism_experiments.llm.chat import ChatModel
from prism_experiments.registries import ClassRegistry


class BackendConfig(BaseModel):
    """What every backend takes: which model, how long an answer may be, sampling, cost figures, the cache."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: which backend answers (`agents/decider/llm=<backend>`); selects this config model
    backend: str
    #: the model's name: a packaged model (local) or the server's model name (openai)
    model: str = Field(min_length=1)
    #: tokens the model may write per answer; the action JSON of a 10-post feed needs about 60-120
    max_new_tokens: int = Field(default=160, ge=16, le=4096)
    #: 0 = greedy (deterministic); > 0 samples with a per-(seed, step, agent) seed
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    #: longest reply or new post the model may write, characters
    max_text_chars: int = Field(default=160, ge=10, le=1000)
    #: cost figures: price per 1,000 input and output tokens (0 for a local model)
    price_per_1k_input_tokens: float = Field(default=0.0, ge=0.0)
    price_per_1k_output_tokens: float = Field(default=0.0, ge=0.0)
    #: answers are cached under <cache_dir>/llm, keyed by model identity, prompt, sampling and seed
    cache: bool = True
    #: where the answers are cached instead (None = <cache_dir>/llm under the runs dir)
    cache_dir: Path | None = None

    @property
    def prompts_per_call(self) -> int:
        """Prompts the response cache hands the model in one `complete_many` call (a server takes them all)."""
        return 10**6


class BackendModel(ChatModel, Protocol):
    """A chat-model class a backend registers: built from its own config model."""

    config_model: ClassVar[type[BackendConfig]]

    def __init__(self, cfg: BackendConfig) -> None: ...


#: the backend of an `llm` mapping that leaves `backend` out
DEFAULT_BACKEND = "local"
#: every backend (backend name -> chat-model class, in registration order), filled by `register_backend` as the
#: backend modules are imported
#: (and each one's Hydra option `agents/decider/llm=<backend>`)
LLM_BACKENDS: ClassRegistry[BackendConfig] = ClassRegistry(
    "LLM backend", "backend", "agents.decider.llm.backend", DEFAULT_BACKEND, hydra_group="agents/decider/llm"
)

ModelT = TypeVar("ModelT", bound=type)


def register_backend(cls: ModelT) -> ModelT:
    """Class decorator: register a chat-model class under the backend its `config_model` declares."""
    return LLM_BACKENDS.register(cls)


def build_chat_model(cfg: BackendConfig) -> ChatModel:
    """The chat model of `cfg.backend`; LLMUnavailable (one line) when it cannot be reached or found."""
    model: ChatModel = LLM_BACKENDS.class_for(cfg)(cfg)
    return model
