"""LLMConfig: the discriminated union, on `backend`, of every registered backend's config model.

Each backend module declares its own model (`llm/local.py`, `llm/openai_server.py`); importing them here registers
them, so `backend` picks the model and every other key is validated by that model alone (as `ranking.mode` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import Discriminator, Tag

# importing a backend's module registers it
import prism_experiments.llm.local
import prism_experiments.llm.openai_server  # noqa: F401
from prism_experiments.llm.backend import BACKENDS, BackendConfig

#: the backend of an `llm` mapping that leaves `backend` out
DEFAULT_BACKEND = "local"


def backend_of(value: Any) -> Any:
    """The discriminator: a mapping's `backend` (DEFAULT_BACKEND when absent) or a config's `backend`."""
    if isinstance(value, dict):
        return value.get("backend", DEFAULT_BACKEND)
    return getattr(value, "backend", None)


def backend_config_models() -> dict[str, type[BackendConfig]]:
    """backend -> its config model, in registration order."""
    return {name: cls.config_model for name, cls in BACKENDS.items()}


#: every registered backend's config model
if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    LLMConfig: TypeAlias = BackendConfig
else:
    LLMConfig = Annotated[
        Union[tuple(Annotated[model, Tag(name)] for name, model in backend_config_models().items())],  # noqa: UP007  (a runtime tuple)
        Discriminator(backend_of),
    ]


def llm_config(backend: str = DEFAULT_BACKEND, **fields: Any) -> BackendConfig:
    """The validated config of `backend` with `fields` set (ValueError naming the backend if unknown)."""
    models = backend_config_models()
    if backend not in models:
        raise ValueError(f"agents.decider.llm.backend: unknown backend {backend!r}; registered: {', '.join(models)}")
    return models[backend].model_validate({"backend": backend, **fields})
