"""LLMConfig: the discriminated union, on `backend`, of every registered backend's config model.

Each backend is a module of `llm/backends/` that declares its own model and registers itself when that package is
imported, so `backend` picks the model and every other key is validated by that model alone (as `ranking.mode` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import prism_experiments.llm.backends  # noqa: F401  (registers every backend)
from prism_experiments.llm.backend import LLM_BACKENDS, BackendConfig


def backend_config_models() -> dict[str, type[BackendConfig]]:
    """backend -> its config model, in registration order."""
    return LLM_BACKENDS.config_models()


if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    LLMConfig: TypeAlias = BackendConfig
else:
    LLMConfig = LLM_BACKENDS.union()


#: llm_config(backend=DEFAULT_BACKEND, **fields): the validated config of a backend (ValueError naming the backend
#: if unknown); the registry's own `validate`
llm_config = LLM_BACKENDS.validate
