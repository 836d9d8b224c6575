"""Agents' decisions on their feeds: keyed coin flips, so one agent's choices ignore everyone else's feeds."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from prism_experiments.agents import ARCHETYPES, AgentsConfig
from prism_experiments.deciders import Impressions, rule_decisions
from prism_experiments.domain import Post

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FEED = 10
N_AGENTS = 3


def impressions(agents: list[int]) -> Impressions:
    """Full feeds of FEED posts for each agent, feeds one after another."""
    agent_idx = np.repeat(np.array(agents, dtype=np.int64), FEED)
    positions = np.tile(np.arange(FEED), len(agents))
    posts = [
        Post(id=f"p{a}-{i}", author_id="x", text="t", timestamp=T0, likes=i, format="list")
        for a, i in zip(agent_idx, positions)
    ]
    return Impressions(
        agent_idx=agent_idx,
        positions=positions,
        posts=posts,
        in_network=positions % 2 == 0,
        similarity=np.linspace(0.2, 0.9, len(posts)),
    )


def run_decide(agents: list[int], config: AgentsConfig, seed: int = 4):
    biases = np.full((N_AGENTS, 3), 2.0)  # strong propensities: plenty of engagements to compare
    archetypes = np.full((N_AGENTS, len(ARCHETYPES)), 1.0 / len(ARCHETYPES))
    return rule_decisions(seed, 7, np.array(agents), impressions(agents), biases, archetypes, config, FEED)


def test_an_agents_decisions_do_not_depend_on_who_else_is_active() -> None:
    together = run_decide([0, 2], AgentsConfig())
    alone = run_decide([2], AgentsConfig())
    assert together.liked[FEED:].any(), "the comparison needs some engagements"
    for name in ("liked", "reshared", "replied", "follows"):
        np.testing.assert_array_equal(getattr(together, name)[FEED:], getattr(alone, name))


def test_another_seed_flips_other_coins() -> None:
    first, second = run_decide([0, 1, 2], AgentsConfig()), run_decide([0, 1, 2], AgentsConfig(), seed=5)
    assert not np.array_equal(first.liked, second.liked)


def test_nobody_engages_with_what_nobody_looks_at() -> None:
    blind = AgentsConfig.model_validate({"behaviour": {"look_top": 0.0}})
    decided = run_decide([0, 1, 2], blind)
    assert not (decided.liked | decided.reshared | decided.replied | decided.follows).any()
    assert run_decide([0, 1, 2], AgentsConfig()).liked.any()


def test_follows_only_come_with_an_engagement() -> None:
    eager = AgentsConfig.model_validate({"behaviour": {"follow_probability": 1.0}})
    decided = run_decide([0, 1, 2], eager)
    np.testing.assert_array_equal(decided.follows, decided.liked | decided.reshared | decided.replied)
