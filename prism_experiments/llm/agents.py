"""LLM agents: a step's prompts out together, answers validated, one bounded repair, else no action."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from prism_experiments.agents import SocialAgent
from prism_experiments.domain import Post
from prism_experiments.llm.actions import (
    NO_ACTION,
    ActionError,
    FeedActions,
    action_schema,
    close_cut_answer,
    parse_actions,
    repair_message,
)
from prism_experiments.llm.backend import BackendConfig, build_chat_model
from prism_experiments.llm.cache import ResponseCache
from prism_experiments.llm.chat import ChatModel, ChatRequest
from prism_experiments.llm.prompt import AgentPrompt, build_prompt
from prism_experiments.llm.replay import CachedChat, CallStats

log = logging.getLogger(__name__)


def sampling_seed(seed: int, step: int, agent: int) -> int:
    """The sampling seed of one (run seed, step, agent): shared by every condition of a seed (common random numbers)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{step}:{agent}".encode()).digest()[:4], "big")


class LLMAgents:
    """Asks the model what each LLM agent does with its feed."""

    def __init__(
        self,
        cfg: BackendConfig,
        cache_dir: Path,
        show_progress: bool = False,
        model: ChatModel | None = None,
        prompt_style: str = "schema",
    ) -> None:
        # the answer cache's folder, resolved once: a backend may keep what it derives from the model there too
        cfg = cfg.model_copy(update={"cache_dir": cfg.cache_dir or Path(cache_dir) / "llm"})
        self.cfg, self.prompt_style = cfg, prompt_style
        model = model or build_chat_model(cfg)
        cache = ResponseCache(cfg.cache_dir) if cfg.cache and cfg.cache_dir else None
        self.chat = CachedChat(model, cache, chunk=cfg.prompts_per_call, show_progress=show_progress)

    def answer(
        self,
        seed: int,
        step: int,
        now: datetime,
        agents: Sequence[tuple[int, SocialAgent]],
        feeds: Sequence[Sequence[Post]],
        max_chars: int | None,
        stats: CallStats,
    ) -> list[AgentAnswer]:
        """One answer per (agent index, agent) with its ranked feed: its FeedActions (invalid twice = no action), its
        prompt, final text and whether it needed (and got) a repair."""
        prompts = [
            build_prompt(agent, feed, now, max_chars, self.prompt_style) for (_, agent), feed in zip(agents, feeds)
        ]
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
        replies = self.chat.complete_many(requests, stats, label=f"llm step {step}")
        answers = []
        errors: dict[int, str] = {}
        for i, (prompt, reply) in enumerate(zip(prompts, replies)):
            closed = None
            try:
                actions = parse_actions(reply.text, prompt.n_posts, self.cfg.max_text_chars)
            except ActionError as exc:
                if reply.output_tokens >= requests[i].max_new_tokens:
                    closed = close_cut_answer(reply.text, prompt.n_posts, self.cfg.max_text_chars)
                if closed is None:
                    actions, errors[i] = NO_ACTION, str(exc)
                else:
                    actions = closed
                    stats.malformed += 1
                    stats.repaired += 1
            was_closed = closed is not None
            answers.append(
                AgentAnswer(actions, prompt, reply.text, malformed=was_closed or i in errors, repaired=was_closed)
            )
        stats.malformed += len(errors)
        if errors:
            self._repair(requests, replies, answers, errors, stats, step)
        return answers

    def _repair(
        self,
        requests: list[ChatRequest],
        replies: list,
        answers: list[AgentAnswer],
        errors: dict[int, str],
        stats: CallStats,
        step: int,
    ) -> None:
        """One repair turn per invalid answer, all together; what is still invalid counts as no action."""
        rows = sorted(errors)
        retries = [
            ChatRequest(
                messages=(
                    *requests[i].messages,
                    {"role": "assistant", "content": replies[i].text},
                    {"role": "user", "content": repair_message(replies[i].text, errors[i])},
                ),
                schema=requests[i].schema,
                max_new_tokens=requests[i].max_new_tokens,
                temperature=requests[i].temperature,
                seed=requests[i].seed,
            )
            for i in rows
        ]
        for i, reply in zip(rows, self.chat.complete_many(retries, stats, label=f"llm repair {step}")):
            prompt = answers[i].prompt
            try:
                actions = parse_actions(reply.text, prompt.n_posts, self.cfg.max_text_chars)
            except ActionError as exc:
                stats.no_action += 1
                log.warning(
                    "step %d: an LLM answer stayed invalid after one repair (%s); counted as no action", step, exc
                )
                continue
            stats.repaired += 1
            answers[i] = AgentAnswer(actions, prompt, reply.text, malformed=True, repaired=True)


@dataclass(frozen=True)
class AgentAnswer:
    """One agent's validated actions, the prompt it read and the text it answered (after a repair, if one)."""

    actions: FeedActions
    prompt: AgentPrompt
    text: str
    malformed: bool
    repaired: bool

    @property
    def no_action(self) -> bool:
        """Invalid even after the repair turn: counted as no action."""
        return self.malformed and not self.repaired
