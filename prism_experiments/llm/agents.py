"""LLM agents: a step's prompts out together, answers validated, one bounded repair, else no action."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from prism_experiments.agents import SocialAgent
from prism_experiments.domain import Post
from prism_experiments.llm.actions import (
    NO_ACTION,
    ActionError,
    FeedActions,
    action_schema,
    parse_actions,
    repair_message,
)
from prism_experiments.llm.backend import BackendConfig, build_chat_model
from prism_experiments.llm.cache import ResponseCache
from prism_experiments.llm.chat import ChatModel, ChatRequest
from prism_experiments.llm.prompt import build_prompt
from prism_experiments.llm.replay import CachedChat, CallStats

log = logging.getLogger(__name__)


def sampling_seed(seed: int, step: int, agent: int) -> int:
    """The sampling seed of one (run seed, step, agent): shared by every condition of a seed (common random numbers)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{step}:{agent}".encode()).digest()[:4], "big")


class LLMAgents:
    """Asks the model what each LLM agent does with its feed."""

    def __init__(
        self, cfg: BackendConfig, cache_dir: Path, show_progress: bool = False, model: ChatModel | None = None
    ) -> None:
        self.cfg = cfg
        model = model or build_chat_model(cfg)
        cache = ResponseCache(cfg.cache_dir or Path(cache_dir) / "llm") if cfg.cache else None
        self.chat = CachedChat(model, cache, chunk=cfg.prompts_per_call, show_progress=show_progress)

    def act(
        self,
        seed: int,
        step: int,
        now: datetime,
        agents: Sequence[tuple[int, SocialAgent]],
        feeds: Sequence[Sequence[Post]],
        max_chars: int | None,
        stats: CallStats,
    ) -> list[FeedActions]:
        """One FeedActions per (agent index, agent) with its ranked feed; invalid twice = no action."""
        prompts = [build_prompt(agent, feed, now, max_chars) for (_, agent), feed in zip(agents, feeds)]
        requests = [
            ChatRequest(
                messages=p.messages,
                schema=action_schema(p.n_posts, self.cfg.max_text_chars),
                max_new_tokens=self.cfg.max_new_tokens,
                temperature=self.cfg.temperature,
                seed=sampling_seed(seed, step, index),
            )
            for p, (index, _) in zip(prompts, agents)
        ]
        answers = self.chat.complete_many(requests, stats, label=f"llm step {step}")
        actions: list[FeedActions | None] = []
        errors: dict[int, str] = {}
        for i, (prompt, answer) in enumerate(zip(prompts, answers)):
            try:
                actions.append(parse_actions(answer.text, prompt.n_posts, self.cfg.max_text_chars))
            except ActionError as exc:
                actions.append(None)
                errors[i] = str(exc)
        stats.malformed += len(errors)
        if errors:
            self._repair(requests, answers, prompts, errors, actions, stats, step)
        return [a if a is not None else NO_ACTION for a in actions]

    def _repair(
        self,
        requests: list[ChatRequest],
        answers: list,
        prompts: list,
        errors: dict[int, str],
        actions: list[FeedActions | None],
        stats: CallStats,
        step: int,
    ) -> None:
        """One repair turn per invalid answer, all together; what is still invalid counts as no action."""
        rows = sorted(errors)
        retries = [
            ChatRequest(
                messages=(
                    *requests[i].messages,
                    {"role": "assistant", "content": answers[i].text},
                    {"role": "user", "content": repair_message(answers[i].text, errors[i])},
                ),
                schema=requests[i].schema,
                max_new_tokens=requests[i].max_new_tokens,
                temperature=requests[i].temperature,
                seed=requests[i].seed,
            )
            for i in rows
        ]
        for i, answer in zip(rows, self.chat.complete_many(retries, stats, label=f"llm repair {step}")):
            try:
                actions[i] = parse_actions(answer.text, prompts[i].n_posts, self.cfg.max_text_chars)
                stats.repaired += 1
            except ActionError as exc:
                stats.no_action += 1
                log.warning(
                    "step %d: an LLM answer stayed invalid after one repair (%s); counted as no action", step, exc
                )
