"""What several findings share: the smoke size of the research-world findings (so their --quick runs coincide)."""

from __future__ import annotations

#: --quick of the findings run in the research worlds (x2023_10k_tail): the 200-agent world at a smoke size
RESEARCH_QUICK_OVERRIDES: tuple[str, ...] = (
    "world=x2023", "agents.n_agents=60", "network.mean_out_degree=6", "corpus.n_posts=600", "corpus.span_hours=24",
    "simulation.n_steps=8", "simulation.render_steps=0",
)  # fmt: skip
#: --quick of the findings run in world x2023 at 200 agents
SMALL_QUICK_OVERRIDES: tuple[str, ...] = (
    "agents.n_agents=40", "network.mean_out_degree=6", "corpus.n_posts=400", "corpus.span_hours=24",
    "simulation.n_steps=8", "simulation.render_steps=0",
)  # fmt: skip


def replacing(overrides: tuple[str, ...], *replacements: str) -> tuple[str, ...]:
    """`overrides` with each `key=value` of `replacements` in place of the same key's (or appended)."""
    keys = {item.split("=", 1)[0] for item in replacements}
    return (*(item for item in overrides if item.split("=", 1)[0] not in keys), *replacements)
