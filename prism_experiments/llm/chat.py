"""What every chat backend takes and returns, whether in-process or over HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ChatRequest:
    """One prompt: messages, the JSON schema the answer must fit, sampling parameters and seed."""

    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    max_new_tokens: int
    temperature: float
    #: per-(run seed, step, agent) sampling seed: the same prompt under common random numbers samples the same
    seed: int


@dataclass(frozen=True)
class ChatResponse:
    """The model's text and what producing it took."""

    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float


class ChatModel(Protocol):
    """A model that answers a batch of requests, in order."""

    #: the model's identity in cache keys: name plus weights digest or server-reported id
    identity: str

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]: ...


class LLMUnavailable(RuntimeError):
    """The model cannot be reached or loaded; the message is one line.

    `answered` holds the answers of the failed batch that did arrive (index in the batch -> answer),
    so the caller can cache them before the run fails and a re-run does not ask for them again.
    """

    def __init__(self, message: str, answered: dict[int, ChatResponse] | None = None) -> None:
        super().__init__(message)
        self.answered: dict[int, ChatResponse] = answered or {}
