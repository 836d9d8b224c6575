"""The llm decider: every agent reads its rendered feed and asks a model (`agents.decider.llm`, docs/llm.md).

`ModelDecider` is also the base of `hybrid`: rules for the rule agents, the model for a mask of LLM agents. Rule
draws are keyed by (step, agent, slot), so overwriting the LLM agents' rows leaves every rule agent's decisions as
in a pure rules run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import numpy as np
from pydantic import Field

from prism_experiments.deciders.base import BaseDeciderConfig, DeciderInputs, Decisions, Impressions, StepActions
from prism_experiments.deciders.kinds.rules import RulesDecider, RulesDeciderConfig
from prism_experiments.deciders.registry import register_decider
from prism_experiments.llm import CallStats, LLMAgents, LLMConfig, llm_config
from prism_experiments.ranking.step_feeds import StepFeeds


class ModelDeciderConfig(BaseDeciderConfig):
    """A decider that asks a model: the backend it asks (`agents/decider/llm=<backend>`) and that backend's settings."""

    #: the model LLM-deciding agents ask: `local` (in process) or `openai` (a server), docs/llm.md
    llm: LLMConfig = Field(default_factory=llm_config)
    #: schema: the persona and the answer's form in words in the system message; example: the earlier prompt with
    #: one worked example, which small models copy (docs/llm.md, "Fitness")
    prompt_style: Literal["schema", "example"] = "schema"

    def token_prices(self) -> tuple[float, float]:
        return self.llm.price_per_1k_input_tokens, self.llm.price_per_1k_output_tokens


class LLMDeciderConfig(ModelDeciderConfig):
    """Every agent asks the model."""

    kind: Literal["llm"] = "llm"


class ModelDecider:
    """Rules for rule agents, the model for the agents of `llm_mask`; per-step call figures for tracking. The model
    is only reached when some agent asks it."""

    def __init__(self, config: ModelDeciderConfig, inputs: DeciderInputs, llm_mask: np.ndarray) -> None:
        self.inputs, self.mask = inputs, llm_mask
        self.rules = RulesDecider(RulesDeciderConfig(), inputs)
        self.llm = (
            LLMAgents(config.llm, inputs.cache_dir, inputs.show_progress, prompt_style=config.prompt_style)
            if llm_mask.any()
            else None
        )
        self.total = CallStats()
        self.series: list[dict[str, float]] = []

    def decide_step(
        self, step: int, now: datetime, active: np.ndarray, feeds: StepFeeds, impressions: Impressions
    ) -> StepActions:
        base = self.rules.decide_step(step, now, active, feeds, impressions)
        if self.llm is None:
            return base
        decided = base.decisions
        liked, reshared = decided.liked.copy(), decided.reshared.copy()
        replied, follows = decided.replied.copy(), decided.follows.copy()
        offsets = feeds.bounds
        chosen = [row for row, a in enumerate(active) if self.mask[a]]
        stats = CallStats()
        population = self.inputs.population
        answers = self.llm.answer(
            self.inputs.seed,
            step,
            now,
            [(int(active[r]), population[active[r]]) for r in chosen],
            [[impressions.posts[i] for i in range(offsets[r], offsets[r + 1])] for r in chosen],
            self.inputs.prompt_max_chars,
            stats,
        )
        reply_texts: dict[int, str] = {}
        new_posts: dict[int, str] = {}
        for row, act in zip(chosen, (answer.actions for answer in answers)):
            start, end = offsets[row], offsets[row + 1]
            for array, numbers in ((liked, act.like), (reshared, act.reshare), (follows, act.follow)):
                array[start:end] = False
                for n in numbers:
                    array[start + n - 1] = True
            replied[start:end] = False
            if act.reply is not None:
                replied[start + act.reply.to - 1] = True
                reply_texts[int(start + act.reply.to - 1)] = act.reply.text
            if act.post:
                new_posts[int(active[row])] = act.post
        self.total.add(stats)
        self.series.append({"step": float(step), **stats.as_dict()})
        return StepActions(
            Decisions(liked=liked, reshared=reshared, replied=replied, follows=follows), reply_texts, new_posts
        )

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        """LLM agents write only what the model writes, also in a step whose feeds are all empty."""
        return ~self.mask[np.asarray(active, dtype=np.int64)]

    def llm_agents(self) -> np.ndarray:
        return self.mask.copy()

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        if self.llm is None:
            return {}, []
        return self.total.as_dict(), list(self.series)

    def model_identity(self) -> str | None:
        return self.llm.chat.model.identity if self.llm is not None else None


@register_decider
class LLMDecider(ModelDecider):
    """Every agent asks the model."""

    config_model = LLMDeciderConfig

    def __init__(self, config: LLMDeciderConfig, inputs: DeciderInputs) -> None:
        super().__init__(config, inputs, np.ones(len(inputs.population), dtype=bool))
