"""LLMConfig: the discriminated union, on `backend`, of every registered backend's config model.

Each backend module declares its own model (`llm/local.py`, `llm/llama_cpp.py`, `llm/openai_server.py`);
importing them here registers them, so `backend` picks the model and every other key is validated by that
model alone (as `ranking.mode` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

# importing a backend's module registers it
import prism_experiments.llm.llama_cpp
import prism_experiments.llm.local
import prism_experiments.llm.openai_server  # noqa: F401
from prism_experiments.llm.backend import BACKEND_REGISTRY, DEFAULT_BACKEND, BackendConfig


def backend_config_models() -> dict[str, type[BackendConfig]]:
    """backend -> its config model, in registration order."""
    return BACKEND_REGISTRY.config_models()


if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    LLMConfig: TypeAlias = BackendConfig
else:
    LLMConfig = BACKEND_REGISTRY.union()


def llm_config(backend: str = DEFAULT_BACKEND, **fields: Any) -> BackendConfig:
    """The validated config of `backend` with `fields` set (ValueError naming the backend if unknown)."""
    return BACKEND_REGISTRY.validate(backend, **fields)
