"""LLM agents: prompts from persona and rendered feed, schema-constrained answers, a replayable response cache."""

from prism_experiments.llm.actions import NO_ACTION, ActionError, FeedActions, Reply, action_schema, parse_actions
from prism_experiments.llm.agents import LLMAgents, build_chat_model, sampling_seed
from prism_experiments.llm.cache import ResponseCache, request_key
from prism_experiments.llm.chat import ChatModel, ChatRequest, ChatResponse, LLMUnavailable
from prism_experiments.llm.prompt import AgentPrompt, build_prompt, persona
from prism_experiments.llm.replay import CachedChat, CallStats

__all__ = [
    "NO_ACTION", "ActionError", "AgentPrompt", "CachedChat", "CallStats", "ChatModel", "ChatRequest",
    "ChatResponse", "FeedActions", "LLMAgents", "LLMUnavailable", "Reply", "ResponseCache", "action_schema",
    "build_chat_model", "build_prompt", "parse_actions", "persona", "request_key", "sampling_seed",
]
