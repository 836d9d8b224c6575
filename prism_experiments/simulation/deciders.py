"""Decision backends behind one interface: rules (the behaviour model), llm, hybrid (a seeded share by LLM).

Every backend returns the same per-impression action arrays plus the texts a model wrote, so the
event log, metrics and tracking are the same whoever decides. Rule draws are keyed by (step, agent,
slot): overwriting the LLM agents' rows leaves every rule agent's decisions as in a pure rules run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from prism_experiments.agents import AgentsConfig, SocialAgent
from prism_experiments.llm import CallStats, LLMAgents
from prism_experiments.ranking import RankedCandidate
from prism_experiments.simulation.decisions import Decisions, Impressions, decide
from prism_experiments.simulation.streams import Stream, keyed_uniforms


@dataclass(frozen=True)
class StepActions:
    """A step's decisions, the texts LLM agents wrote, and which active agents author by the rule model."""

    decisions: Decisions
    #: impression index -> the reply text a model wrote (others' replies are written from templates)
    reply_texts: dict[int, str] = field(default_factory=dict)
    #: agent index -> the new post a model wrote
    new_posts: dict[int, str] = field(default_factory=dict)


class Decider(Protocol):
    """Turns a step's feeds into actions."""

    def decide_step(self, step: int, now: datetime, active: np.ndarray, feeds: list[list[RankedCandidate]],
                    impressions: Impressions) -> StepActions: ...

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        """Per active agent: does the rule authoring model decide whether it writes a post."""
        ...

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        """Run totals and one row per step (empty for rules)."""
        ...


class RulesDecider:
    """The logistic rule model with keyed uniforms (`decisions.decide`), unchanged."""

    def __init__(self, seed: int, agents: AgentsConfig, biases: np.ndarray, archetypes: np.ndarray,
                 feed_size: int) -> None:
        self.seed, self.agents, self.biases, self.archetypes, self.feed_size = seed, agents, biases, archetypes, feed_size

    def decide_step(self, step: int, now: datetime, active: np.ndarray, feeds: list[list[RankedCandidate]],
                    impressions: Impressions) -> StepActions:
        return StepActions(decide(self.seed, step, active, impressions, self.biases, self.archetypes, self.agents,
                                  self.feed_size))

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        return np.ones(len(active), dtype=bool)

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        return {}, []


def llm_agent_mask(seed: int, n_agents: int, decider: str, fraction: float) -> np.ndarray:
    """Which agents decide by LLM: none, all, or a keyed draw below `fraction` (same set in every condition)."""
    if decider == "rules":
        return np.zeros(n_agents, dtype=bool)
    if decider == "llm":
        return np.ones(n_agents, dtype=bool)
    return keyed_uniforms(seed, Stream.DECIDER, 0, np.arange(n_agents), np.zeros(1))[:, 0] < fraction


class ModelDecider:
    """Rules for rule agents, the model for LLM agents (`llm_mask`); per-step call figures for tracking."""

    def __init__(self, rules: RulesDecider, llm: LLMAgents, population: list[SocialAgent], llm_mask: np.ndarray,
                 prompt_max_chars: int | None) -> None:
        self.rules, self.llm, self.population, self.mask = rules, llm, population, llm_mask
        self.prompt_max_chars = prompt_max_chars
        self.total = CallStats()
        self.series: list[dict[str, float]] = []

    def decide_step(self, step: int, now: datetime, active: np.ndarray, feeds: list[list[RankedCandidate]],
                    impressions: Impressions) -> StepActions:
        base = self.rules.decide_step(step, now, active, feeds, impressions).decisions
        liked, reshared = base.liked.copy(), base.reshared.copy()
        replied, follows = base.replied.copy(), base.follows.copy()
        offsets = np.r_[0, np.cumsum([len(f) for f in feeds])].astype(int)
        chosen = [row for row, a in enumerate(active) if self.mask[a]]
        stats = CallStats()
        actions = self.llm.act(self.rules.seed, step, now, [(int(active[r]), self.population[active[r]]) for r in chosen],
                               [[c.post for c in feeds[r]] for r in chosen], self.prompt_max_chars, stats)
        reply_texts: dict[int, str] = {}
        new_posts: dict[int, str] = {}
        for row, act in zip(chosen, actions):
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
        return StepActions(Decisions(liked=liked, reshared=reshared, replied=replied, follows=follows),
                           reply_texts, new_posts)

    def rule_authors(self, active: np.ndarray) -> np.ndarray:
        """LLM agents write only what the model writes, also in a step whose feeds are all empty."""
        return ~self.mask[np.asarray(active, dtype=np.int64)]

    def stats(self) -> tuple[dict[str, float], list[dict[str, float]]]:
        return self.total.as_dict(), list(self.series)


def build_decider(seed: int, agents_cfg: AgentsConfig, population: list[SocialAgent], biases: np.ndarray,
                  archetypes: np.ndarray, feed_size: int, prompt_max_chars: int | None, cache_dir: Path,
                  show_progress: bool) -> Decider:
    """The decider `agents.decider` names; an LLM backend is only built when some agent uses it."""
    rules = RulesDecider(seed, agents_cfg, biases, archetypes, feed_size)
    mask = llm_agent_mask(seed, len(population), agents_cfg.decider, agents_cfg.llm_fraction)
    if not mask.any():
        return rules
    return ModelDecider(rules, LLMAgents(agents_cfg.llm, cache_dir, show_progress), population, mask,
                        prompt_max_chars)
