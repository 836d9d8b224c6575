"""LLM agents: prompts from persona and rendered feed, schema-constrained answers, a replayable response cache,
and the registered backends that answer (`local`, `openai`)."""

from prism_experiments.llm.actions import NO_ACTION, ActionError, FeedActions, Reply, action_schema, parse_actions
from prism_experiments.llm.agents import LLMAgents, sampling_seed
from prism_experiments.llm.backend import LLM_BACKENDS, BackendConfig, build_chat_model, register_backend
from prism_experiments.llm.cache import ResponseCache, request_key
from prism_experiments.llm.chat import ChatModel, ChatRequest, ChatResponse, LLMUnavailable
from prism_experiments.llm.config import LLMConfig, backend_config_models, llm_config
from prism_experiments.llm.prompt import AgentPrompt, build_prompt, persona
from prism_experiments.llm.replay import CachedChat, CallStats

__all__ = [
    "LLM_BACKENDS",
    "NO_ACTION",
    "ActionError",
    "AgentPrompt",
    "BackendConfig",
    "CachedChat",
    "CallStats",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "FeedActions",
    "LLMAgents",
    "LLMConfig",
    "LLMUnavailable",
    "Reply",
    "ResponseCache",
    "action_schema",
    "backend_config_models",
    "build_chat_model",
    "build_prompt",
    "llm_config",
    "parse_actions",
    "persona",
    "register_backend",
    "request_key",
    "sampling_seed",
]
